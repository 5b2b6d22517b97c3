/* efivarfs file names and contents: NAME-GUID, the attributes word, the
 * data; what is refused and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "uefi/efivarfs.h"

static const uint8_t secure_boot[] = { 0x06, 0, 0, 0, 1 };

static void test_parse(void)
{
    rs_error err;
    vs_var v;
    char guid[EFI_GUID_STR];

    CHECK(efivarfs_parse("SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, sizeof(secure_boot), &v,
                         &err) == 0);
    CHECK(!strcmp(v.name, "SecureBoot") && efi_guid_equal(&v.guid, &efi_guid_global));
    CHECK(v.attributes == 6 && v.data_off == 4 && v.data_len == 1 && v.active);
    /* A name may itself hold dashes: the GUID is the last 36 characters. */
    CHECK(efivarfs_parse("Boot-Next-x-605DAB50-E046-4300-ABB6-3DD810DD8B23", secure_boot, 4, &v, &err) == 0);
    efi_guid_format(&v.guid, guid);
    CHECK(!strcmp(v.name, "Boot-Next-x") && !strcmp(guid, "605dab50-e046-4300-abb6-3dd810dd8b23") &&
          v.data_len == 0);
}

static void test_refused(void)
{
    rs_error err;
    vs_var v;
    char long_name[300];

    CHECK(efivarfs_parse("-8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, 5, &v, &err) < 0);
    CHECK(efivarfs_parse("db_8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, 5, &v, &err) < 0);
    CHECK(strstr(err.msg, "NAME-GUID") != NULL);
    CHECK(efivarfs_parse("db-8be4df61-93ca-11d2-aa0d-00e098032b8z", secure_boot, 5, &v, &err) < 0);
    CHECK(efivarfs_parse("db-8be4df61-93ca-11d2-aa0d-00e098032b8c", secure_boot, 3, &v, &err) < 0);
    CHECK(strstr(err.msg, "attributes word") != NULL);
    memset(long_name, 'a', sizeof(long_name));
    strcpy(long_name + 260, "-8be4df61-93ca-11d2-aa0d-00e098032b8c");
    CHECK(efivarfs_parse(long_name, secure_boot, 5, &v, &err) < 0);
}

static void test_load_refuses_missing(void)
{
    rs_error err;
    varstore vs;

    CHECK(efivarfs_load("/nonexistent-efivars", &vs, &err) < 0);
    CHECK(strstr(err.msg, "/nonexistent-efivars") != NULL);
    varstore_free(&vs);
}

/* Loads dir in a child given 10 s: 0 when the load fails with an error
 * holding want and not hide (want NULL: when it succeeds). */
static int load_in_child(const char *dir, const char *want, const char *hide)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        rs_error err = { 0 };
        varstore vs;
        int rc;

        alarm(10);
        rc = efivarfs_load(dir, &vs, &err);
        if (rc == 0)
            varstore_free(&vs);
        if (rc < 0)
            fprintf(stderr, "efivarfs_load: %s\n", err.msg);
        _exit(want ? !(rc < 0 && strstr(err.msg, want) && (!hide || !strstr(err.msg, hide))) : rc < 0);
    }
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A directory of variables may hold what is not one: a link to a file the
 * reader may read (/etc/shadow: its bytes were parsed and some shown in an
 * error) and a FIFO (the read blocked for ever). Each is refused, naming
 * it, from a child given 10 s; the same directory without them loads. */
static void test_load_refuses_links_and_fifos(void)
{
    char dir[] = "/tmp/test_efivarfs.XXXXXX";
    static const char var[] = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
    static const char link_var[] = "db-d719b2cb-3d3a-4596-a3bc-dad00e67656f";
    static const char fifo_var[] = "dbx-d719b2cb-3d3a-4596-a3bc-dad00e67656f";
    char cmd[128];

    CHECK(mkdtemp(dir) != NULL);
    harness_mkdir(dir, "vars");
    FILE *f = fopen(harness_path(harness_path(dir, "vars"), var), "w");

    CHECK(f && fwrite(secure_boot, 1, sizeof(secure_boot), f) == sizeof(secure_boot) && fclose(f) == 0);
    harness_put(dir, "shadow", "root:$6$secret-hash:19000:0:99999:7:::\n");
    harness_symlink(harness_path(dir, "vars"), harness_path(dir, "shadow"), link_var);
    CHECK(load_in_child(harness_path(dir, "vars"), "goes through a symbolic link", "secret-hash") == 0);
    CHECK(unlink(harness_path(harness_path(dir, "vars"), link_var)) == 0);
    CHECK(mkfifo(harness_path(harness_path(dir, "vars"), fifo_var), 0600) == 0);
    CHECK(load_in_child(harness_path(dir, "vars"), "not a regular file", NULL) == 0);
    CHECK(unlink(harness_path(harness_path(dir, "vars"), fifo_var)) == 0);
    CHECK(load_in_child(harness_path(dir, "vars"), NULL, NULL) == 0);   /* the twin */
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    test_parse();
    test_refused();
    test_load_refuses_missing();
    test_load_refuses_links_and_fifos();
    return harness_finish("test_efivarfs");
}
