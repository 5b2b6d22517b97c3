#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cli/cli.h"
#include "cli/signer_args.h"
#include "crypto/ossl.h"
#include "ops/offline.h"
#include "ops/ops.h"

#define MAX_SIGNATURE_VALUE (64 * 1024)

static int run(int argc, char **argv);

static const struct option sign_longopts[] = {
    { "key", required_argument, NULL, 'k' },       { "pass", required_argument, NULL, 'W' },
    { "cert", required_argument, NULL, 'c' },
    { "hash", required_argument, NULL, 'H' },      { "detached", no_argument, NULL, 'd' },
    { "output", required_argument, NULL, 'o' },    { "no-signing-time", no_argument, NULL, 'T' },
    { "addcert", required_argument, NULL, 'a' },   { "keyid", no_argument, NULL, 'K' },
    { "prepare-offline", no_argument, NULL, 'P' }, { "finish", required_argument, NULL, 'F' },
    { "signature", required_argument, NULL, 'S' }, { "help", no_argument, NULL, 'h' },
    { "via", required_argument, NULL, 'V' },       { "replace", no_argument, NULL, 'R' },
    { "append", no_argument, NULL, 'A' },          { "in-place", no_argument, NULL, 'I' },
    { 0 },
};

static const rs_optdoc sign_docs[] = {
    CLI_KEY_DOCS,
    { "cert", "CERT",
      "The signer's certificate (PEM or DER file, or pkcs11: URI).",
      NULL },
    { "hash", "sha256|sha384|sha512",
      "The digest algorithm. Most firmware accepts only SHA-256 on EFI images;\n"
      "another hash there warns.",
      "sha256" },
    { "detached", NULL,
      "Write only the signature (DER), to OUT.",
      NULL },
    { "output", "OUT",
      "Where the result goes.",
      "FILE.signed, NAME.signed.ko for NAME.ko, FILE.sig with --detached" },
    { "in-place", NULL,
      "Replace FILE with the signed file.",
      NULL },
    { "no-signing-time", NULL,
      "Leave the signingTime attribute out.",
      "signingTime from SOURCE_DATE_EPOCH, else the clock" },
    { "addcert", "CERTS",
      "Embed the intermediate certificates in the PEM file CERTS.",
      NULL },
    { "keyid", NULL,
      "Name the signer by its certificate's subjectKeyIdentifier instead of issuer\n"
      "and serial (as sign-file -k).",
      NULL },
    { "replace", NULL,
      "Drop the signatures FILE already has before signing.",
      NULL },
    { "append", NULL,
      "Add the signature beside the ones FILE has, without the warning.",
      NULL },
    { "prepare-offline", NULL,
      "Write REQ, the digest an offline key must sign, to --output; sign nothing.",
      NULL },
    { "finish", "REQ",
      "Build the signature from REQ and the value given by --signature.",
      NULL },
    { "signature", "SIGVALUE",
      "The raw signature value 'reprosign sign-blob' wrote for --finish.",
      NULL },
    { "via", "SOCKET",
      "Have the signing service at SOCKET sign instead of a local key;\n"
      "only the request goes over the socket.",
      NULL },
    { 0 },
};

const rs_command cmd_sign = {
    .name = "sign",
    .summary = "sign an EFI image or a kernel module",
    .usage = "sign --key KEY [--pass file:PATH|env:VAR] --cert CERT [--hash sha256|sha384|sha512]\n"
             "                      [--detached] [--keyid] [--no-signing-time] [--addcert CERTS]\n"
             "                      [--replace | --append] [--output OUT | --in-place] FILE\n"
             "       reprosign sign --prepare-offline --cert CERT [options] --output REQ FILE\n"
             "       reprosign sign --finish REQ --signature SIGVALUE [--cert CERT] [--detached]\n"
             "                      [--output OUT] [FILE]\n"
             "       reprosign sign --via SOCKET --cert CERT [options] [--output OUT] FILE\n\n"
             "Signs FILE. Without --output the signed file is FILE.signed (as sbsign), or\n"
             "NAME.signed.ko for NAME.ko, so modinfo and insmod still take it; --in-place\n"
             "replaces FILE. An image that is already signed gets the new signature\n"
             "beside its others, with a warning: --append says that is meant, --replace\n"
             "drops the others first (a module holds one signature: it needs --replace).\n"
             "The default hash is sha256; most firmware accepts only SHA-256 Authenticode,\n"
             "so another hash on an EFI image warns.\n"
             "--detached writes only the signature (DER) to OUT (default FILE.sig).\n"
             "signingTime comes from SOURCE_DATE_EPOCH when set, so equal inputs give\n"
             "equal bytes; --no-signing-time leaves it out. --addcert embeds\n"
             "intermediate certificates. --keyid names the signer by its certificate's\n"
             "subjectKeyIdentifier instead of issuer and serial (as sign-file -k).\n\n"
             "Offline signing, for a key whose machine never sees the files:\n"
             "--prepare-offline writes REQ, the one digest the key must sign plus what is\n"
             "needed to finish; 'reprosign sign-blob REQ --key KEY --output SIGVALUE' signs\n"
             "it on the offline machine; --finish builds the signature around SIGVALUE,\n"
             "checked against the certificate: the detached signature to --output, or,\n"
             "given FILE, the signed file. The result equals one-step signing with the\n"
             "same key and SOURCE_DATE_EPOCH byte for byte.\n\n"
             "--via has the signing service's socket sign instead of a local key: only the\n"
             "request goes over the socket, and the output is the same as with --key.\n\n"
             "An encrypted key file (PKCS#8 or traditional PEM) takes its passphrase from\n"
             "--pass file:PATH or env:VAR, else KBUILD_SIGN_PIN (as sign-file), else a\n"
             "prompt on the terminal; never from the command line.",
    .run = run,
    .optdocs = sign_docs,
    .example = "reprosign sign --key db.key --cert db.crt --output grubx64.efi.signed grubx64.efi",
    .options = sign_longopts,
};

typedef struct sign_args {
    const char *key, *cert, *hash, *output, *addcert, *file;
    const char *finish, *signature, *via;
    bool detached, signing_time, key_id, prepare, replace, append, in_place;
} sign_args;

/* FILE.sig, FILE.signed, or NAME.signed.ko: a module keeps its suffix. */
static char *default_output(const sign_args *a)
{
    size_t n = strlen(a->file);
    char *out = NULL;

    if (a->detached)
        return asprintf(&out, "%s.sig", a->file) < 0 ? NULL : out;
    if (rs_name_has_suffix(a->file, ".ko"))
        return asprintf(&out, "%.*s.signed.ko", (int)(n - 3), a->file) < 0 ? NULL : out;
    return asprintf(&out, "%s.signed", a->file) < 0 ? NULL : out;
}

/* What sbsign warns about, and what firmware may refuse. */
static void warn_about(const sign_args *a, const rs_sign_options *opts, const rs_sign_report *r)
{
    if (r->existing && !a->detached && !a->replace && !a->append)
        fprintf(stderr, "reprosign: warning: %s: already signed (%zu signature(s)); the new one is added beside "
                        "them (--append to say so, --replace to drop them)\n", a->file, r->existing);
    if (r->format && r->format->firmware_prefers_sha256 && EVP_MD_get_type(opts->md) != NID_sha256)
        fprintf(stderr, "reprosign: warning: %s: signed with %s; most firmware accepts only SHA-256 "
                        "Authenticode\n", a->file, rs_md_name(opts->md));
}

static int one_step(const sign_args *a, const rs_sign_options *opts)
{
    _cleanup_free_ char *fallback = NULL;
    _cleanup_(cli_signer_close) cli_signer signer = { 0 };
    rs_sign_target t = { .detached = a->detached, .output = a->output, .replace = a->replace };
    rs_sign_report report = { 0 };
    rs_error err;

    if (a->via && (a->key || !a->cert))
        return cli_usage(&cmd_sign, "--via needs --cert and takes no --key: the service holds the key");
    if (!a->via && (!a->key || !a->cert))
        return cli_usage(&cmd_sign, "--key and --cert are required");
    if (!a->output && !a->in_place) {
        if (!(fallback = default_output(a)))
            return EXIT_FAIL;
        t.output = fallback;
    }
    if (cli_signer_open(&signer, a->key, a->via, a->cert, a->addcert, &err) < 0 ||
        rs_op_sign(a->file, signer.image, opts, &t, &report, &err) < 0)
        return cli_fail(&err);
    warn_about(a, opts, &report);
    return EXIT_OK;
}

static int prepare(const sign_args *a, const rs_sign_options *opts)
{
    _cleanup_(rs_offline_request_free) rs_offline_request req = { 0 };
    _cleanup_(rs_x509p) X509 *cert = NULL;
    _cleanup_(rs_x509_stackp) STACK_OF(X509) *chain = NULL;
    _cleanup_free_ char *json = NULL;
    rs_error err;

    if (a->key)
        return cli_usage(&cmd_sign, "--prepare-offline takes no --key: the key signs later, offline");
    if (!a->cert || !a->output)
        return cli_usage(&cmd_sign, "--prepare-offline needs --cert and --output");
    if (rs_cert_open(a->cert, &cert, &err) < 0 || (a->addcert && rs_load_certs(a->addcert, &chain, &err) < 0))
        return cli_fail(&err);
    if (rs_offline_prepare(a->file, cert, chain, opts, &req, &err) < 0 ||
        rs_offline_request_write(&req, &json, &err) < 0 ||
        rs_write_file(a->output, json, strlen(json), 0644, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

static int finish(const sign_args *a)
{
    _cleanup_(rs_offline_request_free) rs_offline_request req = { 0 };
    _cleanup_(rs_x509p) X509 *cert = NULL;
    _cleanup_bytes_ rs_bytes value = { 0 }, der = { 0 };
    _cleanup_free_ char *fallback = NULL;
    rs_error err;

    if (a->key || !a->signature)
        return cli_usage(&cmd_sign, "--finish needs --signature and takes no --key");
    if (!a->file && !a->output)
        return cli_usage(&cmd_sign, "--finish without FILE needs --output for the detached signature");
    if (rs_offline_request_load(a->finish, &req, &err) < 0)
        return cli_fail_file(&err, a->finish);
    if (a->cert && rs_cert_open(a->cert, &cert, &err) < 0)
        return cli_fail(&err);
    if (rs_read_file(a->signature, MAX_SIGNATURE_VALUE, &value, &err) < 0)
        return cli_fail_file(&err, a->signature);
    if (cert && X509_cmp(cert, req.cert) != 0) {
        rs_fail(&err, "not the certificate the request was prepared with");
        return cli_fail_file(&err, a->cert);
    }
    if (rs_offline_finish(&req, &value, &der, &err) < 0)
        return cli_fail_file(&err, a->signature);
    if (!a->file) {
        if (rs_write_file(a->output, der.data, der.len, 0644, &err) < 0)
            return cli_fail_file(&err, a->output);
        return EXIT_OK;
    }
    if (!a->output && !(fallback = default_output(a)))
        return EXIT_FAIL;
    if (rs_op_emit(a->file, &der, NULL, req.cert, a->detached, a->output ? a->output : fallback, &err) < 0)
        return cli_fail(&err);
    return EXIT_OK;
}

static int parse(int argc, char **argv, sign_args *a)
{
    int c;

    *a = (sign_args){ .hash = "sha256", .signing_time = true };
    while ((c = cli_getopt(&cmd_sign, argc, argv, "h", sign_longopts)) != -1) {
        switch (c) {
        case 'k': a->key = optarg; break;
        case 'W':
            if (cli_set_pass(&cmd_sign, optarg) != 0)
                return EXIT_USAGE;
            break;
        case 'c': a->cert = optarg; break;
        case 'H': a->hash = optarg; break;
        case 'd': a->detached = true; break;
        case 'o': a->output = optarg; break;
        case 'T': a->signing_time = false; break;
        case 'a': a->addcert = optarg; break;
        case 'K': a->key_id = true; break;
        case 'P': a->prepare = true; break;
        case 'F': a->finish = optarg; break;
        case 'S': a->signature = optarg; break;
        case 'V': a->via = optarg; break;
        case 'R': a->replace = true; break;
        case 'A': a->append = true; break;
        case 'I': a->in_place = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind < argc)
        a->file = argv[optind++];
    if (optind != argc)
        return cli_usage(&cmd_sign, "expected one FILE");
    if (!a->file && !a->finish)
        return cli_usage(&cmd_sign, "expected one FILE");
    if (a->prepare && a->finish)
        return cli_usage(&cmd_sign, "--prepare-offline and --finish are separate steps");
    if (a->via && (a->prepare || a->finish))
        return cli_usage(&cmd_sign, "--via signs in one step; it takes no --prepare-offline or --finish");
    if (a->replace && a->append)
        return cli_usage(&cmd_sign, "--replace and --append say opposite things; give one");
    if (a->in_place && (a->output || a->detached))
        return cli_usage(&cmd_sign, "--in-place rewrites FILE: it takes no --output or --detached");
    return -1;
}

static int run(int argc, char **argv)
{
    rs_sign_options opts;
    sign_args a;
    rs_error err;
    int rc = parse(argc, argv, &a);

    if (rc >= 0)
        return rc;
    if (a.finish)
        return finish(&a);
    if (rs_sign_options_init(&opts, a.hash, a.signing_time, &err) < 0)
        return cli_usage(&cmd_sign, "%s", err.msg);
    opts.use_key_id = a.key_id;
    return a.prepare ? prepare(&a, &opts) : one_step(&a, &opts);
}
