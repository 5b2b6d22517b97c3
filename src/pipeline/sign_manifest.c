/* manifest.json: for every signed file, what was signed and by whom,
 * for the transparency log. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/json_values.h"
#include "crypto/ossl.h"
#include "ops/offline.h"
#include "pipeline/sign_job.h"

/* The digest the key itself signed, for the log: the image digest where
 * the key signs that directly (modules), else the signed attributes'
 * digest, rebuilt as the signature was (ops/offline.h). */
static int key_signed_digest(const rs_sign_job *j, const rs_sign_item *it, const rs_digest *digest,
                             char out[RS_DIGEST_STR], rs_error *err)
{
    _cleanup_(rs_offline_request_free) rs_offline_request r = { 0 };

    if (it->format->key_signs_image_digest) {
        rs_digest_format(digest, out, RS_DIGEST_STR);
        return 0;
    }
    if (rs_offline_prepare_digest(it->format, digest, j->o->signers[it->rec.type]->cert, NULL, &j->o->sign,
                                  &r, err) < 0)
        return rs_error_prefix(err, "package %s: %s", it->pkg->name, it->path);
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

/* One file's entry, as json_dumps(JSON_INDENT(2)) puts it inside
 * "files": [...], written straight out: a json_t per entry cost more
 * than all the rest of the manifest's writing. */
static int write_manifest_entry(FILE *f, const rs_sign_job *j, const manifest_signers *m, const rs_sign_item *it,
                                rs_error *err)
{
    char digest[RS_DIGEST_STR], tbs[RS_DIGEST_STR], sig[2 * SHA256_DIGEST_LENGTH + 1];
    const char *members[][2] = {
        { "package", it->pkg->name },
        { "path", it->path },
        { "sig_type", rs_sig_type_name((rs_sig_type)it->rec.type) },
        { "signed_digest", digest },
        { "tbs_digest", tbs },
        { "signer_fingerprint", m->fpr[it->rec.type] },
        { "signature_sha256", sig },
    };

    rs_digest image_digest;

    rs_sign_item_digest(j, it, &image_digest);
    if (key_signed_digest(j, it, &image_digest, tbs, err) < 0)
        return -1;
    rs_digest_format(&image_digest, digest, sizeof(digest));
    rs_hex(it->sig_sha256, sizeof(it->sig_sha256), sig);
    fputs("    {", f);
    for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
        fprintf(f, "%s\n      \"%s\": ", i ? "," : "", members[i][0]);
        rs_json_write_string(f, members[i][1]);
    }
    fputs("\n    }", f);
    return 0;
}

/* Records read from the store at once, for the entries to come. */
#define MANIFEST_BATCH 256

struct rs_sign_manifest {
    FILE *f;
    char *path, *tmp;
    manifest_signers signers;
    size_t next;       /* the first entry, in files.json order, not yet written */
    rs_sign_record batch[MANIFEST_BATCH];
    size_t batch_first, batch_n;
    rs_bytes batch_paths;   /* the batch's paths, one after the other */
};

void rs_sign_manifest_free(rs_sign_manifest *m)
{
    if (!m)
        return;
    if (m->f)
        fclose(m->f);
    if (m->tmp)
        unlink(m->tmp);
    free(m->path);
    free(m->tmp);
    rs_bytes_free(&m->batch_paths);
    free(m);
}

DEFINE_POINTER_CLEANUP(manifest_freep, rs_sign_manifest, rs_sign_manifest_free)

/* The document's head, up to the first entry. head is "{\n  ...\n}", or
 * "{}" with neither member: "files" follows. */
static int write_head(const rs_sign_job *j, FILE *f, rs_error *err)
{
    json_auto_t *top = json_pack("{s:s*, s:s*}", "template", j->tpl.package, "template_version", j->tpl.version);
    _cleanup_free_ char *head = top ? json_dumps(top, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    bool members;

    if (!head)
        return rs_fail(err, "out of memory");
    members = strlen(head) > 2;
    head[strlen(head) - (members ? 2 : 1)] = '\0';
    fprintf(f, "%s%s  \"files\": [%s", head, members ? ",\n" : "\n", j->n_items ? "\n" : "");
    return 0;
}

/* Written entry by entry, as the signatures are made: a document of
 * 50,000 files is never held whole, and writing it costs the end of the
 * run nothing. */
int rs_sign_manifest_open(rs_sign_job *j, rs_error *err)
{
    _cleanup_(manifest_freep) rs_sign_manifest *m = calloc(1, sizeof(*m));

    if (!m || asprintf(&m->path, "%s/manifest.json", j->work) < 0 || asprintf(&m->tmp, "%s.tmp", m->path) < 0)
        return rs_fail(err, "out of memory");
    if (!(m->f = fopen(m->tmp, "wxe")))
        return rs_fail(err, "%s: %s", m->tmp, strerror(errno));
    manifest_signers_init(&m->signers, j);
    if (write_head(j, m->f, err) < 0)
        return -1;
    j->manifest = TAKE_PTR(m);
    return 0;
}

/* The records from m->next on, and their paths: the store's records are
 * not written to once the files are checked. */
static int read_batch(rs_sign_job *j, rs_sign_manifest *m, rs_error *err)
{
    size_t n = j->n_items - m->next < MANIFEST_BATCH ? j->n_items - m->next : MANIFEST_BATCH;

    m->batch_first = m->next;
    m->batch_n = 0;
    if (rs_sign_store_read_batch(j, m->next, n, m->batch, &m->batch_paths, err) < 0)
        return -1;
    m->batch_n = n;
    return 0;
}

/* Entry m->next, if its file is signed (1), else 0. */
static int signed_entry(rs_sign_job *j, rs_sign_manifest *m, size_t signed_count, rs_sign_item *it, rs_error *err)
{
    const rs_sign_record *rec;

    if ((m->next < m->batch_first || m->next >= m->batch_first + m->batch_n) && read_batch(j, m, err) < 0)
        return -1;
    rec = &m->batch[m->next - m->batch_first];
    if (rec->order >= signed_count)
        return 0;
    rs_sign_item_from_record(j, m->next, rec, rs_sign_batch_path(m->batch, &m->batch_paths, m->next - m->batch_first),
                             it);
    it->format = rs_sign_checked_format(rec);
    return rs_sign_store_hash(j, (size_t)rec->order, it->sig_sha256, err) < 0 ? -1 : 1;
}

/* Every entry whose file is signed, up to the first that is not: signed
 * is the number of files signed, from the first, in tarball order. */
int rs_sign_manifest_advance(rs_sign_job *j, size_t signed_count, rs_error *err)
{
    rs_sign_manifest *m = j->manifest;
    int rc;

    for (; m->next < j->n_items; m->next++) {
        rs_sign_item it = { 0 };

        if ((rc = signed_entry(j, m, signed_count, &it, err)) <= 0)
            return rc;
        if (write_manifest_entry(m->f, j, &m->signers, &it, err) < 0)
            return -1;
        fputs(m->next + 1 == j->n_items ? "\n" : ",\n", m->f);
    }
    return 0;
}

/* Once every file is signed: the entries left, the end, and the rename. */
int rs_sign_manifest_close(rs_sign_job *j, rs_error *err)
{
    _cleanup_(manifest_freep) rs_sign_manifest *m = NULL;

    if (rs_sign_manifest_advance(j, j->n_items, err) < 0)
        return -1;   /* the caller frees j->manifest */
    m = TAKE_PTR(j->manifest);
    fputs(j->n_items ? "  ]\n}" : "]\n}", m->f);
    if (fflush(m->f) != 0 || ferror(m->f) || rename(m->tmp, m->path) < 0)
        return rs_fail(err, "%s: %s", m->path, strerror(errno));
    free(TAKE_PTR(m->tmp));
    return 0;
}
