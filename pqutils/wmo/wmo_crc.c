/*
 * wmo_crc.c - the CRC-16 of HDS messages (wmo_crc.h): reflected, polynomial
 * 0x8005 (0xA001 reflected), a bit at a time: HDS comes at serial speeds,
 * and eight shifts a byte cost nothing next to the queue.
 */
#include "pqutils/wmo/wmo_crc.h"

uint16_t wmo_crc_add(uint16_t crc, uint8_t byte) {
  unsigned c = crc ^ byte;
  for (int k = 0; k < 8; k++)
    c = (c & 1u) ? (c >> 1) ^ 0xA001u : c >> 1;
  return (uint16_t)c;
}

uint16_t wmo_crc(uint16_t crc, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    crc = wmo_crc_add(crc, p[i]);
  return crc;
}

void wmo_crc_check_bytes(uint16_t crc, uint8_t out[2]) {
  out[0] = (uint8_t)(crc & 0xFFu);
  out[1] = (uint8_t)(crc >> 8);
}
