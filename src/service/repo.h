/* A local Debian repository, read the way apt reads one: the suite's
 * Release file vouches (by SHA-256) for the Packages indices, which
 * vouch for each .deb. Nothing is read from pool/ before its hash is
 * known, and every .deb is copied and checked before anyone parses it. */
#ifndef RS_REPO_H
#define RS_REPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/bytes.h"
#include "base/error.h"

/* One deb822 paragraph: fields in file order, continuation lines joined
 * with '\n' (the leading space of each is dropped). */
typedef struct rs_deb822_field {
    char *name;
    char *value;
    size_t len, cap;     /* of value, which grows by continuation lines */
} rs_deb822_field;

typedef struct rs_deb822 {
    rs_deb822_field *fields;
    size_t n;
} rs_deb822;

int rs_deb822_parse(const char *text, size_t len, rs_deb822 **paras, size_t *n, rs_error *err);
void rs_deb822_free(rs_deb822 *paras, size_t n);
/* Field names compare case-insensitively, as in Debian policy. */
const char *rs_deb822_get(const rs_deb822 *p, const char *name);
/* Whether a line is empty or white space only: the end of a paragraph. */
bool rs_deb822_blank(const char *s, size_t len);

typedef struct rs_repo_package {
    char *package;
    char *version;
    char *architecture;
    char *filename;          /* relative to the repository root, validated */
    uint64_t size;
    uint8_t sha256[32];
} rs_repo_package;

void rs_repo_package_free(rs_repo_package *p);

typedef struct rs_repo {
    const char *root;
    const char *keyring;     /* when set, Release.gpg must verify with it */
    time_t max_age;          /* a Release older than this is refused; 0: any age */
} rs_repo;

/* Who a suite is, whatever a request called it: the directory
 * dists/<suite> resolves to, a name beside it in dists/, and the Suite:
 * and Codename: of the (verified) Release read there. */
typedef struct rs_suite_identity {
    char *dir;
    char *suite;             /* NULL when the Release has none */
    char *codename;          /* NULL when the Release has none */
} rs_suite_identity;

void rs_suite_identity_free(rs_suite_identity *id);
bool rs_suite_identity_equal(const rs_suite_identity *a, const rs_suite_identity *b);
/* "DIR (Suite: S, Codename: C)", for an error; NULL when out of memory. */
char *rs_suite_identity_describe(const rs_suite_identity *id);

/* Finds package at exactly version, built for arch or "all", in suite.
 * dists/<suite> is resolved once, and the Release and index are read
 * from what it resolved to; *seen is who that suite is, set (and the
 * caller's to free) whenever its Release was read, even if what follows
 * fails. */
int rs_repo_find(const rs_repo *r, const char *suite, const char *arch, const char *package, const char *version,
                 rs_repo_package *out, rs_suite_identity *seen, rs_error *err);
int rs_repo_suite_identity(const rs_repo *r, const char *suite, rs_suite_identity *id, rs_error *err);
/* Copies the .deb to dest, checking its size and SHA-256 on the way. */
int rs_repo_fetch(const rs_repo *r, const rs_repo_package *p, const char *dest, rs_error *err);

/* Parsers of untrusted text, exposed for the fuzzer. */
typedef struct rs_release_file {
    char *path;
    uint64_t size;
    uint8_t sha256[32];
} rs_release_file;

int rs_release_parse(const char *text, size_t len, rs_release_file **files, size_t *n, rs_error *err);
void rs_release_files_free(rs_release_file *files, size_t n);
int rs_packages_find(const char *text, size_t len, const char *package, const char *version, const char *arch,
                     rs_repo_package *out, bool *found, rs_error *err);

/* A suite or codename: letters, digits, '.', '_', '-', not starting with '.'. */
bool rs_valid_suite(const char *s);

#endif
