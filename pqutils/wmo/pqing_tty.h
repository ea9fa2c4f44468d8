/*
 * pqing_tty.h - pqing's serial line: opened exclusively and set raw at the
 * speed and parity asked for (seven data bits with parity, eight without),
 * with XON/XOFF when -F is given; a parity or framing error then reads as a
 * NUL byte, which the checking scanners look for (docs/pqing.md, "Serial
 * lines").  The settings found are put back at close.
 */
#ifndef PQUTILS_WMO_PQING_TTY_H
#define PQUTILS_WMO_PQING_TTY_H

#include <stdbool.h>
#include <termios.h>

struct pqing_tty {
  int fd;
  struct termios saved;
};

/** Is the speed one the terminal interface knows (50 to 115200)? */
bool pqing_tty_speed_ok(unsigned baud);

/**
 * Open the terminal at path and set it up.
 * @param parity  "even", "odd" or "none" (only the first letter counts,
 *                as in LDM; anything else is none)
 * @return 0 with t->fd set, or an errno value (nothing logged)
 */
int pqing_tty_open(struct pqing_tty *t, const char *path, unsigned baud,
                   const char *parity, bool flow_control);

/**
 * Set up the terminal open at fd (pqing_tty_open()'s work after the open):
 * exclusive, raw, speed, parity, flow control; the settings found go to
 * t->saved.
 * @return 0, or an errno value
 */
int pqing_tty_setup(struct pqing_tty *t, int fd, unsigned baud,
                    const char *parity, bool flow_control);

/** Put the saved settings back and close. */
void pqing_tty_close(struct pqing_tty *t);

#endif
