#include "uefi/shim_verify.h"

#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"

typedef struct hashes {
    rs_digest sha256, sha1;
} hashes;

static void decide(shim_verdict *v, bool ok, const char *rule, const char *detail)
{
    v->ok = ok;
    snprintf(v->rule, sizeof(v->rule), "%s", rule);
    snprintf(v->detail, sizeof(v->detail), "%s", detail);
}

/* The first list (in the order given) holding one of the image's digests. */
static const shim_list *hash_hit(const shim_list *const *lists, size_t n, const hashes *h, const rs_digest **which)
{
    for (size_t i = 0; i < n; i++) {
        if (!lists[i])
            continue;
        if (rs_trust_hash_listed(&lists[i]->hashes, &h->sha256)) {
            *which = &h->sha256;
            return lists[i];
        }
        if (lists[i]->sha1 && rs_trust_hash_listed(&lists[i]->hashes, &h->sha1)) {
            *which = &h->sha1;
            return lists[i];
        }
    }
    return NULL;
}

static void describe_hash(char *out, size_t cap, const shim_list *l, const rs_digest *d)
{
    char hex[RS_DIGEST_STR];

    rs_digest_format(d, hex, sizeof(hex));
    snprintf(out, cap, "the image's %s Authenticode hash %s is in %s", d->md == EVP_sha1() ? "SHA-1" : "SHA-256",
             hex, l->name);
}

/* Steps 2 and 3 of verify_buffer_authenticode: check_denylist(NULL, ...)
 * then check_allowlist(NULL, ...). Returns true when a hash decided. */
static bool by_hash(const shim_db *db, const hashes *h, shim_verdict *v)
{
    /* check_denylist: vendor dbx (SHA-256, SHA-1), dbx (SHA-256, SHA-1),
     * MokListX (SHA-256). */
    const shim_list *deny[] = { &db->vendor_dbx, &db->dbx, &db->mokx };
    /* check_allowlist: db (SHA-256, SHA-1) unless MokIgnoreDB, vendor_db,
     * MokListRT (SHA-256). A hit accepts with no signature check. */
    const shim_list *allow[] = { db->ignore_db ? NULL : &db->db, &db->vendor_db, &db->mok };
    const rs_digest *which = NULL;
    const shim_list *hit;
    char detail[RS_ERROR_MAX];

    if ((hit = hash_hit(deny, 3, h, &which))) {
        describe_hash(detail, sizeof(detail), hit, which);
        decide(v, false, "denylist by hash (verify.c check_denylist)", detail);
        return true;
    }
    if ((hit = hash_hit(allow, 3, h, &which))) {
        describe_hash(detail, sizeof(detail), hit, which);
        decide(v, true, "allowlist by hash (verify.c check_allowlist)", detail);
        return true;
    }
    return false;
}

/* AuthenticodeVerify with each certificate of one list as the anchor:
 * true when the signature verifies, binds to the image and chains to one. */
static int chains_to(rs_image *img, const rs_bytes *der, const rs_trust *certs, char **anchor, rs_error *err)
{
    _cleanup_(rs_verify_report_free) rs_verify_report r = { 0 };

    *anchor = NULL;
    if (sk_X509_num(certs->anchors) == 0)
        return 0;
    if (img->format->verify(img, der, certs, &r, err) < 0)
        return -1;
    if (!r.ok)
        return 0;
    *anchor = r.anchor;
    r.anchor = NULL;
    return 1;
}

typedef struct sig_check {
    const char *list;        /* the list that decided, or NULL */
    char *anchor;
    bool denied;
} sig_check;

/* verify.c verify_one_signature: the certificate denylist (vendor dbx,
 * dbx, MokListX), then the allowlist (db unless MokIgnoreDB, vendor_db,
 * MokListRT), then the built-in vendor_cert. */
static int one_signature(rs_image *img, const rs_bytes *der, const shim_db *db, sig_check *c, rs_error *err)
{
    const rs_trust *deny[] = { &db->vendor_dbx.certs, &db->dbx.certs, &db->mokx.certs };
    const char *deny_names[] = { "vendor_dbx", "dbx", "MokListX" };
    const rs_trust *allow[] = { db->ignore_db ? NULL : &db->db.certs, &db->vendor_db.certs, &db->mok.certs,
                                &db->vendor_cert };
    const char *allow_names[] = { "db", "vendor_db", "MokListRT", "shim's built-in vendor_cert" };
    int r;

    for (size_t i = 0; i < 3; i++) {
        if ((r = chains_to(img, der, deny[i], &c->anchor, err)) != 0) {
            c->list = deny_names[i];
            c->denied = true;
            return r;
        }
    }
    for (size_t i = 0; i < 4; i++) {
        if (allow[i] && (r = chains_to(img, der, allow[i], &c->anchor, err)) != 0) {
            c->list = allow_names[i];
            return r;
        }
    }
    return 0;
}

/* Step 5: every signature is tried; one accepted signature is enough, and
 * a signature caught by a denylist does not undo it ("don't clobber
 * successes with security violation here"). */
static int by_signature(rs_image *img, const shim_db *db, size_t n, shim_verdict *v, rs_error *err)
{
    char refusals[RS_ERROR_MAX] = "";

    for (size_t i = 0; i < n; i++) {
        _cleanup_bytes_ rs_bytes der = { 0 };
        sig_check c = { 0 };
        char line[384];
        rs_error why;

        if (img->format->extract(img, i, &der, &why) < 0)
            snprintf(line, sizeof(line), "signature %zu: %.300s", i + 1, why.msg);
        else if (one_signature(img, &der, db, &c, err) < 0)
            return -1;
        else if (c.list && !c.denied) {
            snprintf(line, sizeof(line), "signature %zu chains to %.300s (%s)", i + 1, c.anchor, c.list);
            decide(v, true, "allowlist by certificate (verify.c verify_one_signature)", line);
            free(c.anchor);
            return 0;
        } else if (c.list)
            snprintf(line, sizeof(line), "signature %zu chains to %.300s, which is in %s", i + 1, c.anchor, c.list);
        else
            snprintf(line, sizeof(line), "signature %zu chains to no certificate in db, vendor_db, MokListRT or "
                                         "vendor_cert", i + 1);
        free(c.anchor);
        snprintf(refusals + strlen(refusals), sizeof(refusals) - strlen(refusals), "%s%s", refusals[0] ? "; " : "",
                 line);
    }
    decide(v, false, "no signature accepted (verify.c verify_buffer_authenticode)", refusals);
    return 0;
}

int shim_verify_image(rs_image *img, const shim_db *db, shim_verdict *v, rs_error *err)
{
    hashes h;
    size_t n;

    memset(v, 0, sizeof(*v));
    /* shim.c secure_mode(): with MokSBState set shim checks nothing. */
    if (db->insecure) {
        decide(v, true, "shim validation disabled (MokSBState)", "no check made");
        return 0;
    }
    /* Step 1: both the SHA-256 and the SHA-1 Authenticode hash
     * (generate_hash). */
    if (img->format->digest(img, EVP_sha256(), &h.sha256, err) < 0 ||
        img->format->digest(img, EVP_sha1(), &h.sha1, err) < 0)
        return -1;
    if (by_hash(db, &h, v))
        return 0;
    /* Step 4: "No signatures found". */
    n = img->format->count(img);
    if (n == 0) {
        decide(v, false, "not signed (verify.c verify_buffer_authenticode)",
               "the image has no signature, and its hash is in no allowlist");
        return 0;
    }
    return by_signature(img, db, n, v, err);
}
