#include "formats/pe/authenticode_asn1.h"

#include <limits.h>
#include <openssl/objects.h>
#include <string.h>

ASN1_SEQUENCE(SpcAttributeTypeAndOptionalValue) = {
    ASN1_SIMPLE(SpcAttributeTypeAndOptionalValue, type, ASN1_OBJECT),
    ASN1_OPT(SpcAttributeTypeAndOptionalValue, value, ASN1_ANY),
} ASN1_SEQUENCE_END(SpcAttributeTypeAndOptionalValue)

ASN1_SEQUENCE(SpcIndirectDataContent) = {
    ASN1_SIMPLE(SpcIndirectDataContent, data, SpcAttributeTypeAndOptionalValue),
    ASN1_SIMPLE(SpcIndirectDataContent, messageDigest, X509_SIG),
} ASN1_SEQUENCE_END(SpcIndirectDataContent)

ASN1_CHOICE(SpcString) = {
    ASN1_IMP_OPT(SpcString, value.unicode, ASN1_BMPSTRING, 0),
    ASN1_IMP_OPT(SpcString, value.ascii, ASN1_IA5STRING, 1),
} ASN1_CHOICE_END(SpcString)

ASN1_CHOICE(SpcLink) = {
    ASN1_IMP_OPT(SpcLink, value.url, ASN1_IA5STRING, 0),
    ASN1_IMP_OPT(SpcLink, value.moniker, ASN1_SEQUENCE, 1),
    ASN1_EXP_OPT(SpcLink, value.file, SpcString, 2),
} ASN1_CHOICE_END(SpcLink)

ASN1_SEQUENCE(SpcPeImageData) = {
    ASN1_SIMPLE(SpcPeImageData, flags, ASN1_BIT_STRING),
    ASN1_EXP_OPT(SpcPeImageData, file, SpcLink, 0),
} ASN1_SEQUENCE_END(SpcPeImageData)

IMPLEMENT_ASN1_FUNCTIONS(SpcIndirectDataContent)
IMPLEMENT_ASN1_FUNCTIONS(SpcPeImageData)
IMPLEMENT_ASN1_FUNCTIONS(SpcLink)
IMPLEMENT_ASN1_FUNCTIONS(SpcString)

ASN1_OBJECT *authenticode_oid(const char *text)
{
    return OBJ_txt2obj(text, 1);
}

bool authenticode_is_oid(const ASN1_OBJECT *o, const char *text)
{
    char buf[64];

    return o && OBJ_obj2txt(buf, sizeof(buf), o, 1) > 0 && strcmp(buf, text) == 0;
}

int authenticode_content_value(const uint8_t *der, size_t len, const uint8_t **value, long *vlen)
{
    const unsigned char *p = der;
    int tag, xclass;

    if (len > LONG_MAX || (ASN1_get_object(&p, vlen, &tag, &xclass, (long)len) & 0x80) || tag != V_ASN1_SEQUENCE)
        return -1;
    *value = p;
    return 0;
}
