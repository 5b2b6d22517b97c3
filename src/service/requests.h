/* dak's signing requests: {"packages": [{package, source, suite, codename,
 * architecture, version[, embargoed]}]}, each naming a template package
 * to sign. Every field is validated before it is used in a path or a
 * database key. */
#ifndef RS_REQUESTS_H
#define RS_REQUESTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef struct rs_request {
    char *id;                /* <package>_<version>_<architecture>; ':' as "%3a" */
    char *package;           /* the template package */
    char *source;
    char *suite;
    char *codename;
    char *architecture;
    char *version;
    bool embargoed;
} rs_request;

typedef struct rs_request_list {
    rs_request *items;
    size_t n;
} rs_request_list;

int rs_requests_parse(const char *text, size_t len, rs_request_list *out, rs_error *err);
void rs_request_list_free(rs_request_list *l);

/* Debian version syntax: [epoch:]upstream[-revision], upstream starting
 * with a digit, from the characters policy allows. */
bool rs_valid_version(const char *v);
/* A request id names the request's directories (staging/<id>, and
 * OUTPUT/<id>/ made through OUTPUT/.<id>.partial-XXXXXX): each must fit in
 * one file name. */
#define RS_REQUEST_ID_MAX (NAME_MAX - sizeof("..partial-XXXXXX") + 1)
/* A request id as made above (what `service release` accepts). */
bool rs_valid_request_id(const char *id);

#endif
