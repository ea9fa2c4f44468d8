/*
 * decoder.c - the decoders of PIPE, SPIPE and XPIPE (decoder.h says what
 * they promise): a list of decoders by command line, most recently used
 * first; for each, the products waiting to be written and those written
 * but perhaps not read yet; the non-blocking writes; and the deaths,
 * restarts and timeouts.
 *
 * How much of what was written a decoder has read: the bytes written to
 * its pipe since it started, less the bytes the pipe still holds
 * (ioctl FIONREAD, which Linux answers on either end of a pipe).  A
 * product stays in the written list until the decoder has read all of
 * it, so that when the decoder dies what it did not read can be written
 * to the next one.
 */
#include "pqutils/pqact/decoder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/pqact/dbfile.h"
#include "pqutils/pqact/filing.h"
#include "pqutils/common/cli_io.h"

/* What the pipe holds before a write has to wait; more than Linux's 64 KiB
 * default means fewer wake-ups for a decoder reading big products. */
#define PIPE_SIZE (1 << 20)
/* How long a decoder that closed its input may take to exit before pqact
 * stops waiting for its status and starts another, seconds. */
#define EXIT_WAIT_S 5.0
/* Decoders waiting to start (over the cap of children, or after a death)
 * beyond which pqact takes no more products until some start. */
#define PQACT_DECODERS_UNSTARTED 64
/* Products one decoder may have waiting in the queue (24 bytes each in
 * memory) before pqact waits for it. */
#define PQACT_DECODER_REFS (1u << 20)

/* PIPE's options (options.h); SPIPE and XPIPE take none, as LDM's (their
 * leading "-..." words are skipped). */
enum {
  OPT_TRANSIENT = PQACT_OPT_BIT(PQACT_OPT_TRANSIENT),
  OPT_STRIP = PQACT_OPT_BIT(PQACT_OPT_STRIP),
  OPT_METADATA = PQACT_OPT_BIT(PQACT_OPT_METADATA),
  OPT_NODATA = PQACT_OPT_BIT(PQACT_OPT_NODATA),
  OPT_REMOVEWMO = PQACT_OPT_BIT(PQACT_OPT_REMOVEWMO),
  OPT_FLUSH = PQACT_OPT_BIT(PQACT_OPT_FLUSH),
  OPT_CLOSE = PQACT_OPT_BIT(PQACT_OPT_CLOSE),
};

/* One product's bytes for one decoder. */
struct chunk {
  struct chunk *next;
  uint64_t token;
  uint64_t inserted_us; /* the product's insertion time */
  uint64_t start;       /* where its first byte is in the decoder's stream */
  size_t len, off;      /* bytes; of them written to the current decoder */
  unsigned resent;      /* times written again after a decoder died */
  bool reported;        /* done was called */
  char ident[PQ_IDENT_MAX + 1];
  uint8_t bytes[];
};

/* A product for a decoder whose buffer is full: left in the queue, and
 * found there by its signature when the buffer has room again. */
struct ref {
  struct ref *next;
  uint64_t token, inserted_us;
  uint8_t sig[PQ_SIGLEN];
};

struct chunk_list {
  struct chunk *head, *tail;
  size_t n;
};

struct decoder {
  struct decoder *prev, *next;
  struct pqact_decoders *set;
  enum pqact_action type;
  char *cmd;   /* the key: the command line, words joined by blanks */
  char **argv; /* the command, to start it again */
  unsigned flags;
  pid_t pid;              /* running or not reaped yet; 0 if neither */
  int fd;                 /* our end of its input; -1 when it is not running */
  uint64_t written;       /* bytes into its pipe since it started */
  uint64_t read;          /* of them read, when last looked at */
  struct chunk_list sent; /* written, perhaps not all read */
  struct chunk_list waiting; /* to write; the head may be partly written */
  size_t waiting_bytes;
  struct ref *refs, *refs_tail; /* to take from the queue, after waiting */
  size_t nrefs;
  struct chunk *suspect; /* the last product it was seen to read whole */
  double suspect_at;     /* when */
  double progress_at;    /* when it last read, or bytes began to wait for it */
  double died_at, restart_at, slow_logged_at;
  unsigned deaths; /* in a row, without a product read in between */
  bool capped_out; /* could not start: the cap of children was reached */
};

struct pqact_decoders {
  struct decoder *head;
  pq_t *pq; /* where refs are found again; NULL: no refs, all in memory */
  unsigned n;
  struct pqact_children *kids;
  double timeout_s;
  pqact_hold_fn *hold;
  pqact_done_fn *done;
  void *arg;
};

/* Products waiting for x: in memory, and in the queue. */
static size_t pending(const struct decoder *x) {
  return x->waiting.n + x->nrefs;
}

/* ---- lists ---- */

static void list_push(struct chunk_list *l, struct chunk *c) {
  c->next = NULL;
  if (l->tail != NULL)
    l->tail->next = c;
  else
    l->head = c;
  l->tail = c;
  l->n++;
}

static struct chunk *list_pop(struct chunk_list *l) {
  struct chunk *c = l->head;
  if (c == NULL)
    return NULL;
  l->head = c->next;
  if (l->head == NULL)
    l->tail = NULL;
  l->n--;
  c->next = NULL;
  return c;
}

/* Put the chunks of `front` before those of l, in their order. */
static void list_prepend(struct chunk_list *l, struct chunk_list *front) {
  if (front->head == NULL)
    return;
  front->tail->next = l->head;
  if (l->tail == NULL)
    l->tail = front->tail;
  l->head = front->head;
  l->n += front->n;
  *front = (struct chunk_list){0};
}

static void report(struct decoder *d, struct chunk *c, bool ok) {
  if (c->reported)
    return;
  c->reported = true;
  if (d->set->done != NULL)
    d->set->done(d->set->arg, c->token, ok);
}

static void free_list(struct decoder *d, struct chunk_list *l, bool ok) {
  struct chunk *c;
  while ((c = list_pop(l)) != NULL) {
    report(d, c, ok);
    free(c);
  }
}

/* ---- the set ---- */

struct pqact_decoders *pqact_decoders_new(struct pqact_children *kids,
                                          uint64_t timeout_s,
                                          pqact_hold_fn *hold,
                                          pqact_done_fn *done, void *arg) {
  struct pqact_decoders *d = calloc(1, sizeof *d);
  if (d == NULL)
    return NULL;
  d->kids = kids;
  d->timeout_s = (double)timeout_s;
  d->hold = hold;
  d->done = done;
  d->arg = arg;
  return d;
}

void pqact_decoders_set_queue(struct pqact_decoders *d, pq_t *pq) {
  d->pq = pq;
}

/* Forget a decoder whose input is closed: what waits fails. */
static void drop_decoder(struct decoder *x, const char *why) {
  struct pqact_decoders *d = x->set;
  if (x->fd >= 0) {
    close(x->fd);
    x->fd = -1;
  }
  log_debug("deleting %s %s entry: cmd=\"%s\", pid=%d", why,
            pqact_action_name(x->type), x->cmd, (int)x->pid);
  free_list(x, &x->sent, true); /* in the pipe: the decoder has them */
  if (pending(x) > 0)
    log_error("%zu product%s for decoder not written: cmd=\"%s\"", pending(x),
              pending(x) == 1 ? "" : "s", x->cmd);
  free_list(x, &x->waiting, false);
  struct ref *r;
  while ((r = x->refs) != NULL) {
    x->refs = r->next;
    if (d->done != NULL)
      d->done(d->arg, r->token, false);
    free(r);
  }
  x->nrefs = 0;
  if (x->suspect != NULL) {
    report(x, x->suspect, true);
    free(x->suspect);
  }
  if (x->prev != NULL)
    x->prev->next = x->next;
  else
    d->head = x->next;
  if (x->next != NULL)
    x->next->prev = x->prev;
  d->n--;
  for (char **a = x->argv; a != NULL && *a != NULL; a++)
    free(*a);
  free(x->argv);
  free(x->cmd);
  free(x);
}

/* The exit callback of children.h; the child may be one we forgot. */
static void on_exit_status(void *arg, pid_t pid, int status);

void pqact_decoders_free(struct pqact_decoders *d) {
  if (d == NULL)
    return;
  (void)pqact_decoders_pump(d); /* what they take now */
  while (d->head != NULL)
    drop_decoder(d->head, "closed");
  free(d);
}

/* ---- starting, dying ---- */

static int start_decoder(struct decoder *x) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    log_error("cannot make a pipe for decoder: cmd=\"%s\": %s", x->cmd,
              strerror(errno));
    return -1;
  }
  (void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE); /* a hint: fine if refused */
  if (fcntl(p[1], F_SETFL, O_NONBLOCK) != 0) {
    log_error("cannot make decoder's pipe non-blocking: cmd=\"%s\": %s", x->cmd,
              strerror(errno));
    close(p[0]);
    close(p[1]);
    return -1;
  }
  pid_t pid =
      pqact_children_spawn(x->set->kids, x->argv, p[0],
                           (x->flags & OPT_CLOSE) != 0, on_exit_status, x->set);
  int e = errno;
  close(p[0]);
  if (pid < 0) {
    close(p[1]);
    errno = e;
    if (e != EAGAIN)
      log_error("cannot start decoder: cmd=\"%s\": %s", x->cmd, strerror(e));
    return -1;
  }
  log_debug("started decoder %d: cmd=\"%s\"", (int)pid, x->cmd);
  x->pid = pid;
  x->fd = p[1];
  x->written = x->read = 0;
  return 0;
}

/* Bytes written to x's pipe that x has read, as far as the pipe says. */
static uint64_t bytes_read(const struct decoder *x) {
  int unread = 0;
  if (x->fd < 0 || ioctl(x->fd, FIONREAD, &unread) != 0 || unread < 0)
    return x->written; /* cannot tell: as if all were read */
  return x->written - (uint64_t)unread;
}

/* Free the written products x has read whole but the last, kept as the
 * suspect should x die of it (on_exit_status()). */
static void trim_sent(struct decoder *x, uint64_t read, double now) {
  struct chunk *c;
  while ((c = x->sent.head) != NULL && c->start + c->len <= read) {
    (void)list_pop(&x->sent);
    if (x->suspect != NULL) {
      free(x->suspect);
      x->deaths = 0; /* it read a product and went on: it is working */
    }
    x->suspect = c;
    x->suspect_at = now;
  }
}

/* x's input is gone (EPIPE, POLLERR) or x exited: keep what it did not
 * read for the next decoder. */
static void decoder_died(struct decoder *x) {
  if (x->fd < 0)
    return;
  uint64_t read = bytes_read(x);
  trim_sent(x, read, cli_monotonic());
  close(x->fd);
  x->fd = -1;
  /* What it did not read whole goes first, in order: the written ones,
   * then the waiting ones (the head may be partly written). */
  struct chunk_list again = {0};
  struct chunk *c;
  while ((c = list_pop(&x->sent)) != NULL) {
    if (read > c->start) /* partly read: it may have died of it */
      c->resent++;
    c->off = 0;
    list_push(&again, c);
  }
  if (x->waiting.head != NULL && x->waiting.head->off > 0) {
    c = x->waiting.head;
    if (read > c->start)
      c->resent++;
    c->off = 0;
  }
  list_prepend(&x->waiting, &again);
  x->waiting_bytes = 0;
  for (c = x->waiting.head; c != NULL; c = c->next)
    x->waiting_bytes += c->len;
  x->died_at = cli_monotonic();
  x->deaths++;
  unsigned delay = x->deaths <= 1
                       ? 0
                       : (x->deaths - 2 < 5 ? 1u << (x->deaths - 2)
                                            : PQACT_DECODER_BACKOFF_MAX);
  if (delay > PQACT_DECODER_BACKOFF_MAX)
    delay = PQACT_DECODER_BACKOFF_MAX;
  x->restart_at = x->died_at + delay;
  if (x->waiting.n > 0 || x->suspect != NULL)
    log_warning("decoder %d stopped reading: cmd=\"%s\"; %zu product%s "
                "to write again, starting it again in %u s",
                (int)x->pid, x->cmd, x->waiting.n, x->waiting.n == 1 ? "" : "s",
                delay);
}

/* Skip the chunks a decoder died on twice, failing them. */
static void skip_poison(struct decoder *x) {
  struct chunk *c;
  while ((c = x->waiting.head) != NULL && c->resent > 1) {
    (void)list_pop(&x->waiting);
    x->waiting_bytes -= c->len;
    log_error("skipping product the decoder died on twice: %s: cmd=\"%s\"",
              c->ident, x->cmd);
    report(x, c, false);
    free(c);
  }
}

static struct decoder *by_pid(struct pqact_decoders *d, pid_t pid) {
  for (struct decoder *x = d->head; x != NULL; x = x->next)
    if (x->pid == pid)
      return x;
  return NULL;
}

static void on_exit_status(void *arg, pid_t pid, int status) {
  struct decoder *x = by_pid(arg, pid);
  if (x == NULL)
    return;        /* given up already */
  decoder_died(x); /* if its pipe had not told us yet */
  x->pid = 0;
  bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  struct chunk *s = x->suspect;
  bool read_one = s != NULL; /* a product whole since it started */
  x->suspect = NULL;
  if (s != NULL && failed && /* it died of what it had just read? */
      x->died_at - x->suspect_at <= x->set->timeout_s) {
    s->resent++;
    s->off = 0;
    s->next = x->waiting.head;
    x->waiting.head = s;
    if (x->waiting.tail == NULL)
      x->waiting.tail = s;
    x->waiting.n++;
    x->waiting_bytes += s->len;
  } else if (s != NULL) {
    free(s); /* reported when it was written */
  }
  skip_poison(x);
  if (!failed && read_one) { /* it did its work and ended: not dying */
    x->deaths = 0;
    x->restart_at = x->died_at;
  }
  /* Any other exit, 0 included, counts as a death: a decoder that exits
   * at once is started again after the growing delay, not in a loop.
   * pump_one() does either on x's next turn: it drops a -close decoder
   * with nothing waiting, starts any other again when its delay has
   * passed.  Never free x here: this runs from any reap, and one comes
   * from inside pqact_decoders_pump() (a spawn over the cap reaps),
   * whose walk may hold x as its next decoder. */
}

/* ---- writing ---- */

/* Write what x takes now.  -1 if x died or cannot be written. */
static int write_some(struct decoder *x) {
  struct chunk *c;
  while ((c = x->waiting.head) != NULL) {
    if (c->off == 0)
      c->start = x->written;
    ssize_t w = write(x->fd, c->bytes + c->off, c->len - c->off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return 0;
      if (errno != EPIPE)
        log_error("cannot write to decoder: cmd=\"%s\": %s", x->cmd,
                  strerror(errno));
      decoder_died(x);
      return -1;
    }
    c->off += (size_t)w;
    x->written += (uint64_t)w;
    x->waiting_bytes -= (size_t)w;
    if (c->off < c->len)
      return 0;
    (void)list_pop(&x->waiting);
    report(x, c, true); /* in the pipe: the decoder reads it even if we
                           die now */
    list_push(&x->sent, c);
  }
  return 0;
}

/* A decoder with bytes waiting that read none for the timeout, running or
 * dying again and again: give up. */
static bool timed_out(struct decoder *x, double now) {
  if (pending(x) == 0 || x->set->timeout_s <= 0 ||
      now - x->progress_at < x->set->timeout_s)
    return false;
  log_error("write to decoder timed out (%.0f s): cmd=\"%s\", pid %d",
            x->set->timeout_s, x->cmd, (int)x->pid);
  return true;
}

static void log_if_slow(struct decoder *x, double now) {
  if (pending(x) == 0 || now - x->progress_at < PQACT_DECODER_SLOW_S ||
      now - x->slow_logged_at < PQACT_DECODER_SLOW_S)
    return;
  x->slow_logged_at = now;
  log_warning("decoder is behind: cmd=\"%s\": %zu product%s waiting (%zu "
              "bytes in memory, %zu more products in the queue), nothing "
              "read for %.0f s",
              x->cmd, pending(x), pending(x) == 1 ? "" : "s", x->waiting_bytes,
              x->nrefs, now - x->progress_at);
}

/* Has x read more since we last looked?  Then it is making progress. */
static void look_at_reading(struct decoder *x, double now) {
  uint64_t read = bytes_read(x);
  if (read > x->read) {
    x->read = read;
    x->progress_at = now;
  }
  if (x->sent.head != NULL)
    trim_sent(x, read, now);
}

static struct chunk *make_chunk(const struct decoder *x,
                                const pq_prod_info *info, const void *data);

struct refill {
  struct decoder *x;
  struct chunk *c;
};

static int on_found(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  struct refill *r = arg;
  (void)place;
  r->c = make_chunk(r->x, info, data);
  return 0;
}

/* Bring products left in the queue into x's buffer while it has room
 * (not from within a read of the queue: pq_find() on the same handle). */
static void refill(struct decoder *x) {
  if (x->set->pq == NULL)
    return; /* the queue is closed: they fail at the end */
  struct ref *r;
  while ((r = x->refs) != NULL && x->waiting_bytes < PQACT_DECODER_BUFFER / 2) {
    x->refs = r->next;
    if (x->refs == NULL)
      x->refs_tail = NULL;
    x->nrefs--;
    struct refill f = {.x = x};
    int rc = pq_find(x->set->pq, r->sig, on_found, &f);
    if (rc == PQ_OK && f.c != NULL) {
      f.c->token = r->token;
      f.c->inserted_us = r->inserted_us;
      list_push(&x->waiting, f.c);
      x->waiting_bytes += f.c->len;
    } else {
      char hex[2 * PQ_SIGLEN + 1];
      for (size_t i = 0; i < PQ_SIGLEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", r->sig[i]);
      log_error("product %s left the queue before decoder could take it: "
                "cmd=\"%s\": %s",
                hex, x->cmd, rc == PQ_OK ? strerror(ENOMEM) : pq_strerror(rc));
      if (x->set->done != NULL)
        x->set->done(x->set->arg, r->token, false);
    }
    free(r);
  }
}

/* One decoder's turn; false if it was dropped.  `fetch`: refs may be
 * brought in from the queue. */
static bool pump_one(struct decoder *x, double now, bool fetch) {
  if (fetch && x->refs != NULL)
    refill(x);
  if (timed_out(x, now)) {
    if (x->pid != 0) /* not left running as an orphan */
      pqact_children_terminate(x->set->kids, x->pid,
                               PQACT_DECODER_KILL_GRACE_S * 1000);
    drop_decoder(x, "timed-out");
    return false;
  }
  if (x->fd < 0) {
    if (x->pid != 0 && now - x->died_at < EXIT_WAIT_S)
      return true;     /* its exit status decides about the suspect */
    if (x->pid != 0) { /* closed its input but runs on: forget it */
      x->pid = 0;
      if (x->suspect != NULL) {
        free(x->suspect);
        x->suspect = NULL;
      }
    }
    if (pending(x) == 0) {
      if (x->flags & OPT_CLOSE) {
        drop_decoder(x, "terminated");
        return false;
      }
      return true;
    }
    skip_poison(x);
    if (pending(x) == 0 || now < x->restart_at)
      return true;
    x->capped_out = false;
    if (start_decoder(x) != 0) {
      if (errno == EAGAIN) {  /* over the cap of children: later, and */
        x->progress_at = now; /* waiting for a slot is not its fault */
        x->capped_out = true;
        return true;
      }
      drop_decoder(x, "failed");
      return false;
    }
  }
  if (pending(x) == 0 && x->sent.head == NULL)
    return true; /* idle */
  if (write_some(x) != 0)
    return true; /* died: started again on a later turn */
  look_at_reading(x, now);
  log_if_slow(x, now);
  if (pending(x) == 0 && (x->flags & OPT_CLOSE) && x->fd >= 0) {
    close(x->fd); /* all written: end of its input */
    x->fd = -1;
    free_list(x, &x->sent, true);
    x->died_at = now;
  }
  return true;
}

bool pqact_decoders_pump(struct pqact_decoders *d) {
  if (d->head == NULL)
    return false;
  for (struct decoder *x = d->head; x != NULL; x = x->next)
    if (x->fd < 0 && x->pid != 0) { /* its exit status decides */
      (void)pqact_children_reap(d->kids);
      break;
    }
  double now = cli_monotonic();
  bool waiting = false;
  struct decoder *x = d->head, *next;
  for (; x != NULL; x = next) {
    next = x->next;
    if (pump_one(x, now, true) && pending(x) > 0)
      waiting = true;
  }
  return waiting;
}

bool pqact_decoders_full(const struct pqact_decoders *d) {
  unsigned unstarted = 0;
  for (const struct decoder *x = d->head; x != NULL; x = x->next) {
    if (x->nrefs > PQACT_DECODER_REFS ||
        (d->pq == NULL && x->waiting_bytes > PQACT_DECODER_BUFFER))
      return true;
    unstarted += x->fd < 0 && pending(x) > 0;
  }
  return unstarted > PQACT_DECODERS_UNSTARTED;
}

bool pqact_decoders_reading(const struct pqact_decoders *d) {
  for (const struct decoder *x = d->head; x != NULL; x = x->next)
    if (x->fd >= 0 && x->sent.head != NULL)
      return true;
  return false;
}

bool pqact_decoders_wait(struct pqact_decoders *d, int timeout_ms) {
  struct pollfd fds[64];
  struct decoder *of[64];
  size_t n = 0;
  bool capped_out = false;
  double now = cli_monotonic(), soonest = now + timeout_ms / 1000.0;
  for (struct decoder *x = d->head; x != NULL; x = x->next) {
    if (x->fd >= 0 && x->waiting.n == 0 && x->sent.head != NULL &&
        n < sizeof fds / sizeof fds[0]) { /* reading: wake if it dies */
      of[n] = x;
      fds[n++] = (struct pollfd){.fd = x->fd, .events = 0};
      continue;
    }
    if (pending(x) == 0)
      continue;
    if (x->fd >= 0 && n < sizeof fds / sizeof fds[0]) {
      of[n] = x;
      fds[n++] = (struct pollfd){.fd = x->fd, .events = POLLOUT};
      double due = x->progress_at + x->set->timeout_s;
      if (x->set->timeout_s > 0 && due < soonest)
        soonest = due;
    } else if (x->capped_out) { /* a child's exit frees a slot */
      capped_out = true;
    } else if (x->fd < 0) { /* its exit status, soon; or its restart */
      double due = x->pid != 0 ? now + 0.01 : x->restart_at;
      if (due < soonest)
        soonest = due;
    }
  }
  int ms = soonest <= now ? 0 : (int)((soonest - now) * 1000.0) + 1;
  if (ms > timeout_ms)
    ms = timeout_ms;
  if (n > 0 && cli_io_poll(fds, n, ms) > 0) {
    for (size_t i = 0; i < n; i++)
      if (fds[i].revents & (POLLERR | POLLHUP))
        decoder_died(of[i]); /* its reader is gone */
  } else if (n == 0 && capped_out) {
    (void)pqact_children_wait_slot(d->kids, ms);
  } else if (n == 0 && ms > 0) {
    (void)cli_io_sleep(ms / 1000.0);
  }
  return pqact_decoders_pump(d);
}

/* ---- a product for a decoder ---- */

static char *join(int argc, char **argv) {
  size_t len = 1;
  for (int i = 0; i < argc; i++)
    len += strlen(argv[i]) + 1;
  char *s = malloc(len), *p = s;
  if (s == NULL)
    return NULL;
  for (int i = 0; i < argc; i++)
    p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
  *p = '\0';
  return s;
}

static struct decoder *find_decoder(struct pqact_decoders *d,
                                    enum pqact_action type, const char *cmd) {
  for (struct decoder *x = d->head; x != NULL; x = x->next)
    if (x->type == type && strcmp(x->cmd, cmd) == 0)
      return x;
  return NULL;
}

static struct decoder *new_decoder(struct pqact_decoders *d,
                                   enum pqact_action type, char *cmd,
                                   unsigned flags, int argc, char **argv) {
  struct decoder *x = calloc(1, sizeof *x);
  if (x == NULL ||
      (x->argv = calloc((size_t)argc + 1, sizeof *x->argv)) == NULL) {
    free(x);
    return NULL;
  }
  for (int i = 0; i < argc; i++) {
    if ((x->argv[i] = strdup(argv[i])) == NULL) {
      while (i-- > 0)
        free(x->argv[i]);
      free(x->argv);
      free(x);
      return NULL;
    }
  }
  x->set = d;
  x->type = type;
  x->cmd = cmd;
  x->flags = flags;
  x->fd = -1;
  x->next = d->head;
  if (d->head != NULL)
    d->head->prev = x;
  d->head = x;
  d->n++;
  return x;
}

/* SPIPE's record (LDM's, in native unsigned longs): sync word, key length,
 * key (the identifier), data length + 2, data, ETX, RS. */
#define SPIPE_SYNC 0x1DFCCF1Aul

/* The bytes a product becomes for a decoder of x's type and options. */
/* An empty chunk for n bytes, for the product info names. */
static struct chunk *new_chunk(const pq_prod_info *info, size_t n) {
  struct chunk *c = malloc(sizeof *c + n);
  if (c == NULL)
    return NULL;
  memset(c, 0, sizeof *c);
  snprintf(c->ident, sizeof c->ident, "%s", info->ident);
  return c;
}

static struct chunk *make_chunk(const struct decoder *x,
                                const pq_prod_info *info, const void *data) {
  if (x->type == PQACT_XPIPE) { /* as DBFILE stores it (logged) */
    uint8_t *xdr;
    size_t n;
    if (pqact_xdr_product(info, data, &xdr, &n) != 0) {
      errno = ERANGE;
      return NULL;
    }
    struct chunk *c = new_chunk(info, n);
    if (c != NULL) {
      memcpy(c->bytes, xdr, n);
      c->len = n;
    }
    free(xdr);
    return c;
  }
  size_t start = 0, len = (size_t)info->size;
  if (x->type == PQACT_PIPE && (x->flags & OPT_REMOVEWMO))
    pqact_remove_wmo(data, len, &start, &len);
  size_t meta = PQACT_META_FIXED + 8 + PQ_IDENT_MAX + PQ_ORIGIN_MAX;
  size_t head = 0, tail = 0;
  if (x->type == PQACT_SPIPE) {
    head = 3 * sizeof(unsigned long) + strlen(info->ident);
    tail = 2;
  }
  bool nodata = x->type == PQACT_PIPE && (x->flags & OPT_NODATA);
  size_t body = nodata ? 0 : len;
  struct chunk *c = new_chunk(info, meta + head + body + tail);
  if (c == NULL)
    return NULL;
  uint8_t *p = c->bytes;
  if (x->type == PQACT_SPIPE) {
    unsigned long w[2] = {SPIPE_SYNC, strlen(info->ident)};
    memcpy(p, w, sizeof w);
    p += sizeof w;
    memcpy(p, info->ident, w[1]);
    p += w[1];
    unsigned long dlen = len + 2;
    memcpy(p, &dlen, sizeof dlen);
    p += sizeof dlen;
  }
  uint8_t *meta_at = p;
  size_t mlen = 0;
  if (x->type == PQACT_PIPE && (x->flags & OPT_METADATA))
    p += mlen = PQACT_META_FIXED + 8 + strlen(info->ident) +
                strlen(info->origin); /* filled in below */
  memcpy(p, (const uint8_t *)data + start, body);
  if (x->type == PQACT_PIPE && (x->flags & OPT_STRIP))
    body = pqact_strip(p, body);
  p += body;
  if (mlen > 0) /* the data size after -strip */
    (void)pqact_metadata(info, (uint32_t)body, meta_at);
  if (x->type == PQACT_SPIPE) {
    *p++ = 0x03;
    *p++ = 0x1e;
  }
  c->len = (size_t)(p - c->bytes);
  return c;
}

/* The options of a PIPE, SPIPE or XPIPE action into *flags, its key
 * (allocated) into *cmd; the index of the command.  -1 (logged) if there
 * is no command or memory ran out. */
static int key_of(enum pqact_action type, int argc, char **argv,
                  unsigned *flags, char **cmd) {
  *flags = 0;
  int first = pqact_decode_options(type, argc, argv, flags, NULL, NULL, NULL);
  if (first >= argc) {
    log_error("%s: no command", pqact_action_name(type));
    return -1;
  }
  if ((*cmd = join(argc - first, argv + first)) == NULL) {
    log_error("%s: %s", pqact_action_name(type), strerror(ENOMEM));
    return -1;
  }
  return first;
}

char *pqact_decoder_key(enum pqact_action type, int argc, char **argv) {
  unsigned flags;
  char *cmd = NULL;
  return key_of(type, argc, argv, &flags, &cmd) < 0 ? NULL : cmd;
}

size_t pqact_decoders_behind(const struct pqact_decoders *d,
                             struct cli_state_dec *out, size_t max) {
  size_t n = 0, listed = 0;
  for (const struct decoder *x = d->head; x != NULL; x = x->next) {
    if (pending(x) == 0)
      continue; /* the oldest waits in memory, or else in the queue: */
    uint64_t from = x->waiting.head != NULL ? x->waiting.head->inserted_us
                                            : x->refs->inserted_us;
    const char *type = pqact_action_name(x->type);
    size_t i = 0; /* -close decoders may share a key: the oldest */
    for (; i < listed; i++)
      if (strcmp(out[i].cmd, x->cmd) == 0 && strcmp(out[i].type, type) == 0)
        break;
    if (i < listed) {
      if (from < out[i].from_us)
        out[i].from_us = from;
      continue;
    }
    n++;
    if (listed < max)
      out[listed++] =
          (struct cli_state_dec){.type = type, .cmd = x->cmd, .from_us = from};
  }
  return n;
}

int pqact_pipe_action(struct pqact_decoders *d, enum pqact_action type,
                      int argc, char **argv, const pq_prod_info *info,
                      const void *data, uint64_t token, uint64_t inserted_us) {
  unsigned flags;
  char *cmd;
  int first = key_of(type, argc, argv, &flags, &cmd);
  if (first < 0)
    return -1;
  struct decoder *x = (flags & OPT_CLOSE) ? NULL : find_decoder(d, type, cmd);
  if (x != NULL) {
    free(cmd);
  } else if ((x = new_decoder(d, type, cmd, flags, argc - first,
                              argv + first)) == NULL) {
    log_error("%s: cmd=\"%s\": %s", pqact_action_name(type), cmd,
              strerror(ENOMEM));
    free(cmd);
    return -1;
  }
  if (d->pq != NULL &&
      (x->nrefs > 0 || x->waiting_bytes > PQACT_DECODER_BUFFER)) {
    /* its buffer is full: the product waits in the queue, in order */
    struct ref *r = malloc(sizeof *r);
    if (r == NULL) {
      log_error("%s: cmd=\"%s\": %s", pqact_action_name(type), x->cmd,
                strerror(ENOMEM));
      return -1;
    }
    r->next = NULL;
    r->token = token;
    r->inserted_us = inserted_us;
    memcpy(r->sig, info->signature, PQ_SIGLEN);
    if (x->refs_tail != NULL)
      x->refs_tail->next = r;
    else
      x->refs = r;
    x->refs_tail = r;
    x->nrefs++;
    if (d->hold != NULL)
      d->hold(d->arg, token);
    return 0;
  }
  struct chunk *c = make_chunk(x, info, data);
  if (c == NULL) {
    log_error("cannot make %s of %s for decoder: cmd=\"%s\": %s",
              pqact_action_name(type), info->ident, x->cmd, strerror(errno));
    if (x->fd < 0 && pending(x) == 0 && x->pid == 0)
      drop_decoder(x, "failed");
    return -1;
  }
  c->token = token;
  c->inserted_us = inserted_us;
  if (d->hold != NULL)
    d->hold(d->arg, token);
  if (pending(x) == 0)
    x->progress_at = cli_monotonic(); /* the timeout counts from now */
  list_push(&x->waiting, c);
  x->waiting_bytes += c->len;
  (void)pump_one(x, cli_monotonic(), false); /* within a read of the queue */
  return 0;
}
