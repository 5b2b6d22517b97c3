/* `log monitor`'s 1.0-format sources: dpkg-source applies the .diff.gz
 * with patch, which creates whatever files it adds byte for byte, binary
 * ones included (a line is any bytes up to a newline). So a new file
 * ending in ".sig" there is a published signature file like one in a
 * tarball. A .sig the diff changes rather than creates depends on the
 * .orig.tar.gz too; it is reported as not judged (a -signed source never
 * has one). Hunks are read by their line counts, as patch reads them, so
 * a content line that looks like a header is never taken for one. */
#include <stdlib.h>
#include <string.h>

#include "archive/archive_read.h"
#include "base/cleanup.h"
#include "base/file.h"
#include "translog/monitor_internal.h"

/* Lines are kept up to this; a longer one is cut (and cannot be a
 * signature's line). */
#define LINE_KEEP (MONITOR_MAX_SIG + 2)

typedef struct line_reader {
    struct archive *a;
    const char *path;
    uint8_t buf[65536];
    size_t pos, len;
    rs_bytes line;          /* the current line, its newline included when it had one */
    bool cut;               /* the line was longer than LINE_KEEP */
} line_reader;

/* The next line: 1, or 0 at the end. */
static int next_line(line_reader *lr, rs_error *err)
{
    lr->line.len = 0;
    lr->cut = false;
    for (;;) {
        uint8_t *nl;
        size_t n, keep;
        la_ssize_t got;

        if (lr->pos == lr->len) {
            if ((got = sym_archive_read_data(lr->a, lr->buf, sizeof(lr->buf))) < 0)
                return rs_fail(err, "%s: %s", lr->path, sym_archive_error_string(lr->a));
            if (got == 0)
                return lr->line.len > 0 || lr->cut;
            lr->pos = 0;
            lr->len = (size_t)got;
        }
        nl = memchr(lr->buf + lr->pos, '\n', lr->len - lr->pos);
        n = nl ? (size_t)(nl - (lr->buf + lr->pos)) + 1 : lr->len - lr->pos;
        keep = lr->line.len + n > LINE_KEEP ? LINE_KEEP - lr->line.len : n;
        lr->cut |= keep < n;
        if (rs_bytes_append(&lr->line, lr->buf + lr->pos, keep, err) < 0)
            return -1;
        lr->pos += n;
        if (nl)
            return 1;
    }
}

static bool starts(const line_reader *lr, const char *prefix)
{
    size_t n = strlen(prefix);

    return lr->line.len >= n && !memcmp(lr->line.data, prefix, n);
}

/* The file a diff creates or changes. */
typedef struct diff_file {
    char *path;             /* from "+++ PATH\tTIME" */
    bool is_sig;
    bool changed;           /* a hunk had old lines, or there was more than one hunk */
    bool too_long;
    size_t hunks;
    rs_bytes content;       /* a created .sig's bytes */
    char last;              /* the kind of the last hunk line: ' ', '+' or '-' */
} diff_file;

static void file_reset(diff_file *f)
{
    free(f->path);
    rs_bytes_free(&f->content);
    memset(f, 0, sizeof(*f));
}

static int file_start(diff_file *f, const line_reader *lr, rs_error *err)
{
    const char *path = (const char *)lr->line.data + 4;
    size_t n = 0;

    /* The line has no NUL after it: the path ends at a tab, the newline
     * or the line's end (the last line may have no newline). */
    while (n < lr->line.len - 4 && path[n] != '\t' && path[n] != '\n')
        n++;
    file_reset(f);
    if (!(f->path = strndup(path, n)))
        return rs_fail(err, "out of memory");
    f->is_sig = rs_name_has_suffix(f->path, ".sig");
    return 0;
}

static int file_end(const monitor_walk *w, const char *diff, diff_file *f, rs_error *err)
{
    int rc = 0;

    if (f->path && f->is_sig) {
        if (f->changed)
            monitor_unchecked(w, diff, f->path, "a signature file the diff changes rather than creates");
        else if (f->too_long)
            monitor_unchecked(w, diff, f->path, "a signature file over the size limit");
        else
            rc = monitor_published_sig(w, diff, f->path, f->content.data, f->content.len, err);
    }
    file_reset(f);
    return rc;
}

/* "@@ -l[,s] +l[,s] @@": the old and new line counts (s is 1 when left out). */
static bool hunk_counts(const line_reader *lr, unsigned long *old, unsigned long *new)
{
    char head[128], *p;
    size_t n = lr->line.len < sizeof(head) - 1 ? lr->line.len : sizeof(head) - 1;

    memcpy(head, lr->line.data, n);
    head[n] = '\0';
    p = head + 3;
    if (*p++ != '-')
        return false;
    strtoul(p, &p, 10);
    *old = *p == ',' ? strtoul(p + 1, &p, 10) : 1;
    if (*p++ != ' ' || *p++ != '+')
        return false;
    strtoul(p, &p, 10);
    *new = *p == ',' ? strtoul(p + 1, &p, 10) : 1;
    return *p == ' ';
}

/* One hunk line of f's: the new side's lines make a created file. */
static int hunk_line(diff_file *f, const line_reader *lr, rs_error *err)
{
    char kind = (char)lr->line.data[0];

    if (kind == '\\') {   /* "\ No newline at end of file": the line before had none */
        if (f->last != '-' && f->content.len && f->content.data[f->content.len - 1] == '\n')
            f->content.len--;
        return 0;
    }
    f->last = kind;
    if (!f->is_sig || kind == '-' || f->too_long)
        return 0;
    if (lr->cut || f->content.len + lr->line.len - 1 > MONITOR_MAX_SIG) {
        f->too_long = true;
        return 0;
    }
    return rs_bytes_append(&f->content, lr->line.data + 1, lr->line.len - 1, err);
}

static int read_hunk(line_reader *lr, diff_file *f, unsigned long old, unsigned long new, rs_error *err)
{
    int rc;

    f->changed |= old > 0 || ++f->hunks > 1;
    while (old || new) {
        if ((rc = next_line(lr, err)) <= 0)
            return rc < 0 ? -1 : rs_fail(err, "%s: %s: a hunk ends early", lr->path, f->path);
        switch (lr->line.data[0]) {
        case ' ': case '\n':   /* an empty context line may have lost its space */
            if (!old-- || !new--)
                return rs_fail(err, "%s: %s: a hunk longer than its header says", lr->path, f->path);
            break;
        case '-':
            if (!old--)
                return rs_fail(err, "%s: %s: a hunk longer than its header says", lr->path, f->path);
            break;
        case '+':
            if (!new--)
                return rs_fail(err, "%s: %s: a hunk longer than its header says", lr->path, f->path);
            break;
        case '\\':
            break;
        default:
            return rs_fail(err, "%s: %s: a hunk line that is none of ' ', '-', '+'", lr->path, f->path);
        }
        if (hunk_line(f, lr, err) < 0)
            return -1;
    }
    return 0;
}

static int parse(const monitor_walk *w, line_reader *lr, rs_error *err)
{
    _cleanup_(file_reset) diff_file f = { 0 };
    bool after_minus = false;
    unsigned long old, new;
    int rc;

    while ((rc = next_line(lr, err)) > 0) {
        if (after_minus && starts(lr, "+++ ")) {
            if (file_end(w, lr->path, &f, err) < 0 || file_start(&f, lr, err) < 0)
                return -1;
        } else if (f.path && starts(lr, "@@ ")) {
            if (!hunk_counts(lr, &old, &new))
                return rs_fail(err, "%s: %s: an unreadable hunk header", lr->path, f.path);
            if (read_hunk(lr, &f, old, new, err) < 0)
                return -1;
        } else if (f.path && starts(lr, "\\")) {
            hunk_line(&f, lr, err);   /* after a hunk's last line */
        }
        after_minus = starts(lr, "--- ");
    }
    return rc < 0 ? -1 : file_end(w, lr->path, &f, err);
}

int monitor_scan_diff(const monitor_walk *w, const char *path, rs_error *err)
{
    _cleanup_(rs_archive_freep) struct archive *a = sym_archive_read_new();
    _cleanup_free_ line_reader *lr = calloc(1, sizeof(*lr));
    struct archive_entry *e;
    int rc;

    if (!a || !lr)
        return rs_fail(err, "out of memory");
    sym_archive_read_support_filter_gzip(a);
    sym_archive_read_support_format_raw(a);
    if (sym_archive_read_open_filename(a, path, 65536) != ARCHIVE_OK ||
        sym_archive_read_next_header(a, &e) != ARCHIVE_OK)
        return rs_fail(err, "%s: %s", path, sym_archive_error_string(a));
    *lr = (line_reader){ .a = a, .path = path };
    rc = parse(w, lr, err);
    rs_bytes_free(&lr->line);
    return rc;
}
