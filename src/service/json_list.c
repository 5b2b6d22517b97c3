#include "service/json_list.h"

#include <stdlib.h>
#include <string.h>

int rs_json_string_list(const json_t *doc, const char *name, size_t min, size_t max, const char *what, char ***out,
                        size_t *n, rs_error *err)
{
    const json_t *list = json_object_get(doc, name);
    size_t i;
    json_t *v;

    if (!list)
        return 0;
    if (!json_is_array(list) || json_array_size(list) < min || json_array_size(list) > max)
        return rs_fail(err, "\"%s\" must be %s", name, what);
    if (!(*out = calloc(json_array_size(list) + 1, sizeof(char *))))
        return rs_fail(err, "out of memory");
    json_array_foreach(list, i, v) {
        if (!json_is_string(v) || !*json_string_value(v))
            return rs_fail(err, "\"%s\"[%zu] is not a non-empty string", name, i);
        if (!((*out)[i] = strdup(json_string_value(v))))
            return rs_fail(err, "out of memory");
        if (n)
            *n = i + 1;
    }
    return 0;
}
