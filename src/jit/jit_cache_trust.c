/*
 * jit_cache_trust.c — the trust checks of jit_cache_trust.h: directory ownership and modes up to
 * the root, entries opened without following links (and without blocking on a FIFO), the
 * per-directory secret and the entries' HMAC-SHA-256 tags.  POSIX file calls.
 */
#define _XOPEN_SOURCE 700 /* realpath, S_ISVTX */
#include "jit/jit_cache_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit/jit_cache.h"
#include "jit/sha256.h"

/* Nobody but the owner may write it (a sticky directory lets others write only their own
 * names, which cannot replace ours). */
static int others_can_write(const struct stat *sb, int sticky_ok) {
  return (sb->st_mode & (S_IWGRP | S_IWOTH)) != 0 && !(sticky_ok && (sb->st_mode & S_ISVTX));
}

int dual_cache_dir_trust(const char *dir, const char **why) {
  char *real = realpath(dir, NULL);
  if (real == NULL) {
    if (errno == ENOENT) return 1;
    dual_cache_set_why(why, "the cache directory cannot be resolved");
    return -1;
  }
  const uid_t me = geteuid();
  struct stat sb;
  int st = 0;
  if (stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    dual_cache_set_why(why, "the cache directory is not a directory");
    st = -1;
  } else if (sb.st_uid != me) {
    dual_cache_set_why(why, "the cache directory belongs to another user");
    st = -1;
  } else if (others_can_write(&sb, 0)) {
    dual_cache_set_why(why, "the cache directory is writable by other users (it must be private: chmod 700)");
    st = -1;
  }
  /* every directory above it: whoever could write one could replace the cache directory */
  for (char *slash = strrchr(real, '/'); st == 0 && slash != NULL; slash = strrchr(real, '/')) {
    if (slash == real) slash[1] = '\0'; /* the root itself */
    else *slash = '\0';
    if (stat(real, &sb) != 0) {
      dual_cache_set_why(why, "a directory above the cache directory cannot be read");
      st = -1;
    } else if ((sb.st_uid != 0 && sb.st_uid != me) || others_can_write(&sb, 1)) {
      dual_cache_set_why(why, "a directory above the cache directory belongs to another user or is writable "
                   "by other users");
      st = -1;
    }
    if (slash == real) break;
  }
  free(real);
  return st;
}

/* Open a file of the cache for reading, refusing links, other owners and modes in `forbidden`. */
static int open_checked(const char *path, mode_t forbidden, const char **why) {
  /* O_NONBLOCK: a FIFO under an entry's name must not block the open */
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    dual_cache_set_why(why, errno == ENOENT ? "no entry"
                 : errno == ELOOP ? "the entry is a symbolic link"
                                  : "the entry cannot be opened");
    return -1;
  }
  struct stat sb;
  const char *bad = NULL;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) bad = "the entry is not a regular file";
  else if (sb.st_uid != geteuid()) bad = "the entry belongs to another user";
  else if ((sb.st_mode & forbidden) != 0) bad = "the entry is writable or readable by other users";
  else if (sb.st_nlink != 1) bad = "the entry has other hard links";
  if (bad != NULL) {
    close(fd);
    dual_cache_set_why(why, bad);
    return -1;
  }
  return fd;
}

int dual_cache_open_entry(const char *path, const char **why) {
  return open_checked(path, S_IWGRP | S_IWOTH, why);
}

static int read_exact(int fd, uint8_t *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, buf + got, len - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  return 0;
}

static int read_secret(const char *path, uint8_t secret[32], const char **why) {
  int fd = open_checked(path, S_IRWXG | S_IRWXO, why);
  if (fd < 0) return -1;
  uint8_t extra;
  int ok = read_exact(fd, secret, 32) == 0 && read(fd, &extra, 1) == 0;
  close(fd);
  if (!ok) dual_cache_set_why(why, "the cache's secret is not 32 bytes");
  return ok ? 0 : -1;
}

int dual_cache_secret(const char *dir, int create, uint8_t secret[32], const char **why) {
  char path[4096 + 16], tmp[4096 + 32];
  if (snprintf(path, sizeof path, "%s/" DUAL_CACHE_SECRET, dir) >= (int)sizeof path) {
    dual_cache_set_why(why, "the cache directory's name is too long");
    return -1;
  }
  const char *reason = NULL;
  if (read_secret(path, secret, &reason) == 0) return 0;
  if (!create || strcmp(reason, "no entry") != 0) {
    dual_cache_set_why(why, strcmp(reason, "no entry") == 0 ? "the cache has no secret yet" : reason);
    return -1;
  }
  uint8_t fresh[32];
  int rnd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  int ok = rnd >= 0 && read_exact(rnd, fresh, 32) == 0;
  if (rnd >= 0) close(rnd);
  if (!ok) {
    dual_cache_set_why(why, "no random bytes for the cache's secret (/dev/urandom)");
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp); /* 0600 */
  if (fd < 0) {
    dual_cache_set_why(why, "cannot create a file in the cache directory (read-only?)");
    return -1;
  }
  ok = dual_write_all(fd, fresh, 32) == 0;
  ok = close(fd) == 0 && ok;
  /* link fails if another process made the secret first: then everyone reads that one */
  if (ok && link(tmp, path) != 0 && errno != EEXIST) ok = 0;
  unlink(tmp);
  if (!ok) {
    dual_cache_set_why(why, "cannot write the cache's secret");
    return -1;
  }
  return read_secret(path, secret, why);
}

void dual_cache_tag(const uint8_t secret[32], const uint8_t key[32], const void *payload,
                    size_t size, uint8_t tag[32]) {
  uint8_t pad[64], inner[32];
  dual_sha256 s;
  for (int i = 0; i < 64; ++i) pad[i] = (uint8_t)((i < 32 ? secret[i] : 0) ^ 0x36);
  dual_sha256_init(&s);
  dual_sha256_update(&s, pad, 64);
  dual_sha256_update(&s, key, 32);
  dual_sha256_update(&s, payload, size);
  dual_sha256_final(&s, inner);
  for (int i = 0; i < 64; ++i) pad[i] = (uint8_t)((i < 32 ? secret[i] : 0) ^ 0x5c);
  dual_sha256_init(&s);
  dual_sha256_update(&s, pad, 64);
  dual_sha256_update(&s, inner, 32);
  dual_sha256_final(&s, tag);
}
