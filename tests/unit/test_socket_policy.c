/* service/socket_policy.c, the build-time socket's rules (docs/security.md,
 * "The socket"), with real keys and frames over a real socket:
 * - one key, one purpose: a request is signed only by its format's key,
 *   and only when it names that key's certificate;
 * - a module (whose key signs the image digest itself) is signed only from
 *   its own bytes, attached as a memfd sealed against writes, shrinking and
 *   growing, whose digest is the request's. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crypto/ossl.h"
#include "harness.h"
#include "module_test_image.h"
#include "pipeline/files_json.h"
#include "pe_test_image.h"
#include "service/proto.h"
#include "service/socket_policy.h"

static char dir[] = "/tmp/test_socket_policy.XXXXXX";
static rs_signer *signers[RS_SIG_TYPES];
static rs_socket_keys keys;
static uint8_t module_bytes[MODULE_IMAGE_SIZE];

enum attach { NONE, SEALED, UNSEALED, WRITE_SEAL_ONLY, PLAIN_FILE };

/* A descriptor holding len bytes of data, sealed as asked. */
static int image_fd(const uint8_t *data, size_t len, enum attach how)
{
    int fd;

    if (how == PLAIN_FILE) {
        char path[600];

        snprintf(path, sizeof(path), "%s/plain", dir);
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    } else
        fd = memfd_create("image", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len)
        abort();
    if (how == SEALED && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
        abort();
    if (how == WRITE_SEAL_ONLY && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) < 0)
        abort();
    return fd;
}

/* The digest of an image as its format takes it. */
static rs_digest digest_of(const uint8_t *data, size_t len)
{
    rs_image img = { .in.fd = -1 };
    rs_digest d;
    rs_error err;

    if (rs_image_open_fd(&img, image_fd(data, len, UNSEALED), "image", &err) < 0 ||
        img.format->digest(&img, EVP_sha256(), &d, &err) < 0)
        abort();
    rs_image_close(&img);
    return d;
}

/* Sends one request through a socket pair, as a client would, and has the
 * policy judge it. format: the request's; cert: the key whose certificate
 * it names; its image digest is made_for's, and `attached` goes along as
 * `how` says (both len bytes). Returns the policy's verdict, and checks
 * that a refusal signed nothing; *key is the signer chosen. */
static int send_request(const rs_format *format, rs_sig_type cert, const uint8_t *made_for, const uint8_t *attached,
                        size_t len, enum attach how, size_t *key, rs_error *err)
{
    rs_sign_options opts = { .md = EVP_sha256() };
    rs_offline_request req, got = { 0 };
    rs_digest d = digest_of(made_for, len);
    rs_frame_reader rd = { .fd = -1 };
    rs_bytes sig = { 0 };
    char *json = NULL;
    const char *msg;
    size_t n;
    bool eof;
    int sv[2], fd = how == NONE ? -1 : image_fd(attached, len, how), rc;

    if (rs_offline_prepare_digest(format, &d, signers[cert]->cert, NULL, &opts, &req, err) < 0)
        abort();
    req.image_attached = how != NONE;
    if (rs_offline_request_write_wire(&req, keys.fingerprints[cert], &json, err) < 0 ||
        socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || rs_frame_write_fd(sv[1], json, strlen(json), fd, err) < 0)
        abort();
    rd.fd = sv[0];
    if (rs_frame_next(&rd, &msg, &n, &eof, err) < 0 || eof)
        abort();
    rc = rs_socket_sign(&keys, &rd, msg, n, &got, key, &sig, err);
    CHECK(rc < 0 ? sig.len == 0 : sig.len > 0);
    if (rc == 0) {
        rs_error why;

        /* No bare digests: the key signed what the service rebuilt around
         * the image digest (for a PE image, the signed attributes), which
         * is the client's own request's to-be-signed digest. */
        CHECK(rs_offline_check_value(&got, &sig, &why) == 0 && rs_offline_check_value(&req, &sig, &why) == 0);
        CHECK(format->key_signs_image_digest == rs_digest_equal(&got.tbs, &got.image_digest));
        rs_offline_request_free(&got);
    }
    rs_bytes_free(&sig);
    rs_offline_request_free(&req);
    rs_frame_reader_free(&rd);
    free(json);
    close(sv[0]);
    close(sv[1]);
    if (fd >= 0)
        close(fd);
    return rc;
}

static int ask(const rs_format *format, rs_sig_type cert, const uint8_t *bytes, size_t len, enum attach how,
               size_t *key, rs_error *err)
{
    return send_request(format, cert, bytes, bytes, len, how, key, err);
}

static void test_one_key_one_purpose(void)
{
    image pe = base_image(BASE_SIZE);
    size_t key = 9;
    rs_error err;

    CHECK(ask(&rs_format_pe, SIG_EFI, pe.data, pe.len, NONE, &key, &err) == 0 && key == SIG_EFI);
    /* A PE request naming the module key's certificate: the efi key may
     * not sign under another's name, and the module key not a PE image. */
    key = 9;
    CHECK(ask(&rs_format_pe, SIG_LINUX_MODULE, pe.data, pe.len, NONE, &key, &err) < 0);
    CHECK(strstr(err.msg, "a key signs only its own sig_type") && key == 9);
    /* A module request naming the efi key's certificate, module attached. */
    CHECK(ask(&rs_format_module, SIG_EFI, module_bytes, sizeof(module_bytes), SEALED, &key, &err) < 0);
    CHECK(strstr(err.msg, "a key signs only its own sig_type") && key == 9);
    free(pe.data);
}

static void test_module_from_its_sealed_bytes(void)
{
    uint8_t other[MODULE_IMAGE_SIZE];
    image pe = base_image(BASE_SIZE);
    size_t key = 9;
    rs_error err;

    CHECK(ask(&rs_format_module, SIG_LINUX_MODULE, module_bytes, sizeof(module_bytes), SEALED, &key, &err) == 0);
    CHECK(key == SIG_LINUX_MODULE);
    CHECK(ask(&rs_format_module, SIG_LINUX_MODULE, module_bytes, sizeof(module_bytes), NONE, &key, &err) < 0);
    CHECK(strstr(err.msg, "is signed only from its own bytes"));
    /* Bytes that could change while they are read. */
    CHECK(ask(&rs_format_module, SIG_LINUX_MODULE, module_bytes, sizeof(module_bytes), UNSEALED, &key, &err) < 0);
    CHECK(strstr(err.msg, "not a sealed memfd"));
    CHECK(ask(&rs_format_module, SIG_LINUX_MODULE, module_bytes, sizeof(module_bytes), WRITE_SEAL_ONLY, &key, &err) < 0);
    CHECK(strstr(err.msg, "not a sealed memfd"));
    CHECK(ask(&rs_format_module, SIG_LINUX_MODULE, module_bytes, sizeof(module_bytes), PLAIN_FILE, &key, &err) < 0);
    CHECK(strstr(err.msg, "not a sealed memfd"));
    /* Another module's bytes than the digest's: a digest alone could be
     * anything's. */
    module_image(other, 0x42);
    CHECK(send_request(&rs_format_module, SIG_LINUX_MODULE, other, module_bytes, sizeof(other), SEALED, &key, &err) < 0);
    CHECK(strstr(err.msg, "digest is not the request's image_digest"));
    /* A PE image attached to a module request, and an image attached to a
     * PE request, which takes none. */
    CHECK(ask(&rs_format_module, SIG_LINUX_MODULE, pe.data, pe.len, SEALED, &key, &err) < 0);
    CHECK(ask(&rs_format_pe, SIG_EFI, pe.data, pe.len, SEALED, &key, &err) < 0 && strstr(err.msg, "takes no attached image"));
    free(pe.data);
}

int main(void)
{
    rs_error err;

    if (!mkdtemp(dir))
        return 1;
    module_image(module_bytes, 0x11);
    harness_make_key(harness_path(dir, "efi.key"), harness_path(dir, "efi.crt"));
    harness_make_key(harness_path(dir, "mod.key"), harness_path(dir, "mod.crt"));
    if (rs_signer_open(harness_path(dir, "efi.key"), harness_path(dir, "efi.crt"), &signers[SIG_EFI], &err) < 0 ||
        rs_signer_open(harness_path(dir, "mod.key"), harness_path(dir, "mod.crt"), &signers[SIG_LINUX_MODULE], &err) < 0 ||
        rs_socket_keys_init(&keys, signers, RS_SIG_TYPES, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    test_one_key_one_purpose();
    test_module_from_its_sealed_bytes();
    rs_socket_keys_free(&keys);
    for (size_t i = 0; i < RS_SIG_TYPES; i++)
        rs_signer_free(signers[i]);
    unlink(harness_path(dir, "efi.key"));
    unlink(harness_path(dir, "efi.crt"));
    unlink(harness_path(dir, "mod.key"));
    unlink(harness_path(dir, "mod.crt"));
    unlink(harness_path(dir, "plain"));
    rmdir(dir);
    return harness_finish("test_socket_policy");
}
