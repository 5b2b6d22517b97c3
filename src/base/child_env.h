/* What a child process (dpkg-source, gpgv) is given of the environment:
 * only what it needs to run reproducibly, never the caller's secrets (a
 * token PIN in REPROSIGN_PKCS11_PIN, KBUILD_SIGN_PIN) or anything else a
 * key-holding process happens to carry. */
#ifndef RS_CHILD_ENV_H
#define RS_CHILD_ENV_H

/* A NULL-terminated environment for posix_spawn: PATH, TMPDIR, HOME
 * (an upload_command's configuration), SOURCE_DATE_EPOCH when set, and
 * LC_ALL=C.UTF-8. Built on first use;
 * call once before starting threads. */
char *const *rs_child_environ(void);

/* Keeps a process holding a key out of core dumps and away from other
 * users' /proc readers: not dumpable, no core file. */
void rs_protect_key_memory(void);

#endif
