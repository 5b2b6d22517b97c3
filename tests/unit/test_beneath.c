/* Opening a file below a directory: through openat2 and through the
 * component walk used without it, a path is opened when it stays below
 * the directory and refused, saying why, when it leaves it or (where asked)
 * goes through a symlink. Then the package tree: a directory swapped for a
 * symlink after a path was resolved cannot make sign-template read a file
 * outside the package. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"
#include "pipeline/pkgtree.h"

static char top[] = "/tmp/reprosign-beneath.XXXXXX";

/* The first bytes of what opening rel gives, or the error. */
static void opens(int root, const char *rel, bool no_symlinks, bool walk, const char *want)
{
    char got[128] = "";
    rs_error err = { 0 };
    int fd = -1;
    rs_beneath_opts opts = { .no_symlinks = no_symlinks, .walk = walk };
    int rc = rs_open_beneath_with(root, "the root", rel, &opts, &fd, &err);

    if (rc == 0) {
        ssize_t n = read(fd, got, sizeof(got) - 1);

        got[n > 0 ? n : 0] = '\0';
        close(fd);
    } else {
        snprintf(got, sizeof(got), "%.120s", err.msg);
    }
    if (!strstr(got, want)) {
        fprintf(stderr, "%s (%s, %s): wanted \"%s\", got \"%s\"\n", rel, walk ? "walk" : "openat2",
                no_symlinks ? "no symlinks" : "symlinks inside", want, got);
        CHECK(!"opens as expected");
    }
}

/* Both ways of opening follow the same rules. */
static void beneath(int root, bool walk)
{
    static const struct {
        const char *rel;
        const char *following, *no_symlinks;
    } cases[] = {
        { "a/b/file", "inside", "inside" },
        { "a/./b//file", "inside", "inside" },
        { "a/../a/b/file", "inside", "inside" },
        { "in/b/file", "inside", "symbolic link" },
        { "a/b/filelink", "inside", "symbolic link" },
        { "in/../in/b/filelink", "inside", "symbolic link" },
        { "../outside/secret", "leads outside the root", "leads outside the root" },
        { "/a/b/file", "leads outside the root", "leads outside the root" },
        { "out/secret", "leads outside the root", "symbolic link" },
        { "abs/secret", "leads outside the root", "symbolic link" },
        { "a/up/outside/secret", "leads outside the root", "symbolic link" },
        { "loop/x", "symbolic link", "symbolic link" },
        { "a/missing", "No such file", "No such file" },
        { "a/b/file/x", "Not a directory", "Not a directory" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        opens(root, cases[i].rel, false, walk, cases[i].following);
        opens(root, cases[i].rel, true, walk, cases[i].no_symlinks);
    }
}

/* Resolved while usr/lib was a directory; swapped for a symlink to a
 * directory outside the package before the file is opened. */
static void swapped_after_resolving(void)
{
    char pkgs[600], outside[600], lib[600];
    rs_pkgset set;
    rs_pkgtree *tree = NULL;
    char *resolved = NULL;
    rs_error err = { 0 };
    int fd = -1;

    harness_mkdir(top, "pkgs");
    harness_mkdir(top, "pkgs/demo");
    harness_mkdir(top, "pkgs/demo/usr");
    harness_mkdir(top, "pkgs/demo/usr/lib");
    harness_put(top, "pkgs/demo/usr/lib/loader.efi", "package bytes");
    harness_mkdir(top, "elsewhere");
    harness_put(top, "elsewhere/loader.efi", "bytes from elsewhere");
    snprintf(pkgs, sizeof(pkgs), "%s/pkgs", top);
    snprintf(outside, sizeof(outside), "%s/elsewhere", top);
    snprintf(lib, sizeof(lib), "%s/pkgs/demo/usr/lib", top);

    CHECK(rs_pkgset_scan(pkgs, &set, &err) == 0);
    CHECK(rs_pkgset_choose(&set, "demo", NULL, &tree, &err) == 0);
    CHECK(tree && rs_pkgtree_resolve(tree, "usr/lib/loader.efi", &resolved, &err) == 0);
    CHECK(resolved && !strcmp(resolved, "usr/lib/loader.efi"));
    if (resolved) {
        char moved[700];

        snprintf(moved, sizeof(moved), "%s.moved", lib);
        CHECK(rename(lib, moved) == 0 && symlink(outside, lib) == 0);
        CHECK(rs_pkgtree_open(tree, resolved, &fd, &err) == -1);
        CHECK(strstr(err.msg, "usr/lib/loader.efi") && strstr(err.msg, "symbolic link"));
        if (fd >= 0)
            close(fd);
    }
    free(resolved);
    rs_pkgset_free(&set);
}

int main(void)
{
    char path[600];
    int root;

    if (!mkdtemp(top))
        abort();
    harness_mkdir(top, "root");
    harness_mkdir(top, "root/a");
    harness_mkdir(top, "root/a/b");
    harness_put(top, "root/a/b/file", "inside");
    harness_symlink(top, "file", "root/a/b/filelink");
    harness_symlink(top, "a", "root/in");
    harness_symlink(top, "../outside", "root/out");
    harness_symlink(top, "../..", "root/a/up");
    harness_symlink(top, "loop", "root/loop");
    harness_mkdir(top, "outside");
    harness_put(top, "outside/secret", "outside");
    snprintf(path, sizeof(path), "%s/outside", top);
    harness_symlink(top, path, "root/abs");
    snprintf(path, sizeof(path), "%s/root", top);
    if ((root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        abort();
    beneath(root, false);
    beneath(root, true);
    close(root);
    swapped_after_resolving();
    snprintf(path, sizeof(path), "rm -rf '%s'", top);
    if (system(path) != 0)
        CHECK(!"clean up");
    return harness_finish("test_beneath");
}
