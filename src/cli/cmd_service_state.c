/* `reprosign service status | release | retry`: looking at and changing
 * the service's state, with or without the service running. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_service.h"
#include "service/service.h"

extern const rs_command cmd_service;

static const char *const states[] = { "pending", "signed", "held", "published", "failed", NULL };

static const char *field(json_t *r, const char *name)
{
    const char *v = json_string_value(json_object_get(r, name));

    return v ? v : "";
}

/* The failure's kind and when it is tried again, after its reason. */
static void print_reason(json_t *r)
{
    const char *failure = field(r, "failure"), *retry = field(r, "retry_at");

    printf("%s", field(r, "reason"));
    if (!strcmp(failure, "refused"))
        printf(" (refused)");
    else if (*retry)
        printf(" (failed for now; tried again at %s)", retry);
    else if (*failure)
        printf(" (failed for now; no more automatic retries)");
    printf("\n");
}

static void print_table(json_t *list)
{
    static const char *const columns[] = { "REQUEST", "PACKAGE", "VERSION", "SUITE", "STATE", "SINCE" };
    static const char *const names[] = { "id", "package", "version", "suite", "status", "updated" };
    size_t width[6], i;
    json_t *r;

    for (int c = 0; c < 6; c++) {
        width[c] = strlen(columns[c]);
        json_array_foreach(list, i, r) {
            size_t n = strlen(field(r, names[c]));

            width[c] = n > width[c] ? n : width[c];
        }
    }
    for (int c = 0; c < 6; c++)
        printf("%-*s  ", (int)width[c], columns[c]);
    printf("REASON\n");
    json_array_foreach(list, i, r) {
        for (int c = 0; c < 6; c++)
            printf("%-*s  ", (int)width[c], field(r, names[c]));
        print_reason(r);
    }
}

/* Keeps the requests in state `only` (all when NULL). */
static json_t *filtered(json_t *doc, const char *only)
{
    json_t *list = json_object_get(doc, "requests"), *kept = json_array(), *r;
    size_t i;

    json_array_foreach(list, i, r) {
        if (!only || !strcmp(field(r, "status"), only))
            json_array_append(kept, r);
    }
    json_object_set_new(doc, "requests", kept);
    return kept;
}

int cli_service_status(const cli_service_args *a)
{
    rs_service *s = NULL;
    json_t *doc = NULL, *list;
    bool known = !a->status;
    rs_error err;
    int rc;

    for (size_t i = 0; a->status && states[i]; i++)
        known |= !strcmp(a->status, states[i]);
    if (!known)
        return cli_usage(&cmd_service, "--status takes pending, signed, held, published or failed");
    if (rs_service_open(a->state, NULL, NULL, &s, &err) < 0)
        return cli_fail(&err);
    rc = rs_service_status(s, &doc, &err);
    rs_service_close(s);
    if (rc < 0)
        return cli_fail(&err);
    list = filtered(doc, a->status);
    if (a->json)
        return cli_json_print(doc);
    if (json_array_size(list) == 0)
        printf(a->status ? "no %s requests\n" : "no requests\n", a->status);
    else
        print_table(list);
    json_decref(doc);
    return EXIT_OK;
}

/* With no service running, publish at once; otherwise mark it released
 * and let the running service publish it on its next pass. */
int cli_service_release(const cli_service_args *a, const char *id)
{
    rs_service *s = NULL;
    bool busy, now;
    rs_error err;
    int rc;

    if (rs_service_open_exclusive(a->state, cli_service_note, NULL, &s, &busy, &err) < 0) {
        if (!busy || rs_service_open(a->state, cli_service_note, NULL, &s, &err) < 0)
            return cli_fail(&err);
    }
    now = !busy;
    rc = now ? rs_service_load_keys(s, &err) : 0;
    if (rc == 0)
        rc = now ? rs_service_release_and_publish(s, id, &err) : rs_service_release(s, id, &err);
    if (rc == 0)
        printf(now ? "%s: released and published to %s/%s\n"
                   : "%s: released; the running service publishes it to %s/%s on its next pass\n",
               id, rs_service_output_dir(s), id);
    rs_service_close(s);
    return rc < 0 ? cli_fail(&err) : EXIT_OK;
}

int cli_service_retry(const cli_service_args *a, const char *id)
{
    rs_service *s = NULL;
    size_t n = 0;
    rs_error err;
    int rc;

    if (rs_service_open(a->state, NULL, NULL, &s, &err) < 0)
        return cli_fail(&err);
    rc = rs_service_retry(s, id, &n, &err);
    rs_service_close(s);
    if (rc < 0)
        return cli_fail(&err);
    printf("%zu request(s) back to pending; the next pass signs them\n", n);
    return EXIT_OK;
}
