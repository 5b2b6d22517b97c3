/* A rebuilder's attestation: what it says it built, and who signed it.
 * Two formats, told apart by their top-level members:
 * - an in-toto link (v0.9, what Debian's in-toto and rebuilderd's in-toto-rs
 *   write): {"signed": {"_type": "link", "name", "products": {NAME:
 *   {"sha256": HEX}}, ...}, "signatures": [{"keyid", "sig": HEX}]}, the
 *   signatures over the canonical JSON of "signed" (canonical.h);
 * - an in-toto Statement v1 in a DSSE envelope: {"payloadType":
 *   "application/vnd.in-toto+json", "payload": BASE64, "signatures":
 *   [{"keyid", "sig": BASE64}]}, the signatures over DSSE's PAE of the
 *   payload, the statement's "subject" listing {"name", "digest": {"sha256"}}.
 * Everything read is bounded: the file, the nesting, the signatures and the
 * products; a name given twice with two digests is refused. */
#ifndef RS_ATTESTATION_H
#define RS_ATTESTATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attest/attest_key.h"
#include "base/bytes.h"
#include "base/error.h"

/* reproduce.debian.net's links for a large source list every binary
 * package it built: a few hundred KiB. 16 MiB leaves a wide margin and
 * still bounds what one hostile file costs. */
#define RS_ATTEST_MAX_FILE (16 * 1024 * 1024)
/* One rebuilder signs with one key; a handful of signatures is generous. */
#define RS_ATTEST_MAX_SIGNATURES 16
/* Products (link) or subjects (statement) one attestation may list. */
#define RS_ATTEST_MAX_PRODUCTS 100000
/* An RSA-8192 signature is 1 KiB; ECDSA and Ed25519 far less. */
#define RS_ATTEST_MAX_SIG 1024
/* A product name is a file name, or a path under the build directory. */
#define RS_ATTEST_MAX_NAME 4096

#define RS_DSSE_INTOTO_TYPE "application/vnd.in-toto+json"

typedef enum rs_attest_kind { RS_ATTEST_LINK, RS_ATTEST_STATEMENT } rs_attest_kind;

typedef struct rs_attest_product {
    char *name;
    uint8_t sha256[32];
} rs_attest_product;

typedef struct rs_attest_signature {
    char keyid[65];   /* empty when a DSSE signature names no key */
    rs_bytes sig;
} rs_attest_signature;

typedef struct rs_attestation {
    rs_attest_kind kind;
    char *step;              /* a link's "name"; a statement's "predicateType" */
    rs_bytes signed_bytes;   /* exactly what the signatures cover */
    rs_attest_signature *sigs;
    size_t nsigs;
    rs_attest_product *products;
    size_t nproducts;
} rs_attestation;

int rs_attestation_parse(const uint8_t *data, size_t len, rs_attestation *a, rs_error *err);
int rs_attestation_load(const char *path, rs_attestation *a, rs_error *err);
void rs_attestation_free(rs_attestation *a);
const char *rs_attest_kind_name(rs_attest_kind kind);

/* The format parsers (attest_link.c, attest_dsse.c), called by
 * rs_attestation_parse with the document already read. */
typedef struct json_t json_t;
int rs_attest_parse_link(const json_t *doc, rs_attestation *a, rs_error *err);
int rs_attest_parse_dsse(const json_t *doc, rs_attestation *a, rs_error *err);
/* Shared by both: adds one product, checking its bounds (a name listed
 * twice is refused once all are read). */
/* "signatures", hex-encoded (link) or base64 (DSSE, where the keyid may
 * be left out). */
int rs_attest_parse_signatures(const json_t *list, bool base64, rs_attestation *a, rs_error *err);
int rs_attest_add_product(rs_attestation *a, const char *name, const char *sha256_hex, rs_error *err);

/* Verifies the signatures against keys: signed_by[i] is set for each key
 * that made a signature that verifies. *distinct is how many different
 * keys (by fingerprint, so a key given twice or under two names counts
 * once) did. A signature naming none of the keys is ignored. */
int rs_attestation_verify(const rs_attestation *a, const rs_attest_key *keys, size_t nkeys, bool *signed_by,
                          size_t *distinct, rs_error *err);

/* The product whose name is `name` or ends in "/name"; NULL if none.
 * *count says how many did (more than one: the caller must not choose). */
const rs_attest_product *rs_attestation_product(const rs_attestation *a, const char *name, size_t *count);

/* Whether the attestation vouches for a file named `name` (a pool file
 * name: PACKAGE_VERSION_ARCH.deb, the epoch left out) whose SHA-256 is
 * `sha256`: exactly one product bears that name, with that digest. A
 * product of that name with another digest is a rebuilder disagreeing:
 * RS_VOUCH_OTHER_DIGEST, never to be taken as a mere absence. */
typedef enum rs_attest_vouch {
    RS_VOUCH_YES,
    RS_VOUCH_ABSENT,
    RS_VOUCH_AMBIGUOUS,
    RS_VOUCH_OTHER_DIGEST,
} rs_attest_vouch;
rs_attest_vouch rs_attestation_vouches(const rs_attestation *a, const char *name, const uint8_t sha256[32],
                                       const rs_attest_product **listed);

#endif
