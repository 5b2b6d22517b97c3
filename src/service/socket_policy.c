#include "service/socket_policy.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "pipeline/files_json.h"

int rs_socket_keys_init(rs_socket_keys *k, rs_signer *const *signers, size_t n, rs_error *err)
{
    *k = (rs_socket_keys){ .signers = signers, .n = n };
    if (!(k->fingerprints = calloc(n + 1, sizeof(*k->fingerprints))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!signers[i])
            continue;
        if (rs_known_certs_add(&k->known, signers[i]->cert, err) < 0)
            return -1;
        rs_hex(k->known.sha256[k->known.n - 1], 32, k->fingerprints[i]);
    }
    return 0;
}

void rs_socket_keys_free(rs_socket_keys *k)
{
    rs_known_certs_free(&k->known);
    free(k->fingerprints);
    k->fingerprints = NULL;
}

/* One key, one purpose: the request's format names the only key that may
 * sign it, and the request must name that key's certificate. */
static int signer_for(const rs_socket_keys *k, const rs_offline_request *r, size_t *key, rs_error *err)
{
    const char *type = r->format->sig_type;
    char named[65];

    for (size_t i = 0; i < k->n; i++) {
        if (strcmp(rs_sig_type_name((rs_sig_type)i), type) != 0)
            continue;
        if (!k->signers[i])
            break;
        if (X509_cmp(k->signers[i]->cert, r->cert) != 0) {
            rs_x509_fingerprint(r->cert, named);
            return rs_fail(err, "the request names certificate %.16s..., but the %s key's is %.16s...; "
                                "a key signs only its own sig_type", named, type, k->fingerprints[i]);
        }
        *key = i;
        return 0;
    }
    return rs_fail(err, "the service holds no key for sig_type %s", type);
}

/* For a format whose key signs the image digest itself, a digest alone
 * could be anything's (a certificate's, another format's attributes): the
 * service signs only after reading the image and finding that digest. */
static int check_attached_image(rs_frame_reader *rd, const rs_offline_request *r, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    const int sealed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
    int fd = r->image_attached ? rs_frame_take_fd(rd) : -1, seals;
    rs_digest d;

    if (!r->format->key_signs_image_digest) {
        if (fd >= 0)
            close(fd);
        return r->image_attached ? rs_fail(err, "a %s request takes no attached image", r->format->name) : 0;
    }
    if (fd < 0)
        return rs_fail(err, "a %s is signed only from its own bytes: attach it (reprosign sign --via does)",
                       r->format->name);
    if ((seals = fcntl(fd, F_GET_SEALS)) < 0 || (seals & sealed) != sealed) {
        close(fd);
        return rs_fail(err, "the attached image is not a sealed memfd, so it could change while it is read");
    }
    if (rs_image_open_fd_as(&img, fd, r->format, "the attached image", err) < 0)
        return -1;
    if (img.format->digest(&img, r->opts.md, &d, err) < 0)
        return rs_error_prefix(err, "the attached image");
    if (!rs_digest_equal(&d, &r->image_digest))
        return rs_fail(err, "the attached image's digest is not the request's image_digest");
    return 0;
}

void rs_socket_claim(const char *file, char out[RS_SOCKET_CLAIM_SIZE])
{
    size_t n = 0;

    for (size_t i = 0; file[i] && i < RS_SOCKET_MAX_PATH; i++) {
        unsigned char b = (unsigned char)file[i];

        if (b > ' ' && b < 0x7f && b != '\\')
            out[n++] = (char)b;
        else
            n += (size_t)snprintf(out + n, RS_SOCKET_CLAIM_SIZE - n, "\\x%02x", b);
    }
    out[n] = '\0';
}

int rs_socket_sign(const rs_socket_keys *k, rs_frame_reader *rd, const char *msg, size_t len,
                   rs_offline_request *r, size_t *key, rs_bytes *sig, rs_error *err)
{
    if (rs_offline_request_read_known(msg, len, &k->known, r, err) < 0)
        return -1;
    if (r->file && strlen(r->file) > RS_SOCKET_MAX_PATH) {
        rs_offline_request_free(r);
        return rs_fail(err, "file: the socket takes a file name of at most %d bytes", RS_SOCKET_MAX_PATH);
    }
    if (signer_for(k, r, key, err) < 0 || check_attached_image(rd, r, err) < 0 ||
        rs_offline_sign(r, k->signers[*key], sig, err) < 0) {
        rs_offline_request_free(r);
        return -1;
    }
    return 0;
}
