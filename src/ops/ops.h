/* Whole-file operations, shared by the CLI, the pipeline and the service.
 * They work only through the format interface. Every output is written
 * atomically: on failure nothing is left at the output path. */
#ifndef RS_OPS_H
#define RS_OPS_H

#include <stdbool.h>

#include "formats/format.h"
#include "ops/image_signer.h"

/* SOURCE_DATE_EPOCH, validated; *set is false when it is unset or empty. */
int rs_source_date_epoch(time_t *t, bool *set, rs_error *err);

/* Options for a signature: hash from the caller, signingTime from
 * SOURCE_DATE_EPOCH when set (for reproducible output), else the clock. */
int rs_sign_options_init(rs_sign_options *opts, const char *hash, bool signing_time, rs_error *err);

/* Where a signature goes, and what becomes of the image's own. */
typedef struct rs_sign_target {
    bool detached;           /* output receives only the signature */
    const char *output;      /* NULL: the image in place */
    bool replace;            /* drop the image's signatures first (else the new one is added) */
} rs_sign_target;

/* What signing found: the caller warns about what the user may not have
 * meant (the CLI: an image already signed, a hash firmware may refuse). */
typedef struct rs_sign_report {
    size_t existing;         /* signatures the image had */
    const rs_format *format;
} rs_sign_report;

/* Signs path, with a local key or through the service's socket. */
int rs_op_sign(const char *path, rs_image_signer *signer, const rs_sign_options *opts, const rs_sign_target *t,
               rs_sign_report *report, rs_error *err);

/* Attaches a detached signature after checking it belongs to the image.
 * cert is the signer certificate, needed by formats whose signatures carry
 * none (may be NULL). output NULL means in place. */
int rs_op_attach(const char *sig_path, const char *path, X509 *cert, const char *output, rs_error *err);

/* A signature made elsewhere (offline, or by the signing service), checked
 * against the image like attach does, then written alone (detached) or
 * attached. output NULL means in place. */
int rs_op_emit(const char *path, const rs_bytes *sig, const char *sig_path, X509 *cert, bool detached,
               const char *output, rs_error *err);

/* Writes signature index of path to output, or to stdout when output is
 * NULL (refused when stdout is a terminal: DER is binary). */
int rs_op_detach(const char *path, size_t index, const char *output, rs_error *err);

/* Removes all signatures (index < 0) or one. output NULL means in place. */
int rs_op_strip(const char *path, long index, const char *output, rs_error *err);

typedef struct rs_listing {
    const char *format;
    size_t count;
    rs_sig_info *sigs;
} rs_listing;

int rs_op_list(const char *path, rs_listing *out, rs_error *err);
void rs_listing_free(rs_listing *l);

typedef struct rs_verification {
    const char *format;
    size_t count;
    rs_verify_report *reports;
    bool ok;                 /* at least one signature verified */
} rs_verification;

int rs_op_verify(const char *path, const rs_trust *trust, rs_verification *out, rs_error *err);
void rs_verification_free(rs_verification *v);

int rs_op_digest(const char *path, const EVP_MD *md, rs_digest *out, rs_error *err);

#endif
