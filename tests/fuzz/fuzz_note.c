/* Signed notes and checkpoints, as `log verify`, `log consistency` and
 * the service's open read them: the input is a checkpoint file. It is
 * parsed, checked against the log key and a witness key, and a checkpoint
 * that verifies must parse back to the same text. Also a key file's text
 * (the input up to its first newline). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_tlog_keys.h"
#include "translog/proof.h"
#include "translog/tiles.h"

static rs_note_key vkey, wkey;

static void fuzz_bug(const char *what)
{
    fprintf(stderr, "BUG: %s\n", what);
    abort();
}

static void check_key_text(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    char *text = strndup((const char *)data, nl ? (size_t)(nl - data) : size);
    rs_note_key k;
    rs_error err;

    if (!text)
        return;
    if (rs_note_vkey_parse(text, &k, &err) == 0) {
        if (!rs_note_name_valid(k.name, strlen(k.name)) || k.private)
            fuzz_bug("a verifier key was accepted with an invalid name");
        rs_note_key_free(&k);
    }
    if (rs_note_skey_parse(text, &k, &err) == 0)
        rs_note_key_free(&k);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_note note;
    rs_checkpoint cp;
    rs_error err;

    if (!vkey.pkey && (rs_note_vkey_parse(FUZZ_LOG_VKEY, &vkey, &err) < 0 ||
                       rs_note_vkey_parse(FUZZ_WITNESS_VKEY, &wkey, &err) < 0))
        fuzz_bug("the fuzz keys do not parse");
    check_key_text(data, size);
    if (rs_checkpoint_open((const char *)data, size, &vkey, &note, &cp, &err) == 0) {
        char *again = rs_checkpoint_text(cp.origin, cp.size, &cp.root);

        if (strcmp(cp.origin, vkey.name))
            fuzz_bug("a checkpoint was accepted under another origin");
        if (again && strncmp(note.text, again, strlen(again)))
            fuzz_bug("a verified checkpoint does not print back to its text");
        rs_check_witnesses(&note, &wkey, 1, 1, &err);
        free(again);
        rs_note_free(&note);
        rs_checkpoint_free(&cp);
    } else if (strlen(err.msg) == 0) {
        fuzz_bug("a refusal without a message");
    }
    if (rs_note_parse((const char *)data, size, &note, &err) == 0) {
        if (note.n_sigs == 0 || note.n_sigs > RS_NOTE_MAX_SIGS || note.text[note.text_len - 1] != '\n')
            fuzz_bug("a note was accepted without signatures or a final newline");
        rs_note_free(&note);
    }
    return 0;
}
