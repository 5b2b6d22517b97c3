/* `log migrate`: the former JSONL log (translog/jsonl.h) into a tile log,
 * keeping every entry's bytes, so every leaf hash and every root ever
 * published stays valid; each old signed head becomes one checkpoint,
 * and its root is checked to come out the same. */
#ifndef RS_MIGRATE_H
#define RS_MIGRATE_H

#include <stdint.h>

#include "base/error.h"

int rs_log_migrate(const char *old_dir, const char *cert_path, const char *new_dir, const char *key_path,
                   uint64_t *entries, uint64_t *heads, rs_error *err);

#endif
