/* c2sp.org/tlog-proof@v1 proofs, as `log verify-proof` reads them
 * offline: the input up to its first NUL is the entry, the rest the
 * proof. A proof that verifies must carry a checkpoint by the log key and
 * a path no longer than a tree of its size has. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_tlog_keys.h"
#include "translog/proof.h"

static rs_note_key vkey, wkey;

static void fuzz_bug(const char *what)
{
    fprintf(stderr, "BUG: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t entry_len = nul ? (size_t)(nul - data) : 0;
    const char *text = (const char *)data + (nul ? entry_len + 1 : 0);
    size_t text_len = size - (nul ? entry_len + 1 : 0);
    rs_tlog_proof p;
    rs_checkpoint cp;
    rs_error err;

    if (!vkey.pkey && (rs_note_vkey_parse(FUZZ_LOG_VKEY, &vkey, &err) < 0 ||
                       rs_note_vkey_parse(FUZZ_WITNESS_VKEY, &wkey, &err) < 0))
        fuzz_bug("the fuzz keys do not parse");
    if (rs_tlog_proof_parse(text, text_len, &p, &err) < 0)
        return 0;
    if (p.path.n > RS_PROOF_MAX_HASHES)
        fuzz_bug("a proof longer than the limit was accepted");
    if (rs_tlog_proof_verify(&p, &vkey, &wkey, 1, 0, data, entry_len, &cp, &err) == 0) {
        unsigned bits = 0;

        for (uint64_t s = cp.size - 1; s; s >>= 1)
            bits++;
        if (p.index >= cp.size || p.path.n > bits)
            fuzz_bug("a proof verified for an index outside its tree or with too long a path");
        rs_checkpoint_free(&cp);
    }
    rs_tlog_proof_free(&p);
    return 0;
}
