/* What the upload key may upload: the -signed source package a template's
 * source-template/ builds is named by the template (its debian/changelog
 * and debian/control), so the service pins both to the template's own
 * name, never to what the template says (docs/security.md, "The upload"):
 *   - the -signed source name is the template package's name without
 *     "-template" (grub-efi-amd64-signed-template: grub-efi-amd64-signed);
 *     for the kernel's templates, linux-image-X-signed-template of source
 *     linux, or of linux-SUFFIX when X starts with SUFFIX: linux-signed-X;
 *   - each binary package of its debian/control is that -signed source
 *     name; for the kernel's, also linux-image-F for each unsigned
 *     linux-image-F-unsigned in files.json, the installer's *-F-di, and
 *     the metapackages linux-image-SUFFIX-FLAVOUR and
 *     linux-headers-SUFFIX-FLAVOUR (SUFFIX: the source's name after
 *     "linux"; FLAVOUR: F after its version, as amd64 or cloud-amd64);
 *   - anything else only when "signed_sources" in the configuration lists
 *     it under the template's source. */
#ifndef RS_SIGNED_PIN_H
#define RS_SIGNED_PIN_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "pipeline/template.h"

typedef struct rs_signed_rule {
    char *source;        /* the template's source */
    char **sources;      /* -signed source names it may build besides Debian's; NULL-terminated */
    size_t n_sources;
    char **binaries;     /* binary packages they may build besides Debian's; NULL-terminated */
    size_t n_binaries;
} rs_signed_rule;

typedef struct rs_signed_pins {
    rs_signed_rule *rules;
    size_t n;
} rs_signed_pins;

/* The configuration's name, for its list of known settings. */
#define RS_SIGNED_PINS_CONFIG_NAMES "signed_sources"

/* "signed_sources": {"SOURCE": {"sources": [...], "binaries": [...]}}. */
int rs_signed_pins_parse(const json_t *doc, rs_signed_pins *p, rs_error *err);
void rs_signed_pins_free(rs_signed_pins *p);

/* Refuses a template whose -signed source name or a binary package of
 * whose debian/control neither Debian's naming (above) nor p allows,
 * naming them and the rule. A template with no source-template/ builds
 * nothing to upload and passes. */
int rs_signed_pins_check(const rs_signed_pins *p, const rs_template *t, rs_error *err);

#endif
