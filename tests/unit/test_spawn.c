/* base/spawn.c, the one way the project runs a program: a failure names
 * the tool and the last line of its stderr; its stdout can go to a status
 * channel; it inherits the descriptors passed to it and no others. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/file.h"
#include "base/spawn.h"
#include "harness.h"

/* What fd holds, from its start. */
static void contents(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0);

    buf[n > 0 ? n : 0] = '\0';
}

static void failure_names_tool_and_last_line(void)
{
    char *argv[] = { "sh", "-c", "echo progress; echo 'first problem' >&2; echo 'the reason' >&2; exit 3", NULL };
    char *missing[] = { "reprosign-no-such-tool", NULL };
    char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
    rs_error err = { 0 };

    CHECK(rs_run_tool(argv, NULL, &err) < 0 && !strcmp(err.msg, "sh failed (exit 3): the reason"));
    CHECK(rs_run_tool(missing, NULL, &err) < 0 && strstr(err.msg, "cannot run reprosign-no-such-tool"));
    CHECK(rs_run_tool(killed, NULL, &err) < 0 && strstr(err.msg, "sh was killed by signal 15"));
}

static void runs_in_dir(void)
{
    char *argv[] = { "sh", "-c", "test \"$(pwd)\" = /", NULL };
    rs_error err = { 0 };

    CHECK(rs_run_tool(argv, "/", &err) == 0);
}

/* A status channel gets stdout alone; stderr stays in the log the error
 * quotes. A passed descriptor is readable as /dev/fd/N; another one, open
 * here close-on-exec, is not there. */
static void status_channel_and_passed_fds(void)
{
    int status = memfd_create("status", MFD_CLOEXEC), data = memfd_create("data", MFD_CLOEXEC);
    int other = memfd_create("other", MFD_CLOEXEC);
    char script[256], got[256];
    rs_error err = { 0 };

    if (status < 0 || data < 0 || other < 0 || rs_write_all(data, "signed bytes", 12) < 0)
        CHECK(!"memfds");
    snprintf(script, sizeof(script), "cat /dev/fd/%d; echo; echo noise >&2; test ! -e /dev/fd/%d", data, other);
    char *argv[] = { "sh", "-c", script, NULL };
    const int pass[] = { data };
    rs_tool_opts opts = { .stdout_fd = status, .pass_fds = pass, .n_pass_fds = 1 };

    CHECK(rs_run_tool_with(argv, &opts, &err) == 0);
    contents(status, got, sizeof(got));
    CHECK(!strcmp(got, "signed bytes\n"));
    close(status);
    close(data);
    close(other);
}

int main(void)
{
    failure_names_tool_and_last_line();
    runs_in_dir();
    status_channel_and_passed_fds();
    return harness_finish("test_spawn");
}
