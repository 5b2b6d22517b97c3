#include "base/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/child_env.h"
#include "base/cleanup.h"

/* The tail of the captured output: a tool's last line says why it failed. */
static void last_line(int log, char *tail, size_t size)
{
    off_t end = lseek(log, 0, SEEK_END);
    off_t from = end > (off_t)size - 1 ? end - (off_t)size + 1 : 0;
    ssize_t got = pread(log, tail, size - 1, from);
    char *nl;

    tail[got > 0 ? got : 0] = '\0';
    while ((nl = strrchr(tail, '\n')) && nl[1] == '\0')
        *nl = '\0';
    if ((nl = strrchr(tail, '\n')))
        memmove(tail, nl + 1, strlen(nl + 1) + 1);
}

/* A dup2 onto itself clears close-on-exec in the child only (POSIX 2018,
 * glibc 2.29). */
static void plan_fds(posix_spawn_file_actions_t *fa, int log, const rs_tool_opts *opts)
{
    posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(fa, opts->stdout_fd >= 0 ? opts->stdout_fd : log, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(fa, log, STDERR_FILENO);
    for (size_t i = 0; i < opts->n_pass_fds; i++)
        posix_spawn_file_actions_adddup2(fa, opts->pass_fds[i], opts->pass_fds[i]);
    if (opts->dir)
        posix_spawn_file_actions_addchdir_np(fa, opts->dir);
}

static int wait_for(pid_t pid, int *status, rs_error *err)
{
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return rs_fail(err, "waitpid: %s", strerror(errno));
    return 0;
}

int rs_run_tool_with(char *const argv[], const rs_tool_opts *opts, rs_error *err)
{
    _cleanup_close_ int log = memfd_create("tool-log", MFD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    char tail[512] = "";
    pid_t pid;
    int status, rc;

    if (log < 0)
        return rs_fail(err, "memfd_create: %s", strerror(errno));
    posix_spawn_file_actions_init(&fa);
    plan_fds(&fa, log, opts);
    rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, rs_child_environ());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return rs_fail(err, "cannot run %s: %s", argv[0], strerror(rc));
    if (wait_for(pid, &status, err) < 0)
        return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    last_line(log, tail, sizeof(tail));
    if (WIFSIGNALED(status))
        return rs_fail(err, "%s was killed by signal %d", argv[0], WTERMSIG(status));
    /* Where posix_spawn cannot report a failed exec (under valgrind, which
     * forks where glibc would vfork), the child exits 127 without a word,
     * as a shell does for a command it cannot run. */
    if (WEXITSTATUS(status) == 127 && !tail[0])
        return rs_fail(err, "cannot run %s (exit 127, nothing on stderr)", argv[0]);
    return rs_fail(err, "%s failed (exit %d): %s", argv[0], WEXITSTATUS(status), tail);
}

int rs_run_tool(char *const argv[], const char *dir, rs_error *err)
{
    rs_tool_opts opts = { .dir = dir, .stdout_fd = -1 };

    return rs_run_tool_with(argv, &opts, err);
}
