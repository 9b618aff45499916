/*
 * test_cpu_jit.c — the CPU compiled tier (issue 21): the generator's C for the CPU target
 * (jit/jit_source.h, dual_jit_source_cpu), compiled by the system C compiler and run by
 * jit/cpu_jit.h, gives the CPU interpreter's bits — values, derivative columns and status words —
 * for eval, JVP, Jacobian and gradient at every width the interpreter has; on random programs
 * that mix every op (inputs that make some partials NaN or infinite, so that the guarded rerun
 * runs), on every op alone, and on the benchmark functions ba and kin; batches that end in a
 * partial block; one and two threads.  Second order (jit/jit_source2.h's CPU target, and
 * forward-over-reverse, jit_source_rev.h's): Hessians in both layouts and HVPs of random programs
 * and of hess, through the public API; long forward passes in segments; elementary functions
 * called as SIMD clones; reverse mode
 * (jit/jit_source_rev.h's CPU target): gradients, Jacobians and VJPs of random programs, ba and
 * long programs of loops (grad); dual_sgrad, each sample through the module of its gradient.
 * Skipped where no C compiler is found.
 */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_program.h"
#include "loop_programs.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "exec.h"
#include "jit/cpu_jit.h"
#include "jit/jit_source_rev.h"
#include "program.h"
#include "random_program.h"
#include "temp_dirs.h"
#include "test_arrays.h"

static dual_cc cc;

static void need_cc(void) {
  char *why = NULL;
  if (dual_cc_find(&cc, &why) != 0) {
    free(why);
    cr_skip_test("no C compiler (the CPU compiled tier needs one)");
  }
}

/* One batch of B points of prog's shape, with room for every product, and its copy for the
 * compiled run. */
typedef struct arrays {
  int64_t B;
  int n, np, m;
  double *x, *p, *v, *y[2], *d[2];
  int32_t *st[2];
} arrays;

static void arrays_make(arrays *a, const dual_program *prog, int64_t B, uint64_t *rng, double lo, double hi) {
  a->B = B, a->n = dual_program_num_inputs(prog), a->np = dual_program_num_params(prog),
  a->m = dual_program_num_outputs(prog);
  a->x = random_array(rng, B * a->n, lo, hi);
  a->p = random_array(rng, B * (a->np > 0 ? a->np : 1), lo, hi);
  a->v = random_array(rng, B * a->n, -1.0, 1.0);
  if (B > 7 && a->n > 0) a->x[5 % (B * a->n)] = 0.0, a->x[7 % (B * a->n)] = 1.0; /* kinks, poles */
  for (int k = 0; k < 2; ++k) {
    a->y[k] = malloc(sizeof(double) * (size_t)(B * a->m + 1));
    a->d[k] = malloc(sizeof(double) * (size_t)(B * a->m * (a->n > 0 ? a->n : 1) + 1));
    a->st[k] = malloc(sizeof(int32_t) * (size_t)(B + 1));
    memset(a->y[k], 0x5a + k, sizeof(double) * (size_t)(B * a->m + 1));
    memset(a->d[k], 0x3c + k, sizeof(double) * (size_t)(B * a->m * (a->n > 0 ? a->n : 1) + 1));
    memset(a->st[k], 0x11 + k, sizeof(int32_t) * (size_t)(B + 1));
  }
}

static void arrays_free(arrays *a) {
  free(a->x), free(a->p), free(a->v);
  for (int k = 0; k < 2; ++k) free(a->y[k]), free(a->d[k]), free(a->st[k]);
}

/* The batch of run k for `mode`: point-major rows, a Jacobian row-major per point. */
static void batch_of(const arrays *a, int mode, int k, dual_batch *b) {
  dual_batch_init(b);
  b->count = a->B;
  b->x = a->x, b->x_ps = a->n, b->x_es = 1;
  if (a->np > 0) b->p = a->p, b->p_ps = a->np, b->p_es = 1;
  b->y = a->y[k], b->y_ps = a->m, b->y_es = 1;
  b->status = a->st[k];
  if (mode == DUAL_MODE_JVP) {
    b->v = a->v, b->v_ps = a->n, b->v_es = 1;
    b->d = a->d[k], b->d_ps = a->m, b->d_rs = 1, b->d_cs = 1;
  } else if (mode != DUAL_MODE_EVAL) {
    b->d = a->d[k], b->d_ps = (int64_t)a->m * a->n, b->d_rs = a->n, b->d_cs = 1;
  }
}

static int64_t checked_finite; /* finite nonzero derivative entries compared (not vacuous) */
static int64_t checked_flagged; /* points whose status had a flag */

/* The interpreter and the compiled module on the same job: the same bits everywhere. */
static void compare(dual_context *ctx, const dual_program *prog, arrays *a, int mode, int width, int threads,
                    const char *what) {
  dual_batch b[2];
  dual_job job[2];
  for (int k = 0; k < 2; ++k) {
    batch_of(a, mode, k, &b[k]);
    memset(&job[k], 0, sizeof job[k]);
    job[k].prog = prog, job[k].b = &b[k], job[k].mode = mode, job[k].width = mode == DUAL_MODE_EVAL ? 0 : width;
    job[k].threads = threads, job[k].seed = 1234, job[k].point0 = 77;
  }
  cr_assert_eq(dual_cpu_run(ctx, &job[0]), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  const int npass = (int)dual_job_passes(&job[1]);
  dual_cpu_jit_module *m = NULL;
  char *why = NULL;
  cr_assert_eq(dual_cpu_jit_build(&cc, prog, mode, job[1].width, npass, &m, &why), 0, "%s: %s", what,
               why ? why : "");
  cr_assert_eq(dual_cpu_jit_run(ctx, &job[1], m), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  dual_cpu_jit_free(m);
  const int64_t ny = a->B * a->m, nd = mode == DUAL_MODE_EVAL ? 0 : mode == DUAL_MODE_JVP ? ny : ny * a->n;
  for (int64_t i = 0; i < ny; ++i)
    cr_assert(same_bits(a->y[0][i], a->y[1][i]), "%s mode %d width %d: y[%lld] %.17g vs %.17g", what, mode,
              width, (long long)i, a->y[0][i], a->y[1][i]);
  for (int64_t i = 0; i < nd; ++i) {
    cr_assert(same_bits(a->d[0][i], a->d[1][i]), "%s mode %d width %d: d[%lld] %.17g vs %.17g", what, mode,
              width, (long long)i, a->d[0][i], a->d[1][i]);
    checked_finite += isfinite(a->d[0][i]) && a->d[0][i] != 0.0;
  }
  for (int64_t i = 0; i < a->B; ++i) {
    cr_assert_eq(a->st[0][i], a->st[1][i], "%s mode %d width %d: status[%lld] %#x vs %#x", what, mode, width,
                 (long long)i, a->st[0][i], a->st[1][i]);
    checked_flagged += a->st[0][i] != 0;
  }
}

Test(cpu_jit, random_programs_every_mode_and_width) {
  need_cc();
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  uint64_t rng = 2026112901;
  for (int trial = 0; trial < 4; ++trial) {
    dual_program *prog = rp_random_program(ctx, &rng, 50 + 10 * trial, 5, 2, 3);
    cr_assert_not_null(prog, "%s", dual_context_last_error(ctx));
    arrays a;
    arrays_make(&a, prog, 203, &rng, -2.0, 2.0); /* 203: three full blocks and a partial one */
    char what[32];
    snprintf(what, sizeof what, "program %d", trial);
    compare(ctx, prog, &a, DUAL_MODE_EVAL, 0, 2, what);
    compare(ctx, prog, &a, DUAL_MODE_JVP, 1, 1, what);
    compare(ctx, prog, &a, DUAL_MODE_JACOBIAN, 1 << trial, 1 + (trial & 1), what); /* widths 1, 2, 4, 8 */
    arrays_free(&a);
    dual_program_destroy(&prog);
  }
  cr_assert_gt(checked_finite, 3000, "only %lld finite nonzero derivative entries compared", (long long)checked_finite);
  cr_assert_gt(checked_flagged, 0, "no point raised a flag: the guarded rerun was not exercised");
  dual_context_destroy(&ctx);
}

/* Whether the CPU tier's first-order source of prog (mode, width) cuts some pass into segments
 * (`outline` 0), or calls the elementary functions as clones (1). */
static int source_is(const dual_program *prog, int mode, int width, int outline) {
  dual_batch b;
  dual_batch_init(&b);
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = mode, job.width = width;
  char why[256];
  char *src = dual_jit_source_cpu(prog, mode, width, (int)dual_job_passes(&job), why, sizeof why);
  cr_assert_not_null(src, "%s", why);
  const int cut = strstr(src, ", segmented */") != NULL && strstr(src, "DUAL_CPU_NOINLINE void dual_cpu_p0_s1(") != NULL;
  const int called = strstr(src, "#define DUAL_FN_OUTLINE 1") != NULL;
  free(src);
  return outline ? called : cut;
}

/* A chain of `steps` elementary functions over two running values and 6 inputs, nout outputs, as
 * tests/ref/random_program.h's, where every 40th step adds sqrt(x[4] * x[4]): at x[4] = 0 its
 * partial is infinite and its tangent's product 0 only through the guarded rule (DUAL_TM), so a
 * point with x[4] = 0 has finite derivatives that the guarded rerun alone gets right. */
static dual_program *sqrt_chain(dual_context *ctx, uint64_t *rng, int nout, int steps) {
  static const char *step[] = {"t = sin(t) * x[%d] + u", "u = t * x[%d] - cos(u)", "t = exp(-0.1 * t * t) + x[%d] * u",
                               "u = tanh(u + x[%d]) * t", "t = log1p(t * t) * x[%d] + t", "t = hypot(t, x[%d]) - u",
                               "u = u / (1 + x[%d] * x[%d])"};
  char *src = malloc(64 * (size_t)(steps + nout + 8)), *at = src;
  cr_assert_not_null(src);
  at += sprintf(at, "input x[6]\nlet t = x[0]\nlet u = x[5]\n");
  for (int k = 0; k < steps; ++k) {
    const int j = rp_pick(rng, 6);
    if (k % 40 == 39) at += sprintf(at, "u = u + sqrt(x[4] * x[4])\n");
    else at += sprintf(at, step[rp_pick(rng, 7)], j, j), *at++ = '\n';
  }
  for (int i = 0; i < nout; ++i) at += sprintf(at, "output f%d = t * %d + u * x[%d]\n", i, i + 1, i);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx, src, "chain", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  free(src);
  return prog;
}

/* Long forward passes (over DUAL_CPU_FWD_STRAIGHT_MAX instructions and lane sums) are cut into
 * segments, each a function of its own with the values and lanes that cross a cut checkpointed:
 * chains of elementary functions (sqrt_chain) — the gradient at width 8 (one pass), the Jacobian
 * of two outputs at width 4 (two passes, each cut), and eval and JVP of a chain of over 3,000
 * instructions — with NaN and infinite inputs and x[4] = 0 (the guarded rerun, itself in
 * segments), batches that end in a partial block, one and two threads: the interpreter's bits;
 * at x[4] = 0 the derivatives are finite, which only the guarded rerun gives. */
Test(cpu_jit, long_forward_passes_in_segments) {
  need_cc();
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  uint64_t rng = 2026113001;
  checked_finite = checked_flagged = 0;
  for (int c = 0; c < 3; ++c) {
    dual_program *prog = sqrt_chain(ctx, &rng, c == 1 ? 2 : 1, c == 2 ? 1500 : 200);
    arrays a;
    arrays_make(&a, prog, 203, &rng, -1.5, 1.5);
    a.x[3] = NAN, a.x[6 * 9 + 1] = INFINITY, a.x[6 * 20] = -INFINITY; /* points 0, 9, 20: flagged */
    for (int64_t i = 30; i < 203; i += 17) a.x[6 * i + 4] = 0.0; /* the guarded rerun's finite points */
    char what[64];
    snprintf(what, sizeof what, "chain %d (%lld instructions)", c, (long long)prog->n_instr);
    if (c == 0) {
      cr_assert(source_is(prog, DUAL_MODE_GRADIENT, 8, 0), "%s: gradient not segmented", what);
      compare(ctx, prog, &a, DUAL_MODE_GRADIENT, 8, 2, what);
    } else if (c == 1) {
      cr_assert(source_is(prog, DUAL_MODE_JACOBIAN, 4, 0), "%s: Jacobian not segmented", what);
      compare(ctx, prog, &a, DUAL_MODE_JACOBIAN, 4, 2, what);
    } else {
      cr_assert_gt(prog->n_instr, DUAL_CPU_FWD_STRAIGHT_MAX);
      cr_assert(source_is(prog, DUAL_MODE_EVAL, 0, 0) && source_is(prog, DUAL_MODE_JVP, 1, 0),
                "%s: eval or JVP not segmented", what);
      compare(ctx, prog, &a, DUAL_MODE_EVAL, 0, 2, what);
      compare(ctx, prog, &a, DUAL_MODE_JVP, 1, 1, what);
    }
    for (int64_t i = 30; i < 203 && c < 2; i += 17) /* (the last compare's d, as the interpreter's) */
      for (int64_t e = 0; e < (int64_t)a.m * 6; ++e)
        cr_assert(isfinite(a.d[0][i * a.m * 6 + e]), "%s: point %lld's derivative %lld is not finite", what,
                  (long long)i, (long long)e);
    arrays_free(&a);
    dual_program_destroy(&prog);
  }
  cr_assert_gt(checked_finite, 3000, "only %lld finite nonzero derivative entries compared", (long long)checked_finite);
  cr_assert_gt(checked_flagged, 2, "no point raised a flag");
  dual_context_destroy(&ctx);
}

/* A module of more than DUAL_CPU_JIT_INLINE_SITES uses of elementary functions calls them as
 * SIMD clones made once (DUAL_FN_OUTLINE, dual/fn_bits.h) instead of inlining each use: every
 * special function of the op table (but division and square root) in 12 uses of its own output,
 * over arguments that cross its domain's edges (0, 1, -1, large, NaN, infinite), eval and a
 * Jacobian of width 4: the interpreter's bits; a single use of each stays inlined. */
Test(cpu_jit, elementary_functions_called_as_clones) {
  need_cc();
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  char *src = malloc(1 << 16), *at = src;
  cr_assert_not_null(src);
  at += sprintf(at, "input x[3]\n");
  int nout = 0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    const dual_op_info *info = &dual_op_table[op];
    if (!(info->flags & F_SPECIAL) || info->spelling[0] == '\0' || op == DUAL_OP_DIV || op == DUAL_OP_SQRT) continue;
    at += sprintf(at, "output f%d = 0", nout++);
    for (int k = 0; k < 12; ++k) {
      if (info->arity == 1) at += sprintf(at, " + %s(x[%d] * %g)", info->spelling, k % 3, 0.5 + 0.25 * k);
      else at += sprintf(at, " + %s(x[%d], x[%d] * %g)", info->spelling, k % 3, (k + 1) % 3, 0.5 + 0.25 * k);
    }
    at += sprintf(at, "\n");
  }
  cr_assert_gt(nout, 25, "only %d special functions", nout);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx, src, "special", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  free(src);
  cr_assert(source_is(prog, DUAL_MODE_EVAL, 0, 1) && source_is(prog, DUAL_MODE_JACOBIAN, 4, 1), "not outlined");
  uint64_t rng = 2026113002;
  arrays a;
  arrays_make(&a, prog, 157, &rng, -2.0, 2.0);
  const double edge[] = {0.0, -0.0, 1.0, -1.0, 1e300, -1e300, 710.0, -745.0, 1e-310, NAN, INFINITY, -INFINITY};
  for (int i = 0; i < 12; ++i) a.x[3 * (10 + 3 * i) + i % 3] = edge[i];
  checked_finite = checked_flagged = 0;
  compare(ctx, prog, &a, DUAL_MODE_EVAL, 0, 2, "special functions");
  compare(ctx, prog, &a, DUAL_MODE_JACOBIAN, 4, 1, "special functions");
  cr_assert_gt(checked_finite, 8000, "only %lld finite nonzero derivative entries compared", (long long)checked_finite);
  cr_assert_gt(checked_flagged, 3, "no point raised a flag");
  arrays_free(&a);
  dual_program_destroy(&prog);
  dual_program *one = rp_op_program(ctx, DUAL_OP_LOG1P);
  cr_assert_not_null(one);
  cr_assert(!source_is(one, DUAL_MODE_JACOBIAN, 4, 1), "one use outlined");
  dual_program_destroy(&one);
  dual_context_destroy(&ctx);
}

/* Each op alone, on arguments that cross its domain's edges (NaN, infinite and singular
 * partials): its rule, flags and tangent terms. */
Test(cpu_jit, every_op_alone) {
  need_cc();
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  uint64_t rng = 99;
  int tried = 0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    dual_program *prog = rp_op_program(ctx, op);
    if (prog == NULL) continue;
    arrays a;
    arrays_make(&a, prog, 70, &rng, -3.0, 3.0);
    compare(ctx, prog, &a, DUAL_MODE_JACOBIAN, 4, 1, dual_op_table[op].name);
    arrays_free(&a);
    dual_program_destroy(&prog);
    ++tried;
  }
  cr_assert_gt(tried, 30);
  dual_context_destroy(&ctx);
}

/* The gradient of a one-output program (its passes' columns), a draw-using program's values. */
Test(cpu_jit, gradient_and_draws) {
  need_cc();
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  dual_program *g = NULL, *r = NULL;
  cr_assert_eq(dual_program_compile(ctx, "input x[6]\noutput f = exp(x[0] * x[1]) + sin(x[2]) / x[3] - x[4] * x[5]\n",
                                    "g", &g), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_program_compile(ctx, "input x[2]\noutput a = x[0] * normal() + uniform()\noutput b = x[1] * normal()\n",
                                    "r", &r), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  uint64_t rng = 5;
  arrays a;
  arrays_make(&a, g, 130, &rng, -2.0, 2.0);
  for (int w = 1; w <= 8; w *= 2) compare(ctx, g, &a, DUAL_MODE_GRADIENT, w, 2, "gradient");
  arrays_free(&a);
  arrays_make(&a, r, 130, &rng, -2.0, 2.0);
  compare(ctx, r, &a, DUAL_MODE_EVAL, 0, 2, "draws");
  compare(ctx, r, &a, DUAL_MODE_JACOBIAN, 2, 2, "draws");
  arrays_free(&a);
  dual_program_destroy(&g);
  dual_program_destroy(&r);
  dual_context_destroy(&ctx);
}

/* The benchmark functions' Jacobians at the widths the CPU engine takes for them; kin's batch is
 * large enough (over DUAL_CPU_JIT_STREAM_BYTES of Jacobians) to take the non-temporal stores,
 * once into d as malloc gives it and once into a d on a 64-byte boundary (which, with AVX-512,
 * streams each point's rows by chunks of 8 entries: DUAL_CPU_ROWS8). */
Test(cpu_jit, benchmark_functions) {
  need_cc();
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  const char *names[] = {"ba", "kin"};
  const int widths[] = {16, 32};
  const int64_t batches[] = {150, DUAL_CPU_JIT_STREAM_BYTES / (32 * 32 * 8) + 77};
  uint64_t rng = 7;
  for (int i = 0; i < 2; ++i) {
    dual_program *prog = bench_program(ctx, names[i]);
    arrays a;
    arrays_make(&a, prog, batches[i], &rng, 0.5, 1.5);
    compare(ctx, prog, &a, DUAL_MODE_JACOBIAN, widths[i], 2, names[i]);
    if (i == 1) { /* d aligned to 64 bytes */
      const size_t bytes = sizeof(double) * (size_t)(batches[i] * 32 * 32);
      for (int k = 0; k < 2; ++k) {
        free(a.d[k]);
        a.d[k] = aligned_alloc(64, bytes);
        cr_assert_not_null(a.d[k]);
        memset(a.d[k], 0x3c + k, bytes);
      }
      compare(ctx, prog, &a, DUAL_MODE_JACOBIAN, widths[i], 2, "kin, d aligned");
    }
    arrays_free(&a);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* Two CPU contexts on tiers t0 and t1, the second's disk cache in a new directory made from the
 * mkdtemp template dir (NULL: the default cache). */
static void two_contexts(dual_context *ctx[2], int t0, int t1, char *dir) {
  for (int k = 0; k < 2; ++k) {
    ctx[k] = NULL;
    cr_assert_eq(dual_context_create(&ctx[k], DUAL_DEVICE_CPU), DUAL_SUCCESS);
    cr_assert_eq(dual_context_set_tier(ctx[k], k ? t1 : t0), DUAL_SUCCESS);
  }
  if (dir == NULL) return;
  cr_assert_not_null(mkdtemp(dir));
  cr_assert_eq(dual_context_set_cache_dir(ctx[1], dir), DUAL_SUCCESS);
}

/* Through the public API: a CPU context under DUAL_TIER_COMPILE gives the interpreter's bits
 * (a Jacobian, a gradient, values), says it ran compiled, and leaves one cache entry per module
 * in its cache directory; a second call of the same program finds its module loaded. */
Test(cpu_jit, a_cpu_context_under_the_compile_tier) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujit-XXXXXX";
  dual_context *pair[2];
  two_contexts(pair, DUAL_TIER_INTERPRET, DUAL_TIER_COMPILE, dir);
  dual_context *interp = pair[0], *comp = pair[1];
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(interp, "input x[4]\noutput a = x[0] * sin(x[1]) + exp(x[2]) / x[3]\n"
                                            "output b = pow(x[0], x[3]) - atan2(x[1], x[2])\n", "api", &prog),
               DUAL_SUCCESS, "%s", dual_context_last_error(interp));
  enum { B = 300 };
  uint64_t rng = 11;
  double *x = random_array(&rng, B * 4, 0.1, 2.0);
  static double y[2][B * 2], J[2][B * 8];
  static int32_t st[2][B];
  dual_context *ctx[2] = {interp, comp};
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 2; ++k)
      cr_assert_eq(dual_jacobian(ctx[k], prog, B, x, 4, NULL, 0, y[k], 2, J[k], 8, st[k]), DUAL_SUCCESS, "%s",
                   dual_context_last_error(ctx[k]));
    cr_assert_eq(dual_context_last_tier(comp), DUAL_TIER_COMPILE);
    cr_assert_eq(dual_context_last_tier(interp), DUAL_TIER_INTERPRET);
    for (int i = 0; i < B * 2; ++i) cr_assert(same_bits(y[0][i], y[1][i]), "y[%d]", i);
    for (int i = 0; i < B * 8; ++i) cr_assert(same_bits(J[0][i], J[1][i]), "J[%d] %.17g vs %.17g", i, J[0][i], J[1][i]);
    cr_assert(memcmp(st[0], st[1], sizeof st[0]) == 0);
  }
  for (int k = 0; k < 2; ++k)
    cr_assert_eq(dual_eval(ctx[k], prog, B, x, 4, NULL, 0, y[k], 2, st[k]), DUAL_SUCCESS, "%s", dual_context_last_error(ctx[k]));
  for (int i = 0; i < B * 2; ++i) cr_assert(same_bits(y[0][i], y[1][i]), "eval y[%d]", i);
  char where[4096];
  int64_t entries = 0, bytes = 0;
  cr_assert_eq(dual_context_cache_usage(comp, where, sizeof where, &entries, &bytes), DUAL_SUCCESS);
  cr_assert_eq(entries, 2, "%lld entries (the Jacobian's module and the eval's)", (long long)entries);
  cr_assert_gt(bytes, 1000);
  int64_t removed = 0;
  cr_assert_eq(dual_context_cache_clear(comp, &removed), DUAL_SUCCESS);
  cr_assert_eq(rmdir(dir), 0);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&interp);
  dual_context_destroy(&comp);
}

/* ---- second order (jit/jit_source2.h's CPU target) ---------------------------------------- */

/* One second-order call of prog on B points through the public API on the interpreter's context
 * (k = 0) and the compiled one (k = 1), `threads` threads each: mode DUAL_MODE_HESSIAN (layout
 * full or packed) or DUAL_MODE_HVP (forward mode: nested passes); the same bits everywhere —
 * values, Jacobian, Hessian blocks or H v, status words — and the compiled context says it ran
 * compiled.  Counts the finite nonzero second-order entries and the flagged points compared. */
static int64_t checked2_finite, checked2_flagged;
static int compare2_ad = DUAL_AD_FORWARD; /* the AD mode compare2's products must take */

static void compare2(dual_context *ctx[2], const dual_program *prog, int64_t B, const double *x, const double *p,
                     const double *v, int mode, int layout, int threads, const char *what) {
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog), m = dual_program_num_outputs(prog);
  const int64_t len = mode == DUAL_MODE_HVP ? n : layout == DUAL_HESSIAN_FULL ? (int64_t)n * n : (int64_t)n * (n + 1) / 2;
  double *y[2], *J[2], *H[2];
  int32_t *st[2];
  for (int k = 0; k < 2; ++k) {
    y[k] = malloc(sizeof(double) * (size_t)(B * m + 1)), J[k] = malloc(sizeof(double) * (size_t)(B * m * n + 1));
    H[k] = malloc(sizeof(double) * (size_t)(B * m * len + 1)), st[k] = malloc(sizeof(int32_t) * (size_t)(B + 1));
    memset(y[k], 0x5a + k, sizeof(double) * (size_t)(B * m + 1)), memset(J[k], 0x3c + k, sizeof(double) * (size_t)(B * m * n + 1));
    memset(H[k], 0x2b + k, sizeof(double) * (size_t)(B * m * len + 1)), memset(st[k], 0x11 + k, sizeof(int32_t) * (size_t)(B + 1));
    cr_assert_eq(dual_context_set_threads(ctx[k], threads), DUAL_SUCCESS);
    const int rc = mode == DUAL_MODE_HVP
                       ? dual_hvp(ctx[k], prog, B, x, n, p, np, v, n, y[k], m, J[k], (int64_t)m * n, H[k], (int64_t)m * n, st[k])
                       : dual_hessian(ctx[k], prog, B, x, n, p, np, y[k], m, J[k], (int64_t)m * n, H[k], (int64_t)m * len,
                                      layout, st[k]);
    cr_assert_eq(rc, DUAL_SUCCESS, "%s: %s", what, dual_context_last_error(ctx[k]));
    cr_assert_eq(dual_context_last_ad_mode(ctx[k]), compare2_ad, "%s: not AD mode %d", what, compare2_ad);
  }
  cr_assert_eq(dual_context_last_tier(ctx[1]), DUAL_TIER_COMPILE, "%s: not compiled", what);
  for (int64_t i = 0; i < B * m; ++i)
    cr_assert(same_bits(y[0][i], y[1][i]), "%s: y[%lld] %.17g vs %.17g", what, (long long)i, y[0][i], y[1][i]);
  for (int64_t i = 0; i < B * m * n; ++i)
    cr_assert(same_bits(J[0][i], J[1][i]), "%s: J[%lld] %.17g vs %.17g", what, (long long)i, J[0][i], J[1][i]);
  for (int64_t i = 0; i < B * m * len; ++i) {
    cr_assert(same_bits(H[0][i], H[1][i]), "%s: H[%lld] %.17g vs %.17g", what, (long long)i, H[0][i], H[1][i]);
    checked2_finite += isfinite(H[0][i]) && H[0][i] != 0.0;
  }
  for (int64_t i = 0; i < B; ++i) {
    cr_assert_eq(st[0][i], st[1][i], "%s: status[%lld] %#x vs %#x", what, (long long)i, st[0][i], st[1][i]);
    checked2_flagged += st[0][i] != 0;
  }
  for (int k = 0; k < 2; ++k) free(y[k]), free(J[k]), free(H[k]), free(st[k]);
}

/* Random programs (every op, inputs with kinks and poles, so that stored entries come out NaN or
 * infinite and the guarded copy runs) and hess, the benchmark function: Hessians in both
 * layouts and HVPs, one and two threads, batches that end in a partial block; by nested forward
 * passes (jit_source2.h's CPU target), then by forward-over-reverse (jit_source_rev.h's: a
 * program of 7 inputs takes two groups of directions, 4 and 3). */
Test(cpu_jit, second_order_random_programs_and_hess) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujit2-XXXXXX";
  dual_context *ctx[2];
  two_contexts(ctx, DUAL_TIER_INTERPRET, DUAL_TIER_COMPILE, dir);
  uint64_t rng = 2026112902;
  for (int ad = 0; ad < 2; ++ad) { /* nested forward, then forward-over-reverse */
    compare2_ad = ad ? DUAL_AD_REVERSE : DUAL_AD_FORWARD;
    for (int k = 0; k < 2; ++k) cr_assert_eq(dual_context_set_ad_mode(ctx[k], compare2_ad), DUAL_SUCCESS);
    checked2_finite = checked2_flagged = 0;
    for (int trial = 0; trial < 3; ++trial) {
      dual_program *prog = rp_random_program(ctx[0], &rng, 40 + 10 * trial, 4 + 3 * ad * (trial == 2), 2, 2);
      cr_assert_not_null(prog, "%s", dual_context_last_error(ctx[0]));
      const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
      const int64_t B = 203;
      double *x = random_array(&rng, B * n, -2.0, 2.0), *p = random_array(&rng, B * (np > 0 ? np : 1), -2.0, 2.0);
      double *v = random_array(&rng, B * n, -1.0, 1.0);
      if (n > 0) x[5 % (B * n)] = 0.0, x[7 % (B * n)] = 1.0, x[11 % (B * n)] = NAN; /* kinks, poles, a bad input */
      char what[64];
      snprintf(what, sizeof what, "AD mode %d, program %d, Hessian", compare2_ad, trial);
      compare2(ctx, prog, B, x, p, v, DUAL_MODE_HESSIAN, trial == 1 ? DUAL_HESSIAN_PACKED : DUAL_HESSIAN_FULL,
               1 + (trial & 1), what);
      snprintf(what, sizeof what, "AD mode %d, program %d, HVP", compare2_ad, trial);
      compare2(ctx, prog, B, x, p, v, DUAL_MODE_HVP, 0, 2 - (trial & 1), what);
      free(x), free(p), free(v);
      dual_program_destroy(&prog);
    }
    cr_assert_gt(checked2_flagged, 0, "no point raised a flag: the guarded copy was not exercised");
    dual_program *hess = bench_program(ctx[0], "hess");
    const int64_t B = 150;
    double *x = random_array(&rng, B * 16, -1.0, 1.0);
    compare2(ctx, hess, B, x, NULL, NULL, DUAL_MODE_HESSIAN, ad ? DUAL_HESSIAN_PACKED : DUAL_HESSIAN_FULL, 2, "hess");
    cr_assert_gt(checked2_finite, 20000, "only %lld finite nonzero second-order entries compared", (long long)checked2_finite);
    free(x);
    dual_program_destroy(&hess);
  }
  compare2_ad = DUAL_AD_FORWARD;
  for (int k = 0; k < 2; ++k) dual_context_destroy(&ctx[k]);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* ---- reverse mode (jit/jit_source_rev.h's CPU target) ------------------------------------ */

/* One first-order reverse-mode call of prog on B points through the public API on the
 * interpreter's context (k = 0) and the compiled one (k = 1), both in DUAL_AD_REVERSE, `threads`
 * threads each: a gradient, a Jacobian or a VJP (cotangents u); the same bits everywhere —
 * values, derivative rows, status words — and the compiled context says it ran compiled.  d of
 * the Jacobian and gradient column-major (colmajor: strides exchanged), so the stores' strides
 * are both the generated code's. */
static int64_t checkedr_finite, checkedr_flagged;
static void compare_rev(dual_context *ctx[2], const dual_program *prog, int64_t B, const double *x, const double *p,
                        const double *u, int mode, int threads, int colmajor, const char *what) {
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog), m = dual_program_num_outputs(prog);
  const int64_t rows = mode == DUAL_MODE_VJP ? 1 : m, nd = B * rows * n;
  double *y[2], *d[2];
  int32_t *st[2];
  for (int k = 0; k < 2; ++k) {
    y[k] = malloc(sizeof(double) * (size_t)(B * m + 1)), d[k] = malloc(sizeof(double) * (size_t)(nd + 1));
    st[k] = malloc(sizeof(int32_t) * (size_t)(B + 1));
    memset(y[k], 0x5a + k, sizeof(double) * (size_t)(B * m + 1)), memset(d[k], 0x3c + k, sizeof(double) * (size_t)(nd + 1));
    memset(st[k], 0x11 + k, sizeof(int32_t) * (size_t)(B + 1));
    dual_batch b;
    dual_batch_init(&b);
    b.count = B, b.x = x, b.x_ps = n, b.x_es = 1;
    if (np > 0) b.p = p, b.p_ps = np, b.p_es = 1;
    b.y = y[k], b.y_ps = m, b.y_es = 1, b.status = st[k];
    b.d = d[k], b.d_ps = colmajor ? 1 : rows * n, b.d_rs = colmajor ? B * n : n, b.d_cs = colmajor ? B : 1;
    if (mode == DUAL_MODE_VJP) b.u = u, b.u_ps = m, b.u_es = 1;
    cr_assert_eq(dual_context_set_threads(ctx[k], threads), DUAL_SUCCESS);
    cr_assert_eq(dual_run(ctx[k], prog, mode, &b), DUAL_SUCCESS, "%s: %s", what, dual_context_last_error(ctx[k]));
    cr_assert_eq(dual_context_last_ad_mode(ctx[k]), DUAL_AD_REVERSE, "%s: not reverse mode", what);
  }
  cr_assert_eq(dual_context_last_tier(ctx[1]), DUAL_TIER_COMPILE, "%s: not compiled", what);
  for (int64_t i = 0; i < B * m; ++i)
    cr_assert(same_bits(y[0][i], y[1][i]), "%s: y[%lld] %.17g vs %.17g", what, (long long)i, y[0][i], y[1][i]);
  for (int64_t i = 0; i < nd; ++i) {
    cr_assert(same_bits(d[0][i], d[1][i]), "%s: d[%lld] %.17g vs %.17g", what, (long long)i, d[0][i], d[1][i]);
    checkedr_finite += isfinite(d[0][i]) && d[0][i] != 0.0;
  }
  for (int64_t i = 0; i < B; ++i) {
    cr_assert_eq(st[0][i], st[1][i], "%s: status[%lld] %#x vs %#x", what, (long long)i, st[0][i], st[1][i]);
    checkedr_flagged += st[0][i] != 0;
  }
  for (int k = 0; k < 2; ++k) free(y[k]), free(d[k]), free(st[k]);
}

/* Whether the CPU tier's reverse-mode source of prog's gradient (VJP when vjp) is looped: 1, or
 * 2 when its forward loops also tape values for the backward ones; 3: segmented. */
static int looped_source(const dual_program *prog, int vjp) {
  dual_batch b;
  dual_batch_init(&b);
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = vjp ? DUAL_MODE_VJP : DUAL_MODE_GRADIENT, job.reverse = 1;
  char why[256];
  char *src = dual_jit_source_rev_cpu(&job, why, sizeof why);
  cr_assert_not_null(src, "%s", why);
  const int looped = strstr(src, ", looped */") != NULL, taped = strstr(src, "double *const tw0_") != NULL;
  const int segmented = strstr(src, ", segmented */") != NULL && strstr(src, "DUAL_CPU_NOINLINE void dual_cpu_p0_a1(") != NULL;
  free(src);
  return segmented ? 3 : looped + (looped && taped);
}

/* Reverse mode (gradients, Jacobians by rows, VJPs): random programs of every op (inputs at
 * kinks and poles, a NaN input, cotangents with a zero and a NaN) and ba's Jacobian as straight-
 * line modules; long programs of loops as looped modules — grad (n = 1024), a sum with normal
 * draws, a parameter and a value from before the loop, one that computes the iteration before's
 * value again, one with a passive running count (their costly values taped by the forward loops),
 * and one whose tapes would be too large (n = 4000: computed again); one and two threads, batches
 * that end in a partial block, d row- and column-major.  Long programs not made of loops as
 * segmented modules (a product of 400 factors, 1602 instructions; a chain of elementary
 * functions as test_reverse's, 318); one over the segments' rule (1000 factors) is declined with
 * a reason under the compile tier and interpreted under AUTO. */
Test(cpu_jit, reverse_mode_straight_line_and_looped) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujitr-XXXXXX";
  dual_context *ctx[2];
  two_contexts(ctx, DUAL_TIER_INTERPRET, DUAL_TIER_COMPILE, dir);
  for (int k = 0; k < 2; ++k) cr_assert_eq(dual_context_set_ad_mode(ctx[k], DUAL_AD_REVERSE), DUAL_SUCCESS);
  uint64_t rng = 2026112903;
  for (int trial = 0; trial < 3; ++trial) {
    const int m = trial == 0 ? 1 : 3;
    dual_program *prog = rp_random_program(ctx[0], &rng, 40 + 10 * trial, 5, 2, m);
    cr_assert_not_null(prog, "%s", dual_context_last_error(ctx[0]));
    cr_assert_eq(looped_source(prog, 0), 0);
    const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
    const int64_t B = 203;
    double *x = random_array(&rng, B * n, -2.0, 2.0), *p = random_array(&rng, B * (np > 0 ? np : 1), -2.0, 2.0);
    double *u = random_array(&rng, B * m, -1.5, 1.5);
    x[5] = 0.0, x[7] = 1.0, x[11] = NAN, u[1] = 0.0, u[4] = NAN; /* kinks, poles, bad inputs */
    char what[64];
    snprintf(what, sizeof what, "program %d, %s", trial, m == 1 ? "gradient" : "Jacobian");
    compare_rev(ctx, prog, B, x, p, u, m == 1 ? DUAL_MODE_GRADIENT : DUAL_MODE_JACOBIAN, 1 + (trial & 1), trial == 2, what);
    snprintf(what, sizeof what, "program %d, VJP", trial);
    compare_rev(ctx, prog, B, x, p, u, DUAL_MODE_VJP, 2 - (trial & 1), 0, what);
    free(x), free(p), free(u);
    dual_program_destroy(&prog);
  }
  dual_program *ba = bench_program(ctx[0], "ba");
  double *x = random_array(&rng, 150 * dual_program_num_inputs(ba), 0.5, 1.5);
  double *pb = random_array(&rng, 150 * dual_program_num_params(ba), 0.5, 1.5);
  compare_rev(ctx, ba, 150, x, pb, NULL, DUAL_MODE_JACOBIAN, 2, 0, "ba");
  free(x), free(pb);
  dual_program_destroy(&ba);
  /* the loop programs but the product (below), and one whose tapes would be too large */
  const char *looped[] = {dual_test_loop_programs[0], dual_test_loop_programs[1], dual_test_loop_programs[3],
                          dual_test_loop_programs[4], "input x[4000]\noutput f = sum(i in 0..4000, sin(x[i]) * exp(x[i]))\n"};
  for (int c = 0; c < 5; ++c) {
    dual_program *prog = NULL;
    cr_assert_eq(dual_program_compile(ctx[0], looped[c], "looped", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx[0]));
    cr_assert_gt(prog->n_instr, DUAL_JIT_MAX_REV_INSTR);
    const int want = c < 4 ? 2 : 1; /* looped and taped; the last one looped only */
    cr_assert(looped_source(prog, 0) == want && looped_source(prog, 1) == want, "program %d: not looped as %d", c, want);
    const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
    const int64_t B = 45;
    double *xl = random_array(&rng, B * n, -1.5, 1.5), *p = random_array(&rng, B * (np + 1), 0.5, 2.0);
    double *u = random_array(&rng, B, -2.0, 2.0);
    xl[3] = NAN, xl[n + 5] = INFINITY, xl[2 * n] = 0.0, xl[2 * n + 1] = -0.0, u[1] = 0.0, u[2] = NAN;
    char what[64];
    snprintf(what, sizeof what, "looped program %d, gradient", c);
    compare_rev(ctx, prog, B, xl, p, u, DUAL_MODE_GRADIENT, 2 - (c & 1), c == 0, what);
    snprintf(what, sizeof what, "looped program %d, VJP", c);
    compare_rev(ctx, prog, B, xl, p, u, DUAL_MODE_VJP, 1 + (c & 1), 0, what);
    free(xl), free(p), free(u);
    dual_program_destroy(&prog);
  }
  cr_assert_gt(checkedr_flagged, 0, "no point raised a flag");
  cr_assert_gt(checkedr_finite, 100000, "only %lld finite nonzero derivative entries compared", (long long)checkedr_finite);
  /* not made of loops: segmented; over the segments' rule declined under the compile tier,
   * interpreted under AUTO */
  for (int c = 0; c < 2; ++c) { /* (gcc -O1: 26-31 s and 9-10 s a module on the development machine) */
    dual_program *prog = NULL;
    if (c == 0) {
      cr_assert_eq(dual_program_compile(ctx[0], dual_test_loop_programs[DUAL_TEST_LOOP_PROD], "prod", &prog), DUAL_SUCCESS);
    } else {
      uint64_t s = 78;
      prog = rp_chain_program(ctx[0], &s, 6, 1, 100);
      cr_assert_not_null(prog, "%s", dual_context_last_error(ctx[0]));
    }
    cr_assert_gt(prog->n_instr, DUAL_CPU_REV_STRAIGHT_MAX);
    cr_assert(looped_source(prog, 0) == 3 && looped_source(prog, 1) == 3, "segmented program %d: not segmented", c);
    const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
    const int64_t B = 70;
    double *xs = random_array(&rng, B * n, -1.5, 1.5), *p = random_array(&rng, B * (np + 1), 0.5, 2.0);
    double *u = random_array(&rng, B, -2.0, 2.0);
    xs[3] = NAN, xs[n + 1] = INFINITY, xs[2 * n] = 0.0, u[1] = 0.0, u[2] = NAN;
    char what[64];
    snprintf(what, sizeof what, "segmented program %d (%lld instructions), gradient", c, (long long)prog->n_instr);
    compare_rev(ctx, prog, B, xs, p, u, DUAL_MODE_GRADIENT, 2 - (c & 1), c == 1, what);
    snprintf(what, sizeof what, "segmented program %d, VJP", c);
    compare_rev(ctx, prog, B, xs, p, u, DUAL_MODE_VJP, 1 + (c & 1), 0, what);
    free(xs), free(p), free(u);
    dual_program_destroy(&prog);
  }
  dual_program *prod = NULL;
  cr_assert_eq(dual_program_compile(ctx[0], dual_test_too_long, "too long", &prod), DUAL_SUCCESS);
  cr_assert_gt(prod->n_instr, DUAL_JIT_MAX_REV_SEGMENTED);
  double *xp = random_array(&rng, 4 * 1000, -1.0, 1.0), g[4 * 1000];
  cr_assert_eq(dual_gradient(ctx[1], prod, 4, xp, 1000, NULL, 0, NULL, g, 1000, NULL), DUAL_ERR_COMPILE);
  cr_assert(strstr(dual_context_last_error(ctx[1]), "in segments") != NULL, "%s", dual_context_last_error(ctx[1]));
  cr_assert_eq(dual_context_set_tier(ctx[1], DUAL_TIER_AUTO), DUAL_SUCCESS);
  cr_assert_eq(dual_gradient(ctx[1], prod, 4, xp, 1000, NULL, 0, NULL, g, 1000, NULL), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_tier(ctx[1]), DUAL_TIER_INTERPRET);
  free(xp);
  dual_program_destroy(&prod);
  /* a looped module's scratch counts against the memory limit: over it COMPILE fails naming the
   * limit, AUTO interprets (checkpointed) with the reason in the note, the interpreter's bits */
  dual_program *grad = NULL;
  cr_assert_eq(dual_program_compile(ctx[0], dual_test_loop_programs[3], "grad", &grad), DUAL_SUCCESS);
  double *xg = random_array(&rng, 40 * 400, -1.5, 1.5), *g0 = malloc(sizeof(double) * 40 * 400),
         *g1 = malloc(sizeof(double) * 40 * 400);
  cr_assert(g0 != NULL && g1 != NULL);
  cr_assert_eq(dual_context_set_tier(ctx[1], DUAL_TIER_COMPILE), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_threads(ctx[1], 1), DUAL_SUCCESS);
  cr_assert_eq(dual_gradient(ctx[1], grad, 40, xg, 400, NULL, 0, NULL, g1, 400, NULL), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_memory_limit(ctx[1], 4096), DUAL_SUCCESS);
  cr_assert_eq(dual_gradient(ctx[1], grad, 40, xg, 400, NULL, 0, NULL, g1, 400, NULL), DUAL_ERR_NO_MEMORY);
  const char *err = dual_context_last_error(ctx[1]), *needs = strstr(err, "needs ");
  long long scratch = 0;
  cr_assert(needs != NULL && strstr(err, "scratch") != NULL && strstr(err, "memory limit") != NULL, "%s", err);
  cr_assert(sscanf(needs, "needs %lld bytes", &scratch) == 1 && scratch > 4096, "%s", err);
  cr_assert_eq(dual_context_set_memory_limit(ctx[1], scratch - 1), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_tier(ctx[1], DUAL_TIER_AUTO), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(ctx[1], DUAL_KNOB_CPU_JIT_AFTER_MS, 0), DUAL_SUCCESS);
  cr_assert_eq(dual_gradient(ctx[1], grad, 40, xg, 400, NULL, 0, NULL, g1, 400, NULL), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx[1]));
  cr_assert_eq(dual_context_last_tier(ctx[1]), DUAL_TIER_INTERPRET);
  const char *note = dual_context_last_note(ctx[1]);
  cr_assert(note != NULL && strstr(note, "scratch") != NULL, "note: %s", note != NULL ? note : "(none)");
  cr_assert_eq(dual_gradient(ctx[0], grad, 40, xg, 400, NULL, 0, NULL, g0, 400, NULL), DUAL_SUCCESS);
  cr_assert_eq(memcmp(g0, g1, sizeof(double) * 40 * 400), 0, "the interpreted gradient differs");
  free(xg), free(g0), free(g1);
  dual_program_destroy(&grad);
  for (int k = 0; k < 2; ++k) dual_context_destroy(&ctx[k]);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* DUAL_TIER_AUTO (a CPU context's default): a product interprets until it has taken
 * DUAL_KNOB_CPU_JIT_AFTER_MS of interpreter time, then compiles in the background and later
 * calls run its module — every call the interpreter's bits; a product under the threshold never
 * compiles (one cache entry after all). */
Test(cpu_jit, auto_compiles_a_product_once_it_is_hot) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujit-auto-XXXXXX";
  dual_context *pair[2];
  two_contexts(pair, DUAL_TIER_INTERPRET, DUAL_TIER_AUTO, dir);
  dual_context *interp = pair[0], *aut = pair[1];
  cr_assert_eq(dual_context_set_knob(aut, DUAL_KNOB_CPU_JIT_AFTER_MS, 30), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(interp, "input x[4]\noutput a = x[0] * sin(x[1]) + exp(x[2]) / x[3]\n"
                                            "output b = pow(x[0], x[3]) - atan2(x[1], x[2]) * x[1]\n", "auto", &prog),
               DUAL_SUCCESS, "%s", dual_context_last_error(interp));
  enum { B = 20000 };
  uint64_t rng = 13;
  double *x = random_array(&rng, B * 4, 0.1, 2.0);
  double *y[2], *J[2];
  int32_t *st[2];
  for (int k = 0; k < 2; ++k)
    y[k] = malloc(sizeof(double) * B * 2), J[k] = malloc(sizeof(double) * B * 8), st[k] = malloc(sizeof(int32_t) * B);
  cr_assert_eq(dual_jacobian(interp, prog, B, x, 4, NULL, 0, y[0], 2, J[0], 8, st[0]), DUAL_SUCCESS);
  int calls = 0, compiled_at = -1;
  const double t0 = now_s();
  while (compiled_at < 0 && now_s() - t0 < 300.0) {
    memset(J[1], 0xff, sizeof(double) * B * 8);
    cr_assert_eq(dual_jacobian(aut, prog, B, x, 4, NULL, 0, y[1], 2, J[1], 8, st[1]), DUAL_SUCCESS, "%s",
                 dual_context_last_error(aut));
    for (int i = 0; i < B * 2; ++i) cr_assert(same_bits(y[0][i], y[1][i]), "call %d: y[%d]", calls, i);
    for (int i = 0; i < B * 8; ++i) cr_assert(same_bits(J[0][i], J[1][i]), "call %d: J[%d]", calls, i);
    cr_assert(memcmp(st[0], st[1], sizeof(int32_t) * B) == 0, "call %d: statuses", calls);
    if (calls == 0) cr_assert_eq(dual_context_last_tier(aut), DUAL_TIER_INTERPRET, "the first call compiled");
    if (dual_context_last_tier(aut) == DUAL_TIER_COMPILE) compiled_at = calls;
    ++calls;
    if (compiled_at < 0 && calls > 50) usleep(20000); /* (the compile takes seconds: no need to spin) */
  }
  cr_assert_geq(compiled_at, 1, "the Jacobian never ran compiled (%d calls)", calls);
  /* the eval of a few points stays under the threshold: interpreted, no module */
  for (int r = 0; r < 5; ++r) {
    cr_assert_eq(dual_eval(aut, prog, 10, x, 4, NULL, 0, y[1], 2, st[1]), DUAL_SUCCESS);
    cr_assert_eq(dual_context_last_tier(aut), DUAL_TIER_INTERPRET);
  }
  char where[4096];
  int64_t entries = 0, bytes = 0;
  cr_assert_eq(dual_context_cache_usage(aut, where, sizeof where, &entries, &bytes), DUAL_SUCCESS);
  cr_assert_eq(entries, 1, "%lld cache entries (the Jacobian's module alone)", (long long)entries);
  for (int k = 0; k < 2; ++k) free(y[k]), free(J[k]), free(st[k]);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&interp);
  dual_context_destroy(&aut);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* A module whose source is over DUAL_CPU_JIT_MAX_SOURCE (the values of a sum of 20,000 sines:
 * 100,000 instructions, declined once written; of 60,000, before) is declined: DUAL_ERR_COMPILE
 * naming the rule under the compile tier; under AUTO the interpreter, with nothing compiled or
 * cached. */
Test(cpu_jit, a_module_over_the_source_rule_is_declined) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujit-rule-XXXXXX";
  dual_context *both[2];
  two_contexts(both, DUAL_TIER_COMPILE, DUAL_TIER_AUTO, dir);
  dual_context *comp = both[0], *aut = both[1];
  cr_assert_eq(dual_context_set_knob(aut, DUAL_KNOB_CPU_JIT_AFTER_MS, 0), DUAL_SUCCESS); /* (at once) */
  cr_assert_eq(dual_context_set_cache_dir(comp, dir), DUAL_SUCCESS);
  dual_program *big = NULL;
  cr_assert_eq(dual_program_compile(comp, "input x[2]\noutput f = sum(i in 0..20000, sin(x[0] * i + x[1]))\n", "big", &big),
               DUAL_SUCCESS, "%s", dual_context_last_error(comp));
  cr_assert(big->n_instr > 50000 && big->n_instr * 24 < DUAL_CPU_JIT_MAX_SOURCE);
  enum { B = 40 };
  uint64_t rng = 5;
  double *x = random_array(&rng, B * 2, 0.5, 1.5), y[B], want[B];
  cr_assert_eq(dual_eval(comp, big, B, x, 2, NULL, 0, y, 1, NULL), DUAL_ERR_COMPILE);
  cr_assert(strstr(dual_context_last_error(comp), "over the CPU tier's rule") != NULL &&
                strstr(dual_context_last_error(comp), "would take over") == NULL, /* (written, then declined) */
            "%s", dual_context_last_error(comp));
  /* a larger one is declined before its source is written (24 bytes an instruction at least) */
  dual_program *bigger = NULL;
  cr_assert_eq(dual_program_compile(comp, "input x[2]\noutput f = sum(i in 0..60000, sin(x[0] * i + x[1]))\n", "bigger",
                                    &bigger), DUAL_SUCCESS, "%s", dual_context_last_error(comp));
  cr_assert_gt(bigger->n_instr * 24, DUAL_CPU_JIT_MAX_SOURCE);
  cr_assert_eq(dual_eval(comp, bigger, B, x, 2, NULL, 0, y, 1, NULL), DUAL_ERR_COMPILE);
  cr_assert(strstr(dual_context_last_error(comp), "would take over") != NULL, "%s", dual_context_last_error(comp));
  dual_program_destroy(&bigger);
  cr_assert_eq(dual_context_set_tier(comp, DUAL_TIER_INTERPRET), DUAL_SUCCESS);
  cr_assert_eq(dual_eval(comp, big, B, x, 2, NULL, 0, want, 1, NULL), DUAL_SUCCESS);
  for (int r = 0; r < 3; ++r) {
    cr_assert_eq(dual_eval(aut, big, B, x, 2, NULL, 0, y, 1, NULL), DUAL_SUCCESS, "%s", dual_context_last_error(aut));
    cr_assert_eq(dual_context_last_tier(aut), DUAL_TIER_INTERPRET);
    cr_assert_eq(memcmp(y, want, sizeof y), 0);
  }
  char where[4096];
  int64_t entries = -1, bytes = 0;
  cr_assert_eq(dual_context_cache_usage(aut, where, sizeof where, &entries, &bytes), DUAL_SUCCESS);
  cr_assert_eq(entries, 0, "%lld cache entries", (long long)entries);
  free(x);
  dual_program_destroy(&big);
  dual_context_destroy(&comp);
  dual_context_destroy(&aut);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* No compiler: DUAL_ERR_COMPILE under the compile tier, naming what is missing; the interpreter
 * is unaffected. */
Test(cpu_jit, no_compiler_is_a_clear_error) {
  setenv("DUALBATCH_CC", "/nonexistent/cc", 1);
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx, "input x[2]\noutput a = x[0] * x[1]\n", "nocc", &prog), DUAL_SUCCESS);
  double x[4] = {1, 2, 3, 4}, y[2], J[4];
  cr_assert_eq(dual_context_set_tier(ctx, DUAL_TIER_COMPILE), DUAL_SUCCESS);
  cr_assert_eq(dual_jacobian(ctx, prog, 2, x, 2, NULL, 0, y, 1, J, 2, NULL), DUAL_ERR_COMPILE);
  cr_assert(strstr(dual_context_last_error(ctx), "DUALBATCH_CC=/nonexistent/cc") != NULL, "%s",
            dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_tier(ctx, DUAL_TIER_INTERPRET), DUAL_SUCCESS);
  cr_assert_eq(dual_jacobian(ctx, prog, 2, x, 2, NULL, 0, y, 1, J, 2, NULL), DUAL_SUCCESS);
  cr_assert(y[0] == 2.0 && y[1] == 12.0 && J[0] == 2.0 && J[1] == 1.0 && J[2] == 4.0 && J[3] == 3.0);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* A second C compiler gives the same bits: tcc (no optimizer, no vectorizer, no _Pragma; it calls
 * libm's sqrt and passes the rules' structs through memory) builds the modules of a random
 * program's Jacobian (forward mode), grad's reverse-mode gradient (a looped module) and hess's
 * Hessian, each bitwise the interpreter's.  Skipped where tcc is not installed. */
Test(cpu_jit, a_second_compiler_gives_the_same_bits) {
  const char *tcc = access("/usr/bin/tcc", X_OK) == 0 ? "/usr/bin/tcc" : NULL;
  if (tcc == NULL) cr_skip_test("tcc is not installed (Debian: apt-get install tcc)");
  setenv("DUALBATCH_CC", tcc, 1); /* (read at this process's first compile) */
  char dir[] = "/tmp/dualbatch-test-cpujitcc-XXXXXX";
  dual_context *ctx[2];
  two_contexts(ctx, DUAL_TIER_INTERPRET, DUAL_TIER_COMPILE, dir);
  uint64_t rng = 2026112904;
  dual_program *prog = rp_random_program(ctx[0], &rng, 60, 5, 2, 3);
  cr_assert_not_null(prog, "%s", dual_context_last_error(ctx[0]));
  double *x = random_array(&rng, 64 * 5, -2.0, 2.0), *p = random_array(&rng, 64 * 2, -2.0, 2.0);
  x[7] = NAN, x[11] = 0.0;
  for (int k = 0; k < 2; ++k) cr_assert_eq(dual_context_set_ad_mode(ctx[k], DUAL_AD_FORWARD), DUAL_SUCCESS);
  double y[2][64 * 3], J[2][64 * 15];
  int32_t st[2][64];
  for (int k = 0; k < 2; ++k)
    cr_assert_eq(dual_jacobian(ctx[k], prog, 64, x, 5, p, 2, y[k], 3, J[k], 15, st[k]), DUAL_SUCCESS, "%s",
                 dual_context_last_error(ctx[k]));
  cr_assert_eq(dual_context_last_tier(ctx[1]), DUAL_TIER_COMPILE);
  for (int i = 0; i < 64 * 3; ++i) cr_assert(same_bits(y[0][i], y[1][i]), "y[%d]", i);
  for (int i = 0; i < 64 * 15; ++i) cr_assert(same_bits(J[0][i], J[1][i]), "J[%d] %.17g vs %.17g", i, J[0][i], J[1][i]);
  cr_assert_eq(memcmp(st[0], st[1], sizeof st[0]), 0);
  free(x), free(p);
  dual_program_destroy(&prog);
  for (int k = 0; k < 2; ++k) cr_assert_eq(dual_context_set_ad_mode(ctx[k], DUAL_AD_REVERSE), DUAL_SUCCESS);
  dual_program *grad = bench_program(ctx[0], "grad");
  double *xg = random_array(&rng, 20 * 1024, -1.5, 1.5);
  xg[5] = INFINITY;
  compare_rev(ctx, grad, 20, xg, NULL, NULL, DUAL_MODE_GRADIENT, 2, 0, "grad by tcc");
  free(xg);
  dual_program_destroy(&grad);
  for (int k = 0; k < 2; ++k) cr_assert_eq(dual_context_set_ad_mode(ctx[k], DUAL_AD_FORWARD), DUAL_SUCCESS);
  dual_program *hess = bench_program(ctx[0], "hess");
  double *xh = random_array(&rng, 40 * 16, -1.0, 1.0);
  compare2(ctx, hess, 40, xh, NULL, NULL, DUAL_MODE_HESSIAN, DUAL_HESSIAN_PACKED, 2, "hess by tcc");
  free(xh);
  dual_program_destroy(&hess);
  for (int k = 0; k < 2; ++k) dual_context_destroy(&ctx[k]);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* DUAL_KNOB_CPU_JIT_AFTER_MS = 0: AUTO compiles a product at its first call and waits for it
 * (that call runs compiled); a product the tier declines (a long reverse-mode program not made of
 * loops) interprets, the reason in the note, no error. */
Test(cpu_jit, auto_at_zero_ms_compiles_at_the_first_call) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujit0-XXXXXX";
  dual_context *ctx[2];
  two_contexts(ctx, DUAL_TIER_INTERPRET, DUAL_TIER_AUTO, dir);
  cr_assert_eq(dual_context_set_knob(ctx[1], DUAL_KNOB_CPU_JIT_AFTER_MS, 0), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx[0], "input x[2]\noutput a = x[0] * sin(x[1])\noutput b = exp(x[0])\n", "zero", &prog),
               DUAL_SUCCESS);
  double x[6] = {0.5, 1.0, -1.0, 2.0, 3.0, 0.25}, y[2][6], J[2][12];
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(dual_jacobian(ctx[k], prog, 3, x, 2, NULL, 0, y[k], 2, J[k], 4, NULL), DUAL_SUCCESS);
    cr_assert_eq(dual_context_last_tier(ctx[k]), k ? DUAL_TIER_COMPILE : DUAL_TIER_INTERPRET, "context %d", k);
  }
  cr_assert_eq(memcmp(y[0], y[1], sizeof y[0]), 0);
  cr_assert_eq(memcmp(J[0], J[1], sizeof J[0]), 0);
  dual_program_destroy(&prog);
  dual_program *prod = NULL;
  cr_assert_eq(dual_program_compile(ctx[0], dual_test_too_long, "too long", &prod), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_ad_mode(ctx[1], DUAL_AD_REVERSE), DUAL_SUCCESS);
  double *xp = random_array(&(uint64_t){5}, 2 * 1000, -1.0, 1.0), g[2 * 1000];
  for (int call = 0; call < 2; ++call) { /* (the second call: declined already, no new attempt) */
    cr_assert_eq(dual_gradient(ctx[1], prod, 2, xp, 1000, NULL, 0, NULL, g, 1000, NULL), DUAL_SUCCESS, "%s",
                 dual_context_last_error(ctx[1]));
    cr_assert_eq(dual_context_last_tier(ctx[1]), DUAL_TIER_INTERPRET);
    if (call == 0) {
      const char *note = dual_context_last_note(ctx[1]);
      cr_assert(note != NULL && strstr(note, "did not serve") != NULL && strstr(note, "in segments") != NULL,
                "note: %s", note != NULL ? note : "(none)");
    }
  }
  free(xp);
  dual_program_destroy(&prod);
  for (int k = 0; k < 2; ++k) dual_context_destroy(&ctx[k]);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* dual_sgrad on the compiled tier: each sample's gradient runs through the product's module,
 * its draws keyed by the sample (jit_args.sample), and the estimates — means, standard errors,
 * status — are the interpreter's bits; forward and reverse mode, pathwise, antithetic and
 * score-function, over a batch of two of the CPU driver's chunks (4096 points), so that the
 * second chunk's point indices key the draws too. */
Test(cpu_jit, sgrad_runs_each_sample_compiled) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujitsg-XXXXXX";
  dual_context *ctx[2];
  two_contexts(ctx, DUAL_TIER_INTERPRET, DUAL_TIER_COMPILE, dir);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx[0], "input x[3]\nparam w\n"
                                    "output f = exp(0.2 * normal(x[0], 0.5 + x[1] * x[1])) * sin(x[2] + w * uniform())"
                                    " + (normal(x[1], 1) > x[0])\n", "sg", &prog),
               DUAL_SUCCESS, "%s", dual_context_last_error(ctx[0]));
  enum { B = 4096 + 300, S = 8 };
  uint64_t rng = 17;
  double *x = random_array(&rng, 3 * B, -1.0, 1.0), *p = random_array(&rng, B, 0.5, 1.5);
  double *f[2], *g[2], *se[2];
  int32_t *st[2];
  for (int k = 0; k < 2; ++k) {
    f[k] = malloc(sizeof(double) * B), g[k] = malloc(sizeof(double) * 3 * B), se[k] = malloc(sizeof(double) * 3 * B);
    st[k] = malloc(sizeof(int32_t) * B);
  }
  const int flags[] = {0, DUAL_SGRAD_ANTITHETIC, DUAL_SGRAD_SCORE, DUAL_SGRAD_SCORE | DUAL_SGRAD_ANTITHETIC};
  int64_t spread = 0;
  for (int ad = DUAL_AD_FORWARD; ad <= DUAL_AD_REVERSE; ++ad)
    for (int fl = 0; fl < 4; ++fl) {
      for (int k = 0; k < 2; ++k) {
        cr_assert_eq(dual_context_set_ad_mode(ctx[k], ad), DUAL_SUCCESS);
        cr_assert_eq(dual_sgrad(ctx[k], prog, B, x, 3, p, 1, S, 99, flags[fl], f[k], g[k], 3, se[k], 3, st[k]),
                     DUAL_SUCCESS, "ad %d flags %d: %s", ad, flags[fl], dual_context_last_error(ctx[k]));
        cr_assert_eq(dual_context_last_tier(ctx[k]), k ? DUAL_TIER_COMPILE : DUAL_TIER_INTERPRET, "ad %d flags %d", ad,
                     flags[fl]);
        cr_assert_eq(dual_context_last_ad_mode(ctx[k]), ad);
      }
      for (int64_t i = 0; i < B; ++i) {
        cr_assert(same_bits(f[0][i], f[1][i]), "ad %d flags %d: f[%lld] %.17g vs %.17g", ad, flags[fl], (long long)i,
                  f[0][i], f[1][i]);
        cr_assert_eq(st[0][i], st[1][i], "ad %d flags %d: status[%lld]", ad, flags[fl], (long long)i);
      }
      for (int64_t i = 0; i < 3 * B; ++i) {
        cr_assert(same_bits(g[0][i], g[1][i]) && same_bits(se[0][i], se[1][i]),
                  "ad %d flags %d: entry %lld: g %.17g vs %.17g, se %.17g vs %.17g", ad, flags[fl], (long long)i,
                  g[0][i], g[1][i], se[0][i], se[1][i]);
        spread += isfinite(se[0][i]) && se[0][i] > 0.0; /* (samples that differ: not all keyed alike) */
      }
    }
  cr_assert_gt(spread, 8 * 3 * B / 2, "standard errors above 0: %lld", (long long)spread);
  for (int k = 0; k < 2; ++k) free(f[k]), free(g[k]), free(se[k]), free(st[k]);
  free(x), free(p);
  dual_program_destroy(&prog);
  for (int k = 0; k < 2; ++k) dual_context_destroy(&ctx[k]);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* The entry of the one module in `dir` (a file named like a cache entry): its bytes in buf, their
 * count returned; -1 when there is not exactly one. */
static long one_entry(const char *dir, char *path, size_t cap, unsigned char *buf, long bufcap) {
  DIR *d = opendir(dir);
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strlen(e->d_name) == 64 + 6 && strcmp(e->d_name + 64, ".cubin") == 0) {
      snprintf(path, cap, "%s/%s", dir, e->d_name);
      ++n;
    }
  closedir(d);
  if (n != 1) return -1;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return -1;
  const long got = (long)fread(buf, 1, (size_t)bufcap, f);
  fclose(f);
  return got;
}

/* Across processes (the CLI, a process a run): under DUALBATCH_CPU_TIER=compile the first run
 * compiles into an empty cache directory (one entry), the next loads it (the entry unchanged) and
 * prints the same; a corrupted entry is passed over, compiled again and replaced by one the next
 * run loads as it is; the interpreter prints the same. */
Test(cpu_jit, the_disk_cache_across_processes_and_a_corrupt_entry) {
  need_cc();
  char dir[] = "/tmp/dualbatch-test-cpujit-XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char path[1200], cmd[4096], entry[1400];
  snprintf(path, sizeof path, "%s/p.db", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "input x[3]\noutput a = x[0] * sin(x[1]) / x[2]\noutput b = exp(x[0] - x[2]) + x[1] * x[1]\n");
  fclose(f);
  const char *tiers[5] = {"compile", "compile", "compile", "compile", "interpret"};
  static unsigned char prev[1 << 20], now[1 << 20];
  long nprev = 0;
  for (int k = 0; k < 5; ++k) {
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '0.5,1.5,2.5\\n-1,2,0.25\\n' | DUALBATCH_DEVICE=cpu DUALBATCH_CPU_TIER=%s "
             "DUALBATCH_CACHE_DIR='%s/c' timeout 300 '%s/tools/dualbatch' jacobian p.db > out%d 2> err%d",
             dir, tiers[k], dir, DUAL_BINARY_DIR, k, k);
    cr_assert_eq(system(cmd), 0, "run %d failed: %s", k, cmd);
    if (k > 0) {
      snprintf(cmd, sizeof cmd, "cmp -s '%s/out0' '%s/out%d'", dir, dir, k);
      cr_assert_eq(system(cmd), 0, "run %d printed other results", k);
    }
    char cdir[1300];
    snprintf(cdir, sizeof cdir, "%s/c", dir);
    const long n = one_entry(cdir, entry, sizeof entry, now, sizeof now);
    cr_assert_gt(n, 1000, "run %d: not one cache entry", k);
    const int same = n == nprev && memcmp(prev, now, (size_t)n) == 0;
    if (k == 1 || k == 3) cr_assert(same, "run %d: a load rewrote the entry", k);
    if (k == 2) cr_assert(!same, "the corrupt entry was not replaced");
    memcpy(prev, now, (size_t)n), nprev = n;
    if (k == 1) { /* corrupt a byte in its middle */
      FILE *e = fopen(entry, "r+b");
      cr_assert_not_null(e);
      cr_assert_eq(fseek(e, n / 2, SEEK_SET), 0);
      fputc(now[n / 2] ^ 0x5a, e);
      fclose(e);
      prev[n / 2] ^= 0x5a; /* the corrupt bytes, which run 2 must replace */
    }
  }
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}
