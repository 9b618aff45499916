/*
 * test_gpu_dispatch.c — AUTO's adaptive dispatch on a machine with a GPU (issue 20): the
 * calibration's GPU figures are measured and sane, and whatever AUTO picks (the CPU, the GPU or
 * a split, including a split forced by a calibration that makes the two devices equal) gives a
 * GPU context's bits (the same job: AD mode and all) for ba's and kin's Jacobians and hess's
 * Hessians at B from 1 to 1e5.
 */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdlib.h>

#include "bench_program.h"
#include "context.h"
#include "dispatch/calibration.h"
#include "dispatch/dispatch.h"
#include "temp_dirs.h"
#include "test_arrays.h"

static void points(uint64_t seed, int64_t n, double *x) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = 0.5 + (double)(s >> 11) * 0x1.0p-53;
  }
}

/* ba's feat parameters and kin's and hess's inputs: all in [0.5, 1.5) */
static void run(dual_context *ctx, const char *name, int64_t B, const double *x, const double *p, double *y,
                double *J, double *H) {
  dual_program *prog = bench_program(ctx, name);
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog),
            np = dual_program_num_params(prog);
  int st = H != NULL ? dual_hessian(ctx, prog, B, x, n, p, np, y, m, J, (int64_t)m * n, H, (int64_t)m * n * n,
                                    DUAL_HESSIAN_FULL, NULL)
                     : dual_jacobian(ctx, prog, B, x, n, p, np, y, m, J, (int64_t)m * n, NULL);
  cr_assert_eq(st, DUAL_SUCCESS, "%s B %lld: %s", name, (long long)B, dual_context_last_error(ctx));
  dual_program_destroy(&prog);
}

Test(gpu_dispatch, the_gpu_figures_are_measured) {
  need_gpu();
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_AUTO), DUAL_SUCCESS);
  char dir[256];
  cr_assert_eq(dual_test_temp_dir(dir, sizeof dir, "gpucal"), 0);
  cr_assert_eq(dual_context_set_cache_dir(ctx, dir), DUAL_SUCCESS);
  dual_calibration c;
  cr_assert_eq(dual_calibration_get(ctx, 4, 1, &c), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_log_info("GPU: call %.3g s, in %.3g B/s (one thread %.3g), out %.3g B/s (%.3g), arith %.3g / %.3g s, "
              "special %.3g / %.3g s, alone %.3g / %.3g s, split %.3g s", c.gpu_call_s, c.gpu_in_Bps,
              c.gpu_in_Bps_1, c.gpu_out_Bps, c.gpu_out_Bps_1, c.gpu_arith_s[0],
              c.gpu_arith_s[1], c.gpu_special_s[0], c.gpu_special_s[1], c.gpu_lat_arith_s[0], c.gpu_lat_arith_s[1],
              c.split_call_s);
  cr_assert_eq(c.gpu, 1);
  /* scripts/gpu_sanitize.sh runs this under compute-sanitizer, which slows the GPU 10-100x:
   * there (DUALBATCH_TEST_UNTIMED) the figures need only be positive */
  if (getenv("DUALBATCH_TEST_UNTIMED") != NULL) {
    cr_assert(c.gpu_call_s > 0 && c.gpu_in_Bps > 0 && c.gpu_out_Bps > 0 && c.gpu_arith_s[0] > 0 &&
              c.gpu_arith_s[1] > 0 && c.split_call_s > 0);
  } else {
    cr_assert(c.gpu_call_s > 1e-7 && c.gpu_call_s < 0.1, "call %g s", c.gpu_call_s);
    /* PCIe or NVLink-C2C, staged: between 100 MB/s and 1 TB/s */
    cr_assert(c.gpu_in_Bps > 1e8 && c.gpu_in_Bps < 1e12 && c.gpu_out_Bps > 1e8 && c.gpu_out_Bps < 1e12);
    cr_assert(c.gpu_in_Bps_1 > 1e8 && c.gpu_in_Bps_1 < 1e12 && c.gpu_out_Bps_1 > 1e8 && c.gpu_out_Bps_1 < 1e12);
    for (int t = 0; t < 2; ++t) {
      cr_assert(c.gpu_arith_s[t] > 0 && c.gpu_arith_s[t] < c.cpu_arith_s, "tier %d: a full GPU beats a CPU thread", t);
      cr_assert(c.gpu_special_s[t] >= c.gpu_arith_s[t] && c.gpu_lat_arith_s[t] > c.gpu_arith_s[t]);
    }
    cr_assert(c.split_call_s > 0 && c.split_call_s < 0.01);
  }
  /* the entry is stored: a fresh context reads the same figures */
  dual_context *again = NULL;
  cr_assert_eq(dual_context_create(&again, DUAL_DEVICE_AUTO), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_cache_dir(again, dir), DUAL_SUCCESS);
  dual_calibration r;
  cr_assert_eq(dual_calibration_get(again, 4, 0, &r), DUAL_SUCCESS);
  cr_assert(memcmp(&r, &c, sizeof r) == 0, "the stored calibration differs");
  dual_context_destroy(&again), dual_context_destroy(&ctx);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

/* AUTO (the measured calibration, then one that makes the devices equal so that it splits)
 * against a GPU context, bitwise. */
static void auto_matches_gpu(const char *name, int hessian) {
  dual_context *gpu = NULL, *autoc = NULL;
  cr_assert_eq(dual_context_create(&gpu, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_create(&autoc, DUAL_DEVICE_AUTO), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(autoc, DUAL_KNOB_DISPATCH, 0), DUAL_SUCCESS); /* the model (the default) */
  const int64_t Bs[] = {1, 100, 5000, 100000};
  dual_program *prog = bench_program(gpu, name);
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog), np = dual_program_num_params(prog);
  dual_program_destroy(&prog);
  const int64_t Bmax = 100000;
  double *x = malloc(sizeof(double) * Bmax * n), *p = np ? malloc(sizeof(double) * Bmax * np) : NULL;
  double *y[2], *J[2], *H[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    y[k] = malloc(sizeof(double) * Bmax * m), J[k] = malloc(sizeof(double) * Bmax * m * n);
    if (hessian) H[k] = malloc(sizeof(double) * Bmax * m * n * n);
  }
  points(1, Bmax * n, x);
  if (p) points(2, Bmax * np, p);
  int hybrid_seen = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) { /* equal devices: GPU and CPU per-point work the same, copies free */
      dual_calibration c;
      cr_assert_eq(dual_calibration_get(autoc, omp_get_max_threads(), 0, &c), DUAL_SUCCESS);
      for (int t = 0; t < 2; ++t)
        c.gpu_arith_s[t] = c.cpu_arith_s / c.threads, c.gpu_special_s[t] = c.cpu_special_s / c.threads,
        c.gpu_lat_arith_s[t] = c.gpu_lat_special_s[t] = 0;
      c.gpu_in_Bps = c.gpu_out_Bps = c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 1e15, c.gpu_call_s = c.cpu_call_s, c.split_call_s = 1e-9;
      *autoc->calib = c;
      dual_dispatch_memo_free(autoc->memo), autoc->memo = NULL;
    }
    for (size_t k = 0; k < sizeof Bs / sizeof *Bs; ++k) {
      for (int r = 0; r < 3; ++r) { /* a few calls: the measured scales move the plan */
        memset(y[1], 0, sizeof(double) * Bs[k] * m), memset(J[1], 0, sizeof(double) * Bs[k] * m * n);
        if (hessian) memset(H[1], 0, sizeof(double) * Bs[k] * m * n * n);
        run(gpu, name, Bs[k], x, p, y[0], J[0], H[0]);
        run(autoc, name, Bs[k], x, p, y[1], J[1], H[1]);
        const int dev = dual_context_last_device(autoc);
        hybrid_seen += dev == DUAL_DEVICE_HYBRID;
        int64_t g, c;
        dual_context_last_split(autoc, &g, &c);
        cr_assert(g + c == Bs[k] && (dev != DUAL_DEVICE_HYBRID || (g > 0 && c > 0)));
        cr_assert(memcmp(y[0], y[1], sizeof(double) * Bs[k] * m) == 0, "%s B %lld (device %d): y", name,
                  (long long)Bs[k], dev);
        cr_assert(memcmp(J[0], J[1], sizeof(double) * Bs[k] * m * n) == 0, "%s B %lld (device %d): J", name,
                  (long long)Bs[k], dev);
        if (hessian)
          cr_assert(memcmp(H[0], H[1], sizeof(double) * Bs[k] * m * n * n) == 0, "%s B %lld (device %d): H",
                    name, (long long)Bs[k], dev);
      }
    }
  }
  cr_assert(hybrid_seen > 0, "%s: the equal devices never split", name);
  for (int k = 0; k < 2; ++k) free(y[k]), free(J[k]), free(H[k]);
  free(x), free(p);
  dual_context_destroy(&gpu), dual_context_destroy(&autoc);
}

Test(gpu_dispatch, auto_gives_the_cpu_bits_wherever_it_runs) {
  need_gpu();
  auto_matches_gpu("ba", 0);
  auto_matches_gpu("kin", 0);
  auto_matches_gpu("hess", 1);
}
