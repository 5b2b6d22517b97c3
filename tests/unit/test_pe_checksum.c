/* The streaming PE checksum must equal a direct computation (sbsigntool's
 * definition) however the output is split into writes, including when the
 * CheckSum field sits at an odd offset. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/pe/pe_checksum.h"
#include "harness.h"

static uint16_t fold_add(uint16_t sum, uint16_t x)
{
    uint32_t v = (uint32_t)sum + x;

    return (uint16_t)((v >> 16) + (v & 0xffff));
}

/* One run: little-endian words from the run's own start, odd byte alone. */
static uint16_t run_sum(uint16_t sum, const uint8_t *p, size_t len)
{
    size_t i;

    for (i = 0; i + 2 <= len; i += 2)
        sum = fold_add(sum, (uint16_t)(p[i] | p[i + 1] << 8));
    if (i < len)
        sum = fold_add(sum, p[i]);
    return sum;
}

static uint32_t reference(const uint8_t *buf, size_t len, size_t csum_off, size_t table_off)
{
    uint16_t sum = run_sum(0, buf, csum_off);

    sum = run_sum(sum, buf + csum_off + 4, table_off - csum_off - 4);
    sum = run_sum(sum, buf + table_off, len - table_off);
    return (uint32_t)sum + (uint32_t)len;
}

static uint32_t streamed(const uint8_t *buf, size_t len, size_t csum_off, size_t table_off, unsigned seed)
{
    pe_checksum c;
    size_t pos = 0;

    srand(seed);
    pe_checksum_init(&c, csum_off, table_off);
    while (pos < len) {
        size_t n = (size_t)(rand() % 37) + 1;

        if (n > len - pos)
            n = len - pos;
        pe_checksum_feed(&c, buf + pos, n);
        pos += n;
    }
    return pe_checksum_final(&c);
}

/* Large writes: the summing loop's blocks of 16,384 steps, its lanes at
 * their largest (all 0xff), at odd and even starts. */
static void large_writes(void)
{
    size_t len = 600 * 1024 + 3;
    uint8_t *big = malloc(len);

    CHECK(big != NULL);
    if (!big)
        return;
    for (int pattern = 0; pattern < 2; pattern++) {
        for (size_t i = 0; i < len; i++)
            big[i] = pattern ? 0xff : (uint8_t)(i * 2654435761u >> 11);
        static const size_t chunks[] = { 131071, 196609, 262147, 600 * 1024 + 3 };

        for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
            size_t chunk = chunks[k];
            pe_checksum c;

            pe_checksum_init(&c, 217, len - 1001);
            for (size_t pos = 0; pos < len; pos += chunk)
                pe_checksum_feed(&c, big + pos, chunk < len - pos ? chunk : len - pos);
            CHECK(pe_checksum_final(&c) == reference(big, len, 217, len - 1001));
        }
    }
    free(big);
}

int main(void)
{
    large_writes();
    static uint8_t buf[8192];

    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 2654435761u >> 13);
    for (unsigned trial = 0; trial < 200; trial++) {
        size_t len = 64 + (size_t)(trial * 37 % 8000);
        size_t csum = 8 + trial % 50;          /* odd and even offsets */
        size_t table = (csum + 4 + (trial * 13 % (len - csum - 4))) & ~(size_t)7;

        if (table < csum + 4)
            table = len;
        CHECK(streamed(buf, len, csum, table, trial) == reference(buf, len, csum, table));
    }
    /* All-0xff data exercises the end-around carry at every step. */
    memset(buf, 0xff, sizeof(buf));
    CHECK(streamed(buf, 4096, 216, 4000, 7) == reference(buf, 4096, 216, 4000));
    memset(buf, 0, sizeof(buf));
    CHECK(streamed(buf, 1024, 216, 1024, 1) == 1024);
    return harness_finish("test_pe_checksum");
}
