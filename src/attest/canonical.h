/* The canonical JSON that in-toto link signatures cover (securesystemslib's
 * encode_canonical): object keys sorted by their bytes, no whitespace, only
 * '"' and '\' escaped in strings, integers only. The signature is over
 * these bytes, not over the file's, so a link re-indented or with its keys
 * reordered still verifies, as it does with in-toto-verify. */
#ifndef RS_ATTEST_CANONICAL_H
#define RS_ATTEST_CANONICAL_H

#include <jansson.h>

#include "base/bytes.h"
#include "base/error.h"

/* Deepest nesting accepted: links are four levels deep; a hostile file
 * must not exhaust the stack of the recursion that encodes it. */
#define RS_CANONICAL_MAX_DEPTH 32

/* Appends the canonical form of v to out. Refuses a real number (the
 * canonical form has none), a string holding NUL, and nesting deeper than
 * RS_CANONICAL_MAX_DEPTH. */
int rs_canonical_json(const json_t *v, rs_bytes *out, rs_error *err);

#endif
