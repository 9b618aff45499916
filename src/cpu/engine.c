/*
 * engine.c — the CPU engine: splits the batch into blocks of points, runs the block
 * interpreter (interp_block.h, instantiated here for every width) on each block with OpenMP,
 * one workspace per thread, and writes the per-point status words.  Each point's arithmetic is
 * independent of the block, the thread and the width, so results are bitwise reproducible.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dual/rules.h"
#include "engine/lanes.h"
#include "engine/pass.h"
#include "exec.h"

/* One thread's scratch: the register file of a block and the partial-derivative rows. */
typedef struct dual_cpu_ws {
  int64_t blk; /* points per block (row length) */
  double *val; /* [n_regs][blk] */
  double *tan; /* [n_active][W][blk] */
  double *pa, *pb, *pc;
  double *tile; /* [blk][W] transpose tile for output rows, all zeros between uses */
  int *st;
  void *mem;
} dual_cpu_ws;

/* Points per block, a compile-time constant per instantiation so every op loop is unrolled and
 * vectorized.  Large blocks amortize the fixed cost of interpreting an op (dispatch, lane-run
 * setup) over more points; wide tangents also get a small-block variant, used when a large
 * block's register file would not stay in cache (bench/NOTES.md has the measurements). */
#define DUAL_BLOCK_FN2(w, blk) dual_cpu_block_w##w##_b##blk
#define DUAL_BLOCK_FN(w, blk) DUAL_BLOCK_FN2(w, blk)

#define DUAL_W 0
#define DUAL_BLK 256
#include "interp_block.h"
#undef DUAL_BLK
#define DUAL_BLK 16
#include "interp_block.h"
#undef DUAL_W
#undef DUAL_BLK
#define DUAL_W 1
#define DUAL_BLK 128
#include "interp_block.h"
#undef DUAL_BLK
#define DUAL_BLK 16
#include "interp_block.h"
#undef DUAL_W
#undef DUAL_BLK
#define DUAL_W 2
#define DUAL_BLK 128
#include "interp_block.h"
#undef DUAL_BLK
#define DUAL_BLK 16
#include "interp_block.h"
#undef DUAL_W
#undef DUAL_BLK
#define DUAL_W 4
#define DUAL_BLK 64
#include "interp_block.h"
#undef DUAL_BLK
#define DUAL_BLK 16
#include "interp_block.h"
#undef DUAL_W
#undef DUAL_BLK
#define DUAL_W 8
#define DUAL_BLK 64
#include "interp_block.h"
#undef DUAL_BLK
#define DUAL_BLK 16
#include "interp_block.h"
#undef DUAL_W
#undef DUAL_BLK
#define DUAL_W 16
#define DUAL_BLK 64
#include "interp_block.h"
#undef DUAL_BLK
#define DUAL_BLK 16
#include "interp_block.h"
#undef DUAL_W
#undef DUAL_BLK
#define DUAL_W 32
#define DUAL_BLK 64
#include "interp_block.h"
#undef DUAL_BLK
#define DUAL_BLK 16
#include "interp_block.h"
#undef DUAL_W
#undef DUAL_BLK

typedef void (*dual_block_fn)(const dual_job *, const dual_cpu_ws *, const dual_lanes *, int64_t,
                              int, int32_t, int);

/* A large block's register file above this many bytes takes the small-block variant. */
#define DUAL_CPU_BLOCK_BUDGET (2u << 20)

/* The block interpreter for a width and program, and its block size. */
static dual_block_fn block_fn(const dual_program *prog, int width, int64_t *blk) {
  size_t per_point = 8 * ((size_t)prog->n_regs + (size_t)prog->n_active * (size_t)width);
  int small = per_point * 64 > DUAL_CPU_BLOCK_BUDGET;
  switch (width) {
  case 0: *blk = 256; return dual_cpu_block_w0_b256;
  case 1: *blk = 128; return dual_cpu_block_w1_b128;
  case 2: *blk = 128; return dual_cpu_block_w2_b128;
  case 4: *blk = 64; return dual_cpu_block_w4_b64;
  case 8: *blk = small ? 16 : 64; return small ? dual_cpu_block_w8_b16 : dual_cpu_block_w8_b64;
  case 16: *blk = small ? 16 : 64; return small ? dual_cpu_block_w16_b16 : dual_cpu_block_w16_b64;
  case 32: *blk = small ? 16 : 64; return small ? dual_cpu_block_w32_b16 : dual_cpu_block_w32_b64;
  default: return NULL;
  }
}

/* The 16-point block interpreter for a width (the few points after a call's last whole block). */
static dual_block_fn tail_fn(int width) {
  switch (width) {
  case 0: return dual_cpu_block_w0_b16;
  case 1: return dual_cpu_block_w1_b16;
  case 2: return dual_cpu_block_w2_b16;
  case 4: return dual_cpu_block_w4_b16;
  case 8: return dual_cpu_block_w8_b16;
  case 16: return dual_cpu_block_w16_b16;
  case 32: return dual_cpu_block_w32_b16;
  default: return NULL;
  }
}

static int ws_alloc(dual_cpu_ws *ws, const dual_program *prog, int width, int64_t blk) {
  size_t rows = (size_t)prog->n_regs + (size_t)prog->n_active * (size_t)width + 3 + (size_t)width;
  size_t bytes = rows * (size_t)blk * sizeof(double) + (size_t)blk * sizeof(int) + 64;
  ws->mem = malloc(bytes);
  if (ws->mem == NULL) return 0;
  ws->blk = blk;
  ws->val = (double *)ws->mem;
  ws->tan = ws->val + (size_t)prog->n_regs * (size_t)blk;
  ws->pa = ws->tan + (size_t)prog->n_active * (size_t)width * (size_t)blk;
  ws->pb = ws->pa + blk;
  ws->pc = ws->pb + blk;
  ws->tile = ws->pc + blk;
  ws->st = (int *)(ws->tile + (size_t)width * (size_t)blk);
  memset(ws->tile, 0, sizeof(double) * (size_t)width * (size_t)blk); /* zeros between uses */
  return 1;
}

int64_t dual_job_passes(const dual_job *job) {
  if (job->mode != DUAL_MODE_JACOBIAN && job->mode != DUAL_MODE_GRADIENT) return 1;
  int64_t n = dual_program_jacobian_columns(job->prog);
  return n == 0 ? 1 : (n + job->width - 1) / job->width;
}

/* Passes are the outer loop (each has its own lane masks, computed once); blocks of points are
 * shared among the threads.  The status of a point is the OR over its passes. */
int dual_cpu_run(dual_context *ctx, const dual_job *job) {
  const dual_program *prog = job->prog;
  const int64_t count = job->b->count;
  if (count == 0) return DUAL_SUCCESS;
  int64_t blk = 0;
  dual_block_fn fn = block_fn(prog, job->width, &blk);
  if (fn == NULL) return dual_fail(ctx, DUAL_ERR_INTERNAL, "no CPU kernel for width %d", job->width);
  /* a batch too small to give every thread a large block: 16-point blocks throughout */
  if (blk > 16 && count < (int64_t)job->threads * blk) fn = tail_fn(job->width), blk = 16;
  /* the points after the last whole block go in 16-point blocks where they are at most half a
   * block (a solver's late rounds have a few points each, and the block's loops run over all of
   * its points); every point's arithmetic is the same in either */
  const int64_t nfull = count / blk, rem = count - nfull * blk;
  const dual_block_fn tfn = blk > 16 && rem > 0 && rem <= blk / 2 ? tail_fn(job->width) : NULL;
  const int64_t nblocks = nfull + (tfn != NULL ? (rem + 15) / 16 : rem > 0), passes = dual_job_passes(job);
  const int64_t n = dual_program_jacobian_columns(prog);
  const int mask = job->width == 0 ? ~DUAL_PT_SINGULAR : ~0; /* no derivative, no singularity */
  dual_lanes *lanes = (dual_lanes *)malloc((size_t)prog->n_instr * sizeof *lanes);
  uint32_t *reg_mask = (uint32_t *)malloc(((size_t)prog->n_active + 1) * sizeof *reg_mask);
  if (lanes == NULL || reg_mask == NULL) {
    free(lanes);
    free(reg_mask);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory preparing %lld instructions",
                     (long long)prog->n_instr);
  }
  int failed = 0;
  int threads = job->threads;
  if ((int64_t)threads > nblocks) threads = (int)nblocks;
  const int take = dual_blocks_per_take(nblocks, threads);
#pragma omp parallel num_threads(threads)
  {
    dual_cpu_ws ws, ws16; /* ws16: the 16-point blocks', allocated at the first */
    int ok = ws_alloc(&ws, prog, job->width, blk), ok16 = 0;
    if (!ok) {
#pragma omp atomic write
      failed = 1;
    }
    for (int64_t pass = 0; pass < passes; ++pass) {
      const int32_t c0 = (int32_t)(pass * job->width);
      const int kcount = dual_pass_columns(job->mode, n, c0, job->width);
#pragma omp single
      dual_lanes_compute(prog, job->mode, job->width, c0, reg_mask, lanes);
#pragma omp for schedule(dynamic, take)
      for (int64_t ib = 0; ib < nblocks; ++ib) {
        if (!ok) continue;
        const int small = ib >= nfull && tfn != NULL;
        if (small && !ok16 && !(ok16 = ws_alloc(&ws16, prog, job->width, 16))) {
          ok = 0;
#pragma omp atomic write
          failed = 1;
          continue;
        }
        const int64_t p0 = small ? nfull * blk + (ib - nfull) * 16 : ib * blk, size = small ? 16 : blk;
        const int nb = (int)(count - p0 < size ? count - p0 : size);
        DUAL_ASSERT(p0 >= 0 && nb >= 1 && nb <= size); /* every block holds points of the batch */
        const dual_cpu_ws *w = small ? &ws16 : &ws;
        memset(w->st, 0, (size_t)nb * sizeof(int));
        (small ? tfn : fn)(job, w, lanes, p0, nb, c0, kcount);
        int32_t *status = job->b->status;
        if (status != NULL && pass == 0)
          for (int p = 0; p < nb; ++p) status[p0 + p] = (int32_t)(w->st[p] & mask);
        else if (status != NULL)
          for (int p = 0; p < nb; ++p) status[p0 + p] |= (int32_t)(w->st[p] & mask);
      }
    }
    if (ws.mem != NULL) free(ws.mem);
    if (ok16) free(ws16.mem);
  }
  free(lanes);
  free(reg_mask);
  if (failed)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "out of memory allocating the CPU workspace (%lld points x %d registers)",
                     (long long)blk, (int)prog->n_regs);
  return DUAL_SUCCESS;
}
