#include "crypto/pkcs11_pin.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/file.h"
#include "crypto/p11kit_lib.h"

void rs_p11_pin_wipe(rs_p11_pin *pin)
{
    OPENSSL_cleanse(pin, sizeof(*pin));
}

int rs_secret_set(rs_p11_pin *pin, const char *value, const char *from, rs_error *err)
{
    size_t len = strlen(value);

    if (len >= sizeof(pin->value))
        return rs_fail(err, "the secret from %s is longer than %d bytes", from, RS_P11_PIN_MAX - 1);
    memcpy(pin->value, value, len);
    pin->len = len;
    return 0;
}

/* A PIN file holds the PIN, optionally followed by one line ending. */
static void strip_newline(rs_p11_pin *pin)
{
    if (pin->len && pin->value[pin->len - 1] == '\n')
        pin->len--;
    if (pin->len && pin->value[pin->len - 1] == '\r')
        pin->len--;
}

static const char *pin_file_path(const char *source)
{
    if (!strncmp(source, "file://", 7))
        return source[7] == '/' ? source + 7 : NULL;
    if (!strncmp(source, "file:", 5))
        return source + 5;
    return source[0] == '/' ? source : NULL;
}

int rs_secret_from_file(const char *path, rs_p11_pin *pin, rs_error *err)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    /* read(2) straight into the PIN buffer: stdio would keep a copy in its
     * own buffer that nobody wipes. */
    n = rs_read_all(fd, pin->value, sizeof(pin->value));
    if (n < 0)
        return rs_fail(err, "%s: %s", path, strerror(errno));
    if ((size_t)n == sizeof(pin->value))
        return rs_fail(err, "%s: longer than %d bytes", path, RS_P11_PIN_MAX - 1);
    pin->len = (size_t)n;
    strip_newline(pin);
    return 0;
}

static int pin_from_file(const char *source, rs_p11_pin *pin, rs_error *err)
{
    const char *path = pin_file_path(source);

    if (!path || !*path)
        return rs_fail(err, "pin-source '%s': only file: sources are supported", source);
    return rs_secret_from_file(path, pin, err) < 0 ? rs_error_prefix(err, "pin-source") : 0;
}

static int read_line_noecho(int tty, rs_p11_pin *pin, rs_error *err)
{
    struct termios saved, quiet;
    bool restore = tcgetattr(tty, &saved) == 0, ended;
    char c = 0;
    ssize_t n;

    if (restore) {
        quiet = saved;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        quiet.c_lflag |= ECHONL;
        tcsetattr(tty, TCSAFLUSH, &quiet);
    }
    pin->len = 0;
    for (;;) {
        n = read(tty, &c, 1);
        if (n != 1 || c == '\n' || pin->len == sizeof(pin->value) - 1)
            break;
        pin->value[pin->len++] = c;
    }
    if (restore)
        tcsetattr(tty, TCSAFLUSH, &saved);
    ended = n == 1 && c == '\n';
    OPENSSL_cleanse(&c, sizeof(c));
    if (n != 1)
        return rs_fail(err, "nothing was entered");
    if (!ended)
        return rs_fail(err, "what was entered is longer than %d bytes", RS_P11_PIN_MAX - 1);
    strip_newline(pin);
    return 0;
}

int rs_secret_from_tty(const char *prompt, const char *hint, rs_p11_pin *pin, rs_error *err)
{
    _cleanup_close_ int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

    if (tty < 0)
        return rs_fail(err, "%s", hint);
    if (write(tty, prompt, strlen(prompt)) < 0)
        return rs_fail(err, "/dev/tty: %s", strerror(errno));
    return read_line_noecho(tty, pin, err);
}

static int pin_from_tty(const char *token, rs_p11_pin *pin, rs_error *err)
{
    char prompt[300], hint[400];

    snprintf(prompt, sizeof(prompt), "PIN for token '%s': ", token);
    snprintf(hint, sizeof(hint), "token '%s' needs a PIN: set %s, add pin-source=file:PATH to the URI, "
                                 "or run on a terminal", token, RS_P11_PIN_ENV);
    return rs_secret_from_tty(prompt, hint, pin, err);
}

void rs_p11_pin_scrub_env(void)
{
    char *env = getenv(RS_P11_PIN_ENV);

    if (env)
        explicit_bzero(env, strlen(env));
    unsetenv(RS_P11_PIN_ENV);
}

int rs_p11_pin_get(P11KitUri *uri, const char *token, rs_p11_pin *pin, rs_error *err)
{
    const char *value = sym_p11_kit_uri_get_pin_value(uri);
    const char *source = sym_p11_kit_uri_get_pin_source(uri);
    const char *env = getenv(RS_P11_PIN_ENV);

    *pin = (rs_p11_pin){ 0 };
    if (value)
        return rs_secret_set(pin, value, "the URI", err);
    if (source)
        return pin_from_file(source, pin, err);
    if (env)
        return rs_secret_set(pin, env, RS_P11_PIN_ENV, err);
    return pin_from_tty(token, pin, err);
}
