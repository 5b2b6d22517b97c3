/* PE/COFF EFI images behind the format interface. */
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"
#include "formats/format.h"
#include "formats/pe/authenticode.h"
#include "formats/pe/pe_checksum.h"
#include "formats/pe/pe_layout.h"

static pe_layout *layout(rs_image *img)
{
    return img->priv;
}

static int pe_open(rs_image *img, rs_error *err)
{
    pe_layout *pe = calloc(1, sizeof(*pe));

    if (!pe)
        return rs_fail(err, "out of memory");
    if (pe_layout_parse(&img->in, pe, err) < 0) {
        pe_layout_free(pe);
        free(pe);
        return -1;
    }
    img->priv = pe;
    return 0;
}

static void pe_close(rs_image *img)
{
    if (img->priv) {
        pe_layout_free(img->priv);
        free(img->priv);
    }
}

/* Not where any range ends: the ranges hashed have left a gap. */
#define RANGES_BROKEN UINT64_MAX

/* Hashes [off, off+len) and sums it for the checksum as it goes; `next`
 * is where the ranges so far, each following the last from SizeOfHeaders,
 * end (RANGES_BROKEN once one does not follow). */
static int hash_range(rs_image *img, uint64_t off, uint64_t len, EVP_MD_CTX *ctx, pe_checksum *sum, uint64_t *next,
                      rs_error *err)
{
    *next = *next == off ? off + len : RANGES_BROKEN;
    sum->pos = off;
    return rs_input_hash_observed(&img->in, off, len, ctx, pe_checksum_add_run, sum, err);
}

/* EDK2's rules: headers less CheckSum and DataDirectory[4], the sections
 * in file order, then anything past SizeOfHeaders + the section sizes up
 * to the end of the (zero-padded) image data. */
static int pe_digest(rs_image *img, const EVP_MD *md, rs_digest *out, rs_error *err)
{
    static const uint8_t zeros[8];
    _cleanup_(rs_mdctxp) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    pe_layout *pe = layout(img);
    const uint8_t *h = pe->headers;
    uint64_t t_end = pe->trailing.off + pe->trailing.len, in_file, next = pe->size_of_headers;
    /* The checksum's run of image data starts after the CheckSum field. */
    pe_checksum sum = { .run_start = pe->checksum_off + 4 };

    if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL) || !rs_hash_update(ctx, h, pe->checksum_off) ||
        !rs_hash_update(ctx, h + pe->checksum_off + 4, pe->certdir_off - pe->checksum_off - 4) ||
        !rs_hash_update(ctx, h + pe->certdir_off + 8, pe->size_of_headers - pe->certdir_off - 8))
        return rs_fail_ssl(err, "digest failed");
    for (size_t i = 0; i < pe->nsections; i++)
        if (hash_range(img, pe->sections[i].off, pe->sections[i].len, ctx, &sum, &next, err) < 0)
            return -1;
    if (pe->trailing.len) {
        in_file = t_end < pe->data_end ? t_end : pe->data_end;
        if (pe->trailing.off < in_file &&
            hash_range(img, pe->trailing.off, in_file - pe->trailing.off, ctx, &sum, &next, err) < 0)
            return -1;
        /* The zero padding to 8 bytes that signing adds. */
        if (t_end > pe->data_end &&
            !rs_hash_update(ctx, zeros, t_end - (pe->trailing.off > pe->data_end ? pe->trailing.off : pe->data_end)))
            return rs_fail_ssl(err, "digest failed");
    }
    out->md = md;
    if (!EVP_DigestFinal_ex(ctx, out->bytes, &out->len))
        return rs_fail_ssl(err, "digest failed");
    /* Every byte of the image data was read, once: a write can use the sum. */
    pe->data_summed = next == pe->data_end;
    pe->data_sum = sum.sum;
    return 0;
}

static size_t pe_count(rs_image *img)
{
    return layout(img)->ncerts;
}

static int pe_extract(rs_image *img, size_t index, rs_bytes *der, rs_error *err)
{
    pe_layout *pe = layout(img);
    const pe_cert_entry *c;
    uint8_t *buf;
    size_t len;

    if (index >= pe->ncerts)
        return rs_fail(err, "no signature #%zu (the image has %zu)", index, pe->ncerts);
    c = &pe->certs[index];
    if (c->revision != PE_CERT_REVISION || c->type != PE_CERT_TYPE_PKCS)
        return rs_fail(err, "signature #%zu is not a PKCS#7 entry (revision 0x%04x, type 0x%04x)", index,
                       c->revision, c->type);
    len = c->length - PE_CERT_HEADER;
    buf = malloc(len);
    if (!buf)
        return rs_fail(err, "out of memory");
    if (rs_input_read(&img->in, c->off + PE_CERT_HEADER, buf, len, err) < 0) {
        free(buf);
        return -1;
    }
    /* Writers that count the padding in dwLength leave zeros after the DER. */
    rs_bytes_adopt(der, buf, authenticode_der_length(buf, len));
    return 0;
}

static int pe_check_binding(rs_image *img, const rs_bytes *der, X509 *cert, rs_error *err)
{
    rs_digest want, have;
    char ws[RS_DIGEST_STR], hs[RS_DIGEST_STR];

    (void)cert;
    if (authenticode_bound_digest(der, &want, err) < 0 || pe_digest(img, want.md, &have, err) < 0)
        return -1;
    if (rs_digest_equal(&want, &have))
        return 0;
    rs_digest_format(&want, ws, sizeof(ws));
    rs_digest_format(&have, hs, sizeof(hs));
    return rs_fail(err, "signature does not match the image: signed digest %s, image digest %s", ws, hs);
}

/* EDK2 checks each certificate a signature carries against dbx without
 * first verifying the signature. */
static bool signature_revoked(const rs_bytes *der, const rs_trust *trust, char **which)
{
    const unsigned char *p = der->data;
    _cleanup_(rs_pkcs7p) PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long)der->len);
    _cleanup_(rs_x509_refsp) STACK_OF(X509) *signers = NULL;

    *which = NULL;
    if (p7 && PKCS7_type_is_signed(p7) && p7->d.sign)
        signers = PKCS7_get0_signers(p7, NULL, 0);
    ERR_clear_error();
    if (!signers || sk_X509_num(signers) != 1)
        return false;
    return rs_trust_revokes(trust, sk_X509_value(signers, 0), p7->d.sign->cert, which);
}

static void reject(rs_verify_report *report)
{
    report->ok = false;
    free(report->anchor);
    report->anchor = NULL;
}

/* A revoked signature anywhere in the image rejects the image, so each
 * signature's verdict looks at all of them. */
static int revoked_signature(rs_image *img, const rs_trust *trust, rs_verify_report *report)
{
    for (size_t i = 0; i < layout(img)->ncerts; i++) {
        _cleanup_bytes_ rs_bytes der = { 0 };
        _cleanup_free_ char *which = NULL;
        rs_error ignored;

        if (pe_extract(img, i, &der, &ignored) < 0 || !signature_revoked(&der, trust, &which))
            continue;
        reject(report);
        snprintf(report->reason, sizeof(report->reason), "rejected by dbx: signature %zu's certificate %s is revoked",
                 i, which ? which : "?");
        return 1;
    }
    return 0;
}

/* EDK2's DxeImageVerificationLib: the image hash or any signature's
 * certificate in dbx rejects; a chain to db, or the hash in db, accepts. */
static void apply_db_rules(rs_image *img, const rs_trust *trust, rs_verify_report *report)
{
    char hash[RS_DIGEST_STR];

    rs_digest_format(&report->actual, hash, sizeof(hash));
    if (rs_trust_hash_listed(&trust->forbidden, &report->actual)) {
        reject(report);
        snprintf(report->reason, sizeof(report->reason), "rejected by dbx: the image hash %s is revoked", hash);
        return;
    }
    if (revoked_signature(img, trust, report) || report->ok)
        return;
    if (rs_trust_hash_listed(&trust->allowed, &report->actual)) {
        report->ok = true;
        report->reason[0] = '\0';
        free(report->anchor);
        report->anchor = strdup("db: image hash");
    }
}

static int pe_verify(rs_image *img, const rs_bytes *der, const rs_trust *trust, rs_verify_report *report,
                     rs_error *err)
{
    if (authenticode_bound_digest(der, &report->expected, err) < 0 ||
        pe_digest(img, report->expected.md, &report->actual, err) < 0)
        return -1;
    if (authenticode_verify(der, trust, report, err) < 0)
        return -1;
    if (report->ok && !rs_digest_equal(&report->expected, &report->actual)) {
        report->ok = false;
        snprintf(report->reason, sizeof(report->reason), "image digest does not match the signed digest");
    }
    if (rs_trust_has_lists(trust))
        apply_db_rules(img, trust, report);
    return 0;
}

/* One WIN_CERTIFICATE: dwLength counts header and DER but not the padding,
 * as sbsign and pesign write it. */
static int append_entry(rs_bytes *table, const rs_bytes *der, rs_error *err)
{
    static const uint8_t zeros[8];
    uint8_t h[PE_CERT_HEADER];
    uint64_t total = (uint64_t)der->len + PE_CERT_HEADER;

    if (total > UINT32_MAX)
        return rs_fail(err, "signature too large");
    pe_put_le32(h, (uint32_t)total);
    pe_put_le16(h + 4, PE_CERT_REVISION);
    pe_put_le16(h + 6, PE_CERT_TYPE_PKCS);
    if (rs_bytes_append(table, h, sizeof(h), err) < 0 || rs_bytes_append(table, der->data, der->len, err) < 0)
        return -1;
    return rs_bytes_append(table, zeros, pe_align8(total) - total, err);
}

/* The new certificate table: kept entries byte for byte, then new ones. */
static int build_table(rs_image *img, const rs_edit *edit, rs_bytes *table, rs_error *err)
{
    pe_layout *pe = layout(img);

    for (size_t i = 0; i < pe->ncerts && !edit->remove_all; i++) {
        const pe_cert_entry *c = &pe->certs[i];
        uint8_t *buf;

        if ((long)i == edit->remove_index)
            continue;
        buf = malloc(c->span);
        if (!buf)
            return rs_fail(err, "out of memory");
        if (rs_input_read(&img->in, c->off, buf, c->span, err) < 0 ||
            rs_bytes_append(table, buf, c->span, err) < 0) {
            free(buf);
            return -1;
        }
        free(buf);
    }
    for (size_t i = 0; i < edit->n_append; i++)
        if (append_entry(table, &edit->append[i], err) < 0)
            return -1;
    return 0;
}

/* The image data after the headers. When the digest has read all of it,
 * its checksum sum is known and the kernel copies the bytes; otherwise
 * they pass through the checksum as they are copied. */
static int copy_data(rs_image *img, rs_output *out, pe_checksum *sum, rs_error *err)
{
    pe_layout *pe = layout(img);
    uint64_t len = pe->data_end - pe->size_of_headers;
    int rc;

    if (!pe->data_summed)
        return rs_output_copy(out, &img->in, pe->size_of_headers, len, err);
    out->observe = NULL;
    rc = rs_output_copy(out, &img->in, pe->size_of_headers, len, err);
    out->observe = pe_checksum_feed;
    pe_checksum_skip(sum, len, pe->data_sum);
    return rc;
}

static int pe_write(rs_image *img, const rs_edit *edit, rs_output *out, rs_error *err)
{
    pe_layout *pe = layout(img);
    _cleanup_bytes_ rs_bytes table = { 0 };
    _cleanup_free_ uint8_t *headers = malloc(pe->size_of_headers);
    pe_checksum sum;
    uint8_t field[4];
    int rc = 0;

    if (!headers)
        return rs_fail(err, "out of memory");
    if (edit->remove_index >= 0 && (size_t)edit->remove_index >= pe->ncerts)
        return rs_fail(err, "no signature #%ld (the image has %zu)", edit->remove_index, pe->ncerts);
    if (build_table(img, edit, &table, err) < 0)
        return -1;
    if (pe->data_size + table.len > UINT32_MAX)
        return rs_fail(err, "signed image would exceed 4 GiB");
    memcpy(headers, pe->headers, pe->size_of_headers);
    pe_put_le32(headers + pe->certdir_off, table.len ? (uint32_t)pe->data_size : 0);
    pe_put_le32(headers + pe->certdir_off + 4, (uint32_t)table.len);
    pe_put_le32(headers + pe->checksum_off, 0);
    pe_checksum_init(&sum, pe->checksum_off, pe->data_size);
    out->observe = pe_checksum_feed;
    out->observe_ctx = &sum;
    if (rs_output_write(out, headers, pe->size_of_headers, err) < 0 || copy_data(img, out, &sum, err) < 0 ||
        rs_output_zeros(out, pe->data_size - pe->data_end, err) < 0 ||
        rs_output_write(out, table.data, table.len, err) < 0)
        rc = -1;
    /* Detached on every path: `sum` dies with this frame, `out` does not. */
    out->observe = NULL;
    out->observe_ctx = NULL;
    if (rc < 0)
        return -1;
    pe_put_le32(field, pe_checksum_final(&sum));
    return rs_output_patch(out, pe->checksum_off, field, sizeof(field), err);
}

const rs_format rs_format_pe = {
    .name = "pe",
    .sig_type = "efi",
    .probe = pe_probe,
    .open = pe_open,
    .close = pe_close,
    .digest = pe_digest,
    .count = pe_count,
    .extract = pe_extract,
    .describe = authenticode_describe,
    .to_be_signed = authenticode_to_be_signed,
    .assemble = authenticode_assemble,
    .check_binding = pe_check_binding,
    .verify = pe_verify,
    .write = pe_write,
    .max_signatures = 0,
    .firmware_prefers_sha256 = true,
};
