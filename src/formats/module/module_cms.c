#include "formats/module/module_cms.h"

#include <openssl/err.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Far more than any module signature; a bigger sig_len is garbage. */
#define MAX_MODULE_CMS (1024 * 1024)

/* The flags of scripts/sign-file, so the DER comes out the same. */
#define SIGN_FILE_CMS_FLAGS (CMS_NOCERTS | CMS_PARTIAL | CMS_BINARY | CMS_DETACHED | CMS_STREAM)
#define SIGN_FILE_SIGNER_FLAGS (CMS_NOCERTS | CMS_BINARY | CMS_NOSMIMECAP | CMS_NOATTR)

int module_content_digest(const module_content *content, const EVP_MD *md, rs_digest *out, rs_error *err)
{
    _cleanup_(rs_mdctxp) EVP_MD_CTX *ctx = EVP_MD_CTX_new();

    if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL))
        return rs_fail_ssl(err, "digest failed");
    if (rs_input_hash(content->in, 0, content->len, ctx, err) < 0)
        return -1;
    out->md = md;
    if (!EVP_DigestFinal_ex(ctx, out->bytes, &out->len))
        return rs_fail_ssl(err, "digest failed");
    return 0;
}

/* What CMS_add1_signer builds (the issuer's name copied, the algorithms
 * set) is the same for every signature by one certificate and digest, and
 * building it for each module took a tenth of the module-heavy template's
 * CPU beyond the signatures and the digests. Each thread keeps the last one
 * it built, freed when the thread ends, and puts only the next signature
 * in it. */
typedef struct cms_shell {
    CMS_ContentInfo *cms;
    CMS_SignerInfo *si;
    X509 *cert;   /* a reference held, so the pointer names this certificate */
    int md_nid;
    bool use_key_id;
} cms_shell;

static pthread_key_t shell_key;
static bool shell_key_made;
static pthread_once_t shell_once = PTHREAD_ONCE_INIT;

static void shell_free(void *p)
{
    cms_shell *s = p;

    if (!s)
        return;
    CMS_ContentInfo_free(s->cms);
    X509_free(s->cert);
    free(s);
}

static void make_shell_key(void)
{
    shell_key_made = pthread_key_create(&shell_key, shell_free) == 0;
}

static int build_shell(cms_shell *s, X509 *cert, const EVP_MD *md, bool use_key_id, rs_error *err)
{
    _cleanup_(rs_cmsp) CMS_ContentInfo *cms = CMS_sign(NULL, NULL, NULL, NULL, SIGN_FILE_CMS_FLAGS);
    CMS_SignerInfo *si;

    if (!cms)
        return rs_fail_ssl(err, "cannot create CMS SignedData");
    /* The public key is enough to set the algorithms; CMS_final, which
     * would want the private key, is never called. */
    si = CMS_add1_signer(cms, cert, X509_get0_pubkey(cert), md,
                         SIGN_FILE_SIGNER_FLAGS | (use_key_id ? CMS_USE_KEYID : 0));
    if (!si)
        return rs_fail_ssl(err, "cannot create SignerInfo%s",
                           use_key_id ? " (does the certificate have a subjectKeyIdentifier?)" : "");
    if (!X509_up_ref(cert))
        return rs_fail_ssl(err, "cannot hold the certificate");
    CMS_ContentInfo_free(s->cms);
    X509_free(s->cert);
    *s = (cms_shell){ .cms = TAKE_PTR(cms), .si = si, .cert = cert, .md_nid = EVP_MD_get_type(md),
                      .use_key_id = use_key_id };
    return 0;
}

/* This thread's shell for cert and md, built if it has none for them. */
static int thread_shell(X509 *cert, const EVP_MD *md, bool use_key_id, cms_shell **out, rs_error *err)
{
    cms_shell *s;

    *out = NULL;
    if (pthread_once(&shell_once, make_shell_key) != 0 || !shell_key_made)
        return rs_fail(err, "cannot make a thread key");
    s = pthread_getspecific(shell_key);
    if (!s) {
        if (!(s = calloc(1, sizeof(*s))))
            return rs_fail(err, "out of memory");
        if (pthread_setspecific(shell_key, s) != 0) {
            free(s);
            return rs_fail(err, "out of memory");
        }
    }
    if (!s->cms || s->cert != cert || s->md_nid != EVP_MD_get_type(md) || s->use_key_id != use_key_id)
        if (build_shell(s, cert, md, use_key_id, err) < 0)
            return -1;
    *out = s;
    return 0;
}

int module_cms_assemble(const rs_digest *content, const rs_bytes *signature, X509 *cert, bool use_key_id,
                        rs_bytes *der, rs_error *err)
{
    cms_shell *s = NULL;
    unsigned char *out = NULL;
    int len;

    if (thread_shell(cert, content->md, use_key_id, &s, err) < 0)
        return -1;
    if (signature->len > INT_MAX ||
        !ASN1_STRING_set(CMS_SignerInfo_get0_signature(s->si), signature->data, (int)signature->len))
        return rs_fail(err, "out of memory");
    len = i2d_CMS_ContentInfo(s->cms, &out);
    if (len <= 0)
        return rs_fail_ssl(err, "cannot encode CMS");
    rs_bytes_adopt(der, out, (size_t)len);
    return 0;
}

static bool is_detached(CMS_ContentInfo *cms)
{
    ASN1_OCTET_STRING **content = CMS_get0_content(cms);

    return content && !*content;
}

int module_cms_parse(const rs_bytes *der, CMS_ContentInfo **out, rs_error *err)
{
    _cleanup_(rs_cmsp) CMS_ContentInfo *cms = NULL;
    const unsigned char *p = der->data;

    if (der->len > MAX_MODULE_CMS)
        return rs_fail(err, "module signature too large (%zu bytes)", der->len);
    cms = d2i_CMS_ContentInfo(NULL, &p, (long)der->len);
    if (!cms)
        return rs_fail_ssl(err, "module signature is not valid CMS DER");
    if (p != der->data + der->len)
        return rs_fail(err, "module signature has %zu bytes after the CMS", (size_t)(der->data + der->len - p));
    if (OBJ_obj2nid(CMS_get0_type(cms)) != NID_pkcs7_signed)
        return rs_fail(err, "module signature is not CMS SignedData");
    if (sk_CMS_SignerInfo_num(CMS_get0_SignerInfos(cms)) != 1)
        return rs_fail(err, "module signature must have exactly one SignerInfo");
    if (OBJ_obj2nid(CMS_get0_eContentType(cms)) != NID_pkcs7_data || !is_detached(cms))
        return rs_fail(err, "module signature must be detached CMS over data");
    *out = TAKE_PTR(cms);
    return 0;
}

static CMS_SignerInfo *the_signer(CMS_ContentInfo *cms)
{
    return sk_CMS_SignerInfo_value(CMS_get0_SignerInfos(cms), 0);
}

static int signer_md(CMS_SignerInfo *si, const EVP_MD **md, rs_error *err)
{
    X509_ALGOR *dig;

    CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, NULL);
    *md = dig ? EVP_get_digestbyobj(dig->algorithm) : NULL;
    return *md ? 0 : rs_fail(err, "unknown digest algorithm in module signature");
}

/* Some signers embed their certificate although sign-file does not. */
static char *embedded_subject(CMS_ContentInfo *cms, CMS_SignerInfo *si)
{
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *certs = CMS_get1_certs(cms);

    for (int i = 0; i < sk_X509_num(certs); i++)
        if (CMS_SignerInfo_cert_cmp(si, sk_X509_value(certs, i)) == 0)
            return rs_x509_name(X509_get_subject_name(sk_X509_value(certs, i)));
    return NULL;
}

static int describe_id(CMS_SignerInfo *si, rs_sig_info *info, rs_error *err)
{
    ASN1_OCTET_STRING *keyid = NULL;
    X509_NAME *issuer = NULL;
    ASN1_INTEGER *serial = NULL;

    if (!CMS_SignerInfo_get0_signer_id(si, &keyid, &issuer, &serial))
        return rs_fail_ssl(err, "module signature has no signer identifier");
    if (keyid) {
        info->key_id = malloc(2 * (size_t)keyid->length + 1);
        if (!info->key_id)
            return rs_fail(err, "out of memory");
        rs_hex(keyid->data, (size_t)keyid->length, info->key_id);
        return 0;
    }
    info->issuer = rs_x509_name(issuer);
    info->serial = rs_asn1_int_hex(serial);
    return info->issuer && info->serial ? 0 : rs_fail(err, "out of memory");
}

int module_cms_describe(const rs_bytes *der, rs_sig_info *info, rs_error *err)
{
    _cleanup_(rs_cmsp) CMS_ContentInfo *cms = NULL;
    CMS_SignerInfo *si;

    memset(info, 0, sizeof(*info));
    if (module_cms_parse(der, &cms, err) < 0)
        return -1;
    si = the_signer(cms);
    info->kind = "module-cms";
    info->length = der->len;
    if (signer_md(si, &info->md, err) < 0 || describe_id(si, info, err) < 0) {
        rs_sig_info_free(info);
        return -1;
    }
    info->subject = embedded_subject(cms, si);
    return 0;
}

/* Streams the module bytes into a digest BIO, which is where OpenSSL's
 * SignerInfo check takes the content digest from. */
static int digest_bio(const EVP_MD *md, const module_content *content, BIO **out, rs_error *err)
{
    _cleanup_(rs_biop) BIO *mdbio = BIO_new(BIO_f_md());
    EVP_MD_CTX *ctx = NULL;

    if (!mdbio || !BIO_set_md(mdbio, md) || !BIO_get_md_ctx(mdbio, &ctx))
        return rs_fail_ssl(err, "cannot set up digest");
    if (rs_input_hash(content->in, 0, content->len, ctx, err) < 0)
        return -1;
    *out = TAKE_PTR(mdbio);
    return 0;
}

int module_cms_check(CMS_ContentInfo *cms, X509 *cert, const module_content *content, rs_error *err)
{
    _cleanup_(rs_biop) BIO *chain = NULL;
    CMS_SignerInfo *si = the_signer(cms);
    const EVP_MD *md;

    if (CMS_SignerInfo_cert_cmp(si, cert) != 0)
        return rs_fail(err, "module signature names a different signer than the certificate");
    if (signer_md(si, &md, err) < 0 || digest_bio(md, content, &chain, err) < 0)
        return -1;
    CMS_SignerInfo_set1_signer_cert(si, cert);
    /* With signed attributes the key signs them, and they carry the
     * content digest; without, it signs the content digest directly. */
    if (CMS_signed_get_attr_count(si) >= 0 && CMS_SignerInfo_verify(si) != 1)
        return rs_fail_ssl(err, "module signature does not verify with the certificate's key");
    if (CMS_SignerInfo_verify_content(si, chain) != 1)
        return rs_fail_ssl(err, "module signature does not verify over the module bytes with the certificate's key");
    return 0;
}

static void report_fail(rs_verify_report *report, const char *why)
{
    report->ok = false;
    snprintf(report->reason, sizeof(report->reason), "%s", why);
}

int module_cms_verify(const rs_bytes *der, const rs_trust *trust, const module_content *content,
                      rs_verify_report *report, rs_error *err)
{
    _cleanup_(rs_cmsp) CMS_ContentInfo *cms = NULL;
    rs_error why = { "signer is not among the given certificates (module signatures carry none)", false };
    const EVP_MD *md;

    if (module_cms_parse(der, &cms, err) < 0)
        return -1;
    if (signer_md(the_signer(cms), &md, err) < 0 || module_content_digest(content, md, &report->actual, err) < 0)
        return -1;
    /* The kernel looks the key up in its keyrings; the anchors play that
     * role, and any certificates in the CMS are ignored as it ignores them. */
    for (int i = 0; i < sk_X509_num(trust->anchors); i++) {
        X509 *anchor = sk_X509_value(trust->anchors, i);

        if (CMS_SignerInfo_cert_cmp(the_signer(cms), anchor) != 0)
            continue;
        report->key_found = true;
        if (module_cms_check(cms, anchor, content, &why) < 0)
            continue;
        report->signer = rs_x509_name(X509_get_subject_name(anchor));
        report->anchor = rs_x509_name(X509_get_subject_name(anchor));
        report->ok = true;
        return 0;
    }
    report_fail(report, why.msg);
    return 0;
}
