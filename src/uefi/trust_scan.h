/* Embedded trust found by what the bytes are, not by what a section is
 * called. shim reaches its struct cert_table through its own code and
 * firmware ignores section names, so a .vendor_cert renamed, or a decoy
 * of that name put first, must not hide what an image trusts.
 *
 * Over one run of bytes (a PE section, or the headers) this finds:
 * - every X.509 certificate, at any offset: each 0x30 byte whose header
 *   OpenSSL reads as a SEQUENCE holding a SEQUENCE (what every
 *   Certificate starts with), confirmed by d2i_X509. The lead is every
 *   length form OpenSSL accepts, not only shim's "30 82 LL LL";
 * - every EFI signature list of a type firmware or shim read (X.509,
 *   SHA-1/256/384/512, X.509 TBS hash), found by its type GUID and
 *   confirmed by esl_walk over exactly the size it claims;
 * - every shim cert_table: four little-endian words at a 4-aligned
 *   offset (authorized size, deauthorized size, and each one's offset
 *   from the table) whose non-empty blobs each start at a certificate or
 *   list found here and lie inside the bytes;
 * - whether the bytes name the MOK variables only shim itself creates,
 *   the runtime mirrors (L"MokListRT", L"MokListXRT", L"MokSBStateRT").
 *
 * Each candidate costs a header read or a GUID compare; d2i_X509 runs
 * only where a SEQUENCE holds a SEQUENCE. At most TRUST_SCAN_MAX_ITEMS
 * certificates and lists are kept: more is an error, not a silent cut. */
#ifndef RS_UEFI_TRUST_SCAN_H
#define RS_UEFI_TRUST_SCAN_H

#include <openssl/x509.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define TRUST_SCAN_MAX_ITEMS 4096

typedef struct trust_item {
    uint64_t off, len;      /* where it lies: base + its offset in the bytes */
    X509 *cert;             /* a certificate, or NULL for a signature list */
    bool hashes;            /* a signature list of hashes (not of X.509 certificates) */
} trust_item;

typedef struct trust_table {
    uint64_t off;           /* where the table lies (base + offset) */
    uint64_t auth_off, auth_len, deauth_off, deauth_len;   /* its blobs, as base + offset */
} trust_table;

typedef struct trust_scan {
    trust_item *items;      /* certificates and lists, in order of offset within each scan */
    size_t n_items, cap_items;
    trust_table *tables;
    size_t n_tables, cap_tables;
    bool mok_mirrors;       /* the bytes name one of shim's MOK runtime mirrors */
} trust_scan;

void trust_scan_init(trust_scan *s);
void trust_scan_free(trust_scan *s);
#define _cleanup_trust_scan_ __attribute__((cleanup(trust_scan_free)))

/* Adds what buf holds to s; offsets are reported as base + offset. A
 * table is found only within one call's bytes (shim's blobs follow their
 * table in one section). Errors only for memory or too many items. */
int trust_scan_bytes(trust_scan *s, const uint8_t *buf, size_t len, uint64_t base, rs_error *err);

/* Whether [off, off+len) lies within a table's deauthorized blob (shim's
 * vendor dbx: revocations, which add no trust). */
bool trust_scan_in_deauthorized(const trust_scan *s, uint64_t off, uint64_t len);

#endif
