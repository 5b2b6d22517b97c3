/* Arbitrary bytes as a kernel image, the last stage of chain --modules,
 * whose built-in keys it reads: an arm64 or RISC-V Image as it is, or a
 * bzImage's setup header or an EFI zboot header and its payload decompressed (at most 1 MiB here, not
 * RS_MAX_DECOMPRESSED, so that a bomb costs a millisecond), and the
 * certificate list in that. The same bytes are also
 * searched for a list as a decompressed kernel, which reaches the search
 * without a compressor in the way. Whatever the input: a list found lies
 * inside the bytes and holds only certificates; keys come only with a
 * list; every key's kernel name is a bounded string.
 *
 * Seeds: synthetic bzImages and EFI zboot images (tests/tools/mkbzimage.py)
 * each way they are compressed, an arm64 and a RISC-V Image, a payload
 * uncompressed, and the window around the list in Debian's real kernels. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_keys.h"
#include "uefi/kernel_certs.h"

#define LIMIT (1024 * 1024)

static char in_path[64];
static int in_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    in_fd = fuzz_memfd("fuzz-kernel-image-in", in_path, sizeof(in_path));
    return 0;
}

/* Every key has a kernel name that fits its buffer, NUL and all. */
static void check_names(const rs_trust *t)
{
    for (int i = 0; i < sk_X509_num(t->anchors); i++) {
        char name[64];

        memset(name, 'x', sizeof(name));
        kernel_key_description(sk_X509_value(t->anchors, i), name, sizeof(name));
        if (!memchr(name, '\0', sizeof(name)))
            fuzz_bug("a kernel key name is not terminated within its buffer", NULL);
    }
}

/* The scan with a small window, fed in chunks of a size the input picks,
 * finds what the one-shot search finds, for lists that fit the window. */
static void scan_in_chunks(const uint8_t *data, size_t len, size_t max, size_t chunk, size_t start, size_t size,
                           bool found)
{
    kernel_list_scan *s;
    const uint8_t *list;
    size_t got;
    uint64_t at;
    rs_error err;
    bool ok;

    if (!(s = kernel_list_scan_new(max, &err)))
        fuzz_die("kernel_list_scan_new", err.msg);
    for (size_t off = 0; off < len; off += chunk)
        if (kernel_list_scan_feed(s, data + off, len - off < chunk ? len - off : chunk, &err) < 0)
            fuzz_die("kernel_list_scan_feed", err.msg);
    ok = kernel_list_scan_end(s, &list, &got, &at, &err) == 0;
    if (ok && (!got || at > len || got > len - at || memcmp(list, data + at, got)))
        fuzz_bug("a certificate list found that is not the input's bytes", NULL);
    if (found && size <= max && (!ok || at != start || got != size))
        fuzz_bug("the windowed scan missed the list the one-shot search found", NULL);
    kernel_list_scan_free(s);
}

static void search_as_decompressed(const uint8_t *data, size_t len)
{
    size_t start = 0, size = 0;
    rs_error err;
    bool found = kernel_cert_list_find(data, len, &start, &size, &err) == 0;

    if (found && (!size || start > len || size > len - start))
        fuzz_bug("a certificate list found outside the bytes", NULL);
    scan_in_chunks(data, len, 2048, len ? 1 + data[len - 1] % 97 : 1, start, size, found);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    rs_trust t;
    size_t count = 99;
    rs_error err;
    int r;

    search_as_decompressed(data, len);
    fuzz_memfd_fill(in_fd, data, len);
    if (rs_trust_init(&t, &err) < 0)
        fuzz_die("rs_trust_init", err.msg);
    r = kernel_image_certs(in_path, LIMIT, &t, &count, &err);
    if (r < 0 && !err.msg[0])
        fuzz_bug("an error without a message", NULL);
    if (r == 1 && (count == 0 || (size_t)sk_X509_num(t.anchors) != count))
        fuzz_bug("a kernel image gave keys that do not match their count", NULL);
    if (r == 0 && (count != 0 || sk_X509_num(t.anchors) != 0))
        fuzz_bug("an image that is no bzImage gave keys", NULL);
    check_names(&t);
    rs_trust_free(&t);
    return 0;
}
