/*
 * jit_source.c — generates the compiled tier's first-order kernels (jit_source.h).  It walks the
 * GPU plan of each pass (engine/plan.h: the lane masks of every operand and result) and writes,
 * per instruction, the same steps as the interpreter body (engine/interp_ops.h): the op's rule
 * for the value and partials, its flags, then the tangent lanes of its prop class.  Each
 * definition gets its own locals (v<t> for the value of instruction t, t<t>_<k> for lane k), so
 * register reuse in the bytecode never aliases and the CUDA compiler allocates machine
 * registers.  Output rows are staged per warp in shared memory (jit/jit_kernel.h).  dual_sgrad's
 * kernels run the same body once per sample and fold each sample's row (emit_sgrad_fold).  The
 * CPU target (dual_jit_source_cpu) writes the same body into a point loop (emit_pass_cpu), a long
 * pass as a point loop per segment, each a function of its own (plan_segments, emit_segment_cpu).
 */
#include "jit/jit_source.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "engine/pass.h"
#include "engine/plan.h"
#include "jit/jit_schedule.h"
#include "jit/strbuf.h"

typedef struct gen {
  dual_strbuf out;
  const dual_program *prog;
  int guarded; /* emitting the guarded body (emit_pass) */
  int sgrad;   /* dual_sgrad's kernels: the body inside a sample loop (emit_sgrad_fold) */
  int score;   /* ... of the score-function program (outputs f and L) */
  int cpu;     /* the CPU target (jit/cpu_kernel.h): pass functions over a block of points */
  int64_t *def;       /* [n_regs] the instruction that last defined each register */
  uint32_t *lanes;    /* [n_regs] that definition's tangent lanes in this pass */
  int64_t *operand;   /* [n_instr][3] the definitions an instruction reads (-1: none) */
  int64_t *first_out; /* [n_instr] the first OUT of a definition (-1: none), then next_out */
  int64_t *next_out;  /* [n_instr] */
  int32_t *cost;      /* [n_instr] doubles a result holds in this pass (0: an OUT) */
  int64_t *order;     /* [n_instr] emission order (jit/jit_schedule.h) */
  uint8_t *pairs;     /* [draws / 2 + 1] normal draw pairs computed so far in the body */
  int64_t npairs;
  /* the CPU target: the pass's records, and each OUT's first slot in the block's stage */
  const dual_plan_instr *recs;
  int32_t *out_slot; /* [n_instr] */
  /* ... and a segmented pass's plan (plan_segments): each definition's tangent lanes, its
   * segment, its first checkpoint slot (value, then lanes; -1: none) */
  uint32_t *dmask; /* [n_instr] */
  int64_t *seg;    /* [n_instr] */
  int64_t *cslot;  /* [n_instr] */
  int64_t *mark;   /* [n_instr] the last listing that named a definition (emit_segment_cpu) */
  int64_t *segpos; /* [n_instr + 1] each segment's first position in the emission order, then n */
  int64_t tag, nseg, nck; /* listings so far; segments and checkpoint slots of the pass */
} gen;

#define EMIT(...) dual_strbuf_printf(&g->out, __VA_ARGS__)

/* One operand's tangent in lane k as the generated code names it: "t<def>_<k>", or 0.0 when
 * the operand lacks the lane (the lane formulas then never read it). */
static void lane_name(char *buf, size_t cap, int present, int64_t def, int k) {
  if (present) snprintf(buf, cap, "t%" PRId64 "_%d", def, k);
  else snprintf(buf, cap, "0.0");
}

/* The tangent lanes of instruction t (prop class `prop`), whose operands are the definitions da
 * with lanes mk: one call per lane of engine/tangent_terms.h's formula for the class, the one
 * the interpreters expand (engine/interp_ops.h), with the operands' presence as literals.  LIN
 * and MUL take DUAL_TF in the plain body and DUAL_TM in the guarded one: the interpreter takes
 * DUAL_TM where a partial of the op is not finite, and DUAL_TM equals DUAL_TF wherever the
 * partial is finite, so the guarded body takes it always — the same bits without a branch per
 * op (which tripled kin's compile time). */
static void emit_lanes(gen *g, int prop, int64_t t, const int64_t da[3], const uint32_t mk[3],
                       uint32_t md) {
  const int lin = prop == DUAL_PROP_LIN || prop == DUAL_PROP_MUL;
  if ((lin || prop == DUAL_PROP_CHOOSE) && !g->cpu) { /* (the CPU's DUAL_CPU_STEP names them) */
    EMIT("    const double qa = d_[0], qb = d_[1], qc = d_[2];\n    (void)qa, (void)qb, (void)qc;\n");
  }
  if (lin || prop == DUAL_PROP_CHOOSE) {
    /* the largest exponent field of the partials: all ones where one is NaN or infinite */
    if (lin && !g->guarded && g->cpu) EMIT("    DUAL_CPU_BAD(qa, qb, qc)\n");
    else if (lin && !g->guarded)
      EMIT("    bad_ = max(bad_, max(max(DUAL_JIT_EXPONENT(qa), DUAL_JIT_EXPONENT(qb)), "
           "DUAL_JIT_EXPONENT(qc)));\n");
  }
  for (int k = 0; k < 32; ++k) {
    if (!((md >> k) & 1u)) continue;
    char ta[48], tb[48], tc[48];
    const int ua = (mk[0] >> k) & 1u, ub = (mk[1] >> k) & 1u, uc = (mk[2] >> k) & 1u;
    lane_name(ta, sizeof ta, ua, da[0], k);
    lane_name(tb, sizeof tb, ub, da[1], k);
    lane_name(tc, sizeof tc, uc, da[2], k);
    EMIT("    t%" PRId64 "_%d = ", t, k);
    const int u[3] = {ua, ub, uc};
    const char *const tn[3] = {ta, tb, tc};
    dual_jit_emit_lane(&g->out, prop, g->guarded ? "DUAL_TM" : "DUAL_TF", u, tn);
    EMIT(";\n");
  }
}

void dual_jit_emit_lane(dual_strbuf *out, int prop, const char *mul, const int u[3],
                        const char *const tn[3]) {
  switch (prop) {
  case DUAL_PROP_LIN:
  case DUAL_PROP_MUL:
    dual_strbuf_printf(out, "DUAL_LANE_LIN(%s, %d, %d, %d, qa, qb, qc, %s, %s, %s)", mul, u[0], u[1],
                       u[2], tn[0], tn[1], tn[2]);
    break;
  case DUAL_PROP_ADD: dual_strbuf_printf(out, "DUAL_LANE_ADD(%d, %d, %s, %s)", u[0], u[1], tn[0], tn[1]); break;
  case DUAL_PROP_SUB: dual_strbuf_printf(out, "DUAL_LANE_SUB(%d, %d, %s, %s)", u[0], u[1], tn[0], tn[1]); break;
  case DUAL_PROP_NEG: dual_strbuf_printf(out, "DUAL_LANE_NEG(%s)", tn[0]); break;
  default:
    dual_strbuf_printf(out, "DUAL_LANE_CHOOSE(%d, %d, %d, qa, qb, %s, %s, %s)", u[0], u[1], u[2],
                       tn[0], tn[1], tn[2]);
    break;
  }
}

/* Declarations of a result's value and lanes. */
static void emit_decl(gen *g, int64_t t, uint32_t md) {
  EMIT("  double v%" PRId64, t);
  for (int k = 0; k < 32; ++k)
    if ((md >> k) & 1u) EMIT(", t%" PRId64 "_%d", t, k);
  EMIT(";\n");
}

/* Shared memory for staging, per block: 4 warps x 32 points x row length x 8 bytes. */
#define STAGE_BYTES(row) (4 * 32 * (row) * 8)
enum { STAGE_LIMIT = 40 * 1024 }; /* bytes: leaves room for several blocks per multiprocessor */

/* How a pass leaves its results: columns c0 .. c0 + kc - 1; staging rows are odd-length
 * (distinct shared-memory banks).  Every output's derivative row at once (`whole`, flushed at the
 * end) when they fit, else one output row at a time; the values of a first pass at once when
 * they fit beside them (`ystage`), else stored directly. */
typedef struct pass_shape {
  int mode, width, first, c0, kc, kp, whole, mp, ystage;
  int sgrad, m; /* dual_sgrad: a sample's row, value then lanes, in the thread's stage row */
} pass_shape;

/* The OUT of record q, whose operand is instruction `def`. */
static void emit_out(gen *g, const pass_shape *ps, const dual_plan_instr *q, int64_t def) {
  if (g->cpu) { /* into the stage: the value (first pass), then the pass's present lanes */
    int32_t slot = g->out_slot[q - g->recs];
    if (ps->first) EMIT("  DUAL_CPU_OUT(1, %d, v%" PRId64 ")\n", slot++, def);
    else EMIT("  DUAL_CPU_FLAG(v%" PRId64 ")\n", def); /* (every pass takes the value's flags) */
    const uint32_t mask = ps->kc < 32 ? q->ma & ((1u << ps->kc) - 1u) : q->ma;
    for (int k = 0; k < ps->kc; ++k)
      if ((mask >> k) & 1u) EMIT("  DUAL_CPU_OUT(1, %d, t%" PRId64 "_%d)\n", slot++, def, k);
    return;
  }
  if (ps->sgrad) EMIT("  DUAL_JIT_SGRAD_VALUE(%u, v%" PRId64 ", %d)\n", q->b, def, ps->kp);
  else if (ps->ystage) EMIT("  DUAL_JIT_STAGE_VALUE(%u, v%" PRId64 ", %d)\n", q->b, def, ps->mp);
  else EMIT("  DUAL_JIT_OUT_VALUE(%u, v%" PRId64 ", %d)\n", q->b, def, ps->first);
  if (ps->kc == 0) return;
  const uint32_t mask = ps->kc < 32 ? q->ma & ((1u << ps->kc) - 1u) : q->ma;
  EMIT("  {\n    double *s_ = stage_[warp_] + lane_ * %d + %d;\n    unsigned e_ = 0u;\n", ps->kp,
       (ps->sgrad ? ps->m : 0) + (ps->whole ? (int)q->b * ps->kc : 0));
  for (int k = 0; k < ps->kc; ++k) {
    if ((mask >> k) & 1u) EMIT("    DUAL_JIT_STAGE(%d, t%" PRId64 "_%d)\n", k, def, k);
    else if (ps->whole) EMIT("    DUAL_JIT_STAGE_ZERO(%d)\n", k);
  }
  EMIT("    DUAL_JIT_STAGE_FLAGS(%d, %#xu)\n  }\n", ps->kc, mask);
  if (!ps->whole) EMIT("  DUAL_JIT_FLUSH(%u, %d, %d, %d, %#xu)\n", q->b, ps->kc, ps->kp, ps->c0, mask);
}

/* Instruction t (not an OUT), whose operands are the definitions da. */
static void emit_instr(gen *g, const pass_shape *ps, const dual_plan_instr *q, int64_t t,
                       const int64_t da[3]) {
  const int op = (int)(q->op_dst >> DUAL_DST_BITS);
  const dual_op_info *info = &dual_op_table[op];
  switch (op) {
  case DUAL_OP_LDX:
    EMIT("  const double v%" PRId64 " = DUAL_JIT_LDX(%u);\n", t, q->a);
    if (g->cpu) EMIT("  DUAL_CPU_TAKEN(v%" PRId64 ")\n", t);
    if (ps->width > 0 && q->ma != 0u) {
      const int k = DUAL_CTZ(q->ma);
      if (ps->mode == DUAL_MODE_JVP) {
        EMIT("  const double t%" PRId64 "_%d = DUAL_JIT_LDV(%u);\n", t, k, q->a);
        if (g->cpu) EMIT("  DUAL_CPU_TAKEN(t%" PRId64 "_%d)\n", t, k);
      } else {
        EMIT("  const double t%" PRId64 "_%d = 1.0;\n", t, k);
      }
    }
    return;
  case DUAL_OP_LDP:
    EMIT("  const double v%" PRId64 " = DUAL_JIT_LDP(%u);\n", t, q->a);
    if (g->cpu) EMIT("  DUAL_CPU_TAKEN(v%" PRId64 ")\n", t);
    return;
  case DUAL_OP_LDK:
    EMIT("  const double v%" PRId64 " = ", t);
    dual_strbuf_double(&g->out, g->prog->consts[q->a]);
    EMIT(";\n");
    return;
  case DUAL_OP_RNORM: /* both normals of its pair at its first draw (dual/random.h) */
    if (g->pairs != NULL && !g->pairs[q->a >> 1]) {
      g->pairs[q->a >> 1] = 1;
      if (g->cpu) EMIT("  const dual_cpu_pair z%u_ = DUAL_CPU_NORMALS(%u);\n", q->a >> 1, q->a >> 1);
      else EMIT("  double z%u_[2];\n  DUAL_JIT_NORMALS(%u, z%u_);\n", q->a >> 1, q->a >> 1, q->a >> 1);
    }
    if (g->pairs != NULL)
      EMIT("  const double v%" PRId64 " = z%u_%s[%u];\n", t, q->a >> 1, g->cpu ? ".z" : "", q->a & 1u);
    else EMIT("  const double v%" PRId64 " = DUAL_JIT_DRAW(1, %u);\n", t, q->a);
    return;
  case DUAL_OP_RUNIF:
    EMIT("  const double v%" PRId64 " = DUAL_JIT_DRAW(0, %u);\n", t, q->a);
    return;
  default: break;
  }
  const uint32_t mk[3] = {q->ma, q->mb, q->mc};
  const uint32_t md = ps->width > 0 && info->prop != DUAL_PROP_NONE ? (q->ma | q->mb | q->mc) : 0u;
  char v[3][32];
  for (int i = 0; i < 3; ++i) {
    if (i < info->arity) snprintf(v[i], sizeof v[i], "v%" PRId64, da[i]);
    else snprintf(v[i], sizeof v[i], "0.0");
  }
  emit_decl(g, t, md);
  if (g->cpu) {
    EMIT("  {\n    DUAL_CPU_STEP(%s, %#x, %s, %s, %s, v%" PRId64 ")\n", info->name, (unsigned)info->flags,
         v[0], v[1], v[2], t);
  } else {
    EMIT("  {\n    double d_[3];\n");
    EMIT("    DUAL_VALUE_STEP(%s, %#x, %s, %s, %s, v%" PRId64 ", d_, st)\n", info->name,
         (unsigned)info->flags, v[0], v[1], v[2], t);
  }
  if (md != 0u) emit_lanes(g, info->prop, t, da, mk, md);
  EMIT("  }\n");
}

/* The instructions of a pass (plain or guarded, g->guarded) in the scheduled order, each OUT
 * right after its operand's definition. */
static void emit_body(gen *g, const pass_shape *ps, const dual_plan_instr *recs, int64_t ni) {
  if (g->pairs != NULL) memset(g->pairs, 0, (size_t)g->npairs);
  for (int64_t i = 0; i < ni; ++i) {
    const int64_t t = g->order[i];
    const dual_plan_instr *q = &recs[t];
    if (dual_op_table[q->op_dst >> DUAL_DST_BITS].prop == DUAL_PROP_OUT) continue;
    emit_instr(g, ps, q, t, &g->operand[3 * t]);
    for (int64_t o = g->first_out[t]; o >= 0; o = g->next_out[o]) emit_out(g, ps, &recs[o], t);
  }
}

/* dual_sgrad: fold the sample's entries of this pass — E f on the first pass, then each column's
 * gradient entry (engine/sgrad_reduce.h: dual_sgrad_entry, dual_sgrad_fold_entry) — read back
 * from the thread's stage row, close the sample loop, and store the means and standard errors.
 * Entries fold independently, so each pass's are the interpreter's bits. */
static void emit_sgrad_fold(gen *g, const pass_shape *ps) {
  const int m = ps->m, kc = ps->kc;
  int e = 0;
  EMIT("  {\n    const double *r_ = stage_[warp_] + lane_ * %d;\n", ps->kp);
  if (ps->first) EMIT("    DUAL_JIT_SGRAD_FOLD(%d, r_[0])\n", e++);
  for (int k = 0; k < kc; ++k) { /* d f / d x_j at [m + k]; with the score, d L / d x_j below */
    if (g->score)
      EMIT("    DUAL_JIT_SGRAD_FOLD(%d, dual_sgrad_entry(r_[0], r_[%d], r_[%d], 1))\n", e++, m + k,
           m + kc + k);
    else EMIT("    DUAL_JIT_SGRAD_FOLD(%d, dual_sgrad_entry(r_[0], r_[%d], 0.0, 0))\n", e++, m + k);
  }
  EMIT("  }\n  DUAL_JIT_SGRAD_END\n");
  e = 0;
  if (ps->first) EMIT("  DUAL_JIT_SGRAD_STORE_F(%d)\n", e++);
  for (int k = 0; k < kc; ++k) EMIT("  DUAL_JIT_SGRAD_STORE(%d, %d)\n", ps->c0 + k, e++);
  EMIT("  DUAL_JIT_SGRAD_CLOSE\n");
}

/* The pass's operand definitions of every instruction, checked against the plan's lanes, each
 * definition's OUTs (a chain through next_out) and the emission order. */
static int prepare_pass(gen *g, const dual_plan_instr *recs, int width, char *why, int64_t why_cap) {
  const dual_program *prog = g->prog;
  const int64_t ni = prog->n_instr;
  for (int32_t r = 0; r < prog->n_regs; ++r) g->def[r] = -1, g->lanes[r] = 0;
  for (int64_t t = 0; t < ni; ++t) g->first_out[t] = -1;
  for (int64_t t = 0; t < ni; ++t) {
    const dual_plan_instr *q = &recs[t];
    const int op = (int)(q->op_dst >> DUAL_DST_BITS);
    const uint32_t dst = q->op_dst & ((1u << DUAL_DST_BITS) - 1u);
    const dual_op_info *info = &dual_op_table[op];
    const uint32_t regs[3] = {q->a, q->b, q->c}, mk[3] = {q->ma, q->mb, q->mc};
    g->operand[3 * t] = g->operand[3 * t + 1] = g->operand[3 * t + 2] = -1;
    g->cost[t] = 0, g->dmask[t] = 0u;
    if (info->prop != DUAL_PROP_LOAD)
      for (int i = 0; i < info->arity; ++i) {
        const int64_t d = g->def[regs[i]];
        g->operand[3 * t + i] = d;
        if (d < 0 || (mk[i] & ~g->lanes[regs[i]]) != 0u) {
          snprintf(why, (size_t)why_cap,
                   "instruction %" PRId64 ": operand r%u has no definition with lanes %#x", t,
                   regs[i], mk[i]);
          return DUAL_ERR_INTERNAL;
        }
      }
    if (info->prop == DUAL_PROP_OUT) {
      const int64_t d = g->operand[3 * t];
      g->next_out[t] = g->first_out[d], g->first_out[d] = t;
      continue;
    }
    if (info->prop == DUAL_PROP_LOAD) g->lanes[dst] = op == DUAL_OP_LDX && width > 0 ? q->ma : 0u;
    else g->lanes[dst] = width > 0 && info->prop != DUAL_PROP_NONE ? (q->ma | q->mb | q->mc) : 0u;
    g->def[dst] = t;
    g->dmask[t] = g->lanes[dst];
    g->cost[t] = 1;
    for (uint32_t l = g->lanes[dst]; l != 0u; l &= l - 1u) ++g->cost[t];
  }
  /* The emission order: any order with operands first gives the same bits; this one keeps
   * fewer values and lanes live (the bytecode's order when the program is too large). */
  (void)dual_jit_schedule(ni, g->operand, g->cost, g->order);

  return DUAL_SUCCESS;
}

/* Whether any instruction of the pass has lanes and partials that may be NaN or infinite (LIN
 * and MUL ops): the pass then has a guarded body. */
static int pass_has_lin(const dual_plan_instr *recs, int64_t ni, int width) {
  int has_lin = 0;
  for (int64_t t = 0; t < ni && !has_lin; ++t) {
    const dual_plan_instr *q = &recs[t];
    const int prop = dual_op_table[q->op_dst >> DUAL_DST_BITS].prop;
    has_lin = width > 0 && (prop == DUAL_PROP_LIN || prop == DUAL_PROP_MUL) && (q->ma | q->mb | q->mc);
  }
  return has_lin;
}

/* The stage slots of a CPU pass's OUTs (g->out_slot, in record order: the value on the first
 * pass, then the present lanes); returns how many. */
static int32_t stage_slots(gen *g, const pass_shape *ps, const dual_plan_instr *recs, int64_t ni) {
  int32_t n = 0;
  for (int64_t t = 0; t < ni; ++t) {
    const dual_plan_instr *q = &recs[t];
    if (dual_op_table[q->op_dst >> DUAL_DST_BITS].prop != DUAL_PROP_OUT) continue;
    g->out_slot[t] = n;
    const uint32_t mask = ps->kc < 32 ? q->ma & ((1u << ps->kc) - 1u) : q->ma;
    n += ps->first;
    for (uint32_t l = mask; l != 0u; l &= l - 1u) ++n;
  }
  return n;
}

/* Whether instruction t is a load the generated code can do again where a later segment reads
 * it (an input, with its lane, a parameter or a constant) rather than checkpoint it. */
static int reloadable(const dual_plan_instr *q) {
  const int op = (int)(q->op_dst >> DUAL_DST_BITS);
  return op == DUAL_OP_LDX || op == DUAL_OP_LDP || op == DUAL_OP_LDK;
}

/* A segmented CPU pass's plan (after prepare_pass): the emission order cut into segments of
 * about DUAL_CPU_FWD_SEGMENT doubles of results (g->seg; an OUT goes with its operand), and a
 * checkpoint slot for the value and each lane of every definition a later segment reads
 * (g->cslot, g->nck slots) but the loads, which that segment loads again.  Returns the segments,
 * 1 (nothing cut) when the pass's instructions and lane sums are at most DUAL_CPU_FWD_STRAIGHT_MAX. */
static int64_t plan_segments(gen *g, const dual_plan_instr *recs) {
  const int64_t ni = g->prog->n_instr;
  g->nck = 0, g->nseg = 1;
  for (int64_t t = 0; t < ni; ++t) g->seg[t] = 0, g->cslot[t] = -1, g->mark[t] = -1;
  if (ni + dual_jit_lane_sums(recs, ni) <= DUAL_CPU_FWD_STRAIGHT_MAX) return 1; /* (generate's test) */
  int64_t s = 0, acc = 0;
  g->segpos[0] = 0;
  for (int64_t i = 0; i < ni; ++i) {
    const int64_t t = g->order[i];
    if (g->cost[t] == 0) continue; /* (an OUT: with its operand, below) */
    if (acc > 0 && acc + g->cost[t] > DUAL_CPU_FWD_SEGMENT) g->segpos[++s] = i, acc = 0;
    g->seg[t] = s, acc += g->cost[t];
  }
  g->nseg = s + 1, g->segpos[g->nseg] = ni;
  int64_t *last = g->mark; /* (borrowed: each definition's last reading segment) */
  for (int64_t t = 0; t < ni; ++t) last[t] = g->seg[t];
  for (int64_t t = 0; t < ni; ++t) {
    if (g->cost[t] == 0) continue;
    for (int i = 0; i < 3; ++i) {
      const int64_t d = g->operand[3 * t + i];
      if (d >= 0 && g->seg[t] > last[d]) last[d] = g->seg[t];
    }
  }
  for (int64_t t = 0; t < ni; ++t) {
    if (g->cost[t] == 0 || last[t] <= g->seg[t] || reloadable(&recs[t])) continue;
    g->cslot[t] = g->nck, g->nck += g->cost[t];
  }
  for (int64_t t = 0; t < ni; ++t) g->mark[t] = -1;
  return g->nseg;
}

/* Segment s of a segmented CPU pass as a function of its own (DUAL_CPU_NOINLINE, so the compiler
 * takes each alone and its time grows with the program, not faster): the plain body over the
 * block (`guarded` 0: an `omp simd` loop, its flags and partials' exponents ORed and maxed into
 * the pass's st_ and bad_b_), or the guarded body of point i_ (its flags returned).  The values
 * and lanes of earlier segments it reads come from their checkpoints (ck_, slot c of point i_ at
 * c * DUAL_CPU_BLK + i_) or are loaded again; those later segments read are checkpointed. */
static void emit_segment_cpu(gen *g, const pass_shape *ps, const dual_plan_instr *recs, int pass, int64_t s,
                             int guarded) {
  const int64_t i0 = g->segpos[s], i1 = g->segpos[s + 1]; /* (its positions in the order) */
  if (guarded)
    EMIT("\nstatic DUAL_CPU_NOINLINE int dual_cpu_guarded_p%d_s%" PRId64 "(const dual_jit_args *A, const int64_t pt, "
         "double *const stage_, const int64_t i_, double *const ck_) {\n  DUAL_CPU_ARGS\n  int st = 0;\n", pass, s);
  else
    EMIT("\nstatic DUAL_CPU_NOINLINE void dual_cpu_p%d_s%" PRId64 "(const dual_jit_args *A, const int64_t p0, "
         "const int64_t nb, int *const st_, unsigned *const bad_b_, double *const stage_, double *const ck_) {\n"
         "  DUAL_CPU_FSEG_BEGIN\n", pass, s);
  g->guarded = guarded;
  if (g->pairs != NULL) memset(g->pairs, 0, (size_t)g->npairs);
  const int64_t tag = g->tag++;
  for (int64_t i = i0; i < i1; ++i) { /* what it reads of earlier segments */
    const int64_t t = g->order[i];
    if (g->cost[t] == 0) continue;
    for (int k = 0; k < 3; ++k) {
      const int64_t d = g->operand[3 * t + k];
      if (d < 0 || g->seg[d] >= s || g->mark[d] == tag) continue;
      g->mark[d] = tag;
      if (g->cslot[d] < 0) { /* a load, loaded again */
        emit_instr(g, ps, &recs[d], d, &g->operand[3 * d]);
        continue;
      }
      int64_t c = g->cslot[d];
      EMIT("  const double v%" PRId64 " = ck_[%" PRId64 " * DUAL_CPU_BLK + i_];\n", d, c++);
      for (int l = 0; l < 32; ++l)
        if ((g->dmask[d] >> l) & 1u) EMIT("  const double t%" PRId64 "_%d = ck_[%" PRId64 " * DUAL_CPU_BLK + i_];\n", d, l, c++);
    }
  }
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t t = g->order[i];
    if (g->cost[t] == 0) continue;
    emit_instr(g, ps, &recs[t], t, &g->operand[3 * t]);
    if (g->cslot[t] >= 0) {
      int64_t c = g->cslot[t];
      EMIT("  ck_[%" PRId64 " * DUAL_CPU_BLK + i_] = v%" PRId64 ";\n", c++, t);
      for (int l = 0; l < 32; ++l)
        if ((g->dmask[t] >> l) & 1u) EMIT("  ck_[%" PRId64 " * DUAL_CPU_BLK + i_] = t%" PRId64 "_%d;\n", c++, t, l);
    }
    for (int64_t o = g->first_out[t]; o >= 0; o = g->next_out[o]) emit_out(g, ps, &recs[o], t);
  }
  EMIT(guarded ? "  return st;\n}\n" : "  DUAL_CPU_FSEG_END\n}\n");
}

/* One pass's function for the CPU target (jit/cpu_kernel.h): the plain body in a point loop that
 * leaves each OUT's value and present lanes in the block's stage (slot-major, so a slot's points
 * are contiguous), then per point the guarded rerun where a partial was not finite, the copy of
 * the stage to the caller's arrays (whole rows, structural zeros included) and the status word. */
static int emit_pass_cpu(gen *g, const dual_plan_instr *recs, int mode, int width, int pass, char *why,
                         int64_t why_cap) {
  const dual_program *prog = g->prog;
  const int64_t ni = prog->n_instr;
  const int m = prog->n_out;
  pass_shape ps;
  memset(&ps, 0, sizeof ps);
  ps.mode = mode, ps.width = width, ps.first = pass == 0, ps.c0 = pass * width, ps.m = m;
  ps.kc = width > 0 ? dual_pass_columns(mode, dual_program_jacobian_columns(prog), ps.c0, width) : 0;
  const int st = prepare_pass(g, recs, width, why, why_cap);
  if (st != DUAL_SUCCESS) return st;
  g->recs = recs;
  const int32_t nslots = stage_slots(g, &ps, recs, ni);
  /* where the copy finds each output's value and lane (-1: none, a structural zero) */
  EMIT("\nstatic const int32_t dual_cpu_ys_p%d[%d] = {", pass, m > 0 ? m : 1);
  int32_t *ys = malloc(sizeof *ys * (size_t)(m > 0 ? m : 1)), *ds = malloc(sizeof *ds * (size_t)(m * ps.kc + 1));
  if (ys == NULL || ds == NULL) {
    free(ys), free(ds);
    snprintf(why, (size_t)why_cap, "out of memory generating kernel source");
    return DUAL_ERR_NO_MEMORY;
  }
  for (int b = 0; b < m; ++b) ys[b] = -1;
  for (int64_t e = 0; e < (int64_t)m * ps.kc; ++e) ds[e] = -1;
  for (int64_t t = 0; t < ni; ++t) {
    const dual_plan_instr *q = &recs[t];
    if (dual_op_table[q->op_dst >> DUAL_DST_BITS].prop != DUAL_PROP_OUT || (int)q->b >= m) continue;
    int32_t slot = g->out_slot[t];
    if (ps.first) ys[q->b] = slot++;
    const uint32_t mask = ps.kc < 32 ? q->ma & ((1u << ps.kc) - 1u) : q->ma;
    for (int k = 0; k < ps.kc; ++k)
      if ((mask >> k) & 1u) ds[(int64_t)q->b * ps.kc + k] = slot++;
  }
  for (int b = 0; b < (m > 0 ? m : 1); ++b) EMIT("%s%d", b ? ", " : "", b < m ? ys[b] : -1);
  EMIT("};\n");
  int32_t nnz = 0;
  if (ps.kc > 0) {
    EMIT("static const int32_t dual_cpu_ds_p%d[%d] = {", pass, m * ps.kc);
    for (int64_t e = 0; e < (int64_t)m * ps.kc; ++e) EMIT("%s%d", e ? (e % 16 ? ", " : ",\n  ") : "", ds[e]);
    EMIT("};\n");
    /* the present entries alone, (entry, slot) pairs: DUAL_CPU_ROWS builds a point's rows from them */
    EMIT("static const int32_t dual_cpu_nz_p%d[] = {", pass);
    for (int64_t e = 0; e < (int64_t)m * ps.kc; ++e)
      if (ds[e] >= 0) EMIT("%s%" PRId64 ", %d", nnz++ ? (nnz % 8 ? ", " : ",\n  ") : "", e, ds[e]);
    if (nnz == 0) EMIT("-1, -1");
    EMIT("};\n");
  }
  free(ys), free(ds);
  const int has_lin = pass_has_lin(recs, ni, width);
  const int64_t nseg = plan_segments(g, recs);
  for (int64_t s = 0; s < nseg && nseg > 1; ++s) {
    emit_segment_cpu(g, &ps, recs, pass, s, 0);
    if (has_lin) emit_segment_cpu(g, &ps, recs, pass, s, 1);
  }
  if (has_lin && nseg > 1) { /* the guarded body of point i_: its segments in order */
    EMIT("\nstatic int dual_cpu_guarded_p%d(const dual_jit_args *A, int64_t pt, double *stage_, int64_t i_, "
         "double *ck_) {\n  int st = 0;\n", pass);
    for (int64_t s = 0; s < nseg; ++s)
      EMIT("  st |= dual_cpu_guarded_p%d_s%" PRId64 "(A, pt, stage_, i_, ck_);\n", pass, s);
    EMIT("  return st;\n}\n");
  } else if (has_lin) {
    EMIT("\nstatic int dual_cpu_guarded_p%d(const dual_jit_args *A, int64_t pt, double *stage_, int64_t i_) {\n"
         "  DUAL_CPU_ARGS\n  int st = 0;\n", pass);
    g->guarded = 1;
    emit_body(g, &ps, recs, ni);
    EMIT("  return st;\n}\n");
  }
  /* a point's rows are built in rows_ (zero between points) from the present entries, then
   * copied whole, where they fit on the stack (DUAL_CPU_ROWS_MAX), else entry by entry; a pass
   * of every column may stream its points' derivative blocks (DUAL_CPU_ROWS) */
  const int rows = ps.kc > 0 && (int64_t)m * ps.kc <= DUAL_CPU_ROWS_MAX;
  const int whole = ps.kc > 0 && ps.c0 == 0 && ps.kc == dual_program_jacobian_columns(prog);
  EMIT("\nvoid " DUAL_CPU_JIT_PASS_NAME DUAL_CPU_JIT_PASS_PARAMS ";\n", pass);
  EMIT("void " DUAL_CPU_JIT_PASS_NAME DUAL_CPU_JIT_PASS_PARAMS " {\n  (void)scratch;\n"
       "  double stage_[%d * DUAL_CPU_BLK];\n", pass, nslots > 0 ? nslots : 1);
  if (nseg > 1) { /* the segments in order, each over the block; the checkpoints in the scratch */
    EMIT("  DUAL_CPU_FSEGS_BEGIN\n");
    for (int64_t s = 0; s < nseg; ++s)
      EMIT("  dual_cpu_p%d_s%" PRId64 "(A, p0, nb, st_, bad_b_, stage_, scratch);\n", pass, s);
  } else {
    EMIT("  DUAL_CPU_LOOP_BEGIN\n");
    g->guarded = 0;
    emit_body(g, &ps, recs, ni);
    EMIT("  (void)bad_;\n  DUAL_CPU_LOOP_END\n");
  }
  if (whole && rows) EMIT("  const int stream_ = DUAL_CPU_CAN_STREAM(stream, %d, %d);\n", m, ps.kc);
  else EMIT("  const int stream_ = 0;\n  (void)stream;\n");
  if (rows) EMIT("  DUAL_CPU_ROWS_BEGIN(%d)\n", m * ps.kc);
  else EMIT("  (void)stream_;\n");
  if (whole && rows && ((int64_t)m * ps.kc) % 8 == 0)
    EMIT("  const int stream8_ = DUAL_CPU_CAN_STREAM8(%d);\n  DUAL_CPU_ROWS8_BEGIN(%d, %d, dual_cpu_nz_p%d)\n", m * ps.kc,
         m * ps.kc, nnz, pass);
  EMIT("  for (int64_t i_ = 0; i_ < nb; ++i_) {\n    int st = st_[i_];\n");
  if (has_lin)
    EMIT("    if (DUAL_CPU_BAD_POINT(i_)) st = dual_cpu_guarded_p%d(A, p0 + i_, stage_, i_%s);\n", pass,
         nseg > 1 ? ", scratch" : "");
  if (ps.first) EMIT("    DUAL_CPU_COPY_Y(%d, dual_cpu_ys_p%d)\n", m, pass);
  const int by8 = whole && rows && ((int64_t)m * ps.kc) % 8 == 0; /* (DUAL_CPU_ROWS8) */
  if (by8)
    EMIT("    if (stream8_) DUAL_CPU_ROWS8(%d, dual_cpu_ds_p%d)\n    else DUAL_CPU_ROWS(%d, %d, %d, "
         "%d, dual_cpu_nz_p%d)\n", m * ps.kc, pass, m, ps.kc, ps.c0, nnz, pass);
  else if (rows) {
    EMIT("    DUAL_CPU_ROWS(%d, %d, %d, %d, dual_cpu_nz_p%d)\n", m, ps.kc, ps.c0, nnz, pass);
  } else if (ps.kc > 0) {
    EMIT("    DUAL_CPU_COPY_D(%d, %d, %d, dual_cpu_ds_p%d)\n", m, ps.kc, ps.c0, pass);
  }
  EMIT("    DUAL_CPU_STATUS(i_, st, %d, %s)\n  }\n", ps.first, width > 0 ? "~0" : "~DUAL_PT_SINGULAR");
  if (rows) EMIT("  DUAL_CPU_ROWS_END\n");
  EMIT("}\n");
  return DUAL_SUCCESS;
}

/* One pass's kernel.  Every OUT is emitted right after the instruction that defines its operand
 * rather than where the bytecode has it: its value and lanes are staged (and their registers
 * free) as early as possible.  An OUT only stores, so the order changes no result. */
static int emit_pass(gen *g, const dual_plan_instr *recs, int mode, int width, int pass,
                     int min_blocks, char *why, int64_t why_cap) {
  const dual_program *prog = g->prog;
  const int64_t ni = prog->n_instr;
  pass_shape ps;
  ps.mode = mode, ps.width = width, ps.first = pass == 0, ps.c0 = pass * width;
  const int m = prog->n_out;
  ps.kc = width > 0 ? dual_pass_columns(mode, dual_program_jacobian_columns(prog), ps.c0, width) : 0;
  ps.sgrad = g->sgrad, ps.m = m;
  if (g->sgrad) { /* a sample's row: its m values, then m rows of kc lanes */
    ps.whole = 1, ps.kp = (m + m * ps.kc) | 1, ps.mp = 0, ps.ystage = 0;
    if (STAGE_BYTES((int64_t)ps.kp) > STAGE_LIMIT) {
      snprintf(why, (size_t)why_cap,
               "a sample row of %d outputs x %d lanes is over the staging limit of %d bytes a block",
               m, ps.kc, STAGE_LIMIT);
      return DUAL_ERR_LIMIT;
    }
  } else {
    ps.whole = ps.kc > 0 && STAGE_BYTES(((int64_t)m * ps.kc) | 1) <= STAGE_LIMIT;
    ps.kp = ps.whole ? (m * ps.kc) | 1 : ps.kc | 1;
    const int staged = ps.kc > 0 ? STAGE_BYTES(ps.kp) : 0;
    ps.mp = m | 1;
    ps.ystage = ps.first && staged + STAGE_BYTES((int64_t)ps.mp) <= STAGE_LIMIT + 8 * 1024;
  }
  const int stage = ps.kc > 0 || g->sgrad; /* the kernel has stage_ */

  const int pst = prepare_pass(g, recs, width, why, why_cap);
  if (pst != DUAL_SUCCESS) return pst;
  /* The plain body: every lane sum unguarded (DUAL_TF), and bad_ the largest exponent field of
   * the partials of ops with lanes (all ones where one is NaN or infinite).  Then, only when a lane of the warp saw one, the guarded body
   * (the interpreter's: DUAL_TM where an op's partials are not all finite) runs the whole tile
   * again, restaging and restoring everything, so the last stores are exactly the interpreter's.
   * Where no partial is NaN or infinite both bodies compute the same bits.  The guarded body is
   * a function of its own (never inlined, rarely called), so it takes no registers from the
   * plain one: with the guards inline, kin spilled most of its 1 KB. */
  const int has_lin = pass_has_lin(recs, ni, width);
  if (has_lin) {
    EMIT("\nstatic __device__ __noinline__ int dual_jit_guarded_p%d(const dual_jit_args A, "
         "int64_t base_, int lane_, int warp_, int live_, int64_t pt", pass);
    if (g->sgrad) EMIT(", int64_t sample_");
    if (stage) EMIT(", double (*stage_)[32 * %d]", ps.kp);
    if (ps.ystage) EMIT(", double (*ystage_)[32 * %d]", ps.mp);
    EMIT(") {\n  int st = 0;\n  (void)base_, (void)lane_, (void)warp_, (void)live_;\n");
    g->guarded = 1;
    emit_body(g, &ps, recs, ni);
    EMIT("  return st;\n}\n");
  }
  EMIT("\nextern \"C\" __global__ void __launch_bounds__(DUAL_JIT_THREADS");
  if (min_blocks > 0) EMIT(", %d", min_blocks);
  EMIT(") " DUAL_JIT_KERNEL_NAME "(const dual_jit_args A) {\n", pass);
  if (stage) EMIT("  __shared__ double stage_[DUAL_JIT_WARPS][32 * %d];\n", ps.kp);
  if (ps.ystage) EMIT("  __shared__ double ystage_[DUAL_JIT_WARPS][32 * %d];\n", ps.mp);
  EMIT("  DUAL_JIT_TILE_BEGIN\n");
  const int entries = ps.first + ps.kc; /* dual_sgrad: E f (first pass), the pass's columns */
  if (g->sgrad) EMIT("  DUAL_JIT_SGRAD_BEGIN(%d)\n", entries);
  EMIT("  unsigned bad_ = 0u;\n");
  g->guarded = 0;
  emit_body(g, &ps, recs, ni);
  if (has_lin) {
    EMIT("  if (__any_sync(0xffffffffu, bad_ == 0x7ff00000u))\n    st = dual_jit_guarded_p%d(A, base_, lane_, warp_, "
         "live_, pt%s%s%s);\n", pass, g->sgrad ? ", sample_" : "", stage ? ", stage_" : "",
         ps.ystage ? ", ystage_" : "");
  }
  EMIT("  (void)bad_;\n");
  if (g->sgrad) emit_sgrad_fold(g, &ps);
  if (ps.whole && !ps.sgrad) EMIT("  DUAL_JIT_FLUSH_ALL(%d, %d, %d, %d)\n", m, ps.kc, ps.kp, ps.c0);
  if (ps.ystage) EMIT("  DUAL_JIT_FLUSH_Y(%d, %d)\n", m, ps.mp);
  EMIT("  DUAL_JIT_TILE_END(%d, %s)\n}\n", ps.first, width > 0 ? "~0" : "~DUAL_PT_SINGULAR");
  return DUAL_SUCCESS;
}

int dual_jit_cpu_outline(const dual_program *prog, int64_t copies) {
  int64_t sites = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const int op = DUAL_INSTR_OP(prog->code + t * DUAL_INSTR_WORDS);
    sites += (dual_op_table[op].flags & F_SPECIAL) != 0 && op != DUAL_OP_DIV && op != DUAL_OP_SQRT;
  }
  return sites * copies > DUAL_CPU_JIT_INLINE_SITES;
}

int64_t dual_jit_lane_sums(const dual_plan_instr *recs, int64_t n) {
  int64_t sums = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int prop = dual_op_table[recs[i].op_dst >> DUAL_DST_BITS].prop;
    if (prop == DUAL_PROP_LOAD || prop == DUAL_PROP_OUT || prop == DUAL_PROP_NONE) continue;
    for (uint32_t l = recs[i].ma | recs[i].mb | recs[i].mc; l != 0u; l &= l - 1u) ++sums;
  }
  return sums;
}

/* The module of dual_jit_source, or with `sgrad` of dual_jit_source_sgrad (`score`: the
 * score-function program's). */
static char *generate(const dual_program *prog, int mode, int width, int npass, int min_blocks,
                      int sgrad, int score, int cpu, char *why, int64_t why_cap) {
  if (why_cap > 0) why[0] = '\0';
  if (mode != DUAL_MODE_EVAL && mode != DUAL_MODE_JVP && mode != DUAL_MODE_JACOBIAN &&
      mode != DUAL_MODE_GRADIENT) {
    snprintf(why, (size_t)why_cap, "mode %d is not first order", mode);
    return NULL;
  }
  if (mode == DUAL_MODE_EVAL) width = 0, npass = 1;
  if (cpu && prog->n_instr * npass * 24 > DUAL_CPU_JIT_MAX_SOURCE) {
    /* (every instruction a pass writes takes a line of 24 characters or more: declined unwritten) */
    snprintf(why, (size_t)why_cap, "its C source would take over %" PRId64 " KiB (%d passes), over the CPU tier's "
             "rule of %d KiB (the compile would take minutes)", prog->n_instr * npass * 24 >> 10, npass,
             DUAL_CPU_JIT_MAX_SOURCE >> 10);
    return NULL;
  }
  gen g0, *g = &g0;
  memset(g, 0, sizeof *g);
  g->prog = prog;
  g->sgrad = sgrad, g->score = score, g->cpu = cpu;
  const size_t nregs = (size_t)(prog->n_regs > 0 ? prog->n_regs : 1);
  const size_t nrec = (size_t)(prog->n_instr > 0 ? prog->n_instr : 1) * (size_t)npass;
  const size_t ninstr = (size_t)(prog->n_instr > 0 ? prog->n_instr : 1);
  g->def = (int64_t *)malloc(nregs * sizeof *g->def);
  g->lanes = (uint32_t *)malloc(nregs * sizeof *g->lanes);
  g->operand = (int64_t *)calloc(3 * ninstr, sizeof *g->operand);
  g->first_out = (int64_t *)malloc(ninstr * sizeof *g->first_out);
  g->next_out = (int64_t *)malloc(ninstr * sizeof *g->next_out);
  g->cost = (int32_t *)malloc(ninstr * sizeof *g->cost);
  g->order = (int64_t *)malloc(ninstr * sizeof *g->order);
  g->out_slot = (int32_t *)malloc(ninstr * sizeof *g->out_slot);
  g->dmask = (uint32_t *)calloc(ninstr, sizeof *g->dmask);
  g->seg = (int64_t *)malloc(ninstr * sizeof *g->seg);
  g->cslot = (int64_t *)malloc(ninstr * sizeof *g->cslot);
  g->mark = (int64_t *)malloc(ninstr * sizeof *g->mark);
  g->segpos = (int64_t *)malloc((ninstr + 1) * sizeof *g->segpos);
  g->npairs = dual_program_num_draws(prog) / 2 + 1;
  g->pairs = (uint8_t *)malloc((size_t)g->npairs);
  dual_plan_instr *recs = (dual_plan_instr *)malloc(nrec * sizeof *recs);
  int64_t slots = 0;
  int st = g->def && g->lanes && g->operand && g->first_out && g->next_out && g->cost && g->order &&
                   g->pairs && g->out_slot && g->dmask && g->seg && g->cslot && g->mark && g->segpos && recs
               ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
  if (st == DUAL_SUCCESS) st = dual_plan_build(prog, mode, width, 0, npass, recs, &slots);
  if (st != DUAL_SUCCESS) snprintf(why, (size_t)why_cap, "out of memory generating kernel source");
  if (st == DUAL_SUCCESS && width > 0) { /* the compile-time rule (jit_source.h) */
    const int64_t sums = dual_jit_lane_sums(recs, (int64_t)nrec);
    const int64_t rule = cpu ? DUAL_CPU_JIT_MAX_LANE_SUMS : DUAL_JIT_MAX_LANE_SUMS;
    if (sums > rule) {
      snprintf(why, (size_t)why_cap,
               "its kernels would hold %" PRId64 " tangent-lane sums, over the compiled tier's rule "
               "of %" PRId64 " (the compile would take minutes)", sums, rule);
      st = DUAL_ERR_LIMIT;
    }
  }
  if (st == DUAL_SUCCESS && cpu) {
    /* the passes first (each plans its segments), then the header: the block, as many points as
     * keep the largest pass's stage within DUAL_CPU_JIT_STAGE_BYTES and its checkpoints within
     * DUAL_CPU_JIT_CHECKPOINT_BYTES (at least 8), and the scratch the checkpoints take */
    int32_t most = 1;
    int64_t most_ck = 0, segmented = 0; /* the largest pass's checkpoint slots; passes cut */
    for (int pass = 0; pass < npass && st == DUAL_SUCCESS; ++pass) {
      pass_shape ps;
      memset(&ps, 0, sizeof ps);
      ps.first = pass == 0;
      ps.kc = width > 0 ? dual_pass_columns(mode, dual_program_jacobian_columns(prog), pass * width, width) : 0;
      const dual_plan_instr *pr = recs + (size_t)pass * (size_t)prog->n_instr;
      const int32_t n = stage_slots(g, &ps, pr, prog->n_instr);
      most = n > most ? n : most;
      st = emit_pass_cpu(g, pr, mode, width, pass, why, why_cap);
      segmented += g->nseg > 1;
      most_ck = g->nck > most_ck ? g->nck : most_ck;
    }
    char *passes_src = dual_strbuf_take(&g->out);
    memset(&g->out, 0, sizeof g->out);
    int blk = DUAL_CPU_JIT_BLOCK;
    while (blk > 8 && ((int64_t)most * blk * 8 > DUAL_CPU_JIT_STAGE_BYTES ||
                       most_ck * blk * 8 > DUAL_CPU_JIT_CHECKPOINT_BYTES))
      blk /= 2;
    EMIT("/* dualbatch compiled CPU tier, generator %d: %" PRId64 " instructions, mode %d, width %d, "
         "%d passes%s */\n#define DUAL_CPU_BLK %d\n%s#include \"jit/cpu_kernel.h\"\n"
         "const int dual_cpu_block = DUAL_CPU_BLK;\n",
         DUAL_JIT_GENERATOR_VERSION, prog->n_instr, mode, width, npass, segmented ? ", segmented" : "", blk,
         dual_jit_cpu_outline(prog, npass) ? DUAL_CPU_OUTLINE_LINE : "");
    if (most_ck > 0) EMIT("const int64_t " DUAL_CPU_JIT_SCRATCH_NAME " = %" PRId64 ";\n", most_ck * blk * 8);
    EMIT("%s", passes_src != NULL ? passes_src : "");
    if (passes_src == NULL && st == DUAL_SUCCESS) {
      snprintf(why, (size_t)why_cap, "out of memory generating kernel source");
      st = DUAL_ERR_NO_MEMORY;
    }
    free(passes_src);
  } else if (st == DUAL_SUCCESS) {
    EMIT("// dualbatch compiled tier, generator %d: %" PRId64 " instructions, mode %d, width %d, "
         "%d passes%s\n",
         DUAL_JIT_GENERATOR_VERSION, prog->n_instr, mode, width, npass,
         !sgrad ? "" : score ? ", dual_sgrad (score function)" : ", dual_sgrad (pathwise)");
    if (sgrad) EMIT("#define DUAL_JIT_SAMPLE sample_ /* the draws' sample: the sample loop's */\n");
    EMIT("#include \"jit/jit_kernel.h\"\n");
    for (int pass = 0; pass < npass && st == DUAL_SUCCESS; ++pass)
      st = emit_pass(g, recs + (size_t)pass * (size_t)prog->n_instr, mode, width, pass, min_blocks,
                     why, why_cap);
  }
  free(g->def);
  free(g->lanes);
  free(g->operand);
  free(g->first_out);
  free(g->next_out);
  free(g->cost);
  free(g->order);
  free(g->pairs);
  free(g->out_slot);
  free(g->dmask), free(g->seg), free(g->cslot), free(g->mark), free(g->segpos);
  free(recs);
  char *src = dual_strbuf_take(&g->out);
  if (st != DUAL_SUCCESS) {
    free(src);
    return NULL;
  }
  if (src == NULL) snprintf(why, (size_t)why_cap, "out of memory generating kernel source");
  return src;
}

char *dual_jit_source(const dual_program *prog, int mode, int width, int npass, int min_blocks,
                      char *why, int64_t why_cap) {
  return generate(prog, mode, width, npass, min_blocks, 0, 0, 0, why, why_cap);
}

char *dual_jit_source_cpu(const dual_program *prog, int mode, int width, int npass, char *why,
                          int64_t why_cap) {
  return generate(prog, mode, width, npass, 0, 0, 0, 1, why, why_cap);
}

char *dual_jit_source_sgrad(const dual_program *prog, int score, int width, int npass,
                            int min_blocks, char *why, int64_t why_cap) {
  if (prog->n_out != (score ? 2 : 1)) {
    if (why_cap > 0)
      snprintf(why, (size_t)why_cap, "dual_sgrad's %s kernels need %d outputs, the program has %d",
               score ? "score-function" : "pathwise", score ? 2 : 1, prog->n_out);
    return NULL;
  }
  if (width < 1) {
    if (why_cap > 0) snprintf(why, (size_t)why_cap, "dual_sgrad's kernels need a width of 1 or more");
    return NULL;
  }
  return generate(prog, score ? DUAL_MODE_JACOBIAN : DUAL_MODE_GRADIENT, width, npass, min_blocks,
                  1, score != 0, 0, why, why_cap);
}
