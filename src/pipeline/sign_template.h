/* The signing step of Debian's two-stage flow: a template plus the
 * unsigned binary packages in, detached signatures, a deterministic
 * signatures tarball, a manifest and a -signed source package out. */
#ifndef RS_SIGN_TEMPLATE_H
#define RS_SIGN_TEMPLATE_H

#include "base/progress.h"
#include "formats/format.h"
#include "ops/image_signer.h"
#include "pipeline/files_json.h"
#include "pipeline/source_binding.h"

/* Every signature in one tarball, for publishing: gzip, because the
 * signatures themselves are random bytes. xz -0 made it 7% smaller and
 * spent a tenth of sign-template's CPU on the module-heavy template
 * encoding bytes it cannot compress (docs/benchmarks.md). */
#define RS_SIGNATURES_TARBALL "signatures.tar.gz"

typedef struct rs_sign_template_options {
    const char *template_spec;   /* template .deb, unpacked root, or files.json */
    const char *packages_dir;    /* .deb files and/or unpacked roots */
    const char *output_dir;      /* must not exist yet */
    const char *allowlist;       /* trusted_certs fingerprints allowed; NULL: none */
    unsigned jobs;               /* 0: one per core */
    rs_sign_options sign;
    /* By rs_sig_type (pipeline/files_json.h): a local key or the service's
     * socket. One may serve both; the service gives each its own key. */
    rs_image_signer *signers[RS_SIG_TYPES];
    rs_progress *progress;       /* NULL: none */
    rs_foreign_sources foreign_sources;   /* sources besides its own the template may sign */
    /* NULL, or the rebuilds each unsigned package needs attested before
     * anything is signed (attest/rebuild_policy.h). */
    const struct rs_rebuild_policy *rebuilds;
} rs_sign_template_options;

int rs_sign_template(const rs_sign_template_options *o, rs_error *err);

#endif
