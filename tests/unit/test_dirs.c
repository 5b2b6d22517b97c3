/* base/dirs.c: rs_mkdir_parents_made tells the shallowest directory it
 * made (none when all existed, the one it reached when a later one could
 * not be made); rs_remove_empty_dirs removes what is empty below a
 * directory, deepest first, and leaves files and what holds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"

static char dir[] = "/tmp/test_dirs.XXXXXX";

static bool is_dir(const char *rel)
{
    struct stat st;

    return stat(harness_path(dir, rel), &st) == 0 && S_ISDIR(st.st_mode);
}

static void tells_what_it_made(void)
{
    char path[512], name[300];
    size_t made = 99;
    rs_error err;

    snprintf(path, sizeof(path), "%s/a/b/c/file", dir);
    CHECK(rs_mkdir_parents_made(path, &made, &err) == 0);
    CHECK(made == strlen(dir) + strlen("/a") && is_dir("a/b/c"));
    CHECK(rs_mkdir_parents_made(path, &made, &err) == 0 && made == 0);
    snprintf(path, sizeof(path), "%s/a/b/d/e/file", dir);
    CHECK(rs_mkdir_parents_made(path, &made, &err) == 0 && made == strlen(dir) + strlen("/a/b/d"));
    /* A file where a directory must go: nothing made, the file named. */
    harness_put(dir, "a/x", "");
    snprintf(path, sizeof(path), "%s/a/x/w/file", dir);
    CHECK(rs_mkdir_parents_made(path, &made, &err) < 0 && made == 0 && strstr(err.msg, "a/x"));
    /* a/n is made, then a name too long fails below it: a/n is told. */
    memset(name, 'n', 299);
    name[299] = '\0';
    snprintf(path, sizeof(path), "%s/a/n/%s/file", dir, name);
    CHECK(rs_mkdir_parents_made(path, &made, &err) < 0 && made == strlen(dir) + strlen("/a/n") && is_dir("a/n"));
    CHECK(strstr(err.msg, "File name too long") != NULL);
    /* The same with the library's other helper, which tells nothing. */
    snprintf(path, sizeof(path), "%s/a/y/z/file", dir);
    CHECK(rs_mkdir_parents(path, &err) == 0 && is_dir("a/y/z"));
    harness_put(dir, "a/y/z/file", "");
}

static void removes_only_empty_dirs(void)
{
    rs_remove_empty_dirs(harness_path(dir, "a"));
    /* a/x and a/y/z/file are files: a, a/y, a/y/z stay; a/b, a/n and
     * everything below them go. */
    CHECK(is_dir("a") && is_dir("a/y/z") && !is_dir("a/b") && !is_dir("a/n"));
    CHECK(access(harness_path(dir, "a/x"), F_OK) == 0 && access(harness_path(dir, "a/y/z/file"), F_OK) == 0);
    unlink(harness_path(dir, "a/x"));
    unlink(harness_path(dir, "a/y/z/file"));
    rs_remove_empty_dirs(harness_path(dir, "a"));
    CHECK(!is_dir("a") && is_dir(""));
    rs_remove_empty_dirs(harness_path(dir, "missing"));
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    tells_what_it_made();
    removes_only_empty_dirs();
    rs_remove_tree(dir);
    return harness_finish("test_dirs");
}
