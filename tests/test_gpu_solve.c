/*
 * test_gpu_solve.c — dual_newton and dual_lsq on a GPU context give the CPU context's bits:
 * solutions, statuses, step counts and norms, for a batch that mixes converged points, fallbacks
 * and failures, the MGH Chebyquad and Brown problems of tests/ref, and the benchmark's kin_steady
 * (n = 32) and rob3 cells (dual_newton keeps their iterates on the device: kernels/gpu_newton.c),
 * also over more points than one device chunk holds and with the arrays in device memory (the
 * fallback's points copied out and back); dual_lsq (kernels/gpu_lsq.c) on every MGH case of
 * lmder's driver, on noisy data fits, on a bidiagonal chain of 20 unknowns and in device memory; a device that fails mid-solve under AUTO
 * leaves the rest to the CPU, and a GPU context reports the error.  With cuBLAS's batched LU
 * (a knob) and dual_lsq's cuBLAS QR (the rule from 64 x 8 on, or a knob) the results agree with the
 * CPU's to rounding instead of bitwise.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DUAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "dualbatch.h"
#include "mgh_equations.h"
#include "mgh_lsq.h"
#include "minpack_cases.h"
#include "random_program.h" /* rp_sweep_step */
#include "test_arrays.h"

/* The text of a repository file (the caller frees it). */
static char *read_source(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", DUAL_SOURCE_DIR, rel);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  char *text = calloc(1, 1 << 16);
  const size_t len = fread(text, 1, (1 << 16) - 1, f);
  fclose(f);
  cr_assert(len > 0 && len < (1 << 16) - 1);
  return text;
}

/* A number in [0, 1) from (b, k). */
static double unit(int64_t b, int k) {
  uint64_t z = (uint64_t)b * 0x9E3779B97F4A7C15ull + (uint64_t)k * 0xBF58476D1CE4E5B9ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull, z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* kin_steady's cells (bench/programs/kin_steady.db): inflows s and rough starts x0. */
static void kin_cells(int64_t B, double *x0, double *s) {
  for (int64_t b = 0; b < B; ++b)
    for (int i = 0; i < 32; ++i) s[b * 32 + i] = 0.05 + 0.1 * unit(b, i), x0[b * 32 + i] = 0.2 + 0.2 * unit(b, 100 + i);
}

/* Points whose ld-strided rows of a and b (n entries) differ in any bit: the count, and a line on
 * the first (its index, both rows' first entries, both statuses) into why. */
static int64_t rows_differ(const double *a, const double *b, int64_t B, int64_t ld, int n, const int32_t *ia,
                           const int32_t *ib, char *why, size_t cap) {
  int64_t count = 0;
  why[0] = '\0';
  for (int64_t k = 0; k < B; ++k) {
    if (memcmp(a + k * ld, b + k * ld, sizeof(double) * (size_t)n) == 0) continue;
    if (count++ > 0) continue;
    int used = snprintf(why, cap, "first at point %lld (statuses %d vs %d):", (long long)k, ia[k], ib[k]);
    for (int j = 0; j < n && used > 0 && (size_t)used < cap; ++j)
      used += snprintf(why + used, cap - (size_t)used, " %a vs %a;", a[k * ld + j], b[k * ld + j]);
  }
  return count;
}

/* Solve on a CPU and a GPU context and compare: bitwise (tol = 0), or (the cuBLAS LU, which
 * rounds differently) the same statuses, step counts within one, and the converged points'
 * solutions within tol relative to max(|x|, 1). */
static int gpu_tier = -1; /* >= 0: the GPU context's tier (dual_context_set_tier), else the default */
static int lock_gpu_arrays; /* the GPU's x and p page-locked (dual_host_pin) for its solve */

static void solve_compare(const char *src, int lsq, int n, int np, int64_t B, const double *x0, const double *p,
                          double tol) {
  dual_context *cpu = NULL, *gpu = NULL;
  cr_assert_eq(dual_context_create(&cpu, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_create(&gpu, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  if (gpu_tier >= 0) cr_assert_eq(dual_context_set_tier(gpu, gpu_tier), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(cpu, src, "solve", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
  double *x[2], *fn[2];
  int32_t *info[2], *it[2];
  dual_context *ctx[2] = {cpu, gpu};
  for (int d = 0; d < 2; ++d) {
    x[d] = malloc(sizeof(double) * (size_t)(B * n)), fn[d] = malloc(sizeof(double) * (size_t)B);
    info[d] = malloc(sizeof(int32_t) * (size_t)B), it[d] = malloc(sizeof(int32_t) * (size_t)B);
    memcpy(x[d], x0, sizeof(double) * (size_t)(B * n));
    const int lock = d == 1 && lock_gpu_arrays, lock_p = lock && np > 0 && p != NULL;
    if (lock) cr_assert_eq(dual_host_pin(gpu, x[d], (int64_t)sizeof(double) * B * n), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
    if (lock_p) cr_assert_eq(dual_host_pin(gpu, (void *)p, (int64_t)sizeof(double) * B * np), DUAL_SUCCESS);
    const int st = lsq ? dual_lsq(ctx[d], prog, NULL, B, x[d], n, p, np, info[d], it[d], fn[d])
                       : dual_newton(ctx[d], prog, NULL, B, x[d], n, p, np, info[d], it[d], fn[d]);
    cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx[d]));
    if (lock) cr_assert_eq(dual_host_unpin(gpu, x[d]), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
    if (lock_p) cr_assert_eq(dual_host_unpin(gpu, (void *)p), DUAL_SUCCESS);
  }
  cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
  int64_t converged = 0;
  for (int64_t b = 0; b < B; ++b) converged += info[0][b] == DUAL_SOLVE_CONVERGED;
  if (tol == 0.0) {
    char why[400];
    const int64_t differ = rows_differ(x[0], x[1], B, n, n, info[0], info[1], why, sizeof why);
    cr_assert(differ == 0, "solutions differ at %lld of %lld points; %s", (long long)differ, (long long)B, why);
    cr_assert(memcmp(fn[0], fn[1], sizeof(double) * (size_t)B) == 0, "norms differ");
    cr_assert(memcmp(info[0], info[1], sizeof(int32_t) * (size_t)B) == 0, "statuses differ");
    cr_assert(memcmp(it[0], it[1], sizeof(int32_t) * (size_t)B) == 0, "step counts differ");
  } else {
    double worst = 0.0;
    for (int64_t b = 0; b < B; ++b) {
      cr_assert_eq(info[0][b], info[1][b], "point %lld: status %d on the CPU, %d on the GPU", (long long)b,
                   info[0][b], info[1][b]);
      cr_assert(abs(it[0][b] - it[1][b]) <= 1, "point %lld: %d steps on the CPU, %d on the GPU", (long long)b,
                it[0][b], it[1][b]);
      for (int j = 0; j < n && info[0][b] == DUAL_SOLVE_CONVERGED; ++j) {
        const double a = x[0][b * n + j], g = x[1][b * n + j];
        worst = fmax(worst, fabs(a - g) / fmax(fabs(a), 1.0));
      }
    }
    cr_assert(worst <= tol, "the solutions differ by %.3e relative, more than %.1e", worst, tol);
    cr_log_info("%s, %lld points: %lld converged, the same statuses, solutions within %.2e", lsq ? "dual_lsq" : "dual_newton",
                (long long)B, (long long)converged, worst);
  }
  if (tol == 0.0)
    cr_log_info("%s, %lld points: %lld converged, bitwise equal on CPU and GPU", lsq ? "dual_lsq" : "dual_newton",
                (long long)B, (long long)converged);
  for (int d = 0; d < 2; ++d) free(x[d]), free(fn[d]), free(info[d]), free(it[d]);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

static void solve_both(const char *src, int lsq, int n, int np, int64_t B, const double *x0, const double *p) {
  solve_compare(src, lsq, n, np, B, x0, p, 0.0);
}

/* The two-unknown batch of newton_and_lsq and the device-memory case: parameters (a, b) and starts
 * (x, y) swept over 20000 points, every k-th of them under DUALBATCH_TEST_SWEEP_DIV=k; x0 rows of
 * ld entries (those past the two unknowns 7.0).  Returns the point count. */
static int two_unknown_sweep(int ld, double **x0, double **p) {
  const int step = rp_sweep_step(), B = 20000 / step;
  *x0 = malloc(sizeof(double) * (size_t)(ld * B)), *p = malloc(sizeof(double) * 2 * (size_t)B);
  cr_assert(*x0 != NULL && *p != NULL);
  for (int b = 0; b < B; ++b) {
    const int t = b * step;
    (*p)[2 * b] = -2.0 + 0.0004 * t, (*p)[2 * b + 1] = 0.5 * sin(0.1 * t);
    (*x0)[ld * b] = 0.3 + 0.0001 * t, (*x0)[ld * b + 1] = -1.0 + 0.00015 * t;
    for (int j = 2; j < ld; ++j) (*x0)[ld * b + j] = 7.0;
  }
  return B;
}

/* The two-unknown sweep by dual_newton (two equations) and dual_lsq (a third, residual one). */
static void solve_two_unknown_sweep(void) {
  double *x0, *p;
  const int B = two_unknown_sweep(2, &x0, &p);
  solve_both("input x; input y; param a; param b\noutput f = x^2 + y - a; output g = x * y - b\n", 0, 2, 2, B, x0, p);
  solve_both("input x; input y; param a; param b\n"
             "output f = x^2 + y - a; output g = x * y - b; output h = 0.1 * (x - y)\n", 1, 2, 2, B, x0, p);
  free(x0), free(p);
}

Test(gpu_solve, newton_and_lsq_equal_the_cpu_bitwise) {
  need_gpu();
  solve_two_unknown_sweep();
  /* MGH Chebyquad n = 9 and Brown almost-linear n = 10 from 1, 10 and 100 times their starts */
  const int probs[2][2] = {{7, 9}, {8, 10}};
  for (int k = 0; k < 2; ++k) {
    const int nprob = probs[k][0], n = probs[k][1];
    double xs[3 * 10];
    for (int f = 0; f < 3; ++f) mgh_equations_start(nprob, n, f == 0 ? 1 : f == 1 ? 10 : 100, xs + f * n);
    char *src = mgh_equations_source(nprob, n);
    solve_both(src, 0, n, 0, 3, xs, NULL);
    solve_both(src, 1, n, 0, 3, xs, NULL);
    free(src);
  }
}

/* The starts and parameters page-locked (dual_host_pin): the solvers copy them straight to the
 * device and the solutions straight back (gpu_solve_io.c), with the CPU's bits: the two-unknown
 * sweep (dual_newton and dual_lsq) and kin_steady's cells (n = 32, several thousand points). */
Test(gpu_solve, page_locked_arrays_equal_the_cpu_bitwise) {
  need_gpu();
  lock_gpu_arrays = 1;
  solve_two_unknown_sweep();
  const int64_t K = 40000 / rp_sweep_step();
  double *kx = malloc(sizeof(double) * 32 * (size_t)K), *ks = malloc(sizeof(double) * 32 * (size_t)K);
  cr_assert(kx != NULL && ks != NULL);
  kin_cells(K, kx, ks);
  char *src = read_source("bench/programs/kin_steady.db");
  solve_both(src, 0, 32, 32, K, kx, ks);
  free(src), free(kx), free(ks);
  lock_gpu_arrays = 0;
}

/* Banded Jacobians, whose LU keeps to the band on both devices (solve/lu_small.h): MGH's discrete
 * boundary value (9) and Broyden tridiagonal (13) problems, band (1, 1), and Broyden banded (14),
 * band (5, 1), at n = 8 (a thread per point), 12 (16 lanes) and 24 (a warp), from 1, 10 and 100
 * times their starts; Bratu's problem on 15 points (bench/programs/bratu15.db, band (1, 1)), a lam
 * per cell in [0.5, 3.4]. */
Test(gpu_solve, banded_jacobians_equal_the_cpu_bitwise) {
  need_gpu();
  const int probs[3] = {9, 13, 14}, sizes[3] = {8, 12, 24};
  for (int k = 0; k < 3; ++k)
    for (int z = 0; z < 3; ++z) {
      const int nprob = probs[k], n = sizes[z];
      double xs[3 * 24];
      for (int f = 0; f < 3; ++f) mgh_equations_start(nprob, n, f == 0 ? 1 : f == 1 ? 10 : 100, xs + f * n);
      char *src = mgh_equations_source(nprob, n);
      solve_both(src, 0, n, 0, 3, xs, NULL);
      free(src);
    }
  enum { B = 20000 };
  double *x0 = malloc(sizeof(double) * 15 * B), *p = malloc(sizeof(double) * B);
  for (int64_t b = 0; b < B; ++b) {
    p[b] = 0.5 + 2.9 * unit(b, 0);
    for (int i = 0; i < 15; ++i) x0[b * 15 + i] = 0.3 * unit(b, 1 + i);
  }
  char *src = read_source("bench/programs/bratu15.db");
  solve_both(src, 0, 15, 1, B, x0, p);
  free(src);
  free(x0), free(p);
}

Test(gpu_solve, stiff_and_n32_cells_equal_the_cpu_bitwise) {
  need_gpu();
  enum { B = 20000 };
  double *x0 = malloc(sizeof(double) * 32 * B), *p = malloc(sizeof(double) * 32 * B);
  kin_cells(B, x0, p);
  char *src = read_source("bench/programs/kin_steady.db");
  solve_both(src, 0, 32, 32, B, x0, p);
  setenv("DUALBATCH_SOLVE_LU", "1", 1); /* the thread-per-point step, as for n <= 8 or n > 32 */
  solve_both(src, 0, 32, 32, B, x0, p);
  unsetenv("DUALBATCH_SOLVE_LU");
  free(src);
  /* rob3: rates over orders of magnitude, starts far from the steady state */
  for (int64_t b = 0; b < B; ++b) {
    p[4 * b] = 0.04 * (0.5 + unit(b, 0)), p[4 * b + 1] = 3e7 * (0.5 + unit(b, 1));
    p[4 * b + 2] = 1e4 * (0.5 + unit(b, 2)), p[4 * b + 3] = 0.5 + unit(b, 3);
    x0[3 * b] = 10.0 * unit(b, 4), x0[3 * b + 1] = 1e-5 * unit(b, 5), x0[3 * b + 2] = 5.0 * unit(b, 6);
  }
  src = read_source("bench/programs/rob3.db");
  solve_both(src, 0, 3, 4, B, x0, p);
  setenv("DUALBATCH_SOLVE_LU", "2", 1); /* the 16-lane groups, as for 8 < n <= 16 */
  solve_both(src, 0, 3, 4, B, x0, p);
  unsetenv("DUALBATCH_SOLVE_LU");
  free(src), free(x0), free(p);
}

/* 1 when the GPU context's tier refuses the program's Jacobian as over the compiled tier's size
 * rule (DUALBATCH_TIER=compile; the error must say so), 0 when it evaluates it. */
static int over_compile_rule(const char *src, int n, int m, const double *x) {
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(ctx, src, "rule", &prog), DUAL_SUCCESS);
  double *F = malloc(sizeof(double) * (size_t)m), *J = malloc(sizeof(double) * (size_t)(m * n));
  const int st = dual_jacobian(ctx, prog, 1, x, n, NULL, 0, F, m, J, (int64_t)m * n, NULL);
  const int over = st == DUAL_ERR_COMPILE;
  if (over)
    cr_assert_not_null(strstr(dual_context_last_error(ctx), "over the compiled tier's rule"), "%s",
                       dual_context_last_error(ctx));
  else
    cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  free(F), free(J);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return over;
}

/* dual_lsq keeps its iterates and state on the device (kernels/gpu_lsq.c): the CPU's bits on every
 * MGH least-squares case of MINPACK's lmder driver (problems 1-18, starts 1, 10, 100 times the
 * standard one, each problem's cases one batch), and on a batch of noisy exponential fits (8
 * residuals, 2 unknowns, per-point data as parameters) whose statuses include converged points
 * and points that stop at the evaluation limit. */
Test(gpu_solve, lsq_mgh_cases_and_data_fits_equal_the_cpu_bitwise) {
  need_gpu();
  setenv("DUALBATCH_SOLVE_QR", "1", 1); /* the kernel's QR for every size (Osborne 2, 65 x 11, too) */
  static minpack_case cs[64];
  char why[256];
  const int nc = minpack_read_cases("lmddrv.fortran.ref", "test_lmder_reference_solutions.txt", cs, 64, why, sizeof why);
  cr_assert_eq(nc, 53, "%s", why);
  int batches = 0, over_rule = 0;
  for (int c = 0; c < nc;) {
    int e = c; /* the cases of one (problem, n, m) */
    double xs[3 * 40];
    while (e < nc && e - c < 3 && cs[e].nprob == cs[c].nprob && cs[e].n == cs[c].n && cs[e].m == cs[c].m) {
      mgh_lsq_start(cs[e].nprob, cs[e].n, cs[e].factor, xs + (e - c) * cs[c].n);
      ++e;
    }
    char *src = mgh_lsq_source(cs[c].nprob, cs[c].n, cs[c].m);
    cr_assert_not_null(src);
    /* a program over the compiled tier's size rule fails under DUALBATCH_TIER=compile (as
     * documented); it is compared on AUTO then, which interprets it */
    gpu_tier = over_compile_rule(src, cs[c].n, cs[c].m, xs) ? DUAL_TIER_AUTO : -1;
    over_rule += gpu_tier >= 0;
    solve_both(src, 1, cs[c].n, 0, e - c, xs, NULL);
    gpu_tier = -1;
    free(src);
    ++batches, c = e;
  }
  cr_log_info("dual_lsq: %d MGH cases in %d batches, bitwise equal on CPU and GPU (%d programs over the compiled "
              "tier's size rule, compared on AUTO)", nc, batches, over_rule);
  const int64_t B = 20000 / rp_sweep_step(); /* fewer fits under DUALBATCH_TEST_SWEEP_DIV */
  double *x0 = malloc(sizeof(double) * 2 * B), *y = malloc(sizeof(double) * 8 * B);
  for (int64_t b = 0; b < B; ++b) {
    const double c = 0.5 + 2.0 * unit(b, 0), k = 0.1 + unit(b, 1);
    for (int i = 0; i < 8; ++i) y[8 * b + i] = c * exp(-k * i / 4) + 0.01 * (unit(b, 2 + i) - 0.5);
    x0[2 * b] = 4.0 * unit(b, 10), x0[2 * b + 1] = 3.0 * unit(b, 11) - 1.0;
  }
  solve_both("input c; input k; param y[8]\noutput r[8]\nfor i in 0..8 { r[i] = c * exp(-k * i / 4) - y[i] }\n",
             1, 2, 8, B, x0, y);
  free(x0), free(y);
  /* a chain of n = 20 unknowns (two compiled passes of 16 lanes), m = 21 residuals, J bidiagonal,
   * per-cell targets t */
  const int64_t BC = 4000 / rp_sweep_step();
  double *xc = malloc(sizeof(double) * 20 * BC), *t = malloc(sizeof(double) * BC);
  for (int64_t b = 0; b < BC; ++b) {
    t[b] = 0.2 + 0.6 * unit(b, 0);
    for (int i = 0; i < 20; ++i) xc[b * 20 + i] = 2.0 * unit(b, 1 + i) - 1.0;
  }
  solve_both("input x[20]; param t\noutput r[21]\nr[0] = x[0] - t\n"
             "for i in 1..20 { r[i] = 10 * (x[i] - x[i - 1]^2) }\nr[20] = exp(x[19]) - 1 - t\n",
             1, 20, 1, BC, xc, t);
  free(xc), free(t);
  unsetenv("DUALBATCH_SOLVE_QR");
}

/* dual_lsq's cuBLAS rounds (kernels/gpu_lsq.c: [J F] reduced by cuBLAS's unpivoted QR to n + 1
 * rows, then the kernel's pivoted QR) against the CPU's LM on the m x n J itself: every point ends
 * with the CPU's status, at the CPU's minimum (||F|| to 1e-10 relative) and solution (1e-6), its
 * Jacobian count within 2 of the CPU's.  Osborne 2 (MGH 18, 65 x 11: the rule's cuBLAS) from
 * 2000 starts around the standard one, and MINPACK's own case of it against lmder's final norm;
 * the noisy exponential fits (8 x 2) with the knob's cuBLAS. */
static void lsq_compare_rounding(const char *src, int n, int np, int64_t B, const double *x0, const double *p,
                                 int on_auto) {
  dual_context *ctx[2] = {NULL, NULL};
  cr_assert_eq(dual_context_create(&ctx[0], DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_create(&ctx[1], DUAL_DEVICE_GPU), DUAL_SUCCESS);
  if (on_auto) cr_assert_eq(dual_context_set_tier(ctx[1], DUAL_TIER_AUTO), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx[0], src, "lsq", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx[0]));
  double *x[2], *fn[2];
  int32_t *info[2], *it[2];
  for (int d = 0; d < 2; ++d) {
    x[d] = malloc(sizeof(double) * (size_t)(B * n)), fn[d] = malloc(sizeof(double) * (size_t)B);
    info[d] = malloc(sizeof(int32_t) * (size_t)B), it[d] = malloc(sizeof(int32_t) * (size_t)B);
    memcpy(x[d], x0, sizeof(double) * (size_t)(B * n));
    cr_assert_eq(dual_lsq(ctx[d], prog, NULL, B, x[d], n, p, np, info[d], it[d], fn[d]), DUAL_SUCCESS, "%s",
                 dual_context_last_error(ctx[d]));
  }
  cr_assert_eq(dual_context_last_device(ctx[1]), DUAL_DEVICE_GPU);
  cr_assert_null(strstr(dual_context_last_note(ctx[1]), "in-kernel QR"), "note: %s", dual_context_last_note(ctx[1]));
  double worst_x = 0.0, worst_f = 0.0;
  int64_t converged = 0, bitwise = 0;
  for (int64_t b = 0; b < B; ++b) {
    cr_assert_eq(info[0][b], info[1][b], "point %lld: status %d on the CPU, %d on the GPU", (long long)b, info[0][b],
                 info[1][b]);
    cr_assert(abs(it[0][b] - it[1][b]) <= 2, "point %lld: %d Jacobians on the CPU, %d on the GPU", (long long)b,
              it[0][b], it[1][b]);
    converged += info[0][b] == DUAL_SOLVE_CONVERGED;
    bitwise += memcmp(x[0] + b * n, x[1] + b * n, sizeof(double) * (size_t)n) == 0;
    worst_f = fmax(worst_f, fabs(fn[0][b] - fn[1][b]) / fmax(fn[0][b], 1e-300));
    for (int j = 0; j < n; ++j)
      worst_x = fmax(worst_x, fabs(x[0][b * n + j] - x[1][b * n + j]) / fmax(fabs(x[0][b * n + j]), 1.0));
  }
  cr_assert(converged > B / 2, "%lld of %lld converged", (long long)converged, (long long)B);
  cr_assert(worst_f <= 1e-10, "||F|| differs by %.3e relative", worst_f);
  cr_assert(worst_x <= 1e-6, "the solutions differ by %.3e relative", worst_x);
  cr_log_info("dual_lsq, cuBLAS rounds, %lld points: %lld converged, the CPU's statuses, ||F|| within %.2e, x within "
              "%.2e (%lld points bitwise)", (long long)B, (long long)converged, worst_f, worst_x, (long long)bitwise);
  for (int d = 0; d < 2; ++d) free(x[d]), free(fn[d]), free(info[d]), free(it[d]);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx[0]), dual_context_destroy(&ctx[1]);
}

Test(gpu_solve, cublas_qr_agrees_with_the_cpu_to_rounding) {
  need_gpu();
  char *src = mgh_lsq_source(18, 11, 65);
  cr_assert_not_null(src);
  enum { B = 2000 };
  double *x0 = malloc(sizeof(double) * 11 * B);
  for (int64_t b = 0; b < B; ++b) {
    mgh_lsq_start(18, 11, 1.0, x0 + b * 11);
    for (int j = 0; j < 11; ++j) x0[b * 11 + j] *= 1.0 + 0.1 * (unit(b, j) - 0.5);
  }
  /* over the compiled tier's size rule: compared on AUTO then (as in the bitwise test above) */
  const int on_auto = over_compile_rule(src, 11, 65, x0);
  lsq_compare_rounding(src, 11, 0, B, x0, NULL, on_auto); /* the rule: cuBLAS at 65 x 11 */
  /* MINPACK's cases of problem 18 against lmder's norms */
  static minpack_case cs[64];
  char why[256];
  const int nc = minpack_read_cases("lmddrv.fortran.ref", "test_lmder_reference_solutions.txt", cs, 64, why, sizeof why);
  cr_assert_eq(nc, 53, "%s", why);
  dual_context *gpu = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&gpu, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  if (on_auto) cr_assert_eq(dual_context_set_tier(gpu, DUAL_TIER_AUTO), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(gpu, src, "osborne2", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
  int cases = 0;
  for (int c = 0; c < nc; ++c) {
    if (cs[c].nprob != 18) continue;
    double x[11], fn;
    int32_t info, it;
    mgh_lsq_start(18, 11, cs[c].factor, x);
    cr_assert_eq(dual_lsq(gpu, prog, NULL, 1, x, 11, NULL, 0, &info, &it, &fn), DUAL_SUCCESS, "%s",
                 dual_context_last_error(gpu));
    cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
    if (cs[c].info >= 1 && cs[c].info <= 4) {
      cr_assert_eq(info, DUAL_SOLVE_CONVERGED, "start x %g: status %d", cs[c].factor, info);
      cr_assert(fabs(fn - cs[c].fnorm_final) <= 1e-7 * cs[c].fnorm_final, "start x %g: ||F|| %.10g, lmder's %.10g",
                cs[c].factor, fn, cs[c].fnorm_final);
    }
    ++cases;
  }
  cr_assert(cases >= 1, "%d cases of problem 18", cases); /* lmder's driver runs it from the standard start */
  dual_program_destroy(&prog);
  dual_context_destroy(&gpu);
  free(src), free(x0);
  /* the knob's cuBLAS on a small m x n */
  enum { BE = 4000 };
  double *xe = malloc(sizeof(double) * 2 * BE), *y = malloc(sizeof(double) * 8 * BE);
  for (int64_t b = 0; b < BE; ++b) {
    const double c = 0.5 + 2.0 * unit(b, 0), k = 0.1 + unit(b, 1);
    for (int i = 0; i < 8; ++i) y[8 * b + i] = c * exp(-k * i / 4) + 0.01 * (unit(b, 2 + i) - 0.5);
    xe[2 * b] = c * (0.5 + unit(b, 10)), xe[2 * b + 1] = k * (0.5 + unit(b, 11));
  }
  setenv("DUALBATCH_SOLVE_QR", "2", 1);
  lsq_compare_rounding("input c; input k; param y[8]\noutput r[8]\nfor i in 0..8 { r[i] = c * exp(-k * i / 4) - y[i] }\n",
                       2, 8, BE, xe, y, 0);
  unsetenv("DUALBATCH_SOLVE_QR");
  free(xe), free(y);
}

/* cuBLAS's batched LU (DUALBATCH_SOLVE_LU=3): the CPU's statuses and its solutions to
 * rounding, on kin_steady (n = 32), on Bratu's problem on 48 points (bench/programs/bratu48.db;
 * lam up to 3.4, near the fold at 3.51; there also the rule's thread-per-point LU, bitwise), and
 * on a batch with singular Jacobians (a rank-1 system: the in-kernel LU and cuBLAS's pivots must both call it singular,
 * and the fallback then runs on the host alike). */
Test(gpu_solve, cublas_lu_agrees_with_the_cpu_to_rounding) {
  need_gpu();
  const int64_t B = 20000 / rp_sweep_step(); /* fewer cells under DUALBATCH_TEST_SWEEP_DIV */
  double *x0 = malloc(sizeof(double) * 48 * B), *p = malloc(sizeof(double) * 32 * B);
  kin_cells(B, x0, p);
  char *src = read_source("bench/programs/kin_steady.db");
  setenv("DUALBATCH_SOLVE_LU", "3", 1);
  solve_compare(src, 0, 32, 32, B, x0, p, 1e-12);
  free(src);
  for (int64_t b = 0; b < B; ++b) {
    p[b] = 0.5 + 2.9 * unit(b, 0);
    for (int i = 0; i < 48; ++i) x0[b * 48 + i] = 0.3 * unit(b, 1 + i);
  }
  src = read_source("bench/programs/bratu48.db");
  solve_compare(src, 0, 48, 1, B, x0, p, 1e-12);
  unsetenv("DUALBATCH_SOLVE_LU"); /* the rule: the thread per point for n > 32, bitwise */
  solve_compare(src, 0, 48, 1, B, x0, p, 0.0);
  free(src);
  setenv("DUALBATCH_SOLVE_LU", "3", 1);
  for (int b = 0; b < 64; ++b) x0[2 * b] = 0.1 * b - 3.0, x0[2 * b + 1] = 1.0 - 0.05 * b, p[b] = 0.5 + 0.1 * b;
  solve_compare("input x; input y; param a\noutput f = (x + y)^2 - a; output g = 2 * (x + y)^2 - 2 * a\n", 0, 2, 1,
                64, x0, p, 1e-12);
  unsetenv("DUALBATCH_SOLVE_LU");
  free(x0), free(p);
}

/* The two points of x^2 = a, y = x (a = 2, 9) from the starts x0 solved by `solver` (dual_newton or
 * dual_lsq) on a context of `device`: both converge (to `tol`), the call ends on `ran_on`, and the
 * note holds `note`. */
static const char *two_points = "input x; input y; param a\noutput f = x^2 - a; output g = y - x\n";
typedef int (*solver_fn)(dual_context *, const dual_program *, const dual_solve_options *, int64_t,
                         double *, int64_t, const double *, int64_t, int32_t *, int32_t *, double *);

static void solve_two_points_from(const double x0[4], solver_fn solver, dual_device device,
                                  dual_device ran_on, const char *note, double tol) {
  double x[4], p[2] = {2, 9}, fn[2];
  int32_t info[2], it[2];
  memcpy(x, x0, sizeof x);
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&ctx, device), DUAL_SUCCESS);
  cr_assert_eq(dual_context_device(ctx), DUAL_DEVICE_GPU);
  cr_assert_eq(dual_program_compile(ctx, two_points, "two_points", &prog), DUAL_SUCCESS);
  cr_assert_eq(solver(ctx, prog, NULL, 2, x, 2, p, 1, info, it, fn), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_device(ctx), ran_on);
  cr_assert_not_null(strstr(dual_context_last_note(ctx), note), "note: %s", dual_context_last_note(ctx));
  cr_assert(info[0] == DUAL_SOLVE_CONVERGED && info[1] == DUAL_SOLVE_CONVERGED, "info %d %d", info[0], info[1]);
  const double want[4] = {sqrt(2.0), sqrt(2.0), 3.0, 3.0};
  for (int j = 0; j < 4; ++j) cr_assert_float_eq(x[j], want[j], tol, "x[%d] = %.17g", j, x[j]);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

static const double plain_starts[4] = {1, 1, 3, 3};

static void solve_two_points(dual_device device, dual_device ran_on, const char *note) {
  solve_two_points_from(plain_starts, dual_newton, device, ran_on, note, 1e-14);
}

/* Without cuBLAS (DUALBATCH_CUBLAS names no library) the knob's cuBLAS LU gives way to the rule's
 * in-kernel LU, and the note says so. */
Test(gpu_solve, no_cublas_keeps_the_in_kernel_lu_and_says_so) {
  need_gpu();
  setenv("DUALBATCH_CUBLAS", "/nonexistent/libcublas.so", 1);
  setenv("DUALBATCH_SOLVE_LU", "3", 1);
  solve_two_points(DUAL_DEVICE_GPU, DUAL_DEVICE_GPU, "in-kernel LU ran: cuBLAS is not available");
  unsetenv("DUALBATCH_SOLVE_LU"), unsetenv("DUALBATCH_CUBLAS");
}

/* The same for dual_lsq's cuBLAS QR (DUALBATCH_SOLVE_QR=2): the kernel's QR, the CPU's bits, a note. */
Test(gpu_solve, no_cublas_keeps_the_in_kernel_qr_and_says_so) {
  need_gpu();
  setenv("DUALBATCH_CUBLAS", "none", 1);
  setenv("DUALBATCH_SOLVE_QR", "2", 1);
  dual_context *ctx[2] = {NULL, NULL};
  cr_assert_eq(dual_context_create(&ctx[0], DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_create(&ctx[1], DUAL_DEVICE_GPU), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx[0], "input c; input k; param y[4]\noutput r[4]\n"
                                            "for i in 0..4 { r[i] = c * exp(-k * i) - y[i] }\n", "fit", &prog), DUAL_SUCCESS);
  const double y[8] = {2, 1.2, 0.75, 0.45, 1, 0.5, 0.26, 0.12};
  double x[2][4];
  int32_t info[2][2];
  for (int d = 0; d < 2; ++d) {
    const double x0[4] = {1, 0.1, 1, 0.1};
    memcpy(x[d], x0, sizeof x0);
    cr_assert_eq(dual_lsq(ctx[d], prog, NULL, 2, x[d], 2, y, 4, info[d], NULL, NULL), DUAL_SUCCESS, "%s",
                 dual_context_last_error(ctx[d]));
  }
  cr_assert_eq(dual_context_last_device(ctx[1]), DUAL_DEVICE_GPU);
  cr_assert_not_null(strstr(dual_context_last_note(ctx[1]), "dual_lsq: the in-kernel QR ran: cuBLAS is not available"),
                     "note: %s", dual_context_last_note(ctx[1]));
  cr_assert(info[0][0] == DUAL_SOLVE_CONVERGED && info[0][1] == DUAL_SOLVE_CONVERGED, "info %d %d", info[0][0], info[0][1]);
  cr_assert(memcmp(x[0], x[1], sizeof x[0]) == 0 && memcmp(info[0], info[1], sizeof info[0]) == 0);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx[0]), dual_context_destroy(&ctx[1]);
  unsetenv("DUALBATCH_SOLVE_QR"), unsetenv("DUALBATCH_CUBLAS");
}

Test(gpu_solve, more_points_than_a_device_chunk_equal_the_cpu_bitwise) {
  need_gpu();
  /* the device chunk holds at most 2 GiB of work arrays, about 220000 points for n = 32 */
  enum { B = 300000 };
  double *x0 = malloc(sizeof(double) * 32 * B), *p = malloc(sizeof(double) * 32 * B);
  kin_cells(B, x0, p);
  char *src = read_source("bench/programs/kin_steady.db");
  solve_both(src, 0, 32, 32, B, x0, p);
  free(src), free(x0), free(p);
}

Test(gpu_solve, a_device_failure_falls_back_under_auto_and_is_reported_on_the_gpu) {
  need_gpu();
  setenv("DUALBATCH_GPU_FAULT", "alloc", 1);
  solve_two_points(DUAL_DEVICE_AUTO, DUAL_DEVICE_CPU, "dual_newton solved 2 of its 2 points on the CPU");
  /* a point whose J is singular at its start (x = 0) takes the rescue, which calls dual_lsq and
   * Newton again (each falling back in turn): the call still reports its own first fallback */
  const double singular_start[4] = {0, 1, 3, 3};
  solve_two_points_from(singular_start, dual_newton, DUAL_DEVICE_AUTO, DUAL_DEVICE_CPU,
                        "dual_newton solved 2 of its 2 points on the CPU", 1e-12);
  solve_two_points_from(plain_starts, dual_lsq, DUAL_DEVICE_AUTO, DUAL_DEVICE_CPU,
                        "dual_lsq solved 2 of its 2 points on the CPU", 1e-10);
  double x[4] = {1, 1, 3, 3}, p[2] = {2, 9}, fn[2];
  int32_t info[2], it[2];
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(ctx, two_points, "fault", &prog), DUAL_SUCCESS);
  cr_assert_eq(dual_newton(ctx, prog, NULL, 2, x, 2, p, 1, info, it, fn), DUAL_ERR_NO_MEMORY);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "dual_newton: allocating the solver's device arrays"),
                     "error: %s", dual_context_last_error(ctx));
  cr_assert_eq(dual_lsq(ctx, prog, NULL, 2, x, 2, p, 1, info, it, fn), DUAL_ERR_NO_MEMORY);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "dual_lsq: allocating the solver's device arrays"),
                     "error: %s", dual_context_last_error(ctx));
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

#ifdef DUAL_HAVE_CUDA
/* dual_newton on device-memory arrays (strided x, NULL iters) gives the host arrays' bits,
 * with points that take the fallback; so does dual_lsq (the gap of the stride untouched); mixed
 * memory is refused. */
Test(gpu_solve, device_memory_arrays_equal_host_arrays_bitwise) {
  need_gpu();
  enum { LD = 3 };
  const char *src = "input x; input y; param a; param b\noutput f = x^2 + y - a; output g = x * y - b\n";
  double *x0, *p;
  const int B = two_unknown_sweep(LD, &x0, &p);
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(ctx, src, "dev", &prog), DUAL_SUCCESS);
  double *xh = malloc(sizeof(double) * LD * B), *fh = malloc(sizeof(double) * B), *xd2 = malloc(sizeof(double) * LD * B);
  double *fd2 = malloc(sizeof(double) * B);
  int32_t *ih = malloc(sizeof(int32_t) * B), *id2 = malloc(sizeof(int32_t) * B);
  memcpy(xh, x0, sizeof(double) * LD * B);
  cr_assert_eq(dual_newton(ctx, prog, NULL, B, xh, LD, p, 2, ih, NULL, fh), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  double *xd, *pd, *fd;
  int32_t *id;
  cr_assert_eq(cudaMalloc((void **)&xd, sizeof(double) * LD * B), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&pd, sizeof(double) * 2 * B), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&fd, sizeof(double) * B), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&id, sizeof(int32_t) * B), cudaSuccess);
  cudaMemcpy(xd, x0, sizeof(double) * LD * B, cudaMemcpyHostToDevice);
  cudaMemcpy(pd, p, sizeof(double) * 2 * B, cudaMemcpyHostToDevice);
  cr_assert_eq(dual_newton(ctx, prog, NULL, B, xd, LD, pd, 2, id, NULL, fd), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cudaMemcpy(xd2, xd, sizeof(double) * LD * B, cudaMemcpyDeviceToHost);
  cudaMemcpy(fd2, fd, sizeof(double) * B, cudaMemcpyDeviceToHost);
  cudaMemcpy(id2, id, sizeof(int32_t) * B, cudaMemcpyDeviceToHost);
  int64_t fallback = 0, converged = 0;
  for (int b = 0; b < B; ++b) {
    cr_assert_eq(xd2[LD * b + 2], 7.0, "the stride's gap was written");
    converged += ih[b] == DUAL_SOLVE_CONVERGED;
  }
  char why[400];
  int64_t differ = rows_differ(xh, xd2, B, LD, LD, ih, id2, why, sizeof why);
  cr_assert(differ == 0, "solutions differ at %lld of %d points; %s", (long long)differ, B, why);
  cr_assert(memcmp(fh, fd2, sizeof(double) * B) == 0, "norms differ");
  cr_assert(memcmp(ih, id2, sizeof(int32_t) * B) == 0, "statuses differ");
  /* the batch has points the fallback handles: fewer converge without it */
  dual_solve_options o;
  dual_solve_options_init(&o);
  o.line_search = 0;
  memcpy(xh, x0, sizeof(double) * LD * B);
  cr_assert_eq(dual_newton(ctx, prog, &o, B, xh, LD, p, 2, ih, NULL, fh), DUAL_SUCCESS);
  for (int b = 0; b < B; ++b) fallback += ih[b] != DUAL_SOLVE_CONVERGED;
  cr_assert(fallback > converged / 100, "only %lld points fail without the line search and the fallback", (long long)fallback);
  cr_log_info("device memory: %lld of %d converged, bitwise equal to host memory", (long long)converged, B);
  /* dual_lsq: device memory gives host memory's bits */
  memcpy(xh, x0, sizeof(double) * LD * B);
  cr_assert_eq(dual_lsq(ctx, prog, NULL, B, xh, LD, p, 2, ih, NULL, fh), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
  char host_note[300];
  snprintf(host_note, sizeof host_note, "%s", dual_context_last_note(ctx));
  cudaMemcpy(xd, x0, sizeof(double) * LD * B, cudaMemcpyHostToDevice);
  cr_assert_eq(dual_lsq(ctx, prog, NULL, B, xd, LD, pd, 2, id, NULL, fd), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
  cudaMemcpy(xd2, xd, sizeof(double) * LD * B, cudaMemcpyDeviceToHost);
  cudaMemcpy(fd2, fd, sizeof(double) * B, cudaMemcpyDeviceToHost);
  cudaMemcpy(id2, id, sizeof(int32_t) * B, cudaMemcpyDeviceToHost);
  int64_t lsq_converged = 0;
  for (int b = 0; b < B; ++b) {
    cr_assert_eq(xd2[LD * b + 2], 7.0, "dual_lsq wrote the stride's gap");
    lsq_converged += ih[b] == DUAL_SOLVE_CONVERGED;
  }
  differ = rows_differ(xh, xd2, B, LD, LD, ih, id2, why, sizeof why);
  if (differ != 0) { /* which of them left the CPU's bits (the reference), for the report */
    dual_context *cpu = NULL;
    cr_assert_eq(dual_context_create(&cpu, DUAL_DEVICE_CPU), DUAL_SUCCESS);
    double *xc = malloc(sizeof(double) * LD * B);
    int32_t *ic = malloc(sizeof(int32_t) * B);
    memcpy(xc, x0, sizeof(double) * LD * B);
    cr_assert_eq(dual_lsq(cpu, prog, NULL, B, xc, LD, p, 2, ic, NULL, NULL), DUAL_SUCCESS);
    char why_h[400], why_d[400];
    const int64_t off_h = rows_differ(xc, xh, B, LD, LD, ic, ih, why_h, sizeof why_h);
    const int64_t off_d = rows_differ(xc, xd2, B, LD, LD, ic, id2, why_d, sizeof why_d);
    cr_log_error("dual_lsq against the CPU: host memory differs at %lld points (%s); device memory at %lld (%s)",
                 (long long)off_h, why_h, (long long)off_d, why_d);
    free(xc), free(ic);
    dual_context_destroy(&cpu);
  }
  cr_assert(differ == 0, "dual_lsq: solutions differ at %lld of %d points; %s (host call's note: %s)",
            (long long)differ, B, why, host_note);
  cr_assert(memcmp(fh, fd2, sizeof(double) * B) == 0, "dual_lsq: norms differ");
  cr_assert(memcmp(ih, id2, sizeof(int32_t) * B) == 0, "dual_lsq: statuses differ");
  cr_assert(lsq_converged > B / 2, "dual_lsq: %lld of %d converged", (long long)lsq_converged, B);
  cr_log_info("dual_lsq on device memory: %lld of %d converged, bitwise equal to host memory", (long long)lsq_converged, B);
  /* refused: mixed memory */
  cr_assert_eq(dual_newton(ctx, prog, NULL, B, xd, LD, p, 2, id, NULL, fd), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "x is device memory but p is host memory"), "%s",
                     dual_context_last_error(ctx));
  cudaFree(xd), cudaFree(pd), cudaFree(fd), cudaFree(id);
  free(x0), free(p), free(xh), free(fh), free(xd2), free(fd2), free(ih), free(id2);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
#endif
