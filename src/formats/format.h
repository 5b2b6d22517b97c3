/* The format layer: every signable file type (PE/COFF EFI images, Linux
 * kernel modules) implements this one table of operations. Commands, the
 * pipeline and the service work only through it, so none of them knows
 * which format it is handling. Modelled on osslsigncode's FILE_FORMAT. */
#ifndef RS_FORMAT_H
#define RS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/bytes.h"
#include "base/error.h"
#include "base/file.h"
#include "crypto/digest.h"
#include "crypto/signer.h"
#include "crypto/trust.h"

typedef struct rs_format rs_format;

/* An opened file of a known format. `priv` belongs to the format. */
typedef struct rs_image {
    const rs_format *format;
    rs_input in;
    void *priv;
} rs_image;

typedef struct rs_sign_options {
    const EVP_MD *md;
    bool signing_time;       /* include a signingTime attribute */
    time_t time;             /* its value */
    bool use_key_id;         /* identify the signer by subjectKeyIdentifier */
} rs_sign_options;

/* What `list` shows about one signature. Strings are malloc'ed or NULL. */
typedef struct rs_sig_info {
    const char *kind;        /* "authenticode", "module-cms" */
    char *subject;           /* signer subject, when the certificate is embedded */
    char *issuer;
    char *serial;            /* hex */
    char *key_id;            /* hex subjectKeyIdentifier, when used */
    const EVP_MD *md;
    char signing_time[32];   /* ISO 8601, or "" */
    rs_digest bound_digest;  /* the image digest inside the signature; len 0 if none */
    size_t length;           /* bytes of DER */
} rs_sig_info;

void rs_sig_info_free(rs_sig_info *info);

typedef struct rs_verify_report {
    bool ok;
    char *anchor;            /* subject of the certificate it chained to */
    char *signer;            /* signer subject */
    rs_digest expected;      /* digest carried or implied by the signature */
    rs_digest actual;        /* digest of the image */
    char reason[RS_ERROR_MAX]; /* why it failed */
    /* Module signatures: a trusted certificate has the signer's identifier,
     * so the kernel would find the key (and a failure is -EKEYREJECTED,
     * not -ENOKEY). */
    bool key_found;
} rs_verify_report;

void rs_verify_report_free(rs_verify_report *r);

/* A rewrite of an image: drop some signatures, then append new ones. */
typedef struct rs_edit {
    bool remove_all;
    long remove_index;       /* -1: none */
    const rs_bytes *append;
    size_t n_append;
} rs_edit;

struct rs_format {
    const char *name;
    /* The files.json sig_type whose key signs this format: one key, one
     * purpose (docs/security.md). */
    const char *sig_type;
    /* The key signs the image digest itself, with no signed attributes
     * around it (a module's CMS). A signing service must then read the
     * image to know what it signs: a digest alone could be anything's. */
    bool key_signs_image_digest;
    /* Cheap check of the leading bytes; open() does the real validation. */
    bool (*probe)(const rs_input *in);
    int (*open)(rs_image *img, rs_error *err);
    void (*close)(rs_image *img);

    /* The digest a signature over this image must bind to. */
    int (*digest)(rs_image *img, const EVP_MD *md, rs_digest *out, rs_error *err);

    size_t (*count)(rs_image *img);
    int (*extract)(rs_image *img, size_t index, rs_bytes *der, rs_error *err);
    int (*describe)(const rs_bytes *der, rs_sig_info *info, rs_error *err);

    /* Signing, in two phases around the key, so that a key file, a token,
     * the service's socket and an offline machine all sign through the
     * same calls. Both work from the image's digest alone (as returned by
     * digest() with opts->md), so a batch can check every file before
     * signing any, and a signer never needs the file.
     *
     * to_be_signed: the exact bytes the key of cert signs (Authenticode's
     * DER signed attributes; with key_signs_image_digest, the digest
     * itself). It refuses a certificate assemble could not name, so that
     * nothing is signed in vain. rs_tbs_digest() gives the digest a signer
     * is handed for those bytes. */
    int (*to_be_signed)(const rs_digest *digest, X509 *cert, const rs_sign_options *opts, rs_bytes *tbs,
                        rs_error *err);
    /* assemble: the detached signature (DER) from those bytes, the key's
     * signature over them, its certificate and extra certificates to
     * embed (chain; may be NULL). Refuses bytes made for another digest. */
    int (*assemble)(const rs_digest *digest, const rs_bytes *tbs, const rs_bytes *signature, X509 *cert,
                    STACK_OF(X509) *chain, const rs_sign_options *opts, rs_bytes *der, rs_error *err);

    /* Checks that a detached signature belongs to this exact image. cert
     * is the signer's certificate for formats whose signatures carry none
     * (may be NULL otherwise). Fails naming both digests on a mismatch. */
    int (*check_binding)(rs_image *img, const rs_bytes *der, X509 *cert, rs_error *err);

    /* Full verification of one signature against trust anchors. Returns 0
     * when the check ran (the verdict is in report->ok), -1 on error. */
    int (*verify)(rs_image *img, const rs_bytes *der, const rs_trust *trust, rs_verify_report *report,
                  rs_error *err);

    /* Writes the image with its signatures edited. */
    int (*write)(rs_image *img, const rs_edit *edit, rs_output *out, rs_error *err);

    /* How many signatures the format can carry; 0 means no limit. */
    size_t max_signatures;

    /* The signatures carry no certificate, so check_binding can only
     * check them when given the signer's; without one it checks form only. */
    bool binding_needs_cert;

    /* Firmware verifies it, and most firmware accepts only SHA-256. */
    bool firmware_prefers_sha256;
};

/* The format of a name ("pe", "module") or of a sig_type ("efi",
 * "linux-module"); NULL if none. */
const rs_format *rs_format_named(const char *name);
const rs_format *rs_format_for_sig_type(const char *sig_type);

/* Detects the format from the bytes and opens the file. Errors are
 * prefixed with the path. */
int rs_image_open(rs_image *img, const char *path, rs_error *err);
/* The same for an open file descriptor (taken over); name is for messages. */
int rs_image_open_fd(rs_image *img, int fd, const char *name, rs_error *err);
/* The same, trying only the one format: bytes someone else chose (the
 * socket's attached image) reach no other format's parser. */
int rs_image_open_fd_as(rs_image *img, int fd, const rs_format *format, const char *name, rs_error *err);
void rs_image_close(rs_image *img);
/* The digest a signer signs for the bytes to_be_signed gave: their hash
 * with md, or, for a format whose key signs the image digest, those bytes
 * themselves. */
int rs_tbs_digest(const rs_format *f, const rs_bytes *tbs, const EVP_MD *md, rs_digest *out, rs_error *err);
/* A detached signature made with a key at hand: to_be_signed, the key's
 * signature over rs_tbs_digest, assemble. */
int rs_format_sign_digest(const rs_format *f, const rs_digest *digest, rs_signer *signer, const rs_sign_options *opts,
                          rs_bytes *der, rs_error *err);
/* The same for an open image: its digest, then rs_format_sign_digest. */
int rs_image_sign(rs_image *img, rs_signer *signer, const rs_sign_options *opts, rs_bytes *der, rs_error *err);
#define _cleanup_image_ __attribute__((cleanup(rs_image_close)))

extern const rs_format rs_format_pe;
extern const rs_format rs_format_module;

#endif
