/* sign-template's rebuild precondition: each unsigned package must have
 * been rebuilt, byte for byte, by as many independent rebuilders as the
 * policy requires (attest/rebuild_policy.h), before anything is signed. */
#ifndef RS_SIGN_REBUILDS_H
#define RS_SIGN_REBUILDS_H

#include "attest/rebuild_policy.h"
#include "pipeline/pkgtree.h"

/* The pool file name rebuilders attest a package under:
 * PACKAGE_VERSION_ARCH.deb, the version without its epoch. */
char *rs_pool_name(const rs_pkgtree *t);
int rs_sign_require_rebuilds(const rs_rebuild_policy *p, const rs_pkgtree *t, rs_error *err);

#endif
