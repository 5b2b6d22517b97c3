#include "ops/image_signer.h"

#include <stdlib.h>

typedef struct local_signer {
    rs_image_signer base;
    rs_signer *key;
} local_signer;

static int local_sign(rs_image_signer *s, const rs_format *f, const rs_digest *d, const rs_sign_options *o,
                      const char *name, int image_fd, rs_bytes *der, rs_error *err)
{
    (void)name;
    (void)image_fd;
    return rs_format_sign_digest(f, d, ((local_signer *)s)->key, o, der, err);
}

static void local_destroy(rs_image_signer *s)
{
    free(s);
}

static const rs_image_signer_ops local_ops = {
    .sign = local_sign,
    .destroy = local_destroy,
};

int rs_image_signer_local(rs_signer *key, rs_image_signer **out, rs_error *err)
{
    local_signer *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s)
        return rs_fail(err, "out of memory");
    s->base.ops = &local_ops;
    s->base.cert = key->cert;
    s->key = key;
    *out = &s->base;
    return 0;
}

int rs_image_signer_sign(rs_image_signer *s, const rs_format *f, const rs_digest *d, const rs_sign_options *o,
                         const char *name, int image_fd, rs_bytes *der, rs_error *err)
{
    return s->ops->sign(s, f, d, o, name, image_fd, der, err);
}

bool rs_image_signer_wants_image(const rs_image_signer *s, const rs_format *f)
{
    return s->wants_image && f->key_signs_image_digest;
}

void rs_image_signer_free(rs_image_signer *s)
{
    s->ops->destroy(s);
}
