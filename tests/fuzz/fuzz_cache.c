/*
 * fuzz_cache.c — libFuzzer target: the kernel cache's reader (src/jit/jit_cache.c) and what reads
 * its entries' contents.  Byte 0 chooses: the rest is written as an entry file under a key (a
 * raw file, which must never load: only the library can tag an entry), or it is stored as a
 * payload by the library and must load back identical; a loaded payload is also parsed as a
 * calibration entry (src/dispatch/calibration.c), which must not crash whatever it holds.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch/calibration.h"
#include "fuzz_util.h"
#include "jit/jit_cache.h"
#include "jit/sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void cleanup(void) {
  int64_t removed = 0;
  (void)dual_jit_cache_clear(dir, &removed);
  (void)rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (dir[0] == '\0') {
    snprintf(dir, sizeof dir, "/tmp/dual_fuzz_cache_XXXXXX");
    FUZZ_CHECK(mkdtemp(dir) != NULL, "temporary directory");
    atexit(cleanup);
  }
  if (size < 1) return 0;
  uint8_t key[32];
  dual_sha256 s;
  dual_sha256_init(&s);
  dual_sha256_update(&s, data, 1);
  dual_sha256_final(&s, key);
  const uint8_t *body = data + 1;
  const size_t n = size - 1;
  void *image = NULL;
  size_t got = 0;
  const char *why = NULL;
  if (data[0] & 1) { /* a raw file under the entry's name */
    char hex[65], path[160];
    dual_sha256_hex(key, hex);
    snprintf(path, sizeof path, "%s/%s.cubin", dir, hex);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FUZZ_CHECK(fd >= 0, "cannot write %s", path);
    FUZZ_CHECK(dual_write_all(fd, body, n) == 0, "write");
    close(fd);
    const int st = dual_jit_cache_load(dir, key, &image, &got, &why);
    FUZZ_CHECK(st == -1 && image == NULL, "an entry the library did not tag loaded");
    FUZZ_CHECK(why != NULL && why[0] != '\0', "no reason");
  } else { /* stored by the library: loads back identical */
    if (n == 0) return 0;
    FUZZ_CHECK(dual_jit_cache_store(dir, key, body, n, &why) == 0, "store: %s", why);
    FUZZ_CHECK(dual_jit_cache_load(dir, key, &image, &got, &why) == 0, "load: %s", why);
    FUZZ_CHECK(got == n && memcmp(image, body, n) == 0, "the payload changed");
    dual_calibration c;
    memset(&c, 0, sizeof c);
    (void)dual_calibration_parse((const char *)image, got, &c);
    free(image);
  }
  return 0;
}
