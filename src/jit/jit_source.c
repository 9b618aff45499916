/*
 * jit_source.c — generates the compiled tier's first-order kernels (jit_source.h).  It walks the
 * GPU plan of each pass (engine/plan.h: the lane masks of every operand and result) and writes,
 * per instruction, the same steps as the interpreter body (engine/interp_ops.h): the op's rule
 * for the value and partials, its flags, then the tangent lanes of its prop class.  Each
 * definition gets its own locals (v<t> for the value of instruction t, t<t>_<k> for lane k), so
 * register reuse in the bytecode never aliases and the CUDA compiler allocates machine
 * registers.  Output rows are staged per warp in shared memory (jit/jit_kernel.h).
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
#include "jit/strbuf.h"

typedef struct gen {
  dual_strbuf out;
  const dual_program *prog;
  int64_t *def;    /* [n_regs] the instruction that last defined each register */
  uint32_t *lanes; /* [n_regs] that definition's tangent lanes in this pass */
} gen;

#define EMIT(...) dual_strbuf_printf(&g->out, __VA_ARGS__)

/* Exact text of a double: a hex float, or the bits when it is not finite. */
static void emit_double(gen *g, double d) {
  if (d == d && d - d == 0.0) {
    EMIT("%a", d);
  } else {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    EMIT("__longlong_as_double(0x%016" PRIx64 "LL)", bits);
  }
}

/* The term of one operand in a lane sum, `+ M(q, t)`, when the operand has lane k. */
static void emit_term(gen *g, const char *m, const char *q, int present, int64_t def, int k) {
  if (present) EMIT(" + %s(%s, t%" PRId64 "_%d)", m, q, def, k);
}

/* The lanes of a LIN or MUL op: -0.0 plus the present operands' terms (M = DUAL_TF or DUAL_TM). */
static void emit_lin_lanes(gen *g, const char *m, int64_t t, const int64_t da[3],
                           const uint32_t mk[3], uint32_t md) {
  static const char *q[3] = {"qa", "qb", "qc"};
  for (int k = 0; k < 32; ++k) {
    if (!((md >> k) & 1u)) continue;
    EMIT("    t%" PRId64 "_%d = -0.0", t, k);
    for (int i = 0; i < 3; ++i) emit_term(g, m, q[i], (mk[i] >> k) & 1u, da[i], k);
    EMIT(";\n");
  }
}

/* One operand's tangent in lane k for the ADD/SUB/NEG/CHOOSE expressions: "t<def>_<k>" or 0.0. */
static void lane_name(char *buf, size_t cap, int present, int64_t def, int k) {
  if (present) snprintf(buf, cap, "t%" PRId64 "_%d", def, k);
  else snprintf(buf, cap, "0.0");
}

/* The tangent lanes of instruction t (prop class `prop`), whose operands' lanes are mk. */
static void emit_lanes(gen *g, int prop, int64_t t, const int64_t da[3], const uint32_t mk[3],
                       uint32_t md) {
  if (prop == DUAL_PROP_LIN || prop == DUAL_PROP_MUL) {
    EMIT("    const double qa = d_[0], qb = d_[1], qc = d_[2];\n    (void)qc;\n");
    EMIT("    if (DUAL_NONFINITE(qa) | DUAL_NONFINITE(qb) | DUAL_NONFINITE(qc)) {\n");
    emit_lin_lanes(g, "DUAL_TM", t, da, mk, md);
    EMIT("    } else {\n");
    emit_lin_lanes(g, "DUAL_TF", t, da, mk, md);
    EMIT("    }\n");
    return;
  }
  for (int k = 0; k < 32; ++k) {
    if (!((md >> k) & 1u)) continue;
    char ta[48], tb[48], tc[48];
    const int ua = (mk[0] >> k) & 1u, ub = (mk[1] >> k) & 1u, uc = (mk[2] >> k) & 1u;
    lane_name(ta, sizeof ta, ua, da[0], k);
    lane_name(tb, sizeof tb, ub, da[1], k);
    lane_name(tc, sizeof tc, uc, da[2], k);
    EMIT("    t%" PRId64 "_%d = ", t, k);
    switch (prop) { /* engine/interp_ops.h's DUAL_ADD_E, DUAL_SUB_E, DUAL_NEG_E, DUAL_CHOOSE_E */
    case DUAL_PROP_ADD: EMIT(ua && ub ? "%s + %s" : "%s%s", ua ? ta : "", ub ? tb : ""); break;
    case DUAL_PROP_SUB:
      if (ua && ub) EMIT("%s - %s", ta, tb);
      else if (ua) EMIT("%s", ta);
      else EMIT("-%s", tb);
      break;
    case DUAL_PROP_NEG: EMIT("-%s", ta); break;
    default: EMIT("DUAL_CHOOSE_T(d_[0], d_[1], %s, %s, %s)", ta, tb, tc); break;
    }
    EMIT(";\n");
  }
}

/* Declarations of a result's value and lanes. */
static void emit_decl(gen *g, int64_t t, uint32_t md) {
  EMIT("  double v%" PRId64, t);
  for (int k = 0; k < 32; ++k)
    if ((md >> k) & 1u) EMIT(", t%" PRId64 "_%d", t, k);
  EMIT(";\n");
}

/* An operand's value expression. */
static void value_name(char *buf, size_t cap, const gen *g, int arity, int i, uint32_t reg) {
  if (i < arity) snprintf(buf, cap, "v%" PRId64, g->def[reg]);
  else snprintf(buf, cap, "0.0");
}

/* Shared memory for staging, per block: 4 warps x 32 points x row length x 8 bytes. */
#define STAGE_BYTES(row) (4 * 32 * (row) * 8)
enum { STAGE_LIMIT = 40 * 1024 }; /* bytes: leaves room for several blocks per multiprocessor */

static int emit_pass(gen *g, const dual_plan_instr *recs, int mode, int width, int pass,
                     int min_blocks, char *why, int64_t why_cap) {
  const dual_program *prog = g->prog;
  const int c0 = pass * width, m = prog->n_out;
  const int kc = width > 0 ? dual_pass_columns(mode, prog->n_in, c0, width) : 0;
  const int first = pass == 0;
  /* Staging rows are odd-length (distinct shared-memory banks).  Every output's derivative row
   * at once (flushed at the end) when they fit, else one output row at a time; the values of a
   * first pass at once when they fit beside it, else stored directly. */
  const int whole = kc > 0 && STAGE_BYTES(((int64_t)m * kc) | 1) <= STAGE_LIMIT;
  const int kp = whole ? (m * kc) | 1 : kc | 1;
  const int staged = kc > 0 ? STAGE_BYTES(kp) : 0;
  const int mp = m | 1;
  const int ystage = first && staged + STAGE_BYTES((int64_t)mp) <= STAGE_LIMIT + 8 * 1024;
  EMIT("\nextern \"C\" __global__ void __launch_bounds__(DUAL_JIT_THREADS");
  if (min_blocks > 0) EMIT(", %d", min_blocks);
  EMIT(") " DUAL_JIT_KERNEL_NAME "(const dual_jit_args A) {\n", pass);
  if (kc > 0) EMIT("  __shared__ double stage_[DUAL_JIT_WARPS][32 * %d];\n", kp);
  if (ystage) EMIT("  __shared__ double ystage_[DUAL_JIT_WARPS][32 * %d];\n", mp);
  EMIT("  DUAL_JIT_TILE_BEGIN\n");
  for (int32_t r = 0; r < prog->n_regs; ++r) g->def[r] = -1, g->lanes[r] = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const dual_plan_instr *q = &recs[t];
    const int op = (int)(q->op_dst >> DUAL_DST_BITS);
    const uint32_t dst = q->op_dst & ((1u << DUAL_DST_BITS) - 1u);
    const dual_op_info *info = &dual_op_table[op];
    const uint32_t regs[3] = {q->a, q->b, q->c};
    const uint32_t mk[3] = {q->ma, q->mb, q->mc};
    int64_t da[3] = {-1, -1, -1};
    if (info->prop != DUAL_PROP_LOAD)
      for (int i = 0; i < info->arity; ++i) {
        da[i] = g->def[regs[i]];
        if (da[i] < 0 || (mk[i] & ~g->lanes[regs[i]]) != 0u) {
          snprintf(why, (size_t)why_cap,
                   "instruction %" PRId64 ": operand r%u has no definition with lanes %#x", t,
                   regs[i], mk[i]);
          return DUAL_ERR_INTERNAL;
        }
      }
    switch (op) {
    case DUAL_OP_LDX:
      EMIT("  const double v%" PRId64 " = DUAL_JIT_LDX(%u);\n", t, q->a);
      if (width > 0 && q->ma != 0u) {
        const int k = DUAL_CTZ(q->ma);
        if (mode == DUAL_MODE_JVP) EMIT("  const double t%" PRId64 "_%d = DUAL_JIT_LDV(%u);\n", t, k, q->a);
        else EMIT("  const double t%" PRId64 "_%d = 1.0;\n", t, k);
      }
      break;
    case DUAL_OP_LDP: EMIT("  const double v%" PRId64 " = DUAL_JIT_LDP(%u);\n", t, q->a); break;
    case DUAL_OP_LDK:
      EMIT("  const double v%" PRId64 " = ", t);
      emit_double(g, prog->consts[q->a]);
      EMIT(";\n");
      break;
    case DUAL_OP_RNORM:
    case DUAL_OP_RUNIF:
      EMIT("  const double v%" PRId64 " = DUAL_JIT_DRAW(%d, %u);\n", t, op == DUAL_OP_RNORM, q->a);
      break;
    case DUAL_OP_OUT: {
      if (ystage) EMIT("  DUAL_JIT_STAGE_VALUE(%u, v%" PRId64 ", %d)\n", q->b, da[0], mp);
      else EMIT("  DUAL_JIT_OUT_VALUE(%u, v%" PRId64 ", %d)\n", q->b, da[0], first);
      if (kc == 0) break;
      EMIT("  {\n    double *s_ = stage_[warp_] + lane_ * %d + %d;\n", kp, whole ? (int)q->b * kc : 0);
      for (int k = 0; k < kc; ++k) {
        if ((q->ma >> k) & 1u) EMIT("    DUAL_JIT_STAGE(%d, t%" PRId64 "_%d)\n", k, da[0], k);
        else EMIT("    DUAL_JIT_STAGE_ZERO(%d)\n", k);
      }
      EMIT("  }\n");
      if (!whole) EMIT("  DUAL_JIT_FLUSH(%u, %d, %d, %d)\n", q->b, kc, kp, c0);
      break;
    }
    default: {
      const uint32_t md = width > 0 && info->prop != DUAL_PROP_NONE ? (q->ma | q->mb | q->mc) : 0u;
      char va[32], vb[32], vc[32];
      value_name(va, sizeof va, g, info->arity, 0, q->a);
      value_name(vb, sizeof vb, g, info->arity, 1, q->b);
      value_name(vc, sizeof vc, g, info->arity, 2, q->c);
      emit_decl(g, t, md);
      EMIT("  {\n    double d_[3];\n    int f_ = 0;\n");
      EMIT("    v%" PRId64 " = dual_rule_%s(%s, %s, %s, d_, &f_);\n", t, info->name, va, vb, vc);
      if (info->flags & F_CHECK) EMIT("    st |= f_;\n");
      if (md != 0u) emit_lanes(g, info->prop, t, da, mk, md);
      EMIT("  }\n");
      g->lanes[dst] = md;
      break;
    }
    }
    if (info->prop == DUAL_PROP_LOAD) g->lanes[dst] = op == DUAL_OP_LDX && width > 0 ? q->ma : 0u;
    if (info->prop != DUAL_PROP_OUT) g->def[dst] = t;
  }
  if (whole) EMIT("  DUAL_JIT_FLUSH_ALL(%d, %d, %d, %d)\n", m, kc, kp, c0);
  if (ystage) EMIT("  DUAL_JIT_FLUSH_Y(%d, %d)\n", m, mp);
  EMIT("  DUAL_JIT_TILE_END(%d, %s)\n}\n", first, width > 0 ? "~0" : "~DUAL_PT_SINGULAR");
  return DUAL_SUCCESS;
}

char *dual_jit_source(const dual_program *prog, int mode, int width, int npass, int min_blocks,
                      char *why, int64_t why_cap) {
  if (why_cap > 0) why[0] = '\0';
  if (mode != DUAL_MODE_EVAL && mode != DUAL_MODE_JVP && mode != DUAL_MODE_JACOBIAN &&
      mode != DUAL_MODE_GRADIENT) {
    snprintf(why, (size_t)why_cap, "mode %d is not first order", mode);
    return NULL;
  }
  if (mode == DUAL_MODE_EVAL) width = 0, npass = 1;
  gen g0, *g = &g0;
  memset(g, 0, sizeof *g);
  g->prog = prog;
  const size_t nregs = (size_t)(prog->n_regs > 0 ? prog->n_regs : 1);
  const size_t nrec = (size_t)(prog->n_instr > 0 ? prog->n_instr : 1) * (size_t)npass;
  g->def = (int64_t *)malloc(nregs * sizeof *g->def);
  g->lanes = (uint32_t *)malloc(nregs * sizeof *g->lanes);
  dual_plan_instr *recs = (dual_plan_instr *)malloc(nrec * sizeof *recs);
  int64_t slots = 0;
  int st = g->def && g->lanes && recs ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
  if (st == DUAL_SUCCESS) st = dual_plan_build(prog, mode, width, 0, npass, recs, &slots);
  if (st != DUAL_SUCCESS) snprintf(why, (size_t)why_cap, "out of memory generating kernel source");
  if (st == DUAL_SUCCESS) {
    EMIT("// dualbatch compiled tier, generator %d: %" PRId64 " instructions, mode %d, width %d, "
         "%d passes\n#include \"jit/jit_kernel.h\"\n",
         DUAL_JIT_GENERATOR_VERSION, prog->n_instr, mode, width, npass);
    for (int pass = 0; pass < npass && st == DUAL_SUCCESS; ++pass)
      st = emit_pass(g, recs + (size_t)pass * (size_t)prog->n_instr, mode, width, pass, min_blocks,
                     why, why_cap);
  }
  free(g->def);
  free(g->lanes);
  free(recs);
  char *src = dual_strbuf_take(&g->out);
  if (st != DUAL_SUCCESS) {
    free(src);
    return NULL;
  }
  if (src == NULL) snprintf(why, (size_t)why_cap, "out of memory generating kernel source");
  return src;
}
