/* manifest.json: for every signed file, what was signed and by whom,
 * for the transparency log. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "crypto/ossl.h"
#include "ops/offline.h"
#include "pipeline/sign_job.h"

/* The digest the key itself signed, for the log: the image digest where
 * the key signs that directly (modules), else the signed attributes'
 * digest, rebuilt as the signature was (ops/offline.h). */
static int key_signed_digest(const rs_sign_job *j, const rs_sign_item *it, char out[RS_DIGEST_STR], rs_error *err)
{
    _cleanup_(rs_offline_request_free) rs_offline_request r = { 0 };

    if (it->format->key_signs_image_digest) {
        rs_digest_format(&it->digest, out, RS_DIGEST_STR);
        return 0;
    }
    if (rs_offline_prepare_digest(it->format, &it->digest, j->o->signers[it->file->type]->cert, NULL, &j->o->sign,
                                  &r, err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->file->path);
    rs_digest_format(&r.tbs, out, RS_DIGEST_STR);
    return 0;
}

/* Each signer's certificate fingerprint, taken once rather than per file. */
typedef struct manifest_signers {
    char fpr[RS_SIG_TYPES][65];
} manifest_signers;

static void manifest_signers_init(manifest_signers *m, const rs_sign_job *j)
{
    for (size_t t = 0; t < RS_SIG_TYPES; t++)
        if (j->o->signers[t])
            rs_x509_fingerprint(j->o->signers[t]->cert, m->fpr[t]);
        else
            m->fpr[t][0] = '\0';
}

/* text, with indent after each of its newlines: a run of bytes at a time. */
static void write_indented(FILE *f, const char *text, const char *indent)
{
    for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1) {
        fwrite(text, 1, (size_t)(nl - text + 1), f);
        fputs(indent, f);
    }
    fputs(text, f);
}

/* One file's entry, as JSON_INDENT(2) puts it inside "files": [...]. */
static int write_manifest_entry(FILE *f, const rs_sign_job *j, const manifest_signers *m, const rs_sign_item *it,
                                rs_error *err)
{
    char digest[RS_DIGEST_STR], tbs[RS_DIGEST_STR], sig[2 * SHA256_DIGEST_LENGTH + 1];
    _cleanup_free_ char *text = NULL;
    json_auto_t *o = NULL;

    if (key_signed_digest(j, it, tbs, err) < 0)
        return -1;
    rs_digest_format(&it->digest, digest, sizeof(digest));
    rs_hex(it->sig_sha256, sizeof(it->sig_sha256), sig);
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "package", it->pkg->name, "path", it->file->path,
                  "sig_type", rs_sig_type_name(it->file->type), "signed_digest", digest, "tbs_digest", tbs,
                  "signer_fingerprint", m->fpr[it->file->type], "signature_sha256", sig);
    if (!o || !(text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
        return rs_fail(err, "out of memory");
    fputs("    ", f);
    write_indented(f, text, "    ");
    return 0;
}

/* Written entry by entry: a document of 50,000 files is never held whole. */
int rs_sign_write_manifest(const rs_sign_job *j, rs_error *err)
{
    _cleanup_free_ char *path = NULL, *tmp = NULL, *head = NULL;
    _cleanup_fclose_ FILE *f = NULL;
    json_auto_t *top = json_pack("{s:s?, s:s?}", "template", j->tpl.package, "template_version", j->tpl.version);
    manifest_signers signers;
    int rc = 0;

    manifest_signers_init(&signers, j);
    if (asprintf(&path, "%s/manifest.json", j->work) < 0 || asprintf(&tmp, "%s.tmp", path) < 0 || !top ||
        !(head = json_dumps(top, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
        return rs_fail(err, "out of memory");
    if (!(f = fopen(tmp, "we")))
        return rs_fail(err, "%s: %s", tmp, strerror(errno));
    /* head is "{\n  ...\n}", or "{}" with neither member: "files" follows. */
    bool members = strlen(head) > 2;

    head[strlen(head) - (members ? 2 : 1)] = '\0';
    fprintf(f, "%s%s  \"files\": [%s", head, members ? ",\n" : "\n", j->n_items ? "\n" : "");
    for (size_t i = 0; rc == 0 && i < j->n_items; i++) {
        rc = write_manifest_entry(f, j, &signers, &j->items[i], err);
        fputs(i + 1 == j->n_items ? "\n" : ",\n", f);
    }
    fputs(j->n_items ? "  ]\n}" : "]\n}", f);
    if (rc == 0 && (fflush(f) != 0 || ferror(f) || rename(tmp, path) < 0))
        rc = rs_fail(err, "%s: %s", path, strerror(errno));
    return rc;
}
