/*
 * ldm6_capture.h - reads test/vectors/ldm6/session_decoded.txt, the hex
 * dump of every RPC message of a real LDM 6.15 session, into memory:
 * per message its connection, direction, title (CALL or REPLY, procedure,
 * xid), its bytes (record mark included) and its named fields.  Shared by
 * the codec unit tests and the fuzz seed generator; header-only, so every
 * function is static inline.
 *
 * The directory comes from $LDM6_VECTORS, else from the LDM6_VECTORS_DIR
 * compile definition.
 */
#ifndef TEST_LDM6_CAPTURE_H
#define TEST_LDM6_CAPTURE_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP_NAME_MAX 160
#define CAP_VALUE_MAX 256

/** One "fields:" line: offset, length, hex column, description. */
typedef struct cap_field {
  unsigned off;
  unsigned len;
  char hex[64];                /* as printed; "..." when cut */
  char desc[CAP_NAME_MAX * 2]; /* the whole description */
  char name[CAP_NAME_MAX];     /* description before " = ", comments cut */
  char value[CAP_VALUE_MAX];   /* after " = " ("" if none) */
  bool has_value;
} cap_field;

typedef struct cap_msg {
  int conn;       /* 0-based connection number */
  unsigned frame; /* pcap frame */
  bool is_call;
  char src[32]; /* "127.0.0.1:32785" */
  char dst[32];
  char proc_name[32]; /* "FEEDME"; for a reply, of the call it answers */
  uint32_t xid;
  uint32_t prog, vers, proc; /* calls only */
  uint8_t *bytes;            /* record mark + message */
  size_t len;
  cap_field *fields;
  size_t nfields;
} cap_msg;

typedef struct capture {
  cap_msg *msgs;
  size_t n;
  size_t titles; /* "t=+" lines seen: must equal n */
} capture;

/** The vectors directory ($LDM6_VECTORS, else the build's test/vectors/ldm6),
 *  or NULL if none is configured. */
static inline const char *cap_dir(void) {
  const char *dir = getenv("LDM6_VECTORS");

  if (dir != NULL && *dir != '\0')
    return dir;
#ifdef LDM6_VECTORS_DIR
  return LDM6_VECTORS_DIR;
#else
  return NULL;
#endif
}

static inline void cap_free(capture *cap) {
  size_t i;

  for (i = 0; i < cap->n; i++) {
    free(cap->msgs[i].bytes);
    free(cap->msgs[i].fields);
  }
  free(cap->msgs);
  memset(cap, 0, sizeof *cap);
}

/* Copy src into dst[cap], cut to fit. */
static inline void cap_copy(char *dst, size_t cap, const char *src) {
  size_t n = strnlen(src, cap - 1);

  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Copy s without its " (...)" comments (nested parentheses allowed). */
static inline void cap_strip_comments(char *dst, size_t dlen, const char *s,
                                      size_t n) {
  size_t o = 0, i;
  int depth = 0;

  for (i = 0; i < n && o + 1 < dlen; i++) {
    if (s[i] == '(') {
      if (depth == 0 && o > 0 && dst[o - 1] == ' ')
        o--;
      depth++;
    } else if (s[i] == ')' && depth > 0) {
      depth--;
    } else if (depth == 0) {
      dst[o++] = s[i];
    }
  }
  dst[o] = '\0';
}

/* Split a description into name and value at the first " = " outside
 * parentheses. */
static inline void cap_split(cap_field *f) {
  const char *d = f->desc;
  int depth = 0;
  size_t i;

  f->has_value = false;
  for (i = 0; d[i] != '\0'; i++) {
    if (d[i] == '(')
      depth++;
    else if (d[i] == ')' && depth > 0)
      depth--;
    else if (depth == 0 && strncmp(d + i, " = ", 3) == 0)
      break;
  }
  cap_strip_comments(f->name, sizeof f->name, d, i);
  if (d[i] != '\0') {
    f->has_value = true;
    cap_copy(f->value, sizeof f->value, d + i + 3);
  } else {
    f->value[0] = '\0';
  }
}

static inline bool cap_is_hex4(const char *s) {
  return isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) &&
         isxdigit((unsigned char)s[2]) && isxdigit((unsigned char)s[3]);
}

static inline bool cap_push_byte(cap_msg *m, size_t *cap, uint8_t b) {
  if (m->len == *cap) {
    size_t ncap = *cap ? *cap * 2 : 256;
    uint8_t *nb = realloc(m->bytes, ncap);

    if (nb == NULL)
      return false;
    m->bytes = nb;
    *cap = ncap;
  }
  m->bytes[m->len++] = b;
  return true;
}

/* "  0000  80 00 00 4c ...  |...|": the bytes after the offset. */
static inline bool cap_hex_line(cap_msg *m, size_t *bcap, const char *line) {
  const char *p = line + 8;

  if (strtoul(line + 2, NULL, 16) != m->len)
    return false; /* offsets must follow on */
  while (isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1]) &&
         (p[2] == ' ' || p[2] == '\n' || p[2] == '\0')) {
    char h[3] = {p[0], p[1], 0};

    if (!cap_push_byte(m, bcap, (uint8_t)strtoul(h, NULL, 16)))
      return false;
    p += 2;
    while (*p == ' ')
      p++;
    if (*p == '|')
      break;
  }
  return true;
}

/* "    002c  4    6b0ce9ed    <description at column 40>" */
static inline bool cap_field_line(cap_msg *m, size_t *fcap, const char *line) {
  cap_field *f;
  size_t n = strlen(line);

  if (n < 41)
    return false;
  if (m->nfields == *fcap) {
    size_t ncap = *fcap ? *fcap * 2 : 32;
    cap_field *nf = realloc(m->fields, ncap * sizeof *nf);

    if (nf == NULL)
      return false;
    m->fields = nf;
    *fcap = ncap;
  }
  f = &m->fields[m->nfields++];
  memset(f, 0, sizeof *f);
  f->off = (unsigned)strtoul(line + 4, NULL, 16);
  f->len = (unsigned)strtoul(line + 10, NULL, 10);
  if (line[15] != ' ')
    sscanf(line + 15, "%63s", f->hex);
  cap_copy(f->desc, sizeof f->desc, line + 40);
  f->desc[strcspn(f->desc, "\n")] = '\0';
  cap_split(f);
  return true;
}

/* "t=+0.000110 s  frame 4  A -> B  CALL FEEDME (prog 300029 vers 6 proc 4)
 *  xid 0x6a009830" or "... REPLY to FEEDME xid 0x6a009830". */
static inline bool cap_title(cap_msg *m, const char *line) {
  const char *p = strstr(line, "frame ");
  const char *kind;

  if (p == NULL ||
      sscanf(p, "frame %u %31s -> %31s", &m->frame, m->src, m->dst) != 3)
    return false;
  if ((kind = strstr(line, "  CALL ")) != NULL) {
    m->is_call = true;
    return sscanf(kind, "  CALL %31s (prog %u vers %u proc %u) xid %x",
                  m->proc_name, &m->prog, &m->vers, &m->proc, &m->xid) == 5;
  }
  if ((kind = strstr(line, "  REPLY to ")) != NULL) {
    m->is_call = false;
    return sscanf(kind, "  REPLY to %31s xid %x", m->proc_name, &m->xid) == 2;
  }
  return false;
}

/**
 * Load dir/session_decoded.txt.
 * @return 0; -1 if the file cannot be opened (errno set); -2 (with the line
 *         number in *bad_line) if a line cannot be understood
 */
static inline int cap_load(const char *dir, capture *cap, unsigned *bad_line) {
  char path[1024];
  char line[1024];
  FILE *fp;
  size_t mcap = 0, bcap = 0, fcap = 0;
  unsigned lineno = 0;
  int conn = -1;
  cap_msg *m = NULL;
  int rc = 0;

  memset(cap, 0, sizeof *cap);
  snprintf(path, sizeof path, "%s/session_decoded.txt", dir);
  fp = fopen(path, "r");
  if (fp == NULL)
    return -1;
  while (rc == 0 && fgets(line, sizeof line, fp) != NULL) {
    lineno++;
    if (strncmp(line, "TCP connection", 14) == 0) {
      conn++;
    } else if (strncmp(line, "t=+", 3) == 0) {
      cap->titles++;
      if (cap->n == mcap) {
        size_t ncap = mcap ? mcap * 2 : 64;
        cap_msg *nm = realloc(cap->msgs, ncap * sizeof *nm);

        if (nm == NULL) {
          rc = -2;
          break;
        }
        cap->msgs = nm;
        mcap = ncap;
      }
      m = &cap->msgs[cap->n++];
      memset(m, 0, sizeof *m);
      m->conn = conn;
      bcap = fcap = 0;
      if (!cap_title(m, line))
        rc = -2;
    } else if (m != NULL && strncmp(line, "    ", 4) == 0 &&
               cap_is_hex4(line + 4) && line[8] == ' ') {
      if (!cap_field_line(m, &fcap, line))
        rc = -2;
    } else if (m != NULL && strncmp(line, "  ", 2) == 0 &&
               cap_is_hex4(line + 2) && strncmp(line + 6, "  ", 2) == 0) {
      if (!cap_hex_line(m, &bcap, line))
        rc = -2;
    }
  }
  fclose(fp);
  if (rc != 0) {
    if (bad_line != NULL)
      *bad_line = lineno;
    cap_free(cap);
  }
  return rc;
}

#endif /* TEST_LDM6_CAPTURE_H */
