/* Offline (air-gapped) signing, in three steps:
 *
 *   prepare  (networked machine, certificate only): opens the file, asks
 *            the format for the bytes to be signed (its to_be_signed) and
 *            records the one digest the key must sign (the signed
 *            attributes' digest for Authenticode, the module bytes' digest
 *            for modules) in a request;
 *   sign     (offline machine, key only): signs that digest from the
 *            request with any key backend, writing the raw signature value;
 *   finish   (networked machine): checks the signature value with the
 *            certificate, then has the format assemble the container.
 *
 * Because the bytes to be signed are deterministic given the image
 * digest, the options and the certificate, the result is byte-identical
 * to signing in one step with the same key and time. The request is also what the
 * signing service's socket carries: a client sends only what must be
 * signed, never a key. */
#ifndef RS_OFFLINE_H
#define RS_OFFLINE_H

#include "formats/format.h"
#include "ops/known_certs.h"

typedef struct rs_offline_request {
    const rs_format *format;
    char *file;                  /* informational: the file it was made for */
    rs_digest image_digest;      /* what the signature will bind to */
    rs_sign_options opts;        /* hash, signing time, key id */
    X509 *cert;                  /* the signer certificate */
    STACK_OF(X509) *chain;       /* extra certificates to embed */
    rs_bytes to_be_signed;       /* what the format has the key sign */
    rs_digest tbs;               /* its digest, which the key signs */
    bool image_attached;         /* on the socket: the image's bytes came along */
} rs_offline_request;

void rs_offline_request_free(rs_offline_request *r);

/* Builds a request for the image at path (signatures are over its digest). */
int rs_offline_prepare(const char *path, X509 *cert, STACK_OF(X509) *chain, const rs_sign_options *opts,
                       rs_offline_request *out, rs_error *err);
/* The same from an image digest alone (format named by its table). */
int rs_offline_prepare_digest(const rs_format *format, const rs_digest *image_digest, X509 *cert,
                              STACK_OF(X509) *chain, const rs_sign_options *opts, rs_offline_request *out,
                              rs_error *err);

/* JSON text of a request, and back; parsing validates everything. */
int rs_offline_request_write(const rs_offline_request *r, char **json, rs_error *err);
int rs_offline_request_read(const char *json, size_t len, rs_offline_request *out, rs_error *err);
/* The same from a file (`sign --request`, `sign-blob`). A request holds a
 * digest, a certificate chain and options: a few KB, so a file of over
 * RS_OFFLINE_REQUEST_MAX is refused unread. */
#define RS_OFFLINE_REQUEST_MAX (1024 * 1024)
int rs_offline_request_load(const char *path, rs_offline_request *out, rs_error *err);
/* The request as it goes to the signing service: compact, and naming the
 * certificate by its SHA-256 ("certificate_sha256") instead of carrying
 * it and the chain. The service signs only with certificates it holds,
 * and a kilobyte of base64 it already has cost more to write and parse
 * than the rest of the request. cert_sha256 is the certificate's
 * fingerprint in hex, as rs_x509_fingerprint gives it. */
int rs_offline_request_write_wire(const rs_offline_request *r, const char cert_sha256[65], char **json,
                                  rs_error *err);
int rs_offline_request_read_known(const char *json, size_t len, const rs_known_certs *known,
                                  rs_offline_request *out, rs_error *err);

/* Signs the request's tbs digest with a signer whose certificate must be
 * the request's. sig receives the raw signature value. */
int rs_offline_sign(const rs_offline_request *r, rs_signer *signer, rs_bytes *sig, rs_error *err);

/* Whether a signature value comes from the request's certificate's key
 * over its tbs digest: checked before it is wrapped into anything. */
int rs_offline_check_value(const rs_offline_request *r, const rs_bytes *sig, rs_error *err);

/* Assembles the detached signature (DER) from a signature value, which is
 * first checked against the request's certificate. */
int rs_offline_finish(const rs_offline_request *r, const rs_bytes *sig, rs_bytes *der, rs_error *err);

#endif
