/* What one round trip over a unix socket costs on this machine, the
 * part of a socket signature no code of ours can shorten: two processes
 * pass one byte back and forth, first on the same core, then on two
 * cores, then on two cores that are busy with other work, as they are
 * while the service signs for many clients.
 *   bench_roundtrip [ROUND-TRIPS] */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

static pid_t spawn_spinner(int cpu)
{
    pid_t pid = fork();

    if (pid == 0) {
        if (pin(cpu) < 0 || nice(19) < 0)
            _exit(1);
        for (;;)
            ;
    }
    return pid;
}

/* Microseconds per round trip, or a negative value on failure. */
static double round_trips(int cpu_a, int cpu_b, long n)
{
    struct timespec t0, t1;
    int sv[2], status;
    char byte = 0;
    pid_t echo;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || (echo = fork()) < 0)
        return -1;
    if (echo == 0) {
        close(sv[0]);
        if (pin(cpu_b) < 0)
            _exit(1);
        for (long i = 0; i < n; i++)
            if (read(sv[1], &byte, 1) != 1 || write(sv[1], &byte, 1) != 1)
                _exit(1);
        _exit(0);
    }
    close(sv[1]);
    if (pin(cpu_a) < 0)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++)
        if (write(sv[0], &byte, 1) != 1 || read(sv[0], &byte, 1) != 1)
            break;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(sv[0]);
    if (waitpid(echo, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n / 1e3;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    double same, across, busy;
    pid_t spinners[2];

    if (n < 1 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "usage: %s [ROUND-TRIPS]   (needs 2 cores)\n", argv[0]);
        return 2;
    }
    same = round_trips(0, 0, n);
    across = round_trips(0, 1, n);
    spinners[0] = spawn_spinner(0);
    spinners[1] = spawn_spinner(1);
    busy = spinners[0] > 0 && spinners[1] > 0 ? round_trips(0, 1, n) : -1;
    for (int i = 0; i < 2; i++)
        if (spinners[i] > 0) {
            kill(spinners[i], SIGKILL);
            waitpid(spinners[i], NULL, 0);
        }
    if (same < 0 || across < 0 || busy < 0) {
        fprintf(stderr, "bench_roundtrip: a round trip failed\n");
        return 1;
    }
    printf("unix-socket round trip between two processes: %.1f us on one core, %.1f us across two idle "
           "cores, %.1f us across two busy cores\n",
           same, across, busy);
    return 0;
}
