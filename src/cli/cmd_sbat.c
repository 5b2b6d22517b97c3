#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_values.h"
#include "cli/cli.h"
#include "uefi/sbat.h"

static int run(int argc, char **argv);

static const struct option longopts[] = {
    { "level", no_argument, NULL, 'l' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
};

static const rs_optdoc sbat_docs[] = {
    { "level", NULL,
      "Print shim's .sbatlevel section instead of .sbat.",
      NULL },
    { "json", NULL,
      "Print one JSON document, a record per CSV line.",
      NULL },
    { 0 },
};

const rs_command cmd_sbat = {
    .name = "sbat",
    .summary = "print an EFI image's SBAT metadata (.sbat section)",
    .usage = "sbat FILE [--level] [--json]\n\n"
             "Prints the .sbat CSV of an EFI image. --level prints shim's .sbatlevel\n"
             "instead (the previous and latest revocation levels it carries). --json\n"
             "prints the same as one JSON document, a record per CSV line.",
    .run = run,
    .optdocs = sbat_docs,
    .example = "reprosign sbat /usr/lib/shim/shimx64.efi.signed --level",
    .options = longopts,
};

/* The SBAT specification's column names. In a level, only the "sbat" line
 * has a third column: the date of the level. */
static const char *const sbat_columns[] = {
    "component", "generation", "vendor_name", "vendor_package", "vendor_version", "vendor_url", NULL,
};
static const char *const level_columns[] = { "component", "generation", "date", NULL };

/* A generation is a decimal number; anything else is left out of the
 * document rather than guessed at. */
static json_t *generation_json(const char *s, size_t len)
{
    char buf[24];
    char *end;
    unsigned long long v;

    if (len == 0 || len >= sizeof(buf) || strspn(s, "0123456789") < len)
        return NULL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtoull(buf, &end, 10);
    return errno || v > (unsigned long long)LLONG_MAX ? NULL : json_integer((json_int_t)v);
}

/* One CSV line into {column: value}; columns the line lacks are left out. */
static json_t *line_json(const char *line, size_t len, const char *const *columns)
{
    json_t *o = json_object();
    size_t col = 0;

    while (o && columns[col]) {
        const char *comma = memchr(line, ',', len);
        size_t n = comma ? (size_t)(comma - line) : len;

        rs_json_set(o, columns[col], col == 1 ? generation_json(line, n) : json_stringn(line, n));
        col++;
        if (!comma)
            break;
        len -= n + 1;
        line = comma + 1;
    }
    return o;
}

static json_t *csv_json(const char *csv, const char *const *columns)
{
    json_t *a = json_array();

    while (a && csv && *csv) {
        const char *nl = strchr(csv, '\n');
        size_t n = nl ? (size_t)(nl - csv) : strlen(csv);

        if (n && csv[n - 1] == '\r')
            n--;
        if (n)
            json_array_append_new(a, line_json(csv, n, columns));
        csv = nl ? nl + 1 : NULL;
    }
    return a;
}

static int print_json(const char *path, const sbat_image *s, bool level)
{
    if (level)
        return cli_json_print(json_pack("{s:s, s:o, s:o}", "file", path, "previous", csv_json(s->previous, level_columns),
                                        "latest", csv_json(s->latest, level_columns)));
    return cli_json_print(json_pack("{s:s, s:o}", "file", path, "entries", csv_json(s->sbat, sbat_columns)));
}

static int run(int argc, char **argv)
{
    _cleanup_(sbat_image_free) sbat_image s = { 0 };
    bool level = false, json = false;
    rs_error err;
    int c;

    while ((c = cli_getopt(&cmd_sbat, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'l': level = true; break;
        case 'j': json = true; break;
        case -2: return EXIT_OK;
        default: return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc)
        return cli_usage(&cmd_sbat, "expected exactly one FILE");
    if (sbat_image_load(argv[optind], &s, &err) < 0)
        return cli_fail(&err);
    if (!level && !s.sbat) {
        rs_fail(&err, "%s: no .sbat section", argv[optind]);
        return cli_fail(&err);
    }
    if (level && !s.previous) {
        rs_fail(&err, "%s: no .sbatlevel section", argv[optind]);
        return cli_fail(&err);
    }
    if (json)
        return print_json(argv[optind], &s, level);
    if (!level)
        fputs(s.sbat, stdout);
    else
        printf("previous:\n%slatest:\n%s", s.previous, s.latest);
    return EXIT_OK;
}
