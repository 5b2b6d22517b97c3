/* The package sources (src/pipeline/pkgsource_dir.c, pkgsource_deb.c):
 * the same package, unpacked and as a .deb built by dpkg-deb, is found by
 * the scan, resolves the same paths and hands over the same bytes under
 * the same names; both read files as named before resolving, and only
 * the directory can be opened again. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"
#include "pipeline/pkgtree.h"

static char top[] = "/tmp/reprosign-pkgsource.XXXXXX";

static void run(const char *cmd)
{
    if (system(cmd) != 0)
        abort();
}

#define N_WANTED 2
static const char *const wanted[N_WANTED] = { "usr/lib/other.efi", "usr/lib/real.efi" };

typedef struct got {
    char bytes[N_WANTED][32];
    char label[N_WANTED][600];
    int calls;
} got;

/* Calls for different names may run at once: each fills its own slot. */
static int take(void *ctx, const char *name, const char *label, int fd, rs_error *err)
{
    got *g = ctx;
    ssize_t n;

    (void)err;
    for (int i = 0; i < N_WANTED; i++) {
        if (strcmp(name, wanted[i]) != 0)
            continue;
        n = pread(fd, g->bytes[i], sizeof(g->bytes[i]) - 1, 0);
        g->bytes[i][n > 0 ? n : 0] = '\0';
        snprintf(g->label[i], sizeof(g->label[i]), "%s", label);
    }
    __atomic_fetch_add(&g->calls, 1, __ATOMIC_SEQ_CST);
    close(fd);
    return 0;
}

/* sep: what joins the origin and the name in a label. */
static void check_tree(rs_pkgtree *t, const char *sep)
{
    rs_error err = { 0 };
    char *resolved = NULL, label[600];
    got g = { 0 };
    rs_pkg_wanted w = { wanted, N_WANTED, take, &g };

    CHECK(rs_pkgtree_resolve(t, "usr/lib/link.efi", &resolved, &err) == 0);
    CHECK(resolved && !strcmp(resolved, "usr/lib/real.efi"));
    free(resolved);
    CHECK(rs_pkgtree_resolve(t, "usr/../../etc", &resolved, &err) == -1 && strstr(err.msg, "outside"));
    CHECK(t->ops->read_resolved(t, &w, 2, &err) == 0);
    CHECK(g.calls == N_WANTED);
    CHECK(!strcmp(g.bytes[0], "other bytes") && !strcmp(g.bytes[1], "real bytes"));
    snprintf(label, sizeof(label), "%s%s%s", t->origin, sep, wanted[1]);
    CHECK(!strcmp(g.label[1], label));
}

static int take_one(void *ctx, const char *name, const char *label, int fd, rs_error *err)
{
    char *bytes = ctx;
    ssize_t n = pread(fd, bytes, 31, 0);

    (void)name, (void)label, (void)err;
    bytes[n > 0 ? n : 0] = '\0';
    close(fd);
    return 0;
}

/* Two names for one file: in the .deb one of them is a hard link, which
 * carries no bytes; the resolved name is the entry that does. */
static void hard_link(rs_pkgtree *t)
{
    static const char *const twins[] = { "usr/lib/twin.efi", "usr/lib/twin2.efi" };

    for (size_t i = 0; i < 2; i++) {
        rs_error err = { 0 };
        char *resolved = NULL, bytes[32] = "";

        CHECK(rs_pkgtree_resolve(t, twins[i], &resolved, &err) == 0);
        if (resolved) {
            const char *names[] = { resolved };
            rs_pkg_wanted w = { names, 1, take_one, bytes };

            CHECK(t->ops->read_resolved(t, &w, 1, &err) == 0 && !strcmp(bytes, "twin bytes"));
        }
        free(resolved);
    }
}

static void same_package_both_ways(void)
{
    char pkgs[600];
    rs_pkgset set;
    rs_pkgtree *deb = NULL, *dir = NULL;
    rs_error err = { 0 };
    int fd = 0;

    snprintf(pkgs, sizeof(pkgs), "%s/pkgs", top);
    CHECK(rs_pkgset_scan(pkgs, &set, &err) == 0);
    CHECK(set.count == 2);   /* README and .hidden are no packages */
    CHECK(rs_pkgset_choose(&set, "demo", NULL, &deb, &err) == -1 && strstr(err.msg, "ambiguous"));
    CHECK(rs_pkgset_choose(&set, "demo", "1.0", &deb, &err) == 0 && deb && deb->ops == &rs_pkgsource_deb);
    for (size_t i = 0; i < set.count; i++)
        if (set.trees[i].ops == &rs_pkgsource_dir)
            dir = &set.trees[i];
    CHECK(dir && !strcmp(dir->name, "demo") && !dir->version && !dir->source);
    if (!deb || !dir) {
        rs_pkgset_free(&set);
        return;
    }
    CHECK(!strcmp(deb->version, "1.0") && !strcmp(deb->source, "demo-src"));

    /* Before resolving: both hand over what is a regular file as named,
     * and pass over the symlink (and a name that is not there); only the
     * directory's open proves that no symlink lies on the way. */
    for (int k = 0; k < 2; k++) {
        static const char *const as_named[] = { "usr/lib/link.efi", "usr/lib/missing.efi", "usr/lib/real.efi" };
        rs_pkgtree *t = k ? dir : deb;
        got g = { 0 };
        rs_pkg_wanted w = { as_named, 3, take, &g };

        CHECK(t->ops->read_as_named(t, &w, 2, &err) == 0 && g.calls == 1 && !strcmp(g.bytes[1], "real bytes"));
        CHECK(t->ops->named_is_resolved == (t == dir));
    }
    check_tree(dir, "/");
    check_tree(deb, ":");
    hard_link(dir);
    hard_link(deb);

    CHECK(rs_pkgtree_open(dir, "usr/lib/real.efi", &fd, &err) == 0 && fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(rs_pkgtree_open(deb, "usr/lib/real.efi", &fd, &err) == 0 && fd == -1);
    rs_pkgset_free(&set);
}

int main(void)
{
    if (system("command -v dpkg-deb >/dev/null") != 0)
        return harness_skip("test_pkgsource", "dpkg-deb is not installed");
    if (!mkdtemp(top))
        return 1;
    char cmd[1024];

    snprintf(cmd, sizeof(cmd), "mkdir -p %s/pkgs/demo/usr/lib %s/pkgs/demo/DEBIAN", top, top);
    run(cmd);
    harness_put(top, "pkgs/demo/usr/lib/real.efi", "real bytes");
    harness_put(top, "pkgs/demo/usr/lib/other.efi", "other bytes");
    snprintf(cmd, sizeof(cmd), "ln -s real.efi %s/pkgs/demo/usr/lib/link.efi", top);
    run(cmd);
    harness_put(top, "pkgs/demo/usr/lib/twin.efi", "twin bytes");
    snprintf(cmd, sizeof(cmd), "ln %s/pkgs/demo/usr/lib/twin.efi %s/pkgs/demo/usr/lib/twin2.efi", top, top);
    run(cmd);
    harness_put(top, "pkgs/demo/DEBIAN/control", "Package: demo\nSource: demo-src (0.9)\nVersion: 1.0\nArchitecture: all\n"
                                    "Maintainer: T <t@example.org>\nDescription: demo\n");
    snprintf(cmd, sizeof(cmd), "dpkg-deb --root-owner-group -b %s/pkgs/demo %s/pkgs/demo_1.0_all.deb >/dev/null",
             top, top);
    run(cmd);
    harness_put(top, "pkgs/README", "not a package");
    harness_put(top, "pkgs/.hidden", "not a package either");

    same_package_both_ways();
    rs_remove_tree(top);
    return harness_finish("test_pkgsource");
}
