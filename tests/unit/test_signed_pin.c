/* What a template's -signed source may be named and build
 * (service/signed_pin.h): Debian's naming, as each of its templates
 * follows it (their names are copied here, so this runs without them),
 * and the configuration's "signed_sources" for anything else. With
 * FIXTURES set, every real template .deb under it is loaded and checked
 * too. docs/security.md, "The upload". */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"
#include "service/signed_pin.h"

static char dir[] = "/tmp/test_signed_pin.XXXXXX";

/* A template PACKAGE of SOURCE naming the unsigned packages in `unsigned_`
 * (space-separated), whose debian/control is of source SIGNED and builds
 * the binaries in `binaries`; checked against the pins in config (JSON). */
static int check(const char *package, const char *source, const char *unsigned_, const char *signed_,
                 const char *binaries, const char *config, rs_error *err)
{
    char control[8192], names[1024], *save = NULL;
    rs_sign_package pkgs[8];
    rs_template t = { 0 };
    rs_signed_pins p = { 0 };
    json_t *doc = json_loads(config ? config : "{}", 0, NULL);
    size_t n = 0, used;
    int rc;

    used = (size_t)snprintf(control, sizeof(control), "Source: %s\nBuild-Depends: debhelper\n", signed_);
    snprintf(names, sizeof(names), "%s", binaries);
    for (char *b = strtok_r(names, " ", &save); b; b = strtok_r(NULL, " ", &save))
        used += (size_t)snprintf(control + used, sizeof(control) - used, "\nPackage: %s\nArchitecture: amd64\n", b);
    harness_put(dir, "src/debian/control", control);
    snprintf(names, sizeof(names), "%s", unsigned_);
    memset(pkgs, 0, sizeof(pkgs));
    for (char *u = strtok_r(names, " ", &save); u && n < 8; u = strtok_r(NULL, " ", &save))
        pkgs[n++].name = u;
    t.files.packages = pkgs, t.files.n_packages = n;
    t.package = (char *)package, t.source = (char *)source, t.source_name = (char *)signed_;
    t.source_dir = harness_path(dir, "src");
    CHECK(rs_signed_pins_parse(doc, &p, err) == 0);
    rc = rs_signed_pins_check(&p, &t, err);
    rs_signed_pins_free(&p);
    json_decref(doc);
    return rc;
}

#define K61 "linux-image-6.1.0-57-amd64-unsigned linux-image-6.1.0-57-cloud-amd64-unsigned " \
            "linux-image-6.1.0-57-rt-amd64-unsigned"
#define K612 "linux-image-6.12.118+deb12-amd64-unsigned linux-image-6.12.118+deb12-cloud-amd64-unsigned"

/* Debian's own templates (bookworm and trixie, 2026), as they are. */
static void test_debian(void)
{
    rs_error err;

    CHECK(check("shim-helpers-amd64-signed-template", "shim", "shim-unsigned", "shim-helpers-amd64-signed",
                "shim-helpers-amd64-signed", NULL, &err) == 0);
    CHECK(check("grub-efi-amd64-signed-template", "grub2", "grub-efi-amd64-bin", "grub-efi-amd64-signed",
                "grub-efi-amd64-signed", NULL, &err) == 0);
    CHECK(check("fwupd-amd64-signed-template", "fwupd-efi", "fwupd-unsigned", "fwupd-amd64-signed",
                "fwupd-amd64-signed", NULL, &err) == 0);
    CHECK(check("systemd-boot-efi-arm64-signed-template", "systemd", "systemd-boot-efi",
                "systemd-boot-efi-arm64-signed", "systemd-boot-efi-arm64-signed", NULL, &err) == 0);
    CHECK(check("linux-image-amd64-signed-template", "linux", K61, "linux-signed-amd64",
                "kernel-image-6.1.0-57-amd64-di nic-modules-6.1.0-57-amd64-di linux-image-6.1.0-57-amd64 "
                "linux-image-amd64 linux-headers-amd64 linux-image-6.1.0-57-cloud-amd64 linux-image-cloud-amd64 "
                "linux-headers-cloud-amd64 linux-image-6.1.0-57-rt-amd64 linux-image-rt-amd64 linux-headers-rt-amd64",
                NULL, &err) == 0);
    CHECK(check("linux-image-6.12-amd64-signed-template", "linux-6.12", K612, "linux-signed-6.12-amd64",
                "linux-headers-6.12-amd64 linux-headers-6.12-cloud-amd64 linux-image-6.12-amd64 "
                "linux-image-6.12-cloud-amd64 linux-image-6.12.118+deb12-amd64 linux-image-6.12.118+deb12-cloud-amd64 "
                "ata-modules-6.12.118+deb12-amd64-di kernel-image-6.12.118+deb12-amd64-di",
                NULL, &err) == 0);
}

/* Issue #46: the template chooses what the upload key uploads. */
static void test_refused(void)
{
    rs_error err;

    CHECK(check("shim-helpers-amd64-signed-template", "shim", "shim-unsigned", "linux-signed-amd64",
                "linux-signed-amd64", NULL, &err) < 0);
    CHECK(strstr(err.msg, "template shim-helpers-amd64-signed-template (source shim): its "
                          "source-template/debian/changelog names the -signed source linux-signed-amd64: refused, "
                          "as Debian's naming gives only shim-helpers-amd64-signed, and \"signed_sources\".\"shim\""
                          ".\"sources\" does not list it"));
    CHECK(check("shim-helpers-amd64-signed-template", "shim", "shim-unsigned", "shim-helpers-amd64-signed",
                "shim-helpers-amd64-signed linux-image-amd64", NULL, &err) < 0);
    CHECK(strstr(err.msg, "builds the binary package linux-image-amd64: refused, as it is not the -signed source's "
                          "own name shim-helpers-amd64-signed, and \"signed_sources\".\"shim\".\"binaries\""));
    /* The kernel's names belong to the kernel's sources only, each its own. */
    CHECK(check("linux-image-amd64-signed-template", "shim", K61, "linux-signed-amd64", "linux-signed-amd64",
                NULL, &err) < 0);
    CHECK(check("linux-image-amd64-signed-template", "linux-6.12", K61, "linux-signed-amd64", "linux-signed-amd64",
                NULL, &err) < 0);
    CHECK(check("linux-image-amd64-signed-template", "linux-wlan-ng", K61, "linux-signed-amd64",
                "linux-signed-amd64", NULL, &err) < 0);
    CHECK(check("linux-image-wlan-ng-amd64-signed-template", "linux-wlan-ng", "", "linux-signed-wlan-ng-amd64",
                "linux-signed-wlan-ng-amd64", NULL, &err) == 0);
    CHECK(check("linux-image-6.12-signed-template", "linux-6.12", K612, "linux-signed-6.12", "linux-signed-6.12",
                NULL, &err) < 0);
    CHECK(check("linux-image-amd64-signed-template", "linux", K61, "linux-signed-amd64",
                "linux-image-6.1.0-57-amd64 shim-signed", NULL, &err) < 0);
    CHECK(strstr(err.msg, "shim-signed: refused") && strstr(err.msg, "nor a kernel package"));
    CHECK(check("linux-image-amd64-signed-template", "linux", K61, "linux-signed-amd64", "linux-image-6.1.0-58-amd64",
                NULL, &err) < 0);
    CHECK(check("linux-image-amd64-signed-template", "linux", K61, "linux-signed-amd64", "linux-image-6.12-amd64",
                NULL, &err) < 0);
    CHECK(check("linux-image-amd64-signed-template", "linux", K61, "linux-signed-amd64", "6.1.0-57-amd64-di",
                NULL, &err) < 0);
    /* A name without -template derives nothing. */
    CHECK(check("hello", "hello", "hello-unsigned", "hello-signed", "hello-signed", NULL, &err) < 0);
    CHECK(strstr(err.msg, "gives none (its name does not end in -template)"));
    CHECK(check("hello-signed-template", "hello", "hello-unsigned", "hello-signed", "hello-signed", NULL, &err) == 0);
}

static void test_listed(void)
{
    const char *shim = "{\"signed_sources\": {\"shim\": {\"sources\": [\"shim-signed\"], \"binaries\": "
                       "[\"shim-signed\", \"shim-signed-common\"]}}}";
    rs_error err;

    CHECK(check("shim-signed-template", "shim", "shim-unsigned", "shim-signed", "shim-signed shim-signed-common", shim,
                &err) == 0);
    CHECK(check("shim-helpers-amd64-signed-template", "shim", "shim-unsigned", "shim-signed", "shim-signed", shim,
                &err) == 0);
    /* Listed for another source: refused. */
    CHECK(check("grub-efi-amd64-signed-template", "grub2", "grub-efi-amd64-bin", "shim-signed", "shim-signed", shim,
                &err) < 0);
    CHECK(check("shim-signed-template", "shim", "shim-unsigned", "shim-signed", "shim-signed shim-other", shim,
                &err) < 0);
}

static void test_config(void)
{
    const char *bad[] = {
        "{\"signed_sources\": []}",
        "{\"signed_sources\": {\"Shim\": {}}}",
        "{\"signed_sources\": {\"shim\": []}}",
        "{\"signed_sources\": {\"shim\": {\"source\": [\"x\"]}}}",
        "{\"signed_sources\": {\"shim\": {\"sources\": \"x\"}}}",
        "{\"signed_sources\": {\"shim\": {\"binaries\": [\"../x\"]}}}",
    };
    rs_signed_pins p;
    rs_error err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *doc = json_loads(bad[i], 0, NULL);

        CHECK(doc && rs_signed_pins_parse(doc, &p, &err) < 0);
        CHECK(strstr(err.msg, "\"signed_sources\""));
        rs_signed_pins_free(&p);
        json_decref(doc);
    }
}

/* Every real template under FIXTURES passes with no configuration. */
static void test_fixtures(void)
{
    const char *fixtures = getenv("FIXTURES");
    char pattern[4096];
    glob_t g = { 0 };
    rs_signed_pins none = { 0 };

    if (!fixtures) {
        printf("test_signed_pin: no FIXTURES: Debian's own template packages are not loaded\n");
        return;
    }
    snprintf(pattern, sizeof(pattern), "%s/*/*-signed-template_*.deb", fixtures);
    glob(pattern, 0, NULL, &g);
    snprintf(pattern, sizeof(pattern), "%s/*/debs/*-signed-template_*.deb", fixtures);
    glob(pattern, GLOB_APPEND, NULL, &g);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char work[64];
        rs_template t;
        rs_error err;

        snprintf(work, sizeof(work), "%s/w%zu", dir, i);
        harness_mkdir(dir, work + strlen(dir) + 1);
        if (rs_template_load(g.gl_pathv[i], work, NULL, &t, &err) < 0 || rs_signed_pins_check(&none, &t, &err) < 0) {
            fprintf(stderr, "%s: %s\n", g.gl_pathv[i], err.msg);
            CHECK(!"a real template passes Debian's naming");
        }
        rs_template_free(&t);
    }
    printf("test_signed_pin: %zu of Debian's template packages checked\n", g.gl_pathc);
    globfree(&g);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    harness_mkdir(dir, "src");
    harness_mkdir(dir, "src/debian");
    test_debian();
    test_refused();
    test_listed();
    test_config();
    test_fixtures();
    rs_remove_tree(dir);
    return harness_finish("test_signed_pin");
}
