/* One key, one purpose (docs/security.md): the configuration refuses the
 * same key or certificate for two sig_types, or a Secure Boot key as the
 * log's, and the service, having loaded its keys, refuses two names of one
 * public key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "service/config.h"
#include "service/service.h"

static char dir[] = "/tmp/test_service_config.XXXXXX";

/* A configuration whose keys member is keys (and more members after). */
static int parse(const char *keys, const char *more, rs_error *err)
{
    char text[4096];
    rs_service_config c;
    int rc;

    snprintf(text, sizeof(text),
             "{\"archive\": \"/srv/a\", \"requests\": \"/srv/r.json\", \"output\": \"/srv/out\","
             " \"allow_unsigned_archive\": true, \"keys\": {%s}%s}",
             keys, more);
    memset(&c, 0, sizeof(c));
    rc = rs_service_config_parse(text, strlen(text), &c, err);
    if (rc == 0)
        rs_service_config_free(&c);
    return rc;
}

#define EFI(k, c) "\"efi\": {\"key\": \"" k "\", \"cert\": \"" c "\"}"
#define MOD(k, c) "\"linux-module\": {\"key\": \"" k "\", \"cert\": \"" c "\"}"

static void test_configuration(void)
{
    rs_error err;

    CHECK(parse(EFI("/k/efi.key", "/k/efi.crt") ", " MOD("/k/mod.key", "/k/mod.crt"), "", &err) == 0);
    CHECK(parse(EFI("/k/efi.key", "/k/efi.crt") ", " MOD("/k/efi.key", "/k/mod.crt"), "", &err) < 0);
    CHECK(strstr(err.msg, "efi and linux-module name the same key or certificate"));
    CHECK(parse(EFI("/k/efi.key", "/k/efi.crt") ", " MOD("/k/mod.key", "/k/efi.crt"), "", &err) < 0);
    CHECK(strstr(err.msg, "efi and linux-module name the same key or certificate"));
    CHECK(parse(EFI("pkcs11:object=a", "pkcs11:object=a") ", " MOD("pkcs11:object=a", "pkcs11:object=a"), "", &err) < 0);
    /* The log signs checkpoints: never with a Secure Boot key. */
    CHECK(parse(EFI("/k/efi.key", "/k/efi.crt"), ", \"log_key\": \"/k/log.key\"", &err) == 0);
    CHECK(parse(EFI("/k/efi.key", "/k/efi.crt"), ", \"log_key\": \"/k/efi.key\"", &err) < 0);
    CHECK(strstr(err.msg, "is a Secure Boot signing key; the log needs its own key"));
    CHECK(parse(MOD("/k/mod.key", "/k/mod.crt"), ", \"log_key\": \"/k/mod.key\"", &err) < 0);
}

/* The same key under another name, which the configuration cannot tell
 * (another path, or a token's object reached two ways): the service
 * compares the public keys once it has them. */
static void test_loaded_keys(void)
{
    char config[4096];
    rs_service *s = NULL;
    rs_error err;
    FILE *f;

    harness_make_key(harness_path(dir, "a.key"), harness_path(dir, "a.crt"));
    CHECK(system("cp \"$DIR/a.key\" \"$DIR/b.key\" && cp \"$DIR/a.crt\" \"$DIR/b.crt\"") == 0);
    harness_mkdir(dir, "out");
    snprintf(config, sizeof(config),
             "{\"archive\": \"%s\", \"requests\": \"%s/r.json\", \"output\": \"%s/out\", \"allow_unsigned_archive\": true,"
             " \"keys\": {\"efi\": {\"key\": \"%s/a.key\", \"cert\": \"%s/a.crt\"},"
             " \"linux-module\": {\"key\": \"%s/b.key\", \"cert\": \"%s/b.crt\"}}}",
             dir, dir, dir, dir, dir, dir, dir);
    if (!(f = fopen(harness_path(dir, "config.json"), "w")) || fputs(config, f) < 0 || fclose(f) != 0)
        abort();
    CHECK(rs_service_init(harness_path(dir, "state"), harness_path(dir, "config.json"), &err) == 0);
    CHECK(rs_service_open(harness_path(dir, "state"), NULL, NULL, &s, &err) == 0);
    if (s) {
        CHECK(rs_service_load_keys(s, &err) < 0 && strstr(err.msg, "the efi and linux-module keys are one key"));
        rs_service_close(s);
    }
}

int main(void)
{
    char cmd[256];

    if (!mkdtemp(dir) || setenv("DIR", dir, 1) < 0)
        return 1;
    test_configuration();
    test_loaded_keys();
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return harness_finish("test_service_config");
}
