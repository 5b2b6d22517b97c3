#include "harness.h"

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int harness_failures;

int harness_finish(const char *name)
{
    if (harness_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, harness_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

char *harness_path(const char *dir, const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];

    snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
    return p;
}

void harness_put(const char *dir, const char *rel, const char *content)
{
    FILE *f = fopen(harness_path(dir, rel), "w");

    if (!f || fputs(content, f) < 0 || fclose(f) != 0)
        abort();
}

void harness_mkdir(const char *dir, const char *rel)
{
    if (mkdir(harness_path(dir, rel), 0755) < 0)
        abort();
}

void harness_symlink(const char *dir, const char *target, const char *rel)
{
    if (symlink(target, harness_path(dir, rel)) < 0)
        abort();
}

int harness_skip(const char *name, const char *why)
{
    const char *all = getenv("REPROSIGN_REQUIRE_ALL");

    if (all && strcmp(all, "1") == 0) {
        fprintf(stderr, "%s: cannot run: %s (REPROSIGN_REQUIRE_ALL=1 requires every test)\n", name, why);
        return 1;
    }
    printf("SKIP: %s: %s\n", name, why);
    return 77;
}

void harness_make_key(const char *key_path, const char *cert_path)
{
    EVP_PKEY *key = EVP_RSA_gen(2048);
    X509 *cert = X509_new();
    X509_NAME *name = X509_NAME_new();
    FILE *f;

    if (!key || !cert || !name ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"test", -1, -1, 0) ||
        !X509_set_version(cert, 2) || !ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) ||
        !X509_set_subject_name(cert, name) || !X509_set_issuer_name(cert, name) ||
        !X509_gmtime_adj(X509_getm_notBefore(cert), 0) || !X509_gmtime_adj(X509_getm_notAfter(cert), 86400) ||
        !X509_set_pubkey(cert, key) || !X509_sign(cert, key, EVP_sha256()))
        abort();
    if (!(f = fopen(key_path, "w")) || fchmod(fileno(f), 0600) != 0 ||
        !PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) || fclose(f) != 0)
        abort();
    if (!(f = fopen(cert_path, "w")) || !PEM_write_X509(f, cert) || fclose(f) != 0)
        abort();
    X509_NAME_free(name);
    X509_free(cert);
    EVP_PKEY_free(key);
}
