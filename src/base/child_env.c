#include "base/child_env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>

/* Passed on when set; everything else is dropped. */
static const char *const kept[] = { "PATH", "TMPDIR", "SOURCE_DATE_EPOCH", "HOME" };

static char *env[sizeof(kept) / sizeof(kept[0]) + 2];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build(void)
{
    size_t n = 0;

    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        const char *v = getenv(kept[i]);
        char *entry = NULL;

        if (v && asprintf(&entry, "%s=%s", kept[i], v) >= 0)
            env[n++] = entry;
    }
    if (!getenv("PATH"))
        env[n++] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
    env[n++] = (char *)"LC_ALL=C.UTF-8";
    env[n] = NULL;
}

char *const *rs_child_environ(void)
{
    pthread_once(&once, build);
    return env;
}

void rs_protect_key_memory(void)
{
    struct rlimit none = { 0, 0 };

    prctl(PR_SET_DUMPABLE, 0);
    setrlimit(RLIMIT_CORE, &none);
}
