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

int main(void)
{
    char dir[] = "/tmp/rs-test-lock-XXXXXX", path[256];
    int report[2], fd = -1, again = -1;
    pid_t holder_pid, child = -1;
    rs_error err;
    bool busy;

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/lock", dir);
    CHECK(pipe(report) == 0);

    holder_pid = fork();
    if (holder_pid == 0)
        holder(path, report[1]);
    CHECK(read(report[0], &child, sizeof(child)) == sizeof(child));

    CHECK(rs_lock_file(path, &fd, &busy, &err) == -1 && busy && fd == -1);
    CHECK(strstr(err.msg, "locked by another process") != NULL);

    kill(holder_pid, SIGKILL);
    CHECK(waitpid(holder_pid, NULL, 0) == holder_pid);
    CHECK(child > 0 && kill(child, 0) == 0);              /* still alive, descriptor and all */
    CHECK(rs_lock_file(path, &fd, &busy, &err) == 0 && !busy);

    /* Released by closing, too. */
    close(fd);
    CHECK(rs_lock_file(path, &again, &busy, &err) == 0);
    close(again);

    /* Not a lock file we can create: an error, not "busy". */
    CHECK(rs_lock_file("/nonexistent-dir/lock", &fd, &busy, &err) == -1 && !busy);

    if (child > 0)
        kill(child, SIGKILL);
    unlink(path);
    rmdir(dir);
    return harness_finish("test_lock");
}
