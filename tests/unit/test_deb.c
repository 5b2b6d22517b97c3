/* Debian packages built by hand (ar of uncompressed tarballs), read the
 * ways the pipeline reads them.
 *
 * Regression (found with fuzz_deb's hand-made seeds): the data.tar was
 * opened with all of libarchive's filters, some of which run a program
 * found through PATH on the package's bytes: a data.tar.lzo ran
 * "lzop -d", .lrz "lrzip", .grz "grzip". Only dpkg's own compressions are
 * read now; fake programs first on PATH record whether anything ran.
 * Exits 77 (skip) when libarchive cannot be loaded. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_lib.h"
#include "base/file.h"
#include "harness.h"
#include "pipeline/deb.h"
#include "pipeline/pkgtree.h"

typedef struct buf {
    uint8_t data[16384];
    size_t len;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->len + n > sizeof(b->data))
        abort();
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* One ustar entry: type '0' (file, `body` its bytes), '5' or '2' (symlink
 * to `body`). */
static void tar_entry(buf *t, const char *name, char type, const char *body)
{
    uint8_t h[512] = { 0 };
    size_t size = type == '0' ? strlen(body) : 0;
    unsigned sum = 0;

    snprintf((char *)h, 100, "%s", name);
    snprintf((char *)h + 100, 8, "%07o", type == '5' ? 0755 : 0644);
    snprintf((char *)h + 108, 8, "%07o", 0);
    snprintf((char *)h + 116, 8, "%07o", 0);
    snprintf((char *)h + 124, 12, "%011o", (unsigned)size);
    snprintf((char *)h + 136, 12, "%011o", 1700000000);
    h[156] = (uint8_t)type;
    if (type == '2')
        snprintf((char *)h + 157, 100, "%s", body);
    memcpy(h + 257, "ustar\0" "00", 8);
    memset(h + 148, ' ', 8);
    for (size_t i = 0; i < sizeof(h); i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    put(t, h, sizeof(h));
    if (size) {
        static const uint8_t zeros[512];

        put(t, body, size);
        put(t, zeros, -size % 512);
    }
}

static void tar_end(buf *t)
{
    static const uint8_t zeros[1024];

    put(t, zeros, sizeof(zeros));
}

static void ar_member(buf *a, const char *name, const buf *m)
{
    char h[61];

    if (a->len == 0)
        put(a, "!<arch>\n", 8);
    snprintf(h, sizeof(h), "%-16s%-12d%-6d%-6d%-8s%-10zu`\n", name, 1700000000, 0, 0, "100644", m->len);
    put(a, h, 60);
    put(a, m->data, m->len);
    if (m->len % 2)
        put(a, "\n", 1);
}

static char dir[] = "/tmp/test_deb.XXXXXX";

/* A package of debian-binary, an uncompressed control.tar and the given
 * data member, written to dir/NAME.deb; returns its path (static). */
static const char *write_deb(const char *name, const char *data_member, const buf *data)
{
    static char path[256];
    buf bin = { .len = 0 }, ctl = { .len = 0 }, deb = { .len = 0 };
    FILE *f;

    put(&bin, "2.0\n", 4);
    tar_entry(&ctl, "./control", '0', "Package: hand-made\nVersion: 1\nArchitecture: all\n");
    tar_end(&ctl);
    ar_member(&deb, "debian-binary", &bin);
    ar_member(&deb, "control.tar", &ctl);
    ar_member(&deb, data_member, data);
    snprintf(path, sizeof(path), "%s/%s.deb", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(deb.data, 1, deb.len, f) != deb.len || fclose(f) != 0)
        abort();
    return path;
}

/* dir/bin/PROG, a stand-in that leaves dir/ran behind if it is ever run. */
static void fake_program(const char *prog)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/bin/%s", dir, prog);
    f = fopen(path, "w");
    if (!f || fprintf(f, "#!/bin/sh\ntouch '%s/ran'\ncat\n", dir) < 0 || fclose(f) != 0 || chmod(path, 0755) < 0)
        abort();
}

static void test_plain_tar_reads(void)
{
    buf data = { .len = 0 };
    const char *path;
    rs_deb_control c;
    rs_deb_index idx;
    const rs_deb_entry *e;
    rs_error err = { 0 };

    tar_entry(&data, "./usr/", '5', NULL);
    tar_entry(&data, "./usr/x", '0', "hi\n");
    tar_end(&data);
    path = write_deb("plain", "data.tar", &data);
    if (rs_deb_read_control(path, &c, &err) == 0) {
        CHECK(!strcmp(c.package, "hand-made") && !strcmp(c.version, "1"));
        rs_deb_control_free(&c);
    } else {
        fprintf(stderr, "control.tar: %s\n", err.msg);
        harness_failures++;
    }
    if (rs_deb_index_read(path, &idx, &err) == 0) {
        CHECK(idx.count == 2);
        CHECK((e = rs_deb_index_find(&idx, "usr/x")) && e->type == RS_NODE_FILE && e->size == 3);
        rs_deb_index_free(&idx);
    } else {
        fprintf(stderr, "data.tar: %s\n", err.msg);
        harness_failures++;
    }
}

/* Each compression libarchive hands to an outside program: refused, and
 * nothing run. */
static void test_no_external_programs(void)
{
    static const struct {
        const char *member, *program;
        uint8_t magic[12];
        size_t len;
    } cases[] = {
        { "data.tar.lzo", "lzop", { 0x89, 'L', 'Z', 'O', 0, '\r', '\n', 0x1a, '\n' }, 9 },
        { "data.tar.lrz", "lrzip", { 'L', 'R', 'Z', 'I', 0, 6 }, 6 },
        { "data.tar.grz", "grzip", { 'G', 'R', 'Z', 'i', 'p', 'I', 'I', 0, 2, 4, ':', ')' }, 12 },
    };
    char ran[256];

    snprintf(ran, sizeof(ran), "%s/ran", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        buf data = { .len = 0 };
        uint8_t pad[64] = { 0 };
        rs_deb_index idx;
        rs_error err = { 0 };
        const char *path;

        fake_program(cases[i].program);
        put(&data, cases[i].magic, cases[i].len);
        put(&data, pad, sizeof(pad));
        path = write_deb(cases[i].program, cases[i].member, &data);
        CHECK(rs_deb_index_read(path, &idx, &err) == -1 && err.msg[0]);
        if (access(ran, F_OK) == 0) {
            fprintf(stderr, "%s: reading the package ran %s\n", cases[i].member, cases[i].program);
            harness_failures++;
            unlink(ran);
        }
    }
}

/* Extraction stays inside its destination: ".." is refused, and so is
 * any entry through a symlink extracted before it; the symlink itself is
 * made (its target is checked when the tree is copied), and an absolute
 * name lands below dest. */
static void test_extract_stays_inside(void)
{
    static const struct {
        const char *name;
        char type;
        const char *body;
        int rc;
    } cases[] = {
        { "./usr/../../escape", '0', "x", -1 },
        { "./usr/l", '2', "../..", 0 },
        { "./usr/l/escape", '0', "x", -1 },
        { "/usr/abs", '0', "x", 0 },
    };
    static const rs_extract_limits roomy = { 1 << 20, 100 };
    char dest[128], escaped[128], inside[256];

    snprintf(dest, sizeof(dest), "%s/a/dest", dir);
    snprintf(escaped, sizeof(escaped), "%s/escape", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        buf data = { .len = 0 };
        rs_error err = { 0 };
        struct stat st;

        snprintf(inside, sizeof(inside), "%s/%s", dest, strrchr(cases[i].name, '/') + 1);
        if (i == 2)   /* the file below the link above */
            tar_entry(&data, cases[1].name, cases[1].type, cases[1].body);
        tar_entry(&data, cases[i].name, cases[i].type, cases[i].body);
        tar_end(&data);
        if (rs_mkdir_parents(dest, &err) < 0 || mkdir(dest, 0755) < 0)
            abort();
        CHECK(rs_deb_extract_tree(write_deb("extract", "data.tar", &data), "usr", dest, &roomy, &err) ==
              cases[i].rc);
        CHECK(access(escaped, F_OK) < 0);
        if (cases[i].rc == 0 && cases[i].type == '2')
            CHECK(lstat(inside, &st) == 0 && S_ISLNK(st.st_mode));
        else if (cases[i].rc == 0)
            CHECK(lstat(inside, &st) == 0 && S_ISREG(st.st_mode));
        else
            CHECK(cases[i].rc < 0 && err.msg[0]);
        CHECK(lstat(dest, &st) == 0 && S_ISDIR(st.st_mode));
        rs_remove_tree(dest);
    }
}

/* A tree over its byte or entry budget is refused, exactly at the
 * limit it is not. */
static void test_extract_limits(void)
{
    static const struct {
        rs_extract_limits limits;
        int rc;
        const char *says;
    } cases[] = {
        { { 10, 4 }, 0, NULL },
        { { 9, 4 }, -1, "source template: b: too large (over 4 bytes)" },
        { { 10, 3 }, -1, "more than 3 entries, the limit" },
    };
    buf data = { .len = 0 };
    char dest[128];

    tar_entry(&data, "./usr/", '5', "");
    tar_entry(&data, "./usr/d/", '5', "");
    tar_entry(&data, "./usr/d/a", '0', "12345");
    tar_entry(&data, "./usr/b", '0', "67890");
    tar_entry(&data, "./usr/e/", '5', "");
    tar_end(&data);
    snprintf(dest, sizeof(dest), "%s/limits", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rs_error err = { 0 };

        if (mkdir(dest, 0755) < 0)
            abort();
        CHECK(rs_deb_extract_tree(write_deb("limits", "data.tar", &data), "usr", dest, &cases[i].limits, &err) ==
              cases[i].rc);
        if (cases[i].says)
            CHECK(strstr(err.msg, cases[i].says) != NULL);
        rs_remove_tree(dest);
    }
}

/* A symlink with an empty target (a ustar linkname of all zeros), which
 * libarchive reports with no target at all: resolving a path through it
 * is refused. It used to dereference the missing target (found by
 * clang-analyzer). Symlinks to "." and ".." end the walk on a directory,
 * which used to come back as the resolved "file" (found by fuzz_deb).
 * Each path twice, so the second lookup comes from the cache. */
static void test_symlink_without_target(void)
{
    static const char *const refused[] = { "usr/l", "usr/dot", "usr/up", "usr/lib/up" };
    buf data = { .len = 0 };
    char pkgs[128];
    rs_pkgset set;
    rs_pkgtree *tree = NULL;
    rs_error err = { 0 };

    snprintf(pkgs, sizeof(pkgs), "%s/pkgs", dir);
    if (mkdir(pkgs, 0755) < 0)
        abort();
    tar_entry(&data, "./usr/", '5', NULL);
    tar_entry(&data, "./usr/l", '2', "");
    tar_entry(&data, "./usr/dot", '2', ".");
    tar_entry(&data, "./usr/up", '2', "..");
    tar_entry(&data, "./usr/lib/", '5', NULL);
    tar_entry(&data, "./usr/lib/up", '2', "..");
    tar_entry(&data, "./usr/f", '0', "x");
    tar_entry(&data, "./usr/lib/tof", '2', "../f");
    tar_end(&data);
    write_deb("pkgs/hand-made", "data.tar", &data);
    if (rs_pkgset_scan(pkgs, &set, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        harness_failures++;
        return;
    }
    CHECK(rs_pkgset_choose(&set, "hand-made", NULL, &tree, &err) == 0);
    for (int i = 0; tree && i < 2; i++) {
        char *resolved = NULL;

        for (size_t r = 0; r < sizeof(refused) / sizeof(*refused); r++) {
            err.msg[0] = '\0';
            CHECK(rs_pkgtree_resolve(tree, refused[r], &resolved, &err) == -1 && strstr(err.msg, refused[r]));
            free(resolved);
            resolved = NULL;
        }
        CHECK(rs_pkgtree_resolve(tree, "usr/lib/tof", &resolved, &err) == 0 && resolved &&
              !strcmp(resolved, "usr/f"));
        free(resolved);
    }
    rs_pkgset_free(&set);
}

/* A directory a tarball never lists is there when an entry lies beneath
 * it. Names that sort beside "usr/lib/" ('-' and '.' before '/', '0'
 * after it) are not beneath it; neither is a file, nor a prefix of a
 * name. */
static void test_implied_directories(void)
{
    static const struct {
        const char *name;
        bool beneath;
    } cases[] = {
        { "usr", true },          { "usr/lib", true },      { "usr/lib/m", true },   { "usr/lib-x", true },
        { "usr/lib/m/f", false }, { "usr/lib.d", false },   { "usr/lib0", false },   { "usr/li", false },
        { "us", false },          { "usr/lib/m/", false },  { "usr/lib/n", false },  { "zzz", false },
    };
    buf data = { .len = 0 };
    rs_deb_index idx;
    rs_error err = { 0 };

    tar_entry(&data, "./usr/lib-x/f", '0', "a");
    tar_entry(&data, "./usr/lib.d", '0', "b");
    tar_entry(&data, "./usr/lib/m/f", '0', "c");
    tar_entry(&data, "./usr/lib0", '0', "d");
    tar_end(&data);
    if (rs_deb_index_read(write_deb("implied", "data.tar", &data), &idx, &err) < 0) {
        fprintf(stderr, "data.tar: %s\n", err.msg);
        harness_failures++;
        return;
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (rs_deb_index_has_beneath(&idx, cases[i].name) != cases[i].beneath) {
            fprintf(stderr, "%s: %s beneath it, said otherwise\n", cases[i].name,
                    cases[i].beneath ? "entries" : "nothing");
            harness_failures++;
        }
    rs_deb_index_free(&idx);
}

int main(void)
{
    char bin[256];
    rs_error err;

    if (rs_archive_load(&err) < 0) {
        return harness_skip("test_deb", err.msg);
    }
    if (!mkdtemp(dir))
        abort();
    snprintf(bin, sizeof(bin), "%s/bin", dir);
    if (mkdir(bin, 0755) < 0 || setenv("PATH", bin, 1) < 0)
        abort();
    test_plain_tar_reads();
    test_no_external_programs();
    test_extract_stays_inside();
    test_extract_limits();
    test_symlink_without_target();
    test_implied_directories();
    rs_remove_tree(dir);
    return harness_finish("test_deb");
}
