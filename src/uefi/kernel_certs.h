/* The certificates a Linux kernel builds in: its .builtin_trusted_keys.
 * Debian's kernels since trixie sign every module with a key made for that
 * build, and its certificate exists only there.
 *
 * certs/system_certificates.S lays them out in the image as
 *   system_certificate_list:       DER certificates, back to back
 *   (zeros to the next .align 8: 8 bytes on x86, 256 on arm64)
 *   system_certificate_list_size:  their length, .quad (.long on 32-bit)
 * and certs/common.c reads each one as 30 82 LL LL: a SEQUENCE of LL bytes.
 * An x86 bzImage holds the kernel compressed (Documentation/arch/x86/
 * boot.rst: payload_offset and payload_length, boot protocol 2.08), and so
 * does an EFI zboot image (Debian's loong64 vmlinuz: "zimg" at 4, then the
 * payload's offset and size; drivers/firmware/efi/libstub/zboot-header.S);
 * an arm64 Image (Debian's arm64 vmlinuz) is the kernel uncompressed, with
 * "ARM\x64" at 0x38 (Documentation/arch/arm64/booting.rst), and so is a
 * RISC-V Image, "RSC\x05" at 0x38 (Documentation/arch/riscv/
 * boot-image-header.rst). */
#ifndef RS_UEFI_KERNEL_CERTS_H
#define RS_UEFI_KERNEL_CERTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/file.h"
#include "crypto/trust.h"

/* The longest certificate list looked for, a bound on what is held while
 * looking. Debian's kernels build in one certificate, the build key (1.3 KB
 * in bookworm's, 0.5 KB in trixie's), and the kernel's 16-bit length field
 * caps each at 64 KiB: this is 16 of the largest possible, or about 800 of
 * bookworm's. A longer list is not found. */
#define KERNEL_MAX_CERT_LIST (1024 * 1024)

/* Finds the one certificate list in a decompressed kernel, given a block
 * at a time: a run of DER certificates, each of which OpenSSL parses whole,
 * followed by zeros to an alignment and its own length as a little-endian
 * word (the upper half zero). It holds about four times max_list
 * bytes, whatever the kernel's size. None, or more than one, is an error;
 * *list is valid until the scan is freed. */
typedef struct kernel_list_scan kernel_list_scan;
kernel_list_scan *kernel_list_scan_new(size_t max_list, rs_error *err);
int kernel_list_scan_feed(kernel_list_scan *s, const uint8_t *data, size_t len, rs_error *err);
int kernel_list_scan_end(kernel_list_scan *s, const uint8_t **list, size_t *size, uint64_t *start, rs_error *err);
void kernel_list_scan_free(kernel_list_scan *s);
/* Adds each certificate of a list found to t, counting them in *count. */
int kernel_cert_list_add(const uint8_t *list, size_t len, rs_trust *t, size_t *count, rs_error *err);
/* The same search over bytes in memory, lists of at most KERNEL_MAX_CERT_LIST. */
int kernel_cert_list_find(const uint8_t *data, size_t len, size_t *start, size_t *size, rs_error *err);

/* Adds the certificates built into the kernel image PATH (an x86 bzImage,
 * an EFI zboot image, or an arm64 or RISC-V Image) to t, and counts them
 * in *count; the kernel decompresses to at most `limit` bytes
 * (RS_MAX_DECOMPRESSED). Returns 1 when it did, 0 when PATH is none of
 * these (it builds in nothing this can read), and -1 on an error, which
 * names PATH. */
int kernel_image_certs(const char *path, uint64_t limit, rs_trust *t, size_t *count, rs_error *err);

/* 1 when the image starts with a kernel's boot header (any of the four
 * above), 0 when not, -1 on a read error. */
int kernel_image_header(const rs_input *in, rs_error *err);

/* The kernel's name for a certificate's key, as /proc/keys and its
 * "Loaded X.509 cert '...'" message show it: the subject it fabricates,
 * ": ", then the subject key identifier (or serial number) in hex.
 * Cut short to fit `size`. */
void kernel_key_description(X509 *cert, char *out, size_t size);

#endif
