/* What the log subcommands share (cmd_log.c, cmd_log_proof.c): the keys a
 * log is checked against, and tree hashes as --json prints them. */
#include "base/json_values.h"
#include "cli/cmd_log.h"

void log_free_keys(rs_note_key *vkey, rs_note_key *witnesses, size_t n)
{
    rs_note_key_free(vkey);
    for (size_t i = 0; i < n; i++)
        rs_note_key_free(&witnesses[i]);
}

int log_load_keys(const log_args *a, rs_note_key *vkey, rs_note_key *witnesses)
{
    rs_error err;

    if (!a->vkey)
        return cli_usage(a->cmd, "--vkey VKEY is required: a log is checked against the log key you pinned, "
                                 "never against key material found in or beside it");
    if (a->min_witnesses > (long)a->n_witnesses)
        return cli_usage(a->cmd, "--min-witnesses %ld, but only %zu --witness keys", a->min_witnesses,
                         a->n_witnesses);
    if (rs_note_vkey_load(a->vkey, vkey, &err) < 0)
        return cli_fail(&err);
    for (size_t i = 0; i < a->n_witnesses; i++) {
        if (rs_note_vkey_load(a->witness[i], &witnesses[i], &err) < 0) {
            log_free_keys(vkey, witnesses, i);
            return cli_fail(&err);
        }
    }
    return EXIT_OK;
}

json_t *log_hash_json(const rs_hash *h)
{
    return rs_json_digest("sha256", h->b, RS_HASH_LEN);
}

json_t *log_hash_list_json(const rs_hash_list *l)
{
    json_t *list = json_array();

    for (size_t i = 0; list && i < l->n; i++)
        json_array_append_new(list, log_hash_json(&l->h[i]));
    return list;
}

json_t *log_tree_json(uint64_t size, const rs_hash *root)
{
    return json_pack("{s:I, s:o}", "size", (json_int_t)size, "root", log_hash_json(root));
}
