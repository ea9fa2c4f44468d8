/*
 * ldm6_text.h - text forms of LDM-6 wire values, for log messages.
 */
#ifndef LDMD_PROTO_LDM6_TEXT_H
#define LDMD_PROTO_LDM6_TEXT_H

#include <stddef.h>

#include "ldmd/proto/ldm6_xdr.h"

/**
 * LDM's text of a class (its s_prod_class), for log messages:
 * "<from> <to> {{FEEDTYPE, \"ERE\"},...}".  Always NUL-terminates when
 * len > 0; a text that does not fit is cut.  Thread-safe.
 * @return the length of the whole text, as snprintf (negative on an
 *         output error)
 */
int ldm6_class_format(const ldm6_prod_class *cls, char *buf, size_t len);

#endif /* LDMD_PROTO_LDM6_TEXT_H */
