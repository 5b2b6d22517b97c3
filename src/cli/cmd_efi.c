/* reprosign efi: UEFI signature lists, authenticated variables and the
 * OVMF variable store. One small command per job, dispatched by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "crypto/ossl.h"
#include "formats/format.h"
#include "ops/ops.h"
#include "uefi/authvar.h"
#include "uefi/esl.h"
#include "uefi/uefi_trust.h"
#include "uefi/varstore.h"
#include "uefi/varupdate.h"

#define MAX_AUTH_FILE (16u * 1024 * 1024)

static int run(int argc, char **argv);
static const rs_command cmd_siglist, cmd_signvar, cmd_eficlist, cmd_db, cmd_enroll, cmd_apply;

static const rs_command *const subcommands[] = {
    &cmd_siglist, &cmd_signvar, &cmd_eficlist, &cmd_db, &cmd_enroll, &cmd_apply, NULL,
};

const rs_command cmd_efi = {
    .name = "efi",
    .summary = "UEFI signature lists, signed variable updates, OVMF variable stores",
    .usage = "efi SUBCOMMAND ...\n\n"
             "  siglist  (--cert CERT... | --hash FILE...) [--owner GUID] --output ESL\n"
             "  sign-var --name PK|KEK|db|dbx --key KEY --cert CERT [--append] [--timestamp T] ESL --output AUTH\n"
             "  list     (ESL | AUTH | --vars VARSTORE [--name NAME]) [--json]\n"
             "  db       --vars VARSTORE [--name db|dbx|KEK|PK] --output ESL\n"
             "  enroll   --vars TEMPLATE --pk CERT --kek CERT... --db CERT... [--dbx ESL] [--owner GUID]\n"
             "           [--timestamp T] --output VARSTORE\n"
             "  apply    --vars VARSTORE --name PK|KEK|db|dbx AUTH --output VARSTORE\n\n"
             "'reprosign efi SUBCOMMAND --help' describes one.",
    .run = run,
    .subcommands = subcommands,
};

/* ---- shared helpers ---- */

/* T is Unix seconds, "YYYY-MM-DD HH:MM:SS" (sign-efi-sig-list's form) or
 * "YYYY-MM-DDTHH:MM:SSZ"; without it SOURCE_DATE_EPOCH, else the clock. */
static int parse_timestamp(const char *s, uint8_t out[EFI_TIME_SIZE], rs_error *err)
{
    rs_sign_options opts;
    struct tm tm = { 0 };
    const char *end;
    char *num_end;
    long long v;

    if (!s) {
        if (rs_sign_options_init(&opts, NULL, true, err) < 0)
            return -1;
        efi_time_from_unix(opts.time, out);
        return 0;
    }
    v = strtoll(s, &num_end, 10);
    if (*s && !*num_end && v >= 0) {
        efi_time_from_unix((time_t)v, out);
        return 0;
    }
    end = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
    if (!end || *end) {
        memset(&tm, 0, sizeof(tm));
        end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    if (!end || *end)
        return rs_fail(err, "timestamp '%s' is not Unix seconds or YYYY-MM-DD HH:MM:SS", s);
    efi_time_from_unix(timegm(&tm), out);
    return 0;
}

static int parse_owner(const char *s, efi_guid *owner, rs_error *err)
{
    memset(owner, 0, sizeof(*owner));
    return s ? efi_guid_parse(s, owner, err) : 0;
}

static int write_output(const char *path, const rs_bytes *b, rs_error *err)
{
    if (rs_write_file(path, b->data, b->len, 0644, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* Each certificate of a file becomes its own list, as cert-to-efi-sig-list does. */
static int append_cert_lists(rs_bytes *esl, const char *path, const efi_guid *owner, rs_error *err)
{
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *certs = NULL;

    if (rs_load_certs(path, &certs, err) < 0)
        return -1;
    for (int i = 0; i < sk_X509_num(certs); i++) {
        unsigned char *der = NULL;
        int len = i2d_X509(sk_X509_value(certs, i), &der), rc;

        if (len <= 0)
            return rs_fail_ssl(err, "%s: cannot encode certificate", path);
        rc = esl_append_x509(esl, owner, der, (size_t)len, err);
        OPENSSL_free(der);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- siglist ---- */

static int siglist_run(int argc, char **argv);

static const struct option siglist_longopts[] = {
    { "cert", required_argument, NULL, 'c' }, { "hash", required_argument, NULL, 'H' },
    { "owner", required_argument, NULL, 'g' }, { "output", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },        { 0 },
};

static const rs_command cmd_siglist = {
    .name = "efi siglist",
    .usage = "efi siglist (--cert CERT... | --hash FILE...) [--owner GUID] --output ESL\n\n"
             "Writes an EFI_SIGNATURE_LIST file: one X.509 list per certificate, then one\n"
             "SHA-256 list with the Authenticode digest of each EFI image given by --hash.\n"
             "The owner GUID defaults to all zeros, as efitools' default.",
    .run = siglist_run,
    .options = siglist_longopts,
};

/* Firmware looks up the Authenticode digest, so only EFI images qualify. */
static int add_hash(const char *path, rs_digest **hashes, size_t *n, rs_error *err)
{
    _cleanup_image_ rs_image img = { .in.fd = -1 };
    rs_digest *grown = reallocarray(*hashes, *n + 1, sizeof(**hashes));

    if (!grown)
        return rs_fail(err, "out of memory");
    *hashes = grown;
    if (rs_image_open(&img, path, err) < 0)
        return -1;
    if (img.format != &rs_format_pe)
        return rs_fail(err, "%s: not an EFI image (it is %s)", path, img.format->name);
    if (img.format->digest(&img, EVP_sha256(), &grown[*n], err) < 0)
        return rs_error_prefix(err, "%s", path);
    (*n)++;
    return 0;
}

static int siglist_run(int argc, char **argv)
{
    _cleanup_free_ const char **certs = calloc((size_t)argc + 1, sizeof(char *));
    _cleanup_free_ rs_digest *hashes = NULL;
    _cleanup_bytes_ rs_bytes esl = { 0 };
    const char *output = NULL, *owner_s = NULL;
    size_t ncerts = 0, nhashes = 0;
    efi_guid owner;
    rs_error err;
    int c;

    if (!certs)
        return EXIT_FAIL;
    while ((c = cli_getopt(&cmd_siglist, argc, argv, "c:H:g:o:h", siglist_longopts)) != -1) {
        switch (c) {
        case 'c': certs[ncerts++] = optarg; break;
        case 'H':
            if (add_hash(optarg, &hashes, &nhashes, &err) < 0)
                return cli_fail(&err);
            break;
        case 'g': owner_s = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc || !output || (!ncerts && !nhashes))
        return cli_usage(&cmd_siglist, "expected --cert or --hash, and --output");
    if (parse_owner(owner_s, &owner, &err) < 0)
        return cli_usage(&cmd_siglist, "%s", err.msg);
    for (size_t i = 0; i < ncerts; i++)
        if (append_cert_lists(&esl, certs[i], &owner, &err) < 0)
            return cli_fail(&err);
    if (nhashes && esl_append_hashes(&esl, &owner, hashes, nhashes, &err) < 0)
        return cli_fail(&err);
    return write_output(output, &esl, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

/* ---- sign-var ---- */

static int signvar_run(int argc, char **argv);

static const struct option signvar_longopts[] = {
    { "name", required_argument, NULL, 'n' },      { "key", required_argument, NULL, 'k' },
    { "cert", required_argument, NULL, 'c' },      { "append", no_argument, NULL, 'a' },
    { "timestamp", required_argument, NULL, 't' }, { "output", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },            { 0 },
};

static const rs_command cmd_signvar = {
    .name = "efi sign-var",
    .usage = "efi sign-var --name PK|KEK|db|dbx --key KEY --cert CERT [--append] [--timestamp T]\n"
             "             ESL --output AUTH\n\n"
             "Writes a time-based authenticated update (EFI_VARIABLE_AUTHENTICATION_2 followed\n"
             "by the list) for SetVariable: PK signed by PK, KEK by PK, db and dbx by a KEK.\n"
             "--append signs an APPEND_WRITE. T is Unix seconds or \"YYYY-MM-DD HH:MM:SS\" (UTC);\n"
             "the default is SOURCE_DATE_EPOCH, else the current time.",
    .run = signvar_run,
    .options = signvar_longopts,
};

static int signvar_build(const char *name, const char *key, const char *cert, bool append, const char *ts,
                         const char *esl_path, rs_bytes *out, rs_error *err)
{
    _cleanup_(rs_signerp) rs_signer *signer = NULL;
    _cleanup_bytes_ rs_bytes esl = { 0 };
    authvar_target t = { .name = name };

    t.attributes = EFI_SECURE_VAR_ATTRS | (append ? EFI_VARIABLE_APPEND_WRITE : 0);
    if (efi_secure_var(name, &t.guid, err) < 0 || parse_timestamp(ts, t.timestamp, err) < 0 ||
        uefi_read_esl_file(esl_path, &esl, err) < 0)
        return -1;
    if (esl_walk(esl.data, esl.len, NULL, NULL, err) < 0)
        return rs_error_prefix(err, "%s", esl_path);
    if (rs_signer_open(key, cert, &signer, err) < 0)
        return -1;
    return authvar_sign(&t, esl.data, esl.len, signer, out, err);
}

static int signvar_run(int argc, char **argv)
{
    const char *name = NULL, *key = NULL, *cert = NULL, *ts = NULL, *output = NULL;
    _cleanup_bytes_ rs_bytes auth = { 0 };
    bool append = false;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_signvar, argc, argv, "n:k:c:at:o:h", signvar_longopts)) != -1) {
        switch (c) {
        case 'n': name = optarg; break;
        case 'k': key = optarg; break;
        case 'c': cert = optarg; break;
        case 'a': append = true; break;
        case 't': ts = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || !name || !key || !cert || !output)
        return cli_usage(&cmd_signvar, "expected --name, --key, --cert, --output and one ESL");
    if (signvar_build(name, key, cert, append, ts, argv[optind], &auth, &err) < 0 ||
        write_output(output, &auth, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

/* ---- list ---- */

static int list_run(int argc, char **argv);

static const struct option list_longopts[] = {
    { "vars", required_argument, NULL, 'v' }, { "name", required_argument, NULL, 'n' },
    { "all", no_argument, NULL, 'a' },        { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },       { 0 },
};

static const rs_command cmd_eficlist = {
    .name = "efi list",
    .usage = "efi list (ESL | AUTH | --vars VARSTORE [--name NAME] [--all]) [--json]\n\n"
             "Shows the entries of a signature list, of an authenticated update (its\n"
             "timestamp and signer first), or the variables of an OVMF variable store with\n"
             "the lists of PK, KEK, db and dbx decoded. --all includes deleted copies.",
    .run = list_run,
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
    lister l = { doc ? json_array() : NULL, "" };
    char ts[32];

    if (authvar_signer(a, &signer, err) < 0)
        return -1;
    subject = rs_x509_name(X509_get_subject_name(signer));
    efi_time_format(a->timestamp, ts);
    if (!doc)
        printf("timestamp: %s\nsigned by: %s\nsignature: %zu bytes\n", ts, subject ? subject : "?", a->pkcs7_len);
    if (list_esl(a->data, a->data_len, &l, err) < 0)
        return -1;
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
    static const char *const names[] = { "PK", "KEK", "db", "dbx", "dbt", "dbr", "MokList", "MokListX" };

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
    if (!vars)
        printf("%s %s %s %u bytes%s%s%s\n", v->name, guid, attrs, v->data_len, v->active ? "" : " (", 
               v->active ? "" : state, v->active ? "" : ")");
    if (holds_lists(v) && list_esl(varstore_data(vs, v), v->data_len, &l, err) < 0) {
        json_decref(l.entries);
        return rs_error_prefix(err, "variable %s", v->name);
    }
    if (vars)
        json_array_append_new(vars, json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:o*}", "name", v->name, "guid", guid,
                                              "attributes", attrs, "size", (json_int_t)v->data_len, "state", state,
                                              "timestamp", ts, "entries", l.entries));
    return 0;
}

static int list_store(const char *path, const char *name, bool all, json_t *doc, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };
    json_t *vars = doc ? json_array() : NULL;
    bool found = false;

    if (varstore_load(path, &vs, err) < 0) {
        json_decref(vars);
        return -1;
    }
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
    const char *vars = NULL, *name = NULL;
    bool json = false, all = false;
    json_t *doc = NULL;
    rs_error err;
    int c, rc;

    while ((c = cli_getopt(&cmd_eficlist, argc, argv, "v:n:ajh", list_longopts)) != -1) {
        switch (c) {
        case 'v': vars = optarg; break;
        case 'n': name = optarg; break;
        case 'a': all = true; break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if ((vars && optind != argc) || (!vars && (optind + 1 != argc || name)))
        return cli_usage(&cmd_eficlist, "expected one ESL or AUTH file, or --vars VARSTORE");
    if (json)
        doc = json_pack("{s:s}", "file", vars ? vars : argv[optind]);
    rc = vars ? list_store(vars, name, all, doc, &err) : list_file(argv[optind], doc, &err);
    if (rc < 0) {
        json_decref(doc);
        return cli_fail(&err);
    }
    return json ? cli_json_print(doc) : EXIT_OK;
}

/* ---- db ---- */

static int db_run(int argc, char **argv);

static const struct option db_longopts[] = {
    { "vars", required_argument, NULL, 'v' },   { "name", required_argument, NULL, 'n' },
    { "output", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_command cmd_db = {
    .name = "efi db",
    .usage = "efi db --vars VARSTORE [--name db|dbx|KEK|PK] --output ESL\n\n"
             "Writes the signature list a variable store holds for db (or another variable).",
    .run = db_run,
    .options = db_longopts,
};

static int db_run(int argc, char **argv)
{
    _cleanup_varstore_ varstore vs = { 0 };
    const char *vars = NULL, *name = "db", *output = NULL;
    const efi_guid *guid;
    const vs_var *v;
    rs_bytes data;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_db, argc, argv, "v:n:o:h", db_longopts)) != -1) {
        switch (c) {
        case 'v': vars = optarg; break;
        case 'n': name = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc || !vars || !output)
        return cli_usage(&cmd_db, "expected --vars and --output");
    if (efi_secure_var(name, &guid, &err) < 0)
        return cli_usage(&cmd_db, "%s", err.msg);
    if (varstore_load(vars, &vs, &err) < 0)
        return cli_fail(&err);
    v = varstore_find(&vs, name, guid);
    if (!v) {
        rs_fail(&err, "%s: the variable store has no %s", vars, name);
        return cli_fail(&err);
    }
    data = (rs_bytes){ .data = (uint8_t *)varstore_data(&vs, v), .len = v->data_len };
    return write_output(output, &data, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

/* ---- enroll ---- */

static int enroll_run(int argc, char **argv);

static const struct option enroll_longopts[] = {
    { "vars", required_argument, NULL, 'v' },      { "pk", required_argument, NULL, 'P' },
    { "kek", required_argument, NULL, 'K' },       { "db", required_argument, NULL, 'D' },
    { "dbx", required_argument, NULL, 'X' },       { "owner", required_argument, NULL, 'g' },
    { "timestamp", required_argument, NULL, 't' }, { "output", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },            { 0 },
};

static const rs_command cmd_enroll = {
    .name = "efi enroll",
    .usage = "efi enroll --vars TEMPLATE --pk CERT --kek CERT... --db CERT... [--dbx ESL]\n"
             "           [--owner GUID] [--timestamp T] --output VARSTORE\n\n"
             "Writes a copy of an OVMF variable store (e.g. the empty OVMF_VARS_4M.fd) with\n"
             "PK, KEK, db and optionally dbx set, as firmware stores them after signed\n"
             "updates: the firmware starts in User Mode with Secure Boot enforcing.",
    .run = enroll_run,
    .options = enroll_longopts,
};

typedef struct enroll_args {
    const char *vars, *pk, *dbx, *owner, *timestamp, *output;
    const char **kek, **db;
    size_t nkek, ndb;
} enroll_args;

static int set_certs(varstore *vs, const char *name, const char *const *paths, size_t n, const efi_guid *owner,
                     const uint8_t ts[EFI_TIME_SIZE], rs_error *err)
{
    _cleanup_bytes_ rs_bytes esl = { 0 };
    const efi_guid *guid;

    for (size_t i = 0; i < n; i++)
        if (append_cert_lists(&esl, paths[i], owner, err) < 0)
            return -1;
    if (efi_secure_var(name, &guid, err) < 0)
        return -1;
    return varstore_set(vs, name, guid, EFI_SECURE_VAR_ATTRS, ts, esl.data, esl.len, err);
}

static int set_dbx(varstore *vs, const char *path, const uint8_t ts[EFI_TIME_SIZE], rs_error *err)
{
    _cleanup_bytes_ rs_bytes esl = { 0 };

    if (uefi_read_esl_file(path, &esl, err) < 0)
        return -1;
    if (esl_walk(esl.data, esl.len, NULL, NULL, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return varstore_set(vs, "dbx", &efi_guid_image_security, EFI_SECURE_VAR_ATTRS, ts, esl.data, esl.len, err);
}

/* PK last: the firmware leaves Setup Mode when it appears. */
static int enroll(const enroll_args *a, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };
    uint8_t ts[EFI_TIME_SIZE];
    efi_guid owner;

    if (parse_owner(a->owner, &owner, err) < 0 || parse_timestamp(a->timestamp, ts, err) < 0 ||
        varstore_load(a->vars, &vs, err) < 0)
        return -1;
    if (set_certs(&vs, "db", a->db, a->ndb, &owner, ts, err) < 0 || (a->dbx && set_dbx(&vs, a->dbx, ts, err) < 0) ||
        set_certs(&vs, "KEK", a->kek, a->nkek, &owner, ts, err) < 0 ||
        set_certs(&vs, "PK", &a->pk, 1, &owner, ts, err) < 0)
        return rs_error_prefix(err, "%s", a->vars);
    return write_output(a->output, &vs.image, err);
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
    while ((c = cli_getopt(&cmd_enroll, argc, argv, "v:P:K:D:X:g:t:o:h", enroll_longopts)) != -1) {
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
    if (optind != argc || !a.vars || !a.pk || !a.nkek || !a.ndb || !a.output)
        return cli_usage(&cmd_enroll, "expected --vars, --pk, --kek, --db and --output");
    return enroll(&a, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

/* ---- apply ---- */

static int apply_run(int argc, char **argv);

static const struct option apply_longopts[] = {
    { "vars", required_argument, NULL, 'v' },   { "name", required_argument, NULL, 'n' },
    { "output", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_command cmd_apply = {
    .name = "efi apply",
    .usage = "efi apply --vars VARSTORE --name PK|KEK|db|dbx AUTH --output VARSTORE\n\n"
             "Applies a signed update (from 'efi sign-var' or sign-efi-sig-list) to a variable\n"
             "store with the firmware's checks: the signer must be allowed to write the\n"
             "variable, a replacement must be newer than the stored one, and an append adds\n"
             "only entries the variable does not have yet.",
    .run = apply_run,
    .options = apply_longopts,
};

static int apply(const char *vars, const char *name, const char *auth_path, const char *output, rs_error *err)
{
    _cleanup_varstore_ varstore vs = { 0 };
    _cleanup_(uefi_update_free) uefi_update u = { 0 };
    _cleanup_bytes_ rs_bytes auth = { 0 };

    if (varstore_load(vars, &vs, err) < 0)
        return -1;
    if (rs_read_file(auth_path, MAX_AUTH_FILE, &auth, err) < 0 ||
        uefi_apply_auth(&vs, name, auth.data, auth.len, &u, err) < 0)
        return rs_error_prefix(err, "%s", auth_path);
    if (write_output(output, &vs.image, err) < 0)
        return -1;
    printf("%s: %s %s, signed by %s\n", output, u.append ? "appended to" : "replaced", name,
           u.signer ? u.signer : "?");
    return 0;
}

static int apply_run(int argc, char **argv)
{
    const char *vars = NULL, *name = NULL, *output = NULL;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_apply, argc, argv, "v:n:o:h", apply_longopts)) != -1) {
        switch (c) {
        case 'v': vars = optarg; break;
        case 'n': name = optarg; break;
        case 'o': output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || !vars || !name || !output)
        return cli_usage(&cmd_apply, "expected --vars, --name, --output and one AUTH file");
    return apply(vars, name, argv[optind], output, &err) < 0 ? cli_fail(&err) : EXIT_OK;
}

/* ---- dispatch ---- */

static int run(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(&cmd_efi, "expected a subcommand");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        cli_help(&cmd_efi);
        return EXIT_OK;
    }
    for (size_t i = 0; subcommands[i]; i++)
        if (!strcmp(argv[1], subcommands[i]->name + 4))
            return subcommands[i]->run(argc - 1, argv + 1);
    return cli_usage(&cmd_efi, "unknown subcommand '%s'", argv[1]);
}
