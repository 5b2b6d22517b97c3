/* dak's requests.json: ids, and ids too long for `service release`. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "service/requests.h"

/* One request for a package named by n repetitions of 'a'. */
static int parse_one(size_t n, const char *version, rs_request_list *l, rs_error *err)
{
    char package[1024], text[2048];

    memset(package, 'a', n);
    package[n] = '\0';
    snprintf(text, sizeof(text),
             "{\"packages\": [{\"package\": \"%s\", \"source\": \"shim\", \"suite\": \"sid\", \"codename\": \"sid\", "
             "\"architecture\": \"amd64\", \"version\": \"%s\"}]}",
             package, version);
    return rs_requests_parse(text, strlen(text), l, err);
}

static void test_id(void)
{
    rs_request_list l;
    rs_error err;

    CHECK(parse_one(4, "1:2.0-1", &l, &err) == 0 && l.n == 1);
    CHECK(l.n == 1 && strcmp(l.items[0].id, "aaaa_1%3a2.0-1_amd64") == 0);
    rs_request_list_free(&l);
}

/* Package names have no length limit, but a request id does: an id that
 * `service release` would refuse is refused when the request is read. */
static void test_id_too_long(void)
{
    rs_request_list l;
    rs_error err;

    /* "_1.0_amd64" adds 10 characters to the package name. */
    CHECK(parse_one(RS_REQUEST_ID_MAX - 10, "1.0", &l, &err) == 0 && l.n == 1 &&
          strlen(l.items[0].id) == RS_REQUEST_ID_MAX && rs_valid_request_id(l.items[0].id));
    rs_request_list_free(&l);
    CHECK(parse_one(RS_REQUEST_ID_MAX - 9, "1.0", &l, &err) < 0 && strstr(err.msg, "too long") != NULL);
    CHECK(l.n == 0);
    /* Each ':' of a version is three characters in the id: 238 read as
     * they are, 278 in the id. */
    CHECK(parse_one(190, "0:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1:1", &l, &err) < 0);
    CHECK(l.n == 0);
}

int main(void)
{
    test_id();
    test_id_too_long();
    return harness_finish("test_requests");
}
