/*
 * test_ldmd_conf.c - ldmd.conf's parser (docs/protocol.md, "ldmd.conf"):
 * every entry and its argument counts, keywords only in column 1 and in any
 * case, quoting, comments, arguments continued over indented lines (a
 * non-keyword word in column 1 is an error), bad lines with
 * their exact "<file>:<line>: ", INCLUDE (nested, relative to the including
 * file, cycles, depth), REQUEST hosts (name, name:port, IPv6 in brackets),
 * LDM's REQUEST reduction and primary/alternate groups, certificate
 * identities.  The access rules are tested in test_ldmd_conf_access.c, the
 * second half of this program; main() runs both.
 *
 * Most parsing cases are rows of tables.  An ok_case parses a text and
 * checks fields of what it made (NUM(request, 0, port, 388): requests[0].port
 * is 388); a bad_case parses a text and expects the error at a line,
 * with a message that contains a string.  A row that fails names its test,
 * its case (or row number) and the text.
 *
 * Each test writes its files into a fresh directory under $PQ_TEST_DIR.
 */
#include <errno.h>
#include <sys/stat.h>

#include "test/site/test_ldmd_conf.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

/* Make a subdirectory of the scratch directory; returns its path. */
static const char *mksub(scratch *s, const char *name) {
  char full[PATHLEN];
  char *path = s->subdirs[s->nsubdirs++];

  snprintf(full, sizeof full, "%s/%s", s->dir, name);
  memcpy(path, full, sizeof full);
  assert_int_equal(mkdir(path, 0755), 0);
  return path;
}

/* Parse text as <dir>/<name>; expect code and a message that begins
 * "<file>:<line>: " and contains want.  who names the case. */
static void expect_bad(scratch *s, const char *who, const char *name,
                       const char *text, int code, unsigned line,
                       const char *want) {
  const char *path = put(s, name, text);
  char err[ERRLEN], prefix[PATHLEN + 32];
  ldm_conf *conf = (ldm_conf *)&conf;
  int rc = ldm_conf_parse(path, &conf, err, sizeof err);

  if (rc != code)
    fail_msg("%s: expected %d, got %d (%s) for:\n%s", who, code, rc, err, text);
  if (conf != NULL)
    fail_msg("%s: a configuration came back for:\n%s", who, text);
  snprintf(prefix, sizeof prefix, "%s:%u: ", path, line);
  if (strncmp(err, prefix, strlen(prefix)) != 0)
    fail_msg("%s: expected \"%s...\", got \"%s\" for:\n%s", who, prefix, err,
             text);
  if (want != NULL && strstr(err, want) == NULL)
    fail_msg("%s: expected \"%s\" in \"%s\" for:\n%s", who, want, err, text);
}

static void parse_bad_in(scratch *s, const char *name, const char *text,
                         int code, unsigned line, const char *want) {
  expect_bad(s, name, name, text, code, line, want);
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

/* ---------------------------------------------------------------------- */
/* Tables of cases                                                        */
/* ---------------------------------------------------------------------- */

/* What an ok_case expects of the configuration its text made: a field of
 * an entry, of ldm_conf, or of its argv; the two predicates; a warning.
 * The entries' kinds are named as the entries' types, ldm_conf_<kind>. */
enum want_kind {
  W_conf,
  W_allow,
  W_accept,
  W_request,
  W_exec,
  W_argv,
  W_empty,
  W_listener,
  W_warning
};

/* One expectation: the field at off (size bytes, 0 for a string) of entry
 * i (esize bytes) holds num, or the string str (NULL too); for W_argv,
 * argv[off] of exec i; for W_warning, a warning contains str.  path names
 * it in messages. */
typedef struct field_want {
  const char *path;
  enum want_kind kind;
  size_t i, off, size, esize;
  const char *str;
  long long num;
} field_want;

/* NUM(request, 1, port, 38800): requests[1].port is 38800.
 * STR(allow, 0, not_ere, NULL): allows[0].not_ere is NULL.
 * COUNT(nallows, 2): conf->nallows is 2.
 * ARGV(1, 2, "x"): execs[1].argv[2] is "x".
 * EMPTY(b), LISTENER(b): ldm_conf_is_empty(), ldm_conf_needs_listener().
 * WARNS(s): a warning contains s. */
#define ENTRY_PATH(e, i, m) #e "s[" #i "]." #m
#define SIZE_OF(type, m) sizeof(((type *)0)->m)
#define NUM(e, i, m, n)                                                        \
  {                                                                            \
    ENTRY_PATH(e, i, m), W_##e, i, offsetof(ldm_conf_##e, m),                  \
        SIZE_OF(ldm_conf_##e, m), sizeof(ldm_conf_##e), NULL, (long long)(n)   \
  }
#define STR(e, i, m, s)                                                        \
  {                                                                            \
    ENTRY_PATH(e, i, m), W_##e, i, offsetof(ldm_conf_##e, m), 0,               \
        sizeof(ldm_conf_##e), s, 0                                             \
  }
#define COUNT(m, n)                                                            \
  { #m, W_conf, 0, offsetof(ldm_conf, m), SIZE_OF(ldm_conf, m), 0, NULL, n }
#define ARGV(i, k, s)                                                          \
  { "execs[" #i "].argv[" #k "]", W_argv, i, k, 0, 0, s, 0 }
#define EMPTY(b)                                                               \
  { "is_empty", W_empty, 0, 0, 1, 0, NULL, b }
#define LISTENER(b)                                                            \
  { "needs_listener", W_listener, 0, 0, 1, 0, NULL, b }
#define WARNS(s)                                                               \
  { "warning", W_warning, 0, 0, 0, 0, s, 0 }

#define MAX_WANTS 48

/* A text that parses, and what it made. */
typedef struct ok_case {
  const char *name;
  const char *text;
  field_want wants[MAX_WANTS]; /* up to the first without a path */
} ok_case;

static void check_want(const ldm_conf *c, const char *who,
                       const field_want *w) {
  const void *entries[] = {c, c->allows, c->accepts, c->requests, c->execs};
  size_t counts[] = {1, c->nallows, c->naccepts, c->nrequests, c->nexecs};
  const char *p, *str = NULL;
  long long num = 0;

  if (w->kind == W_warning) {
    if (!has_warning(c, w->str))
      fail_msg("%s: no warning contains \"%s\"", who, w->str);
    return;
  }
  if (w->kind == W_argv) {
    if (w->i >= c->nexecs || w->off > c->execs[w->i].argc)
      fail_msg("%s: no %s", who, w->path);
    str = c->execs[w->i].argv[w->off];
  } else if (w->kind == W_empty || w->kind == W_listener) {
    num =
        w->kind == W_empty ? ldm_conf_is_empty(c) : ldm_conf_needs_listener(c);
  } else {
    if (w->i >= counts[w->kind])
      fail_msg("%s: no %s: %zu entries", who, w->path, counts[w->kind]);
    p = (const char *)entries[w->kind] + w->i * w->esize + w->off;
    if (w->size == 0)
      str = *(char *const *)(const void *)p;
    else if (w->size == 1)
      num = *(const uint8_t *)p;
    else if (w->size == 4)
      num = *(const uint32_t *)(const void *)p;
    else if (w->size == 8)
      num = (long long)*(const uint64_t *)(const void *)p;
    else
      fail_msg("%s: %s: no reader for %zu bytes", who, w->path, w->size);
  }
  if (w->size == 0 && w->str == NULL && str != NULL)
    fail_msg("%s: %s is \"%s\", want NULL", who, w->path, str);
  if (w->size == 0 && w->str != NULL &&
      (str == NULL || strcmp(str, w->str) != 0))
    fail_msg("%s: %s is \"%s\", want \"%s\"", who, w->path,
             str != NULL ? str : "(null)", w->str);
  if (w->size != 0 && num != w->num)
    fail_msg("%s: %s is %lld (%#llx), want %lld (%#llx)", who, w->path, num,
             (unsigned long long)num, w->num, (unsigned long long)w->num);
}

/* Parse c's text and check its wants; the configuration, to free. */
static ldm_conf *check_ok(scratch *s, const char *test, const ok_case *c) {
  char who[256];
  ldm_conf *conf;
  size_t i;

  snprintf(who, sizeof who, "%s, \"%s\"", test, c->name);
  conf = parse_ok_who(s, who, c->text);
  for (i = 0; i < MAX_WANTS && c->wants[i].path != NULL; i++)
    check_want(conf, who, &c->wants[i]);
  return conf;
}

static void run_ok(scratch *s, const char *test, const ok_case *cases,
                   size_t n) {
  size_t i;

  for (i = 0; i < n; i++)
    ldm_conf_free(check_ok(s, test, &cases[i]));
}

/* A text that does not parse (as ldmd.conf): the error is at line, its
 * message contains want. */
typedef struct bad_case {
  const char *text;
  unsigned line;
  const char *want;
} bad_case;

static void run_bad(scratch *s, const char *test, const bad_case *cases,
                    size_t n) {
  char who[256];
  size_t i;

  for (i = 0; i < n; i++) {
    snprintf(who, sizeof who, "%s, bad case %zu", test, i);
    expect_bad(s, who, "ldmd.conf", cases[i].text, LDM_CONF_ESYNTAX,
               cases[i].line, cases[i].want);
  }
}

#define RUN_OK(state, table)                                                   \
  run_ok(*(state), __func__, table, sizeof table / sizeof table[0])
#define RUN_BAD(state, table)                                                  \
  run_bad(*(state), __func__, table, sizeof table / sizeof table[0])

/* ---------------------------------------------------------------------- */
/* Lexical rules                                                          */
/* ---------------------------------------------------------------------- */

static const ok_case lexical_ok[] = {
    {"empty", "", {EMPTY(true), LISTENER(false), COUNT(nfiles, 1)}},
    {"only a comment", "# only a comment\n\n   \t\f\n", {EMPTY(true)}},
    {"keyword case",
     "allow ANY ^a$\n"
     "Allow ANY ^b$\n"
     "aLlOw ANY ^c$\n"
     "request ANY .* h1\n"
     "POLL ANY .* h2\n"
     "poll ANY .* h3\n"
     "exec \"x\"\n"
     "accept ANY .* ^d$\n",
     {COUNT(nallows, 3), COUNT(nrequests, 3), STR(request, 1, host, "h2"),
      COUNT(nexecs, 1), COUNT(naccepts, 1)}},
    /* Legal (ALLOW takes 4 arguments) but surely a mistake: warned. */
    {"indented keyword",
     "ALLOW ANY ^a$\n"
     "   EXEC pqact\n",
     {COUNT(nallows, 1), COUNT(nexecs, 0), STR(allow, 0, ok_ere, "EXEC"),
      STR(allow, 0, not_ere, "pqact"),
      WARNS("ldmd.conf:2: \"EXEC\" is taken as an argument, not a "
            "keyword")}},
    /* Newlines are white space: arguments may follow on indented lines. */
    {"continuation",
     "REQUEST\tWMO\n"
     "\t\".*\"\n"
     "\n"
     "        upstream.edu\n"
     "ALLOW\n"
     "  ANY\n"
     "  ^x$\n"
     "EXEC \"pqact\"\n",
     {COUNT(nrequests, 1), STR(request, 0, host, "upstream.edu"),
      NUM(request, 0, where.line, 1), COUNT(nallows, 1),
      NUM(allow, 0, where.line, 5), COUNT(nexecs, 1),
      NUM(exec, 0, where.line, 8)}},
    /* A quoted string in column 1 cannot be a misspelt keyword: like
     * LDM, it continues the entry above. */
    {"quoted continuation in column 1",
     "EXEC\n"
     "\"pqact\"\n"
     "ALLOW ANY\n"
     "\"^x$\"\n",
     {COUNT(nexecs, 1), STR(exec, 0, command, "pqact"), COUNT(nallows, 1),
      STR(allow, 0, host_ere, "^x$"), NUM(allow, 0, where.line, 3)}},
    /* Spaces, tabs and form feeds separate arguments, in any mixture. */
    {"white space",
     "ALLOW \t\f ANY\f\f^a$ \t  ^b  \t\n"
     "ACCEPT\tWMO\t\t\t.*\t\t^c$\t\n",
     {COUNT(nallows, 1), STR(allow, 0, host_ere, "^a$"),
      STR(allow, 0, ok_ere, "^b"), COUNT(naccepts, 1),
      STR(accept, 0, host_ere, "^c$")}},
    {"comments",
     "# comment\n"
     "#ALLOW ANY ^commented$\n"
     "ALLOW ANY ^a$ # trailing comment\n"
     "ALLOW ANY ^b#c$\n"
     "ALLOW ANY \"^d #e\"#comment\n"
     "    # indented comment\n"
     "EXEC \"pqact\"# comment\n",
     {COUNT(nallows, 3), STR(allow, 0, host_ere, "^a$"),
      NUM(allow, 0, ok_all, true),
      /* '#' inside a string is part of it. */
      STR(allow, 1, host_ere, "^b#c$"), STR(allow, 2, host_ere, "^d #e"),
      COUNT(nexecs, 1), NUM(exec, 0, where.line, 7)}},
    {"quoting",
     "EXEC \"prog -a 'x y'\"\n"
     "ALLOW ANY \"^a b$\" \"say \\\"hi\\\"\" \"back\\\\slash\"\n"
     "ALLOW ANY ^q\\\"uote$\n"
     "ACCEPT ANY \"two\n"
     "lines\" ^h$\n"
     "ALLOW ANY \"\\x\"\n"
     "ALLOW\"WMO\"\"^adjacent$\"\n",
     {COUNT(nexecs, 1), NUM(exec, 0, argc, 3), ARGV(0, 2, "x y"),
      COUNT(nallows, 4), STR(allow, 0, host_ere, "^a b$"),
      /* In quotes a backslash makes the next character literal. */
      STR(allow, 0, ok_ere, "say \"hi\""),
      STR(allow, 0, not_ere, "back\\slash"),
      /* Unquoted, \" is kept as the two characters. */
      STR(allow, 1, host_ere, "^q\\\"uote$"),
      /* A quoted newline is part of the string, and counts as a line. */
      NUM(accept, 0, where.line, 4), STR(accept, 0, pattern, "two\nlines"),
      NUM(allow, 2, where.line, 6), STR(allow, 2, host_ere, "x"),
      /* A keyword directly followed by a quote is still a keyword. */
      NUM(allow, 3, feedtype, PQ_FT_WMO), STR(allow, 3, host_ere, "^adjacent$"),
      NUM(allow, 3, where.line, 7)}},
};
static const bad_case lexical_bad[] = {
    /* POLL is a keyword only as POLL or poll. */
    {"Poll ANY .* h2\n", 1, "expected an entry"},
    /* An indented keyword is a string: first in the file, it is an
     * error. */
    {"  ALLOW ANY ^a$\n", 1,
     "found \"ALLOW\" (keywords must start in column 1)"},
    {"\tEXEC \"pqact\"\n", 1, "column 1"},
    /* After an entry, it is one argument too many, at its own line. */
    {"ALLOW ANY ^a$ .* ^x\n"
     "\tREQUEST ANY .* host\n",
     2, "unexpected \"REQUEST\" after a complete ALLOW entry"},
    /* A word in column 1 that is not a keyword is an error at its line,
     * not arguments of the entry above (LDM would make both words of the
     * misspelt REQUEST patterns of the ALLOW). */
    {"ALLOW ANY ^a$\n"
     "REQEUST ANY\n",
     2, "\"REQEUST\" in column 1 is not a keyword"},
    {"EXEC \"pqact\"\n"
     "# comment\n"
     "\n"
     "EXECUTE \"pqact\"\n",
     4, "\"EXECUTE\" in column 1 is not a keyword"},
    /* So a continuation line must be indented. */
    {"ALLOW ANY\n"
     "^x$\n",
     2,
     "\"^x$\" in column 1 is not a keyword (ALLOW, ACCEPT, EXEC, INCLUDE, "
     "REQUEST): a line that continues an entry must be indented"},
    {"REQUEST\tWMO\t\".*\"\n"
     "upstream.edu\n",
     2, "must be indented"},
    /* A longer word is not a keyword. */
    {"EXECUTE \"pqact\"\n", 1, "found \"EXECUTE\""},
    {"ALLOWED ANY ^a$\n", 1, "ALLOWED"},
    /* A quoted keyword is a string. */
    {"\"EXEC\" \"pqact\"\n", 1, "found \"EXEC\""},
    {"ALLOW ANY ^a$\nEXEC \"pqact\n\n", 2, "quoted string never ends"},
    {"EXEC \"pqact\\\"\n", 1, "never ends"},
    /* A newline in a command is a shell metacharacter to wordexp(). */
    {"EXEC \"two\nlines\"\n", 1, "needs quoting"},
    /* A carriage return is not white space (LDM): the message says why. */
    {"EXEC \"pqact\"\r\nALLOW ANY ^a$\r\n", 1,
     "\"\\r\" after a complete EXEC entry (a carriage return"},
};

static void test_lexical(void **state) {
  RUN_OK(state, lexical_ok);
  RUN_BAD(state, lexical_bad);
  ldm_conf_free(NULL);
}

static void test_sample(void **state) {
  static const ok_case sample = {
      "a typical ldmd.conf",
      "# A typical ldmd.conf\n"
      "EXEC\t\"pqact\"\n"
      "EXEC\t\"rtstats -h rtstats.unidata.ucar.edu\"\n"
      "REQUEST\tIDS|DDPLUS\t\".*\"\tidd.unidata.ucar.edu\n"
      "REQUEST\tNEXRAD3\t\"^SDUS5\"\tidd.example.edu:38801\n"
      "ALLOW\tANY\t^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))$\n"
      "ALLOW\tWMO\t\\.edu$\t^S\t^SAUS\n"
      "ACCEPT\tANY\t.*\t^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))$\n",
      {EMPTY(false), LISTENER(true),
       /* EXEC: the command as written, and its words. */
       COUNT(nexecs, 2), STR(exec, 0, command, "pqact"), NUM(exec, 0, argc, 1),
       ARGV(0, 0, "pqact"), ARGV(0, 1, NULL), NUM(exec, 1, argc, 3),
       ARGV(1, 1, "-h"), ARGV(1, 2, "rtstats.unidata.ucar.edu"),
       NUM(exec, 1, where.line, 3),
       /* REQUEST: IDS|DDPLUS is 0x0b; LDM's port, 388, by default. */
       COUNT(nrequests, 2), COUNT(nrequest_entries, 2),
       NUM(request, 0, feedtype, 0x0b), NUM(request, 0, written, 0x0b),
       STR(request, 0, pattern, ".*"),
       STR(request, 0, host, "idd.unidata.ucar.edu"),
       NUM(request, 0, port, 388), NUM(request, 0, port_given, false),
       NUM(request, 0, ipv6, false), NUM(request, 0, word, LDM_CONF_WORD_NONE),
       NUM(request, 0, primary, true), NUM(request, 0, group_size, 1),
       NUM(request, 0, where.line, 4), NUM(request, 1, feedtype, PQ_FT_NEXRAD3),
       STR(request, 1, host, "idd.example.edu"), NUM(request, 1, port, 38801),
       NUM(request, 1, port_given, true),
       /* ALLOW: without an OK ERE, everything is OK. */
       COUNT(nallows, 2), NUM(allow, 0, feedtype, PQ_FT_ANY),
       STR(allow, 0, host_ere,
           "^((localhost|loopback)|(127\\.0\\.0\\.1\\.?))$"),
       NUM(allow, 0, ok_all, true), STR(allow, 0, ok_ere, ".*"),
       STR(allow, 0, not_ere, NULL), NUM(allow, 1, feedtype, PQ_FT_WMO),
       NUM(allow, 1, ok_all, false), STR(allow, 1, ok_ere, "^S"),
       STR(allow, 1, not_ere, "^SAUS"), NUM(allow, 1, where.line, 7),
       /* ACCEPT */
       COUNT(naccepts, 1), NUM(accept, 0, feedtype, PQ_FT_ANY),
       STR(accept, 0, pattern, ".*"), NUM(accept, 0, where.line, 8),
       COUNT(nwarnings, 0)}};
  ldm_conf *conf = check_ok(*state, __func__, &sample);

  assert_string_equal(conf->requests[0].where.file, conf->files[0]);
  ldm_conf_free(conf);
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

static void test_nul(void **state) {
  scratch *s = *state;
  static const char text[] = "ALLOW ANY ^a$\n\nEXEC \"x\0y\"\n";
  const char *path = put(s, "nul.conf", "");
  char err[ERRLEN];
  ldm_conf *conf;
  FILE *f = fopen(path, "w");

  /* put() writes up to a NUL only: the bytes by hand. */
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
  fclose(f);
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

static const ok_case entries_ok[] = {
    {"ALLOW",
     "ALLOW WMO|NEXRAD3 ^a\\.edu$\n"
     "ALLOW ANY-EXP ^b$ ^SA\n"
     "ALLOW ~WMO ^c$ .* ^X\n"
     "ALLOW conduit+nexrad2 .*\\.edu$ .*SA.* ^\n",
     {COUNT(nallows, 4), NUM(allow, 0, feedtype, 0x0800000f),
      NUM(allow, 0, ok_all, true), NUM(allow, 1, feedtype, 0xbfffffff),
      STR(allow, 1, ok_ere, "^SA"), STR(allow, 1, not_ere, NULL),
      NUM(allow, 2, feedtype, 0xfffffff0), NUM(allow, 2, ok_all, true),
      STR(allow, 2, not_ere, "^X"),
      /* LDM strips leading ".*" from longer EREs, and says so. */
      NUM(allow, 3, feedtype, 0x10001000), STR(allow, 3, host_ere, "\\.edu$"),
      STR(allow, 3, ok_ere, "SA.*"),
      WARNS("ldmd.conf:4: host ERE \".*\\.edu$\" begins with \".*\": "
            "using \"\\.edu$\""),
      WARNS("OK ERE \".*SA.*\"")}},
    /* Patterns real files use compile. */
    {"EREs in use",
     "ALLOW ANY ^[A-Z]{4}[0-9]{2}.KWBC .{1,255} (a+|b*)?c+\n"
     "ALLOW ANY ^[]a[:alpha:][.-.][=e=]]{2,}$ ((((x{9}){9}){9}))\n"
     "ACCEPT ANY \"^(SA|SP)[A-Z]{2}[0-9]{2}\" [{](a){0}b\\{\n",
     {COUNT(nallows, 2), COUNT(naccepts, 1)}},
    /* Not intervals, and brackets with "]", classes and "^". */
    {"ERE brackets",
     "ALLOW ANY a{,5} [^]{}]{2}[[=a=][:digit:]]\n",
     {COUNT(nallows, 1)}},
    /* A backslash then a digit that is no back-reference. */
    {"not back-references",
     "ALLOW ANY ^a\\\\1$ [\\1] []\\2]\\0\n",
     {COUNT(nallows, 1), STR(allow, 0, ok_ere, "[\\1]")}},
    {"ACCEPT",
     "ACCEPT EXP ^TEST ^(pusher)\\.edu$\n"
     "ACCEPT ANY .*FOO .*\n",
     {COUNT(naccepts, 2), NUM(accept, 0, feedtype, PQ_FT_EXP),
      STR(accept, 0, pattern, "^TEST"),
      STR(accept, 0, host_ere, "^(pusher)\\.edu$"),
      /* The pattern is kept as written: it goes back in RECLASS. */
      STR(accept, 1, pattern, ".*FOO"), STR(accept, 1, host_ere, ".*"),
      LISTENER(true)}},
    {"REQUEST hosts",
     "REQUEST ANY ^a host.edu\n"
     "REQUEST ANY ^b host.edu:38800\n"
     "REQUEST ANY ^c 192.168.1.2:0x184\n"
     "REQUEST ANY ^d [::1]\n"
     "REQUEST ANY ^e [::1]:38801\n"
     "REQUEST ANY ^f [2001:db8::10]:0x1000\n"
     "REQUEST ANY ^g [fe80::1%eth0]:388\n"
     "REQUEST ANY ^h host.edu:\n"
     "REQUEST ANY ^i [::ffff:10.0.0.1]\n",
     {COUNT(nrequests, 9), STR(request, 0, host, "host.edu"),
      NUM(request, 0, port, 388), NUM(request, 1, port, 38800),
      NUM(request, 1, port_given, true), STR(request, 2, host, "192.168.1.2"),
      NUM(request, 2, port, 388), NUM(request, 2, port_given, true),
      NUM(request, 2, ipv6, false), STR(request, 3, host, "::1"),
      NUM(request, 3, ipv6, true), NUM(request, 3, port, 388),
      NUM(request, 3, port_given, false), STR(request, 4, host, "::1"),
      NUM(request, 4, port, 38801), STR(request, 5, host, "2001:db8::10"),
      NUM(request, 5, port, 4096), STR(request, 6, host, "fe80::1%eth0"),
      /* An empty port is the default port, as LDM's strtok split has
       * it. */
      STR(request, 7, host, "host.edu"), NUM(request, 7, port, 388),
      NUM(request, 7, port_given, false),
      STR(request, 8, host, "::ffff:10.0.0.1")}},
    /* The word does not set the mode: each is alone in its group. */
    {"REQUEST words",
     "REQUEST WMO ^a h1 PRIMARY\n"
     "REQUEST WMO ^b h1 alternate\n"
     "REQUEST WMO ^c h1 sometimes\n",
     {NUM(request, 0, word, LDM_CONF_WORD_PRIMARY),
      NUM(request, 1, word, LDM_CONF_WORD_ALTERNATE),
      NUM(request, 2, word, LDM_CONF_WORD_OTHER),
      WARNS("ldmd.conf:3: REQUEST field \"sometimes\" ignored"),
      NUM(request, 1, primary, true)}},
    /* LDM: a REQUEST to the same host string and port with the same ERE
     * as earlier ones loses their feedtypes (section 6.2). */
    {"REQUEST reduction",
     "REQUEST WMO .* up.edu\n"
     "REQUEST WMO|NEXRAD3 .* up.edu:388\n"
     "REQUEST IDS .* up.edu\n"
     "REQUEST WMO ^SA up.edu\n"
     "REQUEST WMO .* up.edu:389\n"
     "REQUEST WMO .* UP.edu\n"
     "REQUEST NONE .* other.edu\n"
     "REQUEST ANY .* up.edu\n",
     {COUNT(nrequest_entries, 8), COUNT(nrequests, 6),
      NUM(request, 0, feedtype, PQ_FT_WMO),
      /* Explicit 388 is the same server as the default port. */
      NUM(request, 1, feedtype, PQ_FT_NEXRAD3),
      NUM(request, 1, written, PQ_FT_WMO | PQ_FT_NEXRAD3),
      WARNS("ldmd.conf:2: REQUEST (NEXRAD3|WMO, \".*\") to up.edu:388 "
            "reduced to NEXRAD3"),
      /* IDS is inside WMO: nothing left. */
      WARNS("ldmd.conf:3: REQUEST (IDS, \".*\") to up.edu:388 ignored"),
      /* Another ERE, another port, another host string: no reduction. */
      STR(request, 2, pattern, "^SA"), NUM(request, 2, feedtype, PQ_FT_WMO),
      NUM(request, 3, port, 389), NUM(request, 3, feedtype, PQ_FT_WMO),
      STR(request, 4, host, "UP.edu"), NUM(request, 4, feedtype, PQ_FT_WMO),
      /* NONE asks for nothing. */
      WARNS("ldmd.conf:7: REQUEST (NONE"),
      /* ANY loses WMO and NEXRAD3. */
      NUM(request, 5, feedtype, PQ_FT_ANY & ~(PQ_FT_WMO | PQ_FT_NEXRAD3)),
      NUM(request, 5, where.line, 8), EMPTY(false)}},
    /* Only dropped REQUESTs: still not "effectively empty" (LDM). */
    {"only dropped REQUESTs",
     "REQUEST NONE .* h\n",
     {COUNT(nrequests, 0), EMPTY(false)}},
    /* Section 4.7: same (feedtype, ERE), first one primary. */
    {"REQUEST groups",
     "REQUEST NEXRAD2 .* a.edu\n"
     "REQUEST CONDUIT .* a.edu\n"
     "REQUEST NEXRAD2 .* b.edu\n"
     "REQUEST NEXRAD2 ^L2 c.edu\n"
     "REQUEST NEXRAD2 .* [::1]:3\n"
     "REQUEST CONDUIT .* b.edu PRIMARY\n",
     {COUNT(nrequests, 6),
      /* The first of each group is primary. */
      NUM(request, 0, primary, true), NUM(request, 1, primary, true),
      NUM(request, 2, primary, false), NUM(request, 3, primary, true),
      NUM(request, 4, primary, false), NUM(request, 5, primary, false),
      /* Groups are numbered in order of their first REQUEST. */
      NUM(request, 0, group, 0), NUM(request, 1, group, 1),
      NUM(request, 2, group, 0), NUM(request, 3, group, 2),
      NUM(request, 4, group, 0), NUM(request, 5, group, 1),
      NUM(request, 0, group_size, 3), NUM(request, 2, group_size, 3),
      NUM(request, 4, group_size, 3), NUM(request, 1, group_size, 2),
      NUM(request, 3, group_size, 1),
      WARNS("ldmd.conf:1: 3 REQUESTs ask for (NEXRAD2")}},
    {"RECEIVE and MULTICAST",
     "RECEIVE NEXRAD2 up.edu\n"
     "RECEIVE NEXRAD2 up.edu:388 eth0.1 sw p\n"
     "RECEIVE ANY up.edu eth0.1 sw p 12\n"
     "MULTICAST ANY 224.0.0.1:38800\n"
     "multicast ANY g 1 2 3 4 5 6\n",
     {COUNT(nignored, 5), EMPTY(true),
      WARNS("ldmd.conf:1: RECEIVE entry ignored"),
      WARNS("ldmd.conf:5: MULTICAST entry ignored")}},
};
static const bad_case entries_bad[] = {
    /* ALLOW */
    {"ALLOW ANY\n", 1, "ALLOW needs 2 to 4 arguments"},
    {"\nALLOW\n", 2, "not 0"},
    {"ALLOW ANY ^a$ b c\n  d\n", 2, "unexpected \"d\""},
    {"ALLOW FOO ^a$\n", 1, "bad feedset \"FOO\""},
    {"ALLOW ANY\n ^a$\nALLOW WMO|\n ^b$\n", 3, "bad feedset \"WMO|\""},
    {"ALLOW 3 ^a$\n", 1, "bad feedset \"3\""},
    /* Long strings are cut in messages. */
    {"ALLOW WMO_____________________________________________________"
     "________________________________________________TAIL ^a$\n",
     1, "____...\": "},
    {"ALLOW ANY \"\"\n", 1, "empty host ERE"},
    {"ALLOW ANY ^(a$\n", 1, "bad host ERE \"^(a$\""},
    {"ALLOW ANY ^a$\n  [b\n", 2, "bad OK ERE \"[b\""},
    {"ALLOW ANY ^a$ ^b\n\n   a{2,1}\n", 3, "bad NOT ERE"},
    /* EREs: glibc's regcomp would build an exponential tree for these. */
    {"ALLOW ANY ^a$ \"a++++++++++++++++++++++++++++++\"\n", 1, "too complex"},
    {"ALLOW ANY ^a$ .* ((((((((((((((((((((a+)+)+)+)+)+)+)+)+)+)"
     "+)+)+)+)+)+)+)+)+)+)+\n",
     1, "bad NOT ERE"},
    {"\nREQUEST ANY (((a{100}){100}){100}) host\n", 2,
     "bad product ERE \"(((a{100}){100}){100})\": too complex"},
    {"ALLOW ANY x{32767}{32767}\n", 1, "bad host ERE"},
    {"ALLOW ANY a{x}\n", 1, "bad host ERE \"a{x}\": Invalid"},
    {"ALLOW ANY a{1,2,3}\n", 1, "bad host ERE"},
    {"ALLOW ANY ^a$ [[:alpha\n", 1, "bad OK ERE"},
    /* Open groups count, though the ")" never comes. */
    {"ALLOW ANY x{20000}(x{20000}\n", 1, "too complex"},
    /* Back-references: matched against a peer's strings, glibc's matcher
     * takes exponential time (docs/security.md). */
    {"ALLOW ANY ^a$ (.*)(.*)\\2\\1x\n", 1,
     "bad OK ERE \"(.*)(.*)\\2\\1x\": back-reference \\2"},
    {"ALLOW ANY ^a$ .* (a)\\1\n", 1, "bad NOT ERE"},
    {"ALLOW ANY ^(a)\\1$\n", 1, "bad host ERE"},
    {"\nACCEPT ANY (.*)\\1 ^a$\n", 2, "back-reference \\1"},
    {"REQUEST ANY ^(SA|SD)..\\1 host\n", 1,
     "bad product ERE \"^(SA|SD)..\\1\": back-reference"},
    /* ACCEPT */
    {"ACCEPT ANY .*\n", 1, "ACCEPT needs 3 arguments"},
    {"ACCEPT ANY .* ^a$ ^b\n", 1, "after a complete ACCEPT entry"},
    {"ACCEPT ANY \"\" ^a$\n", 1, "empty product ERE"},
    {"ACCEPT ANY ^a( ^a$\n", 1, "bad product ERE"},
    {"ACCEPT ANY ^a \"\"\n", 1, "empty host ERE"},
    /* EXEC */
    {"EXEC\n", 1, "EXEC needs 1 arguments"},
    {"EXEC pqact -v\n", 1, "unexpected \"-v\""},
    {"EXEC \"\"\n", 1, "empty EXEC command"},
    {"EXEC \"   \"\n", 1, "empty EXEC command"},
    {"EXEC \"prog $(id)\"\n", 1, "command substitution"},
    {"EXEC \"prog `id`\"\n", 1, "command substitution"},
    {"EXEC \"a | b\"\n", 1, "needs quoting"},
    {"EXEC \"a 'b\"\n", 1, "unbalanced quote"},
    /* REQUEST hosts */
    {"REQUEST ANY .* host:0\n", 1, "bad port \"0\""},
    {"REQUEST ANY .* host:65536\n", 1, "not 1-65535"},
    {"REQUEST ANY .* host:38x\n", 1, "bad port \"38x\""},
    {"REQUEST ANY .* host:0388\n", 1, "bad port"},
    {"REQUEST ANY .* :388\n", 1, "no host name"},
    {"REQUEST ANY .* 2001:db8::1\n", 1, "write an IPv6 address in brackets"},
    {"REQUEST ANY .* host:388:1\n", 1, "more than one \":\""},
    {"REQUEST ANY .* [::1\n", 1, "no \"]\""},
    {"REQUEST ANY .* [::1]388\n", 1, "only \":port\" may follow"},
    {"REQUEST ANY .* [host.edu]:388\n", 1, "not an IPv6 address"},
    {"REQUEST ANY .* []\n", 1, "not an IPv6 address"},
    {"REQUEST ANY .* [fe80::1%]\n", 1, "not an IPv6 address"},
    {"REQUEST ANY .* [::1]:0\n", 1, "bad port"},
    {"REQUEST ANY .* \"\"\n", 1, "no host name"},
    /* REQUEST's other fields */
    {"REQUEST ANY .*\n", 1, "REQUEST needs 3 or 4 arguments"},
    {"REQUEST ANY .* h PRIMARY x\n", 1, "unexpected \"x\""},
    {"REQUEST NOSUCH .* h\n", 1, "bad feedset"},
    {"REQUEST ANY \"\" h\n", 1, "empty product ERE"},
    {"REQUEST ANY (( h\n", 1, "bad product ERE \"((\""},
    /* RECEIVE and MULTICAST */
    {"RECEIVE ANY up.edu eth0\n", 1, "RECEIVE needs 2, 5 or 6"},
    {"RECEIVE ANY a b c d e f\n", 1, "unexpected \"f\""},
    {"MULTICAST ANY\n", 1, "MULTICAST needs 2 to 9"},
    /* Each bad line is reported at its own line, whatever comes before. */
    {"stray\n", 1, "expected an entry"},
    {"# c\n\n\"quoted\"\n", 3, "found \"quoted\""},
    {"ALLOW ANY ^a$\n# c\n\nEXEC\n\nALLOW ANY ^b$\n", 4, "EXEC needs 1"},
    {"ALLOW ANY ^a$\n\n\nINCLUDE\n", 4, "INCLUDE needs 1"},
    {"INCLUDE a b\n", 1, "unexpected \"b\""},
    {"EXEC \"x\"\n\"y\"\n", 2, "unexpected \"y\" after a complete EXEC"},
    {"REQUEST WMO\n  .*\n  h\n  PRIMARY\n  extra\n", 5, "unexpected"},
    {"ALLOW ANY \"^a\n\nb$\" (\n", 3, "bad OK ERE \"(\""},
    {"INCLUDE \"\"\n", 1, "empty INCLUDE path"},
};

static void test_entries(void **state) {
  RUN_OK(state, entries_ok);
  RUN_BAD(state, entries_bad);
}

static void test_exec(void **state) {
  static const ok_case ok[] = {
      {"EXEC",
       "EXEC \"pqact -f ANY etc/pqact.conf\"\n"
       "EXEC 'single'\n"
       "EXEC \"prog $LDM_CONF_TEST_VAR 'a b' \\\"c d\\\"\"\n",
       {COUNT(nexecs, 3), NUM(exec, 0, argc, 4), ARGV(0, 3, "etc/pqact.conf"),
        /* Unquoted, the quotes are the shell's. */
        STR(exec, 1, command, "'single'"), ARGV(1, 0, "single"),
        NUM(exec, 2, argc, 4), ARGV(2, 1, "expanded"), ARGV(2, 2, "a b"),
        ARGV(2, 3, "c d"), LISTENER(false), EMPTY(false)}},
  };

  setenv("LDM_CONF_TEST_VAR", "expanded", 1);
  RUN_OK(state, ok);
  unsetenv("LDM_CONF_TEST_VAR");
}

static void test_request_options(void **state) {
  scratch *s = *state;
  char err[ERRLEN], text[400];
  ldm_conf_options opts = {.default_port = 3388};
  const char *path;
  ldm_conf *conf;

  /* The default port can be the server's -P port. */
  path = put(s, "port.conf", "REQUEST ANY .* h\nREQUEST ANY .* h:5\n");
  assert_int_equal(ldm_conf_parse_opts(path, &opts, &conf, err, sizeof err),
                   LDM_CONF_OK);
  assert_int_equal(conf->default_port, 3388);
  assert_int_equal(conf->requests[0].port, 3388);
  assert_int_equal(conf->requests[1].port, 5);
  ldm_conf_free(conf);

  strcpy(text, "REQUEST ANY ");
  memset(text + 12, 'a', PQ_PATTERN_MAX + 1);
  strcpy(text + 12 + PQ_PATTERN_MAX + 1, " h\n");
  parse_bad(s, text, 1, "product ERE longer than 255 characters");
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
/* Certificate identities: "{...}" before a host field (our extension)    */
/* ---------------------------------------------------------------------- */

static void test_ident_parse(void **state) {
  static const ok_case ok = {
      "identities",
      "ALLOW ANY {cn=^b\\.test$}^127\\.0\\.0\\.1$\n"
      "ALLOW IDS {tls}\n"
      "ACCEPT EXP .* {dns=\\.example\\.org$,cert}\n"
      "ACCEPT ANY .* {sha256=" PIN_HEX "}host\n"
      "REQUEST ANY .* {tls}up.example.org:3888\n"
      "REQUEST IDS .* {sha256=00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:"
      "ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff}[::1]\n"
      "REQUEST EXP .* plain.example.org\n",
      /* After an identity, an empty host ERE is any host. */
      {NUM(allow, 0, id.given, true), STR(allow, 0, id.cn_ere, "^b\\.test$"),
       STR(allow, 0, host_ere, "^127\\.0\\.0\\.1$"),
       NUM(allow, 1, id.given, true), STR(allow, 1, id.cn_ere, NULL),
       STR(allow, 1, host_ere, ".*"), NUM(accept, 0, id.cert, true),
       STR(accept, 0, id.dns_ere, "\\.example\\.org$"),
       NUM(accept, 1, id.pin, true), NUM(accept, 1, id.sha256[31], 0xff),
       STR(accept, 1, host_ere, "host"), NUM(request, 0, id.given, true),
       STR(request, 0, host, "up.example.org"), NUM(request, 0, port, 3888),
       NUM(request, 1, id.pin, true), NUM(request, 1, id.sha256[1], 0x11),
       NUM(request, 1, ipv6, true), STR(request, 1, host, "::1"),
       NUM(request, 2, id.given, false)}};
  /* A file without identities is what it was: none asks for TLS. */
  static const ok_case plain = {"no identities",
                                "ALLOW ANY ^a$\nREQUEST ANY .* b\n",
                                {NUM(allow, 0, id.given, false)}};
  static const bad_case bad[] = {
      {"ALLOW ANY {cn=a\n", 1, "no \"}\" after the identity"},
      {"ALLOW ANY {}a\n", 1, "an empty identity"},
      {"ALLOW ANY {tls,}a\n", 1, "an empty identity item"},
      {"ALLOW ANY {,tls}a\n", 1, "an empty identity item"},
      {"ALLOW ANY {cn}a\n", 1, "unknown identity item \"cn\""},
      {"ALLOW ANY {cn=}a\n", 1, "empty cn= ERE"},
      {"ALLOW ANY {cn=(}a\n", 1, "bad cn= ERE \"(\""},
      {"ALLOW ANY {cn=a,cn=b}a\n", 1, "cn= given twice"},
      {"ACCEPT ANY .* {dns=a++++++++++}\n", 1, "too complex"},
      {"ACCEPT ANY .* {cn=(a)\\1}\n", 1, "bad cn= ERE \"(a)\\1\": back-ref"},
      {"ALLOW ANY {sha256=00}a\n", 1, "sha256= wants 64 hex digits"},
      {"ALLOW ANY {sha256=" PIN_HEX "00}a\n", 1, "64 hex digits"},
      {"ALLOW ANY {tls}(\n", 1, "bad host ERE \"(\""},
      {"REQUEST ANY .* {tls}\n", 1, "no host name"},
      {"REQUEST ANY .* {bogus}h\n", 1, "unknown identity item"},
      /* As before, a host ERE cannot begin with '{' (glibc: REG_BADRPT). */
      {"ALLOW ANY .*{a\n", 1, "bad host ERE"},
  };
  ldm_conf *conf = check_ok(*state, __func__, &ok);

  assert_ptr_equal(ldm_conf_tls_entry(conf, false), &conf->allows[0].where);
  assert_ptr_equal(ldm_conf_tls_entry(conf, true), &conf->requests[0].where);
  ldm_conf_free(conf);
  conf = check_ok(*state, __func__, &plain);
  assert_null(ldm_conf_tls_entry(conf, false));
  assert_null(ldm_conf_tls_entry(conf, true));
  ldm_conf_free(conf);
  RUN_BAD(state, bad);
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
      SCRATCH_TEST(test_lexical),       SCRATCH_TEST(test_sample),
      SCRATCH_TEST(test_token_length),  SCRATCH_TEST(test_nul),
      SCRATCH_TEST(test_missing_file),  SCRATCH_TEST(test_entries),
      SCRATCH_TEST(test_exec),          SCRATCH_TEST(test_request_options),
      SCRATCH_TEST(test_include),       SCRATCH_TEST(test_include_errors),
      SCRATCH_TEST(test_include_cycle), SCRATCH_TEST(test_include_depth),
      SCRATCH_TEST(test_ident_parse),   cmocka_unit_test(test_strerror),
  };
  int failed = cmocka_run_group_tests_name("parser", tests, NULL, NULL);

  failed += ldmd_conf_access_tests();
  return failed != 0;
}
