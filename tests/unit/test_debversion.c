/* Debian version order (service/debversion.h), with dpkg as the oracle:
 * every pair of a list of hand-picked versions and of random ones is
 * compared here, and dpkg --compare-versions must agree with the answer.
 * The service refuses a -signed version that is not newer than the last
 * it published by this order (docs/security.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "service/debversion.h"

static const char *const versions[] = {
    "0", "1", "1.0", "1.0-0", "1.0-1", "1.0-1.1", "1.0-1~bpo1", "1.0~rc1", "1.0~rc1-1", "1.0~~", "1.0~~a", "1.0~",
    "1.0+b1", "1.0.1", "1.00", "1.0a", "1.0A", "1.0.", "1.0+", "1:0", "1:1.0", "2:0.1", "0:1.0", "10", "9", "01",
    "1.0-1+deb12u1", "1.0-1+deb12u2", "1.0-1~deb12u1", "1.0-1+b1", "a", "A", "Z", "z", "1a", "1+", "1.", "1~",
    "6.1.192+3", "6.12.118+1~deb12u1", "1+16.1+2~deb12u1", "1+16.1+2~deb13u1", "1+2.06+13+deb12u2", "1:1.4+1",
    "1:1.7+1", "257.13+1~deb13u1", "1.51~1+deb12u1+16.1-2~deb12u1", "99", "2.0-1-1", "2.0-1-2", "0.0", "0.0.0",
    "4294967296", "4294967295", "00000000000000000001", "1.2.3-a", "1.2.3-A", "1.2.3-~", "1.2.3-+",
};

/* dpkg's verdict on "a REL b": true when it agrees. */
static bool dpkg_says(const char *a, const char *rel, const char *b)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        execlp("dpkg", "dpkg", "--compare-versions", a, rel, b, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
        return false;
    if (WEXITSTATUS(status) > 1) {
        fprintf(stderr, "dpkg --compare-versions '%s' %s '%s' failed\n", a, rel, b);
        return false;
    }
    return WEXITSTATUS(status) == 0;
}

#define MAX_VERSIONS 256
static char pool[MAX_VERSIONS][64];
static const char *list[MAX_VERSIONS];

static int by_order(const void *a, const void *b)
{
    rs_error err;
    int cmp = 0;

    if (rs_debversion_compare(*(const char *const *)a, *(const char *const *)b, &cmp, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        CHECK(!"a valid version refused");
    }
    return cmp;
}

/* Sorted by this order, each neighbour's relation confirmed by dpkg: as
 * dpkg's order is total, the list is then in dpkg's order, and every pair's
 * answer here must follow from the places of the two in it (n - 1 runs of
 * dpkg check all n * n answers). */
static void check_order(size_t n)
{
    static int rank[MAX_VERSIONS];

    qsort(list, n, sizeof(list[0]), by_order);
    rank[0] = 0;
    for (size_t k = 0; k + 1 < n; k++) {
        int cmp = by_order(&list[k], &list[k + 1]);
        const char *rel = cmp < 0 ? "lt" : cmp > 0 ? "gt" : "eq";

        rank[k + 1] = rank[k] + (cmp != 0);
        if (!dpkg_says(list[k], rel, list[k + 1])) {
            fprintf(stderr, "says '%s' %s '%s'; dpkg does not\n", list[k], rel, list[k + 1]);
            CHECK(!"the order is dpkg's");
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int cmp = by_order(&list[i], &list[j]), want = (rank[i] > rank[j]) - (rank[i] < rank[j]);

            if ((cmp > 0) - (cmp < 0) != want) {
                fprintf(stderr, "'%s' vs '%s': %d, but their places say %d\n", list[i], list[j], cmp, want);
                CHECK(!"the order is consistent");
            }
        }
}

/* [E:]U[-R] of random pieces, U starting with a digit as dpkg wants. */
static void random_version(char *out, size_t size)
{
    static const char alphabet[] = "0019a.+~~zZ";
    size_t n = 0;

    if (rand() % 4 == 0)
        n += (size_t)snprintf(out, size, "%d:", rand() % 3);
    out[n++] = (char)('0' + rand() % 3);
    for (int i = rand() % 6; i > 0; i--)
        out[n++] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
    if (rand() % 2) {
        out[n++] = '-';
        out[n++] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
        for (int i = rand() % 3; i > 0; i--)
            out[n++] = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
    }
    out[n] = '\0';
}

static void test_refused(void)
{
    const char *bad[] = { "", ":1", "a:1", "1:", "1.0-", "1.0 1", "1_0", "-1", "99999999999:1", "1:-1" };
    rs_error err;
    int cmp;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(rs_debversion_compare(bad[i], "1", &cmp, &err) < 0);
        CHECK(rs_debversion_compare("1", bad[i], &cmp, &err) < 0);
    }
    CHECK(rs_debversion_compare("1.0", "1:", &cmp, &err) < 0 && strstr(err.msg, "'1:'"));
}

int main(void)
{
    size_t n = 0;

    if (!dpkg_says("1", "lt", "2"))
        return harness_skip("test_debversion", "no dpkg to compare with");
    test_refused();
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
        list[n++] = versions[i];
    srand(46);
    while (n < MAX_VERSIONS) {
        random_version(pool[n], sizeof(pool[n]));
        list[n] = pool[n];
        n++;
    }
    check_order(n);
    return harness_finish("test_debversion");
}
