/* Arbitrary bytes as a detached Authenticode signature: the PKCS#7 and
 * SpcIndirectDataContent parsers, the bound-digest reader and the full
 * signature and chain check against a one-certificate trust store. */
#include <openssl/err.h>
#include <stdint.h>
#include <string.h>

#include "formats/pe/authenticode.h"
#include "fuzz_keys.h"

static rs_trust no_anchors, one_anchor;

static void bug(const char *what, const char *detail)
{
    fprintf(stderr, "BUG: %s: %s\n", what, detail ? detail : "");
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    rs_error err;

    if (rs_trust_init(&no_anchors, &err) < 0 || rs_trust_init(&one_anchor, &err) < 0)
        fuzz_die("trust", err.msg);
    if (!sk_X509_push(one_anchor.anchors, fuzz_test_cert()))
        fuzz_die("trust", "out of memory");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const rs_bytes der = { .data = (uint8_t *)data, .len = size };
    rs_sig_info info;
    rs_verify_report report;
    rs_digest d;
    rs_error err;
    int described, bound;

    if (authenticode_der_length(data, size) > size)
        bug("DER length runs past the buffer", NULL);

    described = authenticode_describe(&der, &info, &err);
    bound = authenticode_bound_digest(&der, &d, &err);
    if (described != bound)
        bug("describe and bound_digest disagree on validity", err.msg);
    if (described == 0) {
        if (!rs_digest_equal(&d, &info.bound_digest))
            bug("describe and bound_digest disagree on the digest", NULL);
        rs_sig_info_free(&info);
    }

    memset(&report, 0, sizeof(report));
    if (authenticode_verify(&der, &no_anchors, &report, &err) == 0 && report.ok)
        bug("verified against an empty trust store", NULL);
    rs_verify_report_free(&report);
    memset(&report, 0, sizeof(report));
    (void)authenticode_verify(&der, &one_anchor, &report, &err);
    rs_verify_report_free(&report);
    ERR_clear_error();
    return 0;
}
