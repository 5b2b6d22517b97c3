/* Arbitrary bytes through the kernel module reader (ELF check, signature
 * trailer, CMS) and every operation on an opened module: digest, extract,
 * describe, binding and trust checks, strip, sign and attach. Rewrites
 * are re-opened and compared with the original, so wrong output is found
 * as well as crashes. The raw input is also parsed as a detached CMS.
 *
 * Seeds: small ELF relocatable objects (gcc -c of any file), signed and
 * unsigned, and a few real modules from the kernel fixture. */
#include <openssl/err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/format.h"
#include "fuzz_keys.h"

static char in_path[64], out_path[64];
static int in_fd = -1, out_fd = -1;
static rs_trust no_anchors, one_anchor;
static rs_signer *signer;
static X509 *cert;
static rs_sign_options opts;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    in_fd = fuzz_memfd("fuzz-module-in", in_path, sizeof(in_path));
    out_fd = fuzz_memfd("fuzz-module-out", out_path, sizeof(out_path));
    fuzz_open_test_signer(&no_anchors, &one_anchor, &signer);
    cert = fuzz_test_cert();
    opts = (rs_sign_options){ .md = EVP_sha256() };
    return 0;
}

/* The module bytes never change: a rewrite must open as a module with
 * `want` signatures and the same digest, and carry `sig` if given. */
static void check_rewrite(const rs_digest *orig, size_t want, const rs_bytes *sig)
{
    _cleanup_image_ rs_image again = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes der = { 0 };
    rs_verify_report report = { 0 };
    rs_digest d;
    rs_error err;

    if (rs_image_open(&again, out_path, &err) < 0)
        fuzz_bug("rewritten module does not open", err.msg);
    if (again.format != &rs_format_module || again.format->count(&again) != want)
        fuzz_bug("rewritten module has the wrong format or signature count", NULL);
    if (again.format->digest(&again, orig->md, &d, &err) < 0 || !rs_digest_equal(orig, &d))
        fuzz_bug("rewriting changed the module bytes", err.msg);
    if (!sig)
        return;
    if (again.format->extract(&again, 0, &der, &err) < 0)
        fuzz_bug("attached signature cannot be extracted", err.msg);
    if (der.len != sig->len || memcmp(der.data, sig->data, der.len) != 0)
        fuzz_bug("attached signature changed on the way through", NULL);
    if (again.format->verify(&again, &der, &one_anchor, &report, &err) < 0 || !report.ok)
        fuzz_bug("attached own signature does not verify", report.reason[0] ? report.reason : err.msg);
    rs_verify_report_free(&report);
}

static void exercise_signature(rs_image *img, const rs_bytes *der)
{
    rs_sig_info info;
    rs_verify_report report = { 0 };
    rs_error err;

    if (img->format->describe(der, &info, &err) == 0)
        rs_sig_info_free(&info);
    (void)img->format->check_binding(img, der, NULL, &err);
    (void)img->format->check_binding(img, der, cert, &err);
    (void)img->format->verify(img, der, &no_anchors, &report, &err);
    if (report.ok)
        fuzz_bug("verified against an empty trust store", NULL);
    rs_verify_report_free(&report);
    memset(&report, 0, sizeof(report));
    (void)img->format->verify(img, der, &one_anchor, &report, &err);
    rs_verify_report_free(&report);
}

/* The raw bytes as a detached signature, for the CMS parser alone. */
static void exercise_raw_cms(const uint8_t *data, size_t size)
{
    rs_bytes der = { .data = (uint8_t *)data, .len = size };
    rs_sig_info info;
    rs_error err;

    if (rs_format_module.describe(&der, &info, &err) == 0)
        rs_sig_info_free(&info);
}

static void exercise_rewrites(rs_image *img, const rs_digest *d, size_t n)
{
    _cleanup_bytes_ rs_bytes sig = { 0 };
    rs_edit strip_all = { .remove_all = true, .remove_index = -1 };
    rs_edit strip_first = { .remove_index = 0 };
    rs_edit append = { .remove_index = -1, .n_append = 1 };
    rs_error err;

    if (fuzz_rewrite(img, &strip_all, out_fd, &err) < 0)
        fuzz_bug("cannot strip an opened module", err.msg);
    check_rewrite(d, 0, NULL);
    if (n && fuzz_rewrite(img, &strip_first, out_fd, &err) == 0)
        check_rewrite(d, 0, NULL);
    if (rs_image_sign(img, signer, &opts, &sig, &err) < 0)
        fuzz_bug("cannot sign an opened module", err.msg);
    if (img->format->check_binding(img, &sig, cert, &err) < 0)
        fuzz_bug("own signature does not bind", err.msg);
    append.append = &sig;
    if (fuzz_rewrite(img, &append, out_fd, &err) == 0) {
        if (n)
            fuzz_bug("appended a second signature", NULL);
        check_rewrite(d, 1, &sig);
    } else if (!n) {
        fuzz_bug("cannot attach to an unsigned module", err.msg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes past = { 0 };
    rs_digest d;
    rs_error err;
    size_t n;

    exercise_raw_cms(data, size);
    fuzz_memfd_fill(in_fd, data, size);
    if (rs_image_open(&img, in_path, &err) < 0 || img.format != &rs_format_module) {
        ERR_clear_error();
        return 0;
    }
    if (img.format->digest(&img, EVP_sha256(), &d, &err) < 0)
        fuzz_bug("opened module cannot be digested", err.msg);
    n = img.format->count(&img);
    if (n > 1)
        fuzz_bug("a module with more than one signature", NULL);
    if (n) {
        _cleanup_bytes_ rs_bytes der = { 0 };

        if (img.format->extract(&img, 0, &der, &err) == 0)
            exercise_signature(&img, &der);
    }
    if (img.format->extract(&img, n, &past, &err) == 0)
        fuzz_bug("extracted a signature past the count", NULL);
    exercise_rewrites(&img, &d, n);
    ERR_clear_error();
    return 0;
}
