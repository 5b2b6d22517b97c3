/* The keys Debian's Linux 6.1 trusts for module signatures under lockdown,
 * and what it revokes. mod_verify_sig (kernel/module/signing.c) verifies
 * against the secondary keyring, which links:
 * - .builtin_trusted_keys: the build's (ephemeral) key, read from the
 *   kernel image (uefi/kernel_certs.h) or given as a file;
 * - .machine (CONFIG_INTEGRITY_MACHINE_KEYRING, Debian's
 *   trust-machine-keyring-by-default.patch): MokListRT, that is MokList
 *   plus shim's vendor certificate (or vendor_db);
 * and on -ENOKEY Debian's KEYS-Make-use-of-platform-keyring-for-module-
 * signature.patch retries .platform: the db certificates (none under
 * MokIgnoreDB; security/integrity/platform_certs/load_uefi.c).
 * Revocation (load_uefi.c, blacklist.c): the SHA-256 of a module's
 * content in dbx or MokListXRT (Debian's "MODSIGN: checking the
 * blacklisted hash" patch), and certificates whose TBS hash is in dbx
 * (EFI_CERT_X509_SHA256), which never enter a keyring. dbx X509 entries
 * revoke nothing: CONFIG_SYSTEM_REVOCATION_LIST is unset. */
#ifndef RS_UEFI_KERNEL_KEYS_H
#define RS_UEFI_KERNEL_KEYS_H

#include "base/bytes.h"
#include "crypto/trust.h"

typedef enum kernel_builtin_source {
    KERNEL_BUILTIN_NONE,         /* no file, and the image is no bzImage */
    KERNEL_BUILTIN_FILE,         /* --kernel-keys */
    KERNEL_BUILTIN_IMAGE,        /* read out of the kernel image */
} kernel_builtin_source;

typedef struct kernel_keys {
    rs_trust builtin, machine, platform;
    kernel_builtin_source builtin_from;
    const char *builtin_path;    /* the file, or the image read (or not): the caller's string */
    rs_digest_list revoked_bin;  /* module content SHA-256 */
    rs_digest_list revoked_tbs;  /* certificate TBS SHA-256 */
} kernel_keys;

typedef struct kernel_sources {
    const char *builtin;         /* certificate file, or NULL */
    const char *image;           /* else the kernel image that builds them in, or NULL */
    const rs_bytes *db, *dbx, *mok, *mokx; /* ESL bytes; any may be empty */
    const uint8_t *vendor_cert;  /* shim's authorized blob, or NULL */
    size_t vendor_cert_len;
    bool ignore_db;
} kernel_sources;

int kernel_keys_load(kernel_keys *k, const kernel_sources *src, rs_error *err);
void kernel_keys_free(kernel_keys *k);

typedef struct module_verdict {
    bool ok;
    char keyring[32];            /* which keyring's key verified it */
    char detail[RS_ERROR_MAX];   /* the key, or why it was refused */
} module_verdict;

int kernel_verify_module(const char *path, const kernel_keys *k, module_verdict *v, rs_error *err);

#endif
