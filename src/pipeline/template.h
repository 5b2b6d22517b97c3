/* A signing template: its files.json, the binary versions it was built
 * against, and its source-template/ tree, from a template .deb, an unpacked
 * template root, or a bare files.json. */
#ifndef RS_TEMPLATE_H
#define RS_TEMPLATE_H

#include <time.h>

#include "pipeline/files_json.h"

typedef struct rs_template {
    rs_files_json files;
    char *package;         /* the template package, when known */
    char *version;         /* its version: the unsigned binaries' version */
    char *source;          /* its Source: (a template .deb's), or NULL */
    char *source_dir;      /* source-template/ on disk, or NULL */
    char *source_name;     /* from source-template/debian/changelog */
    char *source_version;
    time_t changelog_time; /* date of the newest changelog entry; 0 if none */
} rs_template;

/* workdir receives the source-template/ of a .deb template; files.json's
 * files go to sink, if not NULL (files_json.h). */
int rs_template_load(const char *spec, const char *workdir, const rs_files_json_sink *sink, rs_template *t,
                     rs_error *err);
void rs_template_free(rs_template *t);

/* The binary version a package must have: the template's own version, or
 * the "pkg (= version)" pin in source-template/debian/control. */
const char *rs_template_wanted_version(const rs_template *t, const char *package, char **owned);

/* Parses "name (version) ...", and the first " -- who <mail>  date" line. */
int rs_changelog_parse(const char *text, char **name, char **version, time_t *when, rs_error *err);

#endif
