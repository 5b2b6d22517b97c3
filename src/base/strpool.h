/* Strings kept together in large blocks, freed all at once: for the tens
 * of thousands of paths a template may list, where one malloc each would
 * cost its header and rounding on top of every path. */
#ifndef RS_STRPOOL_H
#define RS_STRPOOL_H

#include <stddef.h>

typedef struct rs_strpool_block rs_strpool_block;

typedef struct rs_strpool {
    rs_strpool_block *head;
} rs_strpool;

/* A copy of s held by the pool, or NULL when out of memory. */
char *rs_strpool_dup(rs_strpool *p, const char *s);
void rs_strpool_free(rs_strpool *p);

#endif
