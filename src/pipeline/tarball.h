/* Deterministic tarballs: the same tree gives the same bytes, whoever
 * builds it and whenever. Entries sorted, owner root 0/0, modes 0755/0644,
 * one fixed mtime, no atime/ctime, xz-compressed. */
#ifndef RS_TARBALL_H
#define RS_TARBALL_H

#include <stdbool.h>
#include <stddef.h>
#include <locale.h>
#include <time.h>

#include "base/error.h"

/* Packs the contents of dir (entries relative to it) into output. */
int rs_tarball_write(const char *dir, const char *output, time_t mtime, rs_error *err);

/* The order rs_tarball_write gives a tree: depth-first, the names in each
 * directory in byte order. For whole paths that is byte order with '/'
 * below every other byte, so "a/b" comes before "a-b" and "a.b". */
int rs_tarball_path_cmp(const char *a, const char *b);
/* The same for a+suffix against b+suffix, without making either. */
int rs_tarball_suffixed_cmp(const char *a, const char *b, const char *suffix);

/* The same tarball built from memory: files are added in
 * rs_tarball_path_cmp order, and the directories above each one come
 * before it, as rs_tarball_write gives them for that tree (which holds no
 * empty directories). The output stays a temporary file until committed;
 * freeing an uncommitted tarball removes it. */
typedef struct rs_tarball rs_tarball;

int rs_tarball_open(rs_tarball **t, const char *output, time_t mtime, rs_error *err);
int rs_tarball_add_file(rs_tarball *t, const char *path, const void *data, size_t len, rs_error *err);
int rs_tarball_commit(rs_tarball *t, rs_error *err);
void rs_tarball_free(rs_tarball *t);

/* A tarball of n files written on its own thread while they are being
 * made, so compressing overlaps with making them instead of following it.
 * Files become ready in any order (rs_tarball_feed_ready(k) from any
 * thread); file k is written once files 0..k all are, as entry(ctx, k)
 * describes it; its path and data must stay put from then on. entry may
 * do more with file k first (write it elsewhere too); if it fails, the
 * writer stops. The thread also opens the output. Its failures show in
 * rs_tarball_feed_room at once, and in finish. */
typedef int (*rs_tarball_entry)(void *ctx, size_t k, const char **path, const void **data, size_t *len,
                                rs_error *err);
typedef struct rs_tarball_feed rs_tarball_feed;

int rs_tarball_feed_start(rs_tarball_feed **f, const char *output, time_t mtime, size_t n, rs_tarball_entry entry,
                          void *ctx, rs_error *err);
/* File k is ready: k must be under 2 * RS_TARBALL_FEED_AHEAD past the
 * first file not yet ready, as any file given room is. */
void rs_tarball_feed_ready(rs_tarball_feed *f, size_t k);
/* Files are made at most this far ahead of the writer: otherwise, when its
 * thread gets less of the CPU than the signers, every signature made would
 * wait in memory for it (a quarter of sign-template's peak at 20,000 files
 * on a loaded machine). Signatures are under 2 KB: a few MB at most. A
 * file k given room comes before file written + RS_TARBALL_FEED_AHEAD,
 * where files 0..written-1 are written. */
#define RS_TARBALL_FEED_AHEAD 1024

/* Before file k is made: waits while it is too far ahead of the writer, so
 * that files made and not yet written never pile up in memory. -1 with
 * the writer's error once it has failed (so files that would only be
 * thrown away are not made), and for a file after one abandoned. */
int rs_tarball_feed_room(rs_tarball_feed *f, size_t k, rs_error *err);
/* File k will never be ready (making it failed): files after it are not
 * made, and nothing waits for room it cannot get. */
void rs_tarball_feed_abandon(rs_tarball_feed *f, size_t k);
/* Once all n are ready: waits for the writer and commits the tarball. */
int rs_tarball_feed_finish(rs_tarball_feed *f, rs_error *err);
/* Stops the writer if it still runs; removes the tarball unless committed. */
void rs_tarball_feed_free(rs_tarball_feed *f);

/* Names are UTF-8. libarchive converts them through the calling thread's
 * locale, and in reprosign's C locale it refuses any name that is not
 * ASCII; a thread writing entries uses C.UTF-8 instead, which leaves
 * ASCII names exactly as they were. */
typedef struct rs_names_locale {
    locale_t utf8, previous;
} rs_names_locale;

rs_names_locale rs_tarball_utf8_names_begin(void);
void rs_tarball_utf8_names_end(rs_names_locale n);

#endif
