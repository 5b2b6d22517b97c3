/* Signed notes (c2sp.org/signed-note) with Ed25519 keys, and witness
 * cosignatures (c2sp.org/tlog-cosignature, cosignature/v1), as Go's
 * golang.org/x/mod/sumdb/note reads and writes them:
 *
 *   text, ending in a newline
 *   (blank line)
 *   — <key name> base64(<4-byte key hash> <signature>)
 *   ...
 *
 * A key's hash is the first 4 bytes of SHA-256(name "\n" alg pubkey), alg
 * being 0x01 for a note signer and 0x04 for a cosigner, so a log key can
 * never stand in for a witness key or the other way round. */
#ifndef RS_NOTE_H
#define RS_NOTE_H

#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define RS_NOTE_ALG_ED25519 0x01
#define RS_NOTE_ALG_COSIGNATURE 0x04

/* Limits on untrusted notes: a checkpoint is a few lines; 100 signatures
 * (Go's own limit) leaves room for any witness set; a name is a host name
 * and a path. */
#define RS_NOTE_MAX_SIZE (64 * 1024)
#define RS_NOTE_MAX_SIGS 100
#define RS_NOTE_MAX_NAME 256

typedef struct rs_note_key {
    char *name;
    uint32_t hash;
    uint8_t alg;
    bool private;
    EVP_PKEY *pkey;
} rs_note_key;

void rs_note_key_free(rs_note_key *k);
/* "<name>+<hash>+<base64(alg pubkey)>" */
int rs_note_vkey_parse(const char *text, rs_note_key *out, rs_error *err);
/* "PRIVATE+KEY+<name>+<hash>+<base64(alg seed)>" */
int rs_note_skey_parse(const char *text, rs_note_key *out, rs_error *err);
/* Reads a key file of one line: a verifier key (.vkey) or a signer key
 * (PRIVATE+KEY+...). Errors name path. */
int rs_note_vkey_load(const char *path, rs_note_key *out, rs_error *err);
int rs_note_skey_load(const char *path, rs_note_key *out, rs_error *err);
/* A fresh Ed25519 key: both encodings, each with a final newline. */
int rs_note_keygen(const char *name, uint8_t alg, char **skey, char **vkey, rs_error *err);
bool rs_note_name_valid(const char *name, size_t len);

typedef struct rs_note_sig {
    char *name;
    uint32_t hash;
    uint8_t *sig;   /* without the key hash */
    size_t sig_len;
} rs_note_sig;

typedef struct rs_note {
    char *text;       /* the signed text, NUL-terminated */
    size_t text_len;
    rs_note_sig *sigs;
    size_t n_sigs;
} rs_note;

void rs_note_free(rs_note *n);
int rs_note_parse(const char *msg, size_t len, rs_note *out, rs_error *err);
/* text followed by the signature line of k (a note signer). */
int rs_note_sign(const rs_note_key *k, const char *text, char **out, rs_error *err);
/* The signature line of cosigner k over a checkpoint's text at time t. */
int rs_note_cosign_line(const rs_note_key *k, const char *text, uint64_t t, char **line, rs_error *err);
/* Whether n carries a valid signature by k (a note signer or, with *time
 * set from it, a cosigner). A signature by k's name and hash that does
 * not verify is an error, not an absence. */
int rs_note_check(const rs_note *n, const rs_note_key *k, bool *found, uint64_t *time, rs_error *err);

#endif
