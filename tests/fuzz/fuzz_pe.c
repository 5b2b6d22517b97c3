/* Arbitrary bytes through the PE/COFF reader and every operation the
 * format offers on an opened image: digest, count, extract, describe,
 * binding and trust checks, rewrites (strip one, strip all, append) and
 * signing. Rewrites are re-opened and checked against the original, so
 * the fuzzer finds wrong output as well as crashes. */
#include <openssl/err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "formats/format.h"
#include "fuzz_keys.h"

/* The image's signatures are capped only by the table size; a bound keeps
 * one input from taking seconds. */
#define MAX_SIGS 16

static char in_path[64], out_path[64];
static int in_fd = -1, out_fd = -1;
static rs_trust no_anchors, one_anchor, with_lists, revoking;
static rs_signer *signer;
static rs_sign_options opts;

/* A complete (if meaningless) DER object, so the appended entry comes back
 * from extract byte for byte. */
static const uint8_t dummy_der[] = { 0x30, 0x03, 0x02, 0x01, 0x00 };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    in_fd = fuzz_memfd("fuzz-pe-in", in_path, sizeof(in_path));
    out_fd = fuzz_memfd("fuzz-pe-out", out_path, sizeof(out_path));
    rs_error err;

    fuzz_open_test_signer(&no_anchors, &one_anchor, &signer);
    /* UEFI lists switch on the db/dbx rules: one trust whose dbx names
     * only a hash no image has, one whose dbx revokes the test signer. */
    rs_digest never = { .md = EVP_sha256(), .len = 32 };
    X509 *cert = fuzz_test_cert();
    if (rs_trust_init(&with_lists, &err) < 0 || rs_trust_add_anchor(&with_lists, cert, &err) < 0 ||
        rs_trust_add_hash(&with_lists.forbidden, &never, &err) < 0 || rs_trust_init(&revoking, &err) < 0 ||
        rs_trust_add_anchor(&revoking, cert, &err) < 0 || rs_trust_add_revoked(&revoking, cert, &err) < 0)
        fuzz_die("trust lists", err.msg);
    X509_free(cert);
    opts = (rs_sign_options){ .md = EVP_sha256(), .signing_time = true, .time = 1700000000 };
    return 0;
}

/* A rewrite only touches the certificate table and the fields the digest
 * skips, so the result must open, carry `want` signatures and hash alike. */
static void check_rewrite(const rs_digest *orig, size_t want, const rs_bytes *last)
{
    _cleanup_image_ rs_image again = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes der = { 0 };
    rs_digest d;
    rs_error err;

    if (rs_image_open(&again, out_path, &err) < 0)
        fuzz_bug("rewritten image does not open", err.msg);
    if (again.format->count(&again) != want)
        fuzz_bug("rewritten image has the wrong signature count", NULL);
    if (again.format->digest(&again, orig->md, &d, &err) < 0)
        fuzz_bug("rewritten image cannot be digested", err.msg);
    if (!rs_digest_equal(orig, &d))
        fuzz_bug("rewriting changed the Authenticode digest", NULL);
    if (last) {
        if (again.format->extract(&again, want - 1, &der, &err) < 0)
            fuzz_bug("appended signature cannot be extracted", err.msg);
        if (der.len != last->len || memcmp(der.data, last->data, der.len) != 0)
            fuzz_bug("appended signature changed on the way through", NULL);
    }
}

static void exercise_signature(rs_image *img, const rs_bytes *der)
{
    rs_sig_info info;
    rs_verify_report report;
    rs_error err;

    if (img->format->describe(der, &info, &err) == 0)
        rs_sig_info_free(&info);
    (void)img->format->check_binding(img, der, NULL, &err);
    memset(&report, 0, sizeof(report));
    (void)img->format->verify(img, der, &no_anchors, &report, &err);
    if (report.ok)
        fuzz_bug("verified against an empty trust store", NULL);
    rs_verify_report_free(&report);
    memset(&report, 0, sizeof(report));
    (void)img->format->verify(img, der, &one_anchor, &report, &err);
    rs_verify_report_free(&report);
    memset(&report, 0, sizeof(report));
    (void)img->format->verify(img, der, &with_lists, &report, &err);
    rs_verify_report_free(&report);
}

static void expect_verdict(rs_image *img, const rs_bytes *sig, const rs_trust *trust, bool want, const char *what)
{
    rs_verify_report report = { 0 };
    rs_error err = { 0 };

    if (img->format->verify(img, sig, trust, &report, &err) < 0 || report.ok != want)
        fuzz_bug(what, report.reason[0] ? report.reason : err.msg);
    rs_verify_report_free(&report);
}

/* The image with its fresh signature attached: that signature verifies,
 * unless dbx revokes its signer (dbx rules look at the signatures the
 * image carries). */
static void check_signed_copy(const rs_digest *orig, size_t want, const rs_bytes *sig)
{
    _cleanup_image_ rs_image again = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes der = { 0 };
    rs_error err;

    check_rewrite(orig, want, sig);
    if (rs_image_open(&again, out_path, &err) < 0 || again.format->extract(&again, want - 1, &der, &err) < 0)
        fuzz_bug("signed copy unreadable", err.msg);
    expect_verdict(&again, &der, &one_anchor, true, "attached signature does not verify");
    expect_verdict(&again, &der, &revoking, false, "attached signature verifies although dbx revokes its signer");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_bytes_ rs_bytes sig = { 0 };
    rs_digest d;
    rs_error err;
    size_t n;

    fuzz_memfd_fill(in_fd, data, size);
    if (rs_image_open(&img, in_path, &err) < 0) {
        if (!err.msg[0])
            fuzz_bug("open failed without a message", NULL);
        ERR_clear_error();
        return 0;
    }
    /* Other formats have their own targets. */
    if (img.format != &rs_format_pe)
        return 0;
    const rs_format *f = img.format;

    if (f->digest(&img, EVP_sha256(), &d, &err) < 0)
        fuzz_bug("opened image cannot be digested", err.msg);
    n = f->count(&img);
    for (size_t i = 0; i < n && i < MAX_SIGS; i++) {
        _cleanup_bytes_ rs_bytes der = { 0 };

        if (f->extract(&img, i, &der, &err) == 0)
            exercise_signature(&img, &der);
    }
    if (f->extract(&img, n, &sig, &err) == 0)
        fuzz_bug("extracted a signature past the count", NULL);

    rs_edit strip_all = { .remove_all = true, .remove_index = -1 };
    if (fuzz_rewrite(&img, &strip_all, out_fd, &err) == 0)
        check_rewrite(&d, 0, NULL);
    if (n > 0) {
        rs_edit strip_first = { .remove_index = 0 };
        if (fuzz_rewrite(&img, &strip_first, out_fd, &err) == 0)
            check_rewrite(&d, n - 1, NULL);
    }
    rs_bytes dummy = { .data = (uint8_t *)dummy_der, .len = sizeof(dummy_der) };
    rs_edit append = { .remove_index = -1, .append = &dummy, .n_append = 1 };
    if (fuzz_rewrite(&img, &append, out_fd, &err) == 0)
        check_rewrite(&d, n + 1, &dummy);

    /* A fresh signature must bind to the image and verify against its
     * own certificate. */
    if (rs_image_sign(&img, signer, &opts, &sig, &err) < 0)
        fuzz_bug("cannot sign an opened image", err.msg);
    if (f->check_binding(&img, &sig, NULL, &err) < 0)
        fuzz_bug("own signature does not bind", err.msg);
    expect_verdict(&img, &sig, &one_anchor, true, "own signature does not verify");
    expect_verdict(&img, &sig, &with_lists, true, "own signature does not verify with a dbx loaded");
    rs_edit attach = { .remove_index = -1, .append = &sig, .n_append = 1 };
    if (fuzz_rewrite(&img, &attach, out_fd, &err) < 0)
        fuzz_bug("cannot attach own signature", err.msg);
    check_signed_copy(&d, n + 1, &sig);
    {
        _cleanup_bytes_ rs_bytes from_digest = { 0 };

        if (rs_format_sign_digest(f, &d, signer, &opts, &from_digest, &err) < 0)
            fuzz_bug("cannot sign the image digest", err.msg);
        if (f->check_binding(&img, &from_digest, NULL, &err) < 0)
            fuzz_bug("signature over the digest does not bind", err.msg);
    }
    ERR_clear_error();
    return 0;
}
