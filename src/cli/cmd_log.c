#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "crypto/ossl.h"
#include "translog/log.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "cert", required_argument, NULL, 'c' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc log_docs[] = {
    { "cert", "CERT",
      "Pin the log's certificate.",
      "the certificate in LOGDIR, whose fingerprint is printed" },
    { 0 },
};

const rs_command cmd_log = {
    .name = "log",
    .summary = "check the signing service's transparency log; inclusion and consistency proofs",
    .usage = "log verify LOGDIR [--cert CERT]\n"
             "       reprosign log prove LOGDIR ENTRY [--cert CERT]\n"
             "       reprosign log consistency LOGDIR OLD-SIZE NEW-SIZE [--cert CERT]\n\n"
             "verify recomputes every leaf hash and every signed tree head's root, checks\n"
             "each head's signature, and names the first entry or head that does not fit.\n"
             "prove prints the RFC 9162 inclusion proof of entry ENTRY (counted from 0) in\n"
             "the newest signed tree head; consistency prints the proof that the signed\n"
             "head of NEW-SIZE entries extends the one of OLD-SIZE. Both are checked before\n"
             "they are printed. --cert pins the log's certificate; without it the one in\n"
             "LOGDIR is used, and its fingerprint is printed.",
    .run = run,
    .options = longopts,
    .optdocs = log_docs,
    .verbs = "verify prove consistency",
    .example = "reprosign log verify /var/lib/reprosign/log --cert /etc/reprosign/log.pem",
};

static json_t *hex(const rs_hash *h)
{
    char text[2 * RS_HASH_LEN + 1];

    rs_hex(h->b, RS_HASH_LEN, text);
    return json_string(text);
}

static json_t *hex_list(const rs_hash_list *l)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < l->n; i++)
        json_array_append_new(a, hex(&l->h[i]));
    return a;
}

static int load(const char *dir, const char *pin_path, rs_log_view *v, rs_error *err)
{
    _cleanup_(rs_x509p) X509 *pin = NULL;

    if (pin_path && rs_load_cert(pin_path, &pin, err) < 0)
        return -1;
    return rs_log_verify(dir, pin, v, err);
}

static int do_verify(const char *dir, rs_log_view *v)
{
    char fpr[65], root[2 * RS_HASH_LEN + 1] = "(empty)";
    const rs_log_head *last = v->n_heads ? &v->heads[v->n_heads - 1] : NULL;

    rs_x509_fingerprint(v->cert, fpr);
    if (last)
        rs_hex(last->root.b, RS_HASH_LEN, root);
    printf("%s: %zu entries, %zu signed tree heads, all consistent\n"
           "newest head: size %llu, root %s\nlog certificate (SHA-256): %s\n",
           dir, v->n_entries, v->n_heads, last ? (unsigned long long)last->size : 0ULL, root, fpr);
    return EXIT_OK;
}

static bool parse_size(const char *s, uint64_t *out)
{
    long v;

    if (!cli_parse_index(s, &v))
        return false;
    *out = (uint64_t)v;
    return true;
}

static int do_prove(rs_log_view *v, const char *entry)
{
    const rs_log_head *head = v->n_heads ? &v->heads[v->n_heads - 1] : NULL;
    _cleanup_(rs_hash_list_free) rs_hash_list path = { 0 };
    uint64_t index;
    rs_error err;

    if (!parse_size(entry, &index))
        return cli_usage(&cmd_log, "ENTRY must be a number");
    if (!head || index >= head->size) {
        rs_fail(&err, "entry %llu is not in the log's newest signed tree head", (unsigned long long)index);
        return cli_fail(&err);
    }
    if (rs_merkle_inclusion_proof(v->leaves, head->size, index, &path, &err) < 0)
        return cli_fail(&err);
    if (!rs_merkle_verify_inclusion(index, head->size, &v->leaves[index], &path, &head->root)) {
        rs_fail(&err, "internal error: the inclusion proof does not verify");
        return cli_fail(&err);
    }
    return cli_json_print(json_pack("{s:I, s:I, s:o, s:o, s:s, s:o}", "leaf_index", (json_int_t)index, "tree_size",
                                    (json_int_t)head->size, "root", hex(&head->root), "leaf_hash",
                                    hex(&v->leaves[index]), "entry", v->entries[index], "audit_path",
                                    hex_list(&path)));
}

static int do_consistency(rs_log_view *v, const char *old_s, const char *new_s)
{
    _cleanup_(rs_hash_list_free) rs_hash_list proof = { 0 };
    const rs_log_head *old_head, *new_head;
    uint64_t m, n;
    rs_error err;

    if (!parse_size(old_s, &m) || !parse_size(new_s, &n) || m == 0 || m > n)
        return cli_usage(&cmd_log, "sizes must be numbers with 0 < OLD-SIZE <= NEW-SIZE");
    old_head = rs_log_view_head(v, m);
    new_head = rs_log_view_head(v, n);
    if (!old_head || !new_head) {
        rs_fail(&err, "the log has no signed tree head of size %llu", (unsigned long long)(old_head ? n : m));
        return cli_fail(&err);
    }
    if (rs_merkle_consistency_proof(v->leaves, m, n, &proof, &err) < 0)
        return cli_fail(&err);
    if (!rs_merkle_verify_consistency(m, n, &old_head->root, &new_head->root, &proof)) {
        rs_fail(&err, "the head of size %llu does not extend the head of size %llu", (unsigned long long)n,
                (unsigned long long)m);
        return cli_fail(&err);
    }
    return cli_json_print(json_pack("{s:I, s:I, s:o, s:o, s:o}", "old_size", (json_int_t)m, "new_size",
                                    (json_int_t)n, "old_root", hex(&old_head->root), "new_root",
                                    hex(&new_head->root), "proof", hex_list(&proof)));
}

static int run(int argc, char **argv)
{
    const char *sub, *cert = NULL;
    _cleanup_(rs_log_view_free) rs_log_view v = { 0 };
    rs_error err;
    int c, nargs;

    while ((c = cli_getopt(&cmd_log, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'c': cert = optarg; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    nargs = argc - optind;
    sub = nargs > 0 ? argv[optind] : "";
    if (!((!strcmp(sub, "verify") && nargs == 2) || (!strcmp(sub, "prove") && nargs == 3) ||
          (!strcmp(sub, "consistency") && nargs == 4)))
        return cli_usage(&cmd_log, "expected verify LOGDIR, prove LOGDIR ENTRY or consistency LOGDIR OLD NEW");
    if (load(argv[optind + 1], cert, &v, &err) < 0)
        return cli_fail(&err);
    if (!strcmp(sub, "verify"))
        return do_verify(argv[optind + 1], &v);
    if (!strcmp(sub, "prove"))
        return do_prove(&v, argv[optind + 2]);
    return do_consistency(&v, argv[optind + 2], argv[optind + 3]);
}
