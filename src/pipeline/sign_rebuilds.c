#include "pipeline/sign_rebuilds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

char *rs_pool_name(const rs_pkgtree *t)
{
    const char *version = t->version, *colon;
    char *name;

    if (!t->name || !version || !t->architecture)
        return NULL;
    if ((colon = strchr(version, ':')))
        version = colon + 1;
    return asprintf(&name, "%s_%s_%s.deb", t->name, version, t->architecture) < 0 ? NULL : name;
}

int rs_sign_require_rebuilds(const rs_rebuild_policy *p, const rs_pkgtree *t, rs_error *err)
{
    _cleanup_free_ char *pool = NULL;
    uint8_t sha256[32];

    /* Rebuilders attest the .deb they made; an unpacked tree is nothing
     * any of them could have attested. */
    if (!t->ops->container_sha256)
        return rs_fail(err, "%s: rebuild attestations vouch for .deb files, and this is an %s", t->origin,
                       t->ops->kind);
    if (!(pool = rs_pool_name(t)))
        return rs_fail(err, "%s: its control names no package, version or architecture", t->origin);
    if (t->ops->container_sha256(t, sha256, err) < 0)
        return -1;
    return rs_rebuild_require(p, pool, sha256, err);
}
