/* The PE optional-header checksum, computed over an output as it is
 * written. Matches sbsigntool: a 16-bit end-around-carry sum of the bytes
 * before the CheckSum field, of the image data after it, and of the
 * certificate table, each summed as its own run of little-endian words,
 * plus the total length. */
#ifndef RS_PE_CHECKSUM_H
#define RS_PE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

typedef struct pe_checksum {
    uint64_t pos;            /* bytes seen so far */
    uint64_t checksum_off;   /* the 4-byte field skipped */
    uint64_t table_off;      /* where the certificate table run starts */
    uint64_t run_start;      /* start of the current run */
    uint64_t sum;
} pe_checksum;

void pe_checksum_init(pe_checksum *c, uint64_t checksum_off, uint64_t table_off);
/* An rs_output observer. */
void pe_checksum_feed(void *ctx, const uint8_t *data, size_t len);
uint32_t pe_checksum_final(const pe_checksum *c);

/* Bytes of the image-data run summed apart, as the digest reads them: an
 * observer that adds them at c->pos (the caller sets pos to each range's
 * offset, and run_start to the run's), with no boundary inside. */
void pe_checksum_add_run(void *ctx, const uint8_t *data, size_t len);
/* Counts len bytes whose sum (made by pe_checksum_add_run, at the same
 * offsets) is known, without seeing them again. */
void pe_checksum_skip(pe_checksum *c, uint64_t len, uint64_t sum);

#endif
