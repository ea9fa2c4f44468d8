/*
 * ldmnats.c - the bridge's NATS side that pq2nats and nats2pq share
 * (ldmnats.h): the NATS options of the command line with their registry
 * defaults and the reading of a token file, the connection (servers,
 * credentials, token, TLS, reconnection forever with a bounded wait, its events
 * logged) and the creation of the product and chunk streams.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <nats/nats.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/nats/ldmnats.h"

/* ---- options ---- */

int ldmnats_option(struct ldmnats_opts *o, int ch, const char *arg) {
  switch (ch) {
  case 'u':
    o->url = arg;
    return 1;
  case 's':
    o->stream = arg;
    return 1;
  case 'P':
    o->prefix = arg;
    return 1;
  case 'C':
    o->creds = arg;
    return 1;
  case 'T':
    o->token = arg;
    return 1;
  case 't':
    o->token_file = arg;
    return 1;
  case 'A':
    o->ca = arg;
    return 1;
  case 'E':
    o->cert = arg;
    return 1;
  case 'K':
    o->key = arg;
    return 1;
  default:
    return 0;
  }
}

/* *value from the registry's key into buf, unless the command line set it. */
static int from_reg(struct cli *c, const char **value, const char *key,
                    char *buf, size_t len) {
  if (*value != NULL)
    return 0;
  if (cli_reg_string(c, key, buf, len) != 0)
    return -1;
  *value = buf;
  return 0;
}

int ldmnats_resolve(struct cli *c, struct ldmnats_opts *o) {
  if (from_reg(c, &o->url, REG_NATS_URL, o->url_buf, sizeof o->url_buf) ||
      from_reg(c, &o->stream, REG_NATS_STREAM, o->stream_buf,
               sizeof o->stream_buf) ||
      from_reg(c, &o->prefix, REG_NATS_PREFIX, o->prefix_buf,
               sizeof o->prefix_buf) ||
      from_reg(c, &o->creds, REG_NATS_CREDENTIALS, o->creds_buf,
               sizeof o->creds_buf) ||
      from_reg(c, &o->ca, REG_NATS_CA, o->ca_buf, sizeof o->ca_buf) ||
      from_reg(c, &o->cert, REG_NATS_CERT, o->cert_buf, sizeof o->cert_buf) ||
      from_reg(c, &o->key, REG_NATS_KEY, o->key_buf, sizeof o->key_buf))
    return -1;
  if (o->want_durable && from_reg(c, &o->durable, REG_NATS_DURABLE,
                                  o->durable_buf, sizeof o->durable_buf))
    return -1;
  if (o->token != NULL && o->token_file != NULL) {
    log_error("give the token with -T or -t, not both");
    return -1;
  }
  if (o->token == NULL) {
    if (from_reg(c, &o->token_file, REG_NATS_TOKEN_FILE, o->token_file_buf,
                 sizeof o->token_file_buf) != 0)
      return -1;
    o->token = "";
  }
  if (o->token_file != NULL && o->token_file[0] != '\0') {
    char err[4200];
    if (ldmnats_read_token(o->token_file, o->token_buf, err, sizeof err) != 0) {
      log_error("%s", err);
      return -1;
    }
    o->token = o->token_buf;
  }
  if (o->url[strspn(o->url, " ,")] == '\0') {
    log_error("no NATS server URL (-u, or the registry's %s)", REG_NATS_URL);
    return -1;
  }
  if (!ldmnats_stream_ok(o->stream)) {
    log_error("\"%s\" is not a stream name (1 to %d characters, none of "
              "'.', '*', '>', '/', '\\\\', blanks)",
              o->stream, LDMNATS_NAME_MAX - 8);
    return -1;
  }
  if (!ldmnats_prefix_ok(o->prefix)) {
    log_error("\"%s\" is not a subject prefix (tokens separated by '.', "
              "no wildcard, at most %d characters)",
              o->prefix, LDMNATS_NAME_MAX - 8);
    return -1;
  }
  if (o->want_durable && !ldmnats_stream_ok(o->durable)) {
    log_error("\"%s\" is not a durable consumer name", o->durable);
    return -1;
  }
  if (o->key[0] != '\0' && o->cert[0] == '\0') {
    log_error("a TLS key (-K, %s) needs a certificate (-E, %s)", REG_NATS_KEY,
              REG_NATS_CERT);
    return -1;
  }
  return 0;
}

/* ---- the token file ---- */

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define TOKEN_MAX_TEXT TEXT(LDMNATS_TOKEN_MAX)

int ldmnats_read_token(const char *path, char *buf, char *err, size_t errlen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, errlen, "cannot read the NATS token file %s: %s", path,
             strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    snprintf(err, errlen,
             "refusing the NATS token file %s: %s (mode %04o); make it "
             "mode 0600 or 0400, owned by the bridge's user",
             path,
             S_ISREG(st.st_mode) ? "group or others may read or write it"
                                 : "not a regular file",
             (unsigned)(st.st_mode & 07777));
    close(fd);
    return -1;
  }
  ssize_t n = read(fd, buf, LDMNATS_TOKEN_MAX + 2);
  int e = errno;
  close(fd);
  if (n < 0) {
    snprintf(err, errlen, "cannot read the NATS token file %s: %s", path,
             strerror(e));
    return -1;
  }
  size_t len = (size_t)n;
  if (len > 0 && buf[len - 1] == '\n')
    len--;
  if (len > 0 && buf[len - 1] == '\r')
    len--;
  const char *what = NULL;
  if (len == 0)
    what = "it is empty";
  else if (len > LDMNATS_TOKEN_MAX || st.st_size > (off_t)n)
    what = "it is longer than " TOKEN_MAX_TEXT " bytes";
  for (size_t i = 0; what == NULL && i < len; i++)
    if ((unsigned char)buf[i] < ' ' || buf[i] == 0x7f)
      what = "it holds a control character (one line, the token alone)";
  if (what != NULL) {
    snprintf(err, errlen, "refusing the NATS token file %s: %s", path, what);
    return -1;
  }
  buf[len] = '\0';
  return 0;
}

/* ---- the connection ---- */

int64_t ldmnats_backoff_ms(unsigned n) {
  int64_t ms = 100;
  for (unsigned i = 0; i < n && ms < LDMNATS_WAIT_MAX_MS; i++)
    ms *= 2;
  return ms < LDMNATS_WAIT_MAX_MS ? ms : LDMNATS_WAIT_MAX_MS;
}

/* The reconnection's wait after every server was tried: the same bound,
 * with up to a tenth of jitter. */
static int64_t reconnect_delay(natsConnection *nc, int attempts, void *arg) {
  (void)nc;
  (void)arg;
  int64_t ms = ldmnats_backoff_ms(attempts > 0 ? (unsigned)attempts - 1 : 0);
  return ms + (int64_t)(nats_Now() % (ms / 10 + 1));
}

/* Set by ldmnats_close(): the disconnect it makes is not news (libnats
 * may tell it after the close returns, so it stays set: a program closes
 * its connection on its way out). */
static atomic_bool closing;

static void on_disconnected(natsConnection *nc, void *arg) {
  (void)nc;
  (void)arg;
  if (!atomic_load(&closing))
    log_warning("disconnected from the NATS server: reconnecting");
}

static void on_reconnected(natsConnection *nc, void *arg) {
  (void)arg;
  char url[512] = "";
  (void)natsConnection_GetConnectedUrl(nc, url, sizeof url);
  log_notice("reconnected to the NATS server %s", url);
}

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus s,
                     void *arg) {
  (void)nc;
  (void)sub;
  (void)arg;
  log_warning("NATS: %s", natsStatus_GetText(s));
}

/* What libnats said last, for a message. */
static const char *nats_why(natsStatus s) {
  const char *text = nats_GetLastError(NULL);
  return text != NULL && text[0] != '\0' ? text : natsStatus_GetText(s);
}

/* The URLs of o, split at commas, into urls (at most max). */
static int split_urls(char *list, const char **urls, int max) {
  int n = 0;
  for (char *save = NULL, *u = strtok_r(list, ", ", &save);
       u != NULL && n < max; u = strtok_r(NULL, ", ", &save))
    urls[n++] = u;
  return n;
}

/* The options of the connection.  LDMNATS_ECONFIG on a bad file (logged). */
static int make_options(const struct ldmnats_opts *o, const char *name,
                        bool own, natsOptions **out, char *list) {
  natsOptions *no = NULL;
  const char *urls[64];
  int n = split_urls(list, urls, 64);
  natsStatus s = natsOptions_Create(&no);
  if (s == NATS_OK)
    s = natsOptions_SetServers(no, urls, n);
  if (s == NATS_OK)
    s = natsOptions_SetName(no, name);
  if (s == NATS_OK && own) /* the caller reconnects (ldmnats_connect_own) */
    s = natsOptions_SetAllowReconnect(no, false);
  if (s == NATS_OK && !own)
    s = natsOptions_SetMaxReconnect(no, -1); /* forever */
  if (s == NATS_OK && !own)
    s = natsOptions_SetCustomReconnectDelay(no, reconnect_delay, NULL);
  if (s == NATS_OK && !own)
    s = natsOptions_SetDisconnectedCB(no, on_disconnected, NULL);
  if (s == NATS_OK && !own)
    s = natsOptions_SetReconnectedCB(no, on_reconnected, NULL);
  if (s == NATS_OK)
    s = natsOptions_SetErrorHandler(no, on_error, NULL);
  /* publishes made while reconnecting wait in a buffer of this size */
  if (s == NATS_OK && !own)
    s = natsOptions_SetReconnectBufSize(no, 128 * 1024 * 1024);
  if (s == NATS_OK)
    s = natsOptions_SetPingInterval(no, 5000);
  if (s == NATS_OK)
    s = natsOptions_SetMaxPingsOut(no, 3);
  if (s != NATS_OK) {
    log_error("cannot set the NATS options: %s", nats_why(s));
    natsOptions_Destroy(no);
    return LDMNATS_EFAIL;
  }
  const char *what = NULL, *path = NULL;
  if (o->creds[0] != '\0' && (s = natsOptions_SetUserCredentialsFromFiles(
                                  no, o->creds, NULL)) != NATS_OK) {
    what = "the credentials file";
    path = o->creds;
  }
  if (what == NULL && o->token[0] != '\0' &&
      (s = natsOptions_SetToken(no, o->token)) != NATS_OK) {
    what = "the token";
    path = o->token_file != NULL && o->token_file[0] != '\0' ? o->token_file
                                                             : "-T";
  }
  if (what == NULL && (o->ca[0] != '\0' || o->cert[0] != '\0') &&
      (s = natsOptions_SetSecure(no, true)) != NATS_OK) {
    what = "TLS";
    path = o->ca[0] != '\0' ? o->ca : o->cert;
  }
  if (what == NULL && o->ca[0] != '\0' &&
      (s = natsOptions_LoadCATrustedCertificates(no, o->ca)) != NATS_OK) {
    what = "the TLS CA file";
    path = o->ca;
  }
  if (what == NULL && o->cert[0] != '\0' &&
      (s = natsOptions_LoadCertificatesChain(
           no, o->cert, o->key[0] != '\0' ? o->key : o->cert)) != NATS_OK) {
    what = "the TLS certificate or key file";
    path = o->key[0] != '\0' ? o->key : o->cert;
  }
  if (what != NULL) {
    log_error("cannot use %s \"%s\": %s", what, path, nats_why(s));
    natsOptions_Destroy(no);
    return LDMNATS_ECONFIG;
  }
  *out = no;
  return 0;
}

/* ldmnats_connect() and ldmnats_connect_own(): own, the caller reconnects;
 * again, a reconnection (its words). */
static int connect_to(const struct ldmnats_opts *o, const char *name,
                      struct jsOptions *jo, bool own, bool again,
                      struct ldmnats_conn *conn) {
  *conn = (struct ldmnats_conn){0};
  char *list = strdup(o->url);
  if (list == NULL) {
    log_error("cannot connect to NATS: %s", strerror(ENOMEM));
    return LDMNATS_EFAIL;
  }
  natsOptions *no = NULL;
  int rc = make_options(o, name, own, &no, list);
  if (rc != 0) {
    free(list);
    return rc;
  }
  double said = 0;
  for (unsigned tries = 0;; tries++) {
    natsStatus s = natsConnection_Connect(&conn->nc, no);
    if (s == NATS_OK)
      break;
    conn->nc = NULL;
    double now = cli_monotonic();
    if (tries == 0 || now - said >= 60) {
      said = now;
      log_warning("cannot connect to the NATS server%s %s: %s; retrying",
                  strchr(o->url, ',') != NULL ? "s" : "", o->url, nats_why(s));
    }
    cli_sleep((double)ldmnats_backoff_ms(tries) / 1000);
    if (cli_stopping()) {
      natsOptions_Destroy(no);
      free(list);
      return LDMNATS_ESTOP;
    }
  }
  natsOptions_Destroy(no); /* the connection keeps a copy */
  free(list);
  char url[512] = "";
  (void)natsConnection_GetConnectedUrl(conn->nc, url, sizeof url);
  conn->max_payload = natsConnection_GetMaxPayload(conn->nc);
  log_notice("%sconnected to the NATS server %s (max_payload %" PRId64 ")",
             again ? "re" : "", url, conn->max_payload);
  natsStatus s = natsConnection_JetStream(&conn->js, conn->nc, jo);
  if (s != NATS_OK) {
    log_error("cannot open a JetStream context: %s", nats_why(s));
    ldmnats_close(conn);
    return LDMNATS_EFAIL;
  }
  return 0;
}

int ldmnats_connect(const struct ldmnats_opts *o, const char *name,
                    struct jsOptions *jo, struct ldmnats_conn *conn) {
  return connect_to(o, name, jo, false, false, conn);
}

int ldmnats_connect_own(const struct ldmnats_opts *o, const char *name,
                        struct jsOptions *jo, bool again,
                        struct ldmnats_conn *conn) {
  return connect_to(o, name, jo, true, again, conn);
}

void ldmnats_init(void) {
  (void)OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

void ldmnats_close(struct ldmnats_conn *conn) {
  if (conn->js != NULL)
    jsCtx_Destroy(conn->js);
  if (conn->nc != NULL) {
    atomic_store(&closing, true);
    natsConnection_Close(conn->nc);
    natsConnection_Destroy(conn->nc);
  }
  *conn = (struct ldmnats_conn){0};
}

bool ldmnats_connected(const struct ldmnats_conn *conn) {
  return conn->nc != NULL &&
         natsConnection_Status(conn->nc) == NATS_CONN_STATUS_CONNECTED;
}

bool ldmnats_lost(const struct ldmnats_conn *conn) {
  return conn->nc == NULL || natsConnection_IsClosed(conn->nc);
}

/* ---- the streams ---- */

/* Create the stream name with the subjects <prefix>.> unless it exists.
 * 0, 1 to try again (JetStream did not answer), LDMNATS_EFAIL (logged). */
static int ensure_stream(struct ldmnats_conn *conn, const char *name,
                         const char *prefix, int64_t dup_window_s, int replicas,
                         bool say) {
  jsStreamInfo *si = NULL;
  jsErrCode ec = 0;
  natsStatus s = js_GetStreamInfo(&si, conn->js, name, NULL, &ec);
  if (s == NATS_OK) {
    jsStreamInfo_Destroy(si);
    return 0;
  }
  if (s != NATS_NOT_FOUND && ec != JSStreamNotFoundErr) {
    if (say)
      log_warning("cannot look up the stream %s: %s; retrying", name,
                  nats_why(s));
    return 1;
  }
  char subject[LDMNATS_NAME_MAX + 8];
  snprintf(subject, sizeof subject, "%s.>", prefix);
  const char *subjects[] = {subject};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = name;
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  cfg.Duplicates = dup_window_s * 1000000000LL;
  cfg.Replicas = replicas;
  cfg.AllowDirect = true;
  ec = 0;
  s = js_AddStream(&si, conn->js, &cfg, NULL, &ec);
  if (s == NATS_OK) {
    log_notice("created the stream %s (subjects %s, duplicate window %" PRId64
               " s, %d replica%s)",
               name, subject, dup_window_s, replicas, replicas == 1 ? "" : "s");
    jsStreamInfo_Destroy(si);
    return 0;
  }
  if (ec == JSStreamNameExistErr)
    return 0;    /* another bridge made it meanwhile */
  if (ec != 0) { /* JetStream answered no */
    log_error("cannot create the stream %s (subjects %s): %s (error %d)", name,
              subject, nats_why(s), (int)ec);
    return LDMNATS_EFAIL;
  }
  if (say)
    log_warning("cannot create the stream %s: %s; retrying", name, nats_why(s));
  return 1;
}

int ldmnats_streams(struct ldmnats_conn *conn, const struct ldmnats_opts *o,
                    int64_t dup_window_s, int replicas) {
  char cstream[LDMNATS_NAME_MAX], cprefix[LDMNATS_NAME_MAX];
  ldmnats_chunk_stream(o->stream, cstream, sizeof cstream);
  ldmnats_chunk_prefix(o->prefix, cprefix, sizeof cprefix);
  double said = 0;
  for (unsigned tries = 0;; tries++) {
    double now = cli_monotonic();
    bool say = tries == 0 || now - said >= 60;
    if (say)
      said = now;
    int rc =
        ensure_stream(conn, o->stream, o->prefix, dup_window_s, replicas, say);
    if (rc == 0)
      rc = ensure_stream(conn, cstream, cprefix, dup_window_s, replicas, say);
    if (rc <= 0)
      return rc;
    if (ldmnats_lost(conn)) /* ldmnats_connect_own()'s, broken */
      return LDMNATS_ELOST;
    cli_sleep((double)ldmnats_backoff_ms(tries) / 1000);
    if (cli_stopping())
      return LDMNATS_ESTOP;
  }
}
