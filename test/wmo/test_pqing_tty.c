/*
 * test_pqing_tty.c - pqing's serial-line settings (pqutils/wmo/pqing_tty.c)
 * on a pseudo-terminal, reached by descriptor (TIOCGPTPEER), so that the
 * test runs where the pseudo-terminals have no path too (serial.sh needs
 * one): raw, eight bits without parity, parity checked on input with it
 * (a pseudo-terminal keeps its own size and parity bits), the speed, XON/XOFF
 * with -F, the bytes written at the other end read back unchanged, and the
 * settings found put back at close.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "pqutils/wmo/pqing_tty.h"

/* A pseudo-terminal: its master and its terminal end. */
static void open_pty(int *master, int *slave) {
  *master = posix_openpt(O_RDWR | O_NOCTTY);
  assert_true(*master >= 0);
  assert_int_equal(grantpt(*master), 0);
  assert_int_equal(unlockpt(*master), 0);
  *slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
  assert_true(*slave >= 0);
}

static void test_raw_no_parity(void **state) {
  (void)state;
  int m, s;
  open_pty(&m, &s);
  struct termios before;
  assert_int_equal(tcgetattr(s, &before), 0);
  assert_true(before.c_lflag & ICANON); /* a fresh terminal is cooked */
  struct pqing_tty t = {.fd = -1};
  assert_int_equal(pqing_tty_setup(&t, s, 19200, "none", false), 0);
  struct termios tio;
  assert_int_equal(tcgetattr(s, &tio), 0);
  assert_int_equal(tio.c_cflag & CSIZE, CS8);
  assert_false(tio.c_cflag & PARENB);
  assert_false(tio.c_lflag & (ICANON | ECHO | ISIG));
  assert_false(tio.c_iflag & (ICRNL | ISTRIP | IXON | IXOFF));
  assert_int_equal(cfgetispeed(&tio), B19200);
  /* Bytes through unchanged: CR, NUL, SOH, bytes above 0x7f. */
  static const uint8_t bytes[] = {0x01, '\r', '\r', '\n', 0x00, 0x03, 0xff};
  assert_int_equal(write(m, bytes, sizeof bytes), (ssize_t)sizeof bytes);
  uint8_t got[sizeof bytes];
  size_t have = 0;
  while (have < sizeof got) {
    ssize_t n = read(s, got + have, sizeof got - have);
    assert_true(n > 0);
    have += (size_t)n;
  }
  assert_memory_equal(got, bytes, sizeof bytes);
  pqing_tty_close(&t);
  assert_int_equal(t.fd, -1);
  close(m);
}

static void test_parity_and_flow(void **state) {
  (void)state;
  int m, s;
  open_pty(&m, &s);
  struct pqing_tty t = {.fd = -1};
  assert_int_equal(pqing_tty_setup(&t, s, 9600, "even", true), 0);
  struct termios tio;
  assert_int_equal(tcgetattr(s, &tio), 0);
  /* A pseudo-terminal keeps its own character size and parity bits
   * (Linux's copies them back), so only the input side shows here. */
  assert_true(tio.c_iflag & INPCK);
  assert_true(tio.c_iflag & ISTRIP);
  assert_true(tio.c_iflag & IXOFF);
  assert_int_equal(cfgetispeed(&tio), B9600);
  pqing_tty_close(&t);
  close(m);

  open_pty(&m, &s);
  assert_int_equal(pqing_tty_setup(&t, s, 4800, "odd", false), 0);
  assert_int_equal(tcgetattr(s, &tio), 0);
  assert_true(tio.c_iflag & INPCK);
  assert_false(tio.c_iflag & IXOFF);
  pqing_tty_close(&t);
  close(m);
}

static void test_speeds(void **state) {
  (void)state;
  assert_true(pqing_tty_speed_ok(1200));
  assert_true(pqing_tty_speed_ok(115200));
  assert_false(pqing_tty_speed_ok(1234));
  int m, s;
  open_pty(&m, &s);
  struct pqing_tty t = {.fd = -1};
  assert_int_equal(pqing_tty_setup(&t, s, 1234, "none", false), EINVAL);
  close(s);
  close(m);
  /* A path that is no terminal. */
  assert_int_equal(pqing_tty_open(&t, "/dev/null", 9600, "none", false),
                   ENOTTY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_raw_no_parity),
      cmocka_unit_test(test_parity_and_flow),
      cmocka_unit_test(test_speeds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
