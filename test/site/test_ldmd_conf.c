/*
 * test_ldmd_conf.c - ldmd.conf (docs/protocol.md, "ldmd.conf"):
 * every entry and its argument counts, keywords only in column 1 and in any
 * case, quoting, comments, arguments continued over lines, bad lines with
 * their exact "<file>:<line>: ", INCLUDE (nested, relative to the including
 * file, cycles, depth), REQUEST hosts (name, name:port, IPv6 in brackets),
 * LDM's REQUEST reduction and primary/alternate groups; then the access
 * rules: the connect check, the ALLOW reduction and upstream filter
 * (docs/protocol.md, "What ALLOW permits"), and the ACCEPT class of a
 * HIYA ("HIYA: products pushed to us").
 *
 * Each test writes its files into a fresh directory under $PQ_TEST_DIR.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldmd/site/ldmd_conf.h"
#include "test/lib/testutil.h"

#define DIRLEN 1024 /* the scratch directory */
#define PATHLEN 4096
#define ERRLEN 1024

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

/* A scratch directory; the files made in it are removed at teardown. */
typedef struct scratch {
  char dir[DIRLEN];
  char files[64][PATHLEN];
  int nfiles;
  char subdirs[8][PATHLEN];
  int nsubdirs;
} scratch;

static int setup(void **state) {
  scratch *s = calloc(1, sizeof *s);

  if (s == NULL)
    return -1;
  if (tu_scratch_make(s->dir, sizeof s->dir, "ldmd_conf") != 0) {
    free(s);
    return -1;
  }
  *state = s;
  return 0;
}

static int teardown(void **state) {
  scratch *s = *state;
  int i;

  for (i = 0; i < s->nfiles; i++)
    unlink(s->files[i]);
  for (i = s->nsubdirs; i-- > 0;)
    rmdir(s->subdirs[i]);
  rmdir(s->dir);
  free(s);
  return 0;
}

/* Make a subdirectory of the scratch directory; returns its path. */
static const char *mksub(scratch *s, const char *name) {
  char full[PATHLEN];
  char *path = s->subdirs[s->nsubdirs++];

  snprintf(full, sizeof full, "%s/%s", s->dir, name);
  memcpy(path, full, sizeof full);
  assert_int_equal(mkdir(path, 0755), 0);
  return path;
}

/* Write name (relative to the scratch directory) with text; its path. */
static const char *put(scratch *s, const char *name, const char *text) {
  char full[PATHLEN];
  char *path = NULL;
  FILE *f;
  int i;

  snprintf(full, sizeof full, "%s/%s", s->dir, name);
  for (i = 0; i < s->nfiles && path == NULL; i++)
    if (strcmp(s->files[i], full) == 0)
      path = s->files[i];
  if (path == NULL) {
    assert_true(s->nfiles < 64);
    path = s->files[s->nfiles++];
    memcpy(path, full, sizeof full);
  }
  f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  assert_int_equal(fclose(f), 0);
  return path;
}

/* Parse text as <dir>/ldmd.conf; expect success. */
static ldm_conf *parse_ok(scratch *s, const char *text) {
  const char *path = put(s, "ldmd.conf", text);
  char err[ERRLEN];
  ldm_conf *conf = NULL;
  int rc = ldm_conf_parse(path, &conf, err, sizeof err);

  if (rc != LDM_CONF_OK)
    fail_msg("parse failed (%d): %s", rc, err);
  assert_non_null(conf);
  assert_string_equal(err, "");
  return conf;
}

/* Parse text; expect code and a message that begins "<file>:<line>: " and
 * contains want. */
static void parse_bad_in(scratch *s, const char *name, const char *text,
                         int code, unsigned line, const char *want) {
  const char *path = put(s, name, text);
  char err[ERRLEN], prefix[PATHLEN + 32];
  ldm_conf *conf = (ldm_conf *)&conf;
  int rc = ldm_conf_parse(path, &conf, err, sizeof err);

  if (rc != code)
    fail_msg("expected %d, got %d (%s) for:\n%s", code, rc, err, text);
  assert_null(conf);
  snprintf(prefix, sizeof prefix, "%s:%u: ", path, line);
  if (strncmp(err, prefix, strlen(prefix)) != 0)
    fail_msg("expected \"%s...\", got \"%s\"", prefix, err);
  if (want != NULL && strstr(err, want) == NULL)
    fail_msg("expected \"%s\" in \"%s\"", want, err);
}

static void parse_bad(scratch *s, const char *text, unsigned line,
                      const char *want) {
  parse_bad_in(s, "ldmd.conf", text, LDM_CONF_ESYNTAX, line, want);
}

/* Is there a warning containing text? */
static bool has_warning(const ldm_conf *conf, const char *text) {
  size_t i;

  for (i = 0; i < conf->nwarnings; i++)
    if (strstr(conf->warnings[i], text) != NULL)
      return true;
  return false;
}

static pq_class *new_class(pq_timestamp from, pq_timestamp to) {
  pq_class *cls = malloc(sizeof *cls);

  assert_non_null(cls);
  pq_class_init(cls, from, to);
  return cls;
}

static void add_spec(pq_class *cls, uint32_t ft, const char *pattern) {
  assert_int_equal(pq_class_add(cls, ft, pattern, NULL, 0), 0);
}

static void free_class(pq_class *cls) {
  pq_class_free(cls);
  free(cls);
}

static const pq_timestamp FROM = {1700000000, 0};

/* The access rules of one configuration put to work: the class asked for
 * (or offered), from FROM; the class given; the filter; the message. */
typedef struct rules {
  ldm_conf *conf;
  pq_class *want, *got;
  ldm_conf_filter filter;
  char err[ERRLEN];
} rules;

/* The filter and the message start as garbage: the calls must set them. */
static void rules_begin(rules *r, ldm_conf *conf) {
  r->conf = conf;
  r->want = new_class(FROM, PQ_TS_ENDT);
  r->got = new_class(PQ_TS_ZERO, PQ_TS_ZERO);
  memset(&r->filter, 0xa5, sizeof r->filter);
  memset(r->err, 'x', sizeof r->err - 1);
  r->err[sizeof r->err - 1] = '\0';
}

/* An empty class asked for again. */
static void want_again(rules *r) {
  pq_class_free(r->want);
  pq_class_init(r->want, FROM, PQ_TS_ENDT);
}

static int allowed(rules *r, const char *name, const char *addr) {
  return ldm_conf_allowed_class(r->conf, name, addr, r->want, r->got,
                                &r->filter, r->err, sizeof r->err);
}

static int accepted(rules *r, const char *name, const char *addr) {
  return ldm_conf_accepted_class(r->conf, name, addr, r->want, r->got, r->err,
                                 sizeof r->err);
}

static void rules_end(rules *r) {
  free_class(r->got);
  free_class(r->want);
  ldm_conf_free(r->conf);
}

/* ---------------------------------------------------------------------- */
/* Lexical rules                                                          */
/* ---------------------------------------------------------------------- */

static void test_empty(void **state) {
  ldm_conf *conf = parse_ok(*state, "");

  assert_true(ldm_conf_is_empty(conf));
  assert_false(ldm_conf_needs_listener(conf));
  assert_int_equal(conf->nfiles, 1);
  ldm_conf_free(conf);

  conf = parse_ok(*state, "# only a comment\n\n   \t\f\n");
  assert_true(ldm_conf_is_empty(conf));
  ldm_conf_free(conf);
  ldm_conf_free(NULL);
}

static void test_sample(void **state) {
  scratch *s = *state;
  ldm_conf *conf = parse_ok(
      s, "# A typical ldmd.conf\n"
         "EXEC\t\"pqact\"\n"
         "EXEC\t\"rtstats -h rtstats.unidata.ucar.edu\"\n"
         "REQUEST\tIDS|DDPLUS\t\".*\"\tidd.unidata.ucar.edu\n"
         "REQUEST\tNEXRAD3\t\"^SDUS5\"\tidd.example.edu:38801\n"
         "ALLOW\tANY\t^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))$\n"
         "ALLOW\tWMO\t\\.edu$\t^S\t^SAUS\n"
         "ACCEPT\tANY\t.*\t^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))$\n");

  assert_false(ldm_conf_is_empty(conf));
  assert_true(ldm_conf_needs_listener(conf));
  assert_int_equal(conf->nexecs, 2);
  assert_string_equal(conf->execs[0].command, "pqact");
  assert_int_equal(conf->execs[0].argc, 1);
  assert_string_equal(conf->execs[0].argv[0], "pqact");
  assert_null(conf->execs[0].argv[1]);
  assert_int_equal(conf->execs[1].argc, 3);
  assert_string_equal(conf->execs[1].argv[1], "-h");
  assert_string_equal(conf->execs[1].argv[2], "rtstats.unidata.ucar.edu");
  assert_int_equal(conf->execs[1].where.line, 3);

  assert_int_equal(conf->nrequests, 2);
  assert_int_equal(conf->nrequest_entries, 2);
  assert_int_equal(conf->requests[0].feedtype, 0x0b);
  assert_int_equal(conf->requests[0].written, 0x0b);
  assert_string_equal(conf->requests[0].pattern, ".*");
  assert_string_equal(conf->requests[0].host, "idd.unidata.ucar.edu");
  assert_int_equal(conf->requests[0].port, 388);
  assert_false(conf->requests[0].port_given);
  assert_false(conf->requests[0].ipv6);
  assert_int_equal(conf->requests[0].word, LDM_CONF_WORD_NONE);
  assert_true(conf->requests[0].primary);
  assert_int_equal(conf->requests[0].group_size, 1);
  assert_int_equal(conf->requests[0].where.line, 4);
  assert_string_equal(conf->requests[0].where.file, conf->files[0]);
  assert_int_equal(conf->requests[1].feedtype, PQ_FT_NEXRAD3);
  assert_string_equal(conf->requests[1].host, "idd.example.edu");
  assert_int_equal(conf->requests[1].port, 38801);
  assert_true(conf->requests[1].port_given);

  assert_int_equal(conf->nallows, 2);
  assert_int_equal(conf->allows[0].feedtype, PQ_FT_ANY);
  assert_string_equal(conf->allows[0].host_ere,
                      "^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))$");
  assert_true(conf->allows[0].ok_all);
  assert_string_equal(conf->allows[0].ok_ere, ".*");
  assert_null(conf->allows[0].not_ere);
  assert_int_equal(conf->allows[1].feedtype, PQ_FT_WMO);
  assert_false(conf->allows[1].ok_all);
  assert_string_equal(conf->allows[1].ok_ere, "^S");
  assert_string_equal(conf->allows[1].not_ere, "^SAUS");
  assert_int_equal(conf->allows[1].where.line, 7);

  assert_int_equal(conf->naccepts, 1);
  assert_int_equal(conf->accepts[0].feedtype, PQ_FT_ANY);
  assert_string_equal(conf->accepts[0].pattern, ".*");
  assert_int_equal(conf->accepts[0].where.line, 8);
  assert_int_equal(conf->nwarnings, 0);
  ldm_conf_free(conf);
}

static void test_keyword_case(void **state) {
  ldm_conf *conf = parse_ok(*state, "allow ANY ^a$\n"
                                    "Allow ANY ^b$\n"
                                    "aLlOw ANY ^c$\n"
                                    "request ANY .* h1\n"
                                    "POLL ANY .* h2\n"
                                    "poll ANY .* h3\n"
                                    "exec \"x\"\n"
                                    "accept ANY .* ^d$\n");

  assert_int_equal(conf->nallows, 3);
  assert_int_equal(conf->nrequests, 3);
  assert_string_equal(conf->requests[1].host, "h2");
  assert_int_equal(conf->nexecs, 1);
  assert_int_equal(conf->naccepts, 1);
  ldm_conf_free(conf);

  /* POLL is a keyword only as POLL or poll. */
  parse_bad(*state, "Poll ANY .* h2\n", 1, "expected an entry");
}

static void test_keyword_column1(void **state) {
  /* An indented keyword is a string: first in the file, it is an error. */
  parse_bad(*state, "  ALLOW ANY ^a$\n", 1,
            "found \"ALLOW\" (keywords must start in column 1)");
  parse_bad(*state, "\tEXEC \"pqact\"\n", 1, "column 1");
  /* After an entry, it is one argument too many, at its own line. */
  parse_bad(*state,
            "ALLOW ANY ^a$ .* ^x\n"
            "\tREQUEST ANY .* host\n",
            2, "unexpected \"REQUEST\" after a complete ALLOW entry");
  /* A longer word is not a keyword. */
  parse_bad(*state, "EXECUTE \"pqact\"\n", 1, "found \"EXECUTE\"");
  parse_bad(*state, "ALLOWED ANY ^a$\n", 1, "ALLOWED");
  /* A quoted keyword is a string. */
  parse_bad(*state, "\"EXEC\" \"pqact\"\n", 1, "found \"EXEC\"");
}

static void test_indented_keyword_warning(void **state) {
  /* Legal (ALLOW takes 4 arguments) but surely a mistake: warned. */
  ldm_conf *conf = parse_ok(*state, "ALLOW ANY ^a$\n"
                                    "   EXEC pqact\n");

  assert_int_equal(conf->nallows, 1);
  assert_int_equal(conf->nexecs, 0);
  assert_string_equal(conf->allows[0].ok_ere, "EXEC");
  assert_string_equal(conf->allows[0].not_ere, "pqact");
  assert_true(has_warning(conf, "ldmd.conf:2: \"EXEC\" is taken as an "
                                "argument, not a keyword"));
  ldm_conf_free(conf);
}

static void test_continuation(void **state) {
  /* Newlines are white space: arguments may follow on indented lines. */
  ldm_conf *conf = parse_ok(*state, "REQUEST\tWMO\n"
                                    "\t\".*\"\n"
                                    "\n"
                                    "        upstream.edu\n"
                                    "ALLOW\n"
                                    "  ANY\n"
                                    "  ^x$\n"
                                    "EXEC \"pqact\"\n");

  assert_int_equal(conf->nrequests, 1);
  assert_string_equal(conf->requests[0].host, "upstream.edu");
  assert_int_equal(conf->requests[0].where.line, 1);
  assert_int_equal(conf->nallows, 1);
  assert_int_equal(conf->allows[0].where.line, 5);
  assert_int_equal(conf->nexecs, 1);
  assert_int_equal(conf->execs[0].where.line, 8);
  ldm_conf_free(conf);
}

static void test_whitespace(void **state) {
  /* Spaces, tabs and form feeds separate arguments, in any mixture. */
  ldm_conf *conf = parse_ok(*state, "ALLOW \t\f ANY\f\f^a$ \t  ^b  \t\n"
                                    "ACCEPT\tWMO\t\t\t.*\t\t^c$\t\n");

  assert_int_equal(conf->nallows, 1);
  assert_string_equal(conf->allows[0].host_ere, "^a$");
  assert_string_equal(conf->allows[0].ok_ere, "^b");
  assert_int_equal(conf->naccepts, 1);
  assert_string_equal(conf->accepts[0].host_ere, "^c$");
  ldm_conf_free(conf);
}

static void test_comments(void **state) {
  ldm_conf *conf = parse_ok(*state, "# comment\n"
                                    "#ALLOW ANY ^commented$\n"
                                    "ALLOW ANY ^a$ # trailing comment\n"
                                    "ALLOW ANY ^b#c$\n"
                                    "ALLOW ANY \"^d #e\"#comment\n"
                                    "    # indented comment\n"
                                    "EXEC \"pqact\"# comment\n");

  assert_int_equal(conf->nallows, 3);
  assert_string_equal(conf->allows[0].host_ere, "^a$");
  assert_true(conf->allows[0].ok_all);
  /* '#' inside a string is part of it. */
  assert_string_equal(conf->allows[1].host_ere, "^b#c$");
  assert_string_equal(conf->allows[2].host_ere, "^d #e");
  assert_int_equal(conf->nexecs, 1);
  assert_int_equal(conf->execs[0].where.line, 7);
  ldm_conf_free(conf);
}

static void test_quoting(void **state) {
  scratch *s = *state;
  ldm_conf *conf =
      parse_ok(s, "EXEC \"prog -a 'x y'\"\n"
                  "ALLOW ANY \"^a b$\" \"say \\\"hi\\\"\" \"back\\\\slash\"\n"
                  "ALLOW ANY ^q\\\"uote$\n"
                  "ACCEPT ANY \"two\n"
                  "lines\" ^h$\n"
                  "ALLOW ANY \"\\x\"\n"
                  "ALLOW\"WMO\"\"^adjacent$\"\n");

  assert_int_equal(conf->nexecs, 1);
  assert_int_equal(conf->execs[0].argc, 3);
  assert_string_equal(conf->execs[0].argv[2], "x y");
  assert_int_equal(conf->nallows, 4);
  assert_string_equal(conf->allows[0].host_ere, "^a b$");
  /* In quotes a backslash makes the next character literal. */
  assert_string_equal(conf->allows[0].ok_ere, "say \"hi\"");
  assert_string_equal(conf->allows[0].not_ere, "back\\slash");
  /* Unquoted, \" is kept as the two characters. */
  assert_string_equal(conf->allows[1].host_ere, "^q\\\"uote$");
  /* A quoted newline is part of the string, and counts as a line. */
  assert_int_equal(conf->accepts[0].where.line, 4);
  assert_string_equal(conf->accepts[0].pattern, "two\nlines");
  assert_int_equal(conf->allows[2].where.line, 6);
  assert_string_equal(conf->allows[2].host_ere, "x");
  /* A keyword directly followed by a quote is still a keyword. */
  assert_int_equal(conf->allows[3].feedtype, PQ_FT_WMO);
  assert_string_equal(conf->allows[3].host_ere, "^adjacent$");
  assert_int_equal(conf->allows[3].where.line, 7);
  ldm_conf_free(conf);

  parse_bad(s, "ALLOW ANY ^a$\nEXEC \"pqact\n\n", 2,
            "quoted string never ends");
  parse_bad(s, "EXEC \"pqact\\\"\n", 1, "never ends");
  /* A newline in a command is a shell metacharacter to wordexp(). */
  parse_bad(s, "EXEC \"two\nlines\"\n", 1, "needs quoting");
}

/* "<head><n times c><tail>" in a new buffer. */
static char *repeat(const char *head, char c, size_t n, const char *tail) {
  size_t h = strlen(head), t = strlen(tail);
  char *text = malloc(h + n + t + 1);

  assert_non_null(text);
  memcpy(text, head, h);
  memset(text + h, c, n);
  memcpy(text + h + n, tail, t + 1);
  return text;
}

static void test_token_length(void **state) {
  scratch *s = *state;
  char *text;
  ldm_conf *conf;

  /* 1999 characters are fine, quoted or not. */
  text = repeat("EXEC \"", 'x', LDM_CONF_MAX_TOKEN, "\"\n");
  conf = parse_ok(s, text);
  assert_int_equal(strlen(conf->execs[0].command), LDM_CONF_MAX_TOKEN);
  ldm_conf_free(conf);
  free(text);
  text = repeat("ALLOW ANY ^", 'h', LDM_CONF_MAX_TOKEN - 1, "\n");
  conf = parse_ok(s, text);
  assert_int_equal(strlen(conf->allows[0].host_ere), LDM_CONF_MAX_TOKEN);
  ldm_conf_free(conf);
  free(text);

  /* 2000 are not. */
  text = repeat("\nEXEC \"", 'x', LDM_CONF_MAX_TOKEN + 1, "\"\n");
  parse_bad(s, text, 2, "quoted string longer than 1999 characters");
  free(text);
  text = repeat("ALLOW ANY\n\n", 'h', LDM_CONF_MAX_TOKEN + 1, "\n");
  parse_bad(s, text, 3, "string longer than 1999 characters");
  free(text);
}

static void test_dos_and_nul(void **state) {
  scratch *s = *state;
  const char *path;
  char err[ERRLEN];
  ldm_conf *conf;

  /* A carriage return is not white space (LDM): the message says why. */
  parse_bad(s, "EXEC \"pqact\"\r\nALLOW ANY ^a$\r\n", 1,
            "\"\\r\" after a complete EXEC entry (a carriage return");
  path = put(s, "nul.conf", "ALLOW ANY ^a$\n\nEXEC \"x\0y\"\n");
  /* put() wrote up to the NUL only: write the bytes by hand. */
  {
    FILE *f = fopen(path, "w");
    static const char text[] = "ALLOW ANY ^a$\n\nEXEC \"x\0y\"\n";

    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
    fclose(f);
  }
  assert_int_equal(ldm_conf_parse(path, &conf, err, sizeof err),
                   LDM_CONF_ESYNTAX);
  assert_non_null(strstr(err, "nul.conf:3: NUL character"));
}

static void test_missing_file(void **state) {
  scratch *s = *state;
  char path[PATHLEN + 16], err[ERRLEN], want[PATHLEN + 64];
  ldm_conf *conf = (ldm_conf *)&conf;

  snprintf(path, sizeof path, "%s/nonesuch.conf", s->dir);
  assert_int_equal(ldm_conf_parse(path, &conf, err, sizeof err), LDM_CONF_EIO);
  assert_null(conf);
  snprintf(want, sizeof want, "cannot read %s: %s", path, strerror(ENOENT));
  assert_string_equal(err, want);
  /* A directory is not a configuration file. */
  assert_int_equal(ldm_conf_parse(s->dir, &conf, err, sizeof err),
                   LDM_CONF_EIO);
  assert_non_null(strstr(err, "not a regular file"));
  /* Bad arguments; a NULL or short error buffer is fine. */
  assert_int_equal(ldm_conf_parse(NULL, &conf, NULL, 0), LDM_CONF_EINVAL);
  assert_int_equal(ldm_conf_parse(path, NULL, err, 1), LDM_CONF_EINVAL);
  assert_string_equal(err, "");
  assert_int_equal(ldm_conf_parse(path, &conf, err, 8), LDM_CONF_EIO);
  assert_int_equal(strlen(err), 7);
}

/* ---------------------------------------------------------------------- */
/* Entries                                                                */
/* ---------------------------------------------------------------------- */

static void test_allow(void **state) {
  scratch *s = *state;
  ldm_conf *conf = parse_ok(s, "ALLOW WMO|NEXRAD3 ^a\\.edu$\n"
                               "ALLOW ANY-EXP ^b$ ^SA\n"
                               "ALLOW ~WMO ^c$ .* ^X\n"
                               "ALLOW conduit+nexrad2 .*\\.edu$ .*SA.* ^\n");

  assert_int_equal(conf->nallows, 4);
  assert_int_equal(conf->allows[0].feedtype, 0x0800000f);
  assert_true(conf->allows[0].ok_all);
  assert_int_equal(conf->allows[1].feedtype, 0xbfffffff);
  assert_string_equal(conf->allows[1].ok_ere, "^SA");
  assert_null(conf->allows[1].not_ere);
  assert_int_equal(conf->allows[2].feedtype, 0xfffffff0);
  assert_true(conf->allows[2].ok_all);
  assert_string_equal(conf->allows[2].not_ere, "^X");
  /* LDM strips leading ".*" from longer EREs, and says so. */
  assert_int_equal(conf->allows[3].feedtype, 0x10001000);
  assert_string_equal(conf->allows[3].host_ere, "\\.edu$");
  assert_string_equal(conf->allows[3].ok_ere, "SA.*");
  assert_true(has_warning(conf, "ldmd.conf:4: host ERE \".*\\.edu$\" begins "
                                "with \".*\": using \"\\.edu$\""));
  assert_true(has_warning(conf, "OK ERE \".*SA.*\""));
  ldm_conf_free(conf);

  parse_bad(s, "ALLOW ANY\n", 1, "ALLOW needs 2 to 4 arguments");
  parse_bad(s, "\nALLOW\n", 2, "not 0");
  parse_bad(s, "ALLOW ANY ^a$ b c\n  d\n", 2, "unexpected \"d\"");
  parse_bad(s, "ALLOW FOO ^a$\n", 1, "bad feedset \"FOO\"");
  parse_bad(s, "ALLOW ANY\n ^a$\nALLOW WMO|\n ^b$\n", 3,
            "bad feedset \"WMO|\"");
  parse_bad(s, "ALLOW 3 ^a$\n", 1, "bad feedset \"3\"");
  /* Long strings are cut in messages. */
  parse_bad(s,
            "ALLOW WMO_____________________________________________________"
            "________________________________________________TAIL ^a$\n",
            1, "____...\": ");
  parse_bad(s, "ALLOW ANY \"\"\n", 1, "empty host ERE");
  parse_bad(s, "ALLOW ANY ^(a$\n", 1, "bad host ERE \"^(a$\"");
  parse_bad(s, "ALLOW ANY ^a$\n  [b\n", 2, "bad OK ERE \"[b\"");
  parse_bad(s, "ALLOW ANY ^a$ ^b\n\n   a{2,1}\n", 3, "bad NOT ERE");
}

static void test_ere_complexity(void **state) {
  scratch *s = *state;
  /* Patterns real files use compile. */
  ldm_conf *conf =
      parse_ok(s, "ALLOW ANY ^[A-Z]{4}[0-9]{2}.KWBC .{1,255} (a+|b*)?c+\n"
                  "ALLOW ANY ^[]a[:alpha:][.-.][=e=]]{2,}$ ((((x{9}){9}){9}))\n"
                  "ACCEPT ANY \"^(SA|SP)[A-Z]{2}[0-9]{2}\" [{](a){0}b\\{\n");

  assert_int_equal(conf->nallows, 2);
  assert_int_equal(conf->naccepts, 1);
  ldm_conf_free(conf);
  /* glibc's regcomp would build an exponential tree for these. */
  parse_bad(s, "ALLOW ANY ^a$ \"a++++++++++++++++++++++++++++++\"\n", 1,
            "too complex");
  parse_bad(s,
            "ALLOW ANY ^a$ .* ((((((((((((((((((((a+)+)+)+)+)+)+)+)+)+)"
            "+)+)+)+)+)+)+)+)+)+)+\n",
            1, "bad NOT ERE");
  parse_bad(s, "\nREQUEST ANY (((a{100}){100}){100}) host\n", 2,
            "bad product ERE \"(((a{100}){100}){100})\": too complex");
  parse_bad(s, "ALLOW ANY x{32767}{32767}\n", 1, "bad host ERE");
  /* Not intervals, and brackets with "]", classes and "^". */
  conf = parse_ok(s, "ALLOW ANY a{,5} [^]{}]{2}[[=a=][:digit:]]\n");
  ldm_conf_free(conf);
  parse_bad(s, "ALLOW ANY a{x}\n", 1, "bad host ERE \"a{x}\": Invalid");
  parse_bad(s, "ALLOW ANY a{1,2,3}\n", 1, "bad host ERE");
  parse_bad(s, "ALLOW ANY ^a$ [[:alpha\n", 1, "bad OK ERE");
  /* Open groups count, though the ")" never comes. */
  parse_bad(s, "ALLOW ANY x{20000}(x{20000}\n", 1, "too complex");
}

static void test_accept(void **state) {
  scratch *s = *state;
  ldm_conf *conf = parse_ok(s, "ACCEPT EXP ^TEST ^(pusher)\\.edu$\n"
                               "ACCEPT ANY .*FOO .*\n");

  assert_int_equal(conf->naccepts, 2);
  assert_int_equal(conf->accepts[0].feedtype, PQ_FT_EXP);
  assert_string_equal(conf->accepts[0].pattern, "^TEST");
  assert_string_equal(conf->accepts[0].host_ere, "^(pusher)\\.edu$");
  /* The pattern is kept as written: it goes back in RECLASS. */
  assert_string_equal(conf->accepts[1].pattern, ".*FOO");
  assert_string_equal(conf->accepts[1].host_ere, ".*");
  assert_true(ldm_conf_needs_listener(conf));
  ldm_conf_free(conf);

  parse_bad(s, "ACCEPT ANY .*\n", 1, "ACCEPT needs 3 arguments");
  parse_bad(s, "ACCEPT ANY .* ^a$ ^b\n", 1, "after a complete ACCEPT entry");
  parse_bad(s, "ACCEPT ANY \"\" ^a$\n", 1, "empty product ERE");
  parse_bad(s, "ACCEPT ANY ^a( ^a$\n", 1, "bad product ERE");
  parse_bad(s, "ACCEPT ANY ^a \"\"\n", 1, "empty host ERE");
}

static void test_exec(void **state) {
  scratch *s = *state;
  ldm_conf *conf;

  setenv("LDM_CONF_TEST_VAR", "expanded", 1);
  conf = parse_ok(s, "EXEC \"pqact -f ANY etc/pqact.conf\"\n"
                     "EXEC 'single'\n"
                     "EXEC \"prog $LDM_CONF_TEST_VAR 'a b' \\\"c d\\\"\"\n");
  assert_int_equal(conf->nexecs, 3);
  assert_int_equal(conf->execs[0].argc, 4);
  assert_string_equal(conf->execs[0].argv[3], "etc/pqact.conf");
  /* Unquoted, the quotes are the shell's. */
  assert_string_equal(conf->execs[1].command, "'single'");
  assert_string_equal(conf->execs[1].argv[0], "single");
  assert_int_equal(conf->execs[2].argc, 4);
  assert_string_equal(conf->execs[2].argv[1], "expanded");
  assert_string_equal(conf->execs[2].argv[2], "a b");
  assert_string_equal(conf->execs[2].argv[3], "c d");
  assert_false(ldm_conf_needs_listener(conf));
  assert_false(ldm_conf_is_empty(conf));
  ldm_conf_free(conf);
  unsetenv("LDM_CONF_TEST_VAR");

  parse_bad(s, "EXEC\n", 1, "EXEC needs 1 arguments");
  parse_bad(s, "EXEC pqact -v\n", 1, "unexpected \"-v\"");
  parse_bad(s, "EXEC \"\"\n", 1, "empty EXEC command");
  parse_bad(s, "EXEC \"   \"\n", 1, "empty EXEC command");
  parse_bad(s, "EXEC \"prog $(id)\"\n", 1, "command substitution");
  parse_bad(s, "EXEC \"prog `id`\"\n", 1, "command substitution");
  parse_bad(s, "EXEC \"a | b\"\n", 1, "needs quoting");
  parse_bad(s, "EXEC \"a 'b\"\n", 1, "unbalanced quote");
}

static void test_request_hosts(void **state) {
  scratch *s = *state;
  ldm_conf *conf = parse_ok(s, "REQUEST ANY ^a host.edu\n"
                               "REQUEST ANY ^b host.edu:38800\n"
                               "REQUEST ANY ^c 192.168.1.2:0x184\n"
                               "REQUEST ANY ^d [::1]\n"
                               "REQUEST ANY ^e [::1]:38801\n"
                               "REQUEST ANY ^f [2001:db8::10]:0x1000\n"
                               "REQUEST ANY ^g [fe80::1%eth0]:388\n"
                               "REQUEST ANY ^h host.edu:\n"
                               "REQUEST ANY ^i [::ffff:10.0.0.1]\n");
  const ldm_conf_request *r = conf->requests;

  assert_int_equal(conf->nrequests, 9);
  assert_string_equal(r[0].host, "host.edu");
  assert_int_equal(r[0].port, 388);
  assert_int_equal(r[1].port, 38800);
  assert_true(r[1].port_given);
  assert_string_equal(r[2].host, "192.168.1.2");
  assert_int_equal(r[2].port, 388);
  assert_true(r[2].port_given);
  assert_false(r[2].ipv6);
  assert_string_equal(r[3].host, "::1");
  assert_true(r[3].ipv6);
  assert_int_equal(r[3].port, 388);
  assert_false(r[3].port_given);
  assert_string_equal(r[4].host, "::1");
  assert_int_equal(r[4].port, 38801);
  assert_string_equal(r[5].host, "2001:db8::10");
  assert_int_equal(r[5].port, 4096);
  assert_string_equal(r[6].host, "fe80::1%eth0");
  /* An empty port is the default port, as LDM's strtok split has it. */
  assert_string_equal(r[7].host, "host.edu");
  assert_int_equal(r[7].port, 388);
  assert_false(r[7].port_given);
  assert_string_equal(r[8].host, "::ffff:10.0.0.1");
  ldm_conf_free(conf);

  parse_bad(s, "REQUEST ANY .* host:0\n", 1, "bad port \"0\"");
  parse_bad(s, "REQUEST ANY .* host:65536\n", 1, "not 1-65535");
  parse_bad(s, "REQUEST ANY .* host:38x\n", 1, "bad port \"38x\"");
  parse_bad(s, "REQUEST ANY .* host:0388\n", 1, "bad port");
  parse_bad(s, "REQUEST ANY .* :388\n", 1, "no host name");
  parse_bad(s, "REQUEST ANY .* 2001:db8::1\n", 1,
            "write an IPv6 address in brackets");
  parse_bad(s, "REQUEST ANY .* host:388:1\n", 1, "more than one \":\"");
  parse_bad(s, "REQUEST ANY .* [::1\n", 1, "no \"]\"");
  parse_bad(s, "REQUEST ANY .* [::1]388\n", 1, "only \":port\" may follow");
  parse_bad(s, "REQUEST ANY .* [host.edu]:388\n", 1, "not an IPv6 address");
  parse_bad(s, "REQUEST ANY .* []\n", 1, "not an IPv6 address");
  parse_bad(s, "REQUEST ANY .* [fe80::1%]\n", 1, "not an IPv6 address");
  parse_bad(s, "REQUEST ANY .* [::1]:0\n", 1, "bad port");
  parse_bad(s, "REQUEST ANY .* \"\"\n", 1, "no host name");
}

static void test_request_entry(void **state) {
  scratch *s = *state;
  char err[ERRLEN];
  ldm_conf_options opts = {.default_port = 3388};
  const char *path;
  ldm_conf *conf = parse_ok(s, "REQUEST WMO ^a h1 PRIMARY\n"
                               "REQUEST WMO ^b h1 alternate\n"
                               "REQUEST WMO ^c h1 sometimes\n");

  assert_int_equal(conf->requests[0].word, LDM_CONF_WORD_PRIMARY);
  assert_int_equal(conf->requests[1].word, LDM_CONF_WORD_ALTERNATE);
  assert_int_equal(conf->requests[2].word, LDM_CONF_WORD_OTHER);
  assert_true(has_warning(conf, "ldmd.conf:3: REQUEST field \"sometimes\" "
                                "ignored"));
  /* The word does not set the mode: each is alone in its group. */
  assert_true(conf->requests[1].primary);
  ldm_conf_free(conf);

  /* The default port can be the server's -P port. */
  path = put(s, "port.conf", "REQUEST ANY .* h\nREQUEST ANY .* h:5\n");
  assert_int_equal(ldm_conf_parse_opts(path, &opts, &conf, err, sizeof err),
                   LDM_CONF_OK);
  assert_int_equal(conf->default_port, 3388);
  assert_int_equal(conf->requests[0].port, 3388);
  assert_int_equal(conf->requests[1].port, 5);
  ldm_conf_free(conf);

  parse_bad(s, "REQUEST ANY .*\n", 1, "REQUEST needs 3 or 4 arguments");
  parse_bad(s, "REQUEST ANY .* h PRIMARY x\n", 1, "unexpected \"x\"");
  parse_bad(s, "REQUEST NOSUCH .* h\n", 1, "bad feedset");
  parse_bad(s, "REQUEST ANY \"\" h\n", 1, "empty product ERE");
  parse_bad(s, "REQUEST ANY (( h\n", 1, "bad product ERE \"((\"");
  {
    char text[400];

    strcpy(text, "REQUEST ANY ");
    memset(text + 12, 'a', PQ_PATTERN_MAX + 1);
    strcpy(text + 12 + PQ_PATTERN_MAX + 1, " h\n");
    parse_bad(s, text, 1, "product ERE longer than 255 characters");
  }
}

static void test_request_reduction(void **state) {
  /* LDM: a REQUEST to the same host string and port with the same ERE as
   * earlier ones loses their feedtypes (section 6.2). */
  ldm_conf *conf = parse_ok(*state, "REQUEST WMO .* up.edu\n"
                                    "REQUEST WMO|NEXRAD3 .* up.edu:388\n"
                                    "REQUEST IDS .* up.edu\n"
                                    "REQUEST WMO ^SA up.edu\n"
                                    "REQUEST WMO .* up.edu:389\n"
                                    "REQUEST WMO .* UP.edu\n"
                                    "REQUEST NONE .* other.edu\n"
                                    "REQUEST ANY .* up.edu\n");
  const ldm_conf_request *r = conf->requests;

  assert_int_equal(conf->nrequest_entries, 8);
  assert_int_equal(conf->nrequests, 6);
  assert_int_equal(r[0].feedtype, PQ_FT_WMO);
  /* Explicit 388 is the same server as the default port. */
  assert_int_equal(r[1].feedtype, PQ_FT_NEXRAD3);
  assert_int_equal(r[1].written, PQ_FT_WMO | PQ_FT_NEXRAD3);
  assert_true(has_warning(conf, "ldmd.conf:2: REQUEST (NEXRAD3|WMO, \".*\") "
                                "to up.edu:388 reduced to NEXRAD3"));
  /* IDS is inside WMO: nothing left. */
  assert_true(has_warning(conf, "ldmd.conf:3: REQUEST (IDS, \".*\") to "
                                "up.edu:388 ignored"));
  /* Another ERE, another port, another host string: no reduction. */
  assert_string_equal(r[2].pattern, "^SA");
  assert_int_equal(r[2].feedtype, PQ_FT_WMO);
  assert_int_equal(r[3].port, 389);
  assert_int_equal(r[3].feedtype, PQ_FT_WMO);
  assert_string_equal(r[4].host, "UP.edu");
  assert_int_equal(r[4].feedtype, PQ_FT_WMO);
  /* NONE asks for nothing. */
  assert_true(has_warning(conf, "ldmd.conf:7: REQUEST (NONE"));
  /* ANY loses WMO and NEXRAD3. */
  assert_int_equal(r[5].feedtype, PQ_FT_ANY & ~(PQ_FT_WMO | PQ_FT_NEXRAD3));
  assert_int_equal(r[5].where.line, 8);
  assert_false(ldm_conf_is_empty(conf));
  ldm_conf_free(conf);

  /* Only dropped REQUESTs: still not "effectively empty" (LDM). */
  conf = parse_ok(*state, "REQUEST NONE .* h\n");
  assert_int_equal(conf->nrequests, 0);
  assert_false(ldm_conf_is_empty(conf));
  ldm_conf_free(conf);
}

static void test_request_groups(void **state) {
  /* Section 4.7: same (feedtype, ERE), first one primary. */
  ldm_conf *conf = parse_ok(*state, "REQUEST NEXRAD2 .* a.edu\n"
                                    "REQUEST CONDUIT .* a.edu\n"
                                    "REQUEST NEXRAD2 .* b.edu\n"
                                    "REQUEST NEXRAD2 ^L2 c.edu\n"
                                    "REQUEST NEXRAD2 .* [::1]:3\n"
                                    "REQUEST CONDUIT .* b.edu PRIMARY\n");
  const ldm_conf_request *r = conf->requests;

  assert_int_equal(conf->nrequests, 6);
  assert_true(r[0].primary);
  assert_true(r[1].primary);
  assert_false(r[2].primary);
  assert_true(r[3].primary);
  assert_false(r[4].primary);
  assert_false(r[5].primary);
  assert_int_equal(r[0].group, 0);
  assert_int_equal(r[1].group, 1);
  assert_int_equal(r[2].group, 0);
  assert_int_equal(r[3].group, 2);
  assert_int_equal(r[4].group, 0);
  assert_int_equal(r[5].group, 1);
  assert_int_equal(r[0].group_size, 3);
  assert_int_equal(r[2].group_size, 3);
  assert_int_equal(r[4].group_size, 3);
  assert_int_equal(r[1].group_size, 2);
  assert_int_equal(r[3].group_size, 1);
  assert_true(has_warning(conf, "ldmd.conf:1: 3 REQUESTs ask for (NEXRAD2"));
  ldm_conf_free(conf);
}

static void test_receive_multicast(void **state) {
  scratch *s = *state;
  ldm_conf *conf = parse_ok(s, "RECEIVE NEXRAD2 up.edu\n"
                               "RECEIVE NEXRAD2 up.edu:388 eth0.1 sw p\n"
                               "RECEIVE ANY up.edu eth0.1 sw p 12\n"
                               "MULTICAST ANY 224.0.0.1:38800\n"
                               "multicast ANY g 1 2 3 4 5 6\n");

  assert_int_equal(conf->nignored, 5);
  assert_true(ldm_conf_is_empty(conf));
  assert_true(has_warning(conf, "ldmd.conf:1: RECEIVE entry ignored"));
  assert_true(has_warning(conf, "ldmd.conf:5: MULTICAST entry ignored"));
  ldm_conf_free(conf);

  parse_bad(s, "RECEIVE ANY up.edu eth0\n", 1, "RECEIVE needs 2, 5 or 6");
  parse_bad(s, "RECEIVE ANY a b c d e f\n", 1, "unexpected \"f\"");
  parse_bad(s, "MULTICAST ANY\n", 1, "MULTICAST needs 2 to 9");
}

static void test_bad_lines(void **state) {
  /* Each bad line is reported at its own line, whatever comes before. */
  static const struct {
    const char *text;
    unsigned line;
    const char *want;
  } cases[] = {
      {"stray\n", 1, "expected an entry"},
      {"# c\n\n\"quoted\"\n", 3, "found \"quoted\""},
      {"ALLOW ANY ^a$\n# c\n\nEXEC\n\nALLOW ANY ^b$\n", 4, "EXEC needs 1"},
      {"ALLOW ANY ^a$\n\n\nINCLUDE\n", 4, "INCLUDE needs 1"},
      {"INCLUDE a b\n", 1, "unexpected \"b\""},
      {"EXEC \"x\"\n\"y\"\n", 2, "unexpected \"y\" after a complete EXEC"},
      {"REQUEST WMO\n  .*\n  h\n  PRIMARY\n  extra\n", 5, "unexpected"},
      {"ALLOW ANY \"^a\n\nb$\" (\n", 3, "bad OK ERE \"(\""},
  };
  size_t i;

  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    parse_bad(*state, cases[i].text, cases[i].line, cases[i].want);
}

/* ---------------------------------------------------------------------- */
/* INCLUDE                                                                */
/* ---------------------------------------------------------------------- */

static void test_include(void **state) {
  scratch *s = *state;
  char err[ERRLEN], abs[PATHLEN + 64], text[2 * PATHLEN];
  const char *top;
  ldm_conf *conf;

  mksub(s, "etc");
  mksub(s, "etc/sub");
  /* Relative INCLUDEs are relative to the including file's directory. */
  put(s, "etc/sub/leaf.conf", "ALLOW ANY ^leaf$\n");
  put(s, "etc/sub/mid.conf",
      "ALLOW ANY ^mid1$\n"
      "INCLUDE leaf.conf\n"
      "ALLOW ANY ^mid2$\n");
  put(s, "etc/abs.conf", "EXEC \"abs\"\n");
  snprintf(abs, sizeof abs, "%s/etc/abs.conf", s->dir);
  snprintf(text, sizeof text,
           "ALLOW ANY ^top1$\n"
           "include sub/mid.conf\n"
           "ALLOW ANY ^top2$\n"
           "INCLUDE \"%s\"\n"
           "INCLUDE sub/leaf.conf\n",
           abs);
  top = put(s, "etc/ldmd.conf", text);
  assert_int_equal(ldm_conf_parse(top, &conf, err, sizeof err), LDM_CONF_OK);
  /* Entries in order, the included ones where the INCLUDE was. */
  assert_int_equal(conf->nallows, 6);
  assert_string_equal(conf->allows[0].host_ere, "^top1$");
  assert_string_equal(conf->allows[1].host_ere, "^mid1$");
  assert_string_equal(conf->allows[2].host_ere, "^leaf$");
  assert_string_equal(conf->allows[3].host_ere, "^mid2$");
  assert_string_equal(conf->allows[4].host_ere, "^top2$");
  assert_string_equal(conf->allows[5].host_ere, "^leaf$");
  assert_int_equal(conf->nexecs, 1);
  /* Origins name the file and its line. */
  snprintf(text, sizeof text, "%s/etc/sub/mid.conf", s->dir);
  assert_string_equal(conf->allows[1].where.file, text);
  assert_int_equal(conf->allows[3].where.line, 3);
  snprintf(text, sizeof text, "%s/etc/sub/leaf.conf", s->dir);
  assert_string_equal(conf->allows[2].where.file, text);
  assert_string_equal(conf->allows[5].where.file, text);
  assert_int_equal(conf->allows[2].where.line, 1);
  assert_string_equal(conf->execs[0].where.file, abs);
  assert_string_equal(conf->allows[4].where.file, top);
  assert_int_equal(conf->allows[4].where.line, 3);
  /* Every file read, the top one first (the same file may come twice). */
  assert_int_equal(conf->nfiles, 5);
  assert_string_equal(conf->files[0], top);
  ldm_conf_free(conf);
}

static void test_include_errors(void **state) {
  scratch *s = *state;
  char err[ERRLEN], want[3 * PATHLEN];
  const char *top;
  ldm_conf *conf;

  mksub(s, "d");
  /* An error in an included file names that file and its line, then the
   * INCLUDE that read it. */
  put(s, "d/inner.conf", "ALLOW ANY ^ok$\n\nALLOW BOGUS ^x$\n");
  put(s, "d/middle.conf", "# middle\nINCLUDE inner.conf\n");
  top = put(s, "d/top.conf", "EXEC \"x\"\n\n\nINCLUDE middle.conf\n");
  assert_int_equal(ldm_conf_parse(top, &conf, err, sizeof err),
                   LDM_CONF_ESYNTAX);
  snprintf(want, sizeof want,
           "%s/d/inner.conf:3: bad feedset \"BOGUS\": ", s->dir);
  if (strncmp(err, want, strlen(want)) != 0)
    fail_msg("got \"%s\"\nwant \"%s...\"", err, want);
  snprintf(want, sizeof want,
           " (included from %s/d/middle.conf:2) (included from %s:4)", s->dir,
           top);
  assert_true(strlen(err) > strlen(want));
  assert_string_equal(err + strlen(err) - strlen(want), want);

  /* A missing file: the error is at the INCLUDE. */
  parse_bad_in(s, "missing.conf", "ALLOW ANY ^a$\nINCLUDE nonesuch.conf\n",
               LDM_CONF_EIO, 2, "cannot read included file");
  parse_bad(s, "INCLUDE \"\"\n", 1, "empty INCLUDE path");
  /* A directory is refused. */
  parse_bad_in(s, "dir.conf", "INCLUDE d\n", LDM_CONF_EIO, 1,
               "not a regular file");
  /* An entry does not continue into or out of an included file. */
  put(s, "tail.conf", "ANY ^x$\n");
  parse_bad_in(s, "split.conf", "ALLOW\nINCLUDE tail.conf\n", LDM_CONF_ESYNTAX,
               1, "ALLOW needs 2 to 4");
}

static void test_include_cycle(void **state) {
  scratch *s = *state;

  /* Itself. */
  parse_bad_in(s, "self.conf", "ALLOW ANY ^a$\n\nINCLUDE self.conf\n",
               LDM_CONF_ESYNTAX, 3, "makes a cycle");
  /* a -> b -> a: reported in b, at its INCLUDE. */
  put(s, "b.conf", "# b\nINCLUDE a.conf\n");
  {
    const char *a = put(s, "a.conf", "INCLUDE b.conf\n");
    char err[ERRLEN], want[PATHLEN + 32];
    ldm_conf *conf;

    assert_int_equal(ldm_conf_parse(a, &conf, err, sizeof err),
                     LDM_CONF_ESYNTAX);
    snprintf(want, sizeof want, "%s/b.conf:2: INCLUDE \"a.conf\" makes a cycle",
             s->dir);
    if (strncmp(err, want, strlen(want)) != 0)
      fail_msg("got \"%s\"", err);
  }
  /* The same file twice, side by side, is not a cycle. */
  put(s, "twice.conf", "ALLOW ANY ^t$\n");
  {
    ldm_conf *conf = parse_ok(s, "INCLUDE twice.conf\nINCLUDE twice.conf\n");

    assert_int_equal(conf->nallows, 2);
    ldm_conf_free(conf);
  }
}

static void test_include_depth(void **state) {
  scratch *s = *state;
  char name[32], text[64];
  int i;

  /* f0 includes f1 ... f(n-1); the last one has an entry. */
  for (i = 0; i <= LDM_CONF_MAX_DEPTH + 1; i++) {
    snprintf(name, sizeof name, "f%d.conf", i);
    snprintf(text, sizeof text, "INCLUDE f%d.conf\n", i + 1);
    if (i == LDM_CONF_MAX_DEPTH)
      snprintf(text, sizeof text, "ALLOW ANY ^deep$\n");
    put(s, name, text);
  }
  {
    char err[ERRLEN], path[PATHLEN + 16];
    ldm_conf *conf;

    /* Exactly LDM_CONF_MAX_DEPTH levels below the top: fine. */
    snprintf(path, sizeof path, "%s/f0.conf", s->dir);
    assert_int_equal(ldm_conf_parse(path, &conf, err, sizeof err), LDM_CONF_OK);
    assert_int_equal(conf->nallows, 1);
    assert_int_equal(conf->nfiles, LDM_CONF_MAX_DEPTH + 1);
    ldm_conf_free(conf);
  }
  /* One more is too deep: a top file that includes f0.  The error is at
   * the INCLUDE that goes too far. */
  {
    const char *path = put(s, "deeper.conf", "INCLUDE f0.conf\n");
    char err[ERRLEN];
    ldm_conf *conf;

    assert_int_equal(ldm_conf_parse(path, &conf, err, sizeof err),
                     LDM_CONF_ESYNTAX);
    assert_non_null(strstr(err, "f15.conf:1: INCLUDE \"f16.conf\": files "
                                "nested more than 16 deep"));
  }
}

/* ---------------------------------------------------------------------- */
/* Access rules                                                           */
/* ---------------------------------------------------------------------- */

static void test_host_allowed(void **state) {
  ldm_conf *conf = parse_ok(*state, "ALLOW ANY ^((localhost|loopback)|"
                                    "(127\\.0\\.0\\.1\\.?))$\n"
                                    "ALLOW WMO \\.edu$\n"
                                    "ALLOW ANY ^192\\.168\\.\n"
                                    "ACCEPT ANY .* ^pusher\\.org$\n");

  /* The address alone. */
  assert_true(ldm_conf_host_allowed(conf, NULL, "127.0.0.1"));
  assert_true(ldm_conf_host_allowed(conf, NULL, "192.168.7.7"));
  assert_false(ldm_conf_host_allowed(conf, NULL, "10.1.1.1"));
  /* Then the name, case-insensitively. */
  assert_true(ldm_conf_host_allowed(conf, "LOCALHOST", "10.1.1.1"));
  assert_true(ldm_conf_host_allowed(conf, "x.Example.EDU", "10.1.1.1"));
  assert_false(ldm_conf_host_allowed(conf, "x.edu.com", "10.1.1.1"));
  /* ACCEPT entries let a host connect too. */
  assert_true(ldm_conf_host_allowed(conf, "pusher.org", NULL));
  /* IPv4-mapped IPv6 is matched as the dotted quad. */
  assert_true(ldm_conf_host_allowed(conf, NULL, "::ffff:127.0.0.1"));
  assert_true(ldm_conf_host_allowed(conf, NULL, "::FFFF:192.168.0.1"));
  assert_false(ldm_conf_host_allowed(conf, NULL, "::1"));
  assert_false(ldm_conf_host_allowed(conf, NULL, NULL));
  assert_false(ldm_conf_host_allowed(NULL, "localhost", "127.0.0.1"));
  ldm_conf_free(conf);

  /* IPv6 addresses are matched as their text. */
  conf = parse_ok(*state, "ALLOW ANY ^::1$\n");
  assert_true(ldm_conf_host_allowed(conf, NULL, "::1"));
  ldm_conf_free(conf);
}

/* ---------------------------------------------------------------------- */
/* Certificate identities: "{...}" before a host field (our extension)    */
/* ---------------------------------------------------------------------- */

#define PIN_HEX                                                                \
  "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void test_ident_parse(void **state) {
  scratch *s = *state;
  ldm_conf *conf = parse_ok(
      s, "ALLOW ANY {cn=^b\\.test$}^127\\.0\\.0\\.1$\n"
         "ALLOW IDS {tls}\n"
         "ACCEPT EXP .* {dns=\\.example\\.org$,cert}\n"
         "ACCEPT ANY .* {sha256=" PIN_HEX "}host\n"
         "REQUEST ANY .* {tls}up.example.org:3888\n"
         "REQUEST IDS .* {sha256=00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:"
         "ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff}[::1]\n"
         "REQUEST EXP .* plain.example.org\n");

  assert_true(conf->allows[0].id.given);
  assert_string_equal(conf->allows[0].id.cn_ere, "^b\\.test$");
  assert_string_equal(conf->allows[0].host_ere, "^127\\.0\\.0\\.1$");
  /* After an identity, an empty host ERE is any host. */
  assert_true(conf->allows[1].id.given);
  assert_null(conf->allows[1].id.cn_ere);
  assert_string_equal(conf->allows[1].host_ere, ".*");
  assert_true(conf->accepts[0].id.cert);
  assert_string_equal(conf->accepts[0].id.dns_ere, "\\.example\\.org$");
  assert_true(conf->accepts[1].id.pin);
  assert_int_equal(conf->accepts[1].id.sha256[31], 0xff);
  assert_string_equal(conf->accepts[1].host_ere, "host");
  assert_true(conf->requests[0].id.given);
  assert_string_equal(conf->requests[0].host, "up.example.org");
  assert_int_equal(conf->requests[0].port, 3888);
  assert_true(conf->requests[1].id.pin);
  assert_int_equal(conf->requests[1].id.sha256[1], 0x11);
  assert_true(conf->requests[1].ipv6);
  assert_string_equal(conf->requests[1].host, "::1");
  assert_false(conf->requests[2].id.given);
  assert_ptr_equal(ldm_conf_tls_entry(conf, false), &conf->allows[0].where);
  assert_ptr_equal(ldm_conf_tls_entry(conf, true), &conf->requests[0].where);
  ldm_conf_free(conf);

  /* A file without identities is what it was: none asks for TLS. */
  conf = parse_ok(s, "ALLOW ANY ^a$\nREQUEST ANY .* b\n");
  assert_false(conf->allows[0].id.given);
  assert_null(ldm_conf_tls_entry(conf, false));
  assert_null(ldm_conf_tls_entry(conf, true));
  ldm_conf_free(conf);

  parse_bad(s, "ALLOW ANY {cn=a\n", 1, "no \"}\" after the identity");
  parse_bad(s, "ALLOW ANY {}a\n", 1, "an empty identity");
  parse_bad(s, "ALLOW ANY {tls,}a\n", 1, "an empty identity item");
  parse_bad(s, "ALLOW ANY {,tls}a\n", 1, "an empty identity item");
  parse_bad(s, "ALLOW ANY {cn}a\n", 1, "unknown identity item \"cn\"");
  parse_bad(s, "ALLOW ANY {cn=}a\n", 1, "empty cn= ERE");
  parse_bad(s, "ALLOW ANY {cn=(}a\n", 1, "bad cn= ERE \"(\"");
  parse_bad(s, "ALLOW ANY {cn=a,cn=b}a\n", 1, "cn= given twice");
  parse_bad(s, "ACCEPT ANY .* {dns=a++++++++++}\n", 1, "too complex");
  parse_bad(s, "ALLOW ANY {sha256=00}a\n", 1, "sha256= wants 64 hex digits");
  parse_bad(s, "ALLOW ANY {sha256=" PIN_HEX "00}a\n", 1, "64 hex digits");
  parse_bad(s, "ALLOW ANY {tls}(\n", 1, "bad host ERE \"(\"");
  parse_bad(s, "REQUEST ANY .* {tls}\n", 1, "no host name");
  parse_bad(s, "REQUEST ANY .* {bogus}h\n", 1, "unknown identity item");
  /* As before, a host ERE cannot begin with '{' (glibc: REG_BADRPT). */
  parse_bad(s, "ALLOW ANY .*{a\n", 1, "bad host ERE");
}

/* A TLS peer: CN, one DNS name, a key whose SHA-256 is PIN_HEX's bytes. */
static ldm_conf_peer_id tls_peer(const char *cn, bool verified,
                                 const char *const *dns) {
  ldm_conf_peer_id p = {.tls = true, .cert = true, .verified = verified};
  size_t i;

  p.pin_ok = verified;
  p.cn = cn;
  p.dns = dns;
  p.ndns = dns != NULL ? 1 : 0;
  for (i = 0; i < 16; i++)
    p.spki_sha256[i] = p.spki_sha256[i + 16] = (uint8_t)(i * 0x11);
  return p;
}

static void test_ident_match(void **state) {
  ldm_conf *conf = parse_ok(*state, "ALLOW ANY {cn=^b\\.test$}^127\\.\n"
                                    "ALLOW IDS {tls}\n"
                                    "ACCEPT EXP .* {dns=^d\\.test$}\n"
                                    "ACCEPT EXP .* {sha256=" PIN_HEX "}^10\\.\n"
                                    "ALLOW WMO ^192\\.168\\.\n");
  const char *dns_d[] = {"d.test"}, *dns_x[] = {"x.test"};
  ldm_conf_peer_id b = tls_peer("B.TEST", true, dns_x);
  ldm_conf_peer_id stale = tls_peer("b.test", false, dns_d);
  ldm_conf_peer_id d = tls_peer("other", true, dns_d);
  ldm_conf_peer_id none = {.tls = true};
  ldm_conf_peer_id pinned = tls_peer("self", false, NULL);

  /* Plain host rules: plain and TLS peers alike. */
  assert_true(ldm_conf_host_allowed_peer(conf, NULL, "192.168.1.1", NULL));
  assert_true(ldm_conf_host_allowed_peer(conf, NULL, "192.168.1.1", &none));
  /* An identity: never a plain peer, whatever its address. */
  assert_false(ldm_conf_host_allowed_peer(conf, NULL, "127.0.0.1", NULL));
  assert_false(ldm_conf_host_allowed(conf, NULL, "127.0.0.1"));
  /* cn= (any case) and the host ERE both. */
  assert_true(ldm_conf_ident_match(&conf->allows[0].id, &b));
  assert_true(ldm_conf_host_allowed_peer(conf, NULL, "127.0.0.1", &b));
  /* {tls}: any TLS peer, a certificate or not; never a plain one. */
  assert_true(ldm_conf_ident_match(&conf->allows[1].id, &none));
  assert_false(ldm_conf_ident_match(&conf->allows[1].id, NULL));
  /* A certificate that does not verify (expired, unknown CA) has no name. */
  assert_false(ldm_conf_ident_match(&conf->allows[0].id, &stale));
  assert_false(ldm_conf_ident_match(&conf->accepts[0].id, &stale));
  assert_false(ldm_conf_ident_match(&conf->allows[0].id, &none));
  /* dns=: some SAN DNS name. */
  assert_true(ldm_conf_ident_match(&conf->accepts[0].id, &d));
  assert_false(ldm_conf_ident_match(&conf->accepts[0].id, &b));
  /* sha256=: a self-signed certificate with that key; not an expired one,
   * nor another key. */
  pinned.pin_ok = true;
  assert_true(ldm_conf_ident_match(&conf->accepts[1].id, &pinned));
  pinned.pin_ok = false;
  assert_false(ldm_conf_ident_match(&conf->accepts[1].id, &pinned));
  pinned.pin_ok = true;
  pinned.spki_sha256[0] ^= 1;
  assert_false(ldm_conf_ident_match(&conf->accepts[1].id, &pinned));
  assert_false(ldm_conf_ident_match(&conf->accepts[1].id, &none));
  ldm_conf_free(conf);
}

static void test_ident_classes(void **state) {
  ldm_conf *conf = parse_ok(*state, "ALLOW IDS {cn=^b$}\n"
                                    "ALLOW EXP .*\n"
                                    "ACCEPT IDS .* {cn=^b$}\n");
  ldm_conf_peer_id b = tls_peer("b", true, NULL);
  rules r;

  rules_begin(&r, conf);
  add_spec(r.want, PQ_FT_IDS | PQ_FT_EXP, ".*");
  /* Plain: EXP only (RECLASS). */
  assert_int_equal(ldm_conf_allowed_class_peer(conf, "h", "1.2.3.4", NULL,
                                               r.want, r.got, &r.filter, r.err,
                                               sizeof r.err),
                   LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 1);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_EXP);
  free_class(r.got);
  r.got = new_class(FROM, FROM);
  /* b over TLS: the entry with its CN matches. */
  assert_int_equal(ldm_conf_allowed_class_peer(conf, "h", "1.2.3.4", &b, r.want,
                                               r.got, &r.filter, r.err,
                                               sizeof r.err),
                   LDM_CONF_OK);
  /* (LDM's rule: the first matching entry gives the spec its feedtype.) */
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_IDS);
  assert_ptr_equal(r.filter.parts[0].allow, &conf->allows[0]);
  free_class(r.got);
  r.got = new_class(FROM, FROM);
  /* What a plain peer may push: nothing here; b may push IDS. */
  assert_int_equal(ldm_conf_accepted_class_peer(conf, "h", "1.2.3.4", NULL,
                                                r.want, r.got, r.err,
                                                sizeof r.err),
                   LDM_CONF_EDENIED);
  assert_int_equal(ldm_conf_accepted_class_peer(conf, "h", "1.2.3.4", &b,
                                                r.want, r.got, r.err,
                                                sizeof r.err),
                   LDM_CONF_OK);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_IDS);
  rules_end(&r);
}

static void test_allowed_class_reduce(void **state) {
  rules r;
  char text[512];

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^a\\.edu$\n"
                                   "ALLOW ANY ^a\\.edu$ ^SA ^SAUS\n"
                                   "ALLOW NEXRAD3 ^b\\.edu$\n"));
  /* ANY from a.edu: the first matching entry, WMO, wins (section 4.1). */
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(allowed(&r, "a.edu", "10.0.0.1"), LDM_CONF_OK);
  assert_string_equal(r.err, "");
  assert_int_equal(r.got->nspecs, 1);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_WMO);
  assert_string_equal(r.got->specs[0].pattern, ".*");
  assert_int_equal(pq_ts_cmp(r.got->from, FROM), 0);
  assert_int_equal(pq_ts_cmp(r.got->to, PQ_TS_ENDT), 0);
  assert_false(ldm_conf_class_equal(r.got, r.want));
  assert_int_equal(r.filter.nparts, 1);
  assert_int_equal(r.filter.parts[0].feedtype, PQ_FT_WMO);
  assert_ptr_equal(r.filter.parts[0].allow, &r.conf->allows[0]);
  pq_class_free(r.got);

  /* Two specs: the second misses WMO and takes the ANY entry, with its OK
   * and NOT EREs in the filter. */
  want_again(&r);
  add_spec(r.want, PQ_FT_WMO | PQ_FT_NEXRAD3, "^S");
  add_spec(r.want, PQ_FT_EXP, "^T");
  assert_int_equal(allowed(&r, "A.EDU", NULL), LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 2);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_WMO);
  assert_string_equal(r.got->specs[0].pattern, "^S");
  assert_int_equal(r.got->specs[1].feedtype, PQ_FT_EXP);
  assert_string_equal(r.got->specs[1].pattern, "^T");
  assert_int_equal(r.filter.nparts, 2);
  assert_int_equal(r.filter.parts[1].feedtype, PQ_FT_EXP);
  assert_ptr_equal(r.filter.parts[1].allow, &r.conf->allows[1]);
  assert_true(ldm_conf_filter_format(&r.filter, text, sizeof text) > 0);
  assert_string_equal(text, "{{EXP, (^SA) - (^SAUS)}, {WMO, (.*)}}");
  /* The filter: WMO products pass whatever their ident; EXP ones need
   * ^SA and not ^SAUS; others never pass. */
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_IDS, "anything"));
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_EXP, "SAXX01"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_EXP, "SAUS01"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_EXP, "TEST"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_NEXRAD3, "SDUS"));
  pq_class_free(r.got);

  /* Unchanged: the server replies OK. */
  want_again(&r);
  add_spec(r.want, PQ_FT_IDS | PQ_FT_DDS, "^SA");
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_OK);
  assert_true(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);

  rules_end(&r);
}

static void test_allowed_class_badpattern(void **state) {
  /* A pattern that does not compile at step 4 is LDM's BADPATTERN.  (A
   * server compiles the request first, so this needs a doctored class.) */
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^x$\n"
                                   "ALLOW ANY ^h$\n"));
  add_spec(r.want, PQ_FT_WMO, "^A");
  strcpy(r.want->specs[0].pattern, "^A(");
  assert_int_equal(allowed(&r, "h", NULL), LDM_CONF_EPATTERN);
  assert_non_null(strstr(r.err, "bad pattern \"^A(\""));
  assert_int_equal(r.got->nspecs, 0);
  assert_int_equal(r.filter.nparts, 0);
  rules_end(&r);
}

static void test_allowed_class_denied(void **state) {
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^a\\.edu$\n"
                                   "ALLOW NEXRAD3 ^b\\.edu$\n"));
  /* Nothing for this host: AUTH_TOOWEAK. */
  add_spec(r.want, PQ_FT_WMO, ".*");
  assert_int_equal(allowed(&r, "c.edu", "10.9.9.9"), LDM_CONF_EDENIED);
  assert_non_null(strstr(r.err, "upstream filter prevents data-transfer"));
  assert_non_null(strstr(r.err, "c.edu [10.9.9.9]"));
  assert_int_equal(r.got->nspecs, 0);
  assert_int_equal(r.filter.nparts, 0);
  pq_class_free(r.got);
  /* The host matches, but not for this feedtype. */
  assert_int_equal(allowed(&r, "b.edu", NULL), LDM_CONF_EDENIED);
  pq_class_free(r.got);
  /* An empty request. */
  want_again(&r);
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_EDENIED);
  pq_class_free(r.got);
  /* Bad arguments. */
  assert_int_equal(ldm_conf_allowed_class(NULL, "a.edu", NULL, r.want, r.got,
                                          &r.filter, r.err, sizeof r.err),
                   LDM_CONF_EINVAL);
  assert_int_equal(ldm_conf_allowed_class(r.conf, "a.edu", NULL, r.want, r.got,
                                          NULL, NULL, 0),
                   LDM_CONF_EINVAL);
  rules_end(&r);
}

static void test_allowed_class_overlap(void **state) {
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^a\\.edu$\n"
                                   "ALLOW ANY ^a\\.edu$\n"));
  /* Two specs meeting the same ALLOW feedtype overlap in the filter:
   * LDM replies SYSTEM_ERR. */
  add_spec(r.want, PQ_FT_IDS, "^A");
  add_spec(r.want, PQ_FT_IDS | PQ_FT_HDS, "^B");
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_EOVERLAP);
  assert_string_equal(r.err, "feedtype IDS|HDS overlaps with feedtype IDS");
  assert_int_equal(r.got->nspecs, 0);
  assert_int_equal(r.filter.nparts, 0);
  pq_class_free(r.got);

  /* Disjoint feedtypes through the same entry are fine. */
  want_again(&r);
  add_spec(r.want, PQ_FT_IDS, "^A");
  add_spec(r.want, PQ_FT_HDS, "^B");
  add_spec(r.want, PQ_FT_EXP, "^C");
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_OK);
  assert_int_equal(r.filter.nparts, 3);
  assert_int_equal(r.got->nspecs, 3);
  assert_true(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);
  rules_end(&r);
}

static void test_allowed_class_partial(void **state) {
  /* A spec no gathered ALLOW feedtype meets is dropped from the reduced
   * class (step 4) while the others stay. */
  rules r;
  char text[256];

  rules_begin(&r, parse_ok(*state, "ALLOW NEXRAD3 ^b\\.edu$\n"
                                   "ALLOW WMO ^b\\.edu$ ^SA\n"));
  add_spec(r.want, PQ_FT_EXP, "^X");
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(allowed(&r, "b.edu", NULL), LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 1);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_NEXRAD3);
  assert_int_equal(r.filter.nparts, 1);
  ldm_conf_filter_format(&r.filter, text, sizeof text);
  assert_string_equal(text, "{{NEXRAD3, (.*)}}");
  /* The format is cut safely and reports the full length. */
  assert_int_equal(ldm_conf_filter_format(&r.filter, text, 5),
                   (int)strlen("{{NEXRAD3, (.*)}}"));
  assert_string_equal(text, "{{NE");
  pq_class_free(r.got);
  rules_end(&r);
}

static void test_allowed_class_maxhits(void **state) {
  /* LDM gathers at most 128 host-matching ALLOW entries for step 4; the
   * filter of step 3 looks at all of them. */
  size_t size = 64 * (LDM_CONF_MAX_HITS + 2);
  char *text = malloc(size);
  rules r;
  size_t n = 0;
  int i;

  assert_non_null(text);
  for (i = 0; i < LDM_CONF_MAX_HITS; i++)
    n += (size_t)snprintf(text + n, size - n, "ALLOW WMO ^h$ ^x%d\n", i);
  snprintf(text + n, size - n, "ALLOW EXP ^h$\n");
  rules_begin(&r, parse_ok(*state, text));
  add_spec(r.want, PQ_FT_EXP, ".*");
  assert_int_equal(allowed(&r, "h", NULL), LDM_CONF_OK);
  assert_int_equal(r.filter.nparts, 1);
  assert_int_equal(r.filter.parts[0].feedtype, PQ_FT_EXP);
  assert_int_equal(r.got->nspecs, 0);
  /* An emptied class is LDM's empty RECLASS: TS_ZERO..TS_ZERO. */
  assert_int_equal(pq_ts_cmp(r.got->from, PQ_TS_ZERO), 0);
  assert_int_equal(pq_ts_cmp(r.got->to, PQ_TS_ZERO), 0);
  pq_class_free(r.got);
  rules_end(&r);
  free(text);
}

static void test_filter_multibit(void **state) {
  /* A product with bits in two parts: the later part decides (LDM walks
   * its filter from the last component added). */
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW IDS ^h$ ^A\n"
                                   "ALLOW HDS ^h$ ^B\n"));
  add_spec(r.want, PQ_FT_IDS, ".*");
  add_spec(r.want, PQ_FT_HDS, ".*");
  assert_int_equal(allowed(&r, "h", NULL), LDM_CONF_OK);
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_IDS | PQ_FT_HDS, "B1"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_IDS | PQ_FT_HDS, "A1"));
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_IDS, "A1"));
  pq_class_free(r.got);
  rules_end(&r);
}

static void test_accepted_class(void **state) {
  rules r;

  rules_begin(&r, parse_ok(*state, "ACCEPT EXP ^TEST ^p\\.org$\n"
                                   "ACCEPT WMO ^SA ^p\\.org$\n"
                                   "ACCEPT NEXRAD3 .* ^other$\n"
                                   "ACCEPT ANY .* ^10\\.\n"));
  /* Each matching ACCEPT entry takes the first offered spec it meets, with
   * its own pattern (section 4.3). */
  add_spec(r.want, PQ_FT_IDS | PQ_FT_EXP, "^X");
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(accepted(&r, "P.ORG", "192.0.2.1"), LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 2);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_EXP);
  assert_string_equal(r.got->specs[0].pattern, "^TEST");
  assert_int_equal(r.got->specs[1].feedtype, PQ_FT_IDS);
  assert_string_equal(r.got->specs[1].pattern, "^SA");
  assert_int_equal(pq_ts_cmp(r.got->from, FROM), 0);
  assert_false(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);

  /* By address; equal to the offer: the server replies OK. */
  want_again(&r);
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(accepted(&r, NULL, "10.1.2.3"), LDM_CONF_OK);
  assert_true(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);

  /* Nothing acceptable: AUTH_TOOWEAK. */
  assert_int_equal(accepted(&r, "nobody", "192.0.2.9"), LDM_CONF_EDENIED);
  assert_int_equal(r.got->nspecs, 0);
  want_again(&r);
  add_spec(r.want, PQ_FT_NEXRAD2, ".*");
  assert_int_equal(accepted(&r, "p.org", NULL), LDM_CONF_EDENIED);
  assert_int_equal(ldm_conf_accepted_class(r.conf, "p.org", NULL, NULL, r.got,
                                           r.err, sizeof r.err),
                   LDM_CONF_EINVAL);
  rules_end(&r);
}

static void test_accepted_class_full(void **state) {
  /* More specs than a class holds. */
  char text[64 * (PQ_CLASS_MAX + 1)];
  rules r;
  size_t n = 0;
  int i;

  for (i = 0; i <= PQ_CLASS_MAX; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "ACCEPT ANY ^p%d h\n", i);
  rules_begin(&r, parse_ok(*state, text));
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(accepted(&r, "h", NULL), LDM_CONF_EFULL);
  assert_int_equal(r.got->nspecs, 0);
  rules_end(&r);
}

static void test_class_equal(void **state) {
  pq_class *a = new_class(FROM, PQ_TS_ENDT);
  pq_class *b = new_class(FROM, PQ_TS_ENDT);

  (void)state;
  assert_true(ldm_conf_class_equal(a, b));
  add_spec(a, PQ_FT_WMO, ".*");
  assert_false(ldm_conf_class_equal(a, b));
  add_spec(b, PQ_FT_WMO, ".*");
  assert_true(ldm_conf_class_equal(a, b));
  b->specs[0].feedtype = PQ_FT_IDS;
  assert_false(ldm_conf_class_equal(a, b));
  b->specs[0].feedtype = PQ_FT_WMO;
  b->to.usec = 0;
  assert_false(ldm_conf_class_equal(a, b));
  b->to = a->to;
  strcpy(b->specs[0].pattern, ".*.*");
  assert_false(ldm_conf_class_equal(a, b));
  free_class(a);
  free_class(b);
}

static void test_strerror(void **state) {
  int code;

  (void)state;
  for (code = LDM_CONF_OK; code <= LDM_CONF_EINVAL; code++)
    assert_string_not_equal(ldm_conf_strerror(code), "unknown error");
  assert_string_equal(ldm_conf_strerror(-1), "unknown error");
  assert_string_equal(ldm_conf_strerror(99), "unknown error");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sample, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keyword_case, setup, teardown),
      cmocka_unit_test_setup_teardown(test_keyword_column1, setup, teardown),
      cmocka_unit_test_setup_teardown(test_indented_keyword_warning, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_continuation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_whitespace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_comments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_quoting, setup, teardown),
      cmocka_unit_test_setup_teardown(test_token_length, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dos_and_nul, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allow, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ere_complexity, setup, teardown),
      cmocka_unit_test_setup_teardown(test_accept, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
      cmocka_unit_test_setup_teardown(test_request_hosts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_request_entry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_request_reduction, setup, teardown),
      cmocka_unit_test_setup_teardown(test_request_groups, setup, teardown),
      cmocka_unit_test_setup_teardown(test_receive_multicast, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_lines, setup, teardown),
      cmocka_unit_test_setup_teardown(test_include, setup, teardown),
      cmocka_unit_test_setup_teardown(test_include_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_include_cycle, setup, teardown),
      cmocka_unit_test_setup_teardown(test_include_depth, setup, teardown),
      cmocka_unit_test_setup_teardown(test_host_allowed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allowed_class_reduce, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_allowed_class_denied, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_allowed_class_badpattern, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_allowed_class_overlap, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_allowed_class_partial, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_allowed_class_maxhits, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_filter_multibit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_accepted_class, setup, teardown),
      cmocka_unit_test_setup_teardown(test_accepted_class_full, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_ident_parse, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ident_match, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ident_classes, setup, teardown),
      cmocka_unit_test(test_class_equal),
      cmocka_unit_test(test_strerror),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
