/* pkcs11: URI handling: what p11-kit parses, and what we refuse on top. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/p11kit_lib.h"
#include "crypto/pkcs11_pin.h"
#include "crypto/pkcs11_uri.h"
#include "harness.h"

static int parse(const char *spec, CK_OBJECT_CLASS class, rs_p11_uri *u, rs_error *err)
{
    err->msg[0] = '\0';
    return rs_p11_uri_parse(spec, class, u, err);
}

static void test_percent_encoding(void)
{
    rs_p11_uri u;
    rs_error err;
    CK_ATTRIBUTE *id, *label;

    CHECK(parse("pkcs11:token=my%20token;object=a%3bb;id=%01%ff?pin-value=1%262", CKO_PRIVATE_KEY, &u, &err) == 0);
    CHECK(!memcmp(sym_p11_kit_uri_get_token_info(u.uri)->label, "my token ", 9));
    label = sym_p11_kit_uri_get_attribute(u.uri, CKA_LABEL);
    CHECK(label && label->ulValueLen == 3 && !memcmp(label->pValue, "a;b", 3));
    id = sym_p11_kit_uri_get_attribute(u.uri, CKA_ID);
    CHECK(id && id->ulValueLen == 2 && !memcmp(id->pValue, "\x01\xff", 2));
    CHECK(!strcmp(sym_p11_kit_uri_get_pin_value(u.uri), "1&2"));
    CHECK(strstr(u.display, "pin-value=(hidden)") && !strstr(u.display, "1%262"));
    rs_p11_uri_free(&u);

    CHECK(parse("pkcs11:token=%zz", CKO_PRIVATE_KEY, &u, &err) < 0);
    CHECK(strstr(err.msg, "pkcs11:token=%zz"));
    rs_p11_uri_free(&u);
}

static void test_unknown_attributes(void)
{
    rs_p11_uri u;
    rs_error err;

    CHECK(parse("pkcs11:token=t;colour=blue", CKO_PRIVATE_KEY, &u, &err) < 0);
    CHECK(strstr(err.msg, "'colour=blue'"));
    rs_p11_uri_free(&u);
    CHECK(parse("pkcs11:token=t;type=bogus", CKO_PRIVATE_KEY, &u, &err) < 0);
    CHECK(strstr(err.msg, "'type=bogus'"));
    rs_p11_uri_free(&u);
    CHECK(parse("pkcs11:token=t?pin-sauce=file:/x", CKO_PRIVATE_KEY, &u, &err) < 0);
    CHECK(strstr(err.msg, "query attribute 'pin-sauce=file:/x'"));
    rs_p11_uri_free(&u);
    CHECK(parse("pkcs11:token=t;slot-id=3;serial=42;manufacturer=m;model=x?module-name=softhsm2", CKO_CERTIFICATE,
                &u, &err) == 0);
    CHECK(sym_p11_kit_uri_get_slot_id(u.uri) == 3);
    rs_p11_uri_free(&u);
    CHECK(parse("file:/etc/key.pem", CKO_PRIVATE_KEY, &u, &err) < 0);
    rs_p11_uri_free(&u);
}

static void test_pin_conflicts(void)
{
    rs_p11_uri u;
    rs_error err;

    CHECK(parse("pkcs11:token=t?pin-value=1234&pin-source=file:/tmp/pin", CKO_PRIVATE_KEY, &u, &err) < 0);
    CHECK(strstr(err.msg, "not both") && !strstr(err.msg, "1234"));
    rs_p11_uri_free(&u);
}

static void test_type(void)
{
    rs_p11_uri u;
    rs_error err;
    CK_ATTRIBUTE *class;

    CHECK(parse("pkcs11:token=t;object=o", CKO_CERTIFICATE, &u, &err) == 0);
    class = sym_p11_kit_uri_get_attribute(u.uri, CKA_CLASS);
    CHECK(class && class->ulValueLen == sizeof(CK_OBJECT_CLASS) &&
          *(CK_OBJECT_CLASS *)class->pValue == CKO_CERTIFICATE);
    rs_p11_uri_free(&u);
    CHECK(parse("pkcs11:token=t;object=o;type=cert", CKO_PRIVATE_KEY, &u, &err) < 0);
    CHECK(strstr(err.msg, "names a certificate, but a private key is needed"));
    rs_p11_uri_free(&u);
}

static void test_pin_sources(void)
{
    char path[] = "/tmp/reprosign-pin-XXXXXX";
    rs_p11_uri u;
    rs_p11_pin pin;
    rs_error err;
    char *spec;
    int fd = mkstemp(path);

    CHECK(fd >= 0 && write(fd, "0000\r\n", 6) == 6);
    close(fd);
    CHECK(asprintf(&spec, "pkcs11:token=t?pin-source=file:%s", path) > 0);
    CHECK(parse(spec, CKO_PRIVATE_KEY, &u, &err) == 0);
    CHECK(rs_p11_pin_get(u.uri, "t", &pin, &err) == 0 && pin.len == 4 && !memcmp(pin.value, "0000", 4));
    rs_p11_pin_wipe(&pin);
    CHECK(pin.len == 0 && pin.value[0] == 0);
    rs_p11_uri_free(&u);
    free(spec);
    unlink(path);

    setenv(RS_P11_PIN_ENV, "4321", 1);
    CHECK(parse("pkcs11:token=t", CKO_PRIVATE_KEY, &u, &err) == 0);
    CHECK(rs_p11_pin_get(u.uri, "t", &pin, &err) == 0 && pin.len == 4 && !memcmp(pin.value, "4321", 4));
    rs_p11_pin_wipe(&pin);
    rs_p11_uri_free(&u);
    unsetenv(RS_P11_PIN_ENV);

    CHECK(parse("pkcs11:token=t?pin-source=%7cgpg%20-d", CKO_PRIVATE_KEY, &u, &err) == 0);
    CHECK(rs_p11_pin_get(u.uri, "t", &pin, &err) < 0 && strstr(err.msg, "only file:"));
    rs_p11_uri_free(&u);
}

int main(void)
{
    rs_error err;

    /* The checks below call p11-kit through the same pointers as the
     * library; loading resolves every one of them or fails. */
    if (rs_p11kit_load(&err) < 0) {
        fprintf(stderr, "test_pkcs11_uri: %s\n", err.msg);
        return 1;
    }
    test_percent_encoding();
    test_unknown_attributes();
    test_pin_conflicts();
    test_type();
    test_pin_sources();
    return harness_finish("test_pkcs11_uri");
}
