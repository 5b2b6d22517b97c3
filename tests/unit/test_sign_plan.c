/* The sign_template planner (src/pipeline/sign_plan.c, sign_order.c,
 * sign_store.c): one item per listed file, kept on disk in files.json
 * order, its package chosen and its path resolved inside it; the items in
 * signatures.tar.gz order, sorted in one window or merged from several;
 * and the refusals that need no file contents. */
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"
#include "pipeline/sign_job.h"
#include "pipeline/tarball.h"

static char top[] = "/tmp/reprosign-plan.XXXXXX";

/* Plans files.json `json` against the packages under top/pkgs, `window`
 * items to a window (0: the job's own); returns the planner's result,
 * with the job kept for the caller to look at. */
static int plan_in_windows(const char *json, size_t window, rs_sign_job *j, rs_sign_template_options *o, rs_error *err)
{
    char pkgs[600];

    *o = (rs_sign_template_options){ .sign.md = EVP_sha256() };
    *j = (rs_sign_job){ .o = o, .window = window };
    memset(err, 0, sizeof(*err));
    snprintf(pkgs, sizeof(pkgs), "%s/pkgs", top);
    if (rs_sign_store_open(j, err) < 0 ||
        rs_files_json_parse_to(json, strlen(json), &j->sink, &j->tpl.files, err) < 0 ||
        rs_pkgset_scan(pkgs, &j->inputs, err) < 0)
        return -1;
    return rs_sign_plan_items(j, err);
}

/* The same, then every path resolved, a window at a time. */
static int plan(const char *json, rs_sign_job *j, rs_sign_template_options *o, rs_error *err)
{
    rs_sign_window w = { 0 };
    int rc = plan_in_windows(json, 0, j, o, err);

    for (size_t first = 0; rc == 0 && first < j->n_items; first += j->window) {
        rc = rs_sign_window_load(j, first, rs_sign_window_span(j, first, j->n_items), &w, err);
        if (rc == 0)
            rc = rs_sign_resolve_window(&w, err);
        if (rc == 0)
            rc = rs_sign_window_save(j, &w, err);
    }
    rs_sign_window_free(&w);
    return rc;
}

static bool sig_name_is(const rs_sign_item *it, const char *want)
{
    char *name = rs_sign_item_sig_name(it);
    bool same = name && !strcmp(name, want);

    free(name);
    return same;
}

/* The item at place k of signatures.tar.gz, its names in buf. */
static bool item_at(rs_sign_job *j, size_t k, rs_sign_item *it, rs_bytes *buf)
{
    rs_error err = { 0 };
    uint64_t index;

    memset(it, 0, sizeof(*it));
    if (rs_sign_order_read(j, k, 1, &index, &err) < 0 || rs_sign_store_load_item(j, (size_t)index, it, buf, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return false;
    }
    return it->rec.order == k;
}

static void unplan(rs_sign_job *j)
{
    rs_sign_plan_free(j);
    rs_pkgset_free(&j->inputs);
    rs_template_free(&j->tpl);
}

static void items_and_order(void)
{
    rs_sign_template_options o;
    rs_sign_job j;
    rs_error err;
    rs_bytes buf = { 0 };
    rs_sign_item it;
    const char *json = "{\"packages\": {"
                       "\"zeta\": {\"trusted_certs\": [], \"files\": [{\"sig_type\": \"efi\", \"file\": \"b.efi\"}]},"
                       "\"alpha\": {\"trusted_certs\": [], \"files\": ["
                       "{\"sig_type\": \"efi\", \"file\": \"boot/vmlinuz\"},"
                       "{\"sig_type\": \"linux-module\", \"file\": \"lib/a-b.ko\"},"
                       "{\"sig_type\": \"linux-module\", \"file\": \"lib/a/c.ko\"}]}}}";
    const char *listed[] = { "b.efi", "boot/vmlinuz", "lib/a-b.ko", "lib/a/c.ko" };

    CHECK(plan(json, &j, &o, &err) == 0);
    if (err.msg[0])
        fprintf(stderr, "%s\n", err.msg);
    CHECK(j.n_items == 4);
    if (j.n_items == 4) {
        /* files.json order, packages as the parser lists them. */
        for (size_t i = 0; i < j.n_items; i++) {
            CHECK(rs_sign_store_load_item(&j, i, &it, &buf, &err) == 0);
            CHECK(it.tree && !strcmp(it.tree->name, it.pkg->name) && !strcmp(it.path, listed[i]));
            if (!strcmp(it.path, "boot/vmlinuz"))
                CHECK(!strcmp(it.resolved, "boot/vmlinuz-6.1") && sig_name_is(&it, "alpha/boot/vmlinuz.sig"));
            else
                CHECK(!strcmp(it.resolved, it.path));
            CHECK(it.rec.type == (i < 2 ? SIG_EFI : SIG_LINUX_MODULE));
        }
        CHECK(j.first_of_type[SIG_EFI] == 0 && j.first_of_type[SIG_LINUX_MODULE] == 2);
        /* Tarball order: a directory's entries sort as if its name ended
         * in '/', so lib/a/c.ko.sig comes before lib/a-b.ko.sig. */
        CHECK(item_at(&j, 0, &it, &buf) && sig_name_is(&it, "alpha/boot/vmlinuz.sig"));
        CHECK(item_at(&j, 1, &it, &buf) && sig_name_is(&it, "alpha/lib/a/c.ko.sig"));
        CHECK(item_at(&j, 2, &it, &buf) && sig_name_is(&it, "alpha/lib/a-b.ko.sig"));
        CHECK(item_at(&j, 3, &it, &buf) && sig_name_is(&it, "zeta/b.efi.sig"));
    }
    rs_bytes_free(&buf);
    unplan(&j);
}

/* The tarball's order and its refusals, found without making the names
 * PKG/PATH.sig, against the same made and sorted by rs_tarball_path_cmp:
 * random paths from a few bytes that sort around '/' and ".sig". */
#define PROP_FILES 12

static int cmp_made(const void *a, const void *b)
{
    return rs_tarball_path_cmp(*(char *const *)a, *(char *const *)b);
}

/* Components "." and ".." make no valid path: they become "s" and "ss". */
static void undot(char *path)
{
    for (char *c = path; *c;) {
        size_t n = strcspn(c, "/");

        if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            memset(c, 's', n);
        c += n + (c[n] == '/');
    }
}

static void random_path(char *out, unsigned *seed)
{
    static const char bytes[] = "as.ig-/";
    size_t n = 1 + (size_t)(rand_r(seed) % 9), k = 0;

    for (size_t i = 0; i < n; i++) {
        char c = bytes[rand_r(seed) % (sizeof(bytes) - 1)];

        if (c == '/' && (k == 0 || out[k - 1] == '/'))
            c = 'a';
        out[k++] = c;
    }
    if (out[k - 1] == '/')
        out[k++] = 'g';
    out[k] = '\0';
    undot(out);
}

static void one_property_case(unsigned seed)
{
    char paths[PROP_FILES][16], json[4096], *made[PROP_FILES];
    size_t len, n = 0;
    rs_sign_template_options o;
    rs_sign_job j;
    rs_error err;
    rs_bytes buf = { 0 };
    const char *conflict = NULL;
    int rc;

    len = (size_t)snprintf(json, sizeof(json), "{\"packages\": {\"alpha\": {\"trusted_certs\": [], \"files\": [");
    for (size_t i = 0; i < PROP_FILES; i++) {
        random_path(paths[i], &seed);
        len += (size_t)snprintf(json + len, sizeof(json) - len, "%s{\"sig_type\": \"efi\", \"file\": \"%s\"}",
                                i ? ", " : "", paths[i]);
        if (asprintf(&made[n], "alpha/%s.sig", paths[i]) >= 0)
            n++;
    }
    snprintf(json + len, sizeof(json) - len, "]}}}");
    qsort(made, n, sizeof(*made), cmp_made);
    for (size_t i = 1; i < n && !conflict; i++) {
        size_t k = strlen(made[i - 1]);

        if (!strcmp(made[i - 1], made[i]))
            conflict = "is listed twice";
        else if (!strncmp(made[i - 1], made[i], k) && made[i][k] == '/')
            conflict = "would be both the signature of";
    }
    /* Windows of 1 to 5 items: the order is merged from several runs. */
    rc = plan_in_windows(json, seed % 6, &j, &o, &err);
    CHECK(conflict ? rc == -1 && strstr(err.msg, conflict) : rc == 0);
    for (size_t k = 0; rc == 0 && k < j.n_items && k < n; k++) {
        rs_sign_item it;

        CHECK(item_at(&j, k, &it, &buf) && sig_name_is(&it, made[k]));
    }
    if (conflict ? rc != -1 : rc != 0)
        fprintf(stderr, "seed %u: %s\n", seed, err.msg);
    rs_bytes_free(&buf);
    for (size_t i = 0; i < n; i++)
        free(made[i]);
    unplan(&j);
}

static void order_property(void)
{
    for (unsigned seed = 1; seed <= 3000; seed++)
        one_property_case(seed);
}

static void refusals(void)
{
    static const struct {
        const char *json, *says;
    } cases[] = {
        { "{\"packages\": {\"alpha\": {\"trusted_certs\": [], \"files\": []}}}", "lists no files" },
        { "{\"packages\": {\"missing\": {\"trusted_certs\": [], \"files\": [{\"sig_type\": \"efi\", \"file\": \"x\"}]}}}",
          "package missing: not found among the packages" },
        { "{\"packages\": {\"alpha\": {\"trusted_certs\": [], \"files\": ["
          "{\"sig_type\": \"efi\", \"file\": \"b.efi\"}, {\"sig_type\": \"efi\", \"file\": \"b.efi\"}]}}}",
          "package alpha: b.efi is listed twice" },
        { "{\"packages\": {\"alpha\": {\"trusted_certs\": [], \"files\": ["
          "{\"sig_type\": \"efi\", \"file\": \"x\"}, {\"sig_type\": \"efi\", \"file\": \"x.sig/y\"}]}}}",
          "x.sig would be both the signature of x and a directory above x.sig/y's" },
        { "{\"packages\": {\"alpha\": {\"trusted_certs\": [], \"files\": [{\"sig_type\": \"efi\", \"file\": \"out\"}]}}}",
          "points outside the package" },
        { "{\"packages\": {\"alpha\": {\"trusted_certs\": [], \"files\": [{\"sig_type\": \"efi\", \"file\": \"nothing\"}]}}}",
          "package alpha (" },
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rs_sign_template_options o;
        rs_sign_job j;
        rs_error err;

        CHECK(plan(cases[i].json, &j, &o, &err) == -1);
        CHECK(strstr(err.msg, cases[i].says) != NULL);
        if (!strstr(err.msg, cases[i].says))
            fprintf(stderr, "case %zu said: %s\n", i, err.msg);
        unplan(&j);
    }
}

/* A dangling link or an unreadable entry may be the package asked for:
 * scanning skips it, and a package not found says it was there. */
static void unreadable_entries(void)
{
    static const char *const missing =
        "{\"packages\": {\"missing\": {\"trusted_certs\": [], \"files\": [{\"sig_type\": \"efi\", \"file\": \"x\"}]}}}";
    static const char *const present =
        "{\"packages\": {\"zeta\": {\"trusted_certs\": [], \"files\": [{\"sig_type\": \"efi\", \"file\": \"b.efi\"}]}}}";
    rs_sign_template_options o;
    rs_sign_job j;
    rs_error err;
    char path[600];

    harness_symlink(top, "gone/missing_1.0_amd64.deb", "pkgs/missing_1.0_amd64.deb");
    CHECK(plan(missing, &j, &o, &err) == -1);
    CHECK(strstr(err.msg, "package missing: not found among the packages (could not read "
                          "missing_1.0_amd64.deb: No such file or directory)") != NULL);
    unplan(&j);
    CHECK(plan(present, &j, &o, &err) == 0);
    unplan(&j);
    harness_symlink(top, "gone/other", "pkgs/other");
    CHECK(plan(missing, &j, &o, &err) == -1);
    CHECK(strstr(err.msg, "(2 entries could not be read, the first missing_1.0_amd64.deb: No such file") != NULL);
    unplan(&j);
    snprintf(path, sizeof(path), "%s/pkgs/missing_1.0_amd64.deb", top);
    CHECK(unlink(path) == 0);
    snprintf(path, sizeof(path), "%s/pkgs/other", top);
    CHECK(unlink(path) == 0);
}

static void trusted_certs(void)
{
    rs_sign_template_options o = { 0 };
    rs_sign_job j = { .o = &o };
    rs_error err = { 0 };
    char allow[600];
    const char *fpr = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    char json[512];

    snprintf(json, sizeof(json),
             "{\"packages\": {\"alpha\": {\"trusted_certs\": [\"%s\"], \"files\": [{\"sig_type\": \"efi\", "
             "\"file\": \"b.efi\"}]}}}", fpr);
    CHECK(rs_files_json_parse(json, strlen(json), &j.tpl.files, &err) == 0);
    CHECK(rs_sign_check_trusted_certs(&j, &err) == -1 && strstr(err.msg, "is not on the allowlist"));
    rs_sign_plan_free(&j);
    snprintf(allow, sizeof(allow), "%s/allow.txt", top);
    harness_put(top, "allow.txt", "# the test CA\n00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff  \n");
    o.allowlist = allow;
    memset(&err, 0, sizeof(err));
    CHECK(rs_sign_check_trusted_certs(&j, &err) == 0);
    rs_sign_plan_free(&j);
    rs_template_free(&j.tpl);
}

int main(void)
{
    if (!mkdtemp(top))
        return 1;
    harness_mkdir(top, "pkgs");
    harness_mkdir(top, "pkgs/alpha");
    harness_mkdir(top, "pkgs/alpha/boot");
    harness_mkdir(top, "pkgs/alpha/lib");
    harness_mkdir(top, "pkgs/alpha/lib/a");
    harness_mkdir(top, "pkgs/alpha/x.sig");
    harness_put(top, "pkgs/alpha/boot/vmlinuz-6.1", "image");
    harness_symlink(top, "vmlinuz-6.1", "pkgs/alpha/boot/vmlinuz");
    harness_put(top, "pkgs/alpha/lib/a-b.ko", "module");
    harness_put(top, "pkgs/alpha/lib/a/c.ko", "module");
    harness_put(top, "pkgs/alpha/b.efi", "image");
    harness_put(top, "pkgs/alpha/x", "image");
    harness_put(top, "pkgs/alpha/x.sig/y", "image");
    harness_symlink(top, "/etc/passwd", "pkgs/alpha/out");
    harness_mkdir(top, "pkgs/zeta");
    harness_put(top, "pkgs/zeta/b.efi", "image");

    items_and_order();
    order_property();
    refusals();
    unreadable_entries();
    trusted_certs();
    rs_remove_tree(top);
    return harness_finish("test_sign_plan");
}
