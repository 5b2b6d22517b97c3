/* The search for system_certificate_list in a decompressed kernel, a
 * window at a time, so that nothing holds the whole kernel. */
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "uefi/efi.h"
#include "uefi/kernel_certs.h"

/* The largest `.align 8` (arm64's: 256 bytes), and what may follow a list:
 * zeros up to it, then the 8-byte size word. */
#define MAX_ALIGN 256
#define LIST_TAIL (MAX_ALIGN - 1 + 8)

struct kernel_list_scan {
    size_t max_list;
    size_t lookahead;            /* max_list + LIST_TAIL: what a start needs after it */
    uint8_t *buf;                /* the window: the stream from `base` on */
    size_t len, alloc, cap;      /* bytes in it, allocated, at most */
    uint64_t base;
    uint64_t skip_to;            /* starts inside a list found are part of it */
    size_t found;
    uint64_t starts[2];          /* of the first two lists found */
    rs_bytes list;               /* the first list's bytes */
};

/* One DER SEQUENCE as certs/common.c takes it: 30 82 and a 16-bit length;
 * 0 when there is none at p, or it does not fit. */
static size_t der_at(const uint8_t *p, size_t avail)
{
    size_t n;

    if (avail < 4 || p[0] != 0x30 || p[1] != 0x82)
        return 0;
    n = ((size_t)p[2] << 8 | p[3]) + 4;
    return n <= avail ? n : 0;
}

/* system_certificate_list_size follows a list of `run` bytes at `at`:
 * zeros up to the `.align 8` after it, then `run` as a little-endian
 * 32-bit word and 4 zero bytes (the upper half of a .quad, or the padding
 * after a 32-bit kernel's .long). `.align 8` is 8 bytes on x86 and 2^8 on
 * arm64, so the word is at the first multiple of 8 from the list's start
 * that is not zero, at most MAX_ALIGN - 1 bytes of zeros after the list. */
static bool size_word_follows(const uint8_t *data, size_t len, size_t at, size_t run)
{
    size_t end = at + run, word = at + ((run + 7) & ~(size_t)7);

    if (word < end || word > len)
        return false;
    for (size_t i = end; i < word; i++)
        if (data[i])
            return false;
    for (; word - end < MAX_ALIGN && len - word >= 8; word += 8) {
        if (efi_le32(data + word) == run && efi_le32(data + word + 4) == 0)
            return true;
        if (efi_le32(data + word) || efi_le32(data + word + 4))
            return false;
    }
    return false;
}

/* Every DER SEQUENCE of the run is a certificate that OpenSSL parses whole. */
static bool all_certificates(const uint8_t *data, size_t run)
{
    for (size_t off = 0, n; off < run; off += n) {
        const unsigned char *p = data + off;
        X509 *cert;

        n = der_at(data + off, run - off);
        cert = d2i_X509(NULL, &p, (long)n);
        ERR_clear_error();
        X509_free(cert);
        if (!cert || p != data + off + n)
            return false;
    }
    return true;
}

/* The length of the list starting at `at`, or 0 if none does. */
static size_t list_at(const uint8_t *data, size_t len, size_t at, size_t max_list)
{
    size_t run = 0, n;

    /* A list's length can be found after any of its certificates: the size
     * word itself may begin 30 82 and so extend a greedy run. */
    while ((n = der_at(data + at + run, len - at - run)) != 0 && run + n <= max_list) {
        run += n;
        if (size_word_follows(data, len, at, run) && all_certificates(data + at, run))
            return run;
    }
    return 0;
}

static int found_at(kernel_list_scan *s, size_t here, size_t run, rs_error *err)
{
    if (s->found < 2)
        s->starts[s->found] = s->base + here;
    if (s->found++ == 0 && rs_bytes_set(&s->list, s->buf + here, run, err) < 0)
        return -1;
    s->skip_to = s->base + here + run;
    return 0;
}

/* Looks at the starts [.., to) of the window; each has the lookahead after it
 * in the window, or the stream's end. */
static int scan_starts(kernel_list_scan *s, size_t to, rs_error *err)
{
    size_t at = s->skip_to > s->base ? (size_t)(s->skip_to - s->base) : 0;
    const uint8_t *p;

    while (at < to && (p = memchr(s->buf + at, 0x30, to - at)) != NULL) {
        size_t here = (size_t)(p - s->buf), run = list_at(s->buf, s->len, here, s->max_list);

        if (run && found_at(s, here, run, err) < 0)
            return -1;
        at = run ? here + run : here + 1;
    }
    return 0;
}

kernel_list_scan *kernel_list_scan_new(size_t max_list, rs_error *err)
{
    kernel_list_scan *s = calloc(1, sizeof(*s));

    if (!s)
        return rs_fail(err, "out of memory"), NULL;
    s->max_list = max_list;
    s->lookahead = max_list + LIST_TAIL;
    /* Each slide keeps the lookahead and moves it to the front: with four
     * times as much room, a byte is moved a third of a time. The window
     * grows to that as bytes come. */
    s->cap = 4 * s->lookahead;
    return s;
}

void kernel_list_scan_free(kernel_list_scan *s)
{
    if (!s)
        return;
    free(s->buf);
    rs_bytes_free(&s->list);
    free(s);
}

/* Room for n more bytes in the window, up to its capacity. */
static int grow(kernel_list_scan *s, size_t n, rs_error *err)
{
    size_t want = s->alloc ? s->alloc : 64 * 1024;
    uint8_t *buf;

    while (want < s->len + n && want < s->cap)
        want *= 2;
    if (want > s->cap)
        want = s->cap;
    if (want <= s->alloc)
        return 0;
    if (!(buf = realloc(s->buf, want)))
        return rs_fail(err, "out of memory");
    s->buf = buf;
    s->alloc = want;
    return 0;
}

int kernel_list_scan_feed(kernel_list_scan *s, const uint8_t *data, size_t len, rs_error *err)
{
    if (grow(s, len, err) < 0)
        return -1;
    while (len) {
        size_t n = s->alloc - s->len < len ? s->alloc - s->len : len, keep = s->lookahead;

        memcpy(s->buf + s->len, data, n);
        s->len += n;
        data += n;
        len -= n;
        if (s->len < s->cap) {
            if (len && grow(s, len, err) < 0)
                return -1;
            continue;
        }
        if (scan_starts(s, s->cap - keep, err) < 0)
            return -1;
        memmove(s->buf, s->buf + s->cap - keep, keep);
        s->base += s->cap - keep;
        s->len = keep;
    }
    return 0;
}

int kernel_list_scan_end(kernel_list_scan *s, const uint8_t **list, size_t *size, uint64_t *start, rs_error *err)
{
    if (scan_starts(s, s->len, err) < 0)
        return -1;
    if (s->found > 1)
        return rs_fail(err, "two built-in certificate lists (at %llu and %llu in the decompressed kernel): "
                            "which one the kernel loads cannot be told",
                       (unsigned long long)s->starts[0], (unsigned long long)s->starts[1]);
    if (!s->found)
        return rs_fail(err, "no built-in certificate list (system_certificate_list, at most %zu bytes) "
                            "in the decompressed kernel",
                       s->max_list);
    *list = s->list.data;
    *size = s->list.len;
    *start = s->starts[0];
    return 0;
}

int kernel_cert_list_add(const uint8_t *data, size_t len, rs_trust *t, size_t *count, rs_error *err)
{
    *count = 0;
    for (size_t off = 0, n; off < len; off += n) {
        const unsigned char *p = data + off;
        _cleanup_(rs_x509p) X509 *cert = NULL;

        n = der_at(data + off, len - off);
        cert = d2i_X509(NULL, &p, (long)n);
        if (!cert)
            return rs_fail_ssl(err, "a built-in certificate no longer parses");
        if (rs_trust_add_anchor(t, cert, err) < 0)
            return -1;
        (*count)++;
    }
    return 0;
}

int kernel_cert_list_find(const uint8_t *data, size_t len, size_t *start, size_t *size, rs_error *err)
{
    kernel_list_scan *s = kernel_list_scan_new(KERNEL_MAX_CERT_LIST, err);
    const uint8_t *list;
    uint64_t at = 0;
    int r;

    if (!s)
        return -1;
    r = kernel_list_scan_feed(s, data, len, err);
    if (r == 0 && (r = kernel_list_scan_end(s, &list, size, &at, err)) == 0)
        *start = (size_t)at;
    kernel_list_scan_free(s);
    return r;
}
