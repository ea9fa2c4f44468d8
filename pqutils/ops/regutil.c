/*
 * regutil - LDM's registry utility: print, set and remove registry keys,
 * create or reset the registry file.  Same options, output and exit
 * statuses as LDM's regutil, so ldmadmin-style scripts work unchanged
 * (`regutil /queue/size` prints the bare value); plus -f to name the file
 * itself, and -T to print a value read as a size, a boolean or an unsigned
 * integer, so that
 * scripts (ldmadmin) ask the registry's own parsers instead of parsing
 * again.  The registry (ldmd/site/registry.h) checks the values of LDM's own
 * keys, so `regutil -s 2G /queue/size` is taken and `-s abc /server/port`
 * refused.
 *
 * Command-line errors go to stderr beside the usage text; errors about the
 * work go to the logger (stderr).
 */
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "pq/product.h"

/* Exit statuses, as LDM's regutil. */
#define EXIT_USAGE 1
#define EXIT_NOENT 2
#define EXIT_SYSTEM 3

enum action {
  ACT_PRINT,
  ACT_CREATE,
  ACT_RESET,
  ACT_REMOVE,
  ACT_PUT,
  ACT_TYPED, /* -T: print values read as a type */
};

/* -T's types: what each prints. */
enum typed {
  TYPED_SIZE, /* the number of bytes, decimal */
  TYPED_BOOL, /* TRUE or FALSE */
  TYPED_UINT, /* the integer, decimal without leading zeros */
};

struct opts {
  enum action action;
  const char *file; /* -f, or -d dir + "/registry.xml", or NULL */
  const char *dir;
  const char *value; /* ACT_PUT: the value as it will be stored */
  char put_opt;      /* ACT_PUT: which of b, h, s, t, u */
  enum typed typed;  /* ACT_TYPED: -T's type */
  bool quiet;
  char value_buf[64]; /* normalised -b, -h, -u values */
};

static const char *progname = "regutil";

static void usage(void) {
  char def[4096];
  const char *path = ldm_reg_default_path(def, sizeof def);

  fprintf(stderr,
          "usage:\n"
          "  create registry:   %1$s [-v|-x] [-d dir|-f file] -c\n"
          "  reset registry:    %1$s [-v|-x] [-d dir|-f file] -R\n"
          "  print parameters:  %1$s [-v|-x] [-d dir|-f file] [-q] [path ...]\n"
          "  print as a type:   %1$s [-v|-x] [-d dir|-f file] -T type valpath "
          "...\n"
          "  remove parameters: %1$s [-v|-x] [-d dir|-f file] [-q] -r path "
          "...\n"
          "  set parameter:     %1$s [-v|-x] [-d dir|-f file]\n"
          "                       (-b bool|-h sig|-s string|-t time|-u uint) "
          "valpath\n"
          "where:\n"
          "  -b bool    boolean value: TRUE or FALSE\n"
          "  -c         create the registry if it does not exist\n"
          "  -d dir     directory of the registry file registry.xml\n"
          "  -f file    the registry file (default \"%2$s\")\n"
          "  -h sig     data-product signature: 32 hexadecimal digits\n"
          "  -q         say nothing about missing parameters\n"
          "  -R         reset the registry: no parameter set\n"
          "  -r         remove the parameters (and nodes) at the paths\n"
          "  -s string  string value\n"
          "  -T type    print each value read as type: size (in bytes), "
          "bool\n"
          "             (TRUE or FALSE) or uint (decimal)\n"
          "  -t time    time value: YYYYMMDDThhmmss[.uuuuuu]\n"
          "  -u uint    unsigned integer value\n"
          "  -v         log INFO messages\n"
          "  -x         log DEBUG messages\n"
          "  path       absolute path of a parameter or node, such as /queue\n"
          "  valpath    absolute path of a parameter, such as /queue/size\n"
          "environment: LDM_REGISTRY (the file), LDM_REGISTRY_DIR, LDMHOME\n",
          progname, path != NULL ? path : "(too long)");
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt,
                                                             ...) {
  va_list ap;

  fprintf(stderr, "%s: ", progname);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  usage();
  return EXIT_USAGE;
}

/* ---- the value options ---- */

static int digits(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i]))
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* YYYYMMDDThhmmss[.uuuuuu] with every field in range. */
static bool time_valid(const char *s) {
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int year, month, day, hour, min, sec;
  size_t frac;

  if (strlen(s) < 15 || s[8] != 'T')
    return false;
  year = digits(s, 4);
  month = digits(s + 4, 2);
  day = digits(s + 6, 2);
  hour = digits(s + 9, 2);
  min = digits(s + 11, 2);
  sec = digits(s + 13, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 ||
      day > mdays[month - 1] || hour < 0 || hour > 23 || min < 0 || min > 59 ||
      sec < 0 || sec > 60)
    return false;
  if (month == 2 && day == 29 &&
      !(year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)))
    return false;
  if (s[15] == '\0')
    return true;
  frac = strlen(s + 16);
  return s[15] == '.' && frac >= 1 && frac <= 6 &&
         digits(s + 16, (int)frac) >= 0;
}

/* Check the value of -b, -h, -t or -u and put it in the form stored. */
static int value_option(struct opts *o, int opt, const char *arg) {
  if (o->action != ACT_PRINT && o->action != ACT_PUT)
    return usage_error("-%c: one action at a time", opt);
  if (o->action == ACT_PUT)
    return usage_error("-%c: only one of -b, -h, -s, -t, -u", opt);
  o->action = ACT_PUT;
  o->put_opt = (char)opt;
  o->value = arg;
  switch (opt) {
  case 'b': {
    bool b;
    if (ldm_parse_bool(arg, &b) != 0)
      return usage_error("-b %s: not a boolean (TRUE or FALSE)", arg);
    o->value = b ? "TRUE" : "FALSE";
    break;
  }
  case 'h': {
    uint8_t sig[PQ_SIGLEN];
    if (strlen(arg) != 2 * PQ_SIGLEN || pq_sig_parse(arg, sig) != 0)
      return usage_error("-h %s: not a signature (32 hexadecimal digits)", arg);
    pq_sig_format(sig, o->value_buf);
    o->value = o->value_buf;
    break;
  }
  case 't':
    if (!time_valid(arg))
      return usage_error("-t %s: not a time (YYYYMMDDThhmmss[.uuuuuu])", arg);
    break;
  case 'u': {
    uint64_t v;
    if (ldm_parse_uint(arg, &v) != 0)
      return usage_error("-u %s: %s", arg, ldm_uint_problem(arg));
    (void)snprintf(o->value_buf, sizeof o->value_buf, "%" PRIu64, v);
    o->value = o->value_buf;
    break;
  }
  default: /* 's' */
    break;
  }
  return 0;
}

static int typed_option(struct opts *o, const char *arg) {
  if (o->action != ACT_PRINT)
    return usage_error("-T: one action at a time");
  if (strcmp(arg, "size") == 0)
    o->typed = TYPED_SIZE;
  else if (strcmp(arg, "bool") == 0)
    o->typed = TYPED_BOOL;
  else if (strcmp(arg, "uint") == 0)
    o->typed = TYPED_UINT;
  else
    return usage_error("-T %s: not a type (size, bool or uint)", arg);
  o->action = ACT_TYPED;
  return 0;
}

static int action_option(struct opts *o, enum action a, int opt) {
  if (o->action != ACT_PRINT)
    return usage_error("-%c: one action at a time", opt);
  o->action = a;
  return 0;
}

static int parse_options(struct opts *o, int argc, char **argv) {
  int opt, rc = 0;

  opterr = 0;
  while (rc == 0 &&
         (opt = getopt(argc, argv, ":b:cd:f:h:qRrs:T:t:u:vx")) != -1) {
    switch (opt) {
    case 'b':
    case 'h':
    case 's':
    case 't':
    case 'u':
      rc = value_option(o, opt, optarg);
      break;
    case 'T':
      rc = typed_option(o, optarg);
      break;
    case 'c':
      rc = action_option(o, ACT_CREATE, opt);
      break;
    case 'R':
      rc = action_option(o, ACT_RESET, opt);
      break;
    case 'r':
      rc = action_option(o, ACT_REMOVE, opt);
      break;
    case 'd':
      o->dir = optarg;
      break;
    case 'f':
      o->file = optarg;
      break;
    case 'q':
      o->quiet = true;
      break;
    case 'v':
      if (ldm_log_get_level() > LDM_LOG_INFO)
        ldm_log_set_level(LDM_LOG_INFO);
      break;
    case 'x':
      ldm_log_set_level(LDM_LOG_DEBUG);
      break;
    case ':':
      rc = usage_error("-%c needs a value", optopt);
      break;
    default:
      rc = usage_error("unknown option -%c", optopt);
      break;
    }
  }
  if (rc == 0 && o->dir != NULL && o->file != NULL)
    rc = usage_error("-d and -f both name the registry: give one");
  return rc;
}

/* ---- the actions ---- */

static int exit_for(int rc) {
  switch (rc) {
  case LDM_REG_OK:
    return 0;
  case LDM_REG_NOENT:
    return EXIT_NOENT;
  case LDM_REG_EVALUE:
  case LDM_REG_EINVAL:
    return EXIT_USAGE;
  default:
    return EXIT_SYSTEM;
  }
}

struct print_state {
  const char *path;
  unsigned count;
};

static int print_one(const char *key, const char *value, bool is_default,
                     void *arg) {
  struct print_state *ps = arg;

  (void)is_default;
  ps->count++;
  if (strcmp(key, ps->path) == 0) /* a value: bare, for scripts */
    printf("%s\n", value);
  else
    printf("%s : %s\n", key, value);
  return 0;
}

static int print_path(ldm_registry *reg, const char *path, bool quiet) {
  struct print_state ps = {path, 0};
  int rc = ldm_reg_walk(reg, path, print_one, &ps);

  if (rc != LDM_REG_OK) {
    log_error("%s", ldm_reg_error(reg));
    return exit_for(rc);
  }
  if (ps.count == 0) {
    if (!quiet)
      log_error("no such value or node in %s: %s", ldm_reg_path(reg), path);
    return EXIT_NOENT;
  }
  return 0;
}

static int remove_path(ldm_registry *reg, const char *path, bool quiet) {
  int rc = ldm_reg_remove(reg, path);

  if (rc == LDM_REG_OK)
    log_info("removed %s from %s", path, ldm_reg_path(reg));
  else if (rc != LDM_REG_NOENT || !quiet)
    log_error("%s", ldm_reg_error(reg));
  return exit_for(rc);
}

/* Apply fn to each path; the highest status wins (system error, missing
 * entry, usage), and a system error stops the rest. */
static int each_path(ldm_registry *reg, char **paths, int n, bool quiet,
                     int (*fn)(ldm_registry *, const char *, bool)) {
  int status = 0;

  for (int i = 0; i < n && status != EXIT_SYSTEM; i++) {
    int s = fn(reg, paths[i], quiet);
    if (s > status)
      status = s;
  }
  return status;
}

static int put(ldm_registry *reg, const struct opts *o, const char *path) {
  int rc = ldm_reg_set_string(reg, path, o->value);

  if (rc == LDM_REG_OK)
    log_info("set %s to \"%s\" in %s", path, o->value, ldm_reg_path(reg));
  else
    log_error("%s", ldm_reg_error(reg));
  return exit_for(rc);
}

/* -T: the value at path read as the type, by the registry's typed getters
 * (a key's default if the file does not set it). */
static int print_typed(ldm_registry *reg, enum typed t, const char *path) {
  uint64_t n = 0;
  bool b = false;
  int rc = t == TYPED_SIZE   ? ldm_reg_get_size(reg, path, &n)
           : t == TYPED_UINT ? ldm_reg_get_uint(reg, path, &n)
                             : ldm_reg_get_bool(reg, path, &b);

  if (rc == LDM_REG_NOENT) {
    log_error("no such value in %s: %s", ldm_reg_path(reg), path);
    return EXIT_NOENT;
  }
  if (rc != LDM_REG_OK) {
    log_error("%s", ldm_reg_error(reg));
    return exit_for(rc);
  }
  if (t == TYPED_BOOL)
    puts(b ? "TRUE" : "FALSE");
  else
    printf("%" PRIu64 "\n", n);
  return 0;
}

static int create(const char *path, bool reset) {
  char err[1024];
  int rc = ldm_reg_create(path, reset, err, sizeof err);

  if (rc != LDM_REG_OK)
    log_error("%s", err);
  return exit_for(rc);
}

int main(int argc, char **argv) {
  struct opts o = {.action = ACT_PRINT};
  char pathbuf[4096];
  const char *path;
  ldm_registry *reg;
  char err[1024];
  char *root[] = {"/"};
  int nargs, rc;

  const char *slash = strrchr(argv[0], '/');
  progname = slash != NULL ? slash + 1 : argv[0];
  ldm_log_init(progname);
  (void)ldm_log_set_destination("-");
  if ((rc = parse_options(&o, argc, argv)) != 0)
    return rc;
  nargs = argc - optind;

  path = o.file;
  if (o.dir != NULL) {
    int n = snprintf(pathbuf, sizeof pathbuf, "%s/registry.xml", o.dir);
    if (n < 0 || (size_t)n >= sizeof pathbuf)
      return usage_error("-d %s: too long", o.dir);
    path = pathbuf;
  }

  switch (o.action) {
  case ACT_CREATE:
  case ACT_RESET:
    if (nargs > 0)
      return usage_error("-%c takes no paths",
                         o.action == ACT_CREATE ? 'c' : 'R');
    return create(path, o.action == ACT_RESET);
  case ACT_REMOVE:
    if (nargs == 0)
      return usage_error("-r needs the paths to remove");
    break;
  case ACT_PUT:
    if (nargs != 1)
      return usage_error("-%c needs exactly one valpath", o.put_opt);
    break;
  case ACT_TYPED:
    if (nargs == 0)
      return usage_error("-T needs the valpaths to print");
    break;
  case ACT_PRINT:
    break;
  }

  rc = ldm_reg_open(path, &reg, err, sizeof err);
  if (rc != LDM_REG_OK) {
    log_error("%s", err);
    return exit_for(rc);
  }
  log_debug("registry %s", ldm_reg_path(reg));
  switch (o.action) {
  case ACT_REMOVE:
    rc = each_path(reg, argv + optind, nargs, o.quiet, remove_path);
    break;
  case ACT_PUT:
    rc = put(reg, &o, argv[optind]);
    break;
  case ACT_TYPED:
    rc = 0;
    for (int i = optind; i < argc && rc == 0; i++)
      rc = print_typed(reg, o.typed, argv[i]);
    break;
  default:
    rc = nargs == 0 ? each_path(reg, root, 1, o.quiet, print_path)
                    : each_path(reg, argv + optind, nargs, o.quiet, print_path);
    break;
  }
  ldm_reg_close(reg);
  if (fflush(stdout) != 0) {
    log_error("write standard output: %s", strerror(errno));
    rc = EXIT_SYSTEM;
  }
  return rc;
}
