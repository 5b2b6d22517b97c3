/* base/walk.c: every entry below the root once, a directory before what it
 * holds, names in byte order; hidden names left out when asked; a visit
 * can skip a directory or stop the walk; links are reported, not
 * followed; a tree deeper than the limit is refused, naming it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/walk.h"
#include "harness.h"

static char dir[] = "/tmp/test_walk.XXXXXX";

typedef struct seen {
    char list[1024];
    const char *skip;    /* a directory not to enter */
    const char *stop;    /* an entry that fails the walk */
    const char *root;    /* NULL: dir */
} seen;

static int note(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *err)
{
    seen *s = ctx;
    size_t used = strlen(s->list);
    const char *root = s->root ? s->root : dir;

    CHECK(!strncmp(path, root, strlen(root)) && path[strlen(root)] == '/' && !strcmp(path + strlen(root) + 1, rel));
    snprintf(s->list + used, sizeof(s->list) - used, "%s%s%s", used ? " " : "", rel,
             S_ISDIR(st->st_mode) ? "/" : S_ISLNK(st->st_mode) ? "@" : "");
    if (s->stop && !strcmp(rel, s->stop))
        return rs_fail(err, "%s: stopped here", path);
    return s->skip && !strcmp(rel, s->skip) ? RS_WALK_SKIP : 0;
}

static void make(const char *rel, bool is_dir)
{
    rs_error err;

    if (is_dir)
        CHECK(mkdir(harness_path(dir, rel), 0755) == 0);
    else
        CHECK(rs_write_file(harness_path(dir, rel), "x", 1, 0644, &err) == 0);
}

static void walks_in_order(void)
{
    seen all = { "", NULL, NULL, NULL }, shown = { "", NULL, NULL, NULL }, skipped = { "", "b", NULL, NULL },
         stopped = { "", NULL, "b/c", NULL };
    rs_error err;

    make("b", true); make("b/d", false); make("b/c", false); make("a", false); make(".hidden", true);
    make(".hidden/x", false);
    CHECK(symlink("b", harness_path(dir, "link")) == 0);
    CHECK(rs_walk_tree(dir, NULL, note, &all, &err) == 0);
    CHECK(!strcmp(all.list, ".hidden/ .hidden/x a b/ b/c b/d link@"));
    CHECK(rs_walk_tree(dir, &(rs_walk_opts){ .skip_hidden = true }, note, &shown, &err) == 0);
    CHECK(!strcmp(shown.list, "a b/ b/c b/d link@"));
    CHECK(rs_walk_tree(dir, &(rs_walk_opts){ .skip_hidden = true }, note, &skipped, &err) == 0);
    CHECK(!strcmp(skipped.list, "a b/ link@"));
    CHECK(rs_walk_tree(dir, &(rs_walk_opts){ .skip_hidden = true }, note, &stopped, &err) < 0);
    CHECK(strstr(err.msg, "b/c: stopped here") && !strcmp(stopped.list, "a b/ b/c"));
}

static void refuses_too_deep(void)
{
    char rel[PATH_MAX];
    char root[PATH_MAX];
    seen s = { "", NULL, NULL, root };
    rs_error err;

    snprintf(root, sizeof(root), "%s/deep", dir);
    snprintf(rel, sizeof(rel), "%s/deep", dir);
    CHECK(mkdir(rel, 0755) == 0);
    for (int i = 0; i < RS_WALK_MAX_DEPTH + 1; i++) {
        strcat(rel, "/d");
        CHECK(mkdir(rel, 0755) == 0);
    }
    CHECK(rs_walk_tree(root, NULL, note, &s, &err) < 0 && strstr(err.msg, "deeper than 256"));
    CHECK(rs_walk_tree(harness_path(dir, "missing"), NULL, note, &s, &err) < 0 && strstr(err.msg, "missing"));
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    walks_in_order();
    refuses_too_deep();
    rs_remove_tree(dir);
    return harness_finish("test_walk");
}
