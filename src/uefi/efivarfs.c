#include "uefi/efivarfs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"

/* Firmware caps a variable's size (edk2's PcdMaxAuthVariableSize; whole
 * NV stores on real machines are 64-256 KiB) and the largest variable
 * seen, dbx, is under 32 KiB: 1 MiB is a wide margin that still stops a
 * huge file posing as a variable. */
#define EFIVARFS_MAX_VAR (1024u * 1024)
/* Real machines show 50-300 variables (Boot####, vendor settings). */
#define EFIVARFS_MAX_VARS 4096u
#define GUID_CHARS (EFI_GUID_STR - 1)

int efivarfs_parse(const char *file_name, const uint8_t *buf, size_t len, vs_var *v, rs_error *err)
{
    size_t n = strlen(file_name);

    memset(v, 0, sizeof(*v));
    if (n < GUID_CHARS + 2 || file_name[n - GUID_CHARS - 1] != '-')
        return rs_fail(err, "not an efivarfs variable (its name is not NAME-GUID)");
    if (n - GUID_CHARS - 1 >= sizeof(v->name))
        return rs_fail(err, "variable name longer than %zu bytes", sizeof(v->name) - 1);
    if (efi_guid_parse(file_name + n - GUID_CHARS, &v->guid, err) < 0)
        return -1;
    memcpy(v->name, file_name, n - GUID_CHARS - 1);
    if (len < EFIVARFS_ATTR_SIZE)
        return rs_fail(err, "%zu bytes: shorter than the %d-byte attributes word", len, EFIVARFS_ATTR_SIZE);
    if (len - EFIVARFS_ATTR_SIZE > EFIVARFS_MAX_VAR)
        return rs_fail(err, "variable of %zu bytes is over the limit of %u", len - EFIVARFS_ATTR_SIZE,
                       EFIVARFS_MAX_VAR);
    v->attributes = efi_le32(buf);
    v->state = VAR_ADDED;
    v->active = true;
    v->data_off = EFIVARFS_ATTR_SIZE;
    v->data_len = (uint32_t)(len - EFIVARFS_ATTR_SIZE);
    return 0;
}

bool efivarfs_booted_uefi(void)
{
    return access("/sys/firmware/efi", F_OK) == 0;
}

/* Opened below the directory refusing any link (one to /etc/shadow would
 * have its bytes read and parsed) and without blocking (a FIFO would hang
 * the read); then only a regular file is read. */
static int add_file(varstore *vs, int dir_fd, const char *dir, const char *file_name, rs_error *err)
{
    _cleanup_free_ char *path = NULL;
    _cleanup_bytes_ rs_bytes buf = { 0 };
    vs_var v;
    int fd;

    if (!(path = rs_path_join(dir, file_name)))
        return rs_fail(err, "out of memory");
    if (rs_open_beneath_no_symlinks(dir_fd, dir, file_name, &fd, err) < 0 ||
        rs_read_fd(fd, path, EFIVARFS_MAX_VAR + EFIVARFS_ATTR_SIZE, &buf, err) < 0 ||
        efivarfs_parse(file_name, buf.data, buf.len, &v, err) < 0)
        return rs_error_prefix(err, "%s", path);
    v.off = vs->image.len;
    v.data_off += vs->image.len;
    if (rs_bytes_append(&vs->image, buf.data, buf.len, err) < 0)
        return -1;
    vs->vars[vs->n++] = v;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const vs_var *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    return c ? c : memcmp(x->guid.b, y->guid.b, sizeof(x->guid.b));
}

static int read_dir(DIR *d, const char *dir, varstore *vs, rs_error *err)
{
    struct dirent *e;

    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (vs->n == EFIVARFS_MAX_VARS)
            return rs_fail(err, "%s: more than %u variables", dir, EFIVARFS_MAX_VARS);
        if (add_file(vs, dirfd(d), dir, e->d_name, err) < 0)
            return -1;
    }
    return 0;
}

int efivarfs_load(const char *dir, varstore *vs, rs_error *err)
{
    DIR *d = opendir(dir);
    int rc;

    memset(vs, 0, sizeof(*vs));
    vs->runtime = true;
    if (!d)
        return rs_fail(err, "%s: %s", dir, strerror(errno));
    if (!(vs->vars = calloc(EFIVARFS_MAX_VARS, sizeof(*vs->vars)))) {
        closedir(d);
        return rs_fail(err, "out of memory");
    }
    rc = read_dir(d, dir, vs, err);
    closedir(d);
    if (rc < 0)
        return -1;
    if (!vs->n)
        return rs_fail(err, "%s: no variables (is efivarfs mounted there? mount -t efivarfs efivarfs %s)", dir, dir);
    qsort(vs->vars, vs->n, sizeof(*vs->vars), by_name);
    return 0;
}
