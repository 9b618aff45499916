/*
 * jit_cache.c — the disk cache of jit_cache.h.  Entry format: the 8-byte magic "DBJITC2\n", the
 * 32-byte key, the payload size (8 bytes, little-endian), the tag (HMAC-SHA-256 of key and
 * payload under the directory's secret, jit_cache_trust.h; 32 bytes), the payload.  Nothing is
 * read from or written to a directory that fails the trust checks.  POSIX file calls (mkdir,
 * mkstemp, rename, opendir).
 */
#define _POSIX_C_SOURCE 200809L
#include "jit/jit_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit/jit_cache_trust.h"
#include "jit/sha256.h"

static const char MAGIC[8] = {'D', 'B', 'J', 'I', 'T', 'C', '2', '\n'};
enum { HEADER = 8 + 32 + 8 + 32, NAME_LEN = 64 + 6 /* hex + ".cubin" */ };
#define SUFFIX ".cubin"
#define TMP_MARK ".tmp."

int dual_jit_cache_dir(const char *configured, char *buf, size_t cap) {
  const char *env = getenv("DUALBATCH_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int n;
  if (configured != NULL && configured[0] != '\0') n = snprintf(buf, cap, "%s", configured);
  else if (env != NULL && env[0] != '\0') n = snprintf(buf, cap, "%s", env);
  else if (xdg != NULL && xdg[0] == '/') n = snprintf(buf, cap, "%s/dualbatch", xdg);
  else if (home != NULL && home[0] != '\0') n = snprintf(buf, cap, "%s/.cache/dualbatch", home);
  else return -1;
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int dual_jit_cache_dir_trusted(const char *configured, char *buf, size_t cap, const char **why) {
  if (why != NULL) *why = NULL;
  if (dual_jit_cache_dir(configured, buf, cap) != 0) return -1;
  return dual_cache_dir_trust(buf, why) < 0 ? -2 : 0;
}

static void entry_path(const char *dir, const uint8_t key[32], char *path, size_t cap) {
  char hex[65];
  dual_sha256_hex(key, hex);
  snprintf(path, cap, "%s/%s" SUFFIX, dir, hex);
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

int dual_jit_cache_load(const char *dir, const uint8_t key[32], void **image, size_t *size,
                        const char **why) {
  *image = NULL, *size = 0;
  char path[4096];
  uint8_t secret[32];
  const int trust = dual_cache_dir_trust(dir, why);
  if (trust != 0) {
    if (trust > 0) dual_cache_set_why(why, "no entry");
    return -1;
  }
  if (dual_cache_secret(dir, 0, secret, why) != 0) return -1;
  entry_path(dir, key, path, sizeof path);
  const int fd = dual_cache_open_entry(path, why);
  FILE *fp = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (fp == NULL) {
    if (fd >= 0) {
      close(fd);
      dual_cache_set_why(why, "the entry cannot be opened");
    }
    return -1;
  }
  uint8_t head[HEADER];
  struct stat sb;
  int ok = fstat(fileno(fp), &sb) == 0 && fread(head, 1, HEADER, fp) == HEADER;
  if (!ok) dual_cache_set_why(why, "entry shorter than its header");
  if (ok && (memcmp(head, MAGIC, 8) != 0 || memcmp(head + 8, key, 32) != 0)) {
    dual_cache_set_why(why, "entry of another key or format");
    ok = 0;
  }
  const uint64_t len = ok ? get_u64(head + 40) : 0;
  if (ok && (sb.st_size < HEADER || (uint64_t)sb.st_size - HEADER != len || len == 0)) {
    dual_cache_set_why(why, "entry size does not match its header (truncated?)");
    ok = 0;
  }
  uint8_t *data = ok ? (uint8_t *)malloc((size_t)len) : NULL;
  if (ok && (data == NULL || fread(data, 1, (size_t)len, fp) != (size_t)len)) {
    dual_cache_set_why(why, data == NULL ? "out of memory reading an entry" : "entry unreadable");
    ok = 0;
  }
  fclose(fp);
  if (ok) {
    uint8_t tag[32], diff = 0;
    dual_cache_tag(secret, key, data, (size_t)len, tag);
    for (int i = 0; i < 32; ++i) diff |= (uint8_t)(tag[i] ^ head[48 + i]);
    if (diff != 0) {
      dual_cache_set_why(why, "entry tag mismatch (corrupt, edited, or written by someone else)");
      ok = 0;
    }
  }
  if (!ok) {
    free(data);
    return -1;
  }
  *image = data, *size = (size_t)len;
  return 0;
}

/* mkdir -p, the last component private (0700); 0 if the directory exists afterwards. */
static int make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) return -1;
  for (char *p = path + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) ? 0 : -1;
}

int dual_write_all(int fd, const void *data, size_t len) {
  const uint8_t *p = (const uint8_t *)data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n, len -= (size_t)n;
  }
  return 0;
}

int dual_jit_cache_store(const char *dir, const uint8_t key[32], const void *image, size_t size,
                         const char **why) {
  uint8_t secret[32];
  if (make_dirs(dir) != 0) {
    dual_cache_set_why(why, "cannot create the cache directory");
    return -1;
  }
  if (dual_cache_dir_trust(dir, why) != 0 || dual_cache_secret(dir, 1, secret, why) != 0) return -1;
  char path[4096], tmp[4096 + 32];
  entry_path(dir, key, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s" TMP_MARK "XXXXXX", path);
  int fd = mkstemp(tmp); /* 0600, unique: concurrent writers never share a temporary file */
  if (fd < 0) {
    dual_cache_set_why(why, "cannot create a file in the cache directory (read-only?)");
    return -1;
  }
  uint8_t head[HEADER];
  memcpy(head, MAGIC, 8);
  memcpy(head + 8, key, 32);
  put_u64(head + 40, (uint64_t)size);
  dual_cache_tag(secret, key, image, size, head + 48);
  int ok = dual_write_all(fd, head, HEADER) == 0 && dual_write_all(fd, image, size) == 0;
  ok = close(fd) == 0 && ok;
  /* rename is atomic: readers see the old entry, none, or the whole new one */
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    dual_cache_set_why(why, ok ? "cannot rename the new entry into place" : "cannot write an entry (disk full?)");
    return -1;
  }
  return 0;
}

/* Whether a directory entry's name is one of ours: an entry, or a temporary file of one. */
static int is_entry(const char *name, int *temporary) {
  size_t len = strlen(name);
  *temporary = strstr(name, SUFFIX TMP_MARK) != NULL;
  if (strncmp(name, DUAL_CACHE_SECRET TMP_MARK, sizeof DUAL_CACHE_SECRET TMP_MARK - 1) == 0)
    return *temporary = 1; /* a secret's, interrupted */
  if (len < NAME_LEN) return 0;
  for (int i = 0; i < 64; ++i)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return 0;
  return *temporary || (len == NAME_LEN && strcmp(name + 64, SUFFIX) == 0);
}

/* Walk our files: count them and their bytes, removing them when `remove` is set. */
static int walk(const char *dir, int remove, int64_t *count, int64_t *bytes) {
  *count = 0;
  if (bytes) *bytes = 0;
  DIR *d = opendir(dir);
  if (d == NULL) return errno == ENOENT ? 0 : -1;
  int st = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    int temporary = 0;
    if (!is_entry(e->d_name, &temporary)) continue;
    char path[4096 + 256];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (remove) {
      if (unlink(path) != 0) st = -1;
      else ++*count;
    } else if (!temporary) {
      ++*count;
      *bytes += (int64_t)sb.st_size;
    }
  }
  closedir(d);
  return st;
}

int dual_jit_cache_usage(const char *dir, int64_t *entries, int64_t *bytes) {
  return walk(dir, 0, entries, bytes);
}

int dual_jit_cache_clear(const char *dir, int64_t *removed) {
  int64_t n = 0;
  int st = walk(dir, 1, &n, NULL);
  if (removed) *removed = n;
  /* the secret goes too (entries stored meanwhile under it then fail their check: rebuilt) */
  char path[4096 + 16];
  snprintf(path, sizeof path, "%s/" DUAL_CACHE_SECRET, dir);
  if (unlink(path) != 0 && errno != ENOENT) st = -1;
  return st;
}
