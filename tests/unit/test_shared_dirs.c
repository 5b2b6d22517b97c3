/* Writing into a directory someone else can write (docs/security.md, "The
 * machine"): a user who can write the upload queue swaps the temporary file
 * for a symlink, or a file of their own, between its write and its rename.
 * The swap is made deterministic here by rs_output_test_before_commit,
 * which runs at the very point a racing user would strike. The mode must
 * never reach the link's target (a 0600 file of the service made 0644 by a
 * chmod by name), and the output must not count as delivered. Beside each
 * attack, its legitimate twin: the same delivery byte for byte.
 * Also: the transparency log publishes its tiles, leaf index and
 * checkpoint readable by all on purpose, whatever the writer's umask. */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"
#include "service/upload.h"
#include "translog/log.h"
#include "translog/note.h"

static char dir[] = "/tmp/test_shared_dirs.XXXXXX";

static char *at(const char *name)
{
    return harness_path(dir, name);
}

static mode_t mode_of(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static bool same_bytes(const char *a, const char *b)
{
    rs_bytes x = { 0 }, y = { 0 };
    rs_error err;
    bool same = rs_read_file(a, 1 << 20, &x, &err) == 0 && rs_read_file(b, 1 << 20, &y, &err) == 0 &&
                x.len == y.len && !memcmp(x.data, y.data, x.len);

    rs_bytes_free(&x);
    rs_bytes_free(&y);
    return same;
}

/* What the racing user puts in the place of the temporary of swap_name. */
static const char *swap_name;
static const char *swap_to;       /* a symlink to this path, or */
static bool swap_to_own_file;     /* a regular file of other bytes */
static int swaps;

static void racer(const char *tmp_path)
{
    const char *base = strrchr(tmp_path, '/') + 1;

    if ((!swap_to && !swap_to_own_file) || strncmp(base + 1, swap_name, strlen(swap_name)) ||
        base[1 + strlen(swap_name)] != '.')
        return;
    if (unlink(tmp_path) < 0 || (swap_to ? symlink(swap_to, tmp_path) : (harness_put("/", tmp_path, "evil"), 0)) < 0)
        abort();
    swaps++;
}

static void race(const char *name, const char *to, bool own_file)
{
    swap_name = name;
    swap_to = to;
    swap_to_own_file = own_file;
    swaps = 0;
}

/* rs_output itself: the mode is set on the descriptor, the rename checked. */
static void output_swapped_for_a_link(void)
{
    rs_output out;
    rs_error err;

    harness_mkdir(dir, "queue");
    harness_put(dir, "secret", "the service's own secret\n");
    CHECK(chmod(at("secret"), 0600) == 0);
    race("target", at("secret"), false);
    CHECK(rs_output_open(&out, at("queue/target"), 0644, &err) == 0);
    CHECK(rs_output_write(&out, "ours", 4, &err) == 0);
    CHECK(rs_output_commit(&out, &err) < 0 && strstr(err.msg, "another user replaced it"));
    rs_output_abort(&out);
    CHECK(swaps == 1);
    CHECK(mode_of(at("secret")) == 0600);                 /* the attack: 0600 became 0644 */
    race("", NULL, false);

    race("target2", NULL, true);                           /* a file of theirs, not a link */
    CHECK(rs_output_open(&out, at("queue/target2"), 0644, &err) == 0);
    CHECK(rs_output_write(&out, "ours", 4, &err) == 0);
    CHECK(rs_output_commit(&out, &err) < 0 && strstr(err.msg, "another user replaced it"));
    rs_output_abort(&out);
    race("", NULL, false);

    /* The twin: nobody races, the output is made with its mode. */
    CHECK(rs_output_open(&out, at("queue/target"), 0640, &err) == 0);
    CHECK(rs_output_write(&out, "ours", 4, &err) == 0);
    CHECK(rs_output_commit(&out, &err) == 0);
    rs_output_abort(&out);
    CHECK(mode_of(at("queue/target")) == 0640);
}

static void put_upload(void)
{
    static char big[300000];

    for (size_t i = 0; i < sizeof(big) - 1; i++)
        big[i] = (char)('a' + i % 23);
    harness_mkdir(dir, "work");
    harness_put(dir, "work/foo_1.dsc", "Format: 3.0 (native)\nSource: foo\n");
    harness_put(dir, "work/foo_1.tar.xz", big);
    harness_put(dir, "work/foo_1_source.changes", "Format: 1.8\nSource: foo\n");
}

static const char *const upload_names[] = { "foo_1.dsc", "foo_1.tar.xz", "foo_1_source.changes" };

/* The queue: through a descriptor of it, each file checked once there. */
static void upload_queue(void)
{
    rs_error err;
    char q[256];

    put_upload();
    umask(077);                                            /* the service's */
    harness_mkdir(dir, "incoming");
    CHECK(chmod(at("incoming"), 01777) == 0);              /* shared, sticky or not */
    harness_put(dir, "state.db", "embargoed\n");
    CHECK(chmod(at("state.db"), 0600) == 0);

    /* The attack on the second file: nothing counts as delivered. */
    race("foo_1.tar.xz", at("state.db"), false);
    CHECK(rs_upload_to_queue(at("incoming"), at("work"), upload_names, 3, &err) < 0);
    CHECK(strstr(err.msg, "foo_1.tar.xz") && strstr(err.msg, "another user replaced it"));
    CHECK(swaps == 1 && mode_of(at("state.db")) == 0600);
    CHECK(access(at("incoming/foo_1_source.changes"), F_OK) < 0);   /* the .changes never went */
    race("foo_1.tar.xz", NULL, true);
    CHECK(rs_upload_to_queue(at("incoming"), at("work"), upload_names, 3, &err) < 0);
    CHECK(access(at("incoming/foo_1_source.changes"), F_OK) < 0);
    race("", NULL, false);

    /* A queue that is itself a link (whoever can replace it chooses where
     * the files go): refused, nothing written where it leads. */
    harness_mkdir(dir, "elsewhere");
    harness_symlink(dir, "elsewhere", "queue-link");
    CHECK(rs_upload_to_queue(at("queue-link"), at("work"), upload_names, 3, &err) < 0);
    CHECK(strstr(err.msg, "symbolic link") != NULL);
    CHECK(access(at("elsewhere/foo_1.dsc"), F_OK) < 0);

    /* The twin: delivered byte for byte, each readable by the queue's
     * owner (0644 whatever the service's umask). */
    CHECK(rs_upload_to_queue(at("incoming"), at("work"), upload_names, 3, &err) == 0);
    for (size_t i = 0; i < 3; i++) {
        snprintf(q, sizeof(q), "%s/incoming/%s", dir, upload_names[i]);
        CHECK(same_bytes(q, harness_path(at("work"), upload_names[i])) && mode_of(q) == 0644);
    }
    umask(022);
}

/* The output and log must not be shared: whoever else can write them, or
 * a directory above them (a sticky one excepted), is named. */
static void unshared_dirs(void)
{
    rs_error err;

    harness_mkdir(dir, "sticky");
    harness_mkdir(dir, "sticky/out");
    harness_mkdir(dir, "open");
    harness_mkdir(dir, "open/out");
    CHECK(chmod(at("sticky"), 01777) == 0 && chmod(at("open"), 0777) == 0);
    CHECK(chmod(at("sticky/out"), 0755) == 0 && chmod(at("open/out"), 0755) == 0);
    CHECK(rs_dir_check_unshared(at("sticky/out"), &err) == 0);
    CHECK(rs_dir_check_unshared(at("missing"), &err) == 0);
    CHECK(rs_dir_check_unshared(at("open/out"), &err) < 0 && strstr(err.msg, "/open: mode 0777"));
    CHECK(rs_dir_check_unshared(at("sticky"), &err) < 0 && strstr(err.msg, "mode 1777"));
    CHECK(chmod(at("sticky/out"), 0775) == 0);
    CHECK(rs_dir_check_unshared(at("sticky/out"), &err) < 0 && strstr(err.msg, "chmod go-w"));
    CHECK(chmod(at("sticky/out"), 0755) == 0);
    if (geteuid() == 0) {
        CHECK(chown(at("sticky/out"), 4242, 4242) == 0);
        CHECK(rs_dir_check_unshared(at("sticky/out"), &err) < 0 && strstr(err.msg, "owned by uid 4242"));
    }
}

static const char *log_root;
static int log_bad;

static int check_log_mode(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    mode_t want = S_ISDIR(st->st_mode) ? 0755 : !strcmp(path + ftw->base, ".lock") ? 0600 : 0644;

    (void)flag;
    if ((st->st_mode & 07777) != want) {
        fprintf(stderr, "%s: mode %04o, not %04o\n", path, (unsigned)(st->st_mode & 07777), (unsigned)want);
        log_bad++;
    }
    return 0;
}

/* Written under the service's umask 077, a log's directory, checkpoint,
 * tile/ and leaf-index/ are still readable by all; its lock is not. */
static void published_log_modes(void)
{
    rs_translog *l = NULL;
    rs_error err;
    json_t *e[300];

    umask(077);
    CHECK(rs_log_keygen("example.org/log", RS_NOTE_ALG_ED25519, at("log"), &err) == 0);
    CHECK(rs_translog_create(at("tlog"), at("log.key"), &l, &err) == 0);
    for (int i = 0; i < 300; i++)
        e[i] = json_pack("{s:s, s:i}", "format", "module", "i", i);
    CHECK(l && rs_translog_append(l, e, 300, NULL, &err) == 0);   /* a full tile and a partial one */
    for (int i = 0; i < 300; i++)
        json_decref(e[i]);
    rs_translog_close(l);
    umask(022);
    CHECK(mode_of(at("log.key")) == 0600);                 /* the state stays private */
    CHECK(mode_of(at("tlog/checkpoint")) == 0644 && mode_of(at("tlog/tile")) == 0755 &&
          mode_of(at("tlog/leaf-index")) == 0755);
    log_root = at("tlog");
    CHECK(nftw(log_root, check_log_mode, 16, FTW_PHYS) == 0 && log_bad == 0);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    rs_output_test_before_commit = racer;
    output_swapped_for_a_link();
    upload_queue();
    published_log_modes();
    unshared_dirs();
    rs_output_test_before_commit = NULL;
    {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
    return harness_finish("test_shared_dirs");
}
