#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "crypto/pkcs11_list.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "module", required_argument, NULL, 'm' },
    { "login", no_argument, NULL, 'l' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc token_docs[] = {
    { "module", "PATH",
      "The PKCS#11 module to load.",
      "the modules configured for p11-kit" },
    { "login", NULL,
      "Log in to each token (PIN from REPROSIGN_PKCS11_PIN or the terminal), to list private keys.",
      NULL },
    { "json", NULL,
      "Print the tokens as one JSON document.",
      NULL },
    { 0 },
};

const rs_command cmd_token = {
    .name = "token",
    .summary = "list PKCS#11 tokens and the keys and certificates on them",
    .usage = "token list [--module PATH] [--login] [--json]\n\n"
             "Lists the tokens of the PKCS#11 module at PATH (default: the modules\n"
             "configured for p11-kit), with their key and certificate objects and a\n"
             "pkcs11: URI for each, to use with --key and --cert. Private keys are\n"
             "usually visible only after --login; the PIN is read from\n"
             "REPROSIGN_PKCS11_PIN or asked for on the terminal.",
    .run = run,
    .optdocs = token_docs,
    .verbs = "list",
    .example = "reprosign token list --module /usr/lib/softhsm/libsofthsm2.so --login",
    .options = longopts,
};

static void print_object(json_t *o)
{
    const char *type = json_string_value(json_object_get(o, "type"));
    const char *key_type = json_string_value(json_object_get(o, "key_type"));
    const char *id = json_string_value(json_object_get(o, "id"));
    const char *subject = json_string_value(json_object_get(o, "subject"));

    printf("  %-12s %-5s label '%s'", !strcmp(type, "cert") ? "certificate" : !strcmp(type, "private") ? "private key"
                                                                                                      : "public key",
           key_type ? key_type : "", json_string_value(json_object_get(o, "label")));
    if (id)
        printf("  id %s", id);
    if (subject)
        printf("  subject %s", subject);
    printf("\n    %s\n", json_string_value(json_object_get(o, "uri")));
}

static void print_token(json_t *t, bool login)
{
    json_t *objects = json_object_get(t, "objects");
    size_t i;
    json_t *o;

    if (!json_is_true(json_object_get(t, "initialized"))) {
        printf("token (not initialised) in %s\n\n", json_string_value(json_object_get(t, "module")));
        return;
    }
    printf("token '%s' (%s %s, serial %s)\n  %s\n", json_string_value(json_object_get(t, "label")),
           json_string_value(json_object_get(t, "manufacturer")), json_string_value(json_object_get(t, "model")),
           json_string_value(json_object_get(t, "serial")), json_string_value(json_object_get(t, "uri")));
    json_array_foreach(objects, i, o)
        print_object(o);
    if (json_array_size(objects) == 0)
        printf("  (no key or certificate objects)\n");
    if (!login && json_is_true(json_object_get(t, "login_required")))
        printf("  (private keys are listed with --login)\n");
    printf("\n");
}

static int run(int argc, char **argv)
{
    const char *module = NULL;
    bool login = false, json = false;
    json_t *tokens = NULL;
    size_t i;
    json_t *t;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_token, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'm': module = optarg; break;
        case 'l': login = true; break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || strcmp(argv[optind], "list"))
        return cli_usage(&cmd_token, "expected the subcommand 'list'");
    if (rs_p11_list(module, login, &tokens, &err) < 0)
        return cli_fail(&err);
    if (json)
        return cli_json_print(json_pack("{s:o}", "tokens", tokens));
    if (json_array_size(tokens) == 0)
        printf("no tokens\n");
    json_array_foreach(tokens, i, t)
        print_token(t, login);
    json_decref(tokens);
    return EXIT_OK;
}
