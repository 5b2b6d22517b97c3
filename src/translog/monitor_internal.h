/* What the parts of `log monitor` share: monitor.c (the log's side and
 * the walk over the archive), monitor_tar.c (signature files in tarballs,
 * nested ones too, and in 1.0 sources' .diff.gz), monitor_deb.c (signed
 * images in binary packages). */
#ifndef RS_MONITOR_INTERNAL_H
#define RS_MONITOR_INTERNAL_H

#include <stdbool.h>

#include "archive/archive_lib.h"
#include "translog/monitor.h"

/* A published signature file: a CMS or detached signature, a few KiB. */
#define MONITOR_MAX_SIG (1024 * 1024)
/* Tarballs inside tarballs are read this deep; one deeper is not judged. */
#define MONITOR_MAX_NESTING 4

typedef struct sig_ref {
    rs_hash h;
    uint64_t index;    /* the log entry's; unused for published ones */
} sig_ref;

typedef struct sig_set {
    sig_ref *h;
    size_t n, cap;
} sig_set;

int monitor_set_add(sig_set *s, const rs_hash *h, uint64_t index, rs_error *err);
/* s sorted. */
bool monitor_set_has(const sig_set *s, const rs_hash *h);

/* What the walk over the archive carries. */
typedef struct monitor_walk {
    const sig_set *logged;    /* sorted: the archive entries' signature hashes */
    const sig_set *digests;   /* sorted: every entry's image digest, as monitor_digest_key makes it */
    sig_set *published;       /* signature hashes found published */
    const rs_trust *service;
    rs_monitor_report *report;
} monitor_walk;

/* The key of an image digest ("sha256:HEX", as entries write it). */
void monitor_digest_key(const char *digest, rs_hash *key);

/* A published signature file: hashed, recorded, reported when unlogged. */
int monitor_published_sig(const monitor_walk *w, const char *file, const char *member, const uint8_t *data,
                          size_t len, rs_error *err);
void monitor_unchecked(const monitor_walk *w, const char *file, const char *member, const char *why);

/* monitor_tar.c */
int monitor_scan_tarball(const monitor_walk *w, const char *path, rs_error *err);
int monitor_scan_diff(const monitor_walk *w, const char *path, rs_error *err);
/* monitor_deb.c */
int monitor_scan_deb(const monitor_walk *w, const char *path, rs_error *err);

#endif
