/*
 * solve_common.c — option checks, chunking, gathering and engine calls shared by the batched
 * solvers (solve_common.h), and the public option helpers.
 */
#include "solve/solve_common.h"

#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "context.h"
#include "dual/ops.h"
#include "solve/jacobian_colors.h"
#include "exec.h"
#include "gpu.h"
#include "program.h"

void dual_solve_options_init(dual_solve_options *opt) {
  if (opt == NULL) return;
  opt->size = (int64_t)sizeof *opt;
  opt->max_iter = 0, opt->max_evals = 0;
  opt->line_search = 1, opt->reserved = 0;
  opt->f_abs = 0.0, opt->f_rel = 0.0;
  opt->x_abs = 0.0, opt->x_rel = 1.4901161193847656e-08; /* sqrt(DBL_EPSILON) */
  opt->f_red = 1.4901161193847656e-08, opt->g_tol = 0.0, opt->step_bound = 100.0;
}

const char *dual_solve_status_string(int status) {
  switch (status) {
  case DUAL_SOLVE_CONVERGED: return "converged";
  case DUAL_SOLVE_MAX_ITER: return "maximum iterations";
  case DUAL_SOLVE_SINGULAR: return "singular Jacobian";
  case DUAL_SOLVE_NONFINITE: return "not finite";
  case DUAL_SOLVE_LINE_SEARCH: return "line search failed";
  case DUAL_SOLVE_NO_PROGRESS: return "no further progress possible";
  default: return "unknown";
  }
}

static int bad_tol(double v) { return !(v >= 0.0 && v <= 1e300); }

int dual_solve_check_options(dual_context *ctx, const char *fn, const dual_solve_options *opt,
                             dual_solve_options *out) {
  if (opt == NULL) {
    dual_solve_options_init(out);
    return DUAL_SUCCESS;
  }
  if (opt->size != (int64_t)sizeof *opt)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "%s: options.size is %lld, not this library's sizeof(dual_solve_options) = %d "
                     "(fill the options after dual_solve_options_init)",
                     fn, (long long)opt->size, (int)sizeof *opt);
  if (opt->max_iter < 0 || opt->max_evals < 0)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: options.max_iter = %d and options.max_evals = %d must be >= 0",
                     fn, (int)opt->max_iter, (int)opt->max_evals);
  if (opt->reserved != 0)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: options.reserved = %d must be 0", fn, (int)opt->reserved);
  if (!(opt->step_bound > 0.0 && opt->step_bound <= 1e300))
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: options.step_bound = %g must be finite and > 0", fn,
                     opt->step_bound);
  if (opt->line_search != 0 && opt->line_search != 1)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: options.line_search = %d must be 0 or 1", fn,
                     (int)opt->line_search);
  const double tol[6] = {opt->f_abs, opt->f_rel, opt->x_abs, opt->x_rel, opt->f_red, opt->g_tol};
  static const char *names[6] = {"f_abs", "f_rel", "x_abs", "x_rel", "f_red", "g_tol"};
  for (int i = 0; i < 6; ++i)
    if (bad_tol(tol[i]))
      return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: options.%s = %g must be finite and >= 0", fn,
                       names[i], tol[i]);
  *out = *opt;
  return DUAL_SUCCESS;
}

int dual_solve_check_arrays(dual_context *ctx, const char *fn, const dual_program *prog, int64_t B,
                            const double *x, int64_t ldx, const double *p, int64_t ldp) {
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  if (B < 0) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: B = %lld is negative", fn, (long long)B);
  if (B > 0 && n > 0 && x == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: x is NULL", fn);
  if (B > 0 && np > 0 && p == NULL)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: p is NULL but the program has %d parameters", fn, np);
  if (x != NULL && ldx < n)
    return dual_fail(ctx, DUAL_ERR_DIMENSION, "%s: ldx = %lld is smaller than the %d inputs of each point",
                     fn, (long long)ldx, n);
  if (p != NULL && np > 0 && ldp < np)
    return dual_fail(ctx, DUAL_ERR_DIMENSION,
                     "%s: ldp = %lld is smaller than the %d parameters of each point", fn, (long long)ldp, np);
  return DUAL_SUCCESS;
}

int dual_solve_check_memory(dual_context *ctx, const char *fn, int allow_device, const double *x,
                            const double *p, const int32_t *info, const int32_t *iters,
                            const double *fnorm, int *device) {
  *device = 0;
  if (ctx->device != DUAL_DEVICE_GPU) return DUAL_SUCCESS;
  const void *arrays[5] = {x, p, info, iters, fnorm};
  static const char *names[5] = {"x", "p", "info", "iters", "fnorm"};
  int first = -1;
  for (int i = 0; i < 5; ++i) {
    if (arrays[i] == NULL) continue;
    const int dev = dual_gpu_is_device_pointer(arrays[i]);
    if (first < 0) {
      first = i, *device = dev;
    } else if (dev != *device) {
      return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: %s is %s memory but %s is %s memory (pass all arrays in one)",
                       fn, names[first], *device ? "device" : "host", names[i], dev ? "device" : "host");
    }
  }
  if (*device && !allow_device)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: the arrays are device memory; %s takes host memory", fn, fn);
  return DUAL_SUCCESS;
}

int64_t dual_solve_chunk(int64_t B, int n, int m, int np) {
  const int64_t per_point = 8 * ((int64_t)m * n + 4 * (int64_t)n + 2 * (int64_t)m + np + 8);
  int64_t c = ((int64_t)64 << 20) / per_point;
  if (c < 64) c = 64;
  return c < B ? c : B;
}

int64_t dual_solve_thread_chunk(int64_t B, int64_t per_point, int threads) {
  int64_t c = ((int64_t)2 << 20) / per_point;
  c = c < 64 ? 64 : c / 64 * 64; /* whole blocks of the CPU engine's widest Jacobian runs */
  const int64_t T = threads > 1 ? threads : 1;
  int64_t share = (B + T - 1) / T;
  if (share > 64) share = (share + 63) / 64 * 64;
  return c < share ? c : share > 0 ? share : 1;
}

/* The next chunk's size where `left` points are not yet handed out: C on one thread; on T, the
 * "guided" sizes, left / 2T in whole blocks of 64, at least 64 and at most C, so that the chunks
 * get smaller as the batch runs out and the threads finish together. */
static int64_t next_chunk(int64_t left, int64_t C, int T) {
  int64_t c = C;
  if (T > 1) {
    c = (left + 2 * (int64_t)T - 1) / (2 * (int64_t)T);
    c = (c + 63) / 64 * 64;
    if (c > C) c = C;
  }
  return c < left ? c : left;
}

int dual_solve_run_chunks(int64_t B, int64_t C, int T, void *workers, size_t size, dual_solve_chunk_fn fn) {
  int st = DUAL_SUCCESS;
  int64_t next = 0; /* the first point not yet handed out */
#pragma omp parallel num_threads(T > 1 ? T : 1) if (T > 1)
  {
    void *w = (char *)workers + (size_t)omp_get_thread_num() * size;
    for (;;) {
      int64_t b0, cnt;
#pragma omp critical(dual_solve_chunks)
      {
        b0 = next;
        cnt = next_chunk(B - b0, C, T);
        next = b0 + cnt;
      }
      int failed;
#pragma omp atomic read
      failed = st;
      if (cnt <= 0 || failed != DUAL_SUCCESS) break;
      const int s = fn(w, b0, cnt);
      if (s != DUAL_SUCCESS) {
#pragma omp atomic write
        st = s;
      }
    }
  }
  return st;
}

void dual_solve_jacobian_band(const dual_program *prog, int32_t *lo, int32_t *hi) {
  dual_jac_colors c;
  *lo = -1, *hi = -1;
  if (dual_jac_colors_build(prog, &c) != DUAL_SUCCESS) return;
  *lo = c.lo, *hi = c.hi;
  dual_jac_colors_free(&c);
}

void dual_solve_gather(int64_t k, const int64_t *idx, int n, int np, const double *x, int64_t ldx,
                       const double *p, int64_t ldp, double *xa, double *pa, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads) if (k > 4096)
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = idx[i];
    for (int j = 0; j < n; ++j) xa[i * n + j] = x[b * ldx + j];
    if (p != NULL)
      for (int j = 0; j < np; ++j) pa[i * np + j] = p[b * ldp + j];
  }
}

int dual_solve_colors(dual_context *ctx, const char *fn, const dual_program *prog, int fewer_passes,
                      dual_jac_colors *jc) {
  if (dual_jac_colors_build(prog, jc) != DUAL_SUCCESS)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory analysing the Jacobian's structure", fn);
  if (jc->view != NULL && (dual_run_chooses_reverse(ctx, prog, DUAL_MODE_JACOBIAN) ||
                           (fewer_passes && dual_run_jacobian_passes(ctx, jc->view) >=
                                                dual_run_jacobian_passes(ctx, prog))))
    dual_program_destroy(&jc->view);
  return DUAL_SUCCESS;
}

/* The batch of dual_solve_residuals' engine call: with a colored view, J S goes to the first
 * m * ncolors entries of each point's J. */
static void residual_batch(const dual_program *prog, const dual_jac_colors *jc, int64_t k,
                           const double *xa, const double *pa, double *F, double *J, dual_batch *b) {
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  dual_batch_init(b);
  b->count = k;
  b->x = xa, b->x_ps = n, b->x_es = 1;
  b->p = np > 0 ? pa : NULL, b->p_ps = np, b->p_es = 1;
  b->y = F, b->y_ps = m, b->y_es = 1;
  if (J != NULL) b->d = J, b->d_ps = (int64_t)m * n, b->d_rs = jc != NULL && jc->view ? jc->ncolors : n, b->d_cs = 1;
}

/* After a colored view's engine call: every point's J S expanded into its J. */
static int expand_all(dual_context *ctx, const dual_jac_colors *jc, int64_t k, double *J, int threads) {
  const int32_t m = jc->m, n = jc->n, nc = jc->ncolors;
  int failed = 0;
#pragma omp parallel num_threads(threads) if (threads > 1 && k > 256)
  {
    double *row = (double *)malloc(sizeof(double) * (size_t)(nc > 0 ? nc : 1));
    if (row == NULL) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t i = 0; i < k; ++i)
      if (row != NULL) dual_jac_expand(m, n, nc, jc->color, jc->row_start, jc->cols, J + i * m * n, J + i * m * n, 1, row);
    free(row);
  }
  return failed ? dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory expanding Jacobians") : DUAL_SUCCESS;
}

int dual_solve_residuals(dual_context *ctx, const dual_program *prog, const dual_jac_colors *jc,
                         int64_t k, const double *xa, const double *pa, double *F, double *J) {
  dual_batch b;
  const int colored = J != NULL && jc != NULL && jc->view != NULL;
  residual_batch(prog, jc, k, xa, pa, F, J, &b);
  int st = dual_run(ctx, colored ? jc->view : prog, J != NULL ? DUAL_MODE_JACOBIAN : DUAL_MODE_EVAL, &b);
  if (st == DUAL_SUCCESS && colored) st = expand_all(ctx, jc, k, J, dual_solve_threads(ctx));
  return st;
}

int dual_solve_residuals_cpu(dual_context *ctx, const dual_program *prog, const dual_jac_colors *jc,
                             int64_t k, const double *xa, const double *pa, double *F, double *J,
                             int threads) {
  dual_batch b;
  const int colored = J != NULL && jc != NULL && jc->view != NULL;
  residual_batch(prog, jc, k, xa, pa, F, J, &b);
  int st = dual_run_cpu_quiet(ctx, colored ? jc->view : prog, J != NULL ? DUAL_MODE_JACOBIAN : DUAL_MODE_EVAL,
                              &b, threads);
  if (st == DUAL_SUCCESS && colored) st = expand_all(ctx, jc, k, J, threads);
  return st;
}

int dual_solve_residuals_cpu_packed(dual_context *ctx, const dual_jac_colors *jc, int64_t k, const double *xa,
                                    const double *pa, double *F, double *JS) {
  dual_batch b;
  residual_batch(jc->view, jc, k, xa, pa, F, JS, &b);
  b.d_ps = (int64_t)jc->m * jc->ncolors; /* packed: point after point */
  return dual_run_cpu_quiet(ctx, jc->view, DUAL_MODE_JACOBIAN, &b, 1);
}

int dual_solve_threads(const dual_context *ctx) {
  return ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
}

int dual_solve_may_fall_back(dual_context *ctx, const char *fn, int st, int device_mem, int64_t B,
                             int64_t done, char **note) {
  *note = NULL;
  if (device_mem || ctx->requested != DUAL_DEVICE_AUTO || st == DUAL_ERR_ARGUMENT) return 0;
  *note = dual_strdup_printf("the GPU failed, so %s solved %lld of its %lld points on the CPU: %s", fn,
                             (long long)(B - done), (long long)B, dual_context_last_error(ctx));
  return 1;
}

void dual_solve_fell_back(dual_context *ctx, char *note) {
  dual_clear_error(ctx);
  if (!ctx->solve_fell && note != NULL) ctx->solve_note = dual_strdup(note);
  ctx->solve_fell = 1;
  dual_set_note(ctx, note);
  ctx->last_device = DUAL_DEVICE_CPU;
}

void dual_solve_begin(dual_context *ctx) {
  if (ctx->solve_depth++ > 0) return;
  free(ctx->solve_note);
  ctx->solve_note = NULL, ctx->solve_fell = 0;
}

int dual_solve_end(dual_context *ctx, int st) {
  if (--ctx->solve_depth > 0 || st != DUAL_SUCCESS || !ctx->solve_fell) return st;
  if (ctx->solve_note != NULL) dual_set_note(ctx, ctx->solve_note); /* the context takes it */
  ctx->solve_note = NULL;
  ctx->last_device = DUAL_DEVICE_CPU;
  return st;
}
