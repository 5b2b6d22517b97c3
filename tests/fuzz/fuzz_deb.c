/* Arbitrary bytes as a Debian package: the ar container, control.tar.*
 * and data.tar.* through libarchive, read the four ways the pipeline
 * reads a template or a package to sign: control fields, the entry index,
 * streaming files into sealed memfds, and extracting a subtree to disk.
 *
 * Extraction goes to SANDBOX/a/b/c/d/tree, a fresh directory per run:
 * anything written beside it (a "..", an absolute path, a link followed)
 * lands in one of the otherwise empty levels above and is a bug, as is a
 * symlink or a file the index does not list as one in the tree itself.
 * The tree is then copied as into a source package (SANDBOX/a/b/c/d/copy):
 * a symlink the copy keeps must resolve to a name inside it.
 *
 * libarchive is not instrumented, so coverage inside it comes from the
 * seeds (real template .debs, dpkg-deb builds with each compression). */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "fuzz_keys.h"
#include "pipeline/deb.h"
#include "pipeline/files_json.h"
#include "pipeline/pkgtree.h"
#include "pipeline/source_tree.h"

/* Everything under usr/ is extracted, not just a template's
 * source-template/, so mutated seeds need not keep the long prefix. */
#define PREFIX "usr"
#define SEALS (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK)

static char in_path[64];
static int in_fd = -1;
static char sandbox[PATH_MAX], top[PATH_MAX], dest[PATH_MAX];
static const rs_deb_index *cur_index;     /* for the nftw callback */

static void remove_sandbox(void)
{
    rs_remove_tree(sandbox);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

    in_fd = fuzz_memfd("fuzz-deb-in", in_path, sizeof(in_path));
    /* A cut path would extract somewhere else: checked, as gcc asks. */
    if ((size_t)snprintf(sandbox, sizeof(sandbox), "%s/fuzz-deb.XXXXXX", tmp) >= sizeof(sandbox))
        fuzz_die("TMPDIR is too long", tmp);
    if (!mkdtemp(sandbox))
        fuzz_die("mkdtemp", sandbox);
    atexit(remove_sandbox);
    if ((size_t)snprintf(top, sizeof(top), "%s/a", sandbox) >= sizeof(top) ||
        (size_t)snprintf(dest, sizeof(dest), "%s/b/c/d/tree", top) >= sizeof(dest))
        fuzz_die("TMPDIR is too long", tmp);
    return 0;
}

static bool want_all(void *ctx, const char *name)
{
    return true;
}

/* Owns fd: it must be sealed, `size` long, and readable to the end. */
static int take(void *ctx, const char *name, int fd, uint64_t size, rs_error *err)
{
    const rs_deb_index *idx = ctx;
    static uint8_t buf[64 * 1024];
    const rs_deb_entry *e;
    uint64_t total = 0;
    struct stat st;
    ssize_t n;

    if ((fcntl(fd, F_GET_SEALS) & SEALS) != SEALS)
        fuzz_bug("streamed file is not sealed", name);
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != size)
        fuzz_bug("streamed file size differs from the size reported", name);
    while ((n = pread(fd, buf, sizeof(buf), (off_t)total)) > 0)
        total += (uint64_t)n;
    if (n < 0 || total != size)
        fuzz_bug("streamed file cannot be read back", name);
    close(fd);
    if (idx && (!(e = rs_deb_index_find(idx, name)) || e->type != RS_NODE_FILE))
        fuzz_bug("streamed a file the index does not list as one", name);
    return 0;
}

/* Whether an entry lies beneath `name`, by looking at every one: the
 * oracle for the index's binary search. */
static bool beneath_by_scan(const rs_deb_index *idx, const char *name, size_t n)
{
    for (size_t i = 0; i < idx->count; i++)
        if (!strncmp(idx->entries[i].name, name, n) && idx->entries[i].name[n] == '/')
            return true;
    return false;
}

static void check_index(const rs_deb_index *idx)
{
    for (size_t i = 0; i < idx->count; i++) {
        const rs_deb_entry *e = &idx->entries[i];
        char prefix[4096];
        size_t len = strlen(e->name);

        if (rs_deb_index_find(idx, e->name) != e)
            fuzz_bug("index lookup does not find its own entry", e->name);
        if (e->type == RS_NODE_HARDLINK)
            (void)rs_deb_index_find(idx, e->link);
        if (rs_deb_index_has_beneath(idx, e->name) != beneath_by_scan(idx, e->name, len))
            fuzz_bug("the index and a scan disagree on what lies beneath", e->name);
        /* Every directory on an entry's way, listed or not, has it beneath. */
        for (size_t k = 0; k < len && len < sizeof(prefix); k++)
            if (e->name[k] == '/') {
                memcpy(prefix, e->name, k);
                prefix[k] = '\0';
                if (!rs_deb_index_has_beneath(idx, prefix))
                    fuzz_bug("an entry's directory has nothing beneath it", e->name);
            }
    }
}

static int check_extracted(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    const char *rel = path + strlen(dest);
    _cleanup_free_ char *name = NULL;
    const rs_deb_entry *e;

    bool link = type == FTW_SL || type == FTW_SLN || S_ISLNK(st->st_mode);

    if (!link && !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
        fuzz_bug("extraction created a special file", path);
    if ((!link && !S_ISREG(st->st_mode)) || !cur_index)
        return 0;
    if (asprintf(&name, "%s%s", PREFIX, rel) < 0)
        fuzz_die("asprintf", NULL);
    if (!(e = rs_deb_index_find(cur_index, name)) || e->type != (link ? RS_NODE_SYMLINK : RS_NODE_FILE))
        fuzz_bug("extracted a file or symlink the index does not list as one", name);
    return 0;
}

static char copy_root[PATH_MAX];

/* Every symlink the copy kept resolves to an existing name inside it. */
static int check_copied(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    _cleanup_free_ char *real = NULL;
    size_t n = strlen(copy_root);

    if (type != FTW_SL && type != FTW_SLN && !S_ISLNK(st->st_mode))
        return 0;
    if (!(real = realpath(path, NULL)))
        fuzz_bug("the copy kept a dangling symlink", path);
    if (strncmp(real, copy_root, n) || (real[n] && real[n] != '/'))
        fuzz_bug("the copy kept a symlink leading out of it", path);
    return 0;
}

/* The entries' names (the first 64) as files.json paths, through the
 * resolver that follows the package's symlinks: a path that resolves must
 * end on a regular file the index lists, and one refused must say why. */
static void resolve_all(const rs_deb_index *idx)
{
    rs_pkgtree tree = { .origin = strdup(in_path), .ops = &rs_pkgsource_deb };

    if (!tree.origin)
        fuzz_die("strdup", NULL);
    for (size_t i = 0; i < idx->count && i < 64; i++) {
        _cleanup_free_ char *resolved = NULL;
        const rs_deb_entry *e;
        rs_error err = { 0 };

        if (rs_pkgtree_resolve(&tree, idx->entries[i].name, &resolved, &err) < 0) {
            if (!err.msg[0])
                fuzz_bug("a path was refused without a message", idx->entries[i].name);
            continue;
        }
        e = rs_deb_index_find(idx, resolved);
        if (!e || e->type != RS_NODE_FILE)
            fuzz_bug("a path resolved to something the index does not list as a file", resolved);
    }
    rs_pkgtree_free(&tree);
}

/* dir holds nothing, or only `child`. */
static void expect_only(const char *dir, const char *child)
{
    _cleanup_(rs_closedirp) DIR *d = opendir(dir);
    struct dirent *de;

    if (!d)
        fuzz_die("opendir", dir);
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, child))
            fuzz_bug("extraction wrote outside its destination", de->d_name);
}

static void extract(const rs_deb_index *idx)
{
    static const rs_extract_limits limits = { 1 << 20, 1000 };
    _cleanup_free_ char *parent = strndup(dest, strlen(dest) - strlen("/tree"));
    rs_error err = { 0 };
    char level[PATH_MAX];

    if (!parent || rs_mkdir_parents(dest, &err) < 0 || mkdir(dest, 0755) < 0)
        fuzz_die("cannot create the extraction directory", err.msg);
    if (rs_deb_extract_tree(in_path, PREFIX, dest, &limits, &err) < 0 && !err.msg[0])
        fuzz_bug("extraction failed without a message", NULL);
    /* Each level above dest must hold only the next one. */
    expect_only(sandbox, "a");
    snprintf(level, sizeof(level), "%s", top);
    expect_only(level, "b");
    strcat(level, "/b");
    expect_only(level, "c");
    strcat(level, "/c");
    expect_only(level, "d");
    expect_only(parent, "tree");   /* before the copy beside it */
    cur_index = idx;
    if (nftw(dest, check_extracted, 16, FTW_PHYS) < 0)
        fuzz_die("nftw", dest);
    snprintf(copy_root, sizeof(copy_root), "%s/copy", parent);
    if (rs_copy_source_tree(dest, copy_root, &err) < 0 && !err.msg[0])
        fuzz_bug("the copy failed without a message", NULL);
    expect_only(sandbox, "a");
    _cleanup_free_ char *real_copy = realpath(copy_root, NULL);

    if (real_copy) {
        snprintf(copy_root, sizeof(copy_root), "%s", real_copy);
        if (nftw(copy_root, check_copied, 16, FTW_PHYS) < 0)
            fuzz_die("nftw", copy_root);
    }
    rs_remove_tree(top);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_deb_control c;
    rs_deb_index idx;
    rs_error err = { 0 };
    bool indexed;

    fuzz_memfd_fill(in_fd, data, size);
    if (rs_deb_read_control(in_path, &c, &err) == 0) {
        if (!rs_valid_package_name(c.package) || !c.version)
            fuzz_bug("control accepted without a valid Package and Version", c.package);
        rs_deb_control_free(&c);
    } else if (!err.msg[0]) {
        fuzz_bug("control refused without a message", NULL);
    }
    indexed = rs_deb_index_read(in_path, &idx, &err) == 0;
    if (indexed) {
        check_index(&idx);
        resolve_all(&idx);
    }
    /* The index refuses duplicates, the stream does not: only compare
     * the two when the index was built. */
    (void)rs_deb_stream(in_path, want_all, take, indexed ? &idx : NULL, &err);
    extract(indexed ? &idx : NULL);
    if (indexed)
        rs_deb_index_free(&idx);
    return 0;
}
