/* The CMS SignedData of a module signature, as scripts/sign-file makes
 * it: detached, no certificates, no signed attributes, one SignerInfo
 * naming its key by issuer and serial or by subjectKeyIdentifier. */
#ifndef RS_MODULE_CMS_H
#define RS_MODULE_CMS_H

#include <stdbool.h>

#include "base/bytes.h"
#include "base/file.h"
#include "crypto/digest.h"
#include "crypto/ossl.h"
#include "crypto/trust.h"
#include "formats/format.h"

/* The bytes a module signature covers: a prefix of a file. */
typedef struct module_content {
    const rs_input *in;
    uint64_t len;
} module_content;

int module_content_digest(const module_content *content, const EVP_MD *md, rs_digest *out, rs_error *err);

/* The CMS around a signature over the digest of the module bytes (with
 * no signed attributes the key signs that digest itself). */
int module_cms_assemble(const rs_digest *content, const rs_bytes *signature, X509 *cert, bool use_key_id,
                        rs_bytes *der, rs_error *err);

/* Decodes a module CMS, refusing anything but a detached SignedData with
 * exactly one SignerInfo and nothing after the DER. */
int module_cms_parse(const rs_bytes *der, CMS_ContentInfo **out, rs_error *err);

int module_cms_describe(const rs_bytes *der, rs_sig_info *info, rs_error *err);

/* Checks that the signature was made by cert's key over the content. */
int module_cms_check(CMS_ContentInfo *cms, X509 *cert, const module_content *content, rs_error *err);

/* Finds the signer among the trust anchors and checks the signature.
 * The verdict and the content digest go in report; returns -1 only on
 * errors. */
int module_cms_verify(const rs_bytes *der, const rs_trust *trust, const module_content *content,
                      rs_verify_report *report, rs_error *err);

#endif
