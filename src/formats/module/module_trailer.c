#include "formats/module/module_trailer.h"

#include <string.h>

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The kernel's mod_check_sig(): only PKCS#7 with every other field 0. */
static int check_struct(const uint8_t *ms, rs_error *err)
{
    static const uint8_t zeros[8];

    if (ms[2] != MODULE_SIG_ID_PKCS7)
        return rs_fail(err, "module signature is not PKCS#7 (id_type %u)", ms[2]);
    if (memcmp(ms, zeros, 2) != 0 || memcmp(ms + 3, zeros, 5) != 0)
        return rs_fail(err, "module signature trailer has non-zero reserved fields "
                            "(algo %u, hash %u, signer_len %u, key_id_len %u, pad %02x%02x%02x)",
                       ms[0], ms[1], ms[3], ms[4], ms[5], ms[6], ms[7]);
    return 0;
}

static bool ends_with_magic(const rs_input *in, uint64_t len, rs_error *err, int *rc)
{
    uint8_t tail[MODULE_SIG_MAGIC_LEN];

    *rc = 0;
    if (len < sizeof(tail))
        return false;
    if ((*rc = rs_input_read(in, len - sizeof(tail), tail, sizeof(tail), err)) < 0)
        return false;
    return memcmp(tail, MODULE_SIG_MAGIC, sizeof(tail)) == 0;
}

int module_trailer_parse(const rs_input *in, module_layout *out, rs_error *err)
{
    int rc;
    uint8_t tail[MODULE_TRAILER_LEN];
    size_t n = in->size < sizeof(tail) ? (size_t)in->size : sizeof(tail);
    uint32_t sig_len;

    memset(out, 0, sizeof(*out));
    if (rs_input_read(in, in->size - n, tail + sizeof(tail) - n, n, err) < 0)
        return -1;
    if (n < MODULE_SIG_MAGIC_LEN ||
        memcmp(tail + sizeof(tail) - MODULE_SIG_MAGIC_LEN, MODULE_SIG_MAGIC, MODULE_SIG_MAGIC_LEN) != 0) {
        /* A trailer cut off before its magic looks unsigned here; the
         * ELF check then finds the remains after the object. */
        out->content_len = in->size;
        return 0;
    }
    if (n < sizeof(tail))
        return rs_fail(err, "truncated module signature trailer (%zu bytes, needs %zu)", n, sizeof(tail));
    if (check_struct(tail, err) < 0)
        return -1;
    sig_len = get_be32(tail + 8);
    if (sig_len == 0)
        return rs_fail(err, "module signature trailer has sig_len 0");
    if (sig_len > in->size - sizeof(tail))
        return rs_fail(err, "module signature length %u exceeds the %llu bytes before the trailer", sig_len,
                       (unsigned long long)(in->size - sizeof(tail)));
    out->content_len = in->size - sizeof(tail) - sig_len;
    out->sig_len = sig_len;
    out->is_signed = true;
    /* Signed twice (sign-file run on a signed module): the kernel checks
     * only the last signature, and stripping it would leave a module that
     * still looks signed, so such a file is not taken for a module. */
    if (ends_with_magic(in, out->content_len, err, &rc))
        return rs_fail(err, "module signature covers another signature trailer (signed twice?)");
    return rc;
}

void module_trailer_encode(uint32_t sig_len, uint8_t out[MODULE_TRAILER_LEN])
{
    memset(out, 0, MODULE_SIG_STRUCT_LEN);
    out[2] = MODULE_SIG_ID_PKCS7;
    out[8] = (uint8_t)(sig_len >> 24);
    out[9] = (uint8_t)(sig_len >> 16);
    out[10] = (uint8_t)(sig_len >> 8);
    out[11] = (uint8_t)sig_len;
    memcpy(out + MODULE_SIG_STRUCT_LEN, MODULE_SIG_MAGIC, MODULE_SIG_MAGIC_LEN);
}
