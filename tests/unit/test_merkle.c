/* RFC 9162 Merkle hashing against the published Certificate Transparency
 * test vectors, and every inclusion and consistency proof for trees of up
 * to 40 leaves checked by the RFC's own verification algorithms, which
 * must also reject any altered proof. */
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "harness.h"
#include "translog/merkle.h"

/* The leaves and roots of the CT reference tests (certificate-transparency
 * merkle_tree_test): root of the first n leaves for n = 1..8. */
static const char *const leaves_hex[] = { "", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                          "606162636465666768696a6b6c6d6e6f" };
static const char *const roots_hex[] = {
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

#define N 40

static void vectors(void)
{
    rs_hash leaves[8], root;
    rs_merkle_frontier f = { 0 };
    rs_error err;

    for (int i = 0; i < 8; i++) {
        uint8_t data[16];
        size_t len = strlen(leaves_hex[i]) / 2;

        CHECK(len == 0 || rs_unhex(leaves_hex[i], data, len) == 0);
        CHECK(rs_merkle_leaf(data, len, &leaves[i], &err) == 0);
        rs_merkle_frontier_push(&f, &leaves[i]);
        rs_merkle_root(leaves, (size_t)i + 1, &root);
        {
            char hex[65];

            rs_hex(root.b, 32, hex);
            CHECK(strcmp(hex, roots_hex[i]) == 0);
            rs_merkle_frontier_root(&f, &root);
            rs_hex(root.b, 32, hex);
            CHECK(strcmp(hex, roots_hex[i]) == 0);
        }
    }
    rs_merkle_root(NULL, 0, &root);
    CHECK(root.b[0] == 0xe3 && root.b[31] == 0x55);   /* SHA-256("") */
}

static void proofs(void)
{
    rs_hash leaves[N], roots[N + 1];
    rs_merkle_frontier f = { 0 };
    rs_error err;

    for (int i = 0; i < N; i++) {
        uint8_t b = (uint8_t)i;

        rs_merkle_leaf(&b, 1, &leaves[i], &err);
        rs_merkle_frontier_push(&f, &leaves[i]);
        rs_merkle_frontier_root(&f, &roots[i + 1]);
        rs_merkle_root(leaves, (size_t)i + 1, &roots[0]);
        CHECK(memcmp(roots[0].b, roots[i + 1].b, 32) == 0);
    }
    for (size_t n = 1; n <= N; n++) {
        for (size_t m = 0; m < n; m++) {
            rs_hash_list p;

            CHECK(rs_merkle_inclusion_proof(leaves, n, m, &p, &err) == 0);
            CHECK(rs_merkle_verify_inclusion(m, n, &leaves[m], &p, &roots[n]));
            CHECK(!rs_merkle_verify_inclusion(m, n, &leaves[(m + 1) % N], &p, &roots[n]) || n == 1);
            if (p.n) {
                p.h[p.n - 1].b[0] ^= 1;
                CHECK(!rs_merkle_verify_inclusion(m, n, &leaves[m], &p, &roots[n]));
            }
            rs_hash_list_free(&p);
        }
        for (size_t m = 1; m <= n; m++) {
            rs_hash_list p;

            CHECK(rs_merkle_consistency_proof(leaves, m, n, &p, &err) == 0);
            CHECK(rs_merkle_verify_consistency(m, n, &roots[m], &roots[n], &p));
            if (m < n) {
                rs_hash other = roots[m];

                CHECK(!rs_merkle_verify_consistency(m, n, &roots[m], &roots[n - 1], &p) || n - 1 == m);
                /* Another old tree: the proof leads to the new root, but
                 * not from that one (the log was rewritten before it). */
                other.b[7] ^= 1;
                CHECK(!rs_merkle_verify_consistency(m, n, &other, &roots[n], &p));
                p.h[0].b[5] ^= 0x80;
                CHECK(!rs_merkle_verify_consistency(m, n, &roots[m], &roots[n], &p));
            }
            rs_hash_list_free(&p);
        }
    }
    {
        rs_hash_list p;

        CHECK(rs_merkle_inclusion_proof(leaves, 4, 4, &p, &err) < 0);
        CHECK(rs_merkle_consistency_proof(leaves, 0, 4, &p, &err) < 0);
        CHECK(rs_merkle_consistency_proof(leaves, 5, 4, &p, &err) < 0);
    }
}

int main(void)
{
    vectors();
    proofs();
    return harness_finish("test_merkle");
}
