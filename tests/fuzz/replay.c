/* Replays a fuzz target's corpus without libFuzzer. Linked with one
 * tests/fuzz/fuzz_*.c target, it feeds the target every file of the
 * directories (or the files) it is given, once each, in name order, as
 * `fuzz_pe DIR` would under libFuzzer. So the normal gcc build runs the
 * checked-in corpus (tests/fuzz/corpus/TARGET/) as a ctest test, and the
 * ASan+UBSan build runs it sanitized. A crash or a failed oracle aborts
 * as under libFuzzer; the input it was given is the last one named on
 * standard error.
 *
 * usage: TARGET_replay DIR|FILE...
 * Exit status: 0 if every input ran; 1 if a path could not be read, a
 * directory held no inputs or an input was too large (each said on one
 * line); 2 on a usage error. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fuzz inputs are small (run.sh cuts them at -max_len, 16 KiB by
 * default): a larger file in a corpus is a mistake, not a test. */
#define REPLAY_MAX_INPUT (1024 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Not every target has one: weak, so its address is NULL where it is
 * missing. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* One more byte than the limit, to tell a file at the limit from a larger one. */
static uint8_t buf[REPLAY_MAX_INPUT + 1];

static int fail(const char *path, const char *what)
{
    fprintf(stderr, "reprosign-fuzz-replay: %s: %s\n", path, what);
    return -1;
}

/* Reads path into buf as a stream, stopping one byte past the limit: its
 * size is what read() gives, not what fstat said a moment before. */
static int load(const char *path, size_t *len)
{
    struct stat st;
    size_t n = 0;
    ssize_t got = 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return fail(path, strerror(errno));
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(path, "not a regular file");
    }
    while (n < sizeof(buf) && got != 0) {
        got = read(fd, buf + n, sizeof(buf) - n);
        if (got < 0 && errno != EINTR) {
            int e = errno;

            close(fd);
            return fail(path, strerror(e));
        }
        if (got > 0)
            n += (size_t)got;
    }
    close(fd);
    if (n > REPLAY_MAX_INPUT)
        return fail(path, "larger than 1 MiB: not a fuzz input (keep corpus files small)");
    *len = n;
    return 0;
}

static int run_file(const char *path)
{
    uint8_t *copy;
    size_t len = 0;   /* gcc -Os cannot see that load() sets it */

    if (load(path, &len) < 0)
        return -1;
    /* A copy of exactly the input's size, as libFuzzer passes it: a read
     * one byte past the end is then ASan's to catch, not buf's slack. */
    if (!(copy = malloc(len ? len : 1)))
        return fail(path, "out of memory");
    memcpy(copy, buf, len);
    fprintf(stderr, "reprosign-fuzz-replay: %s (%zu bytes)\n", path, len);
    (void)LLVMFuzzerTestOneInput(copy, len);
    free(copy);
    return 0;
}

static int not_dot(const struct dirent *d)
{
    return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

/* Every entry of dir, in name order so that runs are alike; *count gets
 * the number that ran. An empty directory fails: every target keeps a
 * corpus, and an empty one would test nothing while passing. */
static int run_dir(const char *dir, size_t *count)
{
    struct dirent **names;
    int n = scandir(dir, &names, not_dot, alphasort), rc = 0;

    if (n < 0)
        return fail(dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        char *path;

        if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0) {
            rc = fail(dir, "out of memory");
        } else {
            if (run_file(path) < 0)
                rc = -1;
            else
                (*count)++;
            free(path);
        }
        free(names[i]);
    }
    free(names);
    if (n == 0)
        rc = fail(dir, "no inputs in the corpus directory");
    return rc;
}

int main(int argc, char **argv)
{
    /* Kept: LLVMFuzzerInitialize may change what it is given. */
    int nargs = argc;
    char **args = argv;
    size_t count = 0;
    int rc = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize)
        (void)LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < nargs; i++) {
        struct stat st;

        if (stat(args[i], &st) < 0)
            rc |= fail(args[i], strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc |= run_dir(args[i], &count);
        else if (run_file(args[i]) < 0)
            rc = -1;
        else
            count++;
    }
    if (rc)
        return 1;
    printf("reprosign-fuzz-replay: %zu inputs replayed\n", count);
    return 0;
}
