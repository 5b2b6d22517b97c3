/* The least any PKCS#11 client can pay per signature on a token: a bare
 * loop of C_SignInit + C_Sign (CKM_RSA_PKCS over a SHA-256 DigestInfo),
 * with no library in between, on THREADS threads (default 1), each on a
 * session of its own opened as it starts (the first thread on the session
 * that logged in). Set against bench_pkcs11_sign on the same token at the
 * same parallelism, it separates what reprosign adds from what the token
 * itself costs.
 *   bench_pkcs11_raw MODULE TOKEN-LABEL KEY-LABEL PIN-FILE [N [THREADS]]
 * Prints: open_s sign_s total_s signatures_per_second cpu_sign_s */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <openssl/evp.h>
#include <p11-kit/pkcs11.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64

static CK_FUNCTION_LIST_PTR p11;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of every thread of the process: what signing cost, whatever
 * else the machine was running. */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, CK_RV rv)
{
    fprintf(stderr, "bench_pkcs11_raw: %s failed: 0x%lx\n", what, (unsigned long)rv);
    return -1;
}

static bool label_is(const CK_UTF8CHAR *field, size_t cap, const char *label)
{
    size_t n = strlen(label);

    if (n > cap || memcmp(field, label, n))
        return false;
    for (size_t i = n; i < cap; i++)
        if (field[i] != ' ')
            return false;
    return true;
}

static int find_slot(const char *token, CK_SLOT_ID *slot)
{
    CK_SLOT_ID slots[64];
    CK_ULONG n = 64;
    CK_RV rv = p11->C_GetSlotList(CK_TRUE, slots, &n);

    if (rv != CKR_OK)
        return fail("C_GetSlotList", rv);
    for (CK_ULONG i = 0; i < n; i++) {
        CK_TOKEN_INFO info;

        if (p11->C_GetTokenInfo(slots[i], &info) == CKR_OK && label_is(info.label, sizeof(info.label), token)) {
            *slot = slots[i];
            return 0;
        }
    }
    fprintf(stderr, "bench_pkcs11_raw: no token labelled %s\n", token);
    return -1;
}

static int login(CK_SESSION_HANDLE s, const char *pin_file)
{
    char pin[256] = "";
    FILE *f = fopen(pin_file, "r");
    CK_RV rv;

    if (!f || !fgets(pin, sizeof(pin), f)) {
        if (f)
            fclose(f);
        fprintf(stderr, "bench_pkcs11_raw: %s: cannot read the PIN\n", pin_file);
        return -1;
    }
    fclose(f);
    pin[strcspn(pin, "\r\n")] = '\0';
    rv = p11->C_Login(s, CKU_USER, (CK_UTF8CHAR_PTR)pin, strlen(pin));
    return rv == CKR_OK || rv == CKR_USER_ALREADY_LOGGED_IN ? 0 : fail("C_Login", rv);
}

static int find_key(CK_SESSION_HANDLE s, const char *label, CK_OBJECT_HANDLE *key)
{
    CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
    CK_ATTRIBUTE tmpl[] = { { CKA_CLASS, &cls, sizeof(cls) }, { CKA_LABEL, (void *)label, strlen(label) } };
    CK_ULONG found = 0;
    CK_RV rv = p11->C_FindObjectsInit(s, tmpl, 2);

    if (rv == CKR_OK)
        rv = p11->C_FindObjects(s, key, 1, &found);
    p11->C_FindObjectsFinal(s);
    if (rv != CKR_OK)
        return fail("C_FindObjects", rv);
    if (found != 1) {
        fprintf(stderr, "bench_pkcs11_raw: no private key labelled %s\n", label);
        return -1;
    }
    return 0;
}

static int open_key(char **argv, CK_SLOT_ID *slot, CK_SESSION_HANDLE *s, CK_OBJECT_HANDLE *key)
{
    CK_RV (*get_list)(CK_FUNCTION_LIST_PTR_PTR);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CK_C_INITIALIZE_ARGS threads = { .flags = CKF_OS_LOCKING_OK };
    CK_RV rv;

    if (!lib || !(get_list = (CK_RV(*)(CK_FUNCTION_LIST_PTR_PTR))dlsym(lib, "C_GetFunctionList"))) {
        fprintf(stderr, "bench_pkcs11_raw: %s: %s\n", argv[1], dlerror());
        return -1;
    }
    if ((rv = get_list(&p11)) != CKR_OK || (rv = p11->C_Initialize(&threads)) != CKR_OK)
        return fail("C_Initialize", rv);
    if (find_slot(argv[2], slot) < 0)
        return -1;
    if ((rv = p11->C_OpenSession(*slot, CKF_SERIAL_SESSION, NULL, NULL, s)) != CKR_OK)
        return fail("C_OpenSession", rv);
    return login(*s, argv[4]) < 0 ? -1 : find_key(*s, argv[3], key);
}

static int sign_many(CK_SESSION_HANDLE s, CK_OBJECT_HANDLE key, long from, long n)
{
    /* DigestInfo for SHA-256 (RFC 8017, section 9.2, note 1), then the digest. */
    CK_BYTE info[51] = { 0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
                         0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20 };
    CK_MECHANISM mech = { CKM_RSA_PKCS, NULL, 0 };

    for (long i = from; i < from + n; i++) {
        CK_BYTE sig[1024];
        CK_ULONG siglen = sizeof(sig);
        unsigned int len = 32;
        CK_RV rv;

        if (!EVP_Digest(&i, sizeof(i), info + 19, &len, EVP_sha256(), NULL))
            return fail("EVP_Digest", 0);
        if ((rv = p11->C_SignInit(s, &mech, key)) != CKR_OK)
            return fail("C_SignInit", rv);
        if ((rv = p11->C_Sign(s, info, sizeof(info), sig, &siglen)) != CKR_OK)
            return fail("C_Sign", rv);
    }
    return 0;
}

typedef struct worker {
    CK_SLOT_ID slot;
    CK_SESSION_HANDLE session;  /* 0: open one */
    CK_OBJECT_HANDLE key;
    long from, n;
    int rc;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    CK_RV rv;

    if (!w->session && (rv = p11->C_OpenSession(w->slot, CKF_SERIAL_SESSION, NULL, NULL, &w->session)) != CKR_OK) {
        w->rc = fail("C_OpenSession", rv);
        return NULL;
    }
    w->rc = sign_many(w->session, w->key, w->from, w->n);
    return NULL;
}

/* N signatures split over the threads, each on its own session. */
static int sign_threads(CK_SLOT_ID slot, CK_SESSION_HANDLE login, CK_OBJECT_HANDLE key, long n, int threads)
{
    pthread_t t[MAX_THREADS];
    worker w[MAX_THREADS];
    int rc = 0;

    for (int i = 0; i < threads; i++) {
        w[i] = (worker){ .slot = slot, .session = i ? 0 : login, .key = key, .from = n * i / threads,
                         .n = n * (i + 1) / threads - n * i / threads };
        if (pthread_create(&t[i], NULL, work, &w[i]))
            return fail("pthread_create", 0);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        rc |= w[i].rc;
        if (i && w[i].session)
            p11->C_CloseSession(w[i].session);
    }
    return rc;
}

int main(int argc, char **argv)
{
    long n = argc > 5 ? strtol(argv[5], NULL, 10) : 1000;
    int threads = argc > 6 ? atoi(argv[6]) : 1;
    CK_SLOT_ID slot;
    CK_SESSION_HANDLE s;
    CK_OBJECT_HANDLE key;
    double t0, t1, t2, c1, c2;

    if (argc < 5 || n <= 0 || threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: bench_pkcs11_raw MODULE TOKEN-LABEL KEY-LABEL PIN-FILE [N [THREADS]]\n");
        return 2;
    }
    t0 = now();
    if (open_key(argv, &slot, &s, &key) < 0)
        return 1;
    t1 = now();
    c1 = cpu_now();
    if (sign_threads(slot, s, key, n, threads) < 0)
        return 1;
    t2 = now();
    c2 = cpu_now();
    p11->C_Logout(s);
    p11->C_CloseSession(s);
    p11->C_Finalize(NULL);
    printf("%.6f %.6f %.6f %.1f %.6f\n", t1 - t0, t2 - t1, t2 - t0, (double)n / (t2 - t1), c2 - c1);
    return 0;
}
