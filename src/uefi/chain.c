#include "uefi/chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "formats/pe/pe_sections.h"
#include "uefi/dbverify.h"
#include "uefi/sbat.h"
#include "uefi/sbat_level.h"
#include "uefi/shim_db.h"
#include "uefi/shim_verify.h"
#include "uefi/uefi_trust.h"

void chain_inputs_free(chain_inputs *in)
{
    rs_bytes_free(&in->db);
    rs_bytes_free(&in->dbx);
    rs_bytes_free(&in->mok);
    rs_bytes_free(&in->mokx);
    free(in->sbat_level);
    in->sbat_level = NULL;
}

void chain_result_free(chain_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->stages[i].anchor);
    free(r->stages);
    rs_bytes_free(&r->vendor_authorized);
    memset(r, 0, sizeof(*r));
}

/* What a stage is, from its sections: shim carries .vendor_cert or an
 * SBAT "shim" component; GRUB an SBAT "grub" component. */
typedef struct stage_facts {
    bool shim, grub;
    bool vendor_cert;
    rs_bytes vendor_section;
    sbat_image sbat;         /* .sbat and .sbatlevel, for shim */
    sbat_section shim_sbat;  /* .sbat as shim finds it */
} stage_facts;

static void stage_facts_free(stage_facts *f)
{
    rs_bytes_free(&f->vendor_section);
    sbat_image_free(&f->sbat);
    sbat_section_free(&f->shim_sbat);
}

static bool has_component(const char *csv, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = csv; p && *p; p = strpbrk(p, "\r\n"), p = p ? p + strspn(p, "\r\n") : NULL)
        if (!strncmp(p, name, len) && p[len] == ',')
            return true;
    return false;
}

static int read_facts(rs_image *img, stage_facts *f, rs_error *err)
{
    int found;

    memset(f, 0, sizeof(*f));
    if (img->format != &rs_format_pe)
        return rs_fail(err, "not an EFI image (it is %s)", img->format->name);
    if ((found = pe_image_section(img, ".vendor_cert", &f->vendor_section, err)) < 0 ||
        sbat_from_image(img, &f->sbat, err) < 0 || sbat_shim_section(img, &f->shim_sbat, err) < 0)
        return -1;
    f->vendor_cert = found > 0;
    f->shim = f->vendor_cert || has_component(f->sbat.sbat, "shim");
    f->grub = has_component(f->sbat.sbat, "grub");
    return 0;
}

static void refuse(chain_stage *s, const char *rule, const char *why)
{
    s->ok = false;
    free(s->anchor);
    s->anchor = NULL;
    snprintf(s->rule, sizeof(s->rule), "%s", rule);
    snprintf(s->reason, sizeof(s->reason), "%s", why);
}

/* EDK2's DxeImageVerificationLib, through the format's db/dbx rules. */
static int firmware_stage(const rs_trust *fw, chain_stage *s, rs_error *err)
{
    _cleanup_(uefi_verdict_free) uefi_verdict v = { 0 };

    s->verifier = "firmware (EDK2 db/dbx)";
    if (uefi_verify_image(s->path, fw, &v, err) < 0)
        return -1;
    s->ok = v.ok;
    snprintf(s->rule, sizeof(s->rule), "%s", "dbx (hashes, certificates) then db");
    if (v.ok && v.anchor && !strncmp(v.anchor, "db:", 3))
        s->anchor = strdup("the image hash is in db");
    else if (v.ok && asprintf(&s->anchor, "a signature chains to %s (db)", v.anchor ? v.anchor : "?") < 0)
        s->anchor = NULL;
    else if (!v.ok)
        snprintf(s->reason, sizeof(s->reason), "%s", v.reason);
    return 0;
}

/* pe.c verify_sbat_section: an image without .sbat is refused when shim
 * loads it itself, accepted when checked through the protocol
 * ("return in_protocol ? EFI_SUCCESS : EFI_SECURITY_VIOLATION"). */
static int check_sbat(const stage_facts *f, const char *level, bool in_protocol, chain_stage *s, rs_error *err)
{
    char why[RS_ERROR_MAX - 64];
    int revoked;

    if (f->shim_sbat.refusal[0]) {
        refuse(s, "SBAT (verify.c verify_buffer_sbat)", f->shim_sbat.refusal);
        return 0;
    }
    if (!f->shim_sbat.csv || !f->shim_sbat.csv[0]) {
        if (!in_protocol)
            refuse(s, "SBAT (pe.c verify_sbat_section)", "no .sbat section, which shim requires of images it loads");
        else
            snprintf(s->sbat, sizeof(s->sbat), "no .sbat section, accepted through the shim_lock protocol");
        return 0;
    }
    revoked = sbat_check(f->shim_sbat.csv, level, why, sizeof(why), err);
    if (revoked < 0)
        return -1;
    if (revoked)
        refuse(s, "SBAT (sbat.c verify_sbat_helper)", why);
    else
        snprintf(s->sbat, sizeof(s->sbat), "SBAT generations pass the level");
    return 0;
}

/* MokPolicy REQUIRE_NX: pe-relocate.c read_header refuses an image
 * without NX_COMPAT (for shim_lock too, since verify_image reads the
 * header the same way); pe.c handle_image refuses a writable and
 * executable section that is not discardable in the images shim loads. */
#define DLL_NX_COMPAT 0x0100u
#define SCN_DISCARDABLE 0x02000000u
#define SCN_EXECUTE 0x20000000u
#define SCN_READ 0x40000000u
#define SCN_WRITE 0x80000000u

static const char *nx_refusal(rs_image *img, bool in_protocol)
{
    if (!(pe_image_dll_characteristics(img) & DLL_NX_COMPAT))
        return "MokPolicy requires NX, and the image is not NX_COMPAT";
    for (size_t i = 0; !in_protocol && i < pe_image_section_count(img); i++) {
        pe_section_header h;
        uint32_t c;

        pe_image_section_header(img, i, &h);
        c = h.characteristics;
        if ((c & SCN_READ) && !(c & SCN_DISCARDABLE) && (c & SCN_WRITE) && (c & SCN_EXECUTE))
            return "MokPolicy requires NX, and a section is writable and executable";
    }
    return NULL;
}

typedef struct shim_ctx {
    bool require_nx;
    bool after_grub;         /* the stage just judged is GRUB */
    shim_db db;
    sbat_level level;
    bool has_level;
} shim_ctx;

/* Who hands a later stage to shim: GRUB's shim_lock verifier (kern/efi/sb.c)
 * for a kernel, otherwise shim's LoadImage hook (loader-proto.c); both
 * verify with in_protocol set. */
static const char *verifier(bool in_protocol, bool after_grub)
{
    if (!in_protocol)
        return "shim (loads it itself)";
    return after_grub ? "shim, for GRUB through shim_lock" : "shim, through its LoadImage hook";
}

static int shim_stage(shim_ctx *c, bool in_protocol, chain_stage *s, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_(stage_facts_free) stage_facts f = { 0 };
    shim_verdict v;

    s->verifier = verifier(in_protocol, c->after_grub);
    if (rs_image_open(&img, s->path, err) < 0 || read_facts(&img, &f, err) < 0 ||
        shim_verify_image(&img, &c->db, &v, err) < 0)
        return rs_error_prefix(err, "%s", s->path);
    c->after_grub = f.grub;
    if (c->require_nx && nx_refusal(&img, in_protocol)) {
        refuse(s, "MokPolicy (pe-relocate.c read_header, pe.c handle_image)", nx_refusal(&img, in_protocol));
        return 0;
    }
    s->ok = v.ok;
    snprintf(s->rule, sizeof(s->rule), "%s", v.rule);
    if (!v.ok) {
        snprintf(s->reason, sizeof(s->reason), "%s", v.detail);
        return 0;
    }
    s->anchor = strdup(v.detail);
    /* verify.c verify_buffer: SBAT after the signature, in secure mode. */
    if (c->db.insecure)
        return 0;
    if (check_sbat(&f, c->level.csv, in_protocol, s, err) < 0)
        return rs_error_prefix(err, "%s", s->path);
    return 0;
}

static int load_lists(shim_db *db, const chain_inputs *in, rs_error *err)
{
    if (shim_db_init(db, err) < 0)
        return -1;
    db->ignore_db = in->ignore_db;
    db->insecure = in->insecure;
    if ((in->db.len && shim_list_add_esl(&db->db, in->db.data, in->db.len, err) < 0) ||
        (in->dbx.len && shim_list_add_esl(&db->dbx, in->dbx.data, in->dbx.len, err) < 0) ||
        (in->mok.len && shim_list_add_esl(&db->mok, in->mok.data, in->mok.len, err) < 0) ||
        (in->mokx.len && shim_list_add_esl(&db->mokx, in->mokx.data, in->mokx.len, err) < 0))
        return -1;
    return 0;
}

/* shim.c: the authorized blob of its cert_table, for MokListRT. */
static int keep_authorized(const rs_bytes *sec, rs_bytes *out, rs_error *err)
{
    shim_cert_table t;

    if (shim_cert_table_read(sec->data, sec->len, &t, err) < 0)
        return -1;
    return rs_bytes_append(out, sec->data + t.auth_off, t.auth_size, err);
}

/* What shim brings: its keys, and the SBAT level it applies (checked
 * against its own .sbat first, as shim.c does before anything else). */
static int shim_setup(const char *path, const chain_inputs *in, shim_ctx *c, chain_result *r, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    _cleanup_(stage_facts_free) stage_facts f = { 0 };
    sbat_level_input li = { in->sbat_level, in->sbat_level_attrs_ok, in->sbat_policy };
    char why[RS_ERROR_MAX - 64];
    int revoked;

    if (rs_image_open(&img, path, err) < 0 || read_facts(&img, &f, err) < 0)
        return rs_error_prefix(err, "%s", path);
    r->shim = f.shim;
    r->vendor_cert = f.vendor_cert;
    if (!f.shim)
        return f.grub ? 1 : 0;
    if (load_lists(&c->db, in, err) < 0)
        return -1;
    c->require_nx = in->require_nx;
    if (f.vendor_cert && (shim_db_add_vendor_cert(&c->db, f.vendor_section.data, f.vendor_section.len, err) < 0 ||
                          keep_authorized(&f.vendor_section, &r->vendor_authorized, err) < 0))
        return rs_error_prefix(err, "%s", path);
    if (sbat_level_effective(&f.sbat, &li, &c->level, err) < 0)
        return rs_error_prefix(err, "%s", path);
    c->has_level = true;
    snprintf(r->sbat_source, sizeof(r->sbat_source), "%s", c->level.source);
    revoked = f.shim_sbat.csv ? sbat_check(f.shim_sbat.csv, c->level.csv, why, sizeof(why), err) : 0;
    if (revoked < 0)
        return rs_error_prefix(err, "%s", path);
    if (revoked && r->stages[0].ok)
        refuse(&r->stages[0], "shim's own SBAT self-check (shim.c)", why);
    return 0;
}

static void grub_without_shim(chain_stage *s)
{
    s->verifier = "GRUB started by firmware, without shim";
    refuse(s, "GRUB needs shim_lock (Debian GRUB 2.06 kern/efi/sb.c, loader/i386/efi/linux.c)",
           "under Secure Boot GRUB verifies kernels only through shim's shim_lock protocol, and there is no shim");
}

int chain_verify(const chain_inputs *in, char *const *paths, size_t n, chain_result *r, rs_error *err)
{
    _cleanup_trust_ rs_trust fw = { 0 };
    shim_ctx c = { 0 };
    int kind = 0, rc = -1;

    memset(r, 0, sizeof(*r));
    if (n == 0)
        return rs_fail(err, "no images");
    if (!(r->stages = calloc(n, sizeof(*r->stages))))
        return rs_fail(err, "out of memory");
    if (rs_trust_init(&fw, err) < 0 || uefi_trust_add_esl(&fw, in->db.data, in->db.len, false, err) < 0 ||
        (in->dbx.len && uefi_trust_add_esl(&fw, in->dbx.data, in->dbx.len, true, err) < 0))
        return -1;
    r->stages[0].path = paths[0];
    if (firmware_stage(&fw, &r->stages[0], err) < 0)
        return -1;
    r->n = 1;
    if (n > 1 && (kind = shim_setup(paths[0], in, &c, r, err)) < 0)
        goto out;
    for (size_t i = 1; i < n; i++, r->n++) {
        chain_stage *s = &r->stages[i];

        s->path = paths[i];
        if (r->shim && shim_stage(&c, i > 1, s, err) < 0)
            goto out;
        else if (!r->shim && kind == 1)
            grub_without_shim(s);
        else if (!r->shim && firmware_stage(&fw, s, err) < 0)
            goto out;
    }
    r->ok = true;
    for (size_t i = 0; i < r->n; i++)
        r->ok &= r->stages[i].ok;
    rc = 0;
out:
    if (c.has_level)
        sbat_level_free(&c.level);
    if (r->shim)
        shim_db_free(&c.db);
    return rc;
}

int chain_kernel_keys(const chain_inputs *in, const chain_result *r, const char *builtin, kernel_keys *k,
                      rs_error *err)
{
    kernel_sources src = {
        .builtin = builtin,
        /* The last stage is the kernel that loads the modules. */
        .image = r->n ? r->stages[r->n - 1].path : NULL,
        .db = &in->db,
        .dbx = &in->dbx,
        .mok = &in->mok,
        .mokx = &in->mokx,
        .vendor_cert = r->vendor_authorized.data,
        .vendor_cert_len = r->vendor_authorized.len,
        .ignore_db = in->ignore_db,
    };

    return kernel_keys_load(k, &src, err);
}
