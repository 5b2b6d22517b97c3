/* A tiny test harness: CHECK records a failure and carries on. */
#ifndef RS_TEST_HARNESS_H
#define RS_TEST_HARNESS_H

#include <stdio.h>

extern int harness_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            harness_failures++;                                                      \
        }                                                                            \
    } while (0)

int harness_finish(const char *name);
/* The exit status of a test that cannot run here: 77 (skipped), or 1 under
 * REPROSIGN_REQUIRE_ALL=1 (scripts/test.sh), where a skip would hide a
 * missing dependency. Prints why. */
int harness_skip(const char *name, const char *why);
/* dir/name in one of 8 buffers used in turn: a call's result lasts while
 * the next 7 calls are made (enough for any one expression). */
char *harness_path(const char *dir, const char *name);
/* Test trees: dir/rel made with these contents, as a directory, or as a
 * symlink to target; a failure aborts the test. */
void harness_put(const char *dir, const char *rel, const char *content);
void harness_mkdir(const char *dir, const char *rel);
void harness_symlink(const char *dir, const char *target, const char *rel);
/* A self-signed RSA-2048 key and certificate, as PEM files; aborts on failure. */
void harness_make_key(const char *key_path, const char *cert_path);

#endif
