/* Outputs are all-or-nothing: an aborted output leaves neither the target
 * nor its temporary file; a committed one replaces the target atomically
 * with the requested mode (less the umask). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "harness.h"

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    char dir[] = "/tmp/rs-test-output-XXXXXX", path[256];
    rs_output out;
    rs_input in;
    rs_error err;
    struct stat st;
    uint8_t buf[4];

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/target", dir);
    umask(022);

    CHECK(rs_output_open(&out, path, 0666, &err) == 0);
    CHECK(rs_output_write(&out, "half", 4, &err) == 0);
    rs_output_abort(&out);
    CHECK(count_entries(dir) == 0);

    CHECK(rs_write_file(path, "old!", 4, 0644, &err) == 0);
    CHECK(rs_output_open(&out, path, 0640, &err) == 0);
    CHECK(rs_output_write(&out, "new!", 4, &err) == 0);
    CHECK(rs_output_patch(&out, 0, "N", 1, &err) == 0);
    CHECK(rs_output_patch(&out, 3, "xy", 2, &err) == -1);   /* past what was written */
    CHECK(count_entries(dir) == 2);                          /* target + temporary */
    CHECK(rs_output_commit(&out, &err) == 0);
    rs_output_abort(&out);                                   /* harmless after commit */
    CHECK(count_entries(dir) == 1);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);

    CHECK(rs_input_open(&in, path, &err) == 0);
    CHECK(in.size == 4);
    CHECK(rs_input_read(&in, 0, buf, 4, &err) == 0 && memcmp(buf, "New!", 4) == 0);
    CHECK(rs_input_read(&in, 1, buf, 4, &err) == -1);       /* past the end */
    CHECK(strstr(err.msg, "truncated") != NULL);
    CHECK(rs_input_read(&in, UINT64_MAX, buf, 1, &err) == -1);
    rs_input_close(&in);

    snprintf(path, sizeof(path), "%s/missing/target", dir);
    CHECK(rs_output_open(&out, path, 0644, &err) == -1);
    rs_output_abort(&out);

    snprintf(path, sizeof(path), "%s/target", dir);
    unlink(path);
    rmdir(dir);
    return harness_finish("test_output");
}
