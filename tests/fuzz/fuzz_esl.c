/* Signature lists and authenticated variable payloads: the walker, the
 * trust loader, the append merge, and the auth header parser. The merge
 * is checked against what varupdate.h promises (edk2's APPEND_WRITE
 * filter: base, then the entries of add that base lacks), the auth header
 * against its own lengths, and every failure must carry a message, since
 * err.msg is all the CLI prints. So the fuzzer finds wrong results, not
 * only crashes. */
#include <openssl/err.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "crypto/trust.h"
#include "fuzz_keys.h"
#include "uefi/authvar.h"
#include "uefi/esl.h"
#include "uefi/shim_db.h"
#include "uefi/uefi_trust.h"
#include "uefi/varupdate.h"

typedef struct span {
    const uint8_t *data;
    size_t len;
} span;

static int count(void *ctx, const esl_entry *e, rs_error *err)
{
    (*(size_t *)ctx) += e->len;
    return 0;
}

/* A clean message slot, so a failure that leaves it empty shows. */
static rs_error *fresh(rs_error *err)
{
    err->msg[0] = '\0';
    return err;
}

static void check_message(int rc, const rs_error *err, const char *what)
{
    if (rc < 0 && !err->msg[0])
        fuzz_bug(what, "failed without a message");
}

typedef struct finder {
    const esl_entry *want;
    bool found;
} finder;

/* Equal as edk2 compares them: type, owner and data. */
static int match(void *ctx, const esl_entry *e, rs_error *err)
{
    finder *f = ctx;

    f->found |= efi_guid_equal(&e->type, &f->want->type) && efi_guid_equal(&e->owner, &f->want->owner) &&
                e->len == f->want->len && !memcmp(e->data, f->want->data, e->len);
    return 0;
}

static bool has_entry(span s, const esl_entry *e)
{
    finder f = { e, false };
    rs_error err;

    if (esl_walk(s.data, s.len, match, &f, &err) < 0)
        fuzz_bug("a list that walked once no longer walks", err.msg);
    return f.found;
}

/* An entry of add: the merge kept it, from base or appended. */
static int in_merged(void *ctx, const esl_entry *e, rs_error *err)
{
    if (!has_entry(*(span *)ctx, e))
        fuzz_bug("merge lost an entry of the appended list", NULL);
    return 0;
}

typedef struct origin {
    span base, add;
} origin;

/* An entry the merge appended: it came from add and base lacked it. */
static int appended_ok(void *ctx, const esl_entry *e, rs_error *err)
{
    origin *o = ctx;

    if (!has_entry(o->add, e))
        fuzz_bug("merge appended an entry that add does not have", NULL);
    if (has_entry(o->base, e))
        fuzz_bug("merge appended an entry that base already has", NULL);
    return 0;
}

/* Byte-equal; either may be empty with no buffer behind it. */
static bool same_bytes(span a, span b)
{
    return a.len == b.len && (a.len == 0 || !memcmp(a.data, b.data, a.len));
}

static void check_merged(span base, span add, const rs_bytes *merged)
{
    span m = { merged->data, merged->len }, head, tail;
    origin o = { base, add };
    _cleanup_bytes_ rs_bytes again = { 0 };
    rs_error err;

    if (m.len < base.len)
        fuzz_bug("merge is shorter than base", NULL);
    head = (span){ m.data, base.len };
    tail = (span){ m.len > base.len ? m.data + base.len : NULL, m.len - base.len };
    if (!same_bytes(head, base))
        fuzz_bug("merge did not keep base as it was", NULL);
    if (esl_walk(tail.data, tail.len, appended_ok, &o, &err) < 0)
        fuzz_bug("merge appended lists that do not walk", err.msg);
    if (esl_walk(add.data, add.len, in_merged, &m, &err) < 0)
        fuzz_bug("add stopped walking", err.msg);
    /* Appending the same update again adds nothing: every entry is there. */
    if (esl_merge(m.data, m.len, add.data, add.len, &again, fresh(&err)) < 0)
        fuzz_bug("merging add into the merge failed", err.msg);
    if (!same_bytes((span){ again.data, again.len }, m))
        fuzz_bug("merging the same update twice changed the result", NULL);
}

/* The input's halves are base and add. The merge fails only on a list
 * that does not walk (or on running out of memory). */
static void check_merge(const uint8_t *data, size_t size)
{
    span base = { data, size / 2 }, add = { data + size / 2, size - size / 2 };
    _cleanup_bytes_ rs_bytes merged = { 0 };
    rs_error err;
    int rc = esl_merge(base.data, base.len, add.data, add.len, &merged, fresh(&err));

    check_message(rc, &err, "esl_merge");
    if (rc == 0)
        check_merged(base, add, &merged);
    else if (esl_walk(base.data, base.len, NULL, NULL, &err) == 0 && esl_walk(add.data, add.len, NULL, NULL, &err) == 0)
        fuzz_bug("merge of two valid lists failed", NULL);
}

/* The loader walks with esl_walk, so it cannot accept what the walker refuses. */
static void check_trust(const uint8_t *data, size_t size, int walked)
{
    rs_error err;
    rs_trust t;
    int rc;

    if (rs_trust_init(&t, &err) < 0)
        fuzz_die("trust", err.msg);
    rc = uefi_trust_add_esl(&t, data, size, size & 1, fresh(&err));
    check_message(rc, &err, "uefi_trust_add_esl");
    if (rc == 0 && walked < 0)
        fuzz_bug("uefi_trust_add_esl accepted lists esl_walk refuses", NULL);
    rs_trust_free(&t);
}

/* shim's reading of the same lists (as MokList, vendor_db, dbx): it walks
 * with esl_walk too, and never keeps more than the walker saw. */
static void check_shim_lists(const uint8_t *data, size_t size, int walked)
{
    _cleanup_shim_db_ shim_db db;
    rs_error err;
    int rc;

    if (shim_db_init(&db, fresh(&err)) < 0)
        fuzz_die("shim_db", err.msg);
    rc = shim_list_add_esl(&db.mok, data, size, fresh(&err));
    check_message(rc, &err, "shim_list_add_esl");
    if (rc == 0 && walked < 0)
        fuzz_bug("shim_list_add_esl accepted lists esl_walk refuses", NULL);
    if (rc == 0 && db.mok.hashes.n > size / 48)
        fuzz_bug("shim read more SHA-256 entries than the lists can hold", NULL);
    for (size_t i = 0; rc == 0 && i < db.mok.hashes.n; i++)
        if (db.mok.hashes.items[i].md != EVP_sha256())
            fuzz_bug("MokList yielded a hash other than SHA-256", NULL);
    if (shim_list_add_esl(&db.dbx, data, size, fresh(&err)) != rc)
        fuzz_bug("dbx and MokList disagree on whether the lists parse", NULL);
}

/* The header's parts tile the input: timestamp, WIN_CERTIFICATE, data. */
static void check_authvar(const uint8_t *data, size_t size)
{
    X509 *signer = NULL;
    size_t total = 0;
    rs_error err;
    authvar a;
    int rc = authvar_parse(data, size, &a, fresh(&err));

    check_message(rc, &err, "authvar_parse");
    if (rc < 0)
        return;
    if (a.pkcs7 != data + AUTHVAR_HEADER || a.pkcs7_len == 0 || a.data != a.pkcs7 + a.pkcs7_len ||
        a.data + a.data_len != data + size || memcmp(a.timestamp, data, EFI_TIME_SIZE) != 0)
        fuzz_bug("authvar_parse's parts do not tile the input", NULL);
    esl_walk(a.data, a.data_len, count, &total, &err);
    rc = authvar_signer(&a, &signer, fresh(&err));
    check_message(rc, &err, "authvar_signer");
    X509_free(signer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_error err;
    size_t total = 0;
    int walked = esl_walk(data, size, count, &total, fresh(&err));

    check_message(walked, &err, "esl_walk");
    check_trust(data, size, walked);
    check_shim_lists(data, size, walked);
    check_merge(data, size);
    check_authvar(data, size);
    ERR_clear_error();
    return 0;
}
