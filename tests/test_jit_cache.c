/*
 * test_jit_cache.c — the compiled tier's keys and disk cache, on the CPU: SHA-256 against the
 * FIPS 180-4 known answers; key stability (same inputs, same key; any change, another key);
 * store and load round trips; corrupt, truncated and foreign entries rejected; a missing
 * directory created private, an unusable one reported; several processes storing and loading
 * one directory at once; usage and clear.  The cache as untrusted input (issue 22): HMAC-SHA-256
 * against RFC 4231; tampered, substituted, symlinked, hard-linked, shared-writable and FIFO
 * entries refused and rebuilt; directories others can write or that belong to another user
 * refused, also through the context.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_program.h"
#include "dualbatch.h"
#include "jit/jit_cache.h"
#include "jit/jit_cache_trust.h"
#include "jit/jit_key.h"
#include "jit/sha256.h"

static void hex_of(const void *data, size_t len, char hex[65]) {
  dual_sha256 s;
  uint8_t d[32];
  dual_sha256_init(&s);
  dual_sha256_update(&s, data, len);
  dual_sha256_final(&s, d);
  dual_sha256_hex(d, hex);
}

Test(jit_cache, sha256_known_answers) {
  char hex[65];
  hex_of("abc", 3, hex);
  cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  hex_of("", 0, hex);
  cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  hex_of(two, strlen(two), hex);
  cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  char *million = malloc(1000000);
  memset(million, 'a', 1000000);
  hex_of(million, 1000000, hex);
  cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  /* fed in odd pieces, the same digest */
  dual_sha256 s;
  uint8_t d[32];
  dual_sha256_init(&s);
  for (size_t off = 0; off < 1000000;) {
    size_t n = 1 + off % 127;
    if (off + n > 1000000) n = 1000000 - off;
    dual_sha256_update(&s, million + off, n);
    off += n;
  }
  dual_sha256_final(&s, d);
  char hex2[65];
  dual_sha256_hex(d, hex2);
  cr_assert_str_eq(hex2, hex);
  free(million);
}

Test(jit_cache, keys_are_stable_and_distinct) {
  uint8_t a[32], b[32];
  dual_jit_disk_key("kernel source", 90, 13000, a);
  dual_jit_disk_key("kernel source", 90, 13000, b);
  cr_assert(memcmp(a, b, 32) == 0, "same inputs, different disk keys");
  dual_jit_disk_key("kernel source ", 90, 13000, b);
  cr_assert(memcmp(a, b, 32) != 0, "the source is not in the key");
  dual_jit_disk_key("kernel source", 80, 13000, b);
  cr_assert(memcmp(a, b, 32) != 0, "the architecture is not in the key");
  dual_jit_disk_key("kernel source", 90, 12080, b);
  cr_assert(memcmp(a, b, 32) != 0, "the NVRTC version is not in the key");

  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *ba = bench_program(ctx, "ba"), *ba2 = bench_program(ctx, "ba");
  dual_program *kin = bench_program(ctx, "kin");
  dual_jit_memory_key(ba, DUAL_MODE_JACOBIAN, 16, 1, 0, 90, a);
  dual_jit_memory_key(ba2, DUAL_MODE_JACOBIAN, 16, 1, 0, 90, b);
  cr_assert(memcmp(a, b, 32) == 0, "two compiles of one program, different memory keys");
  const int shapes[4][3] = {{DUAL_MODE_JVP, 16, 1}, {DUAL_MODE_JACOBIAN, 8, 2}, {DUAL_MODE_JACOBIAN, 16, 1}, {0, 0, 0}};
  for (int i = 0; i < 3; ++i) {
    dual_jit_memory_key(i == 2 ? kin : ba, shapes[i][0], shapes[i][1], shapes[i][2], 0, 90, b);
    cr_assert(memcmp(a, b, 32) != 0, "shape %d shares ba's memory key", i);
  }
  dual_program_destroy(&ba);
  dual_program_destroy(&ba2);
  dual_program_destroy(&kin);
  dual_context_destroy(&ctx);
}

/* A fresh directory under /tmp (removed by the caller with rm_tree). */
static void temp_dir(char *buf, size_t cap) {
  snprintf(buf, cap, "/tmp/dual_jit_cache_XXXXXX");
  cr_assert(mkdtemp(buf) != NULL);
}

static void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
  cr_assert(system(cmd) == 0);
}

static void key_of(int i, uint8_t key[32]) {
  char text[32];
  snprintf(text, sizeof text, "entry %d", i);
  dual_jit_disk_key(text, 90, 13000, key);
}

static void entry_file(const char *dir, const uint8_t key[32], char *path, size_t cap) {
  char hex[65];
  dual_sha256_hex(key, hex);
  snprintf(path, cap, "%s/%s.cubin", dir, hex);
}

Test(jit_cache, round_trip_and_rejections) {
  char root[64], dir[128], path[512], other[512];
  temp_dir(root, sizeof root);
  snprintf(dir, sizeof dir, "%s/a/b/dualbatch", root); /* missing: created on the first store */
  uint8_t k1[32], k2[32];
  key_of(1, k1), key_of(2, k2);
  unsigned char payload[3000];
  for (int i = 0; i < 3000; ++i) payload[i] = (unsigned char)(i * 7 + 3);
  void *img = NULL;
  size_t size = 0;
  const char *why = NULL;
  cr_assert_eq(dual_jit_cache_load(dir, k1, &img, &size, &why), -1);
  cr_assert_eq(dual_jit_cache_store(dir, k1, payload, sizeof payload, &why), 0, "%s", why);
  struct stat sb;
  cr_assert(stat(dir, &sb) == 0 && (sb.st_mode & 0777) == 0700, "cache directory not private");
  cr_assert_eq(dual_jit_cache_load(dir, k1, &img, &size, &why), 0, "%s", why);
  cr_assert(size == sizeof payload && memcmp(img, payload, size) == 0);
  free(img);
  int64_t entries = 0, bytes = 0;
  cr_assert_eq(dual_jit_cache_usage(dir, &entries, &bytes), 0);
  cr_assert(entries == 1 && bytes == (int64_t)sizeof payload + 80);

  /* foreign: k1's file under k2's name */
  entry_file(dir, k1, path, sizeof path);
  entry_file(dir, k2, other, sizeof other);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, other);
  cr_assert(system(cmd) == 0);
  cr_assert_eq(dual_jit_cache_load(dir, k2, &img, &size, &why), -1, "a foreign entry loaded");
  cr_assert(strstr(why, "another key") != NULL, "%s", why);
  /* the next store replaces it */
  cr_assert_eq(dual_jit_cache_store(dir, k2, payload, 100, &why), 0);
  cr_assert_eq(dual_jit_cache_load(dir, k2, &img, &size, &why), 0, "%s", why);
  cr_assert(size == 100 && memcmp(img, payload, 100) == 0);
  free(img);

  /* corrupt: one payload byte flipped */
  int fd = open(path, O_RDWR);
  cr_assert(fd >= 0);
  unsigned char byte;
  cr_assert(pread(fd, &byte, 1, 80 + 1234) == 1);
  byte ^= 0x10;
  cr_assert(pwrite(fd, &byte, 1, 80 + 1234) == 1);
  close(fd);
  cr_assert_eq(dual_jit_cache_load(dir, k1, &img, &size, &why), -1, "a corrupt entry loaded");
  cr_assert(strstr(why, "tag mismatch") != NULL, "%s", why);
  /* truncated: payload cut, and header cut */
  cr_assert_eq(dual_jit_cache_store(dir, k1, payload, sizeof payload, &why), 0);
  cr_assert(truncate(path, 80 + 2999) == 0);
  cr_assert_eq(dual_jit_cache_load(dir, k1, &img, &size, &why), -1, "a truncated entry loaded");
  cr_assert(strstr(why, "size") != NULL, "%s", why);
  cr_assert(truncate(path, 30) == 0);
  cr_assert_eq(dual_jit_cache_load(dir, k1, &img, &size, &why), -1);
  cr_assert(truncate(path, 0) == 0);
  cr_assert_eq(dual_jit_cache_load(dir, k1, &img, &size, &why), -1);

  /* clear removes entries (and stray temporary files), nothing else */
  snprintf(cmd, sizeof cmd, "touch '%s/notes.txt' '%s.tmp.AbC123'", dir, other);
  cr_assert(system(cmd) == 0);
  int64_t removed = 0;
  cr_assert_eq(dual_jit_cache_clear(dir, &removed), 0);
  cr_assert_eq(removed, 3);
  cr_assert_eq(dual_jit_cache_usage(dir, &entries, &bytes), 0);
  cr_assert(entries == 0 && bytes == 0);
  snprintf(path, sizeof path, "%s/notes.txt", dir);
  cr_assert(access(path, F_OK) == 0, "clear removed a file that is not an entry");
  rm_tree(root);
}

Test(jit_cache, unusable_directory) {
  char root[64], dir[128];
  temp_dir(root, sizeof root);
  uint8_t k[32];
  key_of(3, k);
  const char *why = NULL;
  /* a parent that is a regular file: the directory cannot exist */
  snprintf(dir, sizeof dir, "%s/file", root);
  FILE *fp = fopen(dir, "w");
  cr_assert(fp != NULL);
  fclose(fp);
  snprintf(dir, sizeof dir, "%s/file/dualbatch", root);
  cr_assert_eq(dual_jit_cache_store(dir, k, "x", 1, &why), -1);
  cr_assert(why != NULL && strstr(why, "directory") != NULL, "%s", why ? why : "");
  void *img = NULL;
  size_t size = 0;
  cr_assert_eq(dual_jit_cache_load(dir, k, &img, &size, &why), -1);
  int64_t entries = 0, bytes = 0;
  cr_assert_eq(dual_jit_cache_usage(dir, &entries, &bytes), -1);
  /* a read-only directory (root writes anyway: then only the round trip is checked) */
  snprintf(dir, sizeof dir, "%s/ro", root);
  cr_assert(mkdir(dir, 0500) == 0);
  int st = dual_jit_cache_store(dir, k, "x", 1, &why);
  if (geteuid() != 0) {
    cr_assert_eq(st, -1, "stored into a read-only directory");
    cr_assert(strstr(why, "read-only") != NULL, "%s", why);
  } else {
    cr_assert_eq(st, 0);
  }
  rm_tree(root);
}

/* Four processes store the same two entries and load them in a loop: every load that succeeds
 * returns the exact payload, and afterwards both entries are whole and no temporary file is
 * left behind. */
Test(jit_cache, concurrent_processes) {
  char dir[64];
  temp_dir(dir, sizeof dir);
  uint8_t keys[2][32];
  key_of(10, keys[0]), key_of(11, keys[1]);
  static unsigned char payload[2][200000];
  for (int e = 0; e < 2; ++e)
    for (int i = 0; i < 200000; ++i) payload[e][i] = (unsigned char)(i * (e + 3) + e);
  pid_t kids[4];
  for (int c = 0; c < 4; ++c) {
    kids[c] = fork();
    cr_assert(kids[c] >= 0);
    if (kids[c] == 0) {
      int bad = 0;
      for (int it = 0; it < 40; ++it) {
        const int e = (it + c) % 2;
        if (dual_jit_cache_store(dir, keys[e], payload[e], sizeof payload[e], NULL) != 0) bad |= 1;
        void *img = NULL;
        size_t size = 0;
        if (dual_jit_cache_load(dir, keys[1 - e], &img, &size, NULL) == 0 &&
            (size != sizeof payload[1 - e] || memcmp(img, payload[1 - e], size) != 0))
          bad |= 2;
        free(img);
      }
      _exit(bad);
    }
  }
  for (int c = 0; c < 4; ++c) {
    int status = 0;
    cr_assert(waitpid(kids[c], &status, 0) == kids[c]);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d saw a bad entry (%d)", c,
              WEXITSTATUS(status));
  }
  for (int e = 0; e < 2; ++e) {
    void *img = NULL;
    size_t size = 0;
    cr_assert_eq(dual_jit_cache_load(dir, keys[e], &img, &size, NULL), 0);
    cr_assert(size == sizeof payload[e] && memcmp(img, payload[e], size) == 0);
    free(img);
  }
  char cmd[200];
  snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -eq 2", dir);
  cr_assert(system(cmd) == 0, "temporary files left in the cache directory");
  rm_tree(dir);
}

Test(jit_cache, directory_resolution) {
  char buf[512];
  cr_assert_eq(dual_jit_cache_dir("/opt/x", buf, sizeof buf), 0);
  cr_assert_str_eq(buf, "/opt/x");
  setenv("DUALBATCH_CACHE_DIR", "/var/tmp/dbc", 1);
  cr_assert_eq(dual_jit_cache_dir(NULL, buf, sizeof buf), 0);
  cr_assert_str_eq(buf, "/var/tmp/dbc");
  unsetenv("DUALBATCH_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/home/u/.xdg", 1);
  cr_assert_eq(dual_jit_cache_dir("", buf, sizeof buf), 0);
  cr_assert_str_eq(buf, "/home/u/.xdg/dualbatch");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  cr_assert_eq(dual_jit_cache_dir(NULL, buf, sizeof buf), 0);
  cr_assert_str_eq(buf, "/home/u/.cache/dualbatch");
  unsetenv("HOME");
  cr_assert_eq(dual_jit_cache_dir(NULL, buf, sizeof buf), -1);
  cr_assert_eq(dual_jit_cache_dir("/a", buf, 2), -1, "a name that does not fit");
}

/* ---- the cache as untrusted input (issue 22) --------------------------------------------------- */

static void unhex(const char *hex, uint8_t *out) {
  for (size_t i = 0; hex[2 * i]; ++i) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = (uint8_t)v;
  }
}

/* RFC 4231 test cases 3 and 4 (keys shorter than the block are zero-padded, so a 20- or 25-byte
 * key equals our 32-byte secret with zeros after it; the data is our 32-byte key + payload). */
Test(jit_cache, entry_tags_are_hmac_sha256) {
  uint8_t secret[32] = {0}, data[50], tag[32], want[32];
  for (int i = 0; i < 20; ++i) secret[i] = 0xaa;
  memset(data, 0xdd, sizeof data);
  dual_cache_tag(secret, data, data + 32, 18, tag);
  unhex("773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", want);
  cr_assert(memcmp(tag, want, 32) == 0, "RFC 4231 case 3");
  memset(secret, 0, sizeof secret);
  for (int i = 0; i < 25; ++i) secret[i] = (uint8_t)(i + 1);
  memset(data, 0xcd, sizeof data);
  dual_cache_tag(secret, data, data + 32, 18, tag);
  unhex("82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", want);
  cr_assert(memcmp(tag, want, 32) == 0, "RFC 4231 case 4");
}

/* Load k: -1 (and the reason) or 0 with the payload compared against want. */
static int load_check(const char *dir, const uint8_t k[32], const void *want, size_t n, const char **why) {
  void *img = NULL;
  size_t size = 0;
  const int st = dual_jit_cache_load(dir, k, &img, &size, why);
  if (st == 0) cr_assert(size == n && memcmp(img, want, n) == 0, "a loaded entry differs");
  free(img);
  return st;
}

static void run(const char *fmt, const char *a, const char *b) {
  char cmd[1400];
  snprintf(cmd, sizeof cmd, fmt, a, b);
  cr_assert(system(cmd) == 0, "%s", cmd);
}

Test(jit_cache, untrusted_entries_are_rebuilt_never_loaded) {
  char root[64], dir[128], dir2[128], path[512], aside[512], path2[512], secret[512];
  temp_dir(root, sizeof root);
  snprintf(dir, sizeof dir, "%s/c", root);
  snprintf(dir2, sizeof dir2, "%s/other", root);
  uint8_t k1[32];
  key_of(21, k1);
  entry_file(dir, k1, path, sizeof path);
  entry_file(dir2, k1, path2, sizeof path2);
  snprintf(aside, sizeof aside, "%s/aside", dir);
  snprintf(secret, sizeof secret, "%s/.secret", dir);
  unsigned char good[2000], evil[2000];
  for (int i = 0; i < 2000; ++i) good[i] = (unsigned char)(i * 5 + 1), evil[i] = (unsigned char)(i * 3);
  const char *why = NULL;
  cr_assert_eq(dual_jit_cache_store(dir, k1, good, sizeof good, &why), 0, "%s", why);
  struct stat sb;
  cr_assert(stat(secret, &sb) == 0 && (sb.st_mode & 0777) == 0600 && sb.st_size == 32, "secret");
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), 0, "%s", why);

  /* tampered by someone who knows the format but not the secret: the payload replaced and its
   * plain SHA-256 written where the tag goes (what the old format checked) */
  int fd = open(path, O_RDWR);
  cr_assert(fd >= 0);
  cr_assert(pwrite(fd, evil, sizeof evil, 80) == (ssize_t)sizeof evil);
  dual_sha256 s;
  uint8_t digest[32];
  dual_sha256_init(&s);
  dual_sha256_update(&s, evil, sizeof evil);
  dual_sha256_final(&s, digest);
  cr_assert(pwrite(fd, digest, 32, 48) == 32);
  close(fd);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1, "a tampered entry loaded");
  cr_assert(strstr(why, "tag mismatch") != NULL, "%s", why);
  cr_assert_eq(dual_jit_cache_store(dir, k1, good, sizeof good, &why), 0, "%s", why); /* rebuilt */
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), 0, "%s", why);

  /* substituted: a well-formed entry of the same key from another cache (another secret) */
  cr_assert_eq(dual_jit_cache_store(dir2, k1, evil, sizeof evil, &why), 0, "%s", why);
  cr_assert_eq(load_check(dir2, k1, evil, sizeof evil, &why), 0, "%s", why);
  run("cp '%s' '%s'", path2, path);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1, "a substituted entry loaded");
  cr_assert(strstr(why, "tag mismatch") != NULL, "%s", why);

  /* symlinked: the valid entry moved aside and a link put in its place */
  cr_assert_eq(dual_jit_cache_store(dir, k1, good, sizeof good, &why), 0, "%s", why);
  cr_assert(rename(path, aside) == 0 && symlink(aside, path) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1, "a symlinked entry loaded");
  cr_assert(strstr(why, "symbolic link") != NULL, "%s", why);
  cr_assert_eq(dual_jit_cache_store(dir, k1, good, sizeof good, &why), 0, "%s", why);
  cr_assert(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode), "the store did not replace the link");
  cr_assert(lstat(aside, &sb) == 0 && S_ISREG(sb.st_mode), "the store wrote through the link");
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), 0, "%s", why);

  /* hard-linked: a second name someone else may hold */
  cr_assert(unlink(aside) == 0 && link(path, aside) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1, "a hard-linked entry loaded");
  cr_assert(strstr(why, "hard links") != NULL, "%s", why);
  cr_assert(unlink(aside) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), 0, "%s", why);

  /* writable by others */
  cr_assert(chmod(path, 0666) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1, "a shared-writable entry loaded");
  cr_assert(strstr(why, "other users") != NULL, "%s", why);
  cr_assert(chmod(path, 0600) == 0);

  /* a FIFO under the entry's name: refused at once, never waited on */
  cr_assert(unlink(path) == 0 && mkfifo(path, 0600) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1);
  cr_assert(strstr(why, "not a regular file") != NULL, "%s", why);
  cr_assert(unlink(path) == 0);

  /* a secret others can read: nothing verifies, nothing is stored */
  cr_assert_eq(dual_jit_cache_store(dir, k1, good, sizeof good, &why), 0, "%s", why);
  cr_assert(chmod(secret, 0644) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1, "loaded under an exposed secret");
  cr_assert_eq(dual_jit_cache_store(dir, k1, good, sizeof good, &why), -1);
  cr_assert(chmod(secret, 0600) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), 0, "%s", why);
  /* no secret (removed): entries cannot verify; the next store makes a new one */
  cr_assert(unlink(secret) == 0);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), -1);
  cr_assert_eq(dual_jit_cache_store(dir, k1, good, sizeof good, &why), 0, "%s", why);
  cr_assert_eq(load_check(dir, k1, good, sizeof good, &why), 0, "%s", why);
  rm_tree(root);
}

Test(jit_cache, directories_others_control_are_not_used) {
  char root[64], dir[256], sub[256];
  temp_dir(root, sizeof root);
  uint8_t k[32];
  key_of(22, k);
  const unsigned char payload[64] = {1, 2, 3};
  const char *why = NULL;

  /* writable by others: neither read nor written */
  snprintf(dir, sizeof dir, "%s/ww", root);
  cr_assert_eq(dual_jit_cache_store(dir, k, payload, sizeof payload, &why), 0, "%s", why);
  cr_assert(chmod(dir, 0777) == 0);
  cr_assert_eq(load_check(dir, k, payload, sizeof payload, &why), -1, "loaded from a world-writable directory");
  cr_assert(strstr(why, "writable by other users") != NULL, "%s", why);
  cr_assert_eq(dual_jit_cache_store(dir, k, payload, sizeof payload, &why), -1);
  cr_assert(chmod(dir, 0770) == 0);
  cr_assert_eq(load_check(dir, k, payload, sizeof payload, &why), -1, "loaded from a group-writable directory");
  cr_assert(chmod(dir, 0700) == 0);
  cr_assert_eq(load_check(dir, k, payload, sizeof payload, &why), 0, "%s", why);

  /* through the context: the usage call says why, an evaluation's note too */
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  cr_assert_eq(dual_context_set_cache_dir(ctx, dir), 0);
  int64_t entries = 0;
  cr_assert_eq(dual_context_cache_usage(ctx, NULL, 0, &entries, NULL), 0, "%s", dual_context_last_error(ctx));
  cr_assert_eq(entries, 1);
  cr_assert(chmod(dir, 0777) == 0);
  cr_assert_eq(dual_context_cache_usage(ctx, NULL, 0, &entries, NULL), DUAL_ERR_IO);
  cr_assert(strstr(dual_context_last_error(ctx), "is not used: the cache directory is writable by other users") != NULL,
            "%s", dual_context_last_error(ctx));
  dual_context_destroy(&ctx);
  cr_assert(chmod(dir, 0700) == 0);

  /* a directory above it that others can write (not sticky): refused; a sticky one is /tmp's case */
  snprintf(sub, sizeof sub, "%s/shared", root);
  cr_assert(mkdir(sub, 0777) == 0 && chmod(sub, 0777) == 0);
  snprintf(dir, sizeof dir, "%s/shared/c", root);
  cr_assert_eq(dual_jit_cache_store(dir, k, payload, sizeof payload, &why), -1, "stored under a shared parent");
  cr_assert(strstr(why, "above the cache directory") != NULL, "%s", why);
  cr_assert(chmod(sub, 01777) == 0);
  cr_assert_eq(dual_jit_cache_store(dir, k, payload, sizeof payload, &why), 0, "%s", why);
  cr_assert_eq(load_check(dir, k, payload, sizeof payload, &why), 0, "%s", why);

  /* another user's directory (and entry): as root, give them away; otherwise "/" is root's */
  if (geteuid() == 0) {
    char path[512];
    entry_file(dir, k, path, sizeof path);
    cr_assert(chown(path, 65534, 65534) == 0);
    cr_assert_eq(load_check(dir, k, payload, sizeof payload, &why), -1, "loaded another user's entry");
    cr_assert(strstr(why, "belongs to another user") != NULL, "%s", why);
    cr_assert(chown(path, 0, 0) == 0);
    cr_assert_eq(load_check(dir, k, payload, sizeof payload, &why), 0, "%s", why);
    cr_assert(chown(dir, 65534, 65534) == 0);
    cr_assert_eq(load_check(dir, k, payload, sizeof payload, &why), -1, "loaded from another user's directory");
    cr_assert(strstr(why, "belongs to another user") != NULL, "%s", why);
    cr_assert_eq(dual_jit_cache_store(dir, k, payload, sizeof payload, &why), -1);
  } else {
    cr_assert_eq(load_check("/", k, payload, sizeof payload, &why), -1);
    cr_assert(strstr(why, "belongs to another user") != NULL, "%s", why);
  }
  rm_tree(root);
}
