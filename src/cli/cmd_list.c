#include <stdio.h>

#include "cli/cli.h"
#include "ops/ops.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc list_docs[] = {
    { "json", NULL,
      "Print the signatures as one JSON document.",
      NULL },
    { 0 },
};

const rs_command cmd_list = {
    .name = "list",
    .summary = "list a file's signatures",
    .usage = "list FILE [--json]\n\n"
             "Shows each signature: signer subject, issuer and serial (or key id), digest\n"
             "algorithm, signing time and the digest it binds to. A compressed module\n"
             "(name.ko.xz, .ko.zst, .ko.gz) is read decompressed, as modinfo reads it.",
    .run = run,
    .optdocs = list_docs,
    .example = "reprosign list /lib/modules/$(uname -r)/kernel/fs/ext4/ext4.ko --json",
    .options = longopts,
};


/* Members that do not apply to a signature are left out (docs/json.md). */
static json_t *sig_json(const rs_sig_info *s, size_t i)
{
    return json_pack("{s:I, s:s, s:s*, s:s*, s:s*, s:s*, s:s, s:s*, s:o*, s:I}", "index", (json_int_t)i, "type",
                     s->kind, "subject", s->subject, "issuer", s->issuer, "serial", s->serial, "key_id", s->key_id,
                     "digest_algorithm", rs_md_name(s->md), "signing_time",
                     s->signing_time[0] ? s->signing_time : NULL, "signed_digest", rs_digest_json(&s->bound_digest),
                     "length", (json_int_t)s->length);
}

static int print_json(const char *path, const rs_listing *l)
{
    json_t *sigs = json_array();

    for (size_t i = 0; i < l->count; i++)
        json_array_append_new(sigs, sig_json(&l->sigs[i], i));
    return cli_json_print(json_pack("{s:s, s:s, s:o}", "file", path, "format", l->format, "signatures", sigs));
}

static void print_text(const rs_listing *l)
{
    if (l->count == 0)
        printf("no signatures\n");
    for (size_t i = 0; i < l->count; i++) {
        const rs_sig_info *s = &l->sigs[i];
        char digest[RS_DIGEST_STR];

        printf("signature %zu (%s, %zu bytes)\n", i, s->kind, s->length);
        if (s->subject)
            printf("  subject:        %s\n", s->subject);
        if (s->issuer)
            printf("  issuer:         %s\n", s->issuer);
        if (s->serial)
            printf("  serial:         %s\n", s->serial);
        if (s->key_id)
            printf("  key id:         %s\n", s->key_id);
        printf("  digest alg:     %s\n", rs_md_name(s->md));
        printf("  signing time:   %s\n", s->signing_time[0] ? s->signing_time : "(none)");
        if (s->bound_digest.len) {
            rs_digest_format(&s->bound_digest, digest, sizeof(digest));
            printf("  signed digest:  %s\n", digest);
        }
    }
}

static int run(int argc, char **argv)
{
    _cleanup_(rs_listing_free) rs_listing l = { 0 };
    bool json = false;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_list, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_list, "expected exactly one FILE");
    if (rs_op_list(argv[optind], &l, &err) < 0)
        return cli_fail(&err);
    if (json)
        return print_json(argv[optind], &l);
    print_text(&l);
    return EXIT_OK;
}
