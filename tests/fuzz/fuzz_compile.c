/*
 * fuzz_compile.c — libFuzzer target: the text compiler.  The input is program text; a compile
 * must succeed with a program or fail with SYNTAX, LIMIT or NO_MEMORY, a message and no program.
 * A program that compiles is evaluated with every product on hostile points cut from the text's
 * own bytes (small programs only: fuzz_util.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dual_context *ctx;
  if (ctx == NULL) ctx = fuzz_context(DUAL_TIER_INTERPRET);
  char *text = malloc(size + 1);
  if (text == NULL) return 0;
  memcpy(text, data, size);
  text[size] = '\0'; /* the API takes a C string: an embedded NUL ends it */
  dual_program *prog = (dual_program *)&prog;
  const int st = dual_program_compile(ctx, text, "fuzz", &prog);
  free(text);
  if (st != DUAL_SUCCESS) {
    FUZZ_CHECK(prog == NULL, "a failed compile left a program");
    FUZZ_CHECK(st == DUAL_ERR_SYNTAX || st == DUAL_ERR_LIMIT || st == DUAL_ERR_NO_MEMORY,
               "status %d: %s", st, dual_context_last_error(ctx));
    FUZZ_CHECK(dual_context_last_error(ctx)[0] != '\0', "no message");
    return 0;
  }
  FUZZ_CHECK(prog != NULL, "success without a program");
  fuzz_bytes b = {data, size, 0};
  fuzz_every_product(ctx, prog, &b);
  dual_program_destroy(&prog);
  return 0;
}
