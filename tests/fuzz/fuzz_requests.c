/* The signing service's parsers of untrusted text: dak's requests.json, a
 * repository's Release and Packages files, and the service configuration.
 * The first byte picks the parser. What each accepts is checked against
 * the rules its header promises (valid names, safe paths, absolute
 * configured paths), and every refusal must carry a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/file.h"
#include "crypto/ossl.h"
#include "fuzz_keys.h"
#include "pipeline/files_json.h"
#include "service/config.h"
#include "service/repo.h"
#include "service/repo_scan.h"
#include "service/requests.h"

#define WANT_PACKAGE "shim-unsigned"
#define WANT_VERSION "16.1-2"
#define WANT_ARCH "amd64"

static void check_message(int rc, const rs_error *err, const char *what)
{
    if (rc < 0 && !err->msg[0])
        fuzz_bug(what, "failed without a message");
}

/* "<package>_" ... "_<architecture>": the version between is escaped. */
static bool id_frames(const char *id, const char *package, const char *arch)
{
    size_t n = strlen(id), p = strlen(package), a = strlen(arch);

    return n > p + a + 1 && !strncmp(id, package, p) && id[p] == '_' && id[n - a - 1] == '_' &&
           !strcmp(id + n - a, arch);
}

/* Fields are validated before they reach a path or a database key, and
 * the id is <package>_<version>_<architecture>, the form `service
 * release` accepts. */
static void check_request(const rs_request *r)
{
    if (!rs_valid_package_name(r->package) || !rs_valid_package_name(r->source) || !rs_valid_suite(r->suite) ||
        !rs_valid_suite(r->codename) || !rs_valid_version(r->version))
        fuzz_bug("a request was accepted with an invalid field", r->id);
    if (!id_frames(r->id, r->package, r->architecture))
        fuzz_bug("a request's id is not package_version_architecture", r->id);
    if (!rs_valid_request_id(r->id))
        fuzz_bug("a request's id is not one that service release accepts", r->id);
}

static void check_requests(const char *text, size_t len)
{
    rs_request_list l;
    rs_error err = { 0 };
    int rc = rs_requests_parse(text, len, &l, &err);

    check_message(rc, &err, "rs_requests_parse");
    if (rc < 0)
        return;
    for (size_t i = 0; i < l.n; i++)
        check_request(&l.items[i]);
    rs_request_list_free(&l);
}

/* Every path a Release file vouches for is later opened under the suite. */
static void check_release(const char *text, size_t len)
{
    rs_release_file *files;
    size_t n;
    rs_error err = { 0 };
    int rc = rs_release_parse(text, len, &files, &n, &err);

    check_message(rc, &err, "rs_release_parse");
    if (rc < 0)
        return;
    for (size_t i = 0; i < n; i++)
        if (!rs_valid_relative_path(files[i].path))
            fuzz_bug("a Release file path was accepted that is not a safe relative path", files[i].path);
    rs_release_files_free(files, n);
}

/* The same text scanned from a file a paragraph at a time
 * (repo_scan.c) must give what the whole-text parser gives. */
static void compare_scan(const char *text, size_t len, int rc, bool found, const rs_repo_package *p)
{
    rs_release_file f = { .path = "main/binary-amd64/Packages", .size = len };
    int fd = memfd_create("Packages", MFD_CLOEXEC);
    rs_repo_package q;
    bool scan_found;
    rs_error err = { 0 };
    char path[64];
    int scan_rc;

    if (fd < 0 || rs_write_all(fd, text, len) < 0)
        abort();
    rs_sha256(text, len, f.sha256);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    scan_rc = rs_packages_scan(path, &f, WANT_PACKAGE, WANT_VERSION, WANT_ARCH, &q, &scan_found, &err);
    close(fd);
    check_message(scan_rc, &err, "rs_packages_scan");
    if ((scan_rc < 0) != (rc < 0))
        fuzz_bug("rs_packages_scan and rs_packages_find disagree on refusing", err.msg);
    if (scan_rc == 0 && rc == 0 && scan_found != found)
        fuzz_bug("rs_packages_scan and rs_packages_find disagree on finding", WANT_PACKAGE);
    if (scan_rc == 0 && scan_found && found && strcmp(q.filename, p->filename))
        fuzz_bug("rs_packages_scan and rs_packages_find found different stanzas", q.filename);
    if (scan_rc == 0 && scan_found)
        rs_repo_package_free(&q);
}

/* Found means exactly the package and version asked for, for the
 * architecture or "all", with a Filename that is safe to open. */
static void check_packages(const char *text, size_t len)
{
    rs_repo_package p;
    bool found;
    rs_error err = { 0 };
    int rc = rs_packages_find(text, len, WANT_PACKAGE, WANT_VERSION, WANT_ARCH, &p, &found, &err);

    check_message(rc, &err, "rs_packages_find");
    compare_scan(text, len, rc, found, &p);
    if (rc < 0 || !found)
        return;
    if (strcmp(p.package, WANT_PACKAGE) || strcmp(p.version, WANT_VERSION) ||
        (strcmp(p.architecture, WANT_ARCH) && strcmp(p.architecture, "all")))
        fuzz_bug("rs_packages_find found another package", p.package);
    if (!rs_valid_relative_path(p.filename))
        fuzz_bug("a Packages Filename was accepted that is not a safe relative path", p.filename);
    rs_repo_package_free(&p);
}

/* A configured path is absolute (the service runs from anywhere); keys
 * may also be pkcs11: URIs. NULL is an optional path left out. */
static bool absolute(const char *path, bool uri_ok)
{
    return !path || path[0] == '/' || (uri_ok && !strncmp(path, "pkcs11:", 7));
}

static void check_key(const rs_key_spec *k)
{
    if (!k->key != !k->cert || !absolute(k->key, true) || !absolute(k->cert, true))
        fuzz_bug("a key was accepted without its certificate or with a relative path", k->key);
}

static void check_config_paths(const rs_service_config *c)
{
    const char *optional[] = { c->archive_keyring, c->requests_signature, c->requests_keyring, c->allowlist,
                               c->log_dir, c->socket, c->log_key };

    if (!c->archive || !c->requests || !c->output || !absolute(c->archive, false) ||
        !absolute(c->requests, false) || !absolute(c->output, false))
        fuzz_bug("a configuration was accepted without an absolute archive, requests or output", NULL);
    for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
        if (!absolute(optional[i], false))
            fuzz_bug("a configuration was accepted with a relative path", optional[i]);
}

/* "Everything is validated when it is read" (config.h). */
static void check_config(const char *text, size_t len)
{
    rs_service_config c;
    rs_error err = { 0 };
    int rc = rs_service_config_parse(text, len, &c, &err);

    check_message(rc, &err, "rs_service_config_parse");
    if (rc < 0)
        return;
    check_config_paths(&c);
    check_key(&c.keys[0]);
    check_key(&c.keys[1]);
    if (!c.keys[0].key && !c.keys[1].key)
        fuzz_bug("a configuration was accepted with no signing key", NULL);
    if (c.poll_interval < 1 || c.poll_interval > 86400)
        fuzz_bug("a configuration was accepted with poll_interval out of range", NULL);
    if (c.socket && !c.n_uids && !c.n_gids)
        fuzz_bug("a socket was configured that nobody may use", c.socket);
    if (c.requests_keyring && !c.requests_signature)
        fuzz_bug("a requests keyring was configured with no signature to check", NULL);
    rs_service_config_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data + 1;
    size_t len = size ? size - 1 : 0;

    if (size == 0)
        return 0;
    switch (data[0] % 4) {
    case 0: check_requests(text, len); break;
    case 1: check_release(text, len); break;
    case 2: check_packages(text, len); break;
    default: check_config(text, len); break;
    }
    return 0;
}
