/* Writing a log key pair: PREFIX.key, the note signer key, readable by its
 * owner only, and PREFIX.vkey, the verifier key to publish and pin. */
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "translog/log.h"

int rs_log_keygen(const char *name, uint8_t alg, const char *prefix, rs_error *err)
{
    _cleanup_free_ char *skey = NULL, *vkey = NULL, *key_path = NULL, *vkey_path = NULL;
    int rc;

    if (asprintf(&key_path, "%s.key", prefix) < 0 || asprintf(&vkey_path, "%s.vkey", prefix) < 0)
        return rs_fail(err, "out of memory");
    if (access(key_path, F_OK) == 0 || access(vkey_path, F_OK) == 0)
        return rs_fail(err, "%s: already exists; a key is never overwritten", access(key_path, F_OK) ? vkey_path : key_path);
    if (rs_note_keygen(name, alg, &skey, &vkey, err) < 0)
        return -1;
    rc = rs_write_file(key_path, skey, strlen(skey), 0600, err);
    OPENSSL_cleanse(skey, strlen(skey));
    if (rc < 0)
        return rs_error_prefix(err, "%s", key_path);
    if (rs_write_file(vkey_path, vkey, strlen(vkey), 0644, err) < 0) {
        unlink(key_path);
        return rs_error_prefix(err, "%s", vkey_path);
    }
    return 0;
}
