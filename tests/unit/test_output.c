/* Outputs are all-or-nothing: an aborted output leaves neither the target
 * nor its temporary file; a committed one replaces the target atomically
 * with the requested mode (less the umask). Inputs give the file's bytes
 * wherever they are read, and missing parent directories are made. */
#include <dirent.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    if (d)
        closedir(d);
    return n;
}

#define THREADS 4
#define OUTPUTS_PER_THREAD 12   /* 48 open at once, under the 64 tracked */

static const char *threads_dir;
static int ready_fd;

/* Opens outputs side by side with the other threads, says so, and waits
 * with them open. */
static void *open_outputs(void *arg)
{
    static rs_output outs[THREADS][OUTPUTS_PER_THREAD];
    long t = (long)arg;
    char path[512];
    rs_error err;

    for (int i = 0; i < OUTPUTS_PER_THREAD; i++) {
        snprintf(path, sizeof(path), "%s/out-%ld-%d", threads_dir, t, i);
        if (rs_output_open(&outs[t][i], path, 0644, &err) < 0 || rs_output_write(&outs[t][i], "x", 1, &err) < 0)
            _exit(2);
        /* Churn: a short-lived output claims and frees a slot meanwhile. */
        rs_output scratch;
        snprintf(path, sizeof(path), "%s/scratch-%ld-%d", threads_dir, t, i);
        if (rs_output_open(&scratch, path, 0644, &err) < 0)
            _exit(2);
        rs_output_abort(&scratch);
    }
    if (write(ready_fd, "r", 1) != 1)
        _exit(2);
    for (;;)
        pause();
    return NULL;
}

/* Outputs opened by several threads at once are all tracked: a fatal
 * signal leaves none of their temporary files. */
static void signal_removes_every_thread_output(const char *dir)
{
    int ready[2];
    pid_t pid;
    char c;
    int status, got = 0;

    if (pipe(ready) < 0 || (pid = fork()) < 0)
        abort();
    if (pid == 0) {
        pthread_t th[THREADS];

        close(ready[0]);
        threads_dir = dir;
        ready_fd = ready[1];
        rs_output_track_signals();
        for (long t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, open_outputs, (void *)t);
        for (;;)
            pause();
    }
    close(ready[1]);
    while (got < THREADS && read(ready[0], &c, 1) == 1)
        got++;
    close(ready[0]);
    CHECK(got == THREADS && count_entries(dir) == THREADS * OUTPUTS_PER_THREAD);
    kill(pid, SIGTERM);
    CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    CHECK(count_entries(dir) == 0);
}

/* A kept output holds only its temporary's suffix and mode: it is found
 * again from the target's path, committed with its mode, or removed. */
static void kept_outputs(const char *dir)
{
    char path[256], other[256];
    rs_output out;
    rs_output_kept kept, dropped;
    rs_error err;
    struct stat st;

    snprintf(path, sizeof(path), "%s/kept", dir);
    snprintf(other, sizeof(other), "%s/dropped", dir);
    CHECK(rs_output_open(&out, path, 0750, &err) == 0);
    CHECK(rs_output_write(&out, "kept", 4, &err) == 0);
    CHECK(rs_output_keep(&out, &kept, &err) == 0);
    CHECK(strlen(kept.suffix) == 6 && !out.path && !out.tmp_path && out.fd < 0);
    rs_output_abort(&out);                                    /* out is empty: the temporary stays */
    CHECK(rs_output_open(&out, other, 0644, &err) == 0);
    CHECK(rs_output_keep(&out, &dropped, &err) == 0);
    CHECK(count_entries(dir) == 2 && stat(path, &st) != 0);  /* two temporaries, no target */
    rs_output_abort_kept(other, &dropped);
    CHECK(count_entries(dir) == 1 && !dropped.suffix[0]);
    CHECK(rs_output_commit_kept(path, &kept, &err) == 0);
    CHECK(count_entries(dir) == 1 && stat(path, &st) == 0 && (st.st_mode & 0777) == 0750 && st.st_size == 4);
    rs_output_abort_kept(path, &kept);                        /* harmless after commit */
    CHECK(stat(path, &st) == 0);
    CHECK(rs_output_commit_kept(other, &dropped, &err) == -1 && strstr(err.msg, "no temporary is kept"));
    unlink(path);
}

int main(void)
{
    char dir[] = "/tmp/rs-test-output-XXXXXX", path[256];
    rs_output out;
    rs_input in;
    rs_error err;
    struct stat st;
    uint8_t buf[4];

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/target", dir);
    umask(022);
    kept_outputs(dir);

    CHECK(rs_output_open(&out, path, 0666, &err) == 0);
    CHECK(rs_output_write(&out, "half", 4, &err) == 0);
    rs_output_abort(&out);
    CHECK(count_entries(dir) == 0);

    CHECK(rs_write_file(path, "old!", 4, 0644, &err) == 0);
    CHECK(rs_output_open(&out, path, 0640, &err) == 0);
    CHECK(rs_output_write(&out, "new!", 4, &err) == 0);
    CHECK(rs_output_patch(&out, 0, "N", 1, &err) == 0);
    CHECK(rs_output_patch(&out, 3, "xy", 2, &err) == -1);   /* past what was written */
    CHECK(count_entries(dir) == 2);                          /* target + temporary */
    CHECK(rs_output_commit(&out, &err) == 0);
    rs_output_abort(&out);                                   /* harmless after commit */
    CHECK(count_entries(dir) == 1);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);

    CHECK(rs_input_open(&in, path, &err) == 0);
    CHECK(in.size == 4);
    CHECK(rs_input_read(&in, 0, buf, 4, &err) == 0 && memcmp(buf, "New!", 4) == 0);
    CHECK(rs_input_read(&in, 1, buf, 4, &err) == -1);       /* past the end */
    CHECK(strstr(err.msg, "truncated") != NULL);
    CHECK(rs_input_read(&in, UINT64_MAX, buf, 1, &err) == -1);
    CHECK(rs_input_read(&in, 4, NULL, 0, &err) == 0);       /* nothing, at the end: no buffer needed */
    CHECK(rs_input_read(&in, 5, NULL, 0, &err) == -1);      /* but an offset past the end is still wrong */
    rs_input_close(&in);

    snprintf(path, sizeof(path), "%s/missing/target", dir);
    CHECK(rs_output_open(&out, path, 0644, &err) == -1);
    rs_output_abort(&out);

    /* Small reads near either end come from a window of that end; any
     * read gives the file's bytes, and a hash over a window's range the
     * same digest as over the bytes. */
    {
        static uint8_t big[200000], got[4096];
        uint8_t want_md[32], got_md[32];
        unsigned int md_len;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        bool same = true;

        for (size_t i = 0; i < sizeof(big); i++)
            big[i] = (uint8_t)(i * 7 + i / 251);
        snprintf(path, sizeof(path), "%s/big", dir);
        CHECK(rs_write_file(path, big, sizeof(big), 0644, &err) == 0);
        CHECK(rs_input_open(&in, path, &err) == 0);
        static const struct { uint64_t off; size_t len; } reads[] = {
            { 0, 2 }, { 0, 64 }, { 199960, 40 }, { 100000, 10 }, { 65530, 20 }, { 134460, 4096 }, { 0, 4096 },
            { 199999, 1 }, { 200000, 0 }, { 60000, 4096 },
        };
        for (size_t r = 0; r < sizeof(reads) / sizeof(reads[0]); r++)
            same &= rs_input_read(&in, reads[r].off, got, reads[r].len, &err) == 0 &&
                    !memcmp(got, big + reads[r].off, reads[r].len);
        CHECK(same);
        CHECK(rs_input_read(&in, 199999, got, 2, &err) == -1 && strstr(err.msg, "truncated"));
        for (uint64_t off = 0; off < sizeof(big); off += 50000) {
            size_t len = off ? 50000 : 1000;

            CHECK(EVP_Digest(big + off, len, want_md, &md_len, EVP_sha256(), NULL));
            CHECK(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && rs_input_hash(&in, off, len, ctx, &err) == 0);
            CHECK(EVP_DigestFinal_ex(ctx, got_md, &md_len) && !memcmp(want_md, got_md, 32));
        }
        rs_input_close(&in);
        EVP_MD_CTX_free(ctx);

        CHECK(rs_input_open(&in, path, &err) == 0);   /* shrinks before its end is read */
        CHECK(truncate(path, 100000) == 0);
        CHECK(rs_input_read(&in, 0, got, 2, &err) == 0 && !memcmp(got, big, 2));
        CHECK(rs_input_read(&in, 199960, got, 40, &err) == -1 && strstr(err.msg, "shrank"));
        rs_input_close(&in);
        unlink(path);
    }

    /* Parents are made deepest first; each missing level is created, a
     * file in the way is an error, and an existing tree costs nothing. */
    snprintf(path, sizeof(path), "%s/p/q//r/file", dir);
    CHECK(rs_mkdir_parents(path, &err) == 0);
    CHECK(rs_write_new_file(path, "x", 1, 0644, &err) == 0);
    CHECK(rs_mkdir_parents(path, &err) == 0);
    snprintf(path, sizeof(path), "%s/p/q/s/", dir);   /* a trailing slash makes s itself */
    CHECK(rs_mkdir_parents(path, &err) == 0);
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(path, sizeof(path), "%s/p/q/r/file/below/x", dir);
    CHECK(rs_mkdir_parents(path, &err) == -1);
    CHECK(strstr(err.msg, "Not a directory") != NULL);
    snprintf(path, sizeof(path), "%s/p/q/t/u/file", dir);   /* made when open finds no parent */
    CHECK(rs_write_new_file(path, "y", 1, 0644, &err) == 0);
    CHECK(rs_write_new_file(path, "y", 1, 0644, &err) == -1);   /* never replaces */
    snprintf(path, sizeof(path), "rm -r '%s/p'", dir);
    CHECK(system(path) == 0);

    snprintf(path, sizeof(path), "%s/target", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/threads", dir);
    CHECK(mkdir(path, 0700) == 0);
    signal_removes_every_thread_output(path);
    rmdir(path);
    rmdir(dir);
    return harness_finish("test_output");
}
