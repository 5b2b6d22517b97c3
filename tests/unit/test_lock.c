/* The service's state lock: a second process is refused while the holder
 * lives, and the lock is free the moment the holder dies, even while a
 * child it forked still has a copy of the descriptor (as posix_spawn's
 * child has until it execs). With flock() that child would keep it held. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"

/* Takes the lock, forks a child that keeps the descriptor without exec,
 * reports the child's pid on `report`, and waits to be killed. */
static void holder(const char *path, int report)
{
    rs_error err;
    bool busy;
    pid_t child;
    int fd;

    if (rs_lock_file(path, &fd, &busy, &err) < 0)
        _exit(1);
    child = fork();
    if (child == 0) {
        sleep(60);
        _exit(0);
    }
    if (write(report, &child, sizeof(child)) != sizeof(child))
        _exit(1);
    for (;;)
        pause();
}

/* 0 if another process can take the lock on path now, 1 if it is held. */
static int held_elsewhere(const char *path)
{
    pid_t pid = fork();
    int status;

    if (pid == 0) {
        rs_error err;
        bool busy;
        int fd;

        _exit(rs_lock_file(path, &fd, &busy, &err) == 0 ? 0 : busy ? 1 : 2);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

int main(void)
{
    char dir[] = "/tmp/rs-test-lock-XXXXXX", path[256];
    int report[2], fd = -1;
    pid_t holder_pid, child = -1;
    rs_error err;
    bool busy;

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/lock", dir);
    CHECK(pipe(report) == 0);

    holder_pid = fork();
    if (holder_pid == 0)
        holder(path, report[1]);
    if (holder_pid < 0 || read(report[0], &child, sizeof(child)) != sizeof(child) || child <= 0) {
        CHECK(!"the holder took the lock and forked");
        return harness_finish("test_lock");
    }

    CHECK(rs_lock_file(path, &fd, &busy, &err) == -1 && busy && fd == -1);
    CHECK(strstr(err.msg, "locked by another process") != NULL);

    kill(holder_pid, SIGKILL);
    CHECK(waitpid(holder_pid, NULL, 0) == holder_pid);
    CHECK(kill(child, 0) == 0);                           /* still alive, descriptor and all */
    CHECK(rs_lock_file(path, &fd, &busy, &err) == 0 && !busy);

    /* Held against other processes until closed, then free. */
    CHECK(held_elsewhere(path) == 1);
    close(fd);
    CHECK(held_elsewhere(path) == 0);

    /* Not a lock file we can create: an error, not "busy". */
    CHECK(rs_lock_file("/nonexistent-dir/lock", &fd, &busy, &err) == -1 && !busy);

    kill(child, SIGKILL);
    unlink(path);
    rmdir(dir);
    return harness_finish("test_lock");
}
