/* A throwaway ECDSA P-256 signer shared by the fuzz targets and by
 * make-seeds.sh (which extracts the PEM from this file), so seed
 * signatures chain to the fuzzers' trust store and the "verified" paths
 * are reachable. Test material only: the key is public by design. */
#ifndef RS_FUZZ_KEYS_H
#define RS_FUZZ_KEYS_H

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crypto/signer.h"
#include "crypto/trust.h"
#include "formats/format.h"

static const char fuzz_key_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6WuEKu4crTy0Gn6m\n"
    "8U7hOwdlBtJXVdeo0Ocf8AEspB6hRANCAAQz1za8m5WMSOhL19Qb+fJoKQbof/xo\n"
    "w5Qw1wh1pUEtfU26/F8ddsWOcMyTRxGw89MucHJ+3my+BWLQe5cbOtCb\n"
    "-----END PRIVATE KEY-----\n";

static const char fuzz_cert_pem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBvDCCAWGgAwIBAgIUWZin/o0zVyQxnLWB7i4NUTMYUFEwCgYIKoZIzj0EAwIw\n"
    "MjEwMC4GA1UEAwwncmVwcm9zaWduIGZ1enogdGVzdCBzaWduZXIgKG5vdCBzZWNy\n"
    "ZXQpMCAXDTI2MTIwMzA2MjY1NFoYDzIxMjYxMTA5MDYyNjU0WjAyMTAwLgYDVQQD\n"
    "DCdyZXByb3NpZ24gZnV6eiB0ZXN0IHNpZ25lciAobm90IHNlY3JldCkwWTATBgcq\n"
    "hkjOPQIBBggqhkjOPQMBBwNCAAQz1za8m5WMSOhL19Qb+fJoKQbof/xow5Qw1wh1\n"
    "pUEtfU26/F8ddsWOcMyTRxGw89MucHJ+3my+BWLQe5cbOtCbo1MwUTAdBgNVHQ4E\n"
    "FgQUvRCv5Bm2N9s9dMhdHRa3h9qjRDEwHwYDVR0jBBgwFoAUvRCv5Bm2N9s9dMhd\n"
    "HRa3h9qjRDEwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEA/R+O\n"
    "vA0iBxBvwZCZk9xWF5JqyIwTZC5BF0NkrPIoOSsCIQDivZUvov3cng12pZVjqwhK\n"
    "zUwvMys3XOpobSFRQnV7mg==\n"
    "-----END CERTIFICATE-----\n";

/* A second signer's certificate, for the module key of the socket's
 * policy (fuzz_frames): one key, one purpose needs two keys. Its private
 * key is not needed: the fuzzer's keys only record what they are asked. */
static const char fuzz_module_cert_pem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBvzCCAWWgAwIBAgIUEg2HVCg6E0LoTqiYku+Qvlw3OCAwCgYIKoZIzj0EAwIw\n"
    "NDEyMDAGA1UEAwwpcmVwcm9zaWduIGZ1enogbW9kdWxlIHNpZ25lciAobm90IHNl\n"
    "Y3JldCkwIBcNMjYxMjA0MTM1NTExWhgPMjEyNjExMTAxMzU1MTFaMDQxMjAwBgNV\n"
    "BAMMKXJlcHJvc2lnbiBmdXp6IG1vZHVsZSBzaWduZXIgKG5vdCBzZWNyZXQpMFkw\n"
    "EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZuSr4+7ToToObGG8CDxWWqCEWjJZo3pT\n"
    "0yvEF1cfBDjY7q5pGJTB8sUndGOXH6OqKtXAEFmssTTFci5iEiG6R6NTMFEwHQYD\n"
    "VR0OBBYEFCjAUPOWW/NLQjGJU5Mo3p8dvgnfMB8GA1UdIwQYMBaAFCjAUPOWW/NL\n"
    "QjGJU5Mo3p8dvgnfMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIh\n"
    "APwLqxzIPIwcLJ8rEinHw6T4OXgv7e9btgpkSCrPYvHJAiBPUhmVuqfnkp/JgQcM\n"
    "de8/6uuWLgNtdWR6QRmnDeCOvw==\n"
    "-----END CERTIFICATE-----\n";

/* The harness has no way to report set-up failures but to stop. */
static inline void fuzz_die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz set-up: %s: %s\n", what, detail ? detail : "");
    abort();
}

static inline X509 *fuzz_cert_from(const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *cert = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;

    BIO_free(bio);
    if (!cert)
        fuzz_die("cannot parse the embedded certificate", NULL);
    return cert;
}

static inline X509 *fuzz_test_cert(void)
{
    return fuzz_cert_from(fuzz_cert_pem);
}

/* An anonymous in-memory regular file, reachable by path through
 * /proc/self/fd, so the library's path-based API can read fuzz input
 * without touching the disk. */
static inline int fuzz_memfd(const char *name, char *path, size_t pathlen)
{
    int fd = memfd_create(name, MFD_CLOEXEC);

    if (fd < 0)
        fuzz_die("memfd_create", name);
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

static inline void fuzz_memfd_fill(int fd, const void *data, size_t len)
{
    if (ftruncate(fd, 0) < 0 || (len && pwrite(fd, data, len, 0) != (ssize_t)len))
        fuzz_die("cannot fill memfd", NULL);
}

/* Rewrites an image into the memfd `fd`, from its start. */
static inline int fuzz_rewrite(rs_image *img, const rs_edit *edit, int fd, rs_error *err)
{
    rs_output out = { .fd = fd };

    fuzz_memfd_fill(fd, NULL, 0);
    if (lseek(fd, 0, SEEK_SET) < 0)
        fuzz_die("lseek", NULL);
    return img->format->write(img, edit, &out, err);
}

/* An oracle failed: a real bug, not an input the parser refused. */
static inline void fuzz_bug(const char *what, const char *detail)
{
    fprintf(stderr, "BUG: %s: %s\n", what, detail ? detail : "");
    abort();
}

/* The test signer, and two trusts: none, and the test certificate. */
static inline void fuzz_open_test_signer(rs_trust *no_anchors, rs_trust *one_anchor, rs_signer **signer)
{
    char key_path[64], cert_path[64];
    rs_error err;
    int key_fd = fuzz_memfd("fuzz-key", key_path, sizeof(key_path));
    int cert_fd = fuzz_memfd("fuzz-cert", cert_path, sizeof(cert_path));

    fuzz_memfd_fill(key_fd, fuzz_key_pem, strlen(fuzz_key_pem));
    fuzz_memfd_fill(cert_fd, fuzz_cert_pem, strlen(fuzz_cert_pem));
    if (rs_trust_init(no_anchors, &err) < 0 || rs_trust_init(one_anchor, &err) < 0 ||
        rs_trust_add_file(one_anchor, cert_path, &err) < 0 || rs_signer_open(key_path, cert_path, signer, &err) < 0)
        fuzz_die("trust/signer", err.msg);
}

#endif
