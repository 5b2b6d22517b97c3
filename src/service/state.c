#include "service/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/sqlite_lib.h"

static const char *const status_names[] = { "pending", "signed", "held", "published", "failed" };

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS requests("
    " id TEXT PRIMARY KEY, package TEXT NOT NULL, source TEXT NOT NULL, suite TEXT NOT NULL,"
    " codename TEXT NOT NULL, architecture TEXT NOT NULL, version TEXT NOT NULL,"
    " embargoed INTEGER NOT NULL, arrived INTEGER NOT NULL, updated INTEGER NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN ('pending','signed','held','published','failed')),"
    " reason TEXT, outputs TEXT, entries TEXT);";

/* Columns added since the first release, for states made before them;
 * adding one that exists fails harmlessly. */
static const char *const added_columns[] = {
    "ALTER TABLE requests ADD COLUMN failure TEXT",
    "ALTER TABLE requests ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE requests ADD COLUMN retry_at INTEGER",
    /* Who the suite was at intake (repo.h): NULL in older rows. */
    "ALTER TABLE requests ADD COLUMN archive_dir TEXT",
    "ALTER TABLE requests ADD COLUMN archive_suite TEXT",
    "ALTER TABLE requests ADD COLUMN archive_codename TEXT",
};

struct rs_state {
    sqlite3 *db;
};

const char *rs_req_status_name(rs_req_status s)
{
    return (unsigned)s < sizeof(status_names) / sizeof(status_names[0]) ? status_names[s] : "?";
}

static int status_from(const char *name)
{
    for (int i = 0; name && i < (int)(sizeof(status_names) / sizeof(status_names[0])); i++)
        if (!strcmp(name, status_names[i]))
            return i;
    return -1;
}

/* SQLite says "disk I/O error" for a disk that is full, among others: the
 * system's own reason, when there is one, tells the operator which. */
static int db_fail(rs_state *s, rs_error *err, const char *what)
{
    int sys = sym_sqlite3_system_errno(s->db);

    if (sys)
        return rs_fail(err, "state database: %s: %s (%s)", what, sym_sqlite3_errmsg(s->db), strerror(sys));
    return rs_fail(err, "state database: %s: %s", what, sym_sqlite3_errmsg(s->db));
}

void rs_state_close(rs_state *s)
{
    if (s->db)
        sym_sqlite3_close(s->db);
    free(s);
}

static int open_db(const char *path, int flags, rs_state **out, rs_error *err)
{
    _cleanup_(rs_statep) rs_state *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s)
        return rs_fail(err, "out of memory");
    if (rs_sqlite_load(err) < 0)
        return -1;
    if (sym_sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | flags, NULL) != SQLITE_OK)
        return rs_fail(err, "%s: %s", path, s->db ? sym_sqlite3_errmsg(s->db) : "cannot open");
    /* A transition reported done must survive a power cut, not only a kill. */
    sym_sqlite3_busy_timeout(s->db, 10000);
    if (sym_sqlite3_exec(s->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
        sym_sqlite3_exec(s->db, "PRAGMA synchronous=FULL;", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, err, path);
    for (size_t i = 0; i < sizeof(added_columns) / sizeof(added_columns[0]); i++)
        sym_sqlite3_exec(s->db, added_columns[i], NULL, NULL, NULL);
    *out = TAKE_PTR(s);
    return 0;
}

int rs_state_create(const char *path, rs_state **out, rs_error *err)
{
    return open_db(path, SQLITE_OPEN_CREATE, out, err);
}

int rs_state_open(const char *path, rs_state **out, rs_error *err)
{
    return open_db(path, 0, out, err);
}

static int exec(rs_state *s, const char *sql, rs_error *err)
{
    return sym_sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : db_fail(s, err, sql);
}

/* Binds text parameters 1..n (NULL binds SQL NULL), steps once. */
static int run(rs_state *s, const char *sql, const char *const *texts, size_t n, int *changes, rs_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sym_sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    for (size_t i = 0; i < n; i++)
        sym_sqlite3_bind_text(st, (int)i + 1, texts[i], -1, SQLITE_TRANSIENT);
    rc = sym_sqlite3_step(st);
    sym_sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(s, err, "update");
    if (changes)
        *changes = sym_sqlite3_changes(s->db);
    return 0;
}

int rs_state_meta_set(rs_state *s, const char *key, const char *value, rs_error *err)
{
    const char *args[] = { key, value };

    return run(s, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", args, 2, NULL, err);
}

int rs_state_meta_get(rs_state *s, const char *key, char **value, rs_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *value = NULL;
    if (sym_sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sym_sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    rc = sym_sqlite3_step(st);
    if (rc == SQLITE_ROW && !(*value = strdup((const char *)sym_sqlite3_column_text(st, 0))))
        rc = SQLITE_NOMEM;
    sym_sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail(s, err, key);
}

static int insert(rs_state *s, sqlite3_stmt *st, const rs_request *r, bool embargoed, const rs_suite_identity *id,
                  int64_t now, size_t *added, rs_error *err)
{
    const char *texts[] = { r->id, r->package, r->source, r->suite, r->codename, r->architecture, r->version };
    const char *seen[] = { id ? id->dir : NULL, id ? id->suite : NULL, id ? id->codename : NULL };

    sym_sqlite3_reset(st);
    for (int i = 0; i < 7; i++)
        sym_sqlite3_bind_text(st, i + 1, texts[i], -1, SQLITE_TRANSIENT);
    sym_sqlite3_bind_int(st, 8, embargoed);
    sym_sqlite3_bind_int64(st, 9, now);
    /* bind_text of NULL binds SQL NULL. */
    for (int i = 0; i < 3; i++)
        sym_sqlite3_bind_text(st, i + 10, seen[i], -1, SQLITE_TRANSIENT);
    if (sym_sqlite3_step(st) != SQLITE_DONE)
        return db_fail(s, err, r->id);
    *added += (size_t)sym_sqlite3_changes(s->db);
    return 0;
}

int rs_state_add(rs_state *s, const rs_request_list *l, const bool *embargoed, const rs_suite_identity *ids,
                 int64_t now, size_t *added, rs_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;

    *added = 0;
    if (exec(s, "BEGIN IMMEDIATE", err) < 0)
        return -1;
    if (sym_sqlite3_prepare_v2(s->db,
                           "INSERT OR IGNORE INTO requests(id, package, source, suite, codename, architecture,"
                           " version, embargoed, arrived, updated, status, archive_dir, archive_suite,"
                           " archive_codename) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?9,'pending',?10,?11,?12)",
                           -1, &st, NULL) != SQLITE_OK)
        rc = db_fail(s, err, "prepare");
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        rc = insert(s, st, &l->items[i], embargoed[i], ids ? &ids[i] : NULL, now, added, err);
    sym_sqlite3_finalize(st);
    if (rc == 0)
        return exec(s, "COMMIT", err);
    sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

void rs_state_rows_free(rs_state_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++) {
        free(rows[i].reason), free(rows[i].outputs), free(rows[i].entries), free(rows[i].failure);
        free(rows[i].req.id), free(rows[i].req.package), free(rows[i].req.source), free(rows[i].req.suite);
        free(rows[i].req.codename), free(rows[i].req.architecture), free(rows[i].req.version);
        rs_suite_identity_free(&rows[i].archive);
    }
    free(rows);
}

static char *col(sqlite3_stmt *st, int i, bool *oom)
{
    const unsigned char *t = sym_sqlite3_column_text(st, i);
    char *copy = t ? strdup((const char *)t) : NULL;

    *oom |= t && !copy;
    return copy;
}

static int read_row(sqlite3_stmt *st, rs_state_row *row, rs_error *err)
{
    bool oom = false;
    int status;

    row->req.id = col(st, 0, &oom);
    row->req.package = col(st, 1, &oom);
    row->req.source = col(st, 2, &oom);
    row->req.suite = col(st, 3, &oom);
    row->req.codename = col(st, 4, &oom);
    row->req.architecture = col(st, 5, &oom);
    row->req.version = col(st, 6, &oom);
    row->req.embargoed = sym_sqlite3_column_int(st, 7) != 0;
    row->arrived = sym_sqlite3_column_int64(st, 8);
    row->updated = sym_sqlite3_column_int64(st, 9);
    status = status_from((const char *)sym_sqlite3_column_text(st, 10));
    row->reason = col(st, 11, &oom);
    row->outputs = col(st, 12, &oom);
    row->entries = col(st, 13, &oom);
    row->failure = col(st, 14, &oom);
    row->attempts = sym_sqlite3_column_int(st, 15);
    row->retry_at = sym_sqlite3_column_int64(st, 16);
    row->archive.dir = col(st, 17, &oom);
    row->archive.suite = col(st, 18, &oom);
    row->archive.codename = col(st, 19, &oom);
    if (oom)
        return rs_fail(err, "out of memory");
    if (status < 0)
        return rs_fail(err, "state database: request %s has an unknown status", row->req.id);
    row->status = (rs_req_status)status;
    return 0;
}

int rs_state_list(rs_state *s, int status, rs_state_row **rows, size_t *n, rs_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, step;

    *rows = NULL;
    *n = 0;
    if (sym_sqlite3_prepare_v2(s->db,
                           "SELECT id, package, source, suite, codename, architecture, version, embargoed, arrived,"
                           " updated, status, reason, outputs, entries, failure, attempts, retry_at, archive_dir,"
                           " archive_suite, archive_codename FROM requests"
                           " WHERE ?1 IS NULL OR status = ?1 ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    if (status >= 0)
        sym_sqlite3_bind_text(st, 1, rs_req_status_name((rs_req_status)status), -1, SQLITE_STATIC);
    while (rc == 0 && (step = sym_sqlite3_step(st)) == SQLITE_ROW) {
        rs_state_row *grown = realloc(*rows, (*n + 1) * sizeof(*grown));

        if (!grown) {
            rc = rs_fail(err, "out of memory");
            break;
        }
        *rows = grown;
        memset(&grown[*n], 0, sizeof(*grown));
        (*n)++;
        rc = read_row(st, &grown[*n - 1], err);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = db_fail(s, err, "select");
    sym_sqlite3_finalize(st);
    if (rc < 0) {
        rs_state_rows_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}

static int one_change(rs_state *s, const char *sql, const char *const *args, size_t n, const char *id, rs_error *err)
{
    int changes = 0;

    if (run(s, sql, args, n, &changes, err) < 0)
        return -1;
    return changes == 1 ? 0 : rs_fail(err, "request %s: not in a state that allows this", id);
}

int rs_state_set_signed(rs_state *s, const char *id, bool held, const char *outputs, const char *entries,
                        rs_error *err)
{
    char now[32];
    const char *args[] = { id, held ? "held" : "signed", outputs, entries, now };

    snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
    return one_change(s,
                      "UPDATE requests SET status = ?2, embargoed = embargoed OR ?2 = 'held', outputs = ?3,"
                      " entries = ?4, reason = NULL, updated = ?5"
                      " WHERE id = ?1 AND status = 'pending'",
                      args, 5, id, err);
}

int rs_state_set_status(rs_state *s, const char *id, rs_req_status status, const char *reason, rs_error *err)
{
    char now[32];
    const char *args[] = { id, rs_req_status_name(status), reason, now };

    snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
    return one_change(s, "UPDATE requests SET status = ?2, reason = ?3, updated = ?4 WHERE id = ?1", args, 4, id,
                      err);
}

int rs_state_release(rs_state *s, const char *id, rs_error *err)
{
    char now[32];
    const char *args[] = { id, now };
    int changes = 0;

    snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
    if (run(s, "UPDATE requests SET status = 'signed', updated = ?2 WHERE id = ?1 AND status = 'held'", args, 2,
            &changes, err) < 0)
        return -1;
    return changes == 1 ? 0 : rs_fail(err, "request %s is not held", id);
}

int rs_state_set_failed(rs_state *s, const char *id, const char *reason, bool transient, int64_t retry_at,
                        rs_error *err)
{
    char now[32], when[32];
    const char *args[] = { id, reason, transient ? "transient" : "refused", now, retry_at ? when : NULL };

    snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
    snprintf(when, sizeof(when), "%lld", (long long)retry_at);
    return one_change(s,
                      "UPDATE requests SET status = 'failed', reason = ?2, failure = ?3, attempts = attempts + 1,"
                      " retry_at = ?5, updated = ?4 WHERE id = ?1",
                      args, 5, id, err);
}

int rs_state_retry(rs_state *s, const char *id, size_t *n, rs_error *err)
{
    char now[32];
    const char *args[] = { now, id };
    int changes = 0;

    snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
    if (run(s,
            "UPDATE requests SET status = 'pending', reason = NULL, failure = NULL, attempts = 0, retry_at = NULL,"
            " updated = ?1 WHERE status = 'failed' AND (?2 IS NULL OR id = ?2)",
            args, 2, &changes, err) < 0)
        return -1;
    *n = (size_t)changes;
    return id && !changes ? rs_fail(err, "request %s has not failed", id) : 0;
}

int rs_state_retry_due(rs_state *s, int64_t now, size_t *n, rs_error *err)
{
    char at[32];
    const char *args[] = { at };
    int changes = 0;

    snprintf(at, sizeof(at), "%lld", (long long)now);
    if (run(s,
            "UPDATE requests SET status = 'pending', updated = ?1 WHERE status = 'failed' AND failure = 'transient'"
            " AND retry_at IS NOT NULL AND retry_at <= ?1",
            args, 1, &changes, err) < 0)
        return -1;
    *n = (size_t)changes;
    return 0;
}
