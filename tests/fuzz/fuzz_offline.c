/* The offline-signing request parser: the request arrives from another
 * machine (or over the signing service's socket), so everything in it is
 * untrusted. Parsing must never crash, and anything it accepts must
 * describe exactly the container it rebuilds: written out and read back,
 * in the file form and in the socket's form (certificate by SHA-256,
 * read with the fuzzers' test certificate known, as the service reads),
 * it parses to the same digest to sign. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/ossl.h"
#include "fuzz_keys.h"
#include "ops/offline.h"

static rs_known_certs known;

/* Writes req one way, reads it back with `with`, and compares. */
static void round_trip(const rs_offline_request *req, bool wire, const rs_known_certs *with)
{
    rs_offline_request again;
    rs_error err;
    char *json = NULL, sha256[65];
    int rc;

    rs_x509_fingerprint(req->cert, sha256);
    rc = wire ? rs_offline_request_write_wire(req, sha256, &json, &err) : rs_offline_request_write(req, &json, &err);
    if (rc < 0)
        fuzz_bug("an accepted request cannot be written", err.msg);
    if (rs_offline_request_read_known(json, strlen(json), with, &again, &err) < 0)
        fuzz_bug("a written request cannot be read back", err.msg);
    if (!rs_digest_equal(&req->tbs, &again.tbs) || !rs_digest_equal(&req->image_digest, &again.image_digest))
        fuzz_bug("a request read back asks for another digest", json);
    free(json);
    rs_offline_request_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_offline_request req;
    rs_error err;

    if (!known.n) {
        X509 *cert = fuzz_test_cert();

        if (rs_known_certs_add(&known, cert, &err) < 0)
            fuzz_die("cannot load the test certificate", err.msg);
        X509_free(cert);
    }
    if (rs_offline_request_read((const char *)data, size, &req, &err) == 0) {
        round_trip(&req, false, NULL);
        rs_offline_request_free(&req);
    }
    if (rs_offline_request_read_known((const char *)data, size, &known, &req, &err) < 0)
        return 0;
    round_trip(&req, false, &known);
    /* The socket's form names a certificate the reader must know. */
    if (X509_cmp(req.cert, known.certs[0]) == 0)
        round_trip(&req, true, &known);
    rs_offline_request_free(&req);
    return 0;
}
