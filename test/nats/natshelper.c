/*
 * natshelper.c - what the bridge's tests need of a server that pq2nats and
 * nats2pq do not do: publish one message of our making, with the headers
 * and body a test gives (a product message with a wrong header, chunks
 * that do not add up), so that nats2pq's refusals are tested against a
 * real server.
 *
 *   natshelper pub URL SUBJECT DATAFILE [NAME=VALUE...]
 *     JetStream publish of DATAFILE's bytes ("-": none) on SUBJECT with
 *     the headers given; waits for the stream's acknowledgement; prints
 *     the stream sequence.
 *
 * Exit 0 on success, 1 on a usage error, 2 when the server failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nats/nats.h>

static int usage(void) {
  fprintf(stderr,
          "usage: natshelper pub URL SUBJECT DATAFILE [NAME=VALUE...]\n");
  return 1;
}

/* The whole file, or NULL with *len 0 for "-". */
static char *slurp(const char *path, size_t *len) {
  *len = 0;
  if (strcmp(path, "-") == 0)
    return NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    exit(1);
  }
  size_t cap = 1 << 16;
  char *buf = malloc(cap);
  size_t n;
  while (buf != NULL && (n = fread(buf + *len, 1, cap - *len, f)) > 0) {
    *len += n;
    if (*len == cap) {
      char *more = realloc(buf, cap *= 2);
      if (more == NULL)
        free(buf);
      buf = more;
    }
  }
  if (buf == NULL || ferror(f)) {
    fprintf(stderr, "natshelper: reading %s failed\n", path);
    exit(1);
  }
  fclose(f);
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[1], "pub") != 0)
    return usage();
  size_t len;
  char *data = slurp(argv[4], &len);
  natsConnection *nc = NULL;
  jsCtx *js = NULL;
  natsMsg *m = NULL;
  jsPubAck *ack = NULL;
  jsErrCode jerr = 0;
  natsStatus s = natsConnection_ConnectTo(&nc, argv[2]);
  if (s == NATS_OK)
    s = natsConnection_JetStream(&js, nc, NULL);
  if (s == NATS_OK)
    s = natsMsg_Create(&m, argv[3], NULL, data, (int)len);
  for (int i = 5; s == NATS_OK && i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (eq == NULL)
      return usage();
    *eq = '\0';
    s = natsMsgHeader_Add(m, argv[i], eq + 1);
  }
  if (s == NATS_OK)
    s = js_PublishMsg(&ack, js, m, NULL, &jerr);
  if (s != NATS_OK) {
    fprintf(stderr, "natshelper: publish on %s failed: %s (%d)\n", argv[3],
            natsStatus_GetText(s), (int)jerr);
    return 2;
  }
  printf("%llu\n", (unsigned long long)ack->Sequence);
  jsPubAck_Destroy(ack);
  natsMsg_Destroy(m);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  free(data);
  return 0;
}
