/*
 * engine_rev.c — the CPU reverse-mode engine: VJPs, and gradients and Jacobians when the context
 * asks for reverse mode.  Per block of points one forward sweep records each op's partials on a
 * tape (interp_rev_block.h), then one adjoint sweep per cotangent (the caller's u for a VJP, each
 * output's unit vector for a Jacobian) accumulates the derivatives.  OpenMP over blocks; each
 * point's arithmetic is independent of the block and thread, so results are reproducible.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dual/rules.h"
#include "exec.h"

/* Points per block: the tape holds three rows per recorded instruction. */
#define DUAL_BLKR 16

typedef struct dual_cpu_wsr {
  double *val;          /* [n_regs][BLK] */
  double *tape;         /* [rows][BLK] */
  const int64_t *tape_at; /* [n_instr]: first tape row of instruction t, or -1 (shared) */
  double *adj;          /* [n_active + 1][BLK] */
  double *grad;         /* [n_in + 1][BLK] */
  double *scratch;      /* [3][BLK] */
  int *st;              /* [BLK] */
  void *mem;
} dual_cpu_wsr;

#include "interp_rev_block.h"

static int wsr_alloc(dual_cpu_wsr *ws, const dual_program *prog, int64_t tape_rows) {
  const size_t rows = (size_t)prog->n_regs + (size_t)tape_rows + (size_t)prog->n_active + 1 +
                      (size_t)prog->n_in + 1 + 3;
  ws->mem = malloc(rows * DUAL_BLKR * sizeof(double) + DUAL_BLKR * sizeof(int));
  if (ws->mem == NULL) return 0;
  ws->val = (double *)ws->mem;
  ws->tape = ws->val + (size_t)prog->n_regs * DUAL_BLKR;
  ws->adj = ws->tape + (size_t)tape_rows * DUAL_BLKR;
  ws->grad = ws->adj + ((size_t)prog->n_active + 1) * DUAL_BLKR;
  ws->scratch = ws->grad + ((size_t)prog->n_in + 1) * DUAL_BLKR;
  ws->st = (int *)(ws->scratch + 3 * DUAL_BLKR);
  return 1;
}

/* Tape rows: three per instruction whose active result carries tangents. */
static int64_t tape_layout(const dual_program *prog, int64_t *tape_at) {
  int64_t rows = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
    const int records = DUAL_INSTR_DST(w) < prog->n_active && info->prop != DUAL_PROP_LOAD &&
                        info->prop != DUAL_PROP_OUT && info->prop != DUAL_PROP_NONE;
    tape_at[t] = records ? rows : -1;
    if (records) rows += 3;
  }
  return rows;
}

int dual_cpu_run_rev(dual_context *ctx, const dual_job *job) {
  const dual_program *prog = job->prog;
  const int64_t count = job->b->count;
  if (count == 0) return DUAL_SUCCESS;
  int64_t *tape_at = (int64_t *)malloc(((size_t)prog->n_instr + 1) * sizeof *tape_at);
  if (tape_at == NULL)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory preparing %lld instructions",
                     (long long)prog->n_instr);
  const int64_t tape_rows = tape_layout(prog, tape_at);
  const int64_t nblocks = (count + DUAL_BLKR - 1) / DUAL_BLKR;
  /* cotangents: the caller's u (VJP) or the outputs' unit vectors, one sweep each */
  const int sweeps = job->mode == DUAL_MODE_JACOBIAN ? prog->n_out : 1;
  int failed = 0;
  int threads = job->threads;
  if ((int64_t)threads > nblocks) threads = (int)nblocks;
#pragma omp parallel num_threads(threads)
  {
    dual_cpu_wsr ws;
    memset(&ws, 0, sizeof ws);
    const int ok = wsr_alloc(&ws, prog, tape_rows);
    ws.tape_at = tape_at;
    if (!ok) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(dynamic, 4)
    for (int64_t ib = 0; ib < nblocks; ++ib) {
      if (!ok) continue;
      const int64_t p0 = ib * DUAL_BLKR;
      const int nb = (int)(count - p0 < DUAL_BLKR ? count - p0 : DUAL_BLKR);
      memset(ws.st, 0, (size_t)DUAL_BLKR * sizeof(int));
      dual_cpu_rev_forward(job, &ws, p0, nb);
      for (int s = 0; s < sweeps; ++s)
        dual_cpu_rev_adjoint(job, &ws, p0, nb, job->mode == DUAL_MODE_VJP ? -1 : s, s);
      if (job->b->status != NULL)
        for (int p = 0; p < nb; ++p) job->b->status[p0 + p] = (int32_t)ws.st[p];
    }
    free(ws.mem);
  }
  free(tape_at);
  if (failed)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "out of memory allocating the reverse-mode workspace (%d points x %lld tape "
                     "rows)", DUAL_BLKR, (long long)tape_rows);
  return DUAL_SUCCESS;
}
