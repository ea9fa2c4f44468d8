/*
 * ldmd_conf_lex.c - reading ldmd.conf files and LDM's lexical rules: a
 * file is read whole (a regular file only, so a FIFO named by mistake
 * cannot hang the parse), INCLUDE paths are resolved against the including
 * file, and the text becomes tokens: keywords only in column 1 (in any
 * case), quoted strings, comments from '#' to the end of the line, and
 * arguments that continue over lines.  Part of the parser described in
 * ldmd_conf_parser.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldmd/site/ldmd_conf_parser.h"

/* ---------------------------------------------------------------------- */
/* Reading a file                                                         */
/* ---------------------------------------------------------------------- */

/* Read a whole regular file.  Opened non-blocking so that a FIFO named by
 * mistake cannot hang the parse; anything but a regular file is refused. */
int ldm__conf_read_file(const char *path, conf_src *s, char *why, size_t wlen) {
  struct stat st;
  size_t got = 0;
  int fd;

  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    snprintf(why, wlen, "%s", strerror(errno));
    return LDM_CONF_EIO;
  }
  if (fstat(fd, &st) != 0) {
    snprintf(why, wlen, "%s", strerror(errno));
    close(fd);
    return LDM_CONF_EIO;
  }
  if (!S_ISREG(st.st_mode) || (uintmax_t)st.st_size > LDM_CONF_MAX_FILE) {
    snprintf(why, wlen, "%s",
             !S_ISREG(st.st_mode) ? "not a regular file" : "file too large");
    close(fd);
    return LDM_CONF_EIO;
  }
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  s->buf = malloc((size_t)st.st_size + 1);
  if (s->buf == NULL) {
    close(fd);
    return LDM_CONF_ENOMEM;
  }
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, s->buf + got, (size_t)st.st_size - got);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      snprintf(why, wlen, "%s", strerror(errno));
      close(fd);
      return LDM_CONF_EIO;
    }
    if (n == 0)
      break; /* the file shrank: take what is there */
    got += (size_t)n;
  }
  close(fd);
  s->buf[got] = '\0';
  s->len = got;
  return LDM_CONF_OK;
}

/* A relative INCLUDE is relative to the including file's directory. */
char *ldm__conf_include_path(const char *including, const char *path) {
  const char *slash = strrchr(including, '/');
  size_t dlen, plen = strlen(path);
  char *out;

  if (path[0] == '/' || slash == NULL)
    return strdup(path);
  dlen = (size_t)(slash - including) + 1; /* keeps the '/' */
  out = malloc(dlen + plen + 1);
  if (out != NULL) {
    memcpy(out, including, dlen);
    memcpy(out + dlen, path, plen + 1);
  }
  return out;
}

int ldm__conf_remember_file(conf_parser *p, const char *path,
                            const char **kept) {
  ldm_conf *conf = p->conf;
  char **files =
      ldm__conf_grow(conf->files, &p->cap_files, conf->nfiles, sizeof *files);
  char *copy = strdup(path);

  if (files == NULL || copy == NULL) {
    free(copy);
    return ldm__conf_nomem(p);
  }
  conf->files = files;
  files[conf->nfiles++] = copy;
  *kept = copy;
  return LDM_CONF_OK;
}

/* ---------------------------------------------------------------------- */
/* Lexer                                                                  */
/* ---------------------------------------------------------------------- */

static bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\n';
}

/* A column-1 word that is a keyword (any case; POLL only as POLL/poll). */
static enum keyword keyword_of(const char *w) {
  int k;

  if (strcmp(w, "POLL") == 0 || strcmp(w, "poll") == 0)
    return KW_REQUEST;
  for (k = KW_ALLOW; k < KW_COUNT; k++)
    if (strcasecmp(w, ldm__conf_kw_infos[k].name) == 0)
      return (enum keyword)k;
  return KW_NONE;
}

/* An indented keyword: legal as a string, and almost always a mistake. */
bool ldm__conf_misplaced_keyword(const conf_tok *t) {
  return t->indented && !t->quoted && keyword_of(t->text) != KW_NONE;
}

static int lex_quoted(conf_parser *p, conf_src *s, conf_tok *t) {
  size_t i, j = s->pos + 1, n = 0;
  bool esc = false;

  while (j < s->len) {
    if (esc)
      esc = false;
    else if (s->buf[j] == '\\')
      esc = true;
    else if (s->buf[j] == '"')
      break;
    j++;
  }
  if (j >= s->len)
    return ldm__conf_fail(p, s, t->line, "quoted string never ends");
  if (j - s->pos - 1 > LDM_CONF_MAX_TOKEN)
    return ldm__conf_fail(p, s, t->line,
                          "quoted string longer than %d characters",
                          LDM_CONF_MAX_TOKEN);
  t->text = malloc(j - s->pos);
  if (t->text == NULL)
    return ldm__conf_nomem(p);
  esc = false;
  for (i = s->pos + 1; i < j; i++) {
    if (s->buf[i] == '\n')
      s->line++;
    if (s->buf[i] == '\\' && !esc) {
      esc = true;
      continue;
    }
    esc = false;
    t->text[n++] = s->buf[i];
  }
  t->text[n] = '\0';
  t->quoted = true;
  s->pos = j + 1;
  return LDM_CONF_OK;
}

static int lex_plain(conf_parser *p, conf_src *s, conf_tok *t) {
  size_t start = s->pos, n;

  while (s->pos < s->len) {
    char c = s->buf[s->pos];

    if (c == '\\' && s->pos + 1 < s->len && s->buf[s->pos + 1] == '"') {
      s->pos += 2; /* \" stays in an unquoted string, both characters */
      continue;
    }
    if (is_blank(c) || c == '"')
      break;
    s->pos++;
  }
  n = s->pos - start;
  if (n > LDM_CONF_MAX_TOKEN)
    return ldm__conf_fail(p, s, t->line, "string longer than %d characters",
                          LDM_CONF_MAX_TOKEN);
  t->text = strndup(s->buf + start, n);
  if (t->text == NULL)
    return ldm__conf_nomem(p);
  if (t->bol)
    t->kw = keyword_of(t->text);
  return LDM_CONF_OK;
}

/* Only white space between the start of the line and the position? */
static bool first_on_line(const conf_src *s) {
  size_t k = s->pos;

  while (k > 0 && s->buf[k - 1] != '\n') {
    if (!is_blank(s->buf[k - 1]))
      return false;
    k--;
  }
  return true;
}

/* The next token of s: white space and comments skipped. */
static int lex(conf_parser *p, conf_src *s, conf_tok *t) {
  memset(t, 0, sizeof *t);
  for (;;) {
    while (s->pos < s->len && is_blank(s->buf[s->pos])) {
      if (s->buf[s->pos] == '\n')
        s->line++;
      s->pos++;
    }
    if (s->pos >= s->len || s->buf[s->pos] != '#')
      break;
    while (s->pos < s->len && s->buf[s->pos] != '\n')
      s->pos++;
  }
  t->line = s->line;
  if (s->pos >= s->len) {
    t->eof = true;
    return LDM_CONF_OK;
  }
  t->bol = s->pos == 0 || s->buf[s->pos - 1] == '\n';
  t->indented = !t->bol && first_on_line(s);
  if (s->buf[s->pos] == '"')
    return lex_quoted(p, s, t);
  return lex_plain(p, s, t);
}

int ldm__conf_next_tok(conf_parser *p, conf_src *s, conf_tok *t) {
  if (s->have_ahead) {
    *t = s->ahead;
    s->have_ahead = false;
    return LDM_CONF_OK;
  }
  return lex(p, s, t);
}
