/* files.json read as a stream (rs_json_stream): the objects down to each
 * package's members are walked member by member, and every value below
 * them (a file's entry, trusted_certs, a member not known here) decoded
 * whole, so a template listing every module of a kernel is held as its
 * entries, never as its text or as a tree of it. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/cleanup.h"
#include "base/json_stream.h"
#include "pipeline/files_json.h"

/* A template lists a kernel's modules at most (bookworm's flavours have
 * 4,000 to 6,000); this bounds a hostile one. */
#define MAX_ENTRIES 200000
/* The longest value decoded whole: a file's entry, a package's
 * trusted_certs, a member this reader does not know. Real entries are
 * under 200 bytes and real trusted_certs lists hold at most a few
 * fingerprints; 1 MiB is 5,000 times an entry. */
#define MAX_VALUE (1024 * 1024)
/* Members of an object walked member by member (the document, its package
 * map, a package): real ones have 1 to 3 packages and 2 members each; 1,024
 * bounds the work of refusing a repeated key. */
#define MAX_MEMBERS 1024

static int parse_fingerprint(const char *pkg, const json_t *v, char **out, rs_error *err)
{
    const char *s = json_string_value(v);
    uint8_t raw[32];
    char hex[65];

    if (!s || rs_unhex(s, raw, sizeof(raw)) < 0)
        return rs_fail(err, "package %s: trusted_certs entry is not a SHA-256 fingerprint", pkg);
    rs_hex(raw, sizeof(raw), hex);
    *out = strdup(hex);
    return *out ? 0 : rs_fail(err, "out of memory");
}

static int parse_trusted_certs(rs_sign_package *p, const json_t *arr, rs_error *err)
{
    size_t i;
    json_t *v;

    if (!json_is_array(arr))
        return rs_fail(err, "package %s: trusted_certs is not a list", p->name);
    p->trusted_certs = calloc(json_array_size(arr) + 1, sizeof(char *));
    if (!p->trusted_certs)
        return rs_fail(err, "out of memory");
    json_array_foreach(arr, i, v) {
        if (parse_fingerprint(p->name, v, &p->trusted_certs[i], err) < 0)
            return -1;
        p->n_trusted_certs++;
    }
    return 0;
}

/* Kept in the model, or handed to the sink. */
static int keep_file(rs_files_json *fj, rs_sign_package *p, rs_sign_file *f, rs_error *err)
{
    p->types |= 1u << f->type;
    if (fj->sink) {
        if (fj->sink->add(fj->sink->ctx, (size_t)(p - fj->packages), f, err) < 0)
            return -1;
    } else if (!(f->path = rs_strpool_dup(&fj->paths, f->path))) {
        return rs_fail(err, "out of memory");
    } else {
        p->files[p->n_files] = *f;
    }
    p->n_files++;
    return 0;
}

static int parse_file(rs_files_json *fj, rs_sign_package *p, const json_t *entry, size_t index, rs_error *err)
{
    const char *type = json_string_value(json_object_get(entry, "sig_type"));
    const char *path = json_string_value(json_object_get(entry, "file"));
    rs_sign_file file = { .path = (char *)path }, *f = &file;

    if (!json_is_object(entry) || !type || !path)
        return rs_fail(err, "package %s: files[%zu] needs string \"sig_type\" and \"file\"", p->name, index);
    if (!strcmp(type, "efi"))
        f->type = SIG_EFI;
    else if (!strcmp(type, "linux-module"))
        f->type = SIG_LINUX_MODULE;
    else
        return rs_fail(err, "package %s: %s: unknown sig_type '%s' (efi or linux-module)", p->name, path, type);
    if (!rs_valid_relative_path(path))
        return rs_fail(err, "package %s: '%s': file paths must be relative, without '..' or empty components",
                       p->name, path);
    return keep_file(fj, p, f, err);
}

typedef struct reader {
    rs_json_stream s;
    rs_files_json *fj;
} reader;

/* Keys seen in one walked object: a repeated one is refused, as jansson
 * refuses it inside a decoded value. */
typedef struct seen_keys {
    char *keys[MAX_MEMBERS];
    size_t n;
} seen_keys;

static void seen_keys_free(seen_keys *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->keys[i]);
    k->n = 0;
}

/* Takes key. */
static int note_key(reader *r, seen_keys *k, char *key, rs_error *err)
{
    for (size_t i = 0; i < k->n; i++)
        if (!strcmp(k->keys[i], key)) {
            free(key);
            return rs_json_stream_fail(&r->s, err, "duplicate object key");
        }
    if (k->n == MAX_MEMBERS) {
        free(key);
        return rs_fail(err, "line %d: an object of more than %d members", r->s.line, MAX_MEMBERS);
    }
    k->keys[k->n++] = key;
    return 0;
}

/* Decodes the value the stream is at, and drops it. */
static int skip_value(reader *r, rs_error *err)
{
    json_t *v;

    if (rs_json_stream_value(&r->s, &v, err) < 0)
        return -1;
    json_decref(v);
    return 0;
}

static int read_files(reader *r, rs_sign_package *p, rs_error *err)
{
    size_t i = 0, cap = 16;
    int more;

    if (!r->fj->sink && !(p->files = calloc(cap, sizeof(*p->files))))
        return rs_fail(err, "out of memory");
    while ((more = rs_json_stream_element(&r->s, &i, err)) > 0) {
        _cleanup_(json_decrefp) json_t *entry = NULL;

        if (i > MAX_ENTRIES)
            return rs_fail(err, "package %s: more than %d files", p->name, MAX_ENTRIES);
        if (!r->fj->sink && p->n_files + 1 >= cap) {
            size_t n = cap ? cap * 2 : 16;
            rs_sign_file *grown = realloc(p->files, n * sizeof(*grown));

            if (!grown)
                return rs_fail(err, "out of memory");
            p->files = grown;
            cap = n;
        }
        if (rs_json_stream_value(&r->s, &entry, err) < 0 || parse_file(r->fj, p, entry, i - 1, err) < 0)
            return -1;
    }
    return more;
}

/* {"trusted_certs": [...], "files": [...]}, other members ignored. */
static int read_package_members(reader *r, rs_sign_package *p, seen_keys *seen, rs_error *err)
{
    bool have_files = false;
    size_t i = 0;
    char *key;
    int more, entered;

    while ((more = rs_json_stream_member(&r->s, &i, &key, err)) > 0) {
        bool files = !strcmp(key, "files"), certs = !strcmp(key, "trusted_certs");

        if (note_key(r, seen, key, err) < 0)
            return -1;
        if (files) {
            if ((entered = rs_json_stream_enter(&r->s, '[', err)) <= 0)
                return entered < 0 ? -1 : rs_fail(err, "package %s: needs a \"files\" list", p->name);
            if (read_files(r, p, err) < 0)
                return -1;
            have_files = true;
        } else if (certs) {
            _cleanup_(json_decrefp) json_t *v = NULL;

            if (rs_json_stream_value(&r->s, &v, err) < 0 || parse_trusted_certs(p, v, err) < 0)
                return -1;
        } else if (skip_value(r, err) < 0) {
            return -1;
        }
    }
    if (more == 0 && !have_files)
        return rs_fail(err, "package %s: needs a \"files\" list", p->name);
    return more;
}

/* A package's name, the key of its entry in the map: not one already
 * read (the packages read are the keys seen), and within the limit. */
static int check_package_name(reader *r, const char *name, rs_error *err)
{
    for (size_t i = 0; i < r->fj->n_packages; i++)
        if (!strcmp(r->fj->packages[i].name, name))
            return rs_json_stream_fail(&r->s, err, "duplicate object key");
    if (r->fj->n_packages == MAX_MEMBERS)
        return rs_fail(err, "line %d: an object of more than %d members", r->s.line, MAX_MEMBERS);
    if (!rs_valid_package_name(name))
        return rs_fail(err, "'%s' is not a valid package name", name);
    return 0;
}

/* One package's entry in the map: its name is the key. Takes name. */
static int read_package(reader *r, char *name, rs_error *err)
{
    rs_files_json *fj = r->fj;
    rs_sign_package *grown, *p;
    seen_keys seen = { .n = 0 };
    int rc;

    if (check_package_name(r, name, err) < 0) {
        free(name);
        return -1;
    }
    if (!(grown = realloc(fj->packages, (fj->n_packages + 1) * sizeof(*grown)))) {
        free(name);
        return rs_fail(err, "out of memory");
    }
    fj->packages = grown;
    p = &fj->packages[fj->n_packages++];
    memset(p, 0, sizeof(*p));
    p->name = name;
    if ((rc = rs_json_stream_enter(&r->s, '{', err)) <= 0)
        return rc < 0 ? -1 : rs_fail(err, "package %s: needs a \"files\" list", name);
    rc = read_package_members(r, p, &seen, err);
    seen_keys_free(&seen);
    return rc;
}

static int read_package_map(reader *r, rs_error *err)
{
    size_t i = 0;
    char *name;
    int more;

    if ((more = rs_json_stream_enter(&r->s, '{', err)) <= 0)
        return more < 0 ? -1 : rs_fail(err, "\"packages\" is not an object");
    while ((more = rs_json_stream_member(&r->s, &i, &name, err)) > 0)
        if (read_package(r, name, err) < 0)
            return -1;
    return more;
}

static int check_version(reader *r, rs_error *err)
{
    _cleanup_(json_decrefp) json_t *v = NULL;

    if (rs_json_stream_value(&r->s, &v, err) < 0)
        return -1;
    if (!json_is_string(v) || strcmp(json_string_value(v), "2"))
        return rs_fail(err, "unsupported files.json version");
    return 0;
}

/* Debian's three shapes: {"packages": {...}}, {"version": "2", "packages":
 * {...}}, or the package map itself. The first key tells which: a bare map
 * that later has "packages" or "version" is refused, where a whole-tree
 * reader would have taken the one and ignored the other. */
static int read_document(reader *r, seen_keys *top, rs_error *err)
{
    bool wrapped = false, have_packages = false, have_version = false;
    size_t i = 0;
    char *key;
    int more, c;

    if ((more = rs_json_stream_enter(&r->s, '{', err)) <= 0) {
        if (more < 0 || rs_json_stream_peek(&r->s, &c, err) < 0)
            return -1;
        return c == EOF ? rs_json_stream_fail(&r->s, err, "premature end of input")
                        : rs_fail(err, "top level is not an object");
    }
    while ((more = rs_json_stream_member(&r->s, &i, &key, err)) > 0) {
        bool packages = !strcmp(key, "packages"), version = !strcmp(key, "version");

        if (i == 1)
            wrapped = packages || version;
        if (!wrapped) {
            if (packages || version) {
                rs_fail(err, "\"%s\" after package entries: a bare package map cannot also have it", key);
                free(key);
                return -1;
            }
            if (read_package(r, key, err) < 0)
                return -1;
            continue;
        }
        if (note_key(r, top, key, err) < 0 || (packages && read_package_map(r, err) < 0) ||
            (version && check_version(r, err) < 0) || (!packages && !version && skip_value(r, err) < 0))
            return -1;
        have_packages |= packages;
        have_version |= version;
    }
    if (more < 0 || rs_json_stream_end(&r->s, err) < 0)
        return -1;
    if (have_version && !have_packages)
        return rs_fail(err, "version 2 files.json without \"packages\"");
    if (r->fj->n_packages == 0)
        return rs_fail(err, "no packages listed");
    return 0;
}

static int read_stream(rs_json_read_fn read, void *ctx, const rs_files_json_sink *sink, rs_files_json *out,
                       rs_error *err)
{
    seen_keys top = { .n = 0 };
    reader r = { .fj = out };
    int rc;

    memset(out, 0, sizeof(*out));
    out->sink = sink;
    rs_json_stream_init(&r.s, read, ctx, MAX_VALUE, RS_MAX_FILES_JSON);
    rc = read_document(&r, &top, err);
    seen_keys_free(&top);
    rs_json_stream_free(&r.s);
    if (rc < 0)
        rs_files_json_free(out);
    return rc;
}

int rs_files_json_read(int fd, const rs_files_json_sink *sink, rs_files_json *out, rs_error *err)
{
    return read_stream(rs_json_read_fd, &fd, sink, out, err);
}

typedef struct memory_input {
    const char *text;
    size_t len, chunk;
} memory_input;

static ssize_t read_memory(void *ctx, void *buf, size_t n, rs_error *err)
{
    memory_input *m = ctx;

    (void)err;
    if (m->chunk && n > m->chunk)
        n = m->chunk;
    if (n > m->len)
        n = m->len;
    memcpy(buf, m->text, n);
    m->text += n;
    m->len -= n;
    return (ssize_t)n;
}

int rs_files_json_parse_chunked(const char *text, size_t len, size_t chunk, rs_files_json *out, rs_error *err)
{
    memory_input m = { text, len, chunk };

    return read_stream(read_memory, &m, NULL, out, err);
}

int rs_files_json_parse(const char *text, size_t len, rs_files_json *out, rs_error *err)
{
    return rs_files_json_parse_chunked(text, len, 0, out, err);
}

int rs_files_json_parse_to(const char *text, size_t len, const rs_files_json_sink *sink, rs_files_json *out,
                           rs_error *err)
{
    memory_input m = { text, len, 0 };

    return read_stream(read_memory, &m, sink, out, err);
}
