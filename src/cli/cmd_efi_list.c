/* reprosign efi list */

#include "base/json_values.h"
#include "cli/cli.h"
#include "cli/efi_common.h"
#include "crypto/ossl.h"
#include "ops/ops.h"
#include "uefi/authvar.h"
#include "uefi/efivarfs.h"
#include "uefi/esl.h"
#include "uefi/varupdate.h"

static int list_run(int argc, char **argv);

static const struct option list_longopts[] = {
    { "vars", required_argument, NULL, 'v' }, { "efivars", required_argument, NULL, 'E' },
    { "name", required_argument, NULL, 'n' },
    { "all", no_argument, NULL, 'a' },        { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },       { 0 },
};

static const rs_optdoc efi_list_docs[] = {
    { "vars", "VARSTORE",
      "List the variables of an OVMF variable store.",
      NULL },
    { "efivars", "DIR",
      "List a running machine's variables: efivarfs, or a copy of its NAME-GUID files.",
      "/sys/firmware/efi/efivars when no file, --vars or --efivars is given on a\n"
      "machine booted through UEFI" },
    { "name", "NAME",
      "Only this variable (PK, KEK, db, dbx, MokList...).",
      "all" },
    { "all", NULL,
      "Include deleted copies of variables.",
      NULL },
    { "json", NULL,
      "Print one JSON document.",
      NULL },
    { 0 },
};

const rs_command cmd_efi_list = {
    .name = "efi list",
    .usage = "efi list [ESL | AUTH | --vars VARSTORE [--all] | --efivars DIR] [--name NAME] [--json]\n\n"
             "Shows the entries of a signature list, of an authenticated update (its\n"
             "timestamp and signer first), or the variables of an OVMF variable store or of\n"
             "a running machine with the lists of PK, KEK, db, dbx and MokList decoded, and\n"
             "the value of one-byte variables (SecureBoot, SetupMode). --all includes\n"
             "deleted copies. With no argument, on a machine booted through UEFI, lists\n"
             "the machine's own variables (/sys/firmware/efi/efivars). A running machine\n"
             "shows shim's variables as their runtime mirrors (MokListRT, MokListXRT,\n"
             "SbatLevelRT) and no timestamps.",
    .run = list_run,
    .optdocs = efi_list_docs,
    .example = "reprosign efi list --vars /usr/share/OVMF/OVMF_VARS_4M.ms.fd --name db",
    .options = list_longopts,
};

typedef struct lister {
    json_t *entries;         /* JSON mode, else NULL */
    const char *indent;
} lister;

static json_t *cert_json(const esl_entry *e)
{
    const unsigned char *p = e->data;
    _cleanup_(rs_x509p) X509 *cert = d2i_X509(NULL, &p, (long)e->len);
    _cleanup_free_ char *subject = NULL, *issuer = NULL;
    unsigned char fp[EVP_MAX_MD_SIZE];
    unsigned fp_len = 0;
    const EVP_MD *sha256;

    if (!cert)
        return json_pack("{s:s}", "error", "not a DER certificate");
    subject = rs_x509_name(X509_get_subject_name(cert));
    issuer = rs_x509_name(X509_get_issuer_name(cert));
    if (rs_md_by_name("sha256", &sha256, NULL) < 0 || !X509_digest(cert, sha256, fp, &fp_len))
        fp_len = 0;
    return json_pack("{s:s*, s:s*, s:o*}", "subject", subject, "issuer", issuer, "fingerprint",
                     rs_json_digest("sha256", fp, fp_len));
}

/* A hash entry as a digest: EFI_CERT_SHAxxx hold the hash of an image,
 * EFI_CERT_X509_SHA256 the hash of a certificate's TBSCertificate and the
 * time of its revocation. Any other type's data is hex. */
static json_t *hash_json(const esl_entry *e)
{
    static const struct {
        const efi_guid *type;
        const char *alg;
        size_t len;
    } kinds[] = {
        { &efi_guid_cert_sha1, "sha1", 20 },     { &efi_guid_cert_sha256, "sha256", 32 },
        { &efi_guid_cert_sha384, "sha384", 48 }, { &efi_guid_cert_sha512, "sha512", 64 },
        { &efi_guid_cert_x509_sha256, "sha256", 32 + EFI_TIME_SIZE },
    };
    _cleanup_free_ char *hex = NULL;
    time_t revoked;

    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (!efi_guid_equal(&e->type, kinds[i].type) || e->len != kinds[i].len)
            continue;
        if (e->len == 32 + EFI_TIME_SIZE)
            return json_pack("{s:o, s:o*}", "hash", rs_json_digest("sha256", e->data, 32), "revoked_at",
                             efi_time_to_unix(e->data + 32, &revoked) ? rs_json_time(revoked) : NULL);
        return json_pack("{s:o}", "hash", rs_json_digest(kinds[i].alg, e->data, e->len));
    }
    if (!(hex = malloc(2 * e->len + 1)))
        return NULL;
    rs_hex(e->data, e->len, hex);
    return json_pack("{s:s}", "data", hex);
}

static json_t *entry_json(const esl_entry *e)
{
    char type[EFI_GUID_STR], owner[EFI_GUID_STR];
    const char *tname = efi_guid_name(&e->type);
    json_t *j, *what = efi_guid_equal(&e->type, &efi_guid_cert_x509) ? cert_json(e) : hash_json(e);

    efi_guid_format(&e->type, type);
    efi_guid_format(&e->owner, owner);
    j = json_pack("{s:I, s:s, s:s}", "list", (json_int_t)e->list, "type", tname ? tname : type, "owner", owner);
    if (!j || !what || json_object_update(j, what) < 0) {
        json_decref(j);
        j = NULL;
    }
    json_decref(what);
    return j;
}

/* The text form: the JSON's values, digests without their "ALG:". */
static const char *bare(json_t *j, const char *key)
{
    const char *v = json_string_value(json_object_get(j, key)), *colon = v ? strchr(v, ':') : NULL;

    return colon ? colon + 1 : v;
}

static int print_entry(void *ctx, const esl_entry *e, rs_error *err)
{
    lister *l = ctx;
    json_t *j = entry_json(e);
    const char *subject = bare(j, "subject"), *hash = bare(j, "hash");

    if (!j)
        return rs_fail(err, "out of memory");
    if (l->entries) {
        json_array_append_new(l->entries, j);
        return 0;
    }
    printf("%slist %zu: %s owner %s: ", l->indent, e->list, bare(j, "type"), bare(j, "owner"));
    if (subject)
        printf("%s (sha256 %s)\n", subject, bare(j, "fingerprint"));
    else
        printf("%s\n", hash ? hash : bare(j, "data") ? bare(j, "data") : bare(j, "error"));
    json_decref(j);
    return 0;
}

static int list_esl(const uint8_t *buf, size_t len, lister *l, rs_error *err)
{
    return esl_walk(buf, len, print_entry, l, err);
}

static int list_auth(const authvar *a, json_t *doc, rs_error *err)
{
    _cleanup_(rs_x509p) X509 *signer = NULL;
    _cleanup_free_ char *subject = NULL;
    lister l = { NULL, "" };
    time_t when;
    char ts[32];

    if (authvar_signer(a, &signer, err) < 0)
        return -1;
    subject = rs_x509_name(X509_get_subject_name(signer));
    efi_time_format(a->timestamp, ts);
    if (!doc)
        printf("timestamp: %s\nsigned by: %s\nsignature: %zu bytes\n", ts, subject ? subject : "?", a->pkcs7_len);
    l.entries = doc ? json_array() : NULL;
    if (list_esl(a->data, a->data_len, &l, err) < 0) {
        json_decref(l.entries);
        return -1;
    }
    if (doc)
        json_object_set_new(doc, "auth", json_pack("{s:o*, s:s*, s:I, s:o}", "timestamp",
                                                   efi_time_to_unix(a->timestamp, &when) ? rs_json_time(when) : NULL,
                                                   "signer", subject,
                                                   "signature_length", (json_int_t)a->pkcs7_len, "entries",
                                                   l.entries));
    return 0;
}

/* An authenticated update starts with a WIN_CERTIFICATE header that a
 * signature list cannot carry, so try that reading first. */
static int list_file(const char *path, json_t *doc, rs_error *err)
{
    _cleanup_bytes_ rs_bytes buf = { 0 };
    rs_error not_auth;
    authvar a;
    lister l = { doc ? json_array() : NULL, "" };

    if (rs_read_file(path, MAX_AUTH_FILE, &buf, err) < 0)
        return rs_error_prefix(err, "%s", path);
    if (authvar_parse(buf.data, buf.len, &a, &not_auth) == 0) {
        json_decref(l.entries);
        return list_auth(&a, doc, err) < 0 ? rs_error_prefix(err, "%s", path) : 0;
    }
    if (list_esl(buf.data, buf.len, &l, err) < 0) {
        json_decref(l.entries);
        return rs_error_prefix(err, "%s", path);
    }
    if (doc)
        json_object_set_new(doc, "entries", l.entries);
    return 0;
}

static bool holds_lists(const vs_var *v)
{
    static const char *const names[] = { "PK",      "KEK",      "db",        "dbx",       "dbt",
                                         "dbr",     "MokList",  "MokListX",  "MokListRT", "MokListXRT" };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(v->name, names[i]))
            return true;
    return false;
}

static void attr_string(uint32_t a, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s%s%s", a & EFI_VARIABLE_NON_VOLATILE ? "NV," : "",
             a & EFI_VARIABLE_BOOTSERVICE_ACCESS ? "BS," : "", a & EFI_VARIABLE_RUNTIME_ACCESS ? "RT," : "",
             a & EFI_VARIABLE_TIME_BASED_AUTHENTICATED_WRITE_ACCESS ? "AT," : "",
             a & EFI_VARIABLE_APPEND_WRITE ? "AP," : "");
    if (*out)
        out[strlen(out) - 1] = '\0';
}

/* A store or a machine with SetupMode set, or with no PK (a store file
 * keeps no SetupMode; the firmware derives it from PK). */
static bool in_setup_mode(const varstore *vs)
{
    const vs_var *mode = varstore_find(vs, "SetupMode", &efi_guid_global);

    if (mode)
        return mode->data_len == 1 && varstore_data(vs, mode)[0] == 1;
    return !varstore_find(vs, "PK", &efi_guid_global);
}

static int list_var(const varstore *vs, const vs_var *v, json_t *vars, rs_error *err)
{
    char guid[EFI_GUID_STR], attrs[32];
    time_t when;
    const char *state = v->active ? "active" : v->state == VAR_ADDED ? "added" : "deleted";
    lister l = { vars && holds_lists(v) ? json_array() : NULL, "    " };

    efi_guid_format(&v->guid, guid);
    attr_string(v->attributes, attrs, sizeof(attrs));
    if (!vars) {
        printf("%s %s %s %u bytes%s%s%s", v->name, guid, attrs, v->data_len, v->active ? "" : " (",
               v->active ? "" : state, v->active ? "" : ")");
        printf(v->data_len == 1 ? ": %u\n" : "\n", v->data_len == 1 ? varstore_data(vs, v)[0] : 0);
    }
    if (holds_lists(v) && list_esl(varstore_data(vs, v), v->data_len, &l, err) < 0) {
        json_decref(l.entries);
        return rs_error_prefix(err, "variable %s", v->name);
    }
    if (vars)
        json_array_append_new(vars, json_pack("{s:s, s:s, s:s, s:I, s:s, s:o*, s:o*, s:o*}", "name", v->name, "guid",
                                              guid, "attributes", attrs, "size", (json_int_t)v->data_len, "state",
                                              state, "timestamp",
                                              !vs->runtime && efi_time_to_unix(v->timestamp, &when) ? rs_json_time(when)
                                                                                                   : NULL,
                                              "entries", l.entries, "value",
                                              v->data_len == 1 ? json_integer(varstore_data(vs, v)[0]) : NULL));
    return 0;
}

static int list_store(const char *path, bool efivars, const char *name, bool all, json_t *doc, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };
    json_t *vars;
    bool found = false;

    if ((efivars ? efivarfs_load(path, &vs, err) : varstore_load(path, &vs, err)) < 0)
        return -1;
    vars = doc ? json_array() : NULL;
    for (size_t i = 0; i < vs.n; i++) {
        const vs_var *v = &vs.vars[i];

        if ((!all && !v->active) || (name && strcmp(name, v->name)))
            continue;
        found = true;
        if (list_var(&vs, v, vars, err) < 0) {
            json_decref(vars);
            return rs_error_prefix(err, "%s", path);
        }
    }
    if (doc)
        json_object_set_new(doc, "variables", vars);
    if (name && !found)
        return rs_fail(err, "%s: no variable named %s", path, name);
    if (!doc && !name && in_setup_mode(&vs))
        fputs(efivars ? efi_setup_mode_advice : efi_setup_mode_advice_store, stdout);
    return 0;
}

static int list_run(int argc, char **argv)
{
    const char *vars = NULL, *efivars = NULL, *name = NULL;
    bool json = false, all = false;
    json_t *doc = NULL;
    rs_error err;
    int c, rc;

    while ((c = cli_getopt(&cmd_efi_list, argc, argv, "h", list_longopts)) != -1) {
        switch (c) {
        case 'v': vars = optarg; break;
        case 'E': efivars = optarg; break;
        case 'n': name = optarg; break;
        case 'a': all = true; break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (!vars && !efivars && optind == argc && efivarfs_booted_uefi())
        efivars = EFIVARFS_DIR;
    if ((vars && efivars) || ((vars || efivars) && optind != argc) || (!vars && !efivars && (optind + 1 != argc || name)))
        return cli_usage(&cmd_efi_list, "expected one ESL or AUTH file, --vars VARSTORE or --efivars DIR");
    if (efivars && all)
        return cli_usage(&cmd_efi_list, "--all: a running machine keeps no deleted copies");
    if (json)
        doc = json_pack("{s:s}", "file", vars ? vars : efivars ? efivars : argv[optind]);
    rc = vars || efivars ? list_store(vars ? vars : efivars, efivars != NULL, name, all, doc, &err)
                         : list_file(argv[optind], doc, &err);
    if (rc < 0) {
        json_decref(doc);
        return cli_fail(&err);
    }
    return json ? cli_json_print(doc) : EXIT_OK;
}
