/* Files, one job to a source file: input.c, output.c (temporaries made,
 * committed, removed), output_write.c (writing them), dirs.c (directories
 * and paths), beneath.c (opening below a directory), lock.c.
 *
 * Inputs are read by position (never loaded whole, never modified; reads
 * of a few bytes near either end come from a window of each end, read
 * once); outputs are written to a temporary file beside the target and
 * renamed into place only on commit, so a failed command leaves nothing
 * behind. */
#ifndef RS_FILE_H
#define RS_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/bytes.h"
#include "base/error.h"

typedef struct evp_md_ctx_st EVP_MD_CTX;

/* Inputs are hashed and copied through buffers of this size: large enough
 * that syscalls cost little, small enough never to matter in memory. */
#define RS_FILE_CHUNK (256 * 1024)

typedef struct rs_input {
    int fd;
    char *path;
    uint64_t size;
    mode_t mode;
    struct rs_input_ends *ends;   /* the windows; an input is read by one thread at a time */
} rs_input;

int rs_input_open(rs_input *in, const char *path, rs_error *err);
/* Takes over an open descriptor of a regular file (or memfd). */
int rs_input_from_fd(rs_input *in, int fd, const char *name, rs_error *err);
void rs_input_close(rs_input *in);
#define _cleanup_input_ __attribute__((cleanup(rs_input_close)))

/* Receives bytes in order as they are written to an output (or hashed
 * from an input); used for checksums that cover them all. */
typedef void (*rs_output_observer)(void *ctx, const uint8_t *data, size_t len);

/* Reads exactly len bytes at off; a range outside the file is an error. */
int rs_input_read(const rs_input *in, uint64_t off, void *buf, size_t len, rs_error *err);
/* Feeds [off, off+len) of the file to a digest, in bounded chunks. */
int rs_input_hash(const rs_input *in, uint64_t off, uint64_t len, EVP_MD_CTX *md, rs_error *err);
/* The same, showing the bytes hashed to an observer too (in order), so
 * that a second sum over them needs no second read. */
int rs_input_hash_observed(const rs_input *in, uint64_t off, uint64_t len, EVP_MD_CTX *md,
                           rs_output_observer observe, void *ctx, rs_error *err);
/* EVP_DigestUpdate, counted: every byte a format hashes goes through this
 * or rs_input_hash, so that progress reports the bytes actually hashed. */
int rs_hash_update(EVP_MD_CTX *md, const void *data, size_t len);
/* How many bytes this thread has hashed so far; the difference across one
 * file's digest is what that digest read. */
uint64_t rs_hashed_bytes(void);
/* Reads a whole (small) file into memory, refusing anything over max bytes. */
int rs_read_file(const char *path, size_t max, rs_bytes *out, rs_error *err);
/* The same from an open descriptor, which it takes over (name is for errors). */
int rs_read_fd(int fd, const char *name, size_t max, rs_bytes *out, rs_error *err);
/* SHA-256 of the whole input, read through a fixed buffer. */
int rs_input_sha256(const rs_input *in, uint8_t out[32], rs_error *err);
/* The same of the file at path, opened for it; *size (when not NULL) is
 * the size of what was hashed. */
int rs_file_sha256(const char *path, uint8_t out[32], uint64_t *size, rs_error *err);


typedef struct rs_output {
    int fd;
    char *path;
    char *tmp_path;
    uint64_t written;
    rs_output_observer observe;
    void *observe_ctx;
    bool durable;            /* fsync before commit (batches sync once instead) */
    mode_t mode;             /* given at commit (fchmod): until then the file is 0600 */
    /* The directory the temporary was made in, held open until commit: the
     * mode is set on the descriptor and the rename made within this
     * directory, never through a path another user could have replaced. */
    int dir;
    bool dir_open;
    dev_t dev;               /* the temporary's identity: what commit must find at path */
    ino_t ino;
} rs_output;

/* Creates a temporary file beside path; it is private (0600) while being
 * written and gets `mode` (less the umask) when committed. Commit fails,
 * reporting it, if path is then anything but that file (a user who can
 * write the directory swapped the temporary for a link or another file). */
int rs_output_open(rs_output *out, const char *path, mode_t mode, rs_error *err);
/* The same for name (one component) in the directory open on dir, named
 * dir_name in errors: for directories others can write, opened with
 * rs_dir_open_nofollow. dir is duplicated; the caller keeps its own. */
int rs_output_open_at(rs_output *out, int dir, const char *dir_name, const char *name, mode_t mode, rs_error *err);
/* For tests only: called, when set, by rs_output_commit just before it
 * seals the temporary (tmp_path), so a test can replace it deterministically
 * as a racing user would. NULL in every program. */
extern void (*rs_output_test_before_commit)(const char *tmp_path);
int rs_output_write(rs_output *out, const void *data, size_t len, rs_error *err);
int rs_output_zeros(rs_output *out, uint64_t len, rs_error *err);
int rs_output_copy(rs_output *out, const rs_input *in, uint64_t off, uint64_t len, rs_error *err);
/* Overwrites bytes already written (for fields known only at the end). */
int rs_output_patch(rs_output *out, uint64_t off, const void *data, size_t len, rs_error *err);
/* Closes the temporary file (fsyncing it first when durable), keeping it
 * for a later commit. Atomicity comes from the rename, not from fsync:
 * readers see the old file or the whole new one, and a failed or
 * interrupted command leaves nothing. */
int rs_output_seal(rs_output *out, rs_error *err);
/* Gives the temporary its mode (fchmod), seals it if needed, renames it
 * onto the target within the directory held open, and checks that the
 * target is then that file. */
int rs_output_commit(rs_output *out, rs_error *err);
/* Removes the temporary file unless committed. Safe to call twice. */
void rs_output_abort(rs_output *out);
#define _cleanup_output_ __attribute__((cleanup(rs_output_abort)))

/* A sealed output kept for a later commit in a few bytes instead of its two
 * paths: for a batch that writes tens of thousands of files before it
 * renames any (attach-tree). Its temporary is found again from the
 * target's path. A kept temporary is not removed by a fatal signal: the
 * batch removes it when it stops. */
typedef struct rs_output_kept {
    char suffix[7];           /* the temporary's six random characters; "" once none is kept */
    mode_t mode;
} rs_output_kept;

/* Seals out and keeps its temporary as *kept; out is then empty. */
int rs_output_keep(rs_output *out, rs_output_kept *kept, rs_error *err);
/* Gives the temporary kept for path its mode, on a descriptor opened
 * refusing a link, and renames it onto path by name: for a tree of the
 * caller's own, which no one else can write. */
int rs_output_commit_kept(const char *path, rs_output_kept *kept, rs_error *err);
/* Removes the temporary kept for path, if any. */
void rs_output_abort_kept(const char *path, rs_output_kept *kept);

/* Where an output must go to replace, in place, the file open on fd (opened
 * as path): path with its symlinks resolved, so the file they lead to is
 * replaced and the links stay (as sbattach and sign-file write through
 * them); renamed over path itself, the new bytes would replace a link and
 * leave its file as it was. Fails if path no longer names that file. */
int rs_replace_path(const char *path, int fd, char **out, rs_error *err);

/* Removes a directory tree, if it exists; used on failure paths, so
 * errors are not reported. */
void rs_remove_tree(const char *dir);
/* Removes every empty directory of a tree, deepest first, the tree's top
 * too if it ends empty; files, and the directories holding them, stay. */
void rs_remove_empty_dirs(const char *dir);
/* Sets the process's umask, which new outputs follow too. Only before
 * any thread starts. */
void rs_umask_set(mode_t mask);

/* Opens a directory that others may be able to write (an upload queue),
 * refusing a symbolic link in its place: the descriptor every write into
 * it goes through (rs_output_open_at, renames within it). */
int rs_dir_open_nofollow(const char *path, int *fd, rs_error *err);

/* Fails, naming it, when a user other than this process's and root could
 * replace what is written in the directory path (which, missing, passes):
 * it or a directory above it (resolved) is theirs, or writable by others
 * (a sticky one above it excepted, where no one replaces another's
 * entries). For directories that must not be shared (the service's
 * output and log): there, writing by name is then safe. */
int rs_dir_check_unshared(const char *path, rs_error *err);

/* Makes the directory path (which must not exist) with exactly mode,
 * whatever the umask, set through a descriptor of it. */
int rs_mkdir_exact(const char *path, mode_t mode, rs_error *err);

/* Creates every missing parent directory of path (not path itself). */
int rs_mkdir_parents(const char *path, rs_error *err);
/* The same, telling in *made the length of path's prefix that names the
 * shallowest directory made (0: none was), also when it fails part-way:
 * what a failed command must remove to leave nothing behind. */
int rs_mkdir_parents_made(const char *path, size_t *made, rs_error *err);
/* The same, each directory it makes given exactly mode, whatever the
 * umask: for a tree that is published on purpose (the log's tiles). */
int rs_mkdir_parents_mode(const char *path, mode_t mode, size_t *made, rs_error *err);

/* Writes a new file (refusing to replace one), creating its parent
 * directories as needed. Only for files inside a private work directory
 * that becomes visible as a whole, by one rename: there a temporary file
 * per file, and an fsync per file, would buy nothing. */
int rs_write_new_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err);

/* Flushes the file system holding path: one call in place of an fsync per
 * file, before a batch of renames makes many outputs visible. */
int rs_sync_filesystem(const char *path, rs_error *err);

/* Makes path (a file, or a directory's renames and new files) survive a
 * power cut. */
int rs_sync_path(const char *path, rs_error *err);

/* Takes an exclusive lock on path (created 0600 if missing), held while
 * *fd stays open and never longer than this process lives. On failure
 * *busy says whether another process holds it. The file must not be opened
 * a second time in this process: closing that descriptor drops the lock. */
int rs_lock_file(const char *path, int *fd, bool *busy, rs_error *err);

/* Opens rel, below the directory dir (named dir_name in errors), for
 * reading. A path that leaves dir (through "..", an absolute symlink or one
 * that climbs out) is refused; the error says which. */
int rs_open_beneath(int dir, const char *dir_name, const char *rel, int *fd, rs_error *err);
/* The same, refusing any symlink on the way: a path resolved earlier has
 * none, so one found now was put there since. */
int rs_open_beneath_no_symlinks(int dir, const char *dir_name, const char *rel, int *fd, rs_error *err);

typedef struct rs_beneath_opts {
    bool no_symlinks;   /* refuse any symlink on the way */
    /* Walk one component at a time, every directory opened O_NOFOLLOW below
     * the last, as without openat2 (Linux before 5.6, valgrind, or a
     * sandbox that filters it), which falls back to it; for tests. */
    bool walk;
} rs_beneath_opts;
int rs_open_beneath_with(int dir, const char *dir_name, const char *rel, const rs_beneath_opts *opts, int *fd,
                         rs_error *err);

/* a/b, newly allocated; NULL when out of memory. */
char *rs_path_join(const char *a, const char *b);
/* name ends with suffix after at least one other byte (".ko" itself is no
 * module). */
bool rs_name_has_suffix(const char *name, const char *suffix);

/* Write all of data to fd, resuming after signals and short writes; -1
 * with errno set. rs_pwrite_all writes at off and leaves the file
 * position alone. */
int rs_write_all(int fd, const void *data, size_t len);
int rs_pwrite_all(int fd, const void *data, size_t len, off_t off);
/* Reads len bytes at off, resuming after signals and short reads; the
 * bytes read (fewer than len only at the end of the file), or -1 with
 * errno set. */
ssize_t rs_pread_all(int fd, void *buf, size_t len, off_t off);
/* The same from the fd's position (a pipe, a terminal): up to len bytes,
 * fewer only at end of file; -1 with errno on an error. */
ssize_t rs_read_all(int fd, void *buf, size_t len);

/* Writes a whole buffer atomically. */
int rs_write_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err);
/* The same, the file given exactly mode whatever the umask: for a file
 * published for other users to read (the service's umask is 077). */
int rs_write_public_file(const char *path, const void *data, size_t len, mode_t mode, rs_error *err);
/* Copies a file to dst through a fixed buffer (never the whole file in
 * memory), synced, then renamed into place. The copy gets exactly mode,
 * whatever the umask: a copy that is published must stay readable. */
int rs_copy_file(const char *src, const char *dst, mode_t mode, rs_error *err);
/* The same into name in the directory open on dir (rs_output_open_at). */
int rs_copy_file_at(const char *src, int dir, const char *dir_name, const char *name, mode_t mode, rs_error *err);

/* Registers an output so a fatal signal removes its temporary file. */
void rs_output_track_signals(void);

#endif
