/*
 * engine2.c — the CPU engine for second order (Hessians and Hessian-vector products): for each
 * pass of engine/pass2.h, one thread builds its plan (engine/plan2.h) and all threads run the
 * block interpreter (interp2_block.h) over blocks of points with OpenMP.  Every component is
 * computed from its own pair only, so results are bitwise identical for every width, block and
 * thread count.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dual/rules.h"
#include "engine/pass2.h"
#include "engine/plan2.h"
#include "exec.h"

/* Points per block: a compile-time constant so the point loops vectorize.  A pass of hess keeps
 * a few hundred slots per point, so 16 points stay within the L2 cache. */
#define DUAL_BLK2 16

/* One thread's scratch: the block's values, slots and partial rows. */
typedef struct dual_cpu_ws2 {
  double *val;   /* [n_regs][BLK] */
  double *slots; /* [cap_slots][BLK] */
  double *part;  /* [6][BLK]: pa, pb, pc, paa, pab, pbb */
  int *st;       /* [BLK] */
  int64_t cap_slots;
  void *mem;
} dual_cpu_ws2;

#include "interp2_block.h"

/* Make room for `slots` slots; returns 1, or 0 when out of memory. */
static int ws2_reserve(dual_cpu_ws2 *ws, const dual_program *prog, int64_t slots) {
  if (ws->mem != NULL && slots <= ws->cap_slots) return 1;
  const int64_t cap = slots > 2 * ws->cap_slots ? slots : 2 * ws->cap_slots;
  const size_t rows = (size_t)prog->n_regs + (size_t)cap + 6;
  void *mem = malloc(rows * DUAL_BLK2 * sizeof(double) + DUAL_BLK2 * sizeof(int));
  if (mem == NULL) return 0;
  free(ws->mem);
  ws->mem = mem;
  ws->cap_slots = cap;
  ws->val = (double *)mem;
  ws->slots = ws->val + (size_t)prog->n_regs * DUAL_BLK2;
  ws->part = ws->slots + (size_t)cap * DUAL_BLK2;
  ws->st = (int *)(ws->part + 6 * DUAL_BLK2);
  return 1;
}

int dual_cpu_run2(dual_context *ctx, const dual_job *job) {
  const dual_program *prog = job->prog;
  const int64_t count = job->b->count;
  if (count == 0) return DUAL_SUCCESS;
  const int64_t nblocks = (count + DUAL_BLK2 - 1) / DUAL_BLK2, passes = dual_pass2_count(job);
  dual_plan2 plan;
  dual_pass2 *pass = (dual_pass2 *)malloc(sizeof *pass);
  if (pass == NULL || dual_plan2_init(&plan, prog) != DUAL_SUCCESS) {
    free(pass);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory preparing %lld instructions",
                     (long long)prog->n_instr);
  }
  int plan_failed = 0, ws_failed = 0;
  int threads = job->threads;
  if ((int64_t)threads > nblocks) threads = (int)nblocks;
  const int take = dual_blocks_per_take(nblocks, threads);
#pragma omp parallel num_threads(threads)
  {
    dual_cpu_ws2 ws;
    memset(&ws, 0, sizeof ws);
    for (int64_t ip = 0; ip < passes; ++ip) {
#pragma omp single
      {
        dual_pass2_make(job, ip, pass);
        if (!plan_failed && dual_plan2_build(&plan, prog, pass) != DUAL_SUCCESS) plan_failed = 1;
      }
      if (plan_failed) break; /* the same for every thread after the barrier of `single` */
      const int ok = ws2_reserve(&ws, prog, plan.n_slots > 0 ? plan.n_slots : 1);
      if (!ok) {
#pragma omp atomic write
        ws_failed = 1;
      }
#pragma omp for schedule(dynamic, take)
      for (int64_t ib = 0; ib < nblocks; ++ib) {
        if (!ok) continue;
        const int64_t p0 = ib * DUAL_BLK2;
        const int nb = (int)(count - p0 < DUAL_BLK2 ? count - p0 : DUAL_BLK2);
        memset(ws.st, 0, (size_t)DUAL_BLK2 * sizeof(int));
        dual_cpu_block2(job, &ws, pass, &plan, p0, nb, ip == 0);
        int32_t *status = job->b->status;
        if (status != NULL && ip == 0)
          for (int p = 0; p < nb; ++p) status[p0 + p] = (int32_t)ws.st[p];
        else if (status != NULL)
          for (int p = 0; p < nb; ++p) status[p0 + p] |= (int32_t)ws.st[p];
      }
    }
    free(ws.mem);
  }
  dual_plan2_free(&plan);
  free(pass);
  if (plan_failed)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory planning a second-order pass");
  if (ws_failed)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "out of memory allocating the CPU workspace (%d points x %d registers)",
                     DUAL_BLK2, (int)prog->n_regs);
  return DUAL_SUCCESS;
}
