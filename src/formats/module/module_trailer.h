/* The trailer the kernel looks for at the end of a signed module
 * (include/linux/module_signature.h): the CMS, a 12-byte struct
 * module_signature, then a fixed magic string. */
#ifndef RS_MODULE_TRAILER_H
#define RS_MODULE_TRAILER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/file.h"

#define MODULE_SIG_MAGIC "~Module signature appended~\n"
#define MODULE_SIG_MAGIC_LEN (sizeof(MODULE_SIG_MAGIC) - 1)
#define MODULE_SIG_STRUCT_LEN 12
#define MODULE_TRAILER_LEN (MODULE_SIG_STRUCT_LEN + MODULE_SIG_MAGIC_LEN)
#define MODULE_SIG_ID_PKCS7 2

/* Where a module's parts lie. content_len covers the bytes that are
 * signed; sig_len is 0 for an unsigned module. */
typedef struct module_layout {
    uint64_t content_len;
    uint32_t sig_len;
    bool is_signed;
} module_layout;

/* Splits a file into module bytes and signature, refusing any trailer
 * the kernel would refuse. */
int module_trailer_parse(const rs_input *in, module_layout *out, rs_error *err);

/* The struct module_signature and magic for a CMS of sig_len bytes. */
void module_trailer_encode(uint32_t sig_len, uint8_t out[MODULE_TRAILER_LEN]);

#endif
