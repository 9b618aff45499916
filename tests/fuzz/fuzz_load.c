/*
 * fuzz_load.c — libFuzzer target: the program loader.  The input is a program file; unless it
 * starts with the format's first magic byte the target writes the magic and version itself, and
 * it always recomputes the payload checksum, so mutations reach the length checks and the
 * validator instead of stopping at the checksum.  A load fails with FORMAT or INVALID_PROGRAM
 * and no program, or gives a program that is then evaluated with every product.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { HEADER = 52, CHECKSUM_AT = 44 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dual_context *ctx;
  if (ctx == NULL) ctx = fuzz_context(DUAL_TIER_INTERPRET);
  uint8_t *buf = malloc(size > 0 ? size : 1);
  if (buf == NULL) return 0;
  memcpy(buf, data, size);
  if (size >= HEADER) {
    if (buf[0] != 'D') {
      memcpy(buf, "DUALBC\0\x1a", 8);
      buf[8] = 1, buf[9] = buf[10] = buf[11] = 0;
    }
    uint64_t h = 14695981039346656037ull; /* FNV-1a 64 of the payload (serialize.c) */
    for (size_t i = HEADER; i < size; ++i) h = (h ^ buf[i]) * 1099511628211ull;
    for (int i = 0; i < 8; ++i) buf[CHECKSUM_AT + i] = (uint8_t)(h >> (8 * i));
  }
  dual_program *prog = (dual_program *)&prog;
  const int st = dual_program_load(ctx, buf, (int64_t)size, &prog);
  free(buf);
  if (st != DUAL_SUCCESS) {
    FUZZ_CHECK(prog == NULL, "a failed load left a program");
    FUZZ_CHECK(st == DUAL_ERR_FORMAT || st == DUAL_ERR_INVALID_PROGRAM || st == DUAL_ERR_NO_MEMORY,
               "status %d: %s", st, dual_context_last_error(ctx));
    return 0;
  }
  FUZZ_CHECK(prog != NULL, "success without a program");
  fuzz_bytes b = {data, size, size > 64 ? size - 64 : 0}; /* points from the file's tail */
  fuzz_every_product(ctx, prog, &b);
  dual_program_destroy(&prog);
  return 0;
}
