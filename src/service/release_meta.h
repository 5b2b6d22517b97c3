/* What a Release file says of itself: when it was made, until when it is
 * valid, and which suite it is (release_meta.c also holds the helpers of
 * repo.h's rs_suite_identity, those names with the directory they were
 * read from). A signed Release replayed from months ago verifies as well
 * as today's, so its age is checked too; and a suite is known by these
 * names, not by the spelling a request used (an alias such
 * as stable-embargoed, a symlink in dists/, is the same suite). */
#ifndef RS_RELEASE_META_H
#define RS_RELEASE_META_H

#include <stddef.h>
#include <time.h>

#include "base/error.h"

typedef struct rs_release_meta {
    char *suite;         /* Suite:, or NULL */
    char *codename;      /* Codename:, or NULL */
    time_t date;         /* Date:; 0 when absent */
    time_t valid_until;  /* Valid-Until:; 0 when absent */
} rs_release_meta;

int rs_release_meta_parse(const char *text, size_t len, rs_release_meta *out, rs_error *err);
void rs_release_meta_free(rs_release_meta *m);

/* Refuses a Release past its Valid-Until, or dated more than max_age
 * seconds before now (max_age 0: no limit). */
int rs_release_meta_check_fresh(const rs_release_meta *m, time_t now, time_t max_age, rs_error *err);

/* Parses an RFC 2822 date as Release files write it, in UTC. */
int rs_parse_release_date(const char *s, time_t *out);

#endif
