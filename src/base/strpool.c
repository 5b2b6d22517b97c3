#include "base/strpool.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE (64 * 1024)

struct rs_strpool_block {
    rs_strpool_block *next;
    size_t used, cap;
    char data[];
};

char *rs_strpool_dup(rs_strpool *p, const char *s)
{
    size_t len = strlen(s) + 1;
    rs_strpool_block *b = p->head;
    char *copy;

    if (!b || b->cap - b->used < len) {
        size_t cap = len > BLOCK_SIZE ? len : BLOCK_SIZE;

        if (!(b = malloc(sizeof(*b) + cap)))
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = p->head;
        p->head = b;
    }
    copy = memcpy(b->data + b->used, s, len);
    b->used += len;
    return copy;
}

void rs_strpool_free(rs_strpool *p)
{
    while (p->head) {
        rs_strpool_block *next = p->head->next;

        free(p->head);
        p->head = next;
    }
}
