/*
 * wmo_crc.h - the CRC-16 of an HDS message (pqing's -c check): the
 * reflected CRC-16 of polynomial 0x8005 ("CRC-16/ARC": initial value 0,
 * no final XOR), computed from the SOH through the two check bytes that
 * follow the ETX, which the sender chose so that the whole comes out zero
 * (docs/pqing.md, "Framing").  Pure functions.
 */
#ifndef PQUTILS_WMO_WMO_CRC_H
#define PQUTILS_WMO_WMO_CRC_H

#include <stddef.h>
#include <stdint.h>

/** The CRC after one more byte. */
uint16_t wmo_crc_add(uint16_t crc, uint8_t byte);

/** The CRC of p[0, n) from crc (0 to start). */
uint16_t wmo_crc(uint16_t crc, const uint8_t *p, size_t n);

/** The two check bytes that make the CRC of a message whose CRC is crc
 *  come out zero: low byte first. */
void wmo_crc_check_bytes(uint16_t crc, uint8_t out[2]);

#endif
