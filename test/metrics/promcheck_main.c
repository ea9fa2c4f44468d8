/*
 * promcheck_main.c - promcheck [FILE]: check Prometheus text (a file, or
 * stdin) with the strict checker of promcheck.h; exit 0 and print the
 * number of samples when it is well-formed, else 1 and say why.  For the
 * metrics integration test (test/metrics/endpoint.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/metrics/promcheck.h"

int main(int argc, char **argv) {
  FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
  char *text = NULL, err[1024];
  size_t len = 0, cap = 0, n;
  int ch;

  if (in == NULL) {
    fprintf(stderr, "promcheck: cannot open %s: %s\n", argv[1],
            strerror(errno));
    return 2;
  }
  while ((ch = fgetc(in)) != EOF) {
    if (len + 2 > cap) {
      cap = cap == 0 ? 65536 : cap * 2;
      char *more = realloc(text, cap);

      if (more == NULL) {
        free(text);
        return 2;
      }
      text = more;
    }
    text[len++] = (char)ch;
  }
  if (text == NULL)
    text = calloc(1, 1);
  text[len] = '\0';
  if (argc > 1)
    fclose(in);
  if (promcheck(text, &n, err, sizeof err) != 0) {
    fprintf(stderr, "promcheck: %s\n", err);
    free(text);
    return 1;
  }
  printf("%zu samples\n", n);
  free(text);
  return 0;
}
