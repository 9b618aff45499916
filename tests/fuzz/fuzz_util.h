/*
 * fuzz_util.h — what the libFuzzer targets share: a CPU context made once, a check that stops
 * the run (a finding) with a message, hostile points cut from the input bytes, and "run every
 * product on these points" with the invariants a valid call must keep (success, known flags
 * only).  Header-only; each target includes it once.
 */
#ifndef DUAL_FUZZ_UTIL_H
#define DUAL_FUZZ_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"

/* A finding: print, then trap (libFuzzer saves the input that got here). */
#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "fuzz check failed: %s (%s:%d): ", #cond, __FILE__, __LINE__);               \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      __builtin_trap();                                                                            \
    }                                                                                              \
  } while (0)

/* Reads bytes off the input; zeros past its end. */
typedef struct fuzz_bytes {
  const uint8_t *p;
  size_t n, at;
} fuzz_bytes;

static inline uint8_t fuzz_u8(fuzz_bytes *b) { return b->at < b->n ? b->p[b->at++] : 0; }

/* A value that stresses the rules: signed zeros, tiny and huge magnitudes, subnormals, the
 * edges of exp and the trigonometric reductions, NaN and infinities, or a plain number. */
static inline double fuzz_value(fuzz_bytes *b) {
  static const double palette[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.141592653589793,
                                   1e-310, -1e-310, 1e-300, 1e300, -1e300, 1.7976931348623157e308,
                                   709.8, -745.2, 1e16, 1e22, 6.5e4, 1e-8, NAN, INFINITY, -INFINITY};
  const uint8_t k = fuzz_u8(b);
  const size_t np = sizeof palette / sizeof palette[0];
  if (k < np) return palette[k];
  return ((double)k - 160.0) / 16.0 + (double)fuzz_u8(b) / 4096.0; /* in about [-10, 6] */
}

static inline dual_context *fuzz_context(int tier) {
  dual_context *ctx = NULL;
  FUZZ_CHECK(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS, "context");
  FUZZ_CHECK(dual_context_set_threads(ctx, 1) == DUAL_SUCCESS, "threads");
  FUZZ_CHECK(dual_context_set_tier(ctx, tier) == DUAL_SUCCESS, "tier");
  return ctx;
}

#define FUZZ_FLAGS (DUAL_PT_NAN | DUAL_PT_INF | DUAL_PT_DOMAIN | DUAL_PT_SINGULAR | DUAL_PT_BAD_INPUT)

static inline void fuzz_flags_known(const int32_t *st, int64_t B, const char *what) {
  for (int64_t i = 0; i < B; ++i)
    FUZZ_CHECK((st[i] & ~FUZZ_FLAGS) == 0, "%s: point %lld has unknown flags %#x", what, (long long)i,
               (unsigned)st[i]);
}

/* The largest program the targets evaluate every product of (a hostile text can unroll to many
 * thousand operations; compiling it is the test, evaluating it would only slow the run). */
enum { FUZZ_MAX_INSTR = 600, FUZZ_MAX_DIM = 12, FUZZ_MAX_POINTS = 4 };

/* Every product of prog at B points of x (n per point), p (np per point), with directions and
 * cotangents from the bytes: each call must succeed and flag only known bits. */
static inline void fuzz_every_product(dual_context *ctx, const dual_program *prog, fuzz_bytes *bytes) {
  const int64_t n = dual_program_num_inputs(prog), np = dual_program_num_params(prog),
                m = dual_program_num_outputs(prog);
  if (n > FUZZ_MAX_DIM || np > FUZZ_MAX_DIM || m > FUZZ_MAX_DIM ||
      dual_program_num_instructions(prog) > FUZZ_MAX_INSTR)
    return;
  const int64_t B = 1 + fuzz_u8(bytes) % FUZZ_MAX_POINTS;
  const int64_t ldx = n > 0 ? n : 1, ldp = np > 0 ? np : 1;
  double x[FUZZ_MAX_POINTS * FUZZ_MAX_DIM], p[FUZZ_MAX_POINTS * FUZZ_MAX_DIM], v[FUZZ_MAX_POINTS * FUZZ_MAX_DIM],
      u[FUZZ_MAX_POINTS * FUZZ_MAX_DIM], y[FUZZ_MAX_POINTS * FUZZ_MAX_DIM], g[FUZZ_MAX_POINTS * FUZZ_MAX_DIM],
      se[FUZZ_MAX_POINTS * FUZZ_MAX_DIM];
  static double J[FUZZ_MAX_POINTS * FUZZ_MAX_DIM * FUZZ_MAX_DIM],
      H[FUZZ_MAX_POINTS * FUZZ_MAX_DIM * FUZZ_MAX_DIM * FUZZ_MAX_DIM];
  int32_t st[FUZZ_MAX_POINTS];
  for (int64_t i = 0; i < B * ldx; ++i) x[i] = fuzz_value(bytes), v[i] = fuzz_value(bytes);
  for (int64_t i = 0; i < B * ldp; ++i) p[i] = fuzz_value(bytes);
  for (int64_t i = 0; i < B * m; ++i) u[i] = fuzz_value(bytes);
  const double *pp = np > 0 ? p : NULL;
  int rc;
#define FUZZ_RAN(call, what)                                                                       \
  rc = (call);                                                                                     \
  FUZZ_CHECK(rc == DUAL_SUCCESS, "%s: %s", what, dual_context_last_error(ctx));                    \
  fuzz_flags_known(st, B, what)
  FUZZ_RAN(dual_eval(ctx, prog, B, x, ldx, pp, np, y, m, st), "eval");
  if (n == 0) return; /* no derivatives to take */
  FUZZ_RAN(dual_jvp(ctx, prog, B, x, ldx, pp, np, v, n, y, m, g, m, st), "jvp");
  FUZZ_RAN(dual_jacobian(ctx, prog, B, x, ldx, pp, np, y, m, J, m * n, st), "jacobian");
  FUZZ_RAN(dual_vjp(ctx, prog, B, x, ldx, pp, np, u, m, y, m, g, n, st), "vjp");
  FUZZ_RAN(dual_hvp(ctx, prog, B, x, ldx, pp, np, v, n, y, m, J, m * n, H, m * n, st), "hvp");
  if (n <= 6)
    FUZZ_RAN(dual_hessian(ctx, prog, B, x, ldx, pp, np, y, m, J, m * n, H, m * n * n,
                          DUAL_HESSIAN_FULL, st), "hessian");
  if (m == 1) {
    FUZZ_RAN(dual_gradient(ctx, prog, B, x, ldx, pp, np, y, g, n, st), "gradient");
    FUZZ_RAN(dual_sgrad(ctx, prog, B, x, ldx, pp, np, 4, 7, DUAL_SGRAD_ANTITHETIC, y, g, n, se, n, st),
             "sgrad");
  }
#undef FUZZ_RAN
}

#endif /* DUAL_FUZZ_UTIL_H */
