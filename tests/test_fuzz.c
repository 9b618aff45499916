/*
 * test_fuzz.c — the language front end under hostile input: random bytes, random sequences of
 * valid tokens, and random mutations of the real benchmark programs.  Every input must give
 * either a program or a clean error (never a crash, hang or leak: CI runs this under ASan/UBSan),
 * and whatever compiles must validate, evaluate and round-trip through save/load.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"

static uint64_t state = 2024;
static uint64_t rnd(void) {
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return state;
}

static dual_context *ctx;
static void setup(void) { cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0); }
static void teardown(void) { dual_context_destroy(&ctx); }
TestSuite(fuzz, .init = setup, .fini = teardown);

static int compiled, failed;

/* Compile; a success must be a usable program, a failure a clean syntax/limit error. */
static void try_source(const char *src) {
  dual_program *p = NULL;
  int st = dual_program_compile(ctx, src, "fuzz", &p);
  if (st != DUAL_SUCCESS) {
    cr_assert(st == DUAL_ERR_SYNTAX || st == DUAL_ERR_LIMIT, "status %d for:\n%s", st, src);
    cr_assert_null(p);
    cr_assert_gt(strlen(dual_context_last_error(ctx)), 0);
    failed++;
    return;
  }
  compiled++;
  int32_t n = dual_program_num_inputs(p), np = dual_program_num_params(p), m = dual_program_num_outputs(p);
  if (n <= 64 && np <= 64 && m <= 64) {
    double x[64], par[64], y[64], J[64 * 64];
    for (int i = 0; i < 64; ++i) x[i] = 0.3 + 0.01 * i, par[i] = 0.7;
    cr_assert_eq(dual_jacobian(ctx, p, 1, x, 64, par, 64, y, 64, J, 64 * 64, NULL), 0);
  }
  int64_t size = 0;
  cr_assert_eq(dual_program_save(ctx, p, NULL, 0, &size), 0);
  void *buf = malloc((size_t)size);
  cr_assert_eq(dual_program_save(ctx, p, buf, size, &size), 0);
  dual_program *q = NULL;
  cr_assert_eq(dual_program_load(ctx, buf, size, &q), 0, "%s", dual_context_last_error(ctx));
  dual_program_destroy(&q);
  free(buf);
  dual_program_destroy(&p);
}

Test(fuzz, random_bytes) {
  char src[512];
  for (int trial = 0; trial < 3000; ++trial) {
    int n = (int)(rnd() % 500);
    for (int i = 0; i < n; ++i) {
      unsigned char c = (unsigned char)rnd();
      src[i] = (char)(c == 0 ? '\n' : c);
    }
    src[n] = '\0';
    try_source(src);
  }
  cr_assert_gt(failed, 2900);
}

static const char *tokens[] = {
    "input", "param", "const", "let", "output", "for", "in", "sum", "prod", "x", "y", "z", "f",
    "i", "[", "]", "(", ")", "{", "}", "..", ",", ";", "\n", "=", "+=", "-=", "*=", "/=", "+",
    "-", "*", "/", "^", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "!", "?", ":", "0", "1",
    "2", "3", "16", "0.5", "1e308", "1e-300", "1e999", "sin", "exp", "log", "atan2", "fma", "select",
    "sqrt", "min", "hypot", "#", "x[0]", "x[1]", "input x[3]\n", "output f = ", "let y = ",
    "for i in 0..3 {", "}\n", "sum(i in 0..3, x[i])", "999999999999999999999", "-2147483648"};

Test(fuzz, random_token_sequences) {
  enum { NTOK = sizeof tokens / sizeof *tokens };
  char src[4096];
  for (int trial = 0; trial < 6000; ++trial) {
    size_t len = 0;
    int count = 1 + (int)(rnd() % 60);
    if (trial % 2 == 0) len += (size_t)snprintf(src, sizeof src, "input x[3]\noutput f = ");
    for (int k = 0; k < count && len + 64 < sizeof src; ++k) {
      const char *t = tokens[rnd() % NTOK];
      len += (size_t)snprintf(src + len, sizeof src - len, "%s ", t);
    }
    src[len] = '\0';
    try_source(src);
  }
  cr_assert_gt(failed, 0);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

Test(fuzz, mutated_benchmark_programs) {
  const char *files[] = {DUAL_SOURCE_DIR "/bench/programs/ba.db", DUAL_SOURCE_DIR "/bench/programs/kin.db",
                         DUAL_SOURCE_DIR "/bench/programs/hess.db"};
  const char *swaps = "+-*/^()[]{}=<>!?:,;.0123456789xyzeE_ \n#";
  for (int f = 0; f < 3; ++f) {
    char *orig = slurp(files[f]);
    size_t n = strlen(orig);
    int failed_before = failed;
    try_source(orig);
    cr_assert_eq(failed, failed_before, "the unmutated program must compile: %s", dual_context_last_error(ctx));
    char *src = malloc(n + 64);
    for (int trial = 0; trial < 700; ++trial) {
      memcpy(src, orig, n + 1);
      int edits = 1 + (int)(rnd() % 4);
      for (int e = 0; e < edits; ++e) {
        size_t at = rnd() % n, len = strlen(src);
        switch (rnd() % 3) {
        case 0: src[at % len] = swaps[rnd() % strlen(swaps)]; break;          /* replace */
        case 1: memmove(src + at % len, src + at % len + 1, len - at % len); break; /* delete */
        default: /* duplicate a character */
          if (len + 2 < n + 64) {
            memmove(src + at % len + 1, src + at % len, len - at % len + 1);
          }
        }
      }
      try_source(src);
    }
    free(src);
    free(orig);
  }
  cr_assert_gt(compiled, 50);
  cr_assert_gt(failed, 500);
}

Test(fuzz, pathological_sizes_are_limits_not_crashes) {
  /* deep nesting */
  static char deep[200000];
  size_t k = (size_t)snprintf(deep, sizeof deep, "input x\noutput f = ");
  for (int i = 0; i < 50000; ++i) deep[k++] = '(';
  deep[k++] = 'x';
  for (int i = 0; i < 50000; ++i) deep[k++] = ')';
  deep[k] = '\0';
  dual_program *p = NULL;
  int st = dual_program_compile(ctx, deep, "deep", &p);
  cr_assert(st == DUAL_ERR_SYNTAX || st == DUAL_ERR_LIMIT, "deep nesting: status %d", st);
  /* huge unrolled loop */
  st = dual_program_compile(ctx, "input x\noutput f\nf = 0\nfor i in 0..1000000000 { f += sin(x*i) }\n", "big", &p);
  cr_assert(st == DUAL_ERR_SYNTAX || st == DUAL_ERR_LIMIT, "huge loop: status %d", st);
  cr_assert_null(p);
  /* huge vector */
  st = dual_program_compile(ctx, "input x[2000000000]\noutput f = x[0]\n", "vec", &p);
  cr_assert(st == DUAL_ERR_SYNTAX || st == DUAL_ERR_LIMIT, "huge vector: status %d", st);
}
