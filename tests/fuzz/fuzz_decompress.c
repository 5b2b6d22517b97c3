/* Arbitrary bytes as a compressed kernel module (name.ko.xz, .ko.zst,
 * .ko.gz), the way chain --modules reads one: decompressed through
 * libarchive into a sealed memfd, at most a limit, then read as a module
 * and checked against the kernel's keyrings. The decompressed file must
 * be sealed and within the limit, whatever the input.
 *
 * The limit here is 1 MiB, not RS_MAX_DECOMPRESSED, so that a small input
 * that expands a great deal costs a millisecond, not a second.
 *
 * Seeds: the fuzz_module seeds compressed each way. libarchive is not
 * instrumented, so coverage inside it comes from the seeds. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/decompress.h"
#include "base/cleanup.h"
#include "fuzz_keys.h"
#include "uefi/kernel_keys.h"

#define LIMIT (1024 * 1024)

static char in_path[64];
static int in_fd = -1;
static kernel_keys keys;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    kernel_sources none = { 0 };
    rs_error err;

    in_fd = fuzz_memfd("fuzz-decompress-in", in_path, sizeof(in_path));
    if (kernel_keys_load(&keys, &none, &err) < 0)
        fuzz_die("kernel_keys_load", err.msg);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    _cleanup_close_ int fd = -1;
    char path[64];
    uint64_t size = 0;
    module_verdict v;
    struct stat st;
    rs_error err;
    int seals;

    fuzz_memfd_fill(in_fd, data, len);
    if (rs_decompress_to_memfd(in_path, LIMIT, &fd, &size, &err) < 0)
        return 0;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != size || size > LIMIT)
        fuzz_bug("decompressed file's size is not what was reported, or past the limit", NULL);
    seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_WRITE) || !(seals & F_SEAL_GROW) || !(seals & F_SEAL_SHRINK))
        fuzz_bug("decompressed file is not sealed", NULL);
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if (kernel_verify_module(path, &keys, &v, &err) == 0 && v.ok)
        fuzz_bug("a module verified with every keyring empty", v.detail);
    return 0;
}
