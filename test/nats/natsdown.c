/*
 * natsdown.c - pq2nats's connection (ldmnats_connect_own()) when the server
 * goes away: a publish made once the connection broke must never reach
 * the next server, as libnats's reconnection buffer would send it, ahead
 * of the messages the break lost that pq2nats publishes again (pq2nats.1:
 * the stream keeps the queue's order across a server's restart).
 *
 *   natsdown [-a] URL SUBJECT
 *     connects (-a: as ldmnats_connect(), which libnats reconnects, to
 *     show what the test catches), prints "up", and reads a line (the
 *     test stops the server); waits up to 20 s for the connection to
 *     break, publishes one message on SUBJECT, prints "refused" or
 *     "accepted", and reads a line (the test starts the server again);
 *     then connects again (-a: waits for libnats's reconnection), flushes,
 *     and prints "done".
 *
 * Exit 0, 1 on a usage error, 2 when something else failed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <nats/nats.h>

#include "pqutils/common/cli.h"
#include "pqutils/nats/ldmnats.h"

/* Wait up to s seconds for the connection to be up (want) or not. */
static bool wait_for(const struct ldmnats_conn *conn, bool want, double s) {
  double end = cli_monotonic() + s;
  while (ldmnats_connected(conn) != want) {
    if (cli_monotonic() > end)
      return false;
    cli_sleep(0.01); /* polling a state libnats tells no one of */
  }
  return true;
}

int main(int argc, char **argv) {
  bool aut = argc == 4 && strcmp(argv[1], "-a") == 0;
  if (argc != 3 + aut) {
    fprintf(stderr, "usage: natsdown [-a] URL SUBJECT\n");
    return 1;
  }
  ldmnats_init();
  struct ldmnats_opts o = {.url = argv[1 + aut],
                           .stream = "",
                           .prefix = "",
                           .creds = "",
                           .token = "",
                           .token_file = "",
                           .ca = "",
                           .cert = "",
                           .key = ""};
  struct ldmnats_conn conn;
  int rc = aut ? ldmnats_connect(&o, "natsdown", NULL, &conn)
               : ldmnats_connect_own(&o, "natsdown", NULL, false, &conn);
  if (rc != 0)
    return 2;
  char line[64];
  printf("up\n");
  fflush(stdout);
  if (fgets(line, sizeof line, stdin) == NULL || !wait_for(&conn, false, 20)) {
    fprintf(stderr, "natsdown: the connection did not break\n");
    return 2;
  }
  natsStatus s =
      natsConnection_PublishString(conn.nc, argv[2 + aut], "after the break");
  printf("%s\n", s == NATS_OK ? "accepted" : "refused");
  fflush(stdout);
  if (fgets(line, sizeof line, stdin) == NULL)
    return 2;
  if (aut) {
    if (!wait_for(&conn, true, 30))
      return 2;
  } else {
    ldmnats_close(&conn);
    if (ldmnats_connect_own(&o, "natsdown", NULL, true, &conn) != 0)
      return 2;
  }
  if (natsConnection_FlushTimeout(conn.nc, 10000) != NATS_OK)
    return 2;
  printf("done\n");
  fflush(stdout);
  ldmnats_close(&conn);
  return 0;
}
