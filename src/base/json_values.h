/* The value conventions every --json document follows (docs/json.md), in
 * one place: a digest is "ALG:HEX" (lowercase hex, ALG as OpenSSL names
 * it: sha256, sha384, sha512), a time is ISO 8601 in UTC to the second
 * ("2026-12-04T16:27:26Z"). A value that is not known is left out of its
 * document rather than written as null, so both return NULL for nothing,
 * which json_pack's "s:o*" and rs_json_set() leave out. */
#ifndef RS_JSON_VALUES_H
#define RS_JSON_VALUES_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

#include "base/cleanup.h"

DEFINE_POINTER_CLEANUP(rs_jsonp, json_t, json_decref)

/* "sha256:9f2c..."; NULL when len is 0 or alg is unknown. */
json_t *rs_json_digest(const char *alg, const uint8_t *bytes, size_t len);
/* The same from a digest already in hex; NULL unless hex is lowercase hex. */
json_t *rs_json_digest_hex(const char *alg, const char *hex);
/* "2026-12-04T16:27:26Z"; NULL when t is negative (no time). */
json_t *rs_json_time(time_t t);
/* Sets obj[key] to value, or leaves key out when value is NULL. */
void rs_json_set(json_t *obj, const char *key, json_t *value);
/* s (UTF-8) as a JSON string, byte for byte as json_dumps() writes it
 * with neither JSON_ENSURE_ASCII nor JSON_ESCAPE_SLASH: for a document
 * written entry by entry, where building each entry as a json_t would
 * cost more than the rest of its writing. */
void rs_json_write_string(FILE *f, const char *s);

#endif
