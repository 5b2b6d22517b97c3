/* reprosign efi enroll */

#include "cli/cli.h"
#include "cli/efi_common.h"
#include "uefi/esl.h"
#include "uefi/uefi_trust.h"
#include "uefi/varstore.h"

static int enroll_run(int argc, char **argv);

static const struct option enroll_longopts[] = {
    { "vars", required_argument, NULL, 'v' },      { "pk", required_argument, NULL, 'P' },
    { "kek", required_argument, NULL, 'K' },       { "db", required_argument, NULL, 'D' },
    { "dbx", required_argument, NULL, 'X' },       { "owner", required_argument, NULL, 'g' },
    { "timestamp", required_argument, NULL, 't' }, { "output", required_argument, NULL, 'o' },
    { "microsoft", optional_argument, NULL, 'M' }, { "help", no_argument, NULL, 'h' },
    { 0 },
};

/* Debian's ovmf ships Microsoft's KEK and db (the Windows Production PCA
 * and the UEFI CA) enrolled in this store. */
#define MICROSOFT_VARS "/usr/share/OVMF/OVMF_VARS_4M.ms.fd"

static const rs_optdoc efi_enroll_docs[] = {
    { "vars", "TEMPLATE",
      "The variable store to start from, e.g. the empty OVMF_VARS_4M.fd (required).",
      NULL },
    { "pk", "CERT",
      "The platform key's certificate (required).",
      NULL },
    { "kek", "CERT",
      "A KEK certificate or signature list; may be repeated (required).",
      NULL },
    { "db", "CERT",
      "A db certificate or signature list; may be repeated (required).",
      NULL },
    { "dbx", "ESL",
      "A dbx signature list.",
      "no dbx" },
    { "microsoft", "VARSTORE",
      "Also enroll Microsoft's KEK and db lists, read from VARSTORE.\n"
      "Leaving them out can leave a machine with option ROMs without a screen or boot.",
      "/usr/share/OVMF/OVMF_VARS_4M.ms.fd" },
    { "owner", "GUID",
      "The SignatureOwner of the entries made from certificates.",
      "00000000-0000-0000-0000-000000000000" },
    { "timestamp", "T",
      "The variables' time: Unix seconds or \"YYYY-MM-DD HH:MM:SS\" (UTC).",
      "SOURCE_DATE_EPOCH, else the current time" },
    { "output", "VARSTORE",
      "Where the new variable store goes (required).",
      NULL },
    { 0 },
};

const rs_command cmd_efi_enroll = {
    .name = "efi enroll",
    .usage = "efi enroll --vars TEMPLATE --pk CERT --kek CERT... --db CERT... [--dbx ESL]\n"
             "           [--microsoft[=VARSTORE]] [--owner GUID] [--timestamp T] --output VARSTORE\n\n"
             "Writes a copy of an OVMF variable store (e.g. the empty OVMF_VARS_4M.fd) with\n"
             "PK, KEK, db and optionally dbx set, as firmware stores them after signed\n"
             "updates: the firmware starts in User Mode with Secure Boot enforcing. For\n"
             "arm64, start from AAVMF_VARS.ms.fd: AAVMF's blank store is all zeros until\n"
             "the firmware's first boot formats it. Each --kek and --db is a certificate\n"
             "file (PEM or DER) or a signature list (ESL).\n\n"
             "--microsoft adds Microsoft's KEK and db lists (the Microsoft KEK CA, the\n"
             "Windows Production PCA and the UEFI CA that signs shim and option ROMs),\n"
             "read from VARSTORE (default " MICROSOFT_VARS ", from Debian's\n"
             "ovmf). Leave them out only knowing the machine needs no option ROM: a\n"
             "graphics, network or storage card's firmware is signed by Microsoft's UEFI CA,\n"
             "and without it such a machine may show no screen and boot nothing.",
    .run = enroll_run,
    .optdocs = efi_enroll_docs,
    .example = "reprosign efi enroll --vars /usr/share/OVMF/OVMF_VARS_4M.fd --pk keys/PK.crt\n"
               "    --kek keys/KEK.crt --db keys/db.crt --microsoft --owner $(cat keys/GUID)\n"
               "    --output vars.fd",
    .options = enroll_longopts,
};

typedef struct enroll_args {
    const char *vars, *pk, *dbx, *owner, *timestamp, *output, *microsoft;
    const char **kek, **db;
    size_t nkek, ndb;
} enroll_args;

/* Microsoft's signature owner (SignatureOwner of its published lists). */
static const efi_guid microsoft_owner = { { 0xbd, 0x9a, 0xfa, 0x77, 0x59, 0x03, 0x32, 0x4d, 0xbd, 0x60, 0x28, 0xf4,
                                            0xe7, 0x8f, 0x78, 0x4b } };

static int keep_microsoft(void *ctx, const esl_entry *e, rs_error *err)
{
    if (!efi_guid_equal(&e->owner, &microsoft_owner) || !efi_guid_equal(&e->type, &efi_guid_cert_x509))
        return 0;
    return esl_append_x509(ctx, &e->owner, e->data, e->len, err);
}

/* Microsoft's certificates in variable name of another store: that
 * store may hold others' too (Debian's ovmf enrolls Debian's KEK). */
static int append_from_store(rs_bytes *esl, const char *path, const char *name, const efi_guid *guid,
                             rs_error *err)
{
    _cleanup_varstore_ varstore from = { 0 };
    const vs_var *v;
    size_t before = esl->len;

    if (varstore_load(path, &from, err) < 0)
        return -1;
    if (!(v = varstore_find(&from, name, guid)))
        return rs_fail(err, "%s: holds no %s to take Microsoft's keys from", path, name);
    if (esl_walk(varstore_data(&from, v), v->data_len, keep_microsoft, esl, err) < 0)
        return rs_error_prefix(err, "%s: %s", path, name);
    return esl->len > before ? 0 : rs_fail(err, "%s: its %s holds no certificate of Microsoft's", path, name);
}

/* Where the variables go: a store read from `path`, each written with
 * the same owner and timestamp. */
typedef struct target {
    varstore vs;
    const char *path;
    efi_guid owner;
    uint8_t ts[EFI_TIME_SIZE];
} target;

static void target_free(target *t)
{
    varstore_free(&t->vs);
}

/* A variable into the store: what fails here is the store's (full, not
 * erased), so it is named, where a certificate file names itself. */
static int store(target *t, const char *name, const efi_guid *guid, const rs_bytes *esl, rs_error *err)
{
    if (varstore_set(&t->vs, name, guid, EFI_SECURE_VAR_ATTRS, t->ts, esl->data, esl->len, err) < 0)
        return rs_error_prefix(err, "%s", t->path);
    return 0;
}

static int set_certs(target *t, const char *name, const char *const *paths, size_t n, const char *microsoft,
                     rs_error *err)
{
    _cleanup_bytes_ rs_bytes esl = { 0 };
    const efi_guid *guid;

    if (efi_secure_var(name, &guid, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (efi_append_cert_lists(&esl, paths[i], &t->owner, err) < 0)
            return -1;
    if (microsoft && append_from_store(&esl, microsoft, name, guid, err) < 0)
        return -1;
    return store(t, name, guid, &esl, err);
}

static int set_dbx(target *t, const char *path, rs_error *err)
{
    _cleanup_bytes_ rs_bytes esl = { 0 };

    if (uefi_read_esl_file(path, &esl, err) < 0)
        return -1;
    if (esl_walk(esl.data, esl.len, NULL, NULL, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return store(t, "dbx", &efi_guid_image_security, &esl, err);
}

/* PK last: the firmware leaves Setup Mode when it appears. */
static int enroll(const enroll_args *a, rs_error *err)
{
    _cleanup_(target_free) target t = { .path = a->vars };

    if (efi_parse_owner(a->owner, &t.owner, err) < 0 || efi_parse_timestamp(a->timestamp, t.ts, err) < 0 ||
        varstore_load(a->vars, &t.vs, err) < 0)
        return -1;
    if (set_certs(&t, "db", a->db, a->ndb, a->microsoft, err) < 0 || (a->dbx && set_dbx(&t, a->dbx, err) < 0) ||
        set_certs(&t, "KEK", a->kek, a->nkek, a->microsoft, err) < 0 || set_certs(&t, "PK", &a->pk, 1, NULL, err) < 0)
        return -1;
    return varstore_write(&t.vs, a->output, err);
}

static int enroll_run(int argc, char **argv)
{
    _cleanup_free_ const char **kek = calloc((size_t)argc + 1, sizeof(char *));
    _cleanup_free_ const char **db = calloc((size_t)argc + 1, sizeof(char *));
    enroll_args a = { 0 };
    rs_error err;
    int c;

    if (!kek || !db)
        return EXIT_FAIL;
    a.kek = kek;
    a.db = db;
    while ((c = cli_getopt(&cmd_efi_enroll, argc, argv, "h", enroll_longopts)) != -1) {
        if (c == 'M') {
            a.microsoft = optarg ? optarg : MICROSOFT_VARS;
            continue;
        }
        switch (c) {
        case 'v': a.vars = optarg; break;
        case 'P': a.pk = optarg; break;
        case 'K': kek[a.nkek++] = optarg; break;
        case 'D': db[a.ndb++] = optarg; break;
        case 'X': a.dbx = optarg; break;
        case 'g': a.owner = optarg; break;
        case 't': a.timestamp = optarg; break;
        case 'o': a.output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc || !a.vars || !a.pk || (!a.microsoft && (!a.nkek || !a.ndb)) || !a.output)
        return cli_usage(&cmd_efi_enroll, "expected --vars, --pk, --kek, --db (or --microsoft) and --output");
    return enroll(&a, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}
