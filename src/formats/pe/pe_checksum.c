#include "formats/pe/pe_checksum.h"

#include <endian.h>
#include <string.h>

void pe_checksum_init(pe_checksum *c, uint64_t checksum_off, uint64_t table_off)
{
    *c = (pe_checksum){ .checksum_off = checksum_off, .table_off = table_off };
}

/* The sum of n little-endian 16-bit words, four at a time: each 32-bit
 * half of the two accumulators sums one word of every four, and cannot
 * overflow within WORD_BLOCK steps (16384 * 0xffff < 2^32). */
#define WORD_BLOCK 16384

static uint64_t sum_words(const uint8_t *p, size_t n)
{
    uint64_t total = 0;

    while (n >= 4) {
        size_t steps = n / 4 < WORD_BLOCK ? n / 4 : WORD_BLOCK;
        uint64_t even = 0, odd = 0;

        for (size_t k = 0; k < steps; k++, p += 8) {
            uint64_t x;

            memcpy(&x, p, sizeof(x));
            x = le64toh(x);
            even += x & 0x0000ffff0000ffffULL;
            odd += (x >> 16) & 0x0000ffff0000ffffULL;
        }
        total += (even & 0xffffffff) + (even >> 32) + (odd & 0xffffffff) + (odd >> 32);
        n -= steps * 4;
    }
    for (; n; n--, p += 2)
        total += (uint64_t)p[0] | (uint64_t)p[1] << 8;
    return total;
}

/* Adds bytes that all belong to the current run. A byte at an odd
 * distance from the run's start is the high half of a word. */
static void add_run_bytes(pe_checksum *c, const uint8_t *p, size_t len)
{
    size_t i = 0;

    if (len && ((c->pos - c->run_start) & 1)) {
        c->sum += (uint64_t)p[0] << 8;
        i = 1;
    }
    c->sum += sum_words(p + i, (len - i) / 2);
    i += (len - i) / 2 * 2;
    if (i < len)
        c->sum += p[i];
    c->pos += len;
}

/* Bytes up to the next boundary (checksum field, table start), or all. */
static size_t until_boundary(const pe_checksum *c, size_t len)
{
    uint64_t next = UINT64_MAX;

    if (c->pos < c->checksum_off)
        next = c->checksum_off;
    else if (c->pos < c->table_off)
        next = c->table_off;
    if (next - c->pos < len)
        return (size_t)(next - c->pos);
    return len;
}

void pe_checksum_feed(void *ctx, const uint8_t *data, size_t len)
{
    pe_checksum *c = ctx;

    while (len) {
        size_t n;

        if (c->pos >= c->checksum_off && c->pos < c->checksum_off + 4) {
            n = (size_t)(c->checksum_off + 4 - c->pos);
            n = n < len ? n : len;
            c->pos += n;
            c->run_start = c->checksum_off + 4;
        } else {
            if (c->pos == c->table_off)
                c->run_start = c->table_off;
            n = until_boundary(c, len);
            add_run_bytes(c, data, n);
        }
        data += n;
        len -= n;
    }
}

void pe_checksum_add_run(void *ctx, const uint8_t *data, size_t len)
{
    add_run_bytes(ctx, data, len);
}

void pe_checksum_skip(pe_checksum *c, uint64_t len, uint64_t sum)
{
    c->sum += sum;
    c->pos += len;
}

uint32_t pe_checksum_final(const pe_checksum *c)
{
    uint64_t sum = c->sum;

    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint32_t)(sum + c->pos);
}
