#include "crypto/passphrase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source;   /* --pass, checked */

int rs_passphrase_set_source(const char *spec, rs_error *err)
{
    if (!strncmp(spec, "pass:", 5))
        return rs_fail(err, "--pass pass:...: a passphrase on the command line shows in ps and shell history; "
                            "use file:PATH, env:VAR or the terminal");
    if ((strncmp(spec, "file:", 5) || !spec[5]) && (strncmp(spec, "env:", 4) || !spec[4]))
        return rs_fail(err, "--pass %s: expected file:PATH or env:VAR", spec);
    source = spec;
    return 0;
}

int rs_passphrase_get(const char *path, rs_p11_pin *out, rs_error *err)
{
    const char *value;
    char prompt[512];

    if (source && !strncmp(source, "file:", 5))
        return rs_secret_from_file(source + 5, out, err);
    if (source) {
        if (!(value = getenv(source + 4)))
            return rs_fail(err, "--pass %s: the variable is not set", source);
        return rs_secret_set(out, value, source + 4, err);
    }
    if ((value = getenv(RS_PASSPHRASE_ENV)))
        return rs_secret_set(out, value, RS_PASSPHRASE_ENV, err);
    snprintf(prompt, sizeof(prompt), "Passphrase for %s: ", path);
    return rs_secret_from_tty(prompt, "the key is encrypted: give its passphrase with --pass file:PATH or "
                                      "env:VAR, set " RS_PASSPHRASE_ENV ", or run on a terminal", out, err);
}
