/*
 * pqing_tty.c - the serial line's settings (pqing_tty.h), with termios.
 */
#include "pqutils/wmo/pqing_tty.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const struct {
  unsigned baud;
  speed_t code;
} speeds[] = {{50, B50},       {75, B75},        {110, B110},
              {134, B134},     {150, B150},      {200, B200},
              {300, B300},     {600, B600},      {1200, B1200},
              {1800, B1800},   {2400, B2400},    {4800, B4800},
              {9600, B9600},   {19200, B19200},  {38400, B38400},
              {57600, B57600}, {115200, B115200}};

static bool speed_code(unsigned baud, speed_t *code) {
  for (size_t i = 0; i < sizeof speeds / sizeof speeds[0]; i++)
    if (speeds[i].baud == baud) {
      *code = speeds[i].code;
      return true;
    }
  return false;
}

bool pqing_tty_speed_ok(unsigned baud) {
  speed_t code;
  return speed_code(baud, &code);
}

int pqing_tty_setup(struct pqing_tty *t, int fd, unsigned baud,
                    const char *parity, bool flow_control) {
  speed_t speed;
  if (!speed_code(baud, &speed))
    return EINVAL;
  struct termios tio;
  if (ioctl(fd, TIOCEXCL, NULL) != 0 || tcgetattr(fd, &tio) != 0)
    return errno;
  t->saved = tio;
  tcflag_t par = 0;
  if (parity != NULL && (parity[0] == 'e' || parity[0] == 'E'))
    par = PARENB;
  else if (parity != NULL && (parity[0] == 'o' || parity[0] == 'O'))
    par = PARENB | PARODD;
  cfmakeraw(&tio);
  tio.c_cflag &= ~(tcflag_t)(HUPCL | CSIZE | PARENB | PARODD | CSTOPB);
  tio.c_cflag |= CLOCAL | CREAD | par | (par ? CS7 : CS8);
  tio.c_iflag &= ~(tcflag_t)(BRKINT | ICRNL | IGNCR | IGNPAR | INLCR | ISTRIP |
                             IXOFF | IXON | PARMRK);
  tio.c_iflag |=
      IGNBRK | (flow_control ? IXOFF : 0) | (par ? (INPCK | ISTRIP) : 0);
  tio.c_cc[VMIN] = 1;
  tio.c_cc[VTIME] = 0;
  if (cfsetispeed(&tio, speed) != 0 || cfsetospeed(&tio, speed) != 0 ||
      tcsetattr(fd, TCSAFLUSH, &tio) != 0)
    return errno;
  t->fd = fd;
  return 0;
}

int pqing_tty_open(struct pqing_tty *t, const char *path, unsigned baud,
                   const char *parity, bool flow_control) {
  if (!pqing_tty_speed_ok(baud))
    return EINVAL;
  int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return errno;
  int err = pqing_tty_setup(t, fd, baud, parity, flow_control);
  if (err != 0)
    close(fd);
  return err;
}

void pqing_tty_close(struct pqing_tty *t) {
  if (t->fd < 0)
    return;
  (void)tcsetattr(t->fd, TCSAFLUSH, &t->saved);
  close(t->fd);
  t->fd = -1;
}
