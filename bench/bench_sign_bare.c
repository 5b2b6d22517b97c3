/* The least any signer of a tree of files can do: for each file, read it
 * (pread into a buffer reused for every file), SHA-256 it, make one raw
 * RSA PKCS#1 v1.5 signature over that digest, and write the signature to
 * a file of its own. No container, no CMS, no tarball, no manifest, no
 * checks: a lower bound for `sign-template` on the same files, measured
 * on the same machine in the same minute. The files are shared out over
 * THREADS threads (default: the online CPUs) as each thread comes free.
 *   bench_sign_bare KEY.pem LIST OUTDIR [THREADS]
 * LIST names one input a line. OUTDIR must exist; the signatures are
 * written there as N.sig. Prints: files bytes cpu_s */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#define READ_CHUNK (256 * 1024)
#define MAX_THREADS 64

static char **paths;
static size_t n_paths;
static const char *out_dir;
static EVP_PKEY *key;
static atomic_size_t next_file;
static atomic_ullong total_bytes;

static void die(const char *what, const char *why)
{
    fprintf(stderr, "bench_sign_bare: %s: %s\n", what, why);
    exit(1);
}

static void read_list(const char *list)
{
    FILE *f = fopen(list, "re");
    char *line = NULL;
    size_t cap = 0, alloc = 0;
    ssize_t len;

    if (!f)
        die(list, strerror(errno));
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        if (len == 0)
            continue;
        if (n_paths == alloc) {
            alloc = alloc ? 2 * alloc : 1024;
            paths = realloc(paths, alloc * sizeof(*paths));
            if (!paths)
                die(list, "out of memory");
        }
        paths[n_paths] = strdup(line);
        if (!paths[n_paths++])
            die(list, "out of memory");
    }
    free(line);
    fclose(f);
}

static void digest_file(const char *path, EVP_MD_CTX *md, unsigned char *buf, unsigned char out[32])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    off_t off = 0;
    ssize_t got;

    if (fd < 0)
        die(path, strerror(errno));
    if (!EVP_DigestInit_ex(md, EVP_sha256(), NULL))
        die(path, "SHA-256 init failed");
    while ((got = pread(fd, buf, READ_CHUNK, off)) > 0) {
        EVP_DigestUpdate(md, buf, (size_t)got);
        off += got;
    }
    if (got < 0)
        die(path, strerror(errno));
    close(fd);
    EVP_DigestFinal_ex(md, out, NULL);
    atomic_fetch_add(&total_bytes, (unsigned long long)off);
}

static void write_signature(size_t index, const unsigned char *sig, size_t len)
{
    char name[4096];
    int fd;

    snprintf(name, sizeof(name), "%s/%zu.sig", out_dir, index);
    fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        die(name, strerror(errno));
    if (write(fd, sig, len) != (ssize_t)len)
        die(name, "short write");
    close(fd);
}

static void *sign_files(void *unused)
{
    unsigned char *buf = malloc(READ_CHUNK);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_PKEY_CTX *pk = EVP_PKEY_CTX_new(key, NULL);
    unsigned char digest[32], sig[1024];
    size_t i, sig_len;

    (void)unused;
    if (!buf || !md || !pk || EVP_PKEY_sign_init(pk) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(pk, RSA_PKCS1_PADDING) <= 0 ||
        EVP_PKEY_CTX_set_signature_md(pk, EVP_sha256()) <= 0)
        die("key", "cannot set up RSA PKCS#1 v1.5 signing with SHA-256");
    while ((i = atomic_fetch_add(&next_file, 1)) < n_paths) {
        digest_file(paths[i], md, buf, digest);
        sig_len = sizeof(sig);
        if (EVP_PKEY_sign(pk, sig, &sig_len, digest, sizeof(digest)) <= 0)
            die(paths[i], "signing failed");
        write_signature(i, sig, sig_len);
    }
    EVP_PKEY_CTX_free(pk);
    EVP_MD_CTX_free(md);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t threads[MAX_THREADS];
    long want = sysconf(_SC_NPROCESSORS_ONLN);
    struct timespec cpu;
    FILE *kf;
    int n, t;

    if (argc < 4 || argc > 5)
        die("usage", "bench_sign_bare KEY.pem LIST OUTDIR [THREADS]");
    if (argc == 5)
        want = strtol(argv[4], NULL, 10);
    n = want < 1 ? 1 : want > MAX_THREADS ? MAX_THREADS : (int)want;
    kf = fopen(argv[1], "re");
    if (!kf || !(key = PEM_read_PrivateKey(kf, NULL, NULL, NULL)))
        die(argv[1], "cannot read the private key");
    fclose(kf);
    read_list(argv[2]);
    out_dir = argv[3];
    for (t = 0; t < n; t++)
        if (pthread_create(&threads[t], NULL, sign_files, NULL) != 0)
            die("threads", "cannot start a thread");
    for (t = 0; t < n; t++)
        pthread_join(threads[t], NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    printf("%zu %llu %.3f\n", n_paths, (unsigned long long)atomic_load(&total_bytes),
           (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
    EVP_PKEY_free(key);
    return 0;
}
