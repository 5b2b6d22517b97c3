/* The service's source-only upload of each published request: the .dsc
 * and .tar.xz it published, a _source.changes made by dpkg-genchanges -S,
 * both the .changes and the .dsc clearsigned with the upload key (an
 * OpenPGP key, separate from the Secure Boot keys), delivered into an
 * upload queue's incoming directory or handed to an upload command. */
#ifndef RS_UPLOAD_H
#define RS_UPLOAD_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"

typedef struct rs_upload_config {
    char *key;           /* "upload_key": a full OpenPGP fingerprint; NULL: no upload */
    char *gnupg_home;    /* "gnupg_home"; NULL: GnuPG's default */
    char *incoming;      /* "incoming": the queue directory */
    char **command;      /* "upload_command": argv, the .changes path appended; NULL-terminated */
} rs_upload_config;

/* The configuration's names, for its list of known settings. */
#define RS_UPLOAD_CONFIG_NAMES "upload_key", "gnupg_home", "incoming", "upload_command"

int rs_upload_config_parse(const json_t *doc, rs_upload_config *c, rs_error *err);
void rs_upload_config_free(rs_upload_config *c);

/* Uploads the source package in `published` (OUTPUT/<id>/), working in a
 * fresh directory below `work_dir`, which also records that the upload
 * was made, so a retried publish does not upload twice. Does nothing
 * without an upload key. */
int rs_upload_published(const rs_upload_config *c, const char *published, const char *work_dir, rs_error *err);

/* Delivers work/NAME for each of names, in order, into the queue
 * directory incoming, which other users may be able to write: through a
 * descriptor of it opened refusing a link, each file written, given its
 * mode and renamed within it, then checked (a regular file, the bytes
 * written) before the next. Fails, naming the file, if anything was
 * swapped in meanwhile. (rs_upload_published's queue step.) */
int rs_upload_to_queue(const char *incoming, const char *work, const char *const *names, size_t n, rs_error *err);

#endif
