/* attach-tree writes the files it checked: a file rewritten between the
 * check and the write (same bytes, so only its times tell) stops the run,
 * and nothing is written. Without the rewrite the same tree is signed, so
 * the refusal is the rewrite's doing. The PE image and the key are made
 * here. */
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "formats/format.h"
#include "harness.h"
#include "ops/ops.h"
#include "pipeline/attach_tree.h"

#define LFANEW 0x80
#define FILE_ALIGN 0x200

static char top[] = "/tmp/reprosign-attach-tree.XXXXXX";

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)v);
    put16(p + 2, (uint16_t)(v >> 16));
}

/* A PE32+ image with one section of 0x400 bytes, as tests/tools/mkpe.py makes. */
static size_t make_pe(uint8_t *img)
{
    uint8_t *coff = img + LFANEW + 4, *opt = coff + 20, *sec = opt + 240;

    memset(img, 0, 0x600);
    img[0] = 'M';
    img[1] = 'Z';
    put32(img + 0x3C, LFANEW);
    memcpy(img + LFANEW, "PE\0\0", 4);
    put16(coff, 0x8664);
    put16(coff + 2, 1);
    put16(coff + 16, 240);
    put16(coff + 18, 0x0202);
    put16(opt, 0x20B);
    put32(opt + 16, 0x1000);                 /* AddressOfEntryPoint */
    put32(opt + 20, 0x1000);                 /* BaseOfCode */
    put32(opt + 24, 0x40000000);             /* ImageBase (low half) */
    put32(opt + 32, 0x1000);                 /* SectionAlignment */
    put32(opt + 36, FILE_ALIGN);
    put32(opt + 56, 0x2000);                 /* SizeOfImage */
    put32(opt + 60, FILE_ALIGN);             /* SizeOfHeaders */
    put16(opt + 68, 10);                     /* Subsystem: EFI application */
    put32(opt + 108, 16);                    /* NumberOfRvaAndSizes */
    memcpy(sec, ".text", 5);
    put32(sec + 8, 0x400);
    put32(sec + 12, 0x1000);
    put32(sec + 16, 0x400);
    put32(sec + 20, FILE_ALIGN);
    put32(sec + 36, 0x60000020);
    for (size_t i = 0; i < 0x400; i++)
        img[FILE_ALIGN + i] = (uint8_t)(i * 13 + 7);
    return 0x600;
}

static void path_of(char *out, size_t cap, const char *rel)
{
    snprintf(out, cap, "%s/%s", top, rel);
}

static void write_bytes(const char *rel, const void *data, size_t len)
{
    char path[512];
    int fd;

    path_of(path, sizeof(path), rel);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 || write(fd, data, len) != (ssize_t)len ||
        close(fd) != 0)
        abort();
}

static void make_dir(const char *rel)
{
    char path[512];

    path_of(path, sizeof(path), rel);
    if (mkdir(path, 0755) < 0)
        abort();
}

/* A self-signed RSA key and certificate, as key.pem and cert.pem. */
static void make_key(void)
{
    char key[512], cert[512];

    path_of(key, sizeof(key), "key.pem");
    path_of(cert, sizeof(cert), "cert.pem");
    harness_make_key(key, cert);
}

/* sigs/app.efi.sig for root/app.efi. */
static void make_signature(void)
{
    char key[512], cert[512], file[512];
    rs_signer *signer = NULL;
    rs_sign_options opts;
    rs_image img = { .in.fd = -1 };
    rs_bytes der = { 0 };
    rs_error err;

    path_of(key, sizeof(key), "key.pem");
    path_of(cert, sizeof(cert), "cert.pem");
    path_of(file, sizeof(file), "root/app.efi");
    if (rs_signer_open(key, cert, &signer, &err) < 0 || rs_sign_options_init(&opts, "sha256", false, &err) < 0 ||
        rs_image_open(&img, file, &err) < 0 || rs_image_sign(&img, signer, &opts, &der, &err) < 0) {
        fprintf(stderr, "test set-up: %s\n", err.msg);
        abort();
    }
    write_bytes("sigs/app.efi.sig", der.data, der.len);
    rs_bytes_free(&der);
    rs_image_close(&img);
    rs_signer_free(signer);
}

/* Writes the same bytes again: only the file's times change. */
static void rewrite(void *ctx)
{
    const uint8_t *pe = ctx;

    write_bytes("root/app.efi", pe, 0x600);
}

/* Another signature where the checked one was: one byte more. */
static void swap_signature(void *ctx)
{
    char path[512];
    FILE *f;

    (void)ctx;
    path_of(path, sizeof(path), "sigs/app.efi.sig");
    if (!(f = fopen(path, "a")) || fputc(0, f) == EOF || fclose(f) != 0)
        abort();
}

static void run(const uint8_t *pe, void (*change)(void *), int want_rc, const char *want_error)
{
    char sigs[512], root[512], out[512], signed_path[600];
    rs_attach_tree_options o = { .signatures = sigs, .root = root, .output = out, .jobs = 1 };
    rs_attach_tree_report report;
    rs_error err = { 0 };
    struct stat st;
    int rc;

    path_of(sigs, sizeof(sigs), "sigs");
    path_of(root, sizeof(root), "root");
    path_of(out, sizeof(out), change == rewrite ? "out-changed" : change ? "out-swapped" : "out");
    snprintf(signed_path, sizeof(signed_path), "%s/app.efi", out);
    o.checked = change;
    o.checked_ctx = (void *)pe;
    rc = rs_attach_tree(&o, &report, &err);
    if (rc != want_rc || (want_error && !strstr(err.msg, want_error))) {
        fprintf(stderr, "%s: rc %d, \"%s\"\n", change ? "rewritten" : "untouched", rc, err.msg);
        CHECK(!"attach-tree as expected");
    }
    CHECK((stat(signed_path, &st) == 0) == (want_rc == 0));
    CHECK(want_rc != 0 || st.st_size > 0x600);
    rs_attach_tree_report_free(&report);
}

/* ---- many files: attach-tree keeps its entries in a journal and reads
 * it back a window at a time; these cross windows (1,024 entries). ---- */

#define MANY 2500

static void many_rel(char *out, size_t cap, const char *dir, size_t i, const char *suffix)
{
    snprintf(out, cap, "%s/d%zu/f%04zu.efi%s", dir, i / 1000, i, suffix);
}

/* many/sigs and many/root: every file a copy of the image, every
 * signature a copy of its signature (so one can change alone). */
static void make_many(const uint8_t *pe, const rs_bytes *sig)
{
    char rel[256];

    make_dir("many");
    make_dir("many/sigs");
    make_dir("many/root");
    for (size_t d = 0; d <= (MANY - 1) / 1000; d++) {
        snprintf(rel, sizeof(rel), "many/sigs/d%zu", d);
        make_dir(rel);
        snprintf(rel, sizeof(rel), "many/root/d%zu", d);
        make_dir(rel);
    }
    for (size_t i = 0; i < MANY; i++) {
        many_rel(rel, sizeof(rel), "many/sigs", i, ".sig");
        write_bytes(rel, sig->data, sig->len);
        many_rel(rel, sizeof(rel), "many/root", i, "");
        write_bytes(rel, pe, 0x600);
    }
}

static size_t files_found;

static int count_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)path, (void)st, (void)ftw;
    files_found += type == FTW_F;
    return 0;
}

/* Regular files below dir (temporaries too, whose names start with a dot). */
static size_t files_below(const char *rel)
{
    char path[512];

    path_of(path, sizeof(path), rel);
    files_found = 0;
    nftw(path, count_file, 16, FTW_PHYS);
    return files_found;
}

/* Files of the tree signed: larger than the image by their signature. */
static size_t signed_below(const char *dir)
{
    char rel[256], path[600];
    size_t n = 0;
    struct stat st;

    for (size_t i = 0; i < MANY; i++) {
        many_rel(rel, sizeof(rel), dir, i, "");
        path_of(path, sizeof(path), rel);
        n += stat(path, &st) == 0 && st.st_size > 0x600;
    }
    return n;
}

/* The signature of a file in the third window, changed after the check. */
static void swap_late_signature(void *ctx)
{
    char rel[256], path[600];
    FILE *f;

    (void)ctx;
    many_rel(rel, sizeof(rel), "many/sigs", 2200, ".sig");
    path_of(path, sizeof(path), rel);
    if (!(f = fopen(path, "a")) || fputc(0, f) == EOF || fclose(f) != 0)
        abort();
}

static int run_many(const char *out, void (*change)(void *), rs_attach_tree_report *report, rs_error *err)
{
    char sigs[512], root[512], output[512];
    rs_attach_tree_options o = { .signatures = sigs, .root = root, .output = out ? output : NULL, .jobs = 2 };

    path_of(sigs, sizeof(sigs), "many/sigs");
    path_of(root, sizeof(root), "many/root");
    if (out)
        path_of(output, sizeof(output), out);
    o.checked = change;
    return rs_attach_tree(&o, report, err);
}

static void test_many_elsewhere(void)
{
    rs_attach_tree_report report;
    rs_error err = { 0 };

    CHECK(run_many("many/out", NULL, &report, &err) == 0);
    CHECK(report.n_files == MANY);
    CHECK(signed_below("many/out") == MANY);
    CHECK(files_below("many/out") == MANY);
    rs_attach_tree_report_free(&report);
    /* A signature changed in the third window, once the first two are
     * written: refused, and the temporaries of all three are removed. */
    CHECK(run_many("many/out-swapped", swap_late_signature, &report, &err) == -1);
    CHECK(strstr(err.msg, "f2200.efi.sig: changed since it was checked") != NULL);
    CHECK(files_below("many/out-swapped") == 0);
    rs_attach_tree_report_free(&report);
}

/* In place, two names of one file far apart in the walk: a hard link in
 * the third window to a file in the first, and a symlink. Both refused,
 * in the walk's order, each naming the other name; nothing written. */
static void test_many_in_place(const uint8_t *pe)
{
    char first[256], link_rel[256], path[600], target[600];
    rs_attach_tree_report report;
    rs_error err = { 0 };

    many_rel(first, sizeof(first), "many/root", 3, "");
    many_rel(link_rel, sizeof(link_rel), "many/root", 2400, "");
    path_of(target, sizeof(target), first);
    path_of(path, sizeof(path), link_rel);
    CHECK(unlink(path) == 0 && link(target, path) == 0);
    many_rel(link_rel, sizeof(link_rel), "many/root", 2450, "");
    path_of(path, sizeof(path), link_rel);
    CHECK(unlink(path) == 0 && symlink("../d0/f0005.efi", path) == 0);
    CHECK(run_many(NULL, NULL, &report, &err) == -1);
    CHECK(report.n_problems == 2);
    CHECK(report.n_problems == 2 && strstr(report.problems[0], "d2/f2400.efi: the same file as ") &&
          strstr(report.problems[0], "d0/f0003.efi; in place"));
    CHECK(report.n_problems == 2 && strstr(report.problems[1], "d2/f2450.efi: the same file as ") &&
          strstr(report.problems[1], "d0/f0005.efi; in place"));
    CHECK(signed_below("many/root") == 0);
    rs_attach_tree_report_free(&report);
    /* Apart again, the tree is signed in place. */
    CHECK(unlink(path) == 0);
    write_bytes(link_rel, pe, 0x600);
    many_rel(link_rel, sizeof(link_rel), "many/root", 2400, "");
    path_of(path, sizeof(path), link_rel);
    CHECK(unlink(path) == 0);
    write_bytes(link_rel, pe, 0x600);
    CHECK(run_many(NULL, NULL, &report, &err) == 0);
    CHECK(signed_below("many/root") == MANY);
    CHECK(files_below("many/root") == MANY);
    rs_attach_tree_report_free(&report);
}

int main(void)
{
    static uint8_t pe[0x600];
    char cmd[600];
    rs_bytes sig = { 0 };
    rs_error err;

    if (!mkdtemp(top))
        abort();
    make_pe(pe);
    make_dir("root");
    make_dir("sigs");
    write_bytes("root/app.efi", pe, sizeof(pe));
    make_key();
    make_signature();
    run(pe, NULL, 0, NULL);
    run(pe, rewrite, -1, "changed since its signature was checked");
    /* Signatures are not held from check to write, but read again: one
     * changed in between is refused, and nothing is written. */
    run(pe, swap_signature, -1, "app.efi.sig: changed since it was checked; nothing was written");
    make_signature();
    path_of(cmd, sizeof(cmd), "sigs/app.efi.sig");
    if (rs_read_file(cmd, 1 << 20, &sig, &err) < 0)
        abort();
    make_many(pe, &sig);
    rs_bytes_free(&sig);
    test_many_elsewhere();
    test_many_in_place(pe);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    if (system(cmd) != 0)
        CHECK(!"clean up");
    return harness_finish("test_attach_tree");
}
