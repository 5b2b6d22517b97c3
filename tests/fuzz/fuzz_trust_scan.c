/* The embedded-trust scanner (uefi/trust_scan.h) over arbitrary bytes, as
 * one section's; and, when the bytes open as a PE image, the scan of all
 * its headers and sections (uefi_embedded_scan). What it reports is
 * checked against the bytes, so the fuzzer finds wrong answers as well as
 * crashes:
 * - every certificate parses again where it was found, to the same length;
 * - every signature list is of a type it looks for and walks whole;
 * - items are sorted and lie inside the bytes;
 * - every table is 4-aligned, its blobs inside the bytes, each starting
 *   at an item found, and its revocations count as revocations;
 * - scanning at another base finds the same things, shifted. */
#include <openssl/err.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_keys.h"
#include "uefi/efi.h"
#include "uefi/embedded_trust.h"
#include "uefi/esl.h"
#include "uefi/trust_scan.h"

#define SHIFT 0x10000

static char in_path[64];
static int in_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    in_fd = fuzz_memfd("fuzz-trust-scan-in", in_path, sizeof(in_path));
    return 0;
}

static bool starts_item(const trust_scan *s, uint64_t off)
{
    for (size_t i = 0; i < s->n_items; i++)
        if (s->items[i].off == off)
            return true;
    return false;
}

static void check_item(const trust_item *it, const uint8_t *data, size_t size)
{
    const uint8_t *p = data + it->off;
    rs_error err;

    if (it->off > size || it->len > size - it->off || !it->len)
        fuzz_bug("an item lies outside the bytes", NULL);
    if (it->cert) {
        const unsigned char *q = p;
        X509 *again = d2i_X509(NULL, &q, (long)(size - it->off));

        if (!again || (uint64_t)(q - p) != it->len)
            fuzz_bug("a certificate found does not parse again to its length", NULL);
        X509_free(again);
        if (it->hashes)
            fuzz_bug("a certificate is marked as a hash list", NULL);
    } else {
        if (esl_walk(p, (size_t)it->len, NULL, NULL, &err) < 0)
            fuzz_bug("a signature list found does not walk", err.msg);
        if (it->hashes == !memcmp(p, efi_guid_cert_x509.b, 16))
            fuzz_bug("a list's hashes flag disagrees with its type", NULL);
    }
}

static void check_table(const trust_scan *s, const trust_table *t, size_t size)
{
    if (t->off % 4 || t->off > size || size - t->off < 16)
        fuzz_bug("a table is unaligned or outside the bytes", NULL);
    if (!t->auth_len && !t->deauth_len)
        fuzz_bug("a table with two empty blobs was reported", NULL);
    if ((t->auth_len && (t->auth_off > size || t->auth_len > size - t->auth_off || !starts_item(s, t->auth_off))) ||
        (t->deauth_len &&
         (t->deauth_off > size || t->deauth_len > size - t->deauth_off || !starts_item(s, t->deauth_off))))
        fuzz_bug("a table's blob is outside the bytes or starts at nothing found", NULL);
    if (t->deauth_len && !trust_scan_in_deauthorized(s, t->deauth_off, t->deauth_len))
        fuzz_bug("a table's revocations are not counted as revocations", NULL);
}

static void check_bytes(const uint8_t *data, size_t size)
{
    _cleanup_trust_scan_ trust_scan s, shifted;
    rs_error err = { 0 };
    int rc, rc2;

    trust_scan_init(&s);
    trust_scan_init(&shifted);
    rc = trust_scan_bytes(&s, data, size, 0, &err);
    if (rc < 0 && !err.msg[0])
        fuzz_bug("trust_scan_bytes failed without a message", NULL);
    for (size_t i = 0; rc == 0 && i < s.n_items; i++) {
        check_item(&s.items[i], data, size);
        if (i && s.items[i - 1].off >= s.items[i].off)
            fuzz_bug("items are not sorted by offset, or two start at one", NULL);
    }
    for (size_t i = 0; rc == 0 && i < s.n_tables; i++)
        check_table(&s, &s.tables[i], size);
    rc2 = trust_scan_bytes(&shifted, data, size, SHIFT, &err);
    if (rc2 != rc || (rc == 0 && (shifted.n_items != s.n_items || shifted.n_tables != s.n_tables ||
                                  shifted.mok_mirrors != s.mok_mirrors)))
        fuzz_bug("scanning at another base found something else", NULL);
    for (size_t i = 0; rc == 0 && i < s.n_items; i++)
        if (shifted.items[i].off != s.items[i].off + SHIFT || shifted.items[i].len != s.items[i].len)
            fuzz_bug("scanning at another base moved an item by something else", NULL);
}

/* As a whole image: what is found lies inside the file. */
static void check_image(const uint8_t *data, size_t size)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_trust_scan_ trust_scan s;
    bool shim_like;
    rs_error err = { 0 };

    trust_scan_init(&s);
    if (size < 2 || memcmp(data, "MZ", 2))
        return;
    fuzz_memfd_fill(in_fd, data, size);
    if (rs_image_open(&img, in_path, &err) < 0)
        return;
    if (uefi_embedded_scan(&img, &s, &shim_like, &err) < 0) {
        if (!err.msg[0])
            fuzz_bug("uefi_embedded_scan failed without a message", NULL);
        return;
    }
    for (size_t i = 0; i < s.n_items; i++)
        if (s.items[i].off > size || s.items[i].len > size - s.items[i].off)
            fuzz_bug("an item of the image lies outside the file", NULL);
    if (s.n_tables && !s.n_items)
        fuzz_bug("a table without anything it points at", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_bytes(data, size);
    check_image(data, size);
    ERR_clear_error();
    return 0;
}
