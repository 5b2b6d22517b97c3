#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ops/ops.h"
#include "uefi/chain.h"
#include "uefi/uefi_trust.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "vars", required_argument, NULL, 'v' },        { "db", required_argument, NULL, 'd' },
    { "dbx", required_argument, NULL, 'x' },         { "modules", required_argument, NULL, 'm' },
    { "kernel-keys", required_argument, NULL, 'k' }, { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },              { 0 },
};

const rs_command cmd_chain = {
    .name = "chain",
    .summary = "check a boot chain: firmware db/dbx -> shim -> next stages -> modules",
    .usage = "chain (--vars VARSTORE | --db ESL... [--dbx ESL...]) SHIM [NEXT...]\n"
             "      [--modules DIR --kernel-keys CERTS] [--json]\n\n"
             "The first image must pass the firmware's db/dbx rules. If it is shim, its\n"
             "vendor certificate is trusted and its vendor dbx revoked for the images that\n"
             "follow, as shim does, and its SBAT level (\"previous\") is applied to them.\n"
             "With --modules, every kernel module (*.ko) under DIR must verify against the\n"
             "kernel's keys. One line per stage; exits 0 only if the whole chain holds.",
    .run = run,
    .options = longopts,
};

/* nftw has no context argument. */
static struct {
    rs_trust *keys;
    size_t ok, failed;
    json_t *failures;
    bool json;
} modules;

static bool is_module(const char *path)
{
    size_t n = strlen(path);

    return n > 3 && !strcmp(path + n - 3, ".ko");
}

static int check_module(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    _cleanup_(rs_verification_free) rs_verification v = { 0 };
    rs_error err;
    const char *why;

    if (type != FTW_F || !is_module(path))
        return 0;
    if (rs_op_verify(path, modules.keys, &v, &err) == 0 && v.ok) {
        modules.ok++;
        return 0;
    }
    modules.failed++;
    why = v.count ? v.reports[0].reason : v.reports ? "not signed" : err.msg;
    if (modules.json)
        json_array_append_new(modules.failures, json_pack("{s:s, s:s}", "file", path, "reason", why));
    else
        printf("  module %s: FAILED: %s\n", path, why);
    return 0;
}

static int check_modules(const char *dir, const char *keys_path, bool json, json_t *doc, bool *ok)
{
    _cleanup_trust_ rs_trust keys = { 0 };
    rs_error err;

    if (rs_trust_init(&keys, &err) < 0 || rs_trust_add_file(&keys, keys_path, &err) < 0)
        return cli_fail(&err);
    modules.keys = &keys;
    modules.json = json;
    modules.failures = json_array();
    if (nftw(dir, check_module, 32, FTW_PHYS) != 0) {
        json_decref(modules.failures);
        rs_fail(&err, "%s: cannot walk the module tree", dir);
        return cli_fail(&err);
    }
    *ok = modules.failed == 0 && modules.ok > 0;
    if (json)
        json_object_set_new(doc, "modules", json_pack("{s:s, s:I, s:I, s:o}", "dir", dir, "verified",
                                                      (json_int_t)modules.ok, "failed", (json_int_t)modules.failed,
                                                      "failures", modules.failures));
    else {
        json_decref(modules.failures);
        printf("modules %s: %s, %zu verified, %zu failed\n", dir, *ok ? "OK" : "FAILED", modules.ok, modules.failed);
    }
    return EXIT_OK;
}

static void print_stages(const chain_result *r, json_t *doc)
{
    json_t *stages = json_array();

    for (size_t i = 0; i < r->n; i++) {
        const chain_stage *s = &r->stages[i];
        const char *under = i == 0 ? "firmware db/dbx" : r->vendor_cert ? "db/dbx + shim vendor keys" : "db/dbx";

        if (doc)
            json_array_append_new(stages, json_pack("{s:I, s:s, s:b, s:s, s:s?, s:s?}", "stage", (json_int_t)i + 1,
                                                    "file", s->path, "valid", s->ok, "policy", under, "anchor",
                                                    s->anchor, "reason", s->ok ? NULL : s->reason));
        else if (s->ok)
            printf("stage %zu %s: OK under %s, chains to %s\n", i + 1, s->path, under, s->anchor);
        else
            printf("stage %zu %s: FAILED under %s: %s\n", i + 1, s->path, under, s->reason);
    }
    if (doc)
        json_object_set_new(doc, "stages", stages);
    else
        json_decref(stages);
}

static int run(int argc, char **argv)
{
    _cleanup_trust_ rs_trust fw = { 0 };
    _cleanup_(chain_result_free) chain_result r = { 0 };
    const char *mod_dir = NULL, *mod_keys = NULL;
    bool json = false, have_db = false, mods_ok = true;
    json_t *doc = NULL;
    rs_error err;
    int c, rc = EXIT_OK;

    if (rs_trust_init(&fw, &err) < 0)
        return cli_fail(&err);
    while ((c = cli_getopt(&cmd_chain, argc, argv, "v:d:x:m:k:jh", longopts)) != -1) {
        switch (c) {
        case 'v':
            if (uefi_trust_add_varstore(&fw, optarg, &err) < 0)
                return cli_fail(&err);
            have_db = true;
            break;
        case 'd':
        case 'x':
            if (uefi_trust_add_esl_file(&fw, optarg, c == 'x', &err) < 0)
                return cli_fail(&err);
            have_db |= c == 'd';
            break;
        case 'm': mod_dir = optarg; break;
        case 'k': mod_keys = optarg; break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind >= argc || !have_db)
        return cli_usage(&cmd_chain, "expected --vars or --db, and at least one image");
    if (!mod_dir != !mod_keys)
        return cli_usage(&cmd_chain, "--modules and --kernel-keys go together");
    if (chain_verify(&fw, argv + optind, (size_t)(argc - optind), &r, &err) < 0)
        return cli_fail(&err);
    doc = json ? json_object() : NULL;
    print_stages(&r, doc);
    if (mod_dir && (rc = check_modules(mod_dir, mod_keys, json, doc, &mods_ok)) != EXIT_OK) {
        json_decref(doc);
        return rc;
    }
    if (json) {
        json_object_set_new(doc, "valid", json_boolean(r.ok && mods_ok));
        if (cli_json_print(doc) != EXIT_OK)
            return EXIT_FAIL;
    }
    if (r.ok && mods_ok)
        return EXIT_OK;
    fprintf(stderr, "reprosign: the chain does not hold\n");
    return EXIT_FAIL;
}
