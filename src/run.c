/*
 * run.c — the public evaluation entry points: argument and dimension checks (never compiled
 * out), width choice, and dispatch to the engine of the context's device (an AUTO context
 * repeats a failed GPU evaluation of host arrays on the CPU and notes why).  The simple calls
 * (dual_eval, dual_jvp, dual_jacobian, dual_gradient) fill a dual_batch and call dual_run.
 */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "context.h"
#include "dispatch/clock.h"
#include "dispatch/dispatch.h"
#include "engine/pass2.h"
#include "exec.h"
#include "gpu.h"
#include "jit/cpu_jit.h"
#include "jit/jit_source_rev.h"
#include "multi_gpu.h"
#include "sgrad_score.h"

static const char *mode_name(int mode) {
  switch (mode) {
  case DUAL_MODE_EVAL: return "eval";
  case DUAL_MODE_JVP: return "jvp";
  case DUAL_MODE_JACOBIAN: return "jacobian";
  case DUAL_MODE_GRADIENT: return "gradient";
  case DUAL_MODE_HESSIAN: return "hessian";
  case DUAL_MODE_HVP: return "hvp";
  case DUAL_MODE_VJP: return "vjp";
  case DUAL_MODE_SGRAD: return "sgrad";
  default: return "?";
  }
}

/* Width for a job: the context's forced width, else on the CPU the one that minimizes
 * passes * (W + 4) — a pass re-evaluates the values, worth about four tangent lanes — preferring
 * the larger width on ties; on the GPU the fewest passes (a GPU stores only the lanes a register
 * uses, engine/plan.h, so a wider pass costs little register file; bench/NOTES.md). */
static int choose_width_on(const dual_context *ctx, const dual_program *prog, int mode, int forced, int gpu) {
  if (mode == DUAL_MODE_EVAL) return 0;
  if (mode == DUAL_MODE_JVP) return 1;
  if (forced && ctx->width > 0) return ctx->width;
  /* Second order: every pass re-evaluates the values and the lanes, while the pairs add up to
   * the same total for any blocking, so the fewest passes win: one diagonal block up to n = 32,
   * blocks of 16 beyond (engine/pass2.h). */
  if (dual_mode_is_second_order(mode)) return mode == DUAL_MODE_HVP || prog->n_in <= 32 ? 32 : 16;
  const int64_t cols = dual_program_jacobian_columns(prog); /* a colored view's directions */
  int64_t n = cols > 0 ? cols : 1;
  int best = 1;
  int64_t best_cost = -1;
  for (int w = 1; w <= 32; w *= 2) {
    int64_t passes = (n + w - 1) / w;
    int64_t cost = gpu ? passes : passes * (w + 4);
    if (best_cost < 0 || cost < best_cost || (cost == best_cost && !gpu)) {
      best = w;
      best_cost = cost;
    }
    if (w >= n) break;
  }
  return best;
}

static int choose_width(const dual_context *ctx, const dual_program *prog, int mode, int forced) {
  return choose_width_on(ctx, prog, mode, forced, ctx->device == DUAL_DEVICE_GPU);
}

/* Whether a reverse-mode job of `mode` on `prog` is within the compiled tier's rules for a
 * straight-line kernel (jit/jit_source_rev.h: its terms, and for first order its instructions):
 * the programs whose AUTO crossovers are fitted to the compiled tier.  Longer ones may still
 * compile (looped or segmented kernels) but take the interpreter's crossovers. */
static int reverse_kernel_fits(const dual_program *prog, int mode) {
  dual_job j;
  memset(&j, 0, sizeof j);
  j.prog = prog, j.mode = mode, j.reverse = 1;
  return dual_jit_rev_sums(&j) <= DUAL_JIT_MAX_REV_TERMS &&
         (dual_mode_is_second_order(mode) || prog->n_instr <= DUAL_JIT_MAX_REV_INSTR);
}

/* Second order in AUTO: nested forward passes (engine/pass2.h) against forward-over-reverse
 * (a tangent-carrying taping sweep, then an adjoint pair sweep per output; per direction for a
 * Hessian).  CPU: in units of a forward value sweep per instruction, fitted at m = 1 on the grad
 * family (bench_crossover --product hvp|hessian, bench/NOTES.md):
 *   CPU HVP      forward  ceil(n / 31) * 128                reverse  40 + 60 m
 *   CPU Hessian  forward  n (n + 1) / 2 + 4 n               reverse  n (100 + 100 m)
 * (forward-over-reverse HVPs 1.3x faster at n = 4, 7.8x at n = 256; Hessians slower up to
 * n = 64, even at 256.)  GPU: fitted to the compiled tier, which serves these products by
 * default (the interpreter serves a kernel's first calls while it compiles, and programs over
 * the compile rules).  Compiled forward-over-reverse against compiled nested forward, grad
 * family, H100 (bench/results/crossover-compiled-2026-11-26-h100.md): HVPs 1.10-1.96x at every
 * n from 4 to 32 — so forward-over-reverse for one output; for several, the interpreter's model
 *   GPU HVP      forward  ceil(n / 31) * (14 + min(n, 31))  reverse  13 + 20 m
 * (H200, interpreter: 0.84x at n = 8, 13.6x at 1024) — and Hessians 0.78x at n = 8, 1.86x at 16,
 * 2.35x at 24 (H200, 2026-11-27, bench/results/crossover-compiled-2026-11-27-h200.md: 1.21x at
 * n = 8, 1.03x at 12, 1.36x at 16, 2.06x at 24), so forward-over-reverse for one output from
 * n = 12 while its compiled kernel is within the compile rule (DUAL_JIT_MAX_REV_TERMS terms;
 * hess, n = 16, has 7 776): beyond it the interpreter would run it, at 0.14-0.38x of nested
 * forward. */
static int choose_reverse2(const dual_context *ctx, const dual_program *prog, int mode) {
  const int64_t n = prog->n_in, m = prog->n_out, passes = (n + 30) / 31;
  if (ctx->device == DUAL_DEVICE_GPU) {
    if (mode == DUAL_MODE_HVP) return m == 1 || 13 + 20 * m < passes * (14 + (n < 31 ? n : 31));
    return m == 1 && n >= 12 && reverse_kernel_fits(prog, DUAL_MODE_HESSIAN);
  }
  if (mode == DUAL_MODE_HVP) return 40 + 60 * m < passes * 128;
  return n * (100 + 100 * m) < n * (n + 1) / 2 + 4 * n;
}

/* Forward or reverse for first derivatives (dual_context_set_ad_mode; VJPs are always reverse).
 * AUTO compares the modelled cost of the two over the same bytecode, in units of one forward
 * pass's value sweep per instruction:
 *   CPU  forward passes * (W + 4)  (the value sweep is worth about four tangent lanes)
 *        reverse  12 + 28 * s      (a taping forward sweep, then one adjoint sweep per
 *                                   cotangent s: 1 for a gradient, m for a Jacobian)
 *   GPU  forward passes * (8 + min(n, W))   reverse  3 + 12 * s, while the compiled reverse
 *        kernel is within the straight-line rules (reverse_kernel_fits), else 19 + 12 * s
 * The constants come from the measured crossover (bench/bench_crossover.c, bench/NOTES.md): on
 * the CPU reverse was faster from n = 48 (0.92x at 32, 2.7x at 48), AUTO switches at n = 33.  On
 * the GPU the compiled tier serves by default: its reverse gradient was faster from n = 8 (H200,
 * 2026-11-27, bench/results/crossover-compiled-2026-11-27-h200.md: 1.12x at n = 8, 1.05x at 16,
 * 1.99x at 24), so AUTO switches at n = 8 (one pass of width >= n: 8 + n against 15).  A
 * program whose reverse kernel is over the compile rule would run on the interpreter, whose
 * reverse was faster only from n = 24 (0.76x at 16, 1.27x at 24): 19 + 12 s, the interpreter's
 * fit.  As for second order, the choice depends on the program only, never on the tier. */
static int choose_reverse(const dual_context *ctx, const dual_program *prog, int mode) {
  if (mode == DUAL_MODE_VJP) return 1;
  if (mode == DUAL_MODE_EVAL || mode == DUAL_MODE_JVP || prog->seed_lane != NULL) return 0;
  if (ctx->ad_mode != DUAL_AD_AUTO) return ctx->ad_mode == DUAL_AD_REVERSE;
  if (dual_mode_is_second_order(mode)) return choose_reverse2(ctx, prog, mode);
  /* the automatic width, not a forced one: the choice (and so the bits) never depends on it */
  const int width = choose_width(ctx, prog, mode, 0);
  const int64_t n = prog->n_in, s = mode == DUAL_MODE_GRADIENT ? 1 : prog->n_out;
  const int64_t passes = (n + width - 1) / (width > 0 ? width : 1);
  if (ctx->device == DUAL_DEVICE_GPU) {
    const int64_t forward = passes * (8 + (n < width ? n : width));
    if (19 + 12 * s < forward) return 1;
    return 3 + 12 * s < forward && reverse_kernel_fits(prog, mode);
  }
  return 12 + 28 * s < passes * (width + 4);
}

/* Every element index b*ps + i*es (0 <= b < count, 0 <= i < len) must fit in int64. */
static int strides_fit(int64_t count, int64_t ps, int64_t len, int64_t es) {
  const int64_t lim = (int64_t)1 << 62;
  if (count > 0 && (ps > lim / count || ps < -lim / count)) return 0;
  if (len > 0 && (es > lim / len || es < -lim / len)) return 0;
  return 1;
}

/* Run on the context's device; AUTO falls back to the CPU for host arrays. */
static int cpu_run(dual_context *ctx, const dual_job *job) {
  if (job->samples > 0) return dual_cpu_run_sgrad(ctx, job, cpu_run); /* (each sample: samples 0) */
  int ran = 0; /* the compiled CPU tier (jit/cpu_jit.h: a CPU context not under DUAL_TIER_INTERPRET) */
  int st = dual_cpu_jit_try(ctx, job, &ran);
  if (ran) return st;
  const double t0 = dual_dispatch_now();
  st = job->reverse                         ? dual_cpu_run_rev(ctx, job)
       : dual_mode_is_second_order(job->mode) ? dual_cpu_run2(ctx, job)
                                              : dual_cpu_run(ctx, job);
  if (st == DUAL_SUCCESS) dual_cpu_jit_interpreted(ctx, job, dual_dispatch_now() - t0); /* (AUTO's count) */
  return st;
}

/* The width the CPU engines take for a first-order forward job (a GPU context's job has the
 * GPU's: the same bits, results never depend on the width). */
static int cpu_width(const dual_context *ctx, const dual_job *job) {
  if (job->reverse || job->samples > 0 || dual_mode_is_second_order(job->mode)) return job->width;
  return choose_width_on(ctx, job->prog, job->mode, 1, 0);
}

/* The job on the CPU engines at the CPU's width (AUTO's dispatch, dispatch/dispatch.h). */
static int cpu_at_cpu_width(dual_context *ctx, const dual_job *job) {
  dual_job j = *job;
  j.width = cpu_width(ctx, job);
  return cpu_run(ctx, &j);
}

/* The job on the GPU; where that fails on an AUTO context with host arrays, on the CPU with a
 * note saying why. */
static int gpu_or_fallback(dual_context *ctx, const dual_job *job) {
  const int tier_before = ctx->last_tier;
  ctx->last_tier = DUAL_TIER_INTERPRET; /* dual_gpu_run says when the compiled tier ran */
  int st = job->samples > 0                       ? dual_gpu_run_sgrad(ctx, job)
           : job->reverse                         ? dual_gpu_run_rev(ctx, job)
           : dual_mode_is_second_order(job->mode) ? dual_gpu_run2(ctx, job)
                                                   : dual_gpu_run(ctx, job);
  if (st == DUAL_SUCCESS) {
    ctx->last_device = DUAL_DEVICE_GPU;
    return st;
  }
  ctx->last_tier = tier_before;
  if (ctx->requested != DUAL_DEVICE_AUTO || job->b->memory == DUAL_MEMORY_DEVICE ||
      st == DUAL_ERR_ARGUMENT)
    return st;
  char *note = dual_strdup_printf("the GPU failed, so this ran on the CPU: %s",
                                  dual_context_last_error(ctx));
  st = cpu_run(ctx, job);
  if (st != DUAL_SUCCESS) {
    free(note);
    return st;
  }
  dual_clear_error(ctx);
  dual_set_note(ctx, note ? note : dual_strdup("the GPU failed, so this ran on the CPU"));
  ctx->last_device = DUAL_DEVICE_CPU;
  ctx->last_tier = DUAL_TIER_INTERPRET;
  return st;
}

/* Run on the context's device: a CPU context on the CPU; a GPU context asked for as AUTO, with
 * host arrays, where the dispatch model says (the CPU, the GPU or both: dispatch/dispatch.h,
 * unless DUAL_KNOB_DISPATCH is 1); else on the GPU, falling back to the CPU as above. */
static int dispatch(dual_context *ctx, const dual_job *job) {
  dual_set_note(ctx, NULL);
  const int64_t B = job->b->count;
  int st;
  if (ctx->device != DUAL_DEVICE_GPU) {
    ctx->last_tier = DUAL_TIER_INTERPRET; /* (the compiled CPU tier says when it ran) */
    st = cpu_run(ctx, job);
    if (st == DUAL_SUCCESS) ctx->last_device = DUAL_DEVICE_CPU;
  } else if (ctx->n_gpus > 1 && B > 0 && !ctx->gpu_no_wait && !ctx->solve_share) {
    /* every GPU (a device batch: those reaching its memory), no CPU share; it records the split.
     * Not a solver's own evaluations: its rounds on its device's arrays (gpu_no_wait), or a call
     * inside one device's share of a solve (solve_share), which runs on a split thread itself */
    return dual_multi_gpu_run(ctx, job, gpu_or_fallback);
  } else if (ctx->n_gpus == 1 && ctx->requested == DUAL_DEVICE_AUTO && job->b->memory == DUAL_MEMORY_HOST && B > 0 &&
             ctx->knobs[DUAL_KNOB_DISPATCH] != 1) {
    const dual_dispatch_engines e = {gpu_or_fallback, cpu_at_cpu_width, cpu_width(ctx, job),
                                     dual_gpu_would_compile(ctx, job)};
    return dual_dispatch_auto(ctx, job, &e); /* (it records the split) */
  } else {
    st = gpu_or_fallback(ctx, job);
  }
  if (st == DUAL_SUCCESS) dual_dispatch_record_single(ctx, B);
  return st;
}

/* dual_run's job for an eval or a Jacobian of a host batch on a CPU context, with `threads`
 * threads: the width and the AD mode dual_run chooses, so the same bits.  The batch is the
 * caller's to check (the solvers' own arrays), and nothing of the context changes but its error,
 * on failure: several threads may run jobs at once on one context (dual_newton's chunks). */
int dual_run_cpu_quiet(dual_context *ctx, const dual_program *prog, int mode, const dual_batch *b,
                       int threads) {
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = b, job.mode = mode;
  job.seed = ctx->seed, job.point0 = b->point0;
  job.nested_hessian = (int)ctx->knobs[DUAL_KNOB_HESSIAN_NESTED];
  job.width = choose_width(ctx, prog, mode, 1);
  job.reverse = choose_reverse(ctx, prog, mode);
  job.threads = threads > 0 ? threads : 1;
  return cpu_run(ctx, &job);
}

int dual_run_chooses_reverse(const dual_context *ctx, const dual_program *prog, int mode) {
  return choose_reverse(ctx, prog, mode);
}

int64_t dual_run_jacobian_passes(const dual_context *ctx, const dual_program *prog) {
  const int64_t cols = dual_program_jacobian_columns(prog);
  const int w = choose_width(ctx, prog, DUAL_MODE_JACOBIAN, 1);
  return cols == 0 ? 1 : (cols + w - 1) / w;
}

/* What a successful dual_run of `mode` on `prog` on the CPU records in the context, for the
 * callers of dual_run_cpu_quiet once their jobs are done. */
void dual_run_cpu_record(dual_context *ctx, const dual_program *prog, int mode) {
  dual_set_note(ctx, NULL);
  ctx->last_device = DUAL_DEVICE_CPU, ctx->last_tier = DUAL_TIER_INTERPRET;
  ctx->last_ad_mode = choose_reverse(ctx, prog, mode) ? DUAL_AD_REVERSE : DUAL_AD_FORWARD;
}

#define NEED(cond, ...)                                                                          \
  do {                                                                                           \
    if (!(cond)) return dual_fail(ctx, DUAL_ERR_ARGUMENT, __VA_ARGS__);                          \
  } while (0)

void dual_batch_init(dual_batch *batch) {
  if (batch == NULL) return;
  memset(batch, 0, sizeof *batch);
  batch->size = (int64_t)sizeof *batch;
}

int dual_run(dual_context *ctx, const dual_program *prog, int mode, const dual_batch *b) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  NEED(prog != NULL && b != NULL, "dual_run: program or batch is NULL");
  NEED(b->size == (int64_t)sizeof(dual_batch),
       "dual_run: the batch's size field is %lld, this library's dual_batch has %lld bytes: "
       "initialize batches with dual_batch_init (or the caller was built against another "
       "version of dualbatch.h)", (long long)b->size, (long long)sizeof(dual_batch));
  NEED(mode >= DUAL_MODE_EVAL && mode <= DUAL_MODE_SGRAD, "dual_run: unknown mode %d", mode);
  if (prog->seed_lane != NULL && mode != DUAL_MODE_EVAL && mode != DUAL_MODE_JACOBIAN)
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "%s of a colored view (program.h)", mode_name(mode));
  NEED(b->count >= 0, "%s: negative batch size %lld", mode_name(mode), (long long)b->count);
  NEED(b->memory == DUAL_MEMORY_HOST || b->memory == DUAL_MEMORY_DEVICE,
       "%s: unknown memory kind %d (DUAL_MEMORY_HOST or DUAL_MEMORY_DEVICE)", mode_name(mode),
       (int)b->memory);
  if (b->memory == DUAL_MEMORY_DEVICE && ctx->device != DUAL_DEVICE_GPU)
    return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "%s: the batch is in device memory but the context "
                     "runs on the CPU", mode_name(mode));
  const char *m = mode_name(mode);
  int64_t n = prog->n_in, np = prog->n_par, nout = prog->n_out;
  if ((mode == DUAL_MODE_GRADIENT || mode == DUAL_MODE_SGRAD) && nout != 1)
    return dual_fail(ctx, DUAL_ERR_DIMENSION,
                     "%s needs a scalar program (1 output); this one has %lld outputs%s", m,
                     (long long)nout, mode == DUAL_MODE_GRADIENT ? " (use jacobian)" : "");
  if (mode == DUAL_MODE_SGRAD) {
    const int anti = (b->sgrad_flags & DUAL_SGRAD_ANTITHETIC) != 0;
    NEED((b->sgrad_flags & ~(DUAL_SGRAD_ANTITHETIC | DUAL_SGRAD_SCORE)) == 0,
         "sgrad: unknown flags 0x%x (DUAL_SGRAD_ANTITHETIC | DUAL_SGRAD_SCORE)",
         (unsigned)b->sgrad_flags);
    NEED(b->samples >= (anti ? 4 : 2) && (!anti || b->samples % 2 == 0),
         "sgrad: %lld samples; the standard error needs at least %s", (long long)b->samples,
         anti ? "4, an even number (antithetic pairs)" : "2");
  }
  if (b->count > 0) {
    NEED(n == 0 || b->x != NULL, "%s: x is NULL but the program has %lld inputs", m, (long long)n);
    NEED(np == 0 || b->p != NULL, "%s: p is NULL but the program has %lld parameters", m, (long long)np);
    NEED((mode != DUAL_MODE_JVP && mode != DUAL_MODE_HVP) || n == 0 || b->v != NULL,
         "%s: the direction array v is NULL", m);
    NEED(mode != DUAL_MODE_EVAL || b->y != NULL, "eval: the output array y is NULL");
    NEED(mode == DUAL_MODE_EVAL || mode == DUAL_MODE_SGRAD || dual_mode_is_second_order(mode) ||
             b->d != NULL,
         "%s: the derivative array is NULL", m);
    NEED(mode != DUAL_MODE_VJP || nout == 0 || b->u != NULL, "vjp: the cotangent array u is NULL");
    NEED(!dual_mode_is_second_order(mode) || n == 0 || b->h != NULL,
         "%s: the second-derivative array h is NULL", m);
  }
  NEED(mode != DUAL_MODE_HESSIAN || b->h_layout == DUAL_HESSIAN_FULL ||
           b->h_layout == DUAL_HESSIAN_PACKED,
       "hessian: unknown layout %d (DUAL_HESSIAN_FULL or DUAL_HESSIAN_PACKED)", (int)b->h_layout);

  int ok = strides_fit(b->count, b->x_ps, n, b->x_es) && strides_fit(b->count, b->p_ps, np, b->p_es) &&
           strides_fit(b->count, b->v_ps, n, b->v_es) && strides_fit(b->count, b->y_ps, nout, b->y_es) &&
           strides_fit(b->count, b->u_ps, nout, b->u_es) &&
           strides_fit(b->count, b->d_ps, nout, b->d_rs) && strides_fit(1, 0, dual_program_jacobian_columns(prog), b->d_cs) &&
           (mode != DUAL_MODE_SGRAD || strides_fit(b->count, b->h_ps, n, b->h_es)) &&
           (!dual_mode_is_second_order(mode) ||
            (strides_fit(b->count, b->h_ps, nout, b->h_rs) &&
             strides_fit(1, 0, dual_pass2_out_len(mode, n, b->h_layout), b->h_es)));
  if (!ok) return dual_fail(ctx, DUAL_ERR_DIMENSION, "%s: strides overflow a 64-bit index", m);

  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog;
  job.b = b;
  job.mode = mode;
  job.seed = ctx->seed; /* draws: sample 0 of the context's seed */
  job.point0 = b->point0;
  job.nested_hessian = (int)ctx->knobs[DUAL_KNOB_HESSIAN_NESTED];
  dual_program *score = NULL;
  if (mode == DUAL_MODE_SGRAD) { /* per sample: a gradient, or the score program's Jacobian */
    job.samples = b->samples;
    job.seed = (uint64_t)b->seed;
    job.antithetic = (b->sgrad_flags & DUAL_SGRAD_ANTITHETIC) != 0;
    job.score = (b->sgrad_flags & DUAL_SGRAD_SCORE) != 0;
    job.mode = job.score ? DUAL_MODE_JACOBIAN : DUAL_MODE_GRADIENT;
    if (job.score) {
      const int st = dual_sgrad_score_program(ctx, prog, &score);
      if (st != DUAL_SUCCESS) return st;
      job.prog = score;
    }
  }
  job.width = choose_width(ctx, job.prog, job.mode, 1);
  job.reverse = choose_reverse(ctx, job.prog, job.mode);
  job.threads = ctx->threads;
#ifdef _OPENMP
  if (job.threads <= 0) job.threads = omp_get_max_threads();
#else
  job.threads = 1;
#endif
  const int st = dispatch(ctx, &job);
  if (st == DUAL_SUCCESS) ctx->last_ad_mode = job.reverse ? DUAL_AD_REVERSE : DUAL_AD_FORWARD;
  dual_program_destroy(&score);
  return st;
}

/* Leading-dimension checks of the simple calls. */
static int check_ld(dual_context *ctx, const char *fn, const char *arr, const void *ptr, int64_t ld,
                    int64_t need, const char *what) {
  if (ptr == NULL || need == 0) return DUAL_SUCCESS;
  if (ld < need)
    return dual_fail(ctx, DUAL_ERR_DIMENSION,
                     "%s: ld%s = %lld is smaller than the %lld %s of each point", fn, arr,
                     (long long)ld, (long long)need, what);
  return DUAL_SUCCESS;
}

#define CHECK_LD(arr, ld, need, what)                                                            \
  do {                                                                                           \
    int s_ = check_ld(ctx, fn, #arr, arr, ld, need, what);                                       \
    if (s_) return s_;                                                                           \
  } while (0)

static void batch_init(dual_batch *b, int64_t B, const double *x, int64_t ldx, const double *p,
                       int64_t ldp, double *y, int64_t ldy, int32_t *status) {
  dual_batch_init(b);
  b->count = B;
  b->x = x, b->x_ps = ldx, b->x_es = 1;
  b->p = p, b->p_ps = ldp, b->p_es = 1;
  b->y = y, b->y_ps = ldy, b->y_es = 1;
  b->status = status;
}

#define ENTRY_CHECK()                                                                            \
  do {                                                                                           \
    if (ctx == NULL) return DUAL_ERR_ARGUMENT;                                                   \
    if (prog == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: program is NULL", fn);       \
    CHECK_LD(x, ldx, prog->n_in, "inputs");                                                      \
    CHECK_LD(p, ldp, prog->n_par, "parameters");                                                 \
  } while (0)

int dual_eval(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, int64_t ldx,
              const double *p, int64_t ldp, double *y, int64_t ldy, int32_t *status) {
  const char *fn = "dual_eval";
  ENTRY_CHECK();
  CHECK_LD(y, ldy, prog->n_out, "outputs");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, y, ldy, status);
  return dual_run(ctx, prog, DUAL_MODE_EVAL, &b);
}

int dual_jvp(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, int64_t ldx,
             const double *p, int64_t ldp, const double *v, int64_t ldv, double *y, int64_t ldy,
             double *jv, int64_t ldjv, int32_t *status) {
  const char *fn = "dual_jvp";
  ENTRY_CHECK();
  CHECK_LD(v, ldv, prog->n_in, "inputs");
  CHECK_LD(y, ldy, prog->n_out, "outputs");
  CHECK_LD(jv, ldjv, prog->n_out, "outputs");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, y, ldy, status);
  b.v = v, b.v_ps = ldv, b.v_es = 1;
  b.d = jv, b.d_ps = ldjv, b.d_rs = 1, b.d_cs = 0;
  return dual_run(ctx, prog, DUAL_MODE_JVP, &b);
}

int dual_jacobian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                  int64_t ldx, const double *p, int64_t ldp, double *y, int64_t ldy, double *J,
                  int64_t ldj, int32_t *status) {
  const char *fn = "dual_jacobian";
  ENTRY_CHECK();
  CHECK_LD(y, ldy, prog->n_out, "outputs");
  CHECK_LD(J, ldj, (int64_t)prog->n_out * prog->n_in, "Jacobian entries (m*n)");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, y, ldy, status);
  b.d = J, b.d_ps = ldj, b.d_rs = prog->n_in, b.d_cs = 1;
  return dual_run(ctx, prog, DUAL_MODE_JACOBIAN, &b);
}

int dual_gradient(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                  int64_t ldx, const double *p, int64_t ldp, double *f, double *g, int64_t ldg,
                  int32_t *status) {
  const char *fn = "dual_gradient";
  ENTRY_CHECK();
  CHECK_LD(g, ldg, prog->n_in, "inputs");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, f, 1, status);
  b.d = g, b.d_ps = ldg, b.d_rs = 0, b.d_cs = 1;
  return dual_run(ctx, prog, DUAL_MODE_GRADIENT, &b);
}

int dual_hessian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                 int64_t ldx, const double *p, int64_t ldp, double *y, int64_t ldy, double *J,
                 int64_t ldj, double *H, int64_t ldh, int layout, int32_t *status) {
  const char *fn = "dual_hessian";
  ENTRY_CHECK();
  if (layout != DUAL_HESSIAN_FULL && layout != DUAL_HESSIAN_PACKED)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "%s: unknown layout %d (DUAL_HESSIAN_FULL or DUAL_HESSIAN_PACKED)", fn, layout);
  const int64_t len = dual_pass2_out_len(DUAL_MODE_HESSIAN, prog->n_in, layout);
  CHECK_LD(y, ldy, prog->n_out, "outputs");
  CHECK_LD(J, ldj, (int64_t)prog->n_out * prog->n_in, "Jacobian entries (m*n)");
  CHECK_LD(H, ldh, (int64_t)prog->n_out * len,
           layout == DUAL_HESSIAN_FULL ? "Hessian entries (m*n*n)" : "packed Hessian entries (m*n(n+1)/2)");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, y, ldy, status);
  b.d = J, b.d_ps = ldj, b.d_rs = prog->n_in, b.d_cs = 1;
  b.h = H, b.h_ps = ldh, b.h_rs = len, b.h_es = 1, b.h_layout = layout;
  return dual_run(ctx, prog, DUAL_MODE_HESSIAN, &b);
}

int dual_hvp(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, int64_t ldx,
             const double *p, int64_t ldp, const double *v, int64_t ldv, double *y, int64_t ldy,
             double *J, int64_t ldj, double *hv, int64_t ldhv, int32_t *status) {
  const char *fn = "dual_hvp";
  ENTRY_CHECK();
  CHECK_LD(v, ldv, prog->n_in, "inputs");
  CHECK_LD(y, ldy, prog->n_out, "outputs");
  CHECK_LD(J, ldj, (int64_t)prog->n_out * prog->n_in, "Jacobian entries (m*n)");
  CHECK_LD(hv, ldhv, (int64_t)prog->n_out * prog->n_in, "entries of the m vectors H v (m*n)");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, y, ldy, status);
  b.v = v, b.v_ps = ldv, b.v_es = 1;
  b.d = J, b.d_ps = ldj, b.d_rs = prog->n_in, b.d_cs = 1;
  b.h = hv, b.h_ps = ldhv, b.h_rs = prog->n_in, b.h_es = 1;
  return dual_run(ctx, prog, DUAL_MODE_HVP, &b);
}

int dual_vjp(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, int64_t ldx,
             const double *p, int64_t ldp, const double *u, int64_t ldu, double *y, int64_t ldy,
             double *g, int64_t ldg, int32_t *status) {
  const char *fn = "dual_vjp";
  ENTRY_CHECK();
  CHECK_LD(u, ldu, prog->n_out, "outputs");
  CHECK_LD(y, ldy, prog->n_out, "outputs");
  CHECK_LD(g, ldg, prog->n_in, "inputs");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, y, ldy, status);
  b.u = u, b.u_ps = ldu, b.u_es = 1;
  b.d = g, b.d_ps = ldg, b.d_rs = 0, b.d_cs = 1;
  return dual_run(ctx, prog, DUAL_MODE_VJP, &b);
}

int dual_sgrad(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
               int64_t ldx, const double *p, int64_t ldp, int64_t samples, int64_t seed,
               int flags, double *f, double *g, int64_t ldg, double *se, int64_t ldse,
               int32_t *status) {
  const char *fn = "dual_sgrad";
  ENTRY_CHECK();
  CHECK_LD(g, ldg, prog->n_in, "inputs");
  CHECK_LD(se, ldse, prog->n_in, "inputs");
  dual_batch b;
  batch_init(&b, B, x, ldx, p, ldp, f, 1, status);
  b.d = g, b.d_ps = ldg, b.d_rs = 0, b.d_cs = 1;
  b.h = se, b.h_ps = ldse, b.h_rs = 0, b.h_es = 1;
  b.samples = samples, b.seed = seed, b.sgrad_flags = flags;
  return dual_run(ctx, prog, DUAL_MODE_SGRAD, &b);
}
