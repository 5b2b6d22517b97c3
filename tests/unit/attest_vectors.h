/* Attestations made by Debian's in-toto 1.3.1 (in-toto-keygen, then
 * in-toto-run -n rebuild -p shim-unsigned_16.1-1_amd64.deb -- true rebuild)
 * over the file VECTOR_PRODUCT, and a DSSE envelope of an in-toto Statement
 * signed with the ed25519 key by tests/tools/attest.py. Kept so that the
 * verifier is checked against in-toto's own output without in-toto or the
 * network. */
#ifndef ATTEST_VECTORS_H
#define ATTEST_VECTORS_H


static const char VECTOR_PRODUCT[] =
    "reprosign test vector\n";

static const char VECTOR_KEY_ED25519[] =
    "{\"keytype\": \"ed25519\", \"scheme\": \"ed25519\", \"keyid_hash_algorithms\": [\"sha256\", \"sha512\"], \"keyval\": {\"public\": \"16e84aba1792009360dd1ca5fc70524e791f39494869f863fa4ff6df2f2450de\"}}";

static const char VECTOR_LINK_ED25519[] =
    "{\n"
    " \"signatures\": [\n"
    "  {\n"
    "   \"keyid\": \"5f03f482a733ab5c125d4b547efdfd1419181410184242bc730a81d435db841c\",\n"
    "   \"sig\": \"280a495ad56aa21b240475f72b153e8258a2dc5fb496c316634d0e64570c155985a64daae31fa28c61b1936b75c855cd41d788efdd0c65dba489cdc3c4f1e602\"\n"
    "  }\n"
    " ],\n"
    " \"signed\": {\n"
    "  \"_type\": \"link\",\n"
    "  \"byproducts\": {\n"
    "   \"return-value\": 0,\n"
    "   \"stderr\": \"\",\n"
    "   \"stdout\": \"\"\n"
    "  },\n"
    "  \"command\": [\n"
    "   \"true\",\n"
    "   \"rebuild\"\n"
    "  ],\n"
    "  \"environment\": {},\n"
    "  \"materials\": {},\n"
    "  \"name\": \"rebuild\",\n"
    "  \"products\": {\n"
    "   \"shim-unsigned_16.1-1_amd64.deb\": {\n"
    "    \"sha256\": \"439f93475f71d9f70d605b8aab9fed5fe454c47759e0eb8fe12446e9b0a8a676\"\n"
    "   }\n"
    "  }\n"
    " }\n"
    "}";

static const char VECTOR_KEY_RSA[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MIIBojANBgkqhkiG9w0BAQEFAAOCAY8AMIIBigKCAYEAvgT+tWkbEXQHilMMr737\n"
    "kyCa11D0TtUK0JgiMh3e/Sim4HEkzat94BcoypSDRxLD8otPz1AWdT4AanTTlQKK\n"
    "WtDZWgGDJY8VMi4gIvHJPkvvF2oT8CrKSBZYwnqZQoW3/UDA3pYAASv7LVnG5sxK\n"
    "NgbUsxWqUQSij91Bq1hiEwm+TmscujzLq7zZsZt/4Rh2OPEU69TOy0KCJH7I2w1c\n"
    "nmTImRamBBt8QUgt5m9IAtzZJFEqx7rrhbGNva3VutgI+orTBfyAKBeEZPH7GY/u\n"
    "Q6T5F8f3v3xAh/rAwK0fKMEvmP0afQ5PZji6xYGxLHT3pp9Ue2UBhHMtUfOu9OeO\n"
    "tElo0xjD/KlnAOBzOZFYtFWarxabTrSQLkJNkhSxM0O0VWRa3GygXY3KNkvP3rr9\n"
    "YQ5MldWxrSos9HB1j/vcDksZrcBfGSDsf/+x00K+TfVafi2fb0LwFUSg+kfWlyqI\n"
    "LMLjKbqh7Ti6vWKXP/vkQvlZwZ1o96Oe/iHeUL1HbqVLAgMBAAE=\n"
    "-----END PUBLIC KEY-----";

static const char VECTOR_LINK_RSA[] =
    "{\n"
    " \"signatures\": [\n"
    "  {\n"
    "   \"keyid\": \"43145cc96ae22c75f0c0b778eba83a4d862bf5b444cb5cbd20078fa71f34626b\",\n"
    "   \"sig\": \"a0399e3b5cbf311fe701384f6215011eb04ad80bfa2701cd557ee966ad5dba1372d9e33b9b78be4229f878b4103c0fe454400acf9e519bab88686909ead586d649393de708ac5bd7b5fd784e5a5408ab4077449ce1db4fffd1acedab44942ae7421304a7af9f0c7d5142298e1902b3e5cae8ead348662857428515a3a0d262ef8d332cb8a2573bea8b5b1b5d680492e6bf1140c7a6731f971e76affa5f2c011022740a7b28104aa6a06bd3574a56d87bdd216b788134818a8b526c9a3f345031ca12e579e0c8803bfe809da3105affa9e5e635fa6cfbfcfcfc06f2871a62ebf1363b2e81325264a853f4b51ef2818f14b7daf628e2b9e3fbf008c150d492662b25aec3416928393e3ea3f89586855609ca0d3de7d72bad6c550aeb2ec3be213d3ae40335fa5ad973adc0c9e0a65c290644624c53074688a52085642185f0e0dbf22fe29cc7f25845018128f43f79b6927fabfc210573e4afa5a5e44e03b3b4996a0be6d4536c6cb8315289ec60429f21edd4a842405a9911d9a10b800f8cae96\"\n"
    "  }\n"
    " ],\n"
    " \"signed\": {\n"
    "  \"_type\": \"link\",\n"
    "  \"byproducts\": {\n"
    "   \"return-value\": 0,\n"
    "   \"stderr\": \"\",\n"
    "   \"stdout\": \"\"\n"
    "  },\n"
    "  \"command\": [\n"
    "   \"true\",\n"
    "   \"rebuild\"\n"
    "  ],\n"
    "  \"environment\": {},\n"
    "  \"materials\": {},\n"
    "  \"name\": \"rebuild\",\n"
    "  \"products\": {\n"
    "   \"shim-unsigned_16.1-1_amd64.deb\": {\n"
    "    \"sha256\": \"439f93475f71d9f70d605b8aab9fed5fe454c47759e0eb8fe12446e9b0a8a676\"\n"
    "   }\n"
    "  }\n"
    " }\n"
    "}";

static const char VECTOR_KEY_ECDSA[] =
    "{\"keytype\": \"ecdsa\", \"scheme\": \"ecdsa-sha2-nistp256\", \"keyid_hash_algorithms\": [\"sha256\", \"sha512\"], \"keyval\": {\"public\": \"-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE5ccHJYfW1E49NzWPQkD9PspOPr42\\nq+aJwiBMqJ7Nn7Se8AevSocpkNGjgWotbkqB/BXki82gzx+gOxDtMQLuSA==\\n-----END PUBLIC KEY-----\\n\"}}";

static const char VECTOR_LINK_ECDSA[] =
    "{\n"
    " \"signatures\": [\n"
    "  {\n"
    "   \"keyid\": \"3dc18443bb94f4c8a838af905e9b1beb2ec40430c887aa7652cdf8125fa009c2\",\n"
    "   \"sig\": \"304502205dc8cc73a1312640fc98b49eeaa794b2d2fc61921e63a9b18836b828b82af89c022100c7ddaded44f72d96576cda813154cfa947cb64a32a75e5cc7bdff28532fed765\"\n"
    "  }\n"
    " ],\n"
    " \"signed\": {\n"
    "  \"_type\": \"link\",\n"
    "  \"byproducts\": {\n"
    "   \"return-value\": 0,\n"
    "   \"stderr\": \"\",\n"
    "   \"stdout\": \"\"\n"
    "  },\n"
    "  \"command\": [\n"
    "   \"true\",\n"
    "   \"rebuild\"\n"
    "  ],\n"
    "  \"environment\": {},\n"
    "  \"materials\": {},\n"
    "  \"name\": \"rebuild\",\n"
    "  \"products\": {\n"
    "   \"shim-unsigned_16.1-1_amd64.deb\": {\n"
    "    \"sha256\": \"439f93475f71d9f70d605b8aab9fed5fe454c47759e0eb8fe12446e9b0a8a676\"\n"
    "   }\n"
    "  }\n"
    " }\n"
    "}";

static const char VECTOR_DSSE_ED25519[] =
    "{\"payloadType\": \"application/vnd.in-toto+json\", \"payload\": \"eyJfdHlwZSI6ICJodHRwczovL2luLXRvdG8uaW8vU3RhdGVtZW50L3YxIiwgInN1YmplY3QiOiBbeyJuYW1lIjogInNoaW0tdW5zaWduZWRfMTYuMS0xX2FtZDY0LmRlYiIsICJkaWdlc3QiOiB7InNoYTI1NiI6ICI0MzlmOTM0NzVmNzFkOWY3MGQ2MDViOGFhYjlmZWQ1ZmU0NTRjNDc3NTllMGViOGZlMTI0NDZlOWIwYThhNjc2In19XSwgInByZWRpY2F0ZVR5cGUiOiAiaHR0cHM6Ly9yZXByb2R1Y2libGUtYnVpbGRzLm9yZy9yZWJ1aWxkL3YxIiwgInByZWRpY2F0ZSI6IHsicmVidWlsZGVyIjogInRlc3QifX0=\", \"signatures\": [{\"keyid\": \"5f03f482a733ab5c125d4b547efdfd1419181410184242bc730a81d435db841c\", \"sig\": \"HcsXr9nqNRsa9opecbl3gpnoAilQ9wCpO6PeS/FitPVKkAPxFHSayNHpOxMM3l1ywgQDG9TkJbWMfYqtTPqKBQ==\"}]}";


#endif
