/* Makes detached signatures for image digests, either with a key at hand
 * or through the signing service's socket (service/remote_signer.h),
 * which holds the key. The pipeline signs through this and never knows
 * which: the service signs only requests it can rebuild (ops/offline.h),
 * never a bare digest, so the socket cannot sit behind rs_signer. */
#ifndef RS_IMAGE_SIGNER_H
#define RS_IMAGE_SIGNER_H

#include "crypto/signer.h"
#include "formats/format.h"

typedef struct rs_image_signer rs_image_signer;

typedef struct rs_image_signer_ops {
    /* The detached signature (DER) over an image of format f with digest
     * d. name says which file it is, for the service's log; image_fd, when
     * not -1, reads the image itself (see wants_image). Must be safe to
     * call from several threads. */
    int (*sign)(rs_image_signer *s, const rs_format *f, const rs_digest *d, const rs_sign_options *o,
                const char *name, int image_fd, rs_bytes *der, rs_error *err);
    void (*destroy)(rs_image_signer *s);
} rs_image_signer_ops;

struct rs_image_signer {
    const rs_image_signer_ops *ops;
    X509 *cert;                  /* the certificate signatures name */
    /* For formats whose key signs the image digest itself (modules), the
     * signer must be given the image: the service signs only bytes it has
     * read (docs/security.md). A local key needs no such thing. */
    bool wants_image;
};

/* Signs with key, which must outlive the image signer. */
int rs_image_signer_local(rs_signer *key, rs_image_signer **out, rs_error *err);
int rs_image_signer_sign(rs_image_signer *s, const rs_format *f, const rs_digest *d, const rs_sign_options *o,
                         const char *name, int image_fd, rs_bytes *der, rs_error *err);
/* Whether sign() must be given the image of format f. */
bool rs_image_signer_wants_image(const rs_image_signer *s, const rs_format *f);
void rs_image_signer_free(rs_image_signer *s);
static inline void rs_image_signerp(rs_image_signer **s)
{
    if (*s)
        rs_image_signer_free(*s);
}

#endif
