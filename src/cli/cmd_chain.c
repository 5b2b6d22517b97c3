#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive/decompress.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "base/walk.h"
#include "cli/chain_rules.h"
#include "cli/cli.h"
#include "cli/efi_common.h"
#include "crypto/ossl.h"
#include "uefi/chain_inputs.h"
#include "uefi/efivarfs.h"
#include "uefi/kernel_certs.h"
#include "uefi/sbat_level.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "vars", required_argument, NULL, 'v' },        { "efivars", required_argument, NULL, 'E' },
    { "db", required_argument, NULL, 'd' },
    { "dbx", required_argument, NULL, 'x' },         { "mok", required_argument, NULL, 'M' },
    { "mokx", required_argument, NULL, 'X' },        { "sbat-level", required_argument, NULL, 'S' },
    { "sbat-policy", required_argument, NULL, 'P' }, { "modules", required_argument, NULL, 'm' },
    { "kernel-keys", required_argument, NULL, 'k' }, { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },              { 0 },
};

static const rs_optdoc chain_docs[] = {
    { "vars", "VARSTORE",
      "An OVMF variable store: db, dbx, MokList, MokListX, SbatLevel, SbatPolicy and the\n"
      "Mok states are read from it.",
      NULL },
    { "efivars", "DIR",
      "A running machine's variables: efivarfs, or a copy of its NAME-GUID files.\n"
      "shim's runtime mirrors stand for its variables: MokListRT (MokList plus\n"
      "shim's vendor certificate), MokListXRT, SbatLevelRT (the level applied).",
      "/sys/firmware/efi/efivars when no --vars, --efivars or --db is given on a\n"
      "machine booted through UEFI" },
    { "db", "ESL",
      "The firmware's db as a signature list; may be repeated.",
      NULL },
    { "dbx", "ESL",
      "The firmware's dbx as a signature list; may be repeated.",
      NULL },
    { "mok", "ESL",
      "shim's MokList as a signature list; may be repeated.",
      NULL },
    { "mokx", "ESL",
      "shim's MokListX as a signature list; may be repeated.",
      NULL },
    { "sbat-level", "FILE",
      "The SbatLevel variable's CSV.",
      "the store's SbatLevel with --vars, else the level shim itself applies" },
    { "sbat-policy", "latest|automatic",
      "Which of shim's built-in .sbatlevel levels applies: latest, or previous\n"
      "(automatic).",
      "the store's SbatPolicy with --vars, else automatic" },
    { "modules", "DIR",
      "Check every module under DIR (*.ko, and *.ko.xz, *.ko.zst, *.ko.gz decompressed) as the kernel would under lockdown.",
      NULL },
    { "kernel-keys", "CERTS",
      "The kernel's built-in certificates (PEM), in place of those read from the last\n"
      "stage's kernel image.",
      "the certificates built into the last stage: an x86 bzImage, an EFI zboot image, or an arm64 or "
      "RISC-V Image" },
    { "json", NULL,
      "Print the verdicts as one JSON document.",
      NULL },
    { 0 },
};

const rs_command cmd_chain = {
    .name = "chain",
    .summary = "check a boot chain as firmware, shim, GRUB and the kernel would: db/dbx, MOK, SBAT, modules",
    .usage = "chain [--vars VARSTORE | --efivars DIR | --db ESL... [--dbx ESL...]] [--mok ESL...] [--mokx ESL...]\n"
             "      [--sbat-level FILE] [--sbat-policy latest|automatic] STAGE1 [STAGE2...]\n"
             "      [--modules DIR [--kernel-keys CERTS]] [--json]\n\n"
             "Judges each stage the way the one before it verifies it on a bookworm\n"
             "machine (shim 16.1, GRUB 2.06, Linux 6.1); trixie's (GRUB 2.12, Linux 6.12)\n"
             "boots by the same rules. Firmware checks stage 1 with db/dbx;\n"
             "shim checks the image it loads and, through shim_lock, the kernel GRUB loads,\n"
             "with dbx, MokListX, its vendor dbx, db, MokList, its vendor_db and vendor\n"
             "certificate, then SBAT against the SbatLevel that applies. --vars also reads\n"
             "MokList, MokListX, SbatLevel, SbatPolicy, MokSBState and MokDBState from the\n"
             "store. Without a store, on a machine booted through UEFI, the machine's own\n"
             "variables are read from /sys/firmware/efi/efivars (named on the first line).\n"
             "With --modules, every *.ko under DIR must verify as the kernel verifies\n"
             "it under lockdown: against the keys built into the last stage's kernel image,\n"
             "as the kernel names them (or --kernel-keys), the .machine keyring\n"
             "(MokList and shim's vendor certificate) or the .platform keyring (db), and not\n"
             "be revoked by its file's SHA-256 in dbx or MokListX. A compressed module\n"
             "(*.ko.xz, as trixie ships them, *.ko.zst, *.ko.gz) is checked decompressed, as\n"
             "the kernel checks it. One line per stage names the\n"
             "rule and the trust entry that decided; exits 0 only if the whole chain holds.\n\n" CHAIN_RULE_TABLE,
    .run = run,
    .optdocs = chain_docs,
    .example = "reprosign chain --vars /usr/share/OVMF/OVMF_VARS_4M.ms.fd shimx64.efi.signed\n"
               "    grubx64.efi.signed vmlinuz",
    .options = longopts,
};

/* What the walk over the module tree counts. */
typedef struct module_walk {
    const kernel_keys *keys;
    size_t ok, failed;
    size_t by_ring[3];       /* .builtin_trusted_keys, .machine, .platform */
    json_t *failures;
    bool json;
} module_walk;

/* Linux verifies a compressed module (name.ko.xz, as trixie ships them)
 * on its decompressed bytes, whether kmod or the kernel decompresses it. */
static int verify_compressed(const char *path, const kernel_keys *keys, module_verdict *v, rs_error *err)
{
    _cleanup_close_ int fd = -1;
    char proc[64];
    uint64_t size;

    if (rs_decompress_to_memfd(path, RS_MAX_DECOMPRESSED, &fd, &size, err) < 0)
        return -1;
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (kernel_verify_module(proc, keys, v, err) < 0) {
        char why[sizeof(err->msg)];
        size_t n = strlen(proc);
        const char *m = err->msg;

        if (!strncmp(m, proc, n) && m[n] == ':' && m[n + 1] == ' ')
            m += n + 2;
        snprintf(why, sizeof(why), "%s", m);
        return rs_fail(err, "%s (decompressed): %s", path, why);
    }
    return 0;
}

static int check_module(void *ctx, const char *rel, const char *path, const struct stat *st, rs_error *unused)
{
    module_walk *m = ctx;
    module_verdict v = { 0 };
    rs_error err;
    const char *why;
    int rc;

    (void)rel, (void)unused;
    if (!S_ISREG(st->st_mode))
        return 0;
    if (rs_name_has_suffix(path, ".ko"))
        rc = kernel_verify_module(path, m->keys, &v, &err);
    else if (rs_is_compressed_module_name(path))
        rc = verify_compressed(path, m->keys, &v, &err);
    else
        return 0;
    if (rc == 0 && v.ok) {
        m->ok++;
        m->by_ring[v.keyring[1] == 'b' ? 0 : v.keyring[1] == 'm' ? 1 : 2]++;
        return 0;
    }
    m->failed++;
    why = v.detail[0] ? v.detail : err.msg;
    if (m->json)
        json_array_append_new(m->failures, json_pack("{s:s, s:s}", "file", path, "reason", why));
    else
        printf("  module %s: REFUSED by the kernel: %s\n", path, why);
    return 0;
}

/* Where .builtin_trusted_keys came from, and whose keys it holds, each by
 * the name the kernel gives it in /proc/keys and its log: an auditor sees
 * which build key the modules were checked with. */
static json_t *builtin_keys(const kernel_keys *keys, bool json)
{
    static const char *from[] = { "none", "file", "image" };
    const char *source = keys->builtin_path ? keys->builtin_path : "";
    json_t *certs = json_array();

    for (int i = 0; i < sk_X509_num(keys->builtin.anchors); i++) {
        X509 *cert = sk_X509_value(keys->builtin.anchors, i);
        char *subject = rs_x509_name(X509_get_subject_name(cert)), name[RS_ERROR_MAX];

        kernel_key_description(cert, name, sizeof(name));
        json_array_append_new(certs, json_pack("{s:s, s:s}", "subject", subject ? subject : "", "kernel_name", name));
        free(subject);
    }
    if (json)
        return json_pack("{s:s, s:s, s:o}", "from", from[keys->builtin_from], "source", source, "certificates", certs);
    if (keys->builtin_from == KERNEL_BUILTIN_NONE)
        printf("kernel keys: .builtin_trusted_keys empty: %s is no kernel image it can read (an x86 bzImage, an "
               "EFI zboot image, or an arm64 or RISC-V Image), and no --kernel-keys\n",
               source);
    else {
        printf("kernel keys: .builtin_trusted_keys from %s %s:",
               keys->builtin_from == KERNEL_BUILTIN_FILE ? "--kernel-keys" : "the kernel image", source);
        for (size_t i = 0; i < json_array_size(certs); i++)
            printf("%s '%s'", i ? "," : "",
                   json_string_value(json_object_get(json_array_get(certs, i), "kernel_name")));
        putchar('\n');
    }
    json_decref(certs);
    return NULL;
}

static int check_modules(const chain_inputs *in, const chain_result *r, const char *dir, const char *keys_path,
                         json_t *doc, bool *ok)
{
    _cleanup_(kernel_keys_free) kernel_keys keys = { 0 };
    module_walk m = { .keys = &keys, .json = doc != NULL };
    json_t *builtin;
    rs_error err;

    if (chain_kernel_keys(in, r, keys_path, &keys, &err) < 0)
        return cli_fail(&err);
    builtin = builtin_keys(&keys, doc != NULL);
    m.failures = json_array();
    if (rs_walk_tree(dir, NULL, check_module, &m, &err) < 0) {
        json_decref(m.failures);
        json_decref(builtin);
        return cli_fail(&err);
    }
    *ok = m.failed == 0 && m.ok > 0;
    if (doc)
        json_object_set_new(doc, "modules", json_pack("{s:s, s:o, s:I, s:I, s:o}", "dir", dir, "builtin_keys", builtin,
                                                      "verified", (json_int_t)m.ok, "failed", (json_int_t)m.failed,
                                                      "failures", m.failures));
    else {
        json_decref(m.failures);
        /* No module at all fails too: a mistyped directory must not pass. */
        if (m.ok == 0 && m.failed == 0)
            printf("modules %s: FAILED, no kernel module (*.ko, *.ko.xz, *.ko.zst, *.ko.gz) under it\n", dir);
        else
            printf("modules %s: %s, %zu verified (.builtin_trusted_keys %zu, .machine %zu, .platform %zu), %zu failed\n",
                   dir, *ok ? "OK" : "FAILED", m.ok, m.by_ring[0], m.by_ring[1], m.by_ring[2], m.failed);
    }
    return EXIT_OK;
}

static void print_stage(size_t i, const chain_stage *s)
{
    if (s->ok)
        printf("stage %zu %s: OK, checked by %s: %s: %s%s%s\n", i + 1, s->path, s->verifier, s->rule, s->anchor,
               s->sbat[0] ? "; " : "", s->sbat);
    else
        printf("stage %zu %s: REFUSED by %s: %s: %s\n", i + 1, s->path, s->verifier, s->rule, s->reason);
}

static void print_stages(const chain_result *r, json_t *doc)
{
    json_t *stages = json_array();

    for (size_t i = 0; i < r->n; i++) {
        const chain_stage *s = &r->stages[i];

        if (doc)
            json_array_append_new(stages, json_pack("{s:I, s:s, s:s, s:b, s:s, s:s*, s:s*, s:s*}", "stage",
                                                    (json_int_t)i + 1, "file", s->path, "verifier", s->verifier,
                                                    "valid", s->ok, "rule", s->rule, "accepted_by", s->anchor,
                                                    "reason", s->ok ? NULL : s->reason, "sbat",
                                                    s->sbat[0] ? s->sbat : NULL));
        else
            print_stage(i, s);
    }
    if (doc) {
        json_object_set_new(doc, "stages", stages);
        if (r->sbat_source[0])
            json_object_set_new(doc, "sbat_level", json_string(r->sbat_source));
    } else {
        json_decref(stages);
        if (r->sbat_source[0])
            printf("SBAT level applied after shim: %s\n", r->sbat_source);
    }
}

static int parse_option(int c, chain_inputs *in, rs_error *err)
{
    switch (c) {
    case 'v': return chain_inputs_add_varstore(in, optarg, err);
    case 'E': return chain_inputs_add_efivarfs(in, optarg, err);
    case 'd': return chain_inputs_add_esl_file(in, CHAIN_DB, optarg, err);
    case 'x': return chain_inputs_add_esl_file(in, CHAIN_DBX, optarg, err);
    case 'M': return chain_inputs_add_esl_file(in, CHAIN_MOK, optarg, err);
    case 'X': return chain_inputs_add_esl_file(in, CHAIN_MOKX, optarg, err);
    case 'S': return chain_inputs_set_sbat_level_file(in, optarg, err);
    default: return sbat_policy_parse(optarg, &in->sbat_policy, err);
    }
}

/* Which machine's variables were read, and whether it enforces Secure
 * Boot at all: with it off, the verdicts are what an enforcing boot
 * would decide. */
static void print_machine(const chain_inputs *in, const char *dir, json_t *doc)
{
    if (doc)
        json_object_set_new(doc, "machine", json_pack("{s:s, s:b, s:b}", "efivars", dir, "secure_boot",
                                                      in->secure_boot, "setup_mode", in->setup_mode));
    else {
        printf("variables: %s (a running machine: SecureBoot %s, SetupMode %s)\n", dir, in->secure_boot ? "on" : "off",
               in->setup_mode ? "on" : "off");
        if (in->setup_mode)
            fputs(efi_setup_mode_advice, stdout);
    }
}

static int report(const chain_inputs *in, const chain_result *r, const char *machine_dir, const char *mod_dir,
                  const char *mod_keys, bool json)
{
    json_t *doc = json ? json_object() : NULL;
    bool mods_ok = true;
    int rc;

    if (machine_dir)
        print_machine(in, machine_dir, doc);
    print_stages(r, doc);
    if (mod_dir && (rc = check_modules(in, r, mod_dir, mod_keys, doc, &mods_ok)) != EXIT_OK) {
        json_decref(doc);
        return rc;
    }
    if (json) {
        json_object_set_new(doc, "valid", json_boolean(r->ok && mods_ok));
        if (cli_json_print(doc) != EXIT_OK)
            return EXIT_FAIL;
    }
    if (r->ok && mods_ok)
        return EXIT_OK;
    fprintf(stderr, "reprosign: the chain does not hold\n");
    return EXIT_FAIL;
}

static int run(int argc, char **argv)
{
    _cleanup_(chain_inputs_free) chain_inputs in = { 0 };
    _cleanup_(chain_result_free) chain_result r = { 0 };
    const char *mod_dir = NULL, *mod_keys = NULL, *machine_dir = NULL;
    bool json = false;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_chain, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'm': mod_dir = optarg; break;
        case 'k': mod_keys = optarg; break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        case 'v': case 'E': case 'd': case 'x': case 'M': case 'X': case 'S': case 'P':
            machine_dir = c == 'E' ? optarg : machine_dir;
            if (parse_option(c, &in, &err) < 0)
                return cli_fail(&err);
            break;
        default: return EXIT_USAGE;
        }
    }
    if (!in.have_db && !machine_dir && efivarfs_booted_uefi()) {
        machine_dir = EFIVARFS_DIR;
        if (chain_inputs_add_efivarfs(&in, machine_dir, &err) < 0)
            return cli_fail(&err);
    }
    if (optind >= argc || !in.have_db)
        return cli_usage(&cmd_chain, "expected --vars, --efivars or --db, and at least one image");
    if (mod_keys && !mod_dir)
        return cli_usage(&cmd_chain, "--kernel-keys needs --modules");
    if (chain_verify(&in, argv + optind, (size_t)(argc - optind), &r, &err) < 0)
        return cli_fail(&err);
    return report(&in, &r, machine_dir, mod_dir, mod_keys, json);
}
