/*
 * interp_rev_block.h — the CPU reverse-mode interpreter for a block of DUAL_BLKR points; included
 * once by cpu/engine_rev.c.  The forward sweep is the values-only interpreter of
 * engine/interp_ops.h with DUAL_ALL_PARTIALS: each op that carries tangents stores its partials
 * (its rule's d[], the same numbers forward mode multiplies tangents by) on a tape, one row per
 * operand.  The adjoint sweep then walks the bytecode backwards: an op hands its result's adjoint
 * to each active operand times that operand's partial (a zero adjoint contributes nothing, even
 * against an infinite partial; a CHOOSE op hands it to the chosen operand only), an LDX adds it to
 * the input's derivative, an OUT seeds it with the cotangent.  The op table's "prop" column is
 * thus both the tangent rule and, transposed, the adjoint rule of every op.
 */
#include "interp_loads.h" /* x values, seeds, LDP, LDK, DUAL_FINITE_FLAGS */

#define DUAL_W 1
#define DUAL_ALL_PARTIALS 1
#define DUAL_POINTS(p) _Pragma("omp simd") for (int p = 0; p < DUAL_BLKR; ++p)
#define DUAL_PRAGMA(x) _Pragma(#x)
#define DUAL_POINTS_OR(p, v) DUAL_PRAGMA(omp simd reduction(| : v)) for (int p = 0; p < DUAL_BLKR; ++p)
#define DUAL_STORED(p) for (int p = 0; p < nb; ++p)
#define DUAL_VAL(r) (V + (size_t)(r) * (size_t)DUAL_BLKR)
#define DUAL_TAN(r, k) ((double *)NULL) /* no tangents: the lane masks are empty */
#define DUAL_TSTEP DUAL_BLKR

/* x[i] of every point in the block, with the non-finite check (no seed: reverse mode). */
#define DUAL_ENGINE_LDX() DUAL_LOAD_X_VALUES()

/* The outputs' values (the derivatives come from the adjoint sweep). */
#define DUAL_ENGINE_OUT()                                                                        \
  {                                                                                              \
    const double *vr = DUAL_VAL(ra);                                                             \
    DUAL_STORED(p) { st[p] |= DUAL_FINITE_FLAGS(vr[p]); }                                        \
    if (b->y != NULL) {                                                                          \
      double *ys = b->y + (int64_t)rb * b->y_es + p0 * b->y_ps;                                  \
      DUAL_STORED(p) { ys[p * b->y_ps] = vr[p]; }                                                \
    }                                                                                            \
  }

/* The forward sweep over points [p0, p0 + nb): values, flags and the tape of partials. */
static void dual_cpu_rev_forward(const dual_job *job, const dual_cpu_wsr *ws, int64_t p0, int nb) {
  const dual_program *prog = job->prog;
  const dual_batch *b = job->b;
  double *V = ws->val;
  int *DUAL_RESTRICT st = ws->st;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w), ra = DUAL_INSTR_A(w), rb = DUAL_INSTR_B(w),
                  rc = DUAL_INSTR_C(w);
    const uint32_t ma = 0u, mb = 0u, mc = 0u; /* no tangents */
    double *rows = ws->tape_at[t] >= 0 ? ws->tape + (size_t)ws->tape_at[t] * DUAL_BLKR : ws->scratch;
    double *DUAL_RESTRICT pa = rows;
    double *DUAL_RESTRICT pb = rows + DUAL_BLKR;
    double *DUAL_RESTRICT pc = rows + 2 * DUAL_BLKR;
    int prop_ = DUAL_PROP_NONE, bad_ = 0;
    (void)rc, (void)mb, (void)mc, (void)pa, (void)pb, (void)pc, (void)bad_;
    switch (op) {
#include "../engine/interp_ops.h"
    default:
      break;
    }
    DUAL_PROPAGATE()
  }
}

/* One adjoint sweep: cotangent `seed` (NULL: the caller's u; else output *seed gets 1), the
 * derivatives into row `row` of d (VJP / gradient: row 0 with d_rs unused). */
static void dual_cpu_rev_adjoint(const dual_job *job, const dual_cpu_wsr *ws, int64_t p0, int nb,
                                 int unit_output, int64_t row) {
  const dual_program *prog = job->prog;
  const dual_batch *b = job->b;
  const int32_t nact = prog->n_active;
  double *A = ws->adj, *G = ws->grad;
  int *DUAL_RESTRICT st = ws->st;
  double *DUAL_RESTRICT gr = ws->scratch;
  memset(A, 0, sizeof(double) * (size_t)(nact + 1) * DUAL_BLKR);
  memset(G, 0, sizeof(double) * (size_t)(prog->n_in + 1) * DUAL_BLKR);
  for (int64_t t = prog->n_instr - 1; t >= 0; --t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w);
    const int32_t r[3] = {DUAL_INSTR_A(w), DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
    const dual_op_info *info = &dual_op_table[op];
    if (info->prop == DUAL_PROP_OUT) {
      if (r[0] >= nact) continue;
      double *DUAL_RESTRICT ar = A + (size_t)r[0] * DUAL_BLKR;
      if (unit_output >= 0) {
        if (r[1] == unit_output) DUAL_POINTS(p) { ar[p] += 1.0; }
      } else {
        const double *us = b->u + (int64_t)r[1] * b->u_es + p0 * b->u_ps;
        const int64_t ups = b->u_ps;
        DUAL_POINTS(p) {
          const double u = us[(p < nb ? p : 0) * ups];
          ar[p] += u;
          st[p] |= (fabs(u) <= DBL_MAX) ? 0 : DUAL_PT_BAD_INPUT;
        }
      }
      continue;
    }
    if (dst >= nact) continue; /* a passive result has no adjoint */
    double *DUAL_RESTRICT ad = A + (size_t)dst * DUAL_BLKR;
    if (op == DUAL_OP_LDX) {
      double *DUAL_RESTRICT gi = G + (size_t)r[0] * DUAL_BLKR;
      DUAL_POINTS(p) { gi[p] += ad[p]; ad[p] = 0.0; }
      continue;
    }
    if (info->prop == DUAL_PROP_LOAD || info->prop == DUAL_PROP_NONE) continue;
    DUAL_POINTS(p) { gr[p] = ad[p]; ad[p] = 0.0; } /* the definition ends here (dst may be a) */
    const double *rows = ws->tape + (size_t)ws->tape_at[t] * DUAL_BLKR;
    for (int i = 0; i < info->arity; ++i) {
      if (r[i] >= nact || (op == DUAL_OP_SELECT && i == 0)) continue;
      double *ai = A + (size_t)r[i] * DUAL_BLKR; /* may be the same row for two operands */
      const double *DUAL_RESTRICT di = rows + (size_t)i * DUAL_BLKR;
      if (info->prop == DUAL_PROP_CHOOSE) {
        DUAL_POINTS(p) { ai[p] += di[p] != 0.0 ? gr[p] : 0.0; }
      } else {
        DUAL_POINTS(p) { ai[p] += DUAL_TM(di[p], gr[p]); }
      }
    }
  }
  /* the derivatives, each point's row contiguous in the caller's layout */
  for (int32_t j = 0; j < prog->n_in; ++j) {
    const double *gj = G + (size_t)j * DUAL_BLKR;
    double *ds = b->d + row * b->d_rs + (int64_t)j * b->d_cs + p0 * b->d_ps;
    DUAL_STORED(p) {
      st[p] |= DUAL_FINITE_FLAGS(gj[p]);
      ds[p * b->d_ps] = gj[p];
    }
  }
}

#undef DUAL_POINTS
#undef DUAL_STORED
#undef DUAL_POINTS_OR
#undef DUAL_VAL
#undef DUAL_TSTEP
