/* The rebuild policy: sign a package only once k of the configured
 * rebuilders attested that they rebuilt exactly its bytes.
 *
 * Attestations are read from a directory the operator fills (rsync, a
 * timer), laid out one directory per rebuilder, each attestation named
 * after the .deb it vouches for plus any extension:
 *     DIR/REBUILDER/PACKAGE_VERSION_ARCH.deb.link        (an in-toto link)
 *     DIR/REBUILDER/PACKAGE_VERSION_ARCH.deb.intoto.json (a DSSE envelope)
 * the version without its epoch, as in pool file names. The name only says
 * where to look: what counts is what the attestation says, signed by one
 * of that rebuilder's keys. Rebuilders count by key material: two names
 * configured with one key are one rebuilder. */
#ifndef RS_REBUILD_POLICY_H
#define RS_REBUILD_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "attest/attest_key.h"
#include "base/error.h"

/* Attestations read for one package from one rebuilder, at most: a
 * rebuilder that rebuilt it a few times, not a directory of thousands. */
#define RS_REBUILD_MAX_FILES 16

typedef struct rs_rebuilder {
    char *name;
    rs_attest_key *keys;
    size_t nkeys;
} rs_rebuilder;

typedef struct rs_rebuild_policy {
    rs_rebuilder *rebuilders;
    size_t n;
    unsigned required;   /* k: distinct rebuilders that must vouch */
    int dir_fd;          /* the attestations directory, opened once; -1 until set */
    char *dir;
} rs_rebuild_policy;

void rs_rebuild_policy_init(rs_rebuild_policy *p);
void rs_rebuild_policy_free(rs_rebuild_policy *p);
/* Adds KEYFILE to rebuilder NAME (made on first use). */
int rs_rebuild_policy_add_key(rs_rebuild_policy *p, const char *name, const char *keyfile, rs_error *err);
/* "NAME=KEYFILE", as --rebuilder takes it. */
int rs_rebuild_policy_add_spec(rs_rebuild_policy *p, const char *spec, rs_error *err);
int rs_rebuild_policy_open_dir(rs_rebuild_policy *p, const char *dir, rs_error *err);
/* Whether the policy is complete: a directory, rebuilders, and a k no
 * larger than the distinct keys configured. */
int rs_rebuild_policy_check(const rs_rebuild_policy *p, rs_error *err);

typedef struct rs_rebuild_verdict {
    size_t vouched;        /* distinct rebuilders (by key) that vouch */
    char *who;             /* their names, ", "-separated ("" when none) */
    char *missing;         /* the rebuilders that did not vouch */
    char *disagreement;    /* NULL, or which rebuilder attests which other digest */
} rs_rebuild_verdict;

void rs_rebuild_verdict_free(rs_rebuild_verdict *v);
/* Reads every rebuilder's attestations for pool_name and judges them
 * against sha256, the digest of the .deb about to be signed from. */
int rs_rebuild_judge(const rs_rebuild_policy *p, const char *pool_name, const uint8_t sha256[32],
                     rs_rebuild_verdict *v, rs_error *err);
/* rs_rebuild_judge, then the rule: refused when a rebuilder disagrees;
 * failed when fewer than k vouch, naming who did and who is missing. */
int rs_rebuild_require(const rs_rebuild_policy *p, const char *pool_name, const uint8_t sha256[32], rs_error *err);

#endif
