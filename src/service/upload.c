#include "service/upload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "base/spawn.h"
#include "service/gpgme_sign.h"
#include "service/json_list.h"

/* upload_command: a program and a few options, as dput -u HOST takes. */
#define MAX_COMMAND_ARGS 64

void rs_upload_config_free(rs_upload_config *c)
{
    free(c->key);
    free(c->gnupg_home);
    free(c->incoming);
    for (size_t i = 0; c->command && c->command[i]; i++)
        free(c->command[i]);
    free(c->command);
    memset(c, 0, sizeof(*c));
}

static int get_string(const json_t *doc, const char *name, bool absolute, char **out, rs_error *err)
{
    const json_t *v = json_object_get(doc, name);
    const char *s = json_string_value(v);

    if (!v)
        return 0;
    if (!s || !*s)
        return rs_fail(err, "\"%s\" must be a non-empty string", name);
    if (absolute && s[0] != '/')
        return rs_fail(err, "\"%s\": %s is not an absolute path", name, s);
    return (*out = strdup(s)) ? 0 : rs_fail(err, "out of memory");
}

/* 40 (v4) or 64 (v5) hex digits: a key id or user id could name another key. */
static bool is_fingerprint(const char *s)
{
    size_t n = strlen(s);

    return (n == 40 || n == 64) && strspn(s, "0123456789abcdefABCDEF") == n;
}

static int get_command(const json_t *doc, rs_upload_config *c, rs_error *err)
{
    char what[80];

    snprintf(what, sizeof(what), "a list of 1 to %d strings (the program and its options)", MAX_COMMAND_ARGS);
    return rs_json_string_list(doc, "upload_command", 1, MAX_COMMAND_ARGS, what, &c->command, NULL, err);
}

int rs_upload_config_parse(const json_t *doc, rs_upload_config *c, rs_error *err)
{
    memset(c, 0, sizeof(*c));
    if (get_string(doc, "upload_key", false, &c->key, err) < 0 ||
        get_string(doc, "gnupg_home", true, &c->gnupg_home, err) < 0 ||
        get_string(doc, "incoming", true, &c->incoming, err) < 0 || get_command(doc, c, err) < 0)
        return -1;
    if (c->key && !is_fingerprint(c->key))
        return rs_fail(err, "\"upload_key\": %s is not a full OpenPGP fingerprint", c->key);
    if (c->key && !c->incoming && !c->command)
        return rs_fail(err, "\"upload_key\" needs \"incoming\" or \"upload_command\" to say where uploads go");
    if (!c->key && (c->incoming || c->command || c->gnupg_home))
        return rs_fail(err, "\"incoming\", \"upload_command\" and \"gnupg_home\" need an \"upload_key\"");
    return 0;
}

/* ---- making the upload ---- */

/* Copies src to dir/name: a queue never sees a partial file. */
static int copy_into(const char *src, const char *dir, const char *name, rs_error *err)
{
    _cleanup_free_ char *dst = rs_path_join(dir, name);

    return dst ? rs_copy_file(src, dst, 0644, err) : rs_fail(err, "out of memory");
}

/* Which of the published files a name is: the .dsc, the source tarball
 * (the signatures tarball is published beside it, not uploaded), or neither. */
static char **slot_for(const char *name, char **dsc, char **tarball)
{
    if (name[0] == '.')
        return NULL;
    if (rs_name_has_suffix(name, ".dsc"))
        return dsc;
    if (rs_name_has_suffix(name, ".tar.xz"))
        return tarball;
    return NULL;
}

/* The published .dsc and .tar.xz, by name: exactly one of each. */
static int find_source(const char *published, char **dsc, char **tarball, rs_error *err)
{
    struct dirent **names = NULL;
    int n = scandir(published, &names, NULL, alphasort), rc = 0;

    if (n < 0)
        return rs_fail(err, "%s: %s", published, strerror(errno));
    for (int i = 0; i < n; i++) {
        char **slot = slot_for(names[i]->d_name, dsc, tarball);

        if (rc == 0 && slot && *slot)
            rc = rs_fail(err, "%s: more than one %s", published, slot == dsc ? ".dsc" : "source tarball");
        else if (rc == 0 && slot && !(*slot = strdup(names[i]->d_name)))
            rc = rs_fail(err, "out of memory");
        free(names[i]);
    }
    free(names);
    if (rc == 0 && (!*dsc || !*tarball))
        rc = rs_fail(err, "%s: no source package (.dsc and .tar.xz) to upload", published);
    return rc;
}

typedef struct upload {
    const rs_upload_config *c;
    const char *published;
    char *work, *dsc, *tarball, *changes;
} upload;

static void upload_free(upload *u)
{
    if (u->work)
        rs_remove_tree(u->work);
    free(u->work), free(u->dsc), free(u->tarball), free(u->changes);
}

/* dsc, tarball: unpacked from the unsigned .dsc, then the .dsc signed,
 * then the .changes made from the tree and signed. */
static int make_upload(upload *u, rs_error *err)
{
    _cleanup_free_ char *dsc_src = rs_path_join(u->published, u->dsc), *tar_src = rs_path_join(u->published, u->tarball);
    _cleanup_free_ char *dsc = rs_path_join(u->work, u->dsc), *tree = rs_path_join(u->work, "tree"), *opt_u = NULL, *opt_o = NULL;
    size_t stem = strlen(u->dsc) - 4;

    if (!dsc_src || !tar_src || !dsc || !tree || asprintf(&u->changes, "%.*s_source.changes", (int)stem, u->dsc) < 0 ||
        asprintf(&opt_u, "-u%s", u->work) < 0 || asprintf(&opt_o, "-O%s/%s", u->work, u->changes) < 0)
        return rs_fail(err, "out of memory");
    if (copy_into(dsc_src, u->work, u->dsc, err) < 0 || copy_into(tar_src, u->work, u->tarball, err) < 0)
        return -1;
    char *unpack[] = { "dpkg-source", "-x", u->dsc, "tree", NULL };
    char *genchanges[] = { "dpkg-genchanges", "-S", opt_u, opt_o, NULL };
    _cleanup_free_ char *changes = rs_path_join(u->work, u->changes);

    if (!changes)
        return rs_fail(err, "out of memory");
    if (rs_run_tool(unpack, u->work, err) < 0 || rs_gpgme_clearsign(u->c->gnupg_home, u->c->key, dsc, err) < 0 ||
        rs_run_tool(genchanges, tree, err) < 0 || rs_gpgme_clearsign(u->c->gnupg_home, u->c->key, changes, err) < 0)
        return -1;
    return 0;
}

/* What name in the queue holds now must be what src holds: a regular
 * file (opened refusing any link), of its size and SHA-256. */
static int check_delivered(int queue, const char *queue_name, const char *src, const char *name, rs_error *err)
{
    _cleanup_input_ rs_input want = { .fd = -1 }, got = { .fd = -1 };
    uint8_t want_md[32], got_md[32];
    int fd;

    if (rs_input_open(&want, src, err) < 0 || rs_input_sha256(&want, want_md, err) < 0)
        return rs_error_prefix(err, "%s", src);
    if (rs_open_beneath_no_symlinks(queue, queue_name, name, &fd, err) < 0 ||
        rs_input_from_fd(&got, fd, name, err) < 0 || rs_input_sha256(&got, got_md, err) < 0)
        return rs_error_prefix(err, "%s/%s: not what was delivered", queue_name, name);
    if (got.size != want.size || memcmp(got_md, want_md, sizeof(want_md)))
        return rs_fail(err, "%s/%s: not what was delivered: other bytes (another user can write the queue)",
                       queue_name, name);
    return 0;
}

int rs_upload_to_queue(const char *incoming, const char *work, const char *const *names, size_t n, rs_error *err)
{
    _cleanup_close_ int queue = -1;

    if (rs_dir_open_nofollow(incoming, &queue, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *src = rs_path_join(work, names[i]);

        if (!src)
            return rs_fail(err, "out of memory");
        if (rs_copy_file_at(src, queue, incoming, names[i], 0644, err) < 0 ||
            check_delivered(queue, incoming, src, names[i], err) < 0)
            return -1;
        if (syncfs(queue) < 0)
            return rs_fail(err, "%s: cannot sync: %s", incoming, strerror(errno));
    }
    return 0;
}

/* Into the queue: the .changes last, so its files are all there first. */
static int deliver(upload *u, rs_error *err)
{
    const char *order[] = { u->dsc, u->tarball, u->changes };
    _cleanup_free_ char *changes = rs_path_join(u->work, u->changes);
    if (!changes)
        return rs_fail(err, "out of memory");
    if (u->c->command) {
        size_t n = 0;

        while (u->c->command[n])
            n++;
        _cleanup_free_ char **argv = calloc(n + 2, sizeof(char *));

        if (!argv)
            return rs_fail(err, "out of memory");
        memcpy(argv, u->c->command, n * sizeof(char *));
        argv[n] = changes;
        return rs_run_tool(argv, u->work, err) < 0 ? rs_error_prefix(err, "upload_command") : 0;
    }
    return rs_upload_to_queue(u->c->incoming, u->work, order, 3, err) < 0 ? rs_error_prefix(err, "incoming") : 0;
}

int rs_upload_published(const rs_upload_config *c, const char *published, const char *work_dir, rs_error *err)
{
    _cleanup_(upload_free) upload u = { c, published, NULL, NULL, NULL, NULL };
    _cleanup_free_ char *marker = NULL;

    if (!c->key)
        return 0;
    if (!(marker = rs_path_join(work_dir, "uploaded")))
        return rs_fail(err, "out of memory");
    if (access(marker, F_OK) == 0)
        return 0;
    if (mkdir(work_dir, 0700) < 0 && errno != EEXIST)
        return rs_fail_sys(err, errno, "%s: %s", work_dir, strerror(errno));
    if (asprintf(&u.work, "%s/upload-XXXXXX", work_dir) < 0 || !mkdtemp(u.work)) {
        int e = errno;

        free(u.work);
        u.work = NULL;
        return rs_fail_sys(err, e, "%s: cannot create a work directory: %s", work_dir, strerror(e));
    }
    if (find_source(published, &u.dsc, &u.tarball, err) < 0 || make_upload(&u, err) < 0 || deliver(&u, err) < 0)
        return rs_error_prefix(err, "upload");
    return rs_write_file(marker, "", 0, 0644, err);
}
