/*
 * engine_rev.c — the CPU reverse-mode engine: VJPs, and gradients and Jacobians in reverse mode.
 * Per block of points one forward sweep tapes each op's partials, then one adjoint sweep runs per
 * cotangent (the caller's u for a VJP, each output's unit vector for a Jacobian); the sweeps are
 * engine/interp_rev.h, shared with the GPU.  Hessians and HVPs in reverse mode run
 * forward-over-reverse: a forward sweep carrying one direction's tangents (v, or each input's
 * unit vector for a Hessian), then an adjoint sweep per output that yields the gradient and the
 * derivative along the direction.  When a thread's tape would pass its share of the
 * memory budget (the context's memory limit, else DUAL_CPU_MEMORY_DEFAULT), the plan cuts the
 * program into checkpointed segments (engine/rev_plan.h).  OpenMP over blocks; each point's
 * arithmetic is independent of the block, the thread and the segmentation, so results are
 * reproducible bit for bit.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dual/rules.h"
#include "engine/rev_plan.h"
#include "exec.h"

/* Points per block. */
#define DUAL_BLKR 16

typedef struct dual_cpu_wsr {
  double *val;        /* [n_regs][BLK] */
  double *tan;        /* [n_active][BLK] (forward-over-reverse) */
  double *snap;       /* [nseg][state_rows][BLK]: values (and tangents) at each segment's start */
  double *tape;       /* [rows][BLK] */
  double *adj, *adjd; /* [n_active + 1][BLK] each (adjd: forward-over-reverse) */
  double *grad, *gradd; /* [n_in + 1][BLK] each */
  double *scratch;    /* [3 or 8][BLK] */
  int *st;            /* [BLK] */
  int64_t state_rows; /* rows of a checkpoint */
  void *mem;
} dual_cpu_wsr;

#include "interp_rev_block.h"

/* A zeroed workspace (the sweeps leave adjoints and derivatives zero again). */
static int wsr_alloc(dual_cpu_wsr *ws, const dual_rev_plan *pl, const dual_program *prog) {
  const dual_rev_layout l = dual_rev_plan_layout(pl, prog);
  ws->mem = calloc((size_t)l.end * DUAL_BLKR * sizeof(double) + DUAL_BLKR * sizeof(int), 1);
  if (ws->mem == NULL) return 0;
  double *base = (double *)ws->mem;
  ws->val = base + l.val * DUAL_BLKR;
  ws->tan = base + l.tan * DUAL_BLKR;
  ws->snap = base + l.snap * DUAL_BLKR;
  ws->tape = base + l.tape * DUAL_BLKR;
  ws->adj = base + l.adj * DUAL_BLKR;
  ws->adjd = base + l.adjd * DUAL_BLKR;
  ws->grad = base + l.grad * DUAL_BLKR;
  ws->gradd = base + l.gradd * DUAL_BLKR;
  ws->scratch = base + l.scratch * DUAL_BLKR;
  ws->state_rows = l.snap - l.val;
  ws->st = (int *)(base + l.end * DUAL_BLKR);
  return 1;
}

int dual_cpu_run_rev(dual_context *ctx, const dual_job *job) {
  const dual_program *prog = job->prog;
  const int64_t count = job->b->count;
  if (count == 0) return DUAL_SUCCESS;
  const int64_t nblocks = (count + DUAL_BLKR - 1) / DUAL_BLKR;
  int threads = job->threads;
  if ((int64_t)threads > nblocks) threads = (int)nblocks;
  const int take = dual_blocks_per_take(nblocks, threads);
  const int64_t limit = ctx->memory_limit > 0 ? ctx->memory_limit : DUAL_CPU_MEMORY_DEFAULT;
  const int64_t budget = limit / threads / DUAL_BLKR / (int64_t)sizeof(double);
  if (budget < 1) /* 0 would mean "unbounded" to the planner */
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "reverse mode: the memory limit of %lld bytes leaves each of %d threads less "
                     "than one block of %d points (%lld bytes); raise it or use fewer threads "
                     "(dual_context_set_memory_limit, dual_context_set_threads)",
                     (long long)limit, threads, DUAL_BLKR,
                     (long long)(DUAL_BLKR * (int64_t)sizeof(double)));
  const int for_ = dual_mode_is_second_order(job->mode); /* forward-over-reverse */
  dual_rev_plan plan;
  const int ps = dual_rev_plan_build(&plan, prog, for_, budget);
  if (ps == DUAL_ERR_LIMIT)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "reverse mode: a block of %d points needs at least %lld bytes of tape and "
                     "snapshots per thread, over the memory limit of %lld bytes for %d threads "
                     "(dual_context_set_memory_limit)", DUAL_BLKR,
                     (long long)(plan.per_point * DUAL_BLKR * (int64_t)sizeof(double)),
                     (long long)limit, threads);
  if (ps != DUAL_SUCCESS)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory preparing %lld instructions",
                     (long long)prog->n_instr);
  /* cotangents: the caller's u (VJP) or the outputs' unit vectors, one sweep each */
  const int sweeps = job->mode == DUAL_MODE_JACOBIAN ? prog->n_out : 1;
  int failed = 0;
#pragma omp parallel num_threads(threads)
  {
    dual_cpu_wsr ws;
    memset(&ws, 0, sizeof ws);
    const int ok = wsr_alloc(&ws, &plan, prog);
    if (!ok) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(dynamic, take)
    for (int64_t ib = 0; ib < nblocks; ++ib) {
      if (!ok) continue;
      dual_cpu_rev_ctx R;
      R.job = job, R.ws = &ws, R.plan = &plan;
      R.p0 = ib * DUAL_BLKR;
      R.nb = (int)(count - R.p0 < DUAL_BLKR ? count - R.p0 : DUAL_BLKR);
      memset(ws.st, 0, (size_t)DUAL_BLKR * sizeof(int));
      R.dir = -1;
      if (!for_) {
        for (int s = 0; s < sweeps; ++s) {
          R.unit_output = job->mode == DUAL_MODE_VJP ? -1 : s;
          dual_rev_sweeps(&R, prog->n_active, plan.seg, plan.nseg, s > 0);
          dual_cpu_rev_store(&R, s);
        }
      } else { /* HVP: the direction v; Hessian: each input's unit vector; one sweep per output */
        const int32_t ndir = job->mode == DUAL_MODE_HVP || prog->n_in == 0 ? 1 : prog->n_in;
        for (int32_t k = 0; k < ndir; ++k) {
          R.dir = job->mode == DUAL_MODE_HVP ? -1 : k;
          for (int s = 0; s < prog->n_out; ++s) {
            R.unit_output = s;
            dual_rev_sweeps_for(&R, prog->n_active, plan.seg, plan.nseg, s > 0);
            dual_cpu_for_store(&R, s);
          }
        }
      }
      if (job->b->status != NULL)
        for (int p = 0; p < R.nb; ++p) job->b->status[R.p0 + p] = (int32_t)ws.st[p];
    }
    free(ws.mem);
  }
  const int32_t nseg = plan.nseg;
  dual_rev_plan_free(&plan);
  if (!failed && nseg > 1)
    dual_set_note(ctx, dual_strdup_printf(DUAL_REV_SEGMENTS_NOTE, nseg));
  if (failed)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "out of memory allocating the reverse-mode workspace (%d points x %lld "
                     "doubles)", DUAL_BLKR, (long long)plan.per_point);
  return DUAL_SUCCESS;
}
