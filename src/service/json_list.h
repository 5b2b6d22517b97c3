/* A configuration setting that is a list of strings. */
#ifndef RS_JSON_LIST_H
#define RS_JSON_LIST_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"

/* The non-empty strings of doc's member name, as a NULL-terminated array
 * (*out stays NULL when the member is absent); between min and max of
 * them, or an error naming the setting and what it must be (what). */
int rs_json_string_list(const json_t *doc, const char *name, size_t min, size_t max, const char *what, char ***out,
                        size_t *n, rs_error *err);

#endif
