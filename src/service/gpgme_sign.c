#include "service/gpgme_sign.h"

#include <errno.h>
#include <fcntl.h>
#include <gpgme.h>
#include <locale.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/child_env.h"
#include "base/cleanup.h"

extern char **environ;

DEFINE_POINTER_CLEANUP(ctx_releasep, struct gpgme_context, gpgme_release)
DEFINE_POINTER_CLEANUP(key_unrefp, struct _gpgme_key, gpgme_key_unref)
DEFINE_POINTER_CLEANUP(data_releasep, struct gpgme_data, gpgme_data_release)

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_ok;

/* gpgme_check_version() must run once before any other call. */
static void init(void)
{
    init_ok = gpgme_check_version(NULL) != NULL && gpgme_engine_check_version(GPGME_PROTOCOL_OpenPGP) == 0;
}

static int gpg_fail(rs_error *err, const char *what, gpgme_error_t e)
{
    return rs_fail(err, "%s: %s", what, gpgme_strerror(e));
}

static int open_context(const char *home, gpgme_ctx_t *ctx, rs_error *err)
{
    gpgme_error_t e;

    pthread_once(&init_once, init);
    if (!init_ok)
        return rs_fail(err, "GPGME: no usable OpenPGP engine (gpg)");
    if ((e = gpgme_new(ctx)) || (e = gpgme_set_protocol(*ctx, GPGME_PROTOCOL_OpenPGP)) ||
        (home && (e = gpgme_ctx_set_engine_info(*ctx, GPGME_PROTOCOL_OpenPGP, NULL, home))))
        return gpg_fail(err, "GPGME", e);
    gpgme_set_armor(*ctx, 1);
    gpgme_set_textmode(*ctx, 1);
    /* A passphrase or PIN is gpg-agent's business (pinentry), never ours. */
    gpgme_set_pinentry_mode(*ctx, GPGME_PINENTRY_MODE_DEFAULT);
    return 0;
}

/* The secret key whose primary fingerprint (or a subkey's) is `fpr`, and
 * which can sign now. */
static int find_key(gpgme_ctx_t ctx, const char *fpr, gpgme_key_t *key, rs_error *err)
{
    gpgme_error_t e = gpgme_get_key(ctx, fpr, key, 1);
    bool named = false;

    if (e)
        return rs_fail(err, "upload key %s: %s", fpr, gpgme_err_code(e) == GPG_ERR_EOF ? "no such secret key"
                                                                                     : gpgme_strerror(e));
    for (gpgme_subkey_t sk = (*key)->subkeys; sk; sk = sk->next)
        named |= sk->fpr && !strcasecmp(sk->fpr, fpr);
    if (!named)
        return rs_fail(err, "upload key %s: give its full fingerprint", fpr);
    if ((*key)->revoked || (*key)->expired || (*key)->disabled || (*key)->invalid || !(*key)->can_sign)
        return rs_fail(err, "upload key %s: revoked, expired, disabled or unable to sign", fpr);
    return 0;
}

static int sign_into(gpgme_ctx_t ctx, const char *path, int in_fd, int out_fd, rs_error *err)
{
    _cleanup_(data_releasep) struct gpgme_data *in = NULL;
    _cleanup_(data_releasep) struct gpgme_data *out = NULL;
    gpgme_sign_result_t result;
    gpgme_error_t e;

    /* Streamed from and to the descriptors: nothing held whole. */
    if ((e = gpgme_data_new_from_fd(&in, in_fd)) || (e = gpgme_data_new_from_fd(&out, out_fd)))
        return gpg_fail(err, "GPGME", e);
    if ((e = gpgme_op_sign(ctx, in, out, GPGME_SIG_MODE_CLEAR)))
        return rs_fail(err, "%s: cannot sign: %s", path, gpgme_strerror(e));
    result = gpgme_op_sign_result(ctx);
    if (!result || result->invalid_signers || !result->signatures || result->signatures->next)
        return rs_fail(err, "%s: GPGME made no single good signature", path);
    return 0;
}

static int clearsign(const char *gnupg_home, const char *fingerprint, const char *path, rs_error *err)
{
    _cleanup_(ctx_releasep) struct gpgme_context *ctx = NULL;
    _cleanup_(key_unrefp) struct _gpgme_key *key = NULL;
    _cleanup_free_ char *tmp = NULL;
    _cleanup_close_ int in = -1, out = -1;
    gpgme_error_t e;
    int rc;

    if (open_context(gnupg_home, &ctx, err) < 0 || find_key(ctx, fingerprint, &key, err) < 0)
        return -1;
    if ((e = gpgme_signers_add(ctx, key)))
        return gpg_fail(err, "GPGME", e);
    if ((in = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if (asprintf(&tmp, "%s.sign-XXXXXX", path) < 0) {
        tmp = NULL;
        return rs_fail(err, "out of memory");
    }
    if ((out = mkostemp(tmp, O_CLOEXEC)) < 0)
        return rs_fail(err, "%s: %s", tmp, strerror(errno));
    rc = sign_into(ctx, path, in, out, err);
    if (rc == 0 && (fchmod(out, 0644) < 0 || fsync(out) < 0 || rename(tmp, path) < 0))
        rc = rs_fail(err, "%s: %s", path, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    return rc;
}

/* GPGME starts gpg (and gpgconf), and gpg starts gpg-agent, with fork and
 * execv: with whatever `environ` holds at that moment, and GPGME has no
 * call to give them another. So for the time of a signing `environ` is
 * the reduced one every other child gets (base/child_env.h), never the
 * service's own (#46); the lock keeps two signings from swapping it at
 * once. Another thread that reads the environment meanwhile sees the
 * reduced one: after start-up only the journal logger does
 * (JOURNAL_STREAM), and its lines then go to stderr, which systemd
 * connects to the journal as well. Nothing sets a variable after
 * start-up, which would build its array from the swapped one. */
static pthread_mutex_t environ_lock = PTHREAD_MUTEX_INITIALIZER;

int rs_gpgme_clearsign(const char *gnupg_home, const char *fingerprint, const char *path, rs_error *err)
{
    char *const *reduced = rs_child_environ();
    char **saved;
    int rc;

    /* The reduced environment has no GNUPGHOME: the one the service was
     * given goes to gpg as --homedir instead. */
    if (!gnupg_home)
        gnupg_home = getenv("GNUPGHOME");
    pthread_mutex_lock(&environ_lock);
    saved = environ;
    environ = (char **)reduced;
    rc = clearsign(gnupg_home, fingerprint, path, err);
    environ = saved;
    pthread_mutex_unlock(&environ_lock);
    return rc;
}
