/* service/state.c: the service's requests in SQLite, each transition
 * allowed only from the states it leaves, and all of it kept across a
 * close and reopen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"
#include "service/requests.h"
#include "service/state.h"

static char dir[] = "/tmp/test_state.XXXXXX";
static char db[256];

static void requests(rs_request_list *l, const char *versions[], size_t n)
{
    char text[4096];
    size_t used = (size_t)snprintf(text, sizeof(text), "{\"packages\": [");
    rs_error err;

    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(text + used, sizeof(text) - used,
                                 "%s{\"package\": \"shim-signed-template\", \"source\": \"shim\", \"suite\": \"sid\", "
                                 "\"codename\": \"sid\", \"architecture\": \"amd64\", \"version\": \"%s\"}",
                                 i ? ", " : "", versions[i]);
    snprintf(text + used, sizeof(text) - used, "]}");
    if (rs_requests_parse(text, strlen(text), l, &err) < 0)
        abort();
}

/* The status of id, or -1 when it is not there. */
static int status_of(rs_state *s, const char *id)
{
    rs_state_row *rows = NULL;
    size_t n = 0;
    rs_error err;
    int status = -1;

    if (rs_state_list(s, -1, &rows, &n, &err) < 0)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].req.id, id))
            status = (int)rows[i].status;
    rs_state_rows_free(rows, n);
    return status;
}

static void test_open_and_meta(void)
{
    rs_state *s = NULL;
    char *value = NULL;
    rs_error err;

    CHECK(rs_state_open(db, &s, &err) < 0 && strstr(err.msg, db));
    CHECK(rs_state_create(db, &s, &err) == 0);
    CHECK(rs_state_meta_get(s, "config", &value, &err) == 0 && value == NULL);
    CHECK(rs_state_meta_set(s, "config", "/etc/reprosign.json", &err) == 0);
    CHECK(rs_state_meta_set(s, "config", "/etc/other.json", &err) == 0);
    rs_state_close(s);
    CHECK(rs_state_open(db, &s, &err) == 0);
    CHECK(rs_state_meta_get(s, "config", &value, &err) == 0 && value && !strcmp(value, "/etc/other.json"));
    free(value);
    rs_state_close(s);
}

/* Known ids are left alone; rows come back in arrival order. */
static void test_add_and_list(rs_state *s)
{
    const char *first[] = { "15.8-1", "15.8-2" }, *second[] = { "15.8-2", "15.8-3" };
    const bool none[] = { false, false }, embargo[] = { false, true };
    /* Who each suite was at intake: what a later read is compared with. */
    const rs_suite_identity ids[] = { { "trixie", "stable", "trixie" }, { "trixie-embargoed", "trixie-embargoed", NULL } };
    rs_request_list a, b;
    rs_state_row *rows = NULL;
    size_t added = 0, n = 0;
    rs_error err;

    requests(&a, first, 2);
    requests(&b, second, 2);
    CHECK(rs_state_add(s, &a, none, NULL, 1000, &added, &err) == 0 && added == 2);
    CHECK(rs_state_add(s, &b, embargo, ids, 2000, &added, &err) == 0 && added == 1);
    CHECK(rs_state_list(s, -1, &rows, &n, &err) == 0 && n == 3);
    CHECK(n == 3 && !strcmp(rows[0].req.version, "15.8-1") && !strcmp(rows[2].req.version, "15.8-3"));
    CHECK(n == 3 && rows[1].arrived == 1000 && rows[2].arrived == 2000 && rows[2].req.embargoed);
    CHECK(n == 3 && rows[0].status == RS_REQ_PENDING && rows[0].attempts == 0 && rows[0].retry_at == 0);
    CHECK(n == 3 && !rows[0].archive.dir && !rows[0].archive.suite && !rows[1].archive.dir);
    CHECK(n == 3 && rows[2].archive.dir && rs_suite_identity_equal(&rows[2].archive, &ids[1]));
    rs_state_rows_free(rows, n);
    CHECK(rs_state_list(s, RS_REQ_SIGNED, &rows, &n, &err) == 0 && n == 0);
    rs_state_rows_free(rows, n);
    rs_request_list_free(&a);
    rs_request_list_free(&b);
}

/* pending -> signed -> published; pending -> held -> signed. */
static void test_signing(rs_state *s)
{
    const char *one = "shim-signed-template_15.8-1_amd64", *two = "shim-signed-template_15.8-2_amd64";
    rs_state_row *rows = NULL;
    size_t n = 0;
    rs_error err;

    CHECK(rs_state_set_signed(s, one, false, "[]", "[{\"n\":1}]", &err) == 0 && status_of(s, one) == RS_REQ_SIGNED);
    CHECK(rs_state_set_signed(s, one, false, "[]", "[]", &err) < 0 && strstr(err.msg, "not in a state that allows"));
    CHECK(rs_state_list(s, RS_REQ_SIGNED, &rows, &n, &err) == 0 && n == 1 && !strcmp(rows[0].entries, "[{\"n\":1}]"));
    rs_state_rows_free(rows, n);
    CHECK(rs_state_set_status(s, one, RS_REQ_PUBLISHED, NULL, &err) == 0 && status_of(s, one) == RS_REQ_PUBLISHED);
    CHECK(rs_state_set_signed(s, two, true, "[]", "[]", &err) == 0 && status_of(s, two) == RS_REQ_HELD);
    CHECK(rs_state_release(s, one, &err) < 0 && strstr(err.msg, "is not held"));
    CHECK(rs_state_release(s, two, &err) == 0 && status_of(s, two) == RS_REQ_SIGNED);
    CHECK(rs_state_set_status(s, "no-such-id", RS_REQ_FAILED, "x", &err) < 0 && strstr(err.msg, "no-such-id"));
}

/* A transient failure comes back when its time is due, a refusal only by
 * hand; attempts count failures in a row until a retry by hand. */
static void test_failures(rs_state *s)
{
    const char *three = "shim-signed-template_15.8-3_amd64", *two = "shim-signed-template_15.8-2_amd64";
    rs_state_row *rows = NULL;
    size_t n = 0;
    rs_error err;

    CHECK(rs_state_set_failed(s, three, "mirror away", true, 5000, &err) == 0);
    CHECK(rs_state_set_failed(s, two, "bad template", false, 0, &err) == 0);
    CHECK(rs_state_retry_due(s, 4999, &n, &err) == 0 && n == 0 && status_of(s, three) == RS_REQ_FAILED);
    CHECK(rs_state_retry_due(s, 5000, &n, &err) == 0 && n == 1 && status_of(s, three) == RS_REQ_PENDING);
    CHECK(status_of(s, two) == RS_REQ_FAILED);
    CHECK(rs_state_set_failed(s, three, "mirror away", true, 6000, &err) == 0);
    CHECK(rs_state_list(s, RS_REQ_FAILED, &rows, &n, &err) == 0 && n == 2);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(rows[i].req.id, three))
            CHECK(rows[i].attempts == 2 && rows[i].retry_at == 6000 && !strcmp(rows[i].failure, "transient"));
        else
            CHECK(rows[i].attempts == 1 && !strcmp(rows[i].failure, "refused") && !strcmp(rows[i].reason, "bad template"));
    }
    rs_state_rows_free(rows, n);
    CHECK(rs_state_retry(s, "shim-signed-template_15.8-1_amd64", &n, &err) < 0 && strstr(err.msg, "has not failed"));
    CHECK(rs_state_retry(s, NULL, &n, &err) == 0 && n == 2);
    CHECK(rs_state_list(s, RS_REQ_PENDING, &rows, &n, &err) == 0 && n == 2 && rows[0].attempts == 0 && !rows[0].reason);
    rs_state_rows_free(rows, n);
}

static void test_status_names(void)
{
    CHECK(!strcmp(rs_req_status_name(RS_REQ_PENDING), "pending") && !strcmp(rs_req_status_name(RS_REQ_HELD), "held"));
    CHECK(!strcmp(rs_req_status_name(RS_REQ_FAILED), "failed"));
}

int main(void)
{
    rs_state *s = NULL;
    rs_error err;

    if (!mkdtemp(dir))
        return 1;
    snprintf(db, sizeof(db), "%s/state.db", dir);
    test_open_and_meta();
    if (rs_state_open(db, &s, &err) < 0) {
        fprintf(stderr, "test_state: %s\n", err.msg);
        return 1;
    }
    test_add_and_list(s);
    test_signing(s);
    test_failures(s);
    rs_state_close(s);
    /* Everything above survives a reopen. */
    CHECK(rs_state_open(db, &s, &err) == 0 && status_of(s, "shim-signed-template_15.8-1_amd64") == RS_REQ_PUBLISHED);
    rs_state_close(s);
    test_status_names();
    rs_remove_tree(dir);
    return harness_finish("test_state");
}
