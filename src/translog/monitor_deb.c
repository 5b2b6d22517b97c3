/* `log monitor`'s binary packages, which are what machines boot. Every
 * regular file of a .deb's data.tar is streamed, one at a time, into a
 * sealed memfd (pipeline/deb.h: never unpacked, each bounded); a file
 * compressed with xz, zstd or gzip is judged by its decompressed bytes,
 * as the kernel and kmod load a compressed module. A file the format
 * table opens (whatever its format: the monitor names none) has its
 * signatures verified against the service's certificates; each one that
 * verifies is the service's, and the log must hold an entry for the
 * image digest it signed. */
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/decompress.h"
#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "formats/format.h"
#include "pipeline/deb.h"
#include "translog/monitor_internal.h"

typedef struct deb_walk {
    const monitor_walk *w;
    const char *path;
} deb_walk;

static bool want_all(void *ctx, const char *name)
{
    (void)ctx;
    (void)name;
    return true;
}

/* Signature i of img: when by one of the service's certificates, its
 * image digest must be logged. 1 when it is the service's. */
static int check_signature(const deb_walk *d, rs_image *img, size_t i, const char *name, rs_error *err)
{
    const monitor_walk *w = d->w;
    _cleanup_bytes_ rs_bytes der = { 0 };
    rs_verify_report report = { 0 };
    char digest[RS_DIGEST_STR];
    rs_hash key;
    rs_error not_ours;
    int rc = 0;

    if (img->format->extract(img, i, &der, &not_ours) < 0)
        return 0;
    if (img->format->verify(img, &der, w->service, &report, &not_ours) == 0 && report.ok) {
        rs_digest_format(&report.actual, digest, sizeof(digest));
        monitor_digest_key(digest, &key);
        if (!monitor_set_has(w->digests, &key)) {
            w->report->unlogged++;
            if (w->report->unlogged_image_fn)
                w->report->unlogged_image_fn(w->report->ctx, d->path, name, digest,
                                             report.signer ? report.signer : "?");
        }
        rs_sha256(der.data, der.len, key.b);   /* the signature itself is published too */
        rc = monitor_set_add(w->published, &key, 0, err) < 0 ? -1 : 1;
    }
    rs_verify_report_free(&report);
    return rc;
}

/* fd (taken over) holds a file's bytes: an image of a known format or not. */
static int check_file(const deb_walk *d, const char *name, int fd, rs_error *err)
{
    rs_image img;
    rs_error not_image;
    bool ours = false;
    int rc = 0;

    if (rs_image_open_fd(&img, fd, name, &not_image) < 0) {
        ERR_clear_error();
        return 0;
    }
    for (size_t i = 0, n = img.format->count(&img); rc >= 0 && i < n; i++)
        if ((rc = check_signature(d, &img, i, name, err)) > 0)
            ours = true;
    d->w->report->images += ours;
    rs_image_close(&img);
    ERR_clear_error();   /* what a foreign signature's check left */
    return rc < 0 ? -1 : 0;
}

/* The reason alone, without the name decompress put before it. */
static const char *reason(const rs_error *e, const char *name)
{
    size_t n = strlen(name);

    return !strncmp(e->msg, name, n) && !strncmp(e->msg + n, ": ", 2) ? e->msg + n + 2 : e->msg;
}

static int take(void *ctx, const char *name, int fd, uint64_t size, rs_error *err)
{
    const deb_walk *d = ctx;
    _cleanup_input_ rs_input in = { .fd = -1 };
    rs_error why;
    uint64_t plain_size;
    int plain = -1, rc;

    if (size == 0) {
        close(fd);
        return 0;
    }
    if (rs_input_from_fd(&in, fd, name, err) < 0)
        return rs_error_prefix(err, "%s", name);
    rc = rs_decompress_input_to_memfd(&in, RS_MAX_DECOMPRESSED, &plain, &plain_size, &why);
    if (rc < 0) {
        monitor_unchecked(d->w, d->path, name, reason(&why, name));
        return 0;
    }
    if (rc == RS_NOT_COMPRESSED && (plain = dup(in.fd)) < 0)
        return rs_fail(err, "%s: cannot duplicate a descriptor", name);
    rs_input_close(&in);   /* the compressed bytes are no longer needed */
    return check_file(d, name, plain, err);
}

int monitor_scan_deb(const monitor_walk *w, const char *path, rs_error *err)
{
    deb_walk d = { w, path };

    if (rs_deb_stream(path, want_all, take, &d, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}
