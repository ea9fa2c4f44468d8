/*
 * grib1_tables.c - the GRIB edition 1 naming tables (grib1_tables.h), read
 * once from their embedded copies (np_tables.h).  The level templates are
 * formatted by a small interpreter of their own: the conversions %d and
 * %.<n>f, and arguments of the form "x", "x op y" over v (octets 11 and 12
 * as one number), a and b (each octet) and numbers, with C's int and
 * double arithmetic.
 */
#include "pqutils/ingest/grib1_tables.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/ingest/code_table.h"
#include "pqutils/ingest/np_tables.h"

#define MODEL_ROWS 160
#define NAME_MAX_LEN 16
#define TEXT_MAX_LEN 32

/* A grib-models.tsv row: -1 stands for "*". */
struct model_row {
  int centre, process;
  char model[NAME_MAX_LEN];
  bool decimal; /* "<process number in decimal>" */
};

static struct {
  struct np_code_table centres;
  struct model_row models[MODEL_ROWS];
  size_t nmodels;
  char params[NP_G1_NTABLES][256][NAME_MAX_LEN];
  char level_text[256][TEXT_MAX_LEN], level_args[256][TEXT_MAX_LEN];
} tb;

static pthread_once_t tb_once = PTHREAD_ONCE_INIT;

static const char *const param_files[NP_G1_NTABLES] = {
    "grib1-params-ncep-opn.tsv", "grib1-params-ncep-reanal.tsv",
    "grib1-params-ncep-omb.tsv", "grib1-params-ecmwf-128.tsv",
    "grib1-params-ecmwf-160.tsv"};

static void load_models(void) {
  struct np_tsv r;
  if (!np_tsv_find(&r, "grib-models.tsv"))
    return;
  struct np_field f[3];
  while (tb.nmodels < MODEL_ROWS && np_tsv_row(&r, f, 3) == 3) {
    struct model_row *m = &tb.models[tb.nmodels++];
    m->centre = (int)np_field_long(&f[0], -1);
    m->process = (int)np_field_long(&f[1], -1);
    np_field_copy(&f[2], m->model, sizeof m->model);
    m->decimal = f[2].n > 0 && f[2].s[0] == '<';
  }
}

static void load_params(enum np_g1_ptable k) {
  for (int i = 0; i < 256; i++)
    snprintf(tb.params[k][i], NAME_MAX_LEN, "var%d", i);
  struct np_tsv r;
  if (!np_tsv_find(&r, param_files[k]))
    return;
  struct np_field f[3];
  while (np_tsv_row(&r, f, 3) >= 2) {
    long num = np_field_long(&f[0], -1);
    if (num >= 0 && num <= 255)
      np_field_copy(&f[1], tb.params[k][num], NAME_MAX_LEN);
  }
}

static void load_levels(void) {
  struct np_tsv r;
  if (!np_tsv_find(&r, "grib1-levels.tsv"))
    return;
  struct np_field f[3];
  while (np_tsv_row(&r, f, 3) >= 2) {
    long type = np_field_long(&f[0], -1);
    if (type < 0 || type > 255)
      continue; /* "*": any other type has no text */
    np_field_copy(&f[1], tb.level_text[type], TEXT_MAX_LEN);
    if (f[2].n > 0)
      np_field_copy(&f[2], tb.level_args[type], TEXT_MAX_LEN);
  }
}

static void load_tables(void) {
  np_code_table_load(&tb.centres, "grib-centers.tsv");
  load_models();
  for (int k = 0; k < NP_G1_NTABLES; k++)
    load_params((enum np_g1_ptable)k);
  load_levels();
}

bool np_g1_centre(int centre, char *out, size_t size) {
  pthread_once(&tb_once, load_tables);
  return np_code_name(&tb.centres, centre, out, size);
}

/* A model row's name for process p: "<process>" becomes its number. */
static void model_text(const struct model_row *m, int p, char *out,
                       size_t size) {
  const char *at = strstr(m->model, "<process>");
  if (at == NULL) {
    snprintf(out, size, "%s", m->model);
    return;
  }
  snprintf(out, size, "%.*s%d%s", (int)(at - m->model), m->model, p,
           at + strlen("<process>"));
}

bool np_g1_model(int centre, int process, char *out, size_t size) {
  pthread_once(&tb_once, load_tables);
  for (size_t i = 0; i < tb.nmodels; i++) {
    const struct model_row *m = &tb.models[i];
    if ((m->centre != -1 && m->centre != centre) ||
        (m->process != -1 && m->process != process))
      continue;
    if (m->decimal)
      break;
    model_text(m, process, out, size);
    return false;
  }
  snprintf(out, size, "%d", process);
  return true;
}

const char *np_g1_param(enum np_g1_ptable t, int param) {
  pthread_once(&tb_once, load_tables);
  if ((unsigned)t >= NP_G1_NTABLES || param < 0 || param > 255)
    return "";
  return tb.params[t][param];
}

/* A number of a level argument, with C's type: int or double. */
struct num {
  bool dbl;
  long i;
  double d;
};

static double as_double(struct num x) {
  return x.dbl ? x.d : (double)x.i;
}

/* One term: v, a, b or a literal; *s moves past it. */
static struct num term(const char **s, int v, int a, int b) {
  struct num x = {false, 0, 0};
  while (**s == ' ')
    (*s)++;
  if (**s == 'v' || **s == 'a' || **s == 'b') {
    x.i = **s == 'v' ? v : **s == 'a' ? a : b;
    (*s)++;
    return x;
  }
  char *end;
  x.i = strtol(*s, &end, 10);
  if (*end == '.') {
    x.dbl = true;
    x.d = strtod(*s, &end);
  }
  *s = end != *s ? end : *s + (**s != '\0');
  return x;
}

static struct num apply(struct num x, char op, struct num y) {
  struct num r = {x.dbl || y.dbl, 0, 0};
  if (r.dbl) {
    double p = as_double(x), q = as_double(y);
    r.d = op == '*' ? p * q : op == '/' ? p / q : op == '+' ? p + q : p - q;
  } else if (op == '/') {
    r.i = y.i != 0 ? x.i / y.i : 0;
  } else {
    r.i = op == '*' ? x.i * y.i : op == '+' ? x.i + y.i : x.i - y.i;
  }
  return r;
}

/* One argument, "x" or "x op y"; *s moves past it and its comma. */
static struct num argument(const char **s, int v, int a, int b) {
  struct num x = term(s, v, a, b);
  while (**s == ' ')
    (*s)++;
  if (**s != '\0' && strchr("*/+-", **s) != NULL) {
    char op = *(*s)++;
    x = apply(x, op, term(s, v, a, b));
  }
  while (**s == ' ' || **s == ',')
    (*s)++;
  return x;
}

/* Format one conversion at *t ("%d" or "%.<n>f") of x into out. */
static void conversion(const char **t, struct num x, char *out, size_t size) {
  const char *c = *t + 1;
  int prec = 6;
  if (*c == '.') {
    char *end;
    prec = (int)strtol(c + 1, &end, 10);
    c = end;
    if (prec < 0 || prec > 20)
      prec = 6;
  }
  if (*c == 'd') {
    snprintf(out, size, "%ld", x.dbl ? (long)x.d : x.i);
  } else if (*c == 'f') {
    snprintf(out, size, "%.*f", prec, as_double(x));
  } else {
    snprintf(out, size, "%%");
    *t += 1;
    return;
  }
  *t = c + 1;
}

void np_g1_level(int ltype, int o11, int o12, char *out, size_t size) {
  pthread_once(&tb_once, load_tables);
  out[0] = '\0';
  if (ltype < 0 || ltype > 255 || size == 0)
    return;
  const char *t = tb.level_text[ltype], *args = tb.level_args[ltype];
  size_t len = 0;
  while (*t != '\0' && len + 1 < size) {
    if (*t != '%' || t[1] == '%') {
      out[len++] = *t;
      t += *t == '%' ? 2 : 1;
      out[len] = '\0';
      continue;
    }
    struct num x = argument(&args, o11 * 256 + o12, o11, o12);
    conversion(&t, x, out + len, size - len);
    len += strlen(out + len);
  }
}
