#include "attest/rebuild_policy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attest/attestation.h"
#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/file.h"

void rs_rebuild_policy_init(rs_rebuild_policy *p)
{
    memset(p, 0, sizeof(*p));
    p->dir_fd = -1;
}

void rs_rebuild_policy_free(rs_rebuild_policy *p)
{
    for (size_t i = 0; i < p->n; i++) {
        for (size_t k = 0; k < p->rebuilders[i].nkeys; k++)
            rs_attest_key_clear(&p->rebuilders[i].keys[k]);
        free(p->rebuilders[i].keys);
        free(p->rebuilders[i].name);
    }
    free(p->rebuilders);
    free(p->dir);
    if (p->dir_fd >= 0)
        close(p->dir_fd);
    rs_rebuild_policy_init(p);
}

/* A rebuilder's name is a directory name under the attestations
 * directory: one component, nothing a path could climb with. */
static bool valid_name(const char *name)
{
    return *name && strlen(name) <= 64 && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                       "0123456789._-") == strlen(name) && name[0] != '.';
}

static rs_rebuilder *rebuilder(rs_rebuild_policy *p, const char *name, rs_error *err)
{
    rs_rebuilder *grown;

    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->rebuilders[i].name, name))
            return &p->rebuilders[i];
    if (!valid_name(name)) {
        rs_fail(err, "rebuilder name '%s' is not 1 to 64 letters, digits, '.', '_' or '-'", name);
        return NULL;
    }
    if (!(grown = realloc(p->rebuilders, (p->n + 1) * sizeof(*grown)))) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    p->rebuilders = grown;
    grown = &p->rebuilders[p->n];
    memset(grown, 0, sizeof(*grown));
    if (!(grown->name = strdup(name))) {
        rs_fail(err, "out of memory");
        return NULL;
    }
    p->n++;
    return grown;
}

int rs_rebuild_policy_add_key(rs_rebuild_policy *p, const char *name, const char *keyfile, rs_error *err)
{
    rs_rebuilder *r = rebuilder(p, name, err);
    rs_attest_key *grown;

    if (!r)
        return -1;
    if (!(grown = realloc(r->keys, (r->nkeys + 1) * sizeof(*grown))))
        return rs_fail(err, "out of memory");
    r->keys = grown;
    if (rs_attest_key_load(keyfile, &r->keys[r->nkeys], err) < 0)
        return rs_error_prefix(err, "rebuilder %s", name);
    r->nkeys++;
    return 0;
}

int rs_rebuild_policy_add_spec(rs_rebuild_policy *p, const char *spec, rs_error *err)
{
    const char *eq = strchr(spec, '=');
    _cleanup_free_ char *name = eq ? strndup(spec, (size_t)(eq - spec)) : NULL;

    if (!eq || !eq[1])
        return rs_fail(err, "'%s' is not NAME=KEYFILE", spec);
    if (!name)
        return rs_fail(err, "out of memory");
    return rs_rebuild_policy_add_key(p, name, eq + 1, err);
}

int rs_rebuild_policy_open_dir(rs_rebuild_policy *p, const char *dir, rs_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);   /* O_DIRECTORY: a directory or nothing */

    if (fd < 0)
        return rs_fail_sys(err, errno, "%s: %s", dir, strerror(errno));
    if (!(p->dir = strdup(dir))) {
        close(fd);
        return rs_fail(err, "out of memory");
    }
    p->dir_fd = fd;
    return 0;
}

int rs_rebuild_policy_check(const rs_rebuild_policy *p, rs_error *err)
{
    if (p->dir_fd < 0)
        return rs_fail(err, "the rebuild policy names no attestations directory");
    if (!p->n)
        return rs_fail(err, "the rebuild policy names no rebuilder");
    if (!p->required || p->required > p->n)
        return rs_fail(err, "%u rebuilds required, of %zu rebuilders configured", p->required, p->n);
    /* Two names for one key would let one rebuilder count twice. */
    for (size_t a = 0; a < p->n; a++)
        for (size_t b = a + 1; b < p->n; b++)
            for (size_t i = 0; i < p->rebuilders[a].nkeys; i++)
                for (size_t j = 0; j < p->rebuilders[b].nkeys; j++)
                    if (!strcmp(p->rebuilders[a].keys[i].fingerprint, p->rebuilders[b].keys[j].fingerprint))
                        return rs_fail(err, "rebuilders %s and %s have the same key (SHA-256 %s): one rebuilder "
                                            "cannot count twice",
                                       p->rebuilders[a].name, p->rebuilders[b].name,
                                       p->rebuilders[a].keys[i].fingerprint);
    return 0;
}

void rs_rebuild_verdict_free(rs_rebuild_verdict *v)
{
    free(v->who);
    free(v->missing);
    free(v->disagreement);
    memset(v, 0, sizeof(*v));
}

static int append_name(char **list, const char *name, rs_error *err)
{
    char *grown;

    if (asprintf(&grown, "%s%s%s", *list ? *list : "", *list && **list ? ", " : "", name) < 0)
        return rs_fail(err, "out of memory");
    free(*list);
    *list = grown;
    return 0;
}

/* What one attestation file says for pool_name, signed by one of r's keys:
 * 1 it vouches, 0 it does not count, -1 an error (a disagreement is
 * recorded in v and is not an error here). */
static int judge_file(const rs_rebuilder *r, int fd, const char *label, const char *pool_name,
                      const uint8_t sha256[32], rs_rebuild_verdict *v, rs_error *err)
{
    _cleanup_bytes_ rs_bytes data = { 0 };
    _cleanup_(rs_attestation_free) rs_attestation a = { 0 };
    const rs_attest_product *listed;
    bool signed_by[r->nkeys ? r->nkeys : 1];
    size_t distinct;
    rs_error ignored;
    char want[65], got[65];

    /* A file that cannot be read or parsed vouches for nothing: the rule
     * then counts it as missing, which is what it is. */
    if (rs_read_fd(fd, label, RS_ATTEST_MAX_FILE, &data, &ignored) < 0 ||
        rs_attestation_parse(data.data, data.len, &a, &ignored) < 0)
        return 0;
    if (rs_attestation_verify(&a, r->keys, r->nkeys, signed_by, &distinct, err) < 0)
        return -1;
    if (!distinct)
        return 0;
    switch (rs_attestation_vouches(&a, pool_name, sha256, &listed)) {
    case RS_VOUCH_YES: return 1;
    case RS_VOUCH_OTHER_DIGEST:
        rs_hex(listed->sha256, 32, want);
        rs_hex(sha256, 32, got);
        free(v->disagreement);
        if (asprintf(&v->disagreement, "rebuilder %s attests %s as sha256:%s (%s), but the .deb to be signed is "
                                       "sha256:%s",
                     r->name, pool_name, want, label, got) < 0)
            return rs_fail(err, "out of memory");
        return 0;
    default: return 0;
    }
}

static int judge_rebuilder(const rs_rebuild_policy *p, const rs_rebuilder *r, const char *pool_name,
                           const uint8_t sha256[32], rs_rebuild_verdict *v, bool *vouched, rs_error *err)
{
    int dfd = -1;
    size_t len = strlen(pool_name), seen = 0;
    struct dirent *e;
    rs_error ignored;

    *vouched = false;
    /* No directory for a rebuilder: it attested nothing yet. */
    if (rs_open_beneath_no_symlinks(p->dir_fd, p->dir, r->name, &dfd, &ignored) < 0)
        return 0;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    while ((e = readdir(d)) && seen < RS_REBUILD_MAX_FILES) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *label = NULL;
        struct stat st;
        int r_file;
        if (strncmp(e->d_name, pool_name, len) || e->d_name[len] != '.')
            continue;
        seen++;
        if (asprintf(&label, "%s/%s/%s", p->dir, r->name, e->d_name) < 0) {
            closedir(d);
            return rs_fail(err, "out of memory");
        }
        if (rs_open_beneath_no_symlinks(dirfd(d), label, e->d_name, &fd, &ignored) < 0 || fstat(fd, &st) < 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if ((r_file = judge_file(r, TAKE_FD(fd), label, pool_name, sha256, v, err)) < 0) {
            closedir(d);
            return -1;
        }
        *vouched |= r_file == 1;
    }
    closedir(d);
    return 0;
}

int rs_rebuild_judge(const rs_rebuild_policy *p, const char *pool_name, const uint8_t sha256[32],
                     rs_rebuild_verdict *v, rs_error *err)
{
    memset(v, 0, sizeof(*v));
    if (append_name(&v->who, "", err) < 0 || append_name(&v->missing, "", err) < 0)
        return -1;
    for (size_t i = 0; i < p->n; i++) {
        bool vouched;
        if (judge_rebuilder(p, &p->rebuilders[i], pool_name, sha256, v, &vouched, err) < 0 ||
            append_name(vouched ? &v->who : &v->missing, p->rebuilders[i].name, err) < 0) {
            rs_rebuild_verdict_free(v);
            return -1;
        }
        v->vouched += vouched;
    }
    return 0;
}

int rs_rebuild_require(const rs_rebuild_policy *p, const char *pool_name, const uint8_t sha256[32], rs_error *err)
{
    _cleanup_(rs_rebuild_verdict_free) rs_rebuild_verdict v = { 0 };

    if (rs_rebuild_judge(p, pool_name, sha256, &v, err) < 0)
        return -1;
    if (v.disagreement)
        return rs_fail(err, "%s: refused, never to be signed: %s", pool_name, v.disagreement);
    if (v.vouched < p->required)
        return rs_fail_transient(err, RS_TRANSIENT_IO, "%s: %zu of the %u rebuilds required are attested (by: %s; "
                                                       "missing: %s)",
                                 pool_name, v.vouched, p->required, *v.who ? v.who : "none", v.missing);
    return 0;
}
