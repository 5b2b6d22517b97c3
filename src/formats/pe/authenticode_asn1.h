/* The ASN.1 of Authenticode's content (Microsoft's Authenticode PE
 * specification), declared for OpenSSL's encoder and decoder. Shared by
 * the signing half (authenticode_sign.c) and the reading half
 * (authenticode.c) of the PE format. */
#ifndef RS_AUTHENTICODE_ASN1_H
#define RS_AUTHENTICODE_ASN1_H

#include <openssl/asn1t.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cleanup.h"

#define SPC_INDIRECT_DATA_OID "1.3.6.1.4.1.311.2.1.4"
#define SPC_PE_IMAGE_DATA_OID "1.3.6.1.4.1.311.2.1.15"

typedef struct {
    ASN1_OBJECT *type;
    ASN1_TYPE *value;
} SpcAttributeTypeAndOptionalValue;

typedef struct {
    SpcAttributeTypeAndOptionalValue *data;
    X509_SIG *messageDigest;
} SpcIndirectDataContent;

typedef struct {
    int type;
    union {
        ASN1_BMPSTRING *unicode;
        ASN1_IA5STRING *ascii;
    } value;
} SpcString;

typedef struct {
    int type;
    union {
        ASN1_IA5STRING *url;
        ASN1_TYPE *moniker;
        SpcString *file;
    } value;
} SpcLink;

typedef struct {
    ASN1_BIT_STRING *flags;
    SpcLink *file;
} SpcPeImageData;

DECLARE_ASN1_ITEM(SpcAttributeTypeAndOptionalValue)
DECLARE_ASN1_FUNCTIONS(SpcIndirectDataContent)
DECLARE_ASN1_FUNCTIONS(SpcString)
DECLARE_ASN1_FUNCTIONS(SpcLink)
DECLARE_ASN1_FUNCTIONS(SpcPeImageData)

DEFINE_POINTER_CLEANUP(idc_freep, SpcIndirectDataContent, SpcIndirectDataContent_free)
DEFINE_POINTER_CLEANUP(peimage_freep, SpcPeImageData, SpcPeImageData_free)
DEFINE_POINTER_CLEANUP(signer_info_freep, PKCS7_SIGNER_INFO, PKCS7_SIGNER_INFO_free)

ASN1_OBJECT *authenticode_oid(const char *text);
bool authenticode_is_oid(const ASN1_OBJECT *o, const char *text);

/* Authenticode's messageDigest covers the content's value bytes, without
 * the outer SEQUENCE tag and length: finds them in der. */
int authenticode_content_value(const uint8_t *der, size_t len, const uint8_t **value, long *vlen);

#endif
