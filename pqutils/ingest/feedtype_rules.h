/*
 * feedtype_rules.h - a NOAAPORT product's LDM feedtype, from its channel,
 * product type and category, by LDM 6.15's rules: the NEXRAD level III
 * test, the HDS test of NMC-channel text (the "ASCII test", with its
 * quirks) and the decision table (docs/noaaport.md, "Feedtypes").
 * Pure functions.
 */
#ifndef PQUTILS_INGEST_FEEDTYPE_RULES_H
#define PQUTILS_INGEST_FEEDTYPE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Adjusted categories LDM uses. */
enum { NP_CAT_NIDS = 99, NP_CAT_HDS_TEXT = 101, NP_CAT_HDS_OTHER = 107 };

/**
 * LDM's ASCII test over a product as it stands at completion: the 11-byte
 * FOS header and the data, without the trailer (n bytes).
 * @return true if the product passes as text
 */
bool np_ascii_text(const uint8_t *buf, size_t n);

/**
 * Whether an NWSTG-path product is NEXRAD level III (category 99): PSH
 * type 5, or CCB mode 2 / submode 0 and the data starting with one of
 * LDM's SDUS prefixes.  data is the first block after the CCB.
 */
bool np_is_nids(int type, int ccb_mode, int ccb_submode, const uint8_t *data,
                size_t n);

/** The feedtype (pq/product.h's PQ_FT_ bits) for a product. */
uint32_t np_feedtype(int datastream, int type, int category);

/** The name LDM's ingester logs for that feedtype ("IDS|DDPLUS", ...). */
const char *np_feedtype_name(uint32_t ft);

#endif
