/* service/gpgme_sign.c: gpg, and the gpg-agent it starts, get the
 * children's reduced environment (base/child_env.h), not the service's
 * (#46). The GnuPG home's gpg.conf names a stand-in agent program that
 * writes its environment down and then runs the real gpg-agent; the
 * service's environment carries a secret that must not reach it, and the
 * clearsigned file must verify as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/child_env.h"
#include "harness.h"
#include "service/gpgme_sign.h"

static char dir[] = "/tmp/rs-gpgme-XXXXXX";

/* The first line of a command's output, or "". */
static void first_line(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");

    out[0] = '\0';
    if (p && fgets(out, (int)len, p))
        out[strcspn(out, "\n")] = '\0';
    if (p)
        pclose(p);
}

static bool file_has(const char *path, const char *needle)
{
    char line[4096];
    bool found = false;
    FILE *f = fopen(path, "r");

    while (f && !found && fgets(line, sizeof(line), f))
        found = strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return found;
}

int main(void)
{
    char cmd[2048], agent[1024], fpr[128], path[1024];
    rs_error err;
    FILE *f;

    CHECK(mkdtemp(dir) != NULL);
    first_line("gpgconf --list-components | sed -n 's/^gpg-agent:[^:]*://p' | sed 's/%3a/:/gi'", agent,
               sizeof(agent));
    CHECK(agent[0] == '/');
    snprintf(path, sizeof(path), "%s/agent", dir);
    CHECK((f = fopen(path, "w")) != NULL);
    fprintf(f, "#!/bin/sh\nenv >>'%s/agent.env'\nexec '%s' \"$@\"\n", dir, agent);
    CHECK(fclose(f) == 0 && chmod(path, 0700) == 0);
    snprintf(path, sizeof(path), "%s/gpg.conf", dir);
    CHECK((f = fopen(path, "w")) != NULL);
    fprintf(f, "agent-program %s/agent\n", dir);
    CHECK(fclose(f) == 0);
    snprintf(cmd, sizeof(cmd),
             "gpg --homedir '%s' --batch --passphrase '' --quick-gen-key 'rs test <t@example>' ed25519 sign never "
             ">/dev/null 2>&1",
             dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof(cmd), "gpg --homedir '%s' --with-colons --list-secret-keys 2>/dev/null | sed -n 's/^fpr:*//p' | tr -d :",
             dir);
    first_line(cmd, fpr, sizeof(fpr));
    CHECK(strlen(fpr) == 40);
    /* The agent those started goes: the signing starts its own. */
    snprintf(cmd, sizeof(cmd),
             "gpgconf --homedir '%s' --kill gpg-agent && for i in $(seq 50); do "
             "gpg-connect-agent --homedir '%s' --no-autostart /bye 2>&1 | grep -q 'no gpg-agent' && exit 0; "
             "sleep 0.1; done; exit 1",
             dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof(path), "%s/agent.env", dir);
    CHECK(file_has(path, "HOME="));   /* the stand-in ran for the key generation */
    unlink(path);

    rs_child_environ();   /* built before the secret is set, as the service does at start */
    setenv("RS_TEST_SERVICE_SECRET", "do-not-pass-on", 1);
    snprintf(path, sizeof(path), "%s/file.dsc", dir);
    CHECK((f = fopen(path, "w")) != NULL && fputs("Format: 3.0 (native)\n", f) >= 0 && fclose(f) == 0);
    CHECK(rs_gpgme_clearsign(dir, fpr, path, &err) == 0);
    CHECK(file_has(path, "BEGIN PGP SIGNATURE"));
    snprintf(cmd, sizeof(cmd), "gpg --homedir '%s' --batch --verify '%s' >/dev/null 2>&1", dir, path);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof(path), "%s/agent.env", dir);
    CHECK(file_has(path, "LC_ALL=C.UTF-8"));   /* the agent ran, with the children's environment */
    CHECK(!file_has(path, "RS_TEST_SERVICE_SECRET"));
    CHECK(getenv("RS_TEST_SERVICE_SECRET") != NULL);   /* the service's own is back */

    snprintf(cmd, sizeof(cmd), "gpgconf --homedir '%s' --kill gpg-agent; rm -rf '%s'", dir, dir);
    CHECK(system(cmd) == 0);
    return harness_finish("test_gpgme_env");
}
