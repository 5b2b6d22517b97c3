/* reprosign efi list */

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
    char fp[65];

    if (!cert)
        return json_pack("{s:s}", "error", "not a DER certificate");
    subject = rs_x509_name(X509_get_subject_name(cert));
    issuer = rs_x509_name(X509_get_issuer_name(cert));
    rs_x509_fingerprint(cert, fp);
    return json_pack("{s:s?, s:s?, s:s}", "subject", subject, "issuer", issuer, "sha256", fp);
}

static json_t *entry_json(const esl_entry *e)
{
    char type[EFI_GUID_STR], owner[EFI_GUID_STR], hex[2 * 64 + 1];
    const char *tname = efi_guid_name(&e->type);
    json_t *j;

    efi_guid_format(&e->type, type);
    efi_guid_format(&e->owner, owner);
    if (efi_guid_equal(&e->type, &efi_guid_cert_x509))
        j = cert_json(e);
    else {
        rs_hex(e->data, e->len < 64 ? e->len : 64, hex);
        j = json_pack("{s:s}", "hash", hex);
    }
    json_object_set_new(j, "list", json_integer((json_int_t)e->list));
    json_object_set_new(j, "type", json_string(tname ? tname : type));
    json_object_set_new(j, "owner", json_string(owner));
    return j;
}

static int print_entry(void *ctx, const esl_entry *e, rs_error *err)
{
    lister *l = ctx;
    json_t *j = entry_json(e);
    const char *subject = json_string_value(json_object_get(j, "subject"));
    const char *hash = json_string_value(json_object_get(j, "hash"));

    if (l->entries) {
        json_array_append_new(l->entries, j);
        return 0;
    }
    printf("%slist %zu: %s owner %s: ", l->indent, e->list, json_string_value(json_object_get(j, "type")),
           json_string_value(json_object_get(j, "owner")));
    if (subject)
        printf("%s (sha256 %s)\n", subject, json_string_value(json_object_get(j, "sha256")));
    else
        printf("%s\n", hash ? hash : json_string_value(json_object_get(j, "error")));
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
        json_object_set_new(doc, "auth", json_pack("{s:s, s:s?, s:I, s:o}", "timestamp", ts, "signer", subject,
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

static int list_var(const varstore *vs, const vs_var *v, json_t *vars, rs_error *err)
{
    char guid[EFI_GUID_STR], attrs[32], ts[32];
    const char *state = v->active ? "active" : v->state == VAR_ADDED ? "added" : "deleted";
    lister l = { vars ? json_array() : NULL, "    " };

    efi_guid_format(&v->guid, guid);
    attr_string(v->attributes, attrs, sizeof(attrs));
    efi_time_format(v->timestamp, ts);
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
        json_array_append_new(vars, json_pack("{s:s, s:s, s:s, s:I, s:s, s:s*, s:o*, s:o*}", "name", v->name, "guid",
                                              guid, "attributes", attrs, "size", (json_int_t)v->data_len, "state",
                                              state, "timestamp", vs->runtime ? NULL : ts, "entries", l.entries,
                                              "value", v->data_len == 1 ? json_integer(varstore_data(vs, v)[0])
                                                                        : NULL));
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
