/* sign-template's store: every listed file's record (rs_sign_record) and
 * its path, in temporary files (base/spill.h) rather than memory, read
 * back a window at a time; so the job's memory is the same for a
 * thousand files as for a hundred thousand. The records are in
 * files.json order: a file's index is where its record lies. */
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "pipeline/sign_job.h"

/* The sink gathers this many records before it appends them. */
#define ADD_BATCH 256

static int append_pending(rs_sign_job *j, rs_error *err)
{
    if (rs_spill_append(&j->names, j->add_names.data, j->add_names.len, NULL, err) < 0 ||
        rs_spill_append(&j->records, j->add_records.data, j->add_records.len, NULL, err) < 0)
        return -1;
    j->add_names.len = j->add_records.len = 0;
    return 0;
}

/* files.json's sink: each file, as it is read, to the store. */
static int store_add(void *ctx, size_t pkg, const rs_sign_file *f, rs_error *err)
{
    rs_sign_job *j = ctx;
    size_t len = strlen(f->path);
    rs_sign_record rec;

    /* Zeroed whole, padding too: the record is written out as it is. */
    memset(&rec, 0, sizeof(rec));
    rec.pkg = (uint32_t)pkg;
    rec.type = (uint8_t)f->type;
    rec.path_len = (uint32_t)len;   /* files_json.c: at most 4,096 */
    rec.path_at = j->names.size + j->add_names.len;
    if (j->first_of_type[f->type] == SIZE_MAX)
        j->first_of_type[f->type] = j->n_items;
    if (rs_bytes_append(&j->add_names, f->path, len + 1, err) < 0 ||
        rs_bytes_append(&j->add_records, &rec, sizeof(rec), err) < 0)
        return -1;
    j->n_items++;
    return j->add_records.len >= ADD_BATCH * sizeof(rec) ? append_pending(j, err) : 0;
}

int rs_sign_store_open(rs_sign_job *j, rs_error *err)
{
    for (size_t t = 0; t < RS_SIG_TYPES; t++)
        j->first_of_type[t] = SIZE_MAX;
    j->read_hashes_first = SIZE_MAX;
    if (!j->window)
        j->window = RS_SIGN_WINDOW;
    j->records = j->names = j->resolved = j->order = j->sig_hashes = (rs_spill)RS_SPILL_INIT;
    if (pthread_mutex_init(&j->store_lock, NULL) != 0)
        return rs_fail(err, "cannot make a lock");
    j->store_lock_made = true;
    j->sink = (rs_files_json_sink){ store_add, j };
    if (rs_spill_open(&j->records, err) < 0 || rs_spill_open(&j->names, err) < 0 ||
        rs_spill_open(&j->resolved, err) < 0 || rs_spill_open(&j->order, err) < 0 ||
        rs_spill_open(&j->sig_hashes, err) < 0)
        return -1;
    return 0;
}

size_t rs_sign_window_span(const rs_sign_job *j, size_t first, size_t end)
{
    return end - first < j->window ? end - first : j->window;
}

int rs_sign_store_flush(rs_sign_job *j, rs_error *err)
{
    for (size_t t = 0; t < RS_SIG_TYPES; t++)
        if (j->first_of_type[t] == SIZE_MAX)
            j->first_of_type[t] = j->n_items;
    return append_pending(j, err);
}

/* Nothing to close in a job whose store was never opened: its spills'
 * descriptors are zero there, not -1. */
void rs_sign_store_free(rs_sign_job *j)
{
    if (!j->store_lock_made)
        return;
    rs_bytes_free(&j->add_names);
    rs_bytes_free(&j->add_records);
    rs_spill_close(&j->records);
    rs_spill_close(&j->names);
    rs_spill_close(&j->resolved);
    rs_spill_close(&j->order);
    rs_spill_close(&j->sig_hashes);
    pthread_mutex_destroy(&j->store_lock);
    j->store_lock_made = false;
}

int rs_sign_store_write(rs_sign_job *j, size_t index, const rs_sign_record *rec, rs_error *err)
{
    return rs_spill_write(&j->records, (uint64_t)index * sizeof(*rec), rec, sizeof(*rec), err);
}

int rs_sign_store_keep_hash(rs_sign_job *j, size_t k, const unsigned char hash[SHA256_DIGEST_LENGTH], rs_error *err)
{
    if (k - j->hashes_on_disk >= RS_SIGN_HASH_BLOCK)
        return rs_fail(err, "signature %zu kept out of order", k);
    memcpy(j->pending_hashes[k - j->hashes_on_disk], hash, SHA256_DIGEST_LENGTH);
    if (k + 1 - j->hashes_on_disk < RS_SIGN_HASH_BLOCK)
        return 0;
    if (rs_spill_append(&j->sig_hashes, j->pending_hashes, sizeof(j->pending_hashes), NULL, err) < 0)
        return -1;
    j->hashes_on_disk += RS_SIGN_HASH_BLOCK;
    return 0;
}

int rs_sign_store_hash(rs_sign_job *j, size_t k, unsigned char hash[SHA256_DIGEST_LENGTH], rs_error *err)
{
    if (k >= j->hashes_on_disk) {
        if (k - j->hashes_on_disk >= RS_SIGN_HASH_BLOCK)
            return rs_fail(err, "signature %zu not yet made", k);
        memcpy(hash, j->pending_hashes[k - j->hashes_on_disk], SHA256_DIGEST_LENGTH);
        return 0;
    }
    /* Read a block at a time: the manifest asks for them nearly in order. */
    if (j->read_hashes_first == SIZE_MAX || k < j->read_hashes_first ||
        k - j->read_hashes_first >= RS_SIGN_HASH_BLOCK) {
        size_t first = k - k % RS_SIGN_HASH_BLOCK;

        j->read_hashes_first = SIZE_MAX;
        if (rs_spill_read(&j->sig_hashes, (uint64_t)first * SHA256_DIGEST_LENGTH, j->read_hashes,
                          sizeof(j->read_hashes), err) < 0)
            return -1;
        j->read_hashes_first = first;
    }
    memcpy(hash, j->read_hashes[k - j->read_hashes_first], SHA256_DIGEST_LENGTH);
    return 0;
}

const rs_format *rs_sign_checked_format(const rs_sign_record *rec)
{
    return rs_format_for_sig_type(rs_sig_type_name((rs_sig_type)rec->type));
}

void rs_sign_item_from_record(rs_sign_job *j, size_t index, const rs_sign_record *rec, const char *path,
                              rs_sign_item *it)
{
    it->rec = *rec;
    it->index = index;
    it->pkg = &j->tpl.files.packages[rec->pkg];
    it->tree = j->trees ? j->trees[rec->pkg] : NULL;
    it->path = path;
    it->resolved = (char *)path;
    it->format = NULL;
}

/* A record read back must name a package and a sig_type; its names are
 * checked as they are read (read_name, read_paths). */
static int check_record(const rs_sign_job *j, const rs_sign_record *rec, rs_error *err)
{
    if (rec->pkg >= j->tpl.files.n_packages || rec->type >= RS_SIG_TYPES)
        return rs_fail(err, "temporary file: a record that was not written");
    return 0;
}

/* Room for n bytes in b, whose contents may go. */
static int room_for(rs_bytes *b, size_t n, rs_error *err)
{
    b->len = 0;
    return rs_bytes_reserve(b, n, err);
}

/* n bytes of a spill, which must be a NUL-terminated name of len bytes. */
static int read_name(const rs_spill *s, uint64_t at, uint32_t len, char *out, rs_error *err)
{
    if (rs_spill_read(s, at, out, (size_t)len + 1, err) < 0)
        return -1;
    if (out[len] || strlen(out) != len)
        return rs_fail(err, "temporary file: a name that was not written");
    return 0;
}

/* n consecutive records' paths: they were appended one after the other,
 * so they are read in one go, from the first's start to the last's end;
 * each must be where its record says. */
static int read_paths(rs_sign_job *j, const rs_sign_record *recs, size_t n, rs_bytes *buf, rs_error *err)
{
    uint64_t start = recs[0].path_at, end = recs[n - 1].path_at + recs[n - 1].path_len + 1;

    if (end < start || end - start > SIZE_MAX || room_for(buf, (size_t)(end - start), err) < 0 ||
        rs_spill_read(&j->names, start, buf->data, (size_t)(end - start), err) < 0)
        return -1;
    buf->len = (size_t)(end - start);
    for (size_t i = 0; i < n; i++) {
        uint64_t at = recs[i].path_at - start;

        if (recs[i].path_at < start || at + recs[i].path_len >= buf->len || buf->data[at + recs[i].path_len] ||
            strlen((char *)buf->data + at) != recs[i].path_len)
            return rs_fail(err, "temporary file: a name that was not written");
    }
    return 0;
}

int rs_sign_store_read_batch(rs_sign_job *j, size_t first, size_t n, rs_sign_record *recs, rs_bytes *paths,
                             rs_error *err)
{
    if (rs_spill_read(&j->records, (uint64_t)first * sizeof(*recs), recs, n * sizeof(*recs), err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (check_record(j, &recs[i], err) < 0)
            return -1;
    return read_paths(j, recs, n, paths, err);
}

const char *rs_sign_batch_path(const rs_sign_record *recs, const rs_bytes *paths, size_t i)
{
    return (const char *)paths->data + (recs[i].path_at - recs[0].path_at);
}

int rs_sign_store_item_at(rs_sign_job *j, size_t index, const rs_sign_record *rec, const char *path, rs_sign_item *it,
                          rs_bytes *buf, rs_error *err)
{
    size_t path_n = (size_t)rec->path_len + 1, n = path_n + (rec->resolved_len ? (size_t)rec->resolved_len + 1 : 0);

    if (room_for(buf, n, err) < 0)
        return -1;
    memcpy(buf->data, path, path_n);
    if (rec->resolved_len && read_name(&j->resolved, rec->resolved_at, rec->resolved_len, (char *)buf->data + path_n,
                                       err) < 0)
        return -1;
    buf->len = n;
    rs_sign_item_from_record(j, index, rec, (const char *)buf->data, it);
    if (rec->resolved_len)
        it->resolved = (char *)buf->data + path_n;
    return 0;
}

int rs_sign_store_load_item(rs_sign_job *j, size_t index, rs_sign_item *it, rs_bytes *buf, rs_error *err)
{
    _cleanup_bytes_ rs_bytes path = { 0 };
    rs_sign_record rec;

    if (rs_sign_store_read_batch(j, index, 1, &rec, &path, err) < 0)
        return -1;
    return rs_sign_store_item_at(j, index, &rec, (const char *)path.data, it, buf, err);
}

void rs_sign_window_free(rs_sign_window *w)
{
    for (size_t i = 0; w->items && i < w->n; i++) {
        if (w->items[i].resolved != w->items[i].path)
            free(w->items[i].resolved);
        rs_bytes_free(&w->items[i].sig);
    }
    free(w->items);
    rs_bytes_free(&w->paths);
    memset(w, 0, sizeof(*w));
}

int rs_sign_window_load(rs_sign_job *j, size_t first, size_t n, rs_sign_window *w, rs_error *err)
{
    _cleanup_free_ rs_sign_record *recs = NULL;

    rs_sign_window_free(w);
    if (!n)
        return 0;
    if (!(w->items = calloc(n, sizeof(*w->items))) || !(recs = calloc(n, sizeof(*recs))))
        return rs_fail(err, "out of memory");
    w->first = first;
    w->n = n;
    if (rs_sign_store_read_batch(j, first, n, recs, &w->paths, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        rs_sign_item_from_record(j, first + i, &recs[i], rs_sign_batch_path(recs, &w->paths, i), &w->items[i]);
    return 0;
}

/* The resolved names that are not the path itself, appended at once. */
static int save_resolved(rs_sign_job *j, rs_sign_window *w, rs_error *err)
{
    _cleanup_bytes_ rs_bytes names = { 0 };
    uint64_t base = 0;
    int rc = 0;

    for (size_t i = 0; i < w->n; i++) {
        rs_sign_item *it = &w->items[i];
        size_t len = strlen(it->resolved);

        it->rec.resolved_len = 0;
        if (!strcmp(it->resolved, it->path))
            continue;
        if (len > UINT32_MAX)
            return rs_fail(err, "package %s: %s: resolved name too long", it->pkg->name, it->path);
        it->rec.resolved_at = names.len;
        it->rec.resolved_len = (uint32_t)len;
        if (rs_bytes_append(&names, it->resolved, len + 1, err) < 0)
            return -1;
    }
    if (!names.len)
        return 0;
    pthread_mutex_lock(&j->store_lock);
    rc = rs_spill_append(&j->resolved, names.data, names.len, &base, err);
    pthread_mutex_unlock(&j->store_lock);
    for (size_t i = 0; rc == 0 && i < w->n; i++)
        if (w->items[i].rec.resolved_len)
            w->items[i].rec.resolved_at += base;
    return rc;
}

int rs_sign_window_save(rs_sign_job *j, rs_sign_window *w, rs_error *err)
{
    _cleanup_free_ rs_sign_record *recs = NULL;

    if (!w->n)
        return 0;
    if (save_resolved(j, w, err) < 0)
        return -1;
    if (!(recs = calloc(w->n, sizeof(*recs))))
        return rs_fail(err, "out of memory");
    for (size_t i = 0; i < w->n; i++)
        recs[i] = w->items[i].rec;
    return rs_spill_write(&j->records, (uint64_t)w->first * sizeof(*recs), recs, w->n * sizeof(*recs), err);
}

int rs_sign_store_each(rs_sign_job *j, int (*fn)(rs_sign_job *j, rs_sign_item *it, void *ctx, rs_error *err),
                       void *ctx, rs_error *err)
{
    _cleanup_(rs_sign_window_free) rs_sign_window w = { 0 };

    for (size_t first = 0; first < j->n_items; first += j->window) {
        if (rs_sign_window_load(j, first, rs_sign_window_span(j, first, j->n_items), &w, err) < 0)
            return -1;
        for (size_t i = 0; i < w.n; i++)
            if (fn(j, &w.items[i], ctx, err) < 0)
                return -1;
    }
    return 0;
}
