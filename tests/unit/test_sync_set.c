/* base/sync_set.c: a new file brings in its directory and, for each
 * directory made for it, the one above; every path is named once; a run
 * syncs them all (a missing one is the failure it names), removes what
 * is to be removed, at best effort, and leaves the set empty. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/sync_set.h"
#include "harness.h"

static char dir[] = "/tmp/test_sync_set.XXXXXX";

static bool has(const rs_sync_set *s, const char *rel, rs_sync_kind kind)
{
    const char *path = rel[0] ? harness_path(dir, rel) : dir;

    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == kind && !strcmp(s->items[i].path, path))
            return true;
    return false;
}

static void names_what_a_new_file_changed(void)
{
    rs_sync_set s = { 0 };
    char path[512];
    size_t made;
    rs_error err;

    /* tile/0/000.p/5, where tile/0/000.p was made: the file, 000.p, and
     * tile/0, which holds it; not tile, whose entries did not change. */
    harness_mkdir(dir, "tile");
    harness_mkdir(dir, "tile/0");
    harness_put(dir, "tile/0/x", "");
    snprintf(path, sizeof(path), "%s/tile/0/000.p/5", dir);
    CHECK(rs_mkdir_parents_made(path, &made, &err) == 0 && made > 0);
    harness_put(dir, "tile/0/000.p/5", "hashes");
    CHECK(rs_sync_set_new_file(&s, path, made, &err) == 0);
    CHECK(s.n == 3 && has(&s, "tile/0/000.p/5", RS_SYNC_FILE) && has(&s, "tile/0/000.p", RS_SYNC_DIR) &&
          has(&s, "tile/0", RS_SYNC_DIR));
    /* A second file in the same directory adds only itself; a file named
     * twice is named once. */
    harness_put(dir, "tile/0/000.p/6", "hashes");
    CHECK(rs_sync_set_new_file(&s, harness_path(dir, "tile/0/000.p/6"), 0, &err) == 0);
    CHECK(rs_sync_set_file(&s, harness_path(dir, "tile/0/000.p/6"), &err) == 0 && s.n == 4);
    /* Directories made three deep: each of them and the one above. */
    snprintf(path, sizeof(path), "%s/a/b/c/f", dir);
    CHECK(rs_mkdir_parents_made(path, &made, &err) == 0);
    harness_put(dir, "a/b/c/f", "");
    CHECK(rs_sync_set_new_file(&s, path, made, &err) == 0 && s.n == 9);
    CHECK(has(&s, "a/b/c", RS_SYNC_DIR) && has(&s, "a/b", RS_SYNC_DIR) && has(&s, "a", RS_SYNC_DIR) &&
          has(&s, "", RS_SYNC_DIR));
    CHECK(rs_sync_set_syncs(&s) == 9);
    CHECK(rs_sync_set_remove(&s, harness_path(dir, "tile/0/x"), true, &err) == 0 && rs_sync_set_syncs(&s) == 9);
    CHECK(rs_sync_set_run(&s, &err) == 0 && s.n == 0);
    /* The removal took the file, but not its directory, which holds more. */
    CHECK(access(harness_path(dir, "tile/0/x"), F_OK) < 0 && access(harness_path(dir, "tile/0"), F_OK) == 0);
    rs_sync_set_free(&s);
}

static void removes_at_best_effort_and_names_a_failed_sync(void)
{
    rs_sync_set s = { 0 };
    rs_error err;

    harness_mkdir(dir, "q");
    harness_put(dir, "q/last", "");
    CHECK(rs_sync_set_remove(&s, harness_path(dir, "q/last"), true, &err) == 0);
    CHECK(rs_sync_set_remove(&s, harness_path(dir, "q/gone"), false, &err) == 0);
    CHECK(rs_sync_set_run(&s, &err) == 0 && access(harness_path(dir, "q"), F_OK) < 0);
    /* Many paths, more than there are threads, one of them missing. */
    harness_mkdir(dir, "many");
    for (int i = 0; i < 40; i++) {
        char rel[32];

        snprintf(rel, sizeof(rel), "many/%d", i);
        harness_put(dir, rel, "x");
        CHECK(rs_sync_set_file(&s, harness_path(dir, rel), &err) == 0);
    }
    CHECK(rs_sync_set_file(&s, harness_path(dir, "many/missing"), &err) == 0);
    CHECK(rs_sync_set_run(&s, &err) < 0 && strstr(err.msg, "many/missing: cannot sync") && s.n == 0);
    rs_sync_set_free(&s);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    names_what_a_new_file_changed();
    removes_at_best_effort_and_names_a_failed_sync();
    rs_remove_tree(dir);
    return harness_finish("test_sync_set");
}
