/* Helpers shared by the efi subcommands. */

#include "cli/cli.h"
#include "cli/efi_common.h"

#include "uefi/esl.h"
#include "uefi/uefi_trust.h"
#include "crypto/ossl.h"
#include "ops/ops.h"
#include "uefi/esl.h"

/* T is Unix seconds, "YYYY-MM-DD HH:MM:SS" (sign-efi-sig-list's form) or
 * "YYYY-MM-DDTHH:MM:SSZ"; without it SOURCE_DATE_EPOCH, else the clock. */
int efi_parse_timestamp(const char *s, uint8_t out[EFI_TIME_SIZE], rs_error *err)
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

int efi_parse_owner(const char *s, efi_guid *owner, rs_error *err)
{
    memset(owner, 0, sizeof(*owner));
    return s ? efi_guid_parse(s, owner, err) : 0;
}

int efi_write_output(const char *path, const rs_bytes *b, rs_error *err)
{
    if (rs_write_file(path, b->data, b->len, 0644, err) < 0)
        return rs_error_prefix(err, "%s", path);
    return 0;
}

/* Each certificate of a file becomes its own list, as cert-to-efi-sig-list does. */
int efi_append_cert_lists(rs_bytes *esl, const char *path, const efi_guid *owner, rs_error *err)
{
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *certs = NULL;
    _cleanup_bytes_ rs_bytes lists = { 0 };
    rs_error not_lists;

    /* A signature list is taken as it is, with its own owners (Microsoft's
     * are published as lists). */
    if (uefi_read_esl_file(path, &lists, &not_lists) == 0 && lists.len &&
        esl_walk(lists.data, lists.len, NULL, NULL, &not_lists) == 0)
        return rs_bytes_append(esl, lists.data, lists.len, err);
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

const struct option efi_store_write_longopts[] = {
    { "vars", required_argument, NULL, 'v' },   { "name", required_argument, NULL, 'n' },
    { "output", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
    { 0 },
};

int efi_parse_store_write(const rs_command *cmd, int argc, char **argv, const char *file_is, efi_store_write_args *a)
{
    int c;

    *a = (efi_store_write_args){ 0 };
    while ((c = cli_getopt(cmd, argc, argv, "h", efi_store_write_longopts)) != -1) {
        switch (c) {
        case 'v': a->vars = optarg; break;
        case 'n': a->name = optarg; break;
        case 'o': a->output = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || !a->vars || !a->name || !a->output)
        return cli_usage(cmd, "expected --vars, --name, --output and one %s", file_is);
    a->file = argv[optind];
    return -1;
}

const char efi_setup_mode_advice[] =
    "SetupMode is on: the firmware checks no signature until keys are enrolled.\n"
    "Next: make keys with 'reprosign efi keygen DIR', then write DIR/db.auth, DIR/KEK.auth and\n"
    "DIR/PK.auth last (e.g. 'efi-updatevar -f DIR/db.auth db'); writing PK ends setup mode.\n"
    "Then turn Secure Boot on in the firmware settings if it is off, and reboot.\n";

const char efi_setup_mode_advice_store[] =
    "No PK: a machine with this store is in setup mode and checks no signature.\n"
    "Next: make keys with 'reprosign efi keygen DIR', then 'reprosign efi enroll --vars FILE\n"
    "--pk DIR/PK.crt --kek DIR/KEK.crt --db DIR/db.crt --microsoft --owner \"$(cat DIR/GUID)\"\n"
    "--output NEW.fd' (--microsoft keeps option ROMs and Microsoft-signed shims working).\n";
