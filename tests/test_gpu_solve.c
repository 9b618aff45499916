/*
 * test_gpu_solve.c — dual_newton and dual_lsq on a GPU context (its engine computes F and J;
 * the factorizations run on the host) give the CPU context's bits: solutions, statuses, step
 * counts and norms, for a batch that mixes converged points, fallbacks and failures, and the
 * MGH Chebyquad and Brown problems of tests/ref.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "mgh_equations.h"
#include "test_arrays.h"

static void solve_both(const char *src, int lsq, int n, int np, int64_t B, const double *x0, const double *p) {
  dual_context *cpu = NULL, *gpu = NULL;
  cr_assert_eq(dual_context_create(&cpu, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_create(&gpu, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(cpu, src, "solve", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
  double *x[2], *fn[2];
  int32_t *info[2], *it[2];
  dual_context *ctx[2] = {cpu, gpu};
  for (int d = 0; d < 2; ++d) {
    x[d] = malloc(sizeof(double) * (size_t)(B * n)), fn[d] = malloc(sizeof(double) * (size_t)B);
    info[d] = malloc(sizeof(int32_t) * (size_t)B), it[d] = malloc(sizeof(int32_t) * (size_t)B);
    memcpy(x[d], x0, sizeof(double) * (size_t)(B * n));
    const int st = lsq ? dual_lsq(ctx[d], prog, NULL, B, x[d], n, p, np, info[d], it[d], fn[d])
                       : dual_newton(ctx[d], prog, NULL, B, x[d], n, p, np, info[d], it[d], fn[d]);
    cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx[d]));
  }
  cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
  int64_t converged = 0;
  for (int64_t b = 0; b < B; ++b) converged += info[0][b] == DUAL_SOLVE_CONVERGED;
  cr_assert(memcmp(x[0], x[1], sizeof(double) * (size_t)(B * n)) == 0, "solutions differ");
  cr_assert(memcmp(fn[0], fn[1], sizeof(double) * (size_t)B) == 0, "norms differ");
  cr_assert(memcmp(info[0], info[1], sizeof(int32_t) * (size_t)B) == 0, "statuses differ");
  cr_assert(memcmp(it[0], it[1], sizeof(int32_t) * (size_t)B) == 0, "step counts differ");
  cr_log_info("%s, %lld points: %lld converged, bitwise equal on CPU and GPU", lsq ? "dual_lsq" : "dual_newton",
              (long long)B, (long long)converged);
  for (int d = 0; d < 2; ++d) free(x[d]), free(fn[d]), free(info[d]), free(it[d]);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

Test(gpu_solve, newton_and_lsq_equal_the_cpu_bitwise) {
  need_gpu();
  enum { B = 20000 };
  double *x0 = malloc(sizeof(double) * 2 * B), *p = malloc(sizeof(double) * 2 * B);
  for (int b = 0; b < B; ++b) {
    p[2 * b] = -2.0 + 0.0004 * b, p[2 * b + 1] = 0.5 * sin(0.1 * b);
    x0[2 * b] = 0.3 + 0.0001 * b, x0[2 * b + 1] = -1.0 + 0.00015 * b;
  }
  solve_both("input x; input y; param a; param b\noutput f = x^2 + y - a; output g = x * y - b\n", 0, 2, 2, B, x0, p);
  solve_both("input x; input y; param a; param b\n"
             "output f = x^2 + y - a; output g = x * y - b; output h = 0.1 * (x - y)\n", 1, 2, 2, B, x0, p);
  free(x0), free(p);
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
