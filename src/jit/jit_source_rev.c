/*
 * jit_source_rev.c — generates reverse-mode and forward-over-reverse kernels (jit_source_rev.h;
 * programs cut into segments: jit_rev_segments.c).  A forward-over-reverse kernel runs,
 * for one point and the K directions of a group (Hessian columns k0 .. k0 + K - 1, or the HVP's
 * v), what the interpreters run once per direction (engine/interp_rev.h, DUAL_REV_FOR 1): the
 * taping forward sweep — value, partials d, the tangent along the direction and each LIN op's
 * d' = d2 . t — then per output the adjoint pair sweep (g, g') in reverse order.  A Hessian
 * kernel computes the values and partials once for all its groups, each group then its
 * tangents, d' and sweeps in a scope of its own.  In the sweeps an accumulator's first term is
 * computed where its second term arrives or it is read (acc_add), not where the term arrives,
 * which keeps, e.g., a log-sum-exp's first terms of every Hessian row out of the registers.  Every
 * definition gets its own locals (v<t> value, t<t>_<k> tangents, d<t>_<i> partials,
 * e<t>_<i>_<k> their derivatives; a<t> and b<t>_<k> the adjoint pair of value t, g<j>/h<j>_<k>
 * input j's), so the CUDA compiler allocates the registers, and the values and partials are
 * computed once for all K directions.  Each direction's arithmetic is the interpreters' term for
 * term (tangent_terms.h's lane formulas, the guarded products DUAL_TM and DUAL_TT, the adjoint
 * sums from +0.0 in the sweep's order), so the bits are theirs; terms that are structurally
 * zero — an absent tangent, d' or adjoint tangent, a second partial the op never has — are
 * signed zeros that change no bit (interp_rev.h), so they are left out.  The kernel runs the
 * warp-tiled loop of the first-order kernels (jit_kernel.h) around two copies of the sweeps: a
 * fast one with plain products, and a guarded one its warp reruns only when a stored entry came
 * out NaN or infinite (dual_jit_stager_kernel_fast, jit_stage2.h).  Gradient and Hessian
 * entries leave through the stager (jit_stage2.h): staged per warp as soon as they are final,
 * written by chunks of adjacent elements for 32 points at once.  Reverse mode (first order) is
 * the same without directions: one kernel of every output's sweep (a VJP's one sweep).
 * dual_sgrad's reverse-mode kernel (job->samples > 0) runs that kernel's sweeps for one sample
 * per thread, leaves the sample's value and gradient in the thread's row of shared memory
 * instead of the stager, and lets the warp fold its samples (emit_sgrad_kernel, jit_kernel.h).
 * The CPU target (dual_jit_source_rev_cpu) writes the same sweeps with the rules by value
 * (dual_jitr_emit_step; forward-over-reverse's second partials through dual_cpu_rule2_<op>)
 * into one pass function over a block of points (dual_jitr_emit_cpu_function), every group of
 * directions in it, guarded products only, gradient entries straight to d and Hessian and HVP
 * entries straight to h (DUAL_CPU_PUT_D, DUAL_CPU_PUT_H).
 */
#include "jit/jit_source_rev.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "engine/pass2.h" /* dual_pass2_out_len */
#include "engine/rev_plan.h" /* DUAL_FOR_ENTRIES */
#include "jit/jit_source.h"  /* dual_jit_emit_lane */
#include "jit/jit_source2.h" /* DUAL_JIT2_KERNEL_NAME */
#include "jit/jit_rev_gen.h"

#define EMIT(...) dual_strbuf_printf(&g->out, __VA_ARGS__)

int dual_jitr_active(const dual_program *prog, int32_t r) { return r < prog->n_active; }

const char *dual_jitr_ix(const genr *g) { return g->arrays ? "[i_]" : ""; }

void dual_jitr_declare_block(genr *g, const char *name, int64_t units) {
  dual_strbuf_printf(&g->decls, "  double *const %s = scratch + (gx_len_ + %" PRId64 ") * DUAL_CPU_BLK;\n", name,
                     g->ndecl);
  g->ndecl += units;
}

void dual_jitr_declare(genr *g, const char *indent, const char *type, const char *name, int init) {
  if (!g->arrays) {
    EMIT("%s%s %s%s", indent, type, name, init ? " = " : ";\n");
    return;
  }
  dual_jitr_declare_block(g, name, 1);
  if (init) EMIT("%s%s[i_] = ", indent, name);
}

void dual_jitr_gx(const genr *g, const char *index, char *buf, size_t cap) {
  if (g->arrays) snprintf(buf, cap, "gx_[(%s) * DUAL_CPU_BLK + i_]", index);
  else snprintf(buf, cap, "gx_[%s]", index);
}

void dual_jitr_emit_step(genr *g, const char *indent, int op, const char *a, const char *b, const char *c,
                         const char *res, const char *const partials[3]) {
  const dual_op_info *info = &dual_op_table[op];
  static const char *const q[3] = {"qa", "qb", "qc"}, *const d[3] = {"d_[0]", "d_[1]", "d_[2]"};
  if (g->cpu) {
    EMIT("%s{\n%s  DUAL_CPU_STEP(%s, %#x, %s, %s, %s, %s)\n", indent, indent, info->name, (unsigned)info->flags,
         a, b, c, res);
  } else {
    EMIT("%s{\n%s  double d_[3];\n%s  DUAL_VALUE_STEP(%s, %#x, %s, %s, %s, %s, d_, st)\n", indent, indent, indent,
         info->name, (unsigned)info->flags, a, b, c, res);
  }
  for (int i = 0; i < 3; ++i)
    if (partials[i] != NULL) EMIT("%s  %s = %s;\n", indent, partials[i], g->cpu ? q[i] : d[i]);
  EMIT("%s}\n", indent);
}

void dual_jitr_emit_cpu_function(genr *g, int64_t gx_len, const char *body) {
  if (body == NULL) {
    g->out.failed = 1;
    return;
  }
  /* the block arrays in the thread's scratch: gx_, then the names, DUAL_CPU_BLK doubles each */
  EMIT("\nconst int64_t " DUAL_CPU_JIT_SCRATCH_NAME " = %" PRId64 " * DUAL_CPU_BLK * 8;\n"
       "\nvoid " DUAL_CPU_JIT_PASS_NAME DUAL_CPU_JIT_PASS_PARAMS ";\n"
       "void " DUAL_CPU_JIT_PASS_NAME DUAL_CPU_JIT_PASS_PARAMS " {\n"
       "  DUAL_CPU_ARGS\n  DUAL_CPU_REV_ARGS\n  int st_b_[DUAL_CPU_BLK];\n  (void)scratch;\n", gx_len + g->ndecl, 0, 0);
  EMIT("  const int64_t gx_len_ = %" PRId64 ";\n  (void)gx_len_;\n", gx_len);
  if (gx_len > 0) EMIT("  double *const gx_ = scratch;\n");
  EMIT("%s  (void)stream;\n  for (int64_t i_ = 0; i_ < nb; ++i_) st_b_[i_] = 0;\n%s"
       "  for (int64_t i_ = 0; i_ < nb; ++i_) {\n    DUAL_CPU_STATUS(i_, st_b_[i_], 1, ~0)\n  }\n}\n",
       g->decls.s != NULL ? g->decls.s : "", body);
}

/* Reverse mode (first order): a gradient, a Jacobian by rows or a VJP, no directions. */
static int first_order(const dual_job *job) {
  return job->mode == DUAL_MODE_GRADIENT || job->mode == DUAL_MODE_JACOBIAN || job->mode == DUAL_MODE_VJP;
}

/* Adjoint sweeps per pass: one per output, or one for a VJP (every output's cotangent). */
static int sweeps(const dual_job *job) { return job->mode == DUAL_MODE_VJP ? 1 : job->prog->n_out; }

/* Directions per group: the job's width field when set, else DUAL_JIT_REV_DIRECTIONS. */
static int per_pass(const dual_job *job) {
  return job->width > 0 ? job->width : DUAL_JIT_REV_DIRECTIONS;
}

/* Groups of directions: ceil(n / per_pass) for a Hessian, else one. */
static int groups_total(const dual_job *job) {
  const int64_t n = job->prog->n_in;
  if (first_order(job) || job->mode == DUAL_MODE_HVP || n == 0) return 1;
  return (int)((n + per_pass(job) - 1) / per_pass(job));
}

/* Groups per kernel: the job's groups field when set, else all of them (one kernel). */
static int groups_per_kernel(const dual_job *job) {
  const int all = groups_total(job);
  return job->groups > 0 && job->groups < all ? job->groups : all;
}

int dual_jit_rev_passes(const dual_job *job) {
  const int per = groups_per_kernel(job);
  return (groups_total(job) + per - 1) / per;
}

/* Directions of group `group`. */
static int group_directions(const dual_job *job, int group) {
  const int64_t n = job->prog->n_in;
  if (first_order(job)) return 0;
  if (job->mode == DUAL_MODE_HVP || n == 0) return 1;
  const int64_t left = n - (int64_t)group * per_pass(job);
  return (int)(left < per_pass(job) ? left : per_pass(job));
}

int64_t dual_jit_rev_sums(const dual_job *job) {
  const dual_program *prog = job->prog;
  int64_t per_dir = 0; /* terms per direction: tangents, d', adjoint tangents */
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
    if (!dual_jitr_active(prog, DUAL_INSTR_DST(w)) || info->prop == DUAL_PROP_OUT) continue;
    if (info->prop == DUAL_PROP_LOAD) continue;
    if (first_order(job)) { /* the adjoint terms of every sweep */
      per_dir += (int64_t)sweeps(job) * info->arity;
      continue;
    }
    per_dir += 1 + (int64_t)prog->n_out * info->arity;
    if (info->adj == DUAL_ADJ_LIN) per_dir += info->arity;
  }
  return per_dir * (first_order(job) || job->mode == DUAL_MODE_HVP ? 1 : prog->n_in);
}

/* The tangents of active input a's load t in the K directions: a Hessian column's seed is
 * present at its input only, an HVP's is v. */
static void emit_seeds(genr *g, int64_t t, uint32_t a) {
  for (int k = 0; k < g->K; ++k) {
    if (g->k0 >= 0 && (int64_t)a != (int64_t)g->k0 + k) continue;
    g->tp[t * g->K + k] = 1;
    if (g->k0 < 0) EMIT("    const double t%" PRId64 "_%d = DUAL_JIT_LDV(%u);\n", t, k, a);
    else EMIT("    const double t%" PRId64 "_%d = 1.0;\n", t, k);
  }
}

/* Declare v<t> with an initializer (dual_jitr_declare). */
static void decl_v(genr *g, int64_t t) {
  char name[32];
  snprintf(name, sizeof name, "v%" PRId64, t);
  dual_jitr_declare(g, "    ", "const double", name, 1);
}

void dual_jitr_emit_load(genr *g, int op, int64_t t, uint32_t a, int active) {
  if (g->phase == 2) { /* a group's tangents: the seeds of an active input's load */
    if (op == DUAL_OP_LDX && active) emit_seeds(g, t, a);
    return;
  }
  switch (op) {
  case DUAL_OP_LDX:
    decl_v(g, t);
    EMIT("DUAL_JIT_LDX(%u);\n", a);
    if (active && g->phase == 0) emit_seeds(g, t, a);
    break;
  case DUAL_OP_LDP: decl_v(g, t), EMIT("DUAL_JIT_LDP(%u);\n", a); break;
  case DUAL_OP_LDK:
    decl_v(g, t);
    dual_strbuf_double(&g->out, g->prog->consts[a]);
    EMIT(";\n");
    break;
  case DUAL_OP_RNORM: /* both normals of its pair at its first draw: the same bits (dual/random.h) */
    if (g->pairs != NULL && !g->pairs[a >> 1]) {
      g->pairs[a >> 1] = 1;
      if (g->cpu) EMIT("    const dual_cpu_pair z%u_ = DUAL_CPU_NORMALS(%u);\n", a >> 1, a >> 1);
      else EMIT("    double z%u_[2];\n    DUAL_JIT_NORMALS(%u, z%u_);\n", a >> 1, a >> 1, a >> 1);
    }
    decl_v(g, t);
    if (g->pairs != NULL) EMIT("z%u_%s[%u];\n", a >> 1, g->cpu ? ".z" : "", a & 1u);
    else EMIT("DUAL_JIT_DRAW(1, %u);\n", a);
    break;
  default: /* RUNIF; draws are keyed by sample 0, or dual_sgrad's sample (DUAL_JIT_SAMPLE) */
    decl_v(g, t);
    EMIT("DUAL_JIT_DRAW(0, %u);\n", a);
    break;
  }
}

/* Whether d' of operand i (0 or 1) of a LIN op has, in lane k, the term of operand j's tangent:
 * the operand is active and present in the lane, and the op may have that second partial
 * (ops.def F_D2*; interp_rev.h leaves the others out). */
static int d2_term(const genr *g, const dual_op_info *info, const int u[3], const int64_t *da,
                   int i, int j, int k) {
  static const int flag[2][2] = {{F_D2AA, F_D2AB}, {F_D2AB, F_D2BB}};
  return u[j] && g->tp[da[j] * g->K + k] && (info->flags & flag[i][j]);
}

/* A computing instruction of the forward sweep: value and partials; if its result is active,
 * the tangents of the K directions and, for an op whose adjoint reads partials, those partials
 * (and for LIN ops their derivatives along each direction).  A lane takes the terms of the
 * operands present in it (g->tp); a lane none of them has is absent, as is a d' without terms. */
void dual_jitr_emit_compute(genr *g, const uint32_t *w, int64_t t) {
  const dual_program *prog = g->prog;
  const int op = DUAL_INSTR_OP(w);
  const dual_op_info *info = &dual_op_table[op];
  const int32_t reg[3] = {DUAL_INSTR_A(w), DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
  const int64_t *da = &g->opnd[3 * t];
  const int act = dual_jitr_active(prog, DUAL_INSTR_DST(w));
  const int tangents = act && info->prop != DUAL_PROP_NONE && g->K > 0;
  const int taped = act && (info->adj == DUAL_ADJ_LIN || info->adj == DUAL_ADJ_CHOOSE);
  const int lin = act && info->adj == DUAL_ADJ_LIN && g->K > 0; /* d' of forward-over-reverse */
  int u[3];
  char v[3][32];
  for (int i = 0; i < 3; ++i) {
    u[i] = i < info->arity && dual_jitr_active(prog, reg[i]);
    if (i < info->arity) snprintf(v[i], sizeof v[i], "v%" PRId64 "%s", da[i], dual_jitr_ix(g));
    else snprintf(v[i], sizeof v[i], "0.0");
  }
  if (g->cpu && first_order(g->job)) { /* (no directions: the value and the taped partials) */
    char res[32], dn[3][32];
    const char *part[3] = {NULL, NULL, NULL};
    snprintf(res, sizeof res, "v%" PRId64, t);
    dual_jitr_declare(g, "    ", "double", res, 0);
    for (int i = 0; taped && i < info->arity; ++i) {
      snprintf(dn[i], sizeof dn[i], "d%" PRId64 "_%d", t, i);
      dual_jitr_declare(g, "    ", "double", dn[i], 0);
      snprintf(dn[i], sizeof dn[i], "d%" PRId64 "_%d%s", t, i, dual_jitr_ix(g));
      part[i] = dn[i];
    }
    snprintf(res, sizeof res, "v%" PRId64 "%s", t, dual_jitr_ix(g));
    dual_jitr_emit_step(g, "    ", op, v[0], v[1], v[2], res, part);
    return;
  }
  /* per lane: which operands are present, whether the result and each d' are */
  const int K = g->K, ph = g->phase;
  int lanes = 0; /* present tangents and d' of this instruction */
  for (int k = 0; tangents && ph != 1 && k < K; ++k) {
    int any = 0;
    for (int i = 0; i < 3; ++i) any |= u[i] && g->tp[da[i] * K + k];
    g->tp[t * K + k] = (uint8_t)any;
    lanes += any;
    for (int i = 0; lin && i < info->arity; ++i)
      lanes += g->ep[(t * 3 + i) * K + k] = (uint8_t)(i < 2 && (d2_term(g, info, u, da, i, 0, k) ||
                                                                d2_term(g, info, u, da, i, 1, k)));
  }
  if (ph == 2 && lanes == 0) return; /* a group's tangents: none in this instruction */
  if (ph != 2) EMIT("    double v%" PRId64 ";\n", t);
  /* a grouped kernel's values keep every partial of an active result for the groups (those the
   * code never reads the compiler drops) */
  const int nd = ph == 1 ? (act ? 3 : 0) : ph == 0 && taped ? info->arity : 0;
  for (int i = 0; i < nd; ++i) EMIT("    double d%" PRId64 "_%d;\n", t, i);
  for (int k = 0; tangents && ph != 1 && k < K; ++k)
    if (g->tp[t * K + k]) EMIT("    double t%" PRId64 "_%d;\n", t, k);
  for (int i = 0; lin && ph != 1 && i < info->arity; ++i)
    for (int k = 0; k < K; ++k)
      if (g->ep[(t * 3 + i) * K + k]) EMIT("    double e%" PRId64 "_%d_%d;\n", t, i, k);
  /* the partials: d_[i] (the CPU's qa, qb, qc: jit/cpu_kernel.h's by-value rules, nothing in
   * its point loop address-taken), then a group's from the values' phase */
  static const char *const dg[3] = {"d_[0]", "d_[1]", "d_[2]"}, *const dc[3] = {"qa", "qb", "qc"};
  const char *const *dq = g->cpu ? dc : dg;
  if (ph == 2 && g->cpu) {
    EMIT("    {\n      const double qa = d%" PRId64 "_0, qb = d%" PRId64 "_1, qc = d%" PRId64 "_2;\n"
         "      (void)qa, (void)qb, (void)qc;\n", t, t, t);
  } else if (ph == 2) {
    EMIT("    {\n      const double d_[3] = {d%" PRId64 "_0, d%" PRId64 "_1, d%" PRId64 "_2};\n", t, t, t);
  } else if (g->cpu) {
    EMIT("    {\n      DUAL_CPU_STEP(%s, %#x, %s, %s, %s, v%" PRId64 ")\n", info->name, (unsigned)info->flags,
         v[0], v[1], v[2], t);
  } else {
    EMIT("    {\n      double d_[3];\n");
    EMIT("      DUAL_VALUE_STEP(%s, %#x, %s, %s, %s, v%" PRId64 ", d_, st)\n", info->name,
         (unsigned)info->flags, v[0], v[1], v[2], t);
  }
  for (int i = 0; i < nd; ++i) EMIT("      d%" PRId64 "_%d = %s;\n", t, i, dq[i]);
  if (ph == 1) {
    EMIT("    }\n");
    return;
  }
  if (lin && g->cpu)
    EMIT("      const dual_cpu_dd dd_ = dual_cpu_rule2_%s(%s, %s, %s, v%" PRId64 ", qa, qb, qc);\n", info->name,
         v[0], v[1], v[2], t);
  else if (lin)
    EMIT("      double dd_[3];\n      dual_rule2_%s(%s, %s, %s, v%" PRId64 ", d_, dd_);\n", info->name,
         v[0], v[1], v[2], t);
  if (tangents) {
    const int any = u[0] || u[1] || u[2];
    if (g->cpu) { /* (qa, qb, qc are the rule's partials: for MUL the operands, as below) */
    } else if (any && (info->prop == DUAL_PROP_MUL))
      EMIT("      const double qa = %s, qb = %s, qc = 0.0;\n", v[1], v[0]);
    else if (any) EMIT("      const double qa = d_[0], qb = d_[1], qc = d_[2];\n");
    if (any && !g->cpu) EMIT("      (void)qa, (void)qb, (void)qc;\n");
    for (int k = 0; k < K; ++k) {
      if (!g->tp[t * K + k]) continue;
      char tn[3][48];
      int uk[3];
      for (int i = 0; i < 3; ++i) {
        uk[i] = u[i] && g->tp[da[i] * K + k];
        if (uk[i]) snprintf(tn[i], sizeof tn[i], "t%" PRId64 "_%d", da[i], k);
        else snprintf(tn[i], sizeof tn[i], "0.0");
      }
      EMIT("      t%" PRId64 "_%d = ", t, k);
      const char *const tnc[3] = {tn[0], tn[1], tn[2]};
      dual_jit_emit_lane(&g->out, info->prop, "DUAL_RTM", uk, tnc);
      EMIT(";\n");
    }
  }
  /* d' = d2 . t of each operand's partial (interp_rev.h): -0.0 plus the terms of the operands a
   * and b present in the lane (a third operand's d' has none) */
  for (int i = 0; lin && i < info->arity; ++i) {
    const char *q1 = g->cpu ? (i == 0 ? "dd_.e0" : "dd_.e1") : i == 0 ? "dd_[0]" : "dd_[1]";
    const char *q2 = g->cpu ? (i == 0 ? "dd_.e1" : "dd_.e2") : i == 0 ? "dd_[1]" : "dd_[2]";
    for (int k = 0; k < K; ++k) {
      if (!g->ep[(t * 3 + i) * K + k]) continue;
      EMIT("      e%" PRId64 "_%d_%d = -0.0", t, i, k);
      if (d2_term(g, info, u, da, i, 0, k)) EMIT(" + DUAL_RTT(%s, t%" PRId64 "_%d)", q1, da[0], k);
      if (d2_term(g, info, u, da, i, 1, k)) EMIT(" + DUAL_RTT(%s, t%" PRId64 "_%d)", q2, da[1], k);
      EMIT(";\n");
    }
  }
  EMIT("    }\n");
}

/* Accumulators of a sweep.  An accumulator starts at +0.0 and takes terms in the sweep's order;
 * in a deferring sweep (g->pend set) its first term is not computed where it arrives but kept as
 * the expression (+0.0 + term) — its operands are final there and stay so — and computed where
 * the accumulator is next read or takes its second term: the same operations on the same
 * values, so the same bits, while the accumulator is not live in between.  This keeps, e.g., a
 * log-sum-exp's 16 rows of first terms out of the registers until the rest of each row comes.
 * An expression longer than DEFER_CAP characters is written to its variable at once. */
#define DEFER_CAP 480

static int64_t acc_def(const genr *g, int64_t t, int k) { return t * (g->K + 1) + 1 + k; }
static int64_t acc_in(const genr *g, int64_t j, int k) {
  return (g->prog->n_instr + j) * (g->K + 1) + 1 + k;
}

/* A looped module's gx_ slot of accumulator id (its input), or -1. */
static int64_t gx_slot(const genr *g, int64_t id) {
  const int64_t per = g->K + 1, who = id / per, k = id % per - 1;
  if (!g->direct || k >= 0 || who >= g->prog->n_instr) return -1;
  const uint32_t *w = g->prog->code + who * DUAL_INSTR_WORDS;
  return DUAL_INSTR_OP(w) == DUAL_OP_LDX ? DUAL_INSTR_A(w) : -1;
}

/* The variable of accumulator id (k = -1: a<t> / g<j>; a looped module's loads: gx_[slot]). */
static void acc_name(const genr *g, int64_t id, char *buf, size_t cap) {
  const int64_t per = g->K + 1, who = id / per, k = id % per - 1;
  const int in = who >= g->prog->n_instr;
  const int64_t x = in ? who - g->prog->n_instr : who, slot = gx_slot(g, id);
  char idx[32];
  snprintf(idx, sizeof idx, "%" PRId64, slot);
  if (slot >= 0) dual_jitr_gx(g, idx, buf, cap);
  else if (k < 0) snprintf(buf, cap, "%c%" PRId64 "%s", in ? 'g' : 'a', x, dual_jitr_ix(g));
  else snprintf(buf, cap, "%c%" PRId64 "_%" PRId64, in ? 'h' : 'b', x, k);
}

/* Write accumulator id's deferred value to its variable. */
static void acc_write(genr *g, int64_t id) {
  if (g->pend == NULL || g->pend[id] == NULL) return;
  char name[96];
  acc_name(g, id, name, sizeof name);
  EMIT("      %s = %s;\n", name, g->pend[id]);
  free(g->pend[id]);
  g->pend[id] = NULL;
  g->set[id] = 1;
}

/* The expression that reads accumulator id (its variable, or its deferred value; an untouched
 * gx_ slot: +0.0); the result lives until the next call. */
static const char *acc_ref(genr *g, int64_t id) {
  static char name[96];
  const int64_t slot = g->gx_seen != NULL ? gx_slot(g, id) : -1;
  if (slot >= 0 && !g->gx_seen[slot]) return "0.0";
  if (g->pend != NULL && g->pend[id] != NULL) return g->pend[id];
  acc_name(g, id, name, sizeof name);
  return name;
}

/* acc_ref into buf. */
static void acc_copy(genr *g, int64_t id, char *buf, size_t cap) { snprintf(buf, cap, "%s", acc_ref(g, id)); }

/* Accumulator id op= term (op '+' or '-'). */
static void acc_add(genr *g, int64_t id, char op, const char *term) {
  char name[96];
  acc_name(g, id, name, sizeof name);
  const int64_t slot = g->gx_seen != NULL ? gx_slot(g, id) : -1;
  if (slot >= 0 && !g->gx_seen[slot]) { /* a gx_ slot's first term */
    g->gx_seen[slot] = 1;
    EMIT("      %s = 0.0 %c (%s);\n", name, op, term);
    return;
  }
  if (g->pend == NULL || g->set[id]) { /* not deferring, or written already */
    EMIT("      %s %c= %s;\n", name, op, term);
    return;
  }
  if (g->pend[id] != NULL) { /* the second term: both now */
    EMIT("      %s = %s %c (%s);\n", name, g->pend[id], op, term);
    free(g->pend[id]);
    g->pend[id] = NULL;
    g->set[id] = 1;
    return;
  }
  const size_t len = strlen(term) + 16;
  char *e = (char *)malloc(len);
  if (e == NULL) { /* out of memory: the generation fails (dual_strbuf_take gives NULL) */
    g->out.failed = 1;
    return;
  }
  snprintf(e, len, "(0.0 %c (%s))", op, term);
  g->pend[id] = e;
  if (len > DEFER_CAP) acc_write(g, id);
}

/* Start a sweep's accumulators (all +0.0, none deferred); deferring only when asked. */
static void acc_start(genr *g, int defer) {
  const size_t total = (size_t)(g->prog->n_instr + g->prog->n_in) * (size_t)(g->K + 1);
  g->pend = NULL, g->set = NULL;
  if (!defer) return;
  g->pend = (char **)calloc(total > 0 ? total : 1, sizeof(char *));
  g->set = (uint8_t *)calloc(total > 0 ? total : 1, 1);
  if (g->pend == NULL || g->set == NULL) free(g->pend), free(g->set), g->pend = NULL, g->set = NULL;
}

static void acc_end(genr *g) {
  const size_t total = (size_t)(g->prog->n_instr + g->prog->n_in) * (size_t)(g->K + 1);
  for (size_t i = 0; g->pend != NULL && i < total; ++i) free(g->pend[i]);
  free(g->pend), free(g->set);
  g->pend = NULL, g->set = NULL;
}

/* Direction k's g' of input j for output s as h entries (DUAL_FOR_ENTRIES: the upper triangle,
 * mirrored in the full layout), through the stager; with `expect`, only tell the stager they
 * will come. */
static void emit_lane_store(genr *g, int s, int64_t j, int k, int expect) {
  const int64_t n = g->prog->n_in;
  const int packed = g->job->b->h_layout == DUAL_HESSIAN_PACKED;
  const int64_t dir = g->k0 < 0 ? -1 : g->k0 + k;
  int64_t e0, e1;
  DUAL_FOR_ENTRIES(dir, j, n, packed, e0, e1)
  if (e0 < 0 || (expect && g->cpu)) return; /* (the CPU's stores go straight to h) */
  if (g->cpu) {
    char name[DEFER_CAP + 64];
    acc_copy(g, acc_in(g, j, k), name, sizeof name);
    EMIT("    DUAL_CPU_PUT_H(%d, %" PRId64 ", %" PRId64 ", %s)\n", s, e0, e1, name);
    return;
  }
  if (expect) {
    dual_jit_stager_expect(&g->stage, DUAL_JIT_STAGE_H, s, e0);
    if (e1 >= 0) dual_jit_stager_expect(&g->stage, DUAL_JIT_STAGE_H, s, e1);
    return;
  }
  char name[DEFER_CAP + 64];
  acc_copy(g, acc_in(g, j, k), name, sizeof name);
  dual_jit_stager_put(&g->stage, DUAL_JIT_STAGE_H, s, name, e0, e1);
}

/* Input j's results of output s: its gradient entry (when stored: the interpreters store it
 * along direction 0 or v) and each direction's g' not stored early; with `expect`, only tell the
 * stager they will come. */
void dual_jitr_emit_input_stores(genr *g, int s, int store_grad, int64_t j, int expect) {
  if (g->sgrad) { /* the sample's row: entry j of output s's gradient */
    char name[DEFER_CAP + 64];
    acc_copy(g, acc_in(g, j, -1), name, sizeof name);
    if (!expect) EMIT("    DUAL_JIT2_SGRAD_PUT(%" PRId64 ", %s)\n", g->prog->n_out + s * g->prog->n_in + j, name);
    return;
  }
  if (g->direct || g->cpu) { /* a looped module, or the CPU's: straight to d (and h) */
    char name[DEFER_CAP + 64];
    acc_copy(g, acc_in(g, j, -1), name, sizeof name);
    if (!expect && store_grad)
      EMIT("    %s(%d, %" PRId64 ", %s)\n", g->cpu ? "DUAL_CPU_PUT_D" : "DUAL_JIT2_PUT_D", s, j, name);
    for (int k = 0; g->cpu && !expect && k < g->K; ++k)
      if (!g->early[j * g->K + k]) emit_lane_store(g, s, j, k, 0);
    return;
  }
  if (store_grad && expect) dual_jit_stager_expect(&g->stage, DUAL_JIT_STAGE_D, s, j);
  else if (store_grad) {
    char name[DEFER_CAP + 64];
    acc_copy(g, acc_in(g, j, -1), name, sizeof name);
    dual_jit_stager_put(&g->stage, DUAL_JIT_STAGE_D, s, name, j, -1);
  }
  for (int k = 0; k < g->K; ++k)
    if (expect || !g->early[j * g->K + k]) emit_lane_store(g, s, j, k, expect);
}

/* The adjoint pair sweep of output s: every active value's (g, g') starts at +0.0 and takes its
 * uses' present terms in reverse order, as the interpreters' adjoint rows do.  An input's results
 * are stored as soon as they are final — after the input's first load, the last one the sweep
 * meets, and a lane of an input loaded once after its last present term (found by a dry run of
 * the sweep) — so their accumulators do not stay live to the end; inputs never loaded store
 * zeros. */
static void emit_adjoint(genr *g, int s, int store_grad, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  const int64_t n = prog->n_in;
  const int K = g->K;
  if (K > 0) { /* the dry run: where each lane of an input loaded once takes its last term */
    const dual_strbuf keep = g->out;
    memset(&g->out, 0, sizeof g->out);
    memset(g->bp, 0, (size_t)prog->n_instr * (size_t)K);
    for (int64_t i = 0; i < n * K; ++i) g->last[i] = -1, g->early[i] = 0;
    g->dry = 1;
    dual_jitr_emit_sweep(g, s, store_grad, first_load, 0, prog->n_instr);
    g->dry = 0;
    free(dual_strbuf_take(&g->out));
    g->out = keep;
    memset(g->bp, 0, (size_t)prog->n_instr * (size_t)K);
  }
  EMIT("    { /* output %d */\n", s);
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
    if (info->prop == DUAL_PROP_OUT || !dual_jitr_active(prog, DUAL_INSTR_DST(w))) continue;
    EMIT("      double a%" PRId64 " = 0.0", t);
    for (int k = 0; k < K; ++k) EMIT(", b%" PRId64 "_%d = 0.0", t, k);
    EMIT(";\n");
  }
  for (int64_t j = 0; j < n; ++j) {
    EMIT("      double g%" PRId64 " = 0.0", j);
    for (int k = 0; k < K; ++k) EMIT(", h%" PRId64 "_%d = 0.0", j, k);
    EMIT(";\n");
  }
  acc_start(g, K > 0 && g->cslot == NULL); /* forward-over-reverse defers first terms */
  dual_jitr_emit_sweep(g, s, store_grad, first_load, 0, prog->n_instr);
  for (int64_t j = 0; j < n; ++j)
    if (first_load[j] < 0) dual_jitr_emit_input_stores(g, s, store_grad, j, 0);
  acc_end(g);
  EMIT("    }\n");
}

char dual_jitr_adjoint_term(int adj, int i, const char *partial, const char *acc, char *term, size_t cap) {
  if (adj == DUAL_ADJ_LIN) snprintf(term, cap, "DUAL_RTM(%s, %s)", partial, acc);
  else if (adj == DUAL_ADJ_CHOOSE) snprintf(term, cap, "%s != 0.0 ? %s : 0.0", partial, acc);
  else snprintf(term, cap, "%s", acc);
  if (adj == DUAL_ADJ_LIN || adj == DUAL_ADJ_CHOOSE) return '+';
  return adj == DUAL_ADJ_ADD || (adj == DUAL_ADJ_SUB && i == 0) ? '+' : '-';
}

/* Term emitters of the adjoint sweep (with g->dry they only record presence): direction k's g'
 * of definition x takes, from instruction t's adjoint, its present terms — `b` (the result's g'
 * through partial i, or as it is for CHOOSE/ADD/SUB) and for LIN `e` (d' times the result's g). */
static void lane_term(genr *g, int64_t t, int i, int64_t x, int k, int adj, const char *sign) {
  const int K = g->K;
  const int pb = g->bp[t * K + k], pe = adj == DUAL_ADJ_LIN && g->ep[(t * 3 + i) * K + k];
  if (!pb && !pe) return;
  g->bp[x * K + k] = 1;
  if (g->dry && g->lone[x] >= 0) g->last[g->lone[x] * K + k] = t;
  if (g->dry) return;
  char bt[DEFER_CAP + 64], at[DEFER_CAP + 64], term[3 * DEFER_CAP + 256];
  acc_copy(g, acc_def(g, t, k), bt, sizeof bt);
  acc_copy(g, acc_def(g, t, -1), at, sizeof at);
  char op = '+';
  if (adj == DUAL_ADJ_LIN) {
    char pbs[DEFER_CAP + 128] = "", pes[DEFER_CAP + 128] = "";
    if (pb) snprintf(pbs, sizeof pbs, "DUAL_RTM(d%" PRId64 "_%d, %s)", t, i, bt);
    if (pe) snprintf(pes, sizeof pes, "DUAL_RTT(e%" PRId64 "_%d_%d, %s)", t, i, k, at);
    snprintf(term, sizeof term, "%s%s%s", pbs, pb && pe ? " + " : "", pes);
  } else if (adj == DUAL_ADJ_CHOOSE) {
    snprintf(term, sizeof term, "d%" PRId64 "_%d != 0.0 ? %s : 0.0", t, i, bt);
  } else {
    op = sign[0];
    snprintf(term, sizeof term, "%s", bt);
  }
  acc_add(g, acc_def(g, x, k), op, term);
}

/* After instruction t's adjoint terms: each lane of an input loaded once whose last present term
 * that was takes its load's g' and is stored now. */
static void early_stores(genr *g, int s, int64_t t, const int64_t *da, int arity) {
  const int K = g->K;
  for (int i = 0; !g->dry && i < arity; ++i) {
    const int64_t x = da[i];
    if (x < 0 || g->lone[x] < 0) continue;
    const int64_t j = g->lone[x];
    for (int k = 0; k < K; ++k) {
      if (g->last[j * K + k] != t || g->early[j * K + k]) continue;
      g->early[j * K + k] = 1;
      char bx[DEFER_CAP + 64];
      acc_copy(g, acc_def(g, x, k), bx, sizeof bx);
      acc_add(g, acc_in(g, j, k), '+', bx);
      emit_lane_store(g, s, j, k, 0);
    }
  }
}

/* The adjoint sweep of output s over instructions t1 - 1 down to t0, into the adjoint locals
 * (a<t>, b<t>_<k>) and the inputs' (g<j>, h<j>_<k>); an input's results are stored at its
 * first load, or a lane earlier (early_stores). */
void dual_jitr_emit_sweep(genr *g, int s, int store_grad, const int64_t *first_load, int64_t t0,
                             int64_t t1) {
  const dual_program *prog = g->prog;
  const int K = g->K;
  for (int64_t t = t1 - 1; t >= t0; --t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const dual_op_info *info = &dual_op_table[op];
    const int adj = info->adj;
    const int32_t reg[3] = {DUAL_INSTR_A(w), DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
    const int64_t *da = &g->opnd[3 * t];
    if (adj == DUAL_ADJ_NONE) continue;
    if (adj == DUAL_ADJ_SEED) { /* the unit cotangent of output s, or a VJP's u */
      if (g->dry) continue;
      char u[48];
      snprintf(u, sizeof u, "DUAL_JIT_LDU(%d)", reg[1]);
      if (dual_jitr_active(prog, reg[0]) && g->job->mode == DUAL_MODE_VJP) acc_add(g, acc_def(g, da[0], -1), '+', u);
      else if (dual_jitr_active(prog, reg[0]) && reg[1] == s) acc_add(g, acc_def(g, da[0], -1), '+', "1.0");
      continue;
    }
    if (!dual_jitr_active(prog, DUAL_INSTR_DST(w))) continue;
    if (adj == DUAL_ADJ_GRAD) {
      if (g->dry) continue;
      char r[DEFER_CAP + 64];
      acc_copy(g, acc_def(g, t, -1), r, sizeof r);
      acc_add(g, acc_in(g, reg[0], -1), '+', r);
      for (int k = 0; k < K; ++k)
        if (g->bp[t * K + k] && !g->early[reg[0] * K + k]) { /* (early: stored already) */
          acc_copy(g, acc_def(g, t, k), r, sizeof r);
          acc_add(g, acc_in(g, reg[0], k), '+', r);
        }
      if (first_load[reg[0]] == t) dual_jitr_emit_input_stores(g, s, store_grad, reg[0], 0);
      continue;
    }
    const int first = op == DUAL_OP_SELECT; /* the condition takes no adjoint */
    for (int i = first; i < info->arity; ++i) {
      if (!dual_jitr_active(prog, reg[i])) continue;
      const int64_t x = da[i];
      const char *sign = adj == DUAL_ADJ_ADD || (adj == DUAL_ADJ_SUB && i == 0) ? "+" : "-";
      if (!g->dry) {
        char at[DEFER_CAP + 64], term[DEFER_CAP + 128], d[48];
        acc_copy(g, acc_def(g, t, -1), at, sizeof at);
        snprintf(d, sizeof d, "d%" PRId64 "_%d%s", t, i, dual_jitr_ix(g));
        const char opc = dual_jitr_adjoint_term(adj, i, d, at, term, sizeof term);
        acc_add(g, acc_def(g, x, -1), opc, term);
      }
      for (int k = 0; k < K; ++k) lane_term(g, t, i, x, k, adj, sign);
    }
    if (K > 0) early_stores(g, s, t, da, info->arity);
  }
}

static void emit_body(genr *g, int pass, const int64_t *first_load);

/* The most directions a pass of the job carries (at least 1, for the allocations). */
static int lanes_max(const dual_job *job) {
  if (first_order(job) || job->mode == DUAL_MODE_HVP) return 1;
  return per_pass(job);
}

static void free_presence(genr *g) {
  free(g->tp), free(g->ep), free(g->bp), free(g->early), free(g->lone), free(g->last), free(g->pairs);
  g->pairs = NULL;
}

/* Whether the pass stores the gradient (Jacobian row) of each sweep: reverse mode always; the
 * interpreters' forward-over-reverse along direction 0 or v. */
static int store_grad(const genr *g) {
  return first_order(g->job) || g->job->mode == DUAL_MODE_HVP || g->k0 == 0;
}

/* Start group `group` of directions: K, k0 and no presence yet. */
static void set_group(genr *g, int group) {
  const dual_program *prog = g->prog;
  const int hvp = g->job->mode == DUAL_MODE_HVP;
  g->K = group_directions(g->job, group);
  g->k0 = hvp || first_order(g->job) ? -1 : group * per_pass(g->job);
  if (g->K > 0) {
    memset(g->tp, 0, (size_t)prog->n_instr * (size_t)g->K);
    memset(g->ep, 0, (size_t)prog->n_instr * 3u * (size_t)g->K);
  }
}

/* The groups of kernel `pass`: [*g0, *g1). */
static void kernel_groups(const dual_job *job, int pass, int *g0, int *g1) {
  const int per = groups_per_kernel(job), all = groups_total(job);
  *g0 = pass * per;
  *g1 = *g0 + per < all ? *g0 + per : all;
}

/* The doubles of a dual_sgrad sample's row: m values, then m rows of n gradient entries (odd:
 * a warp's rows fall in distinct shared-memory banks). */
static int64_t sgrad_row(const dual_program *prog) {
  return (prog->n_out + (int64_t)prog->n_out * prog->n_in) | 1;
}

/* dual_sgrad's kernel around `body` (one sample's sweeps, which leave its row in s2_): a lane
 * per sample of a point's sample block (jit_kernel.h's DUAL_JIT_SAMPLES_BEGIN/END, which fold
 * the warp's rows into each block's means and m2), the fast copy of the body and, when a lane's
 * entry came out NaN or infinite, the warp's rerun through the guarded copy (as
 * dual_jit_stager_kernel_fast's). */
static void emit_sgrad_kernel(genr *g, int pass, const char *body) {
  const dual_program *prog = g->prog;
  const int64_t kp = sgrad_row(prog);
  EMIT("\nstatic __device__ __noinline__ int dual_jit2_guarded_p%d(const dual_jit_args A, int64_t pt, "
       "int64_t sample_, double *const s2_) {\n  int st = 0;\n%s  return st;\n}\n", pass, body);
  EMIT("#undef DUAL_RTM\n#undef DUAL_RTT\n#undef DUAL_JIT2_NOTE\n#define DUAL_RTM DUAL_TF\n"
       "#define DUAL_RTT DUAL_TT_PLAIN\n#define DUAL_JIT2_NOTE(x) nf_ = fma((x), 0.0, nf_);\n");
  EMIT("\nextern \"C\" __global__ void __launch_bounds__(DUAL_JIT_THREADS");
  if (g->min_blocks > 0) EMIT(", %d", g->min_blocks);
  EMIT(") " DUAL_JIT2_KERNEL_NAME "(const dual_jit_args A) {\n"
       "  __shared__ double stage2_[DUAL_JIT_WARPS][32 * %" PRId64 "];\n"
       "  __shared__ int sst2_[DUAL_JIT_WARPS][32];\n"
       "  DUAL_JIT_SAMPLES_BEGIN\n    double *const s2_ = stage2_[warp_] + lane_ * %" PRId64 ";\n"
       "    double nf_ = 0.0;\n    (void)nf_;\n%s"
       "    if (__any_sync(0xffffffffu, nf_ != 0.0)) st = dual_jit2_guarded_p%d(A, pt, sample_, s2_);\n"
       "  DUAL_JIT_SAMPLES_END(%" PRId64 ", %d, %d, %d, %d, %d)\n}\n",
       pass, kp, kp, body, pass, kp, prog->n_out, prog->n_in, g->job->score != 0,
       (4 * (1 + prog->n_in) + 31) / 32, (2 * (1 + prog->n_in) + 31) / 32);
  EMIT("#undef DUAL_RTM\n#undef DUAL_RTT\n#undef DUAL_JIT2_NOTE\n#define DUAL_RTM DUAL_TM\n"
       "#define DUAL_RTT DUAL_TT\n#define DUAL_JIT2_NOTE(x) st |= DUAL_PT_FLAGS(x);\n");
}

/* The kernel of pass `pass`: the warp-tiled loop of jit_kernel.h around the sweeps, whose
 * stores go through the stager; the body is written first, since the staging rows it declares
 * are as long as the body's stores need. */
static void emit_pass(genr *g, int pass, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  int g0, g1;
  kernel_groups(g->job, pass, &g0, &g1);
  dual_jit_stager_reset(&g->stage);
  for (int gr = g0; gr < g1; ++gr) {
    set_group(g, gr);
    for (int s = 0; s < sweeps(g->job); ++s)
      for (int64_t j = 0; j < prog->n_in; ++j) dual_jitr_emit_input_stores(g, s, store_grad(g), j, 1);
  }
  set_group(g, g0);
  const dual_strbuf head = g->out;
  memset(&g->out, 0, sizeof g->out);
  char *funcs = NULL; /* the segments' functions, written before the kernel */
  if (g->cslot != NULL) {
    dual_jitr_emit_segment_functions(g, pass, first_load);
    funcs = dual_strbuf_take(&g->out);
    memset(&g->out, 0, sizeof g->out);
    dual_jitr_emit_segmented_body(g, pass, first_load);
  } else {
    emit_body(g, pass, first_load);
  }
  char *body = dual_strbuf_take(&g->out);
  g->out = head;
  if (body == NULL || (g->cslot != NULL && funcs == NULL)) {
    free(body), free(funcs);
    g->out.failed = 1;
    return;
  }
  if (funcs != NULL) EMIT("%s", funcs);
  if (g->cpu && g->cslot != NULL) { /* (the segmented body opens its own point loops) */
    dual_jitr_emit_cpu_function(g, 0, body);
  } else if (g->cpu) {
    const dual_strbuf whole = g->out;
    memset(&g->out, 0, sizeof g->out);
    EMIT("  DUAL_CPU_SEG_BEGIN\n%s  DUAL_CPU_SEG_END\n", body);
    char *seg = dual_strbuf_take(&g->out);
    g->out = whole;
    dual_jitr_emit_cpu_function(g, 0, seg);
    free(seg);
  } else if (g->sgrad) emit_sgrad_kernel(g, pass, body);
  else if (g->cslot != NULL) dual_jit_stager_kernel(&g->stage, pass, body);
  else dual_jit_stager_kernel_fast(&g->stage, pass, body, g->min_blocks);
  free(body), free(funcs);
}

/* The forward sweep in the current phase, after the point's loads: the values, partials and
 * stored outputs (phases 0 and 1; the loads of inputs and parameters were written first), or a
 * group's seeds, tangents and d' (phase 2). */
static void emit_forward(genr *g, int pass) {
  const dual_program *prog = g->prog;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int prop = dual_op_table[op].prop;
    if (prop == DUAL_PROP_OUT) {
      if (g->phase != 2 && g->sgrad) EMIT("    DUAL_JIT2_SGRAD_VALUE(%d, v%" PRId64 ")\n", DUAL_INSTR_B(w), g->opnd[3 * t]);
      else if (g->cpu) EMIT("    DUAL_CPU_OUT_VALUE(%d, v%" PRId64 ")\n", DUAL_INSTR_B(w), g->opnd[3 * t]);
      else if (g->phase != 2)
        EMIT("    DUAL_JIT_OUT_VALUE(%d, v%" PRId64 ", %d)\n", DUAL_INSTR_B(w), g->opnd[3 * t], pass == 0);
      continue;
    }
    if ((op == DUAL_OP_LDX || op == DUAL_OP_LDP) && g->phase != 2) continue; /* written first */
    if (prop == DUAL_PROP_LOAD)
      dual_jitr_emit_load(g, op, t, (uint32_t)DUAL_INSTR_A(w), dual_jitr_active(prog, DUAL_INSTR_DST(w)));
    else dual_jitr_emit_compute(g, w, t);
  }
}

/* The sweeps of pass `pass` for the thread's point.  A Hessian kernel computes the values and
 * partials once, then for each of its groups of directions the tangents, d' and the adjoint
 * sweeps (each group in its own scope, so its locals die at its end): the groups share the
 * values instead of recomputing them per kernel, and the live set stays a group's. */
static void emit_body(genr *g, int pass, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  const int grouped = g->job->mode == DUAL_MODE_HESSIAN;
  g->phase = grouped;
  if (g->pairs != NULL) memset(g->pairs, 0, (size_t)dual_program_num_draws(prog) / 2 + 1);
  /* the point's loads first, so they are in flight together */
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    if (op == DUAL_OP_LDX || op == DUAL_OP_LDP)
      dual_jitr_emit_load(g, op, t, (uint32_t)DUAL_INSTR_A(w), dual_jitr_active(prog, DUAL_INSTR_DST(w)));
  }
  emit_forward(g, pass);
  int g0 = 0, g1 = 1;
  if (grouped) kernel_groups(g->job, pass, &g0, &g1);
  for (int gr = g0; gr < g1; ++gr) {
    if (grouped) {
      set_group(g, gr);
      g->phase = 2;
      EMIT("    { /* directions %d .. %d */\n", g->k0, g->k0 + g->K - 1);
      emit_forward(g, pass);
    }
    for (int s = 0; s < sweeps(g->job); ++s) emit_adjoint(g, s, store_grad(g), first_load);
    if (grouped) EMIT("    }\n");
  }
  g->phase = 0;
  dual_jit_stager_finish(&g->stage);
}

/* The block of a CPU module: a straight-line one's DUAL_CPU_JIT_BLOCK; a looped one's, the most
 * points (32 down to 4) whose block arrays — gx_ and `names` others — stay within
 * DUAL_CPU_JIT_LOOP_BYTES. */
static int cpu_block(int looped, int64_t gx_len, int64_t names) {
  if (!looped) return DUAL_CPU_JIT_BLOCK;
  int blk = DUAL_CPU_JIT_LOOP_BLOCK;
  while (blk > 4 && (gx_len + names) * blk * 8 > DUAL_CPU_JIT_LOOP_BYTES) blk /= 2;
  return blk;
}

static char *generate(const dual_job *job, int cpu, int min_blocks, int *npass, char *why, int64_t why_cap) {
  if (why_cap > 0) why[0] = '\0';
  *npass = 0;
  if (job->mode != DUAL_MODE_HESSIAN && job->mode != DUAL_MODE_HVP && !first_order(job)) {
    snprintf(why, (size_t)why_cap, "mode %d has no reverse-mode kernel", job->mode);
    return NULL;
  }
  if (cpu && job->samples > 0) { /* (dual_sgrad's samples come to the CPU tier one by one as gradients) */
    snprintf(why, (size_t)why_cap, "the CPU tier has no dual_sgrad kernel of mode %d", job->mode);
    return NULL;
  }
  const dual_program *prog = job->prog;
  const int sgrad = job->samples > 0;
  if (sgrad) { /* pathwise: a gradient of one output; score: the score program's two-row Jacobian */
    const int want = job->score ? DUAL_MODE_JACOBIAN : DUAL_MODE_GRADIENT, m = job->score ? 2 : 1;
    if (job->mode != want || prog->n_out != m) {
      snprintf(why, (size_t)why_cap, "dual_sgrad's %s kernels need mode %d and %d outputs (mode %d, %d outputs)",
               job->score ? "score-function" : "pathwise", want, m, job->mode, prog->n_out);
      return NULL;
    }
    if (prog->n_instr > DUAL_JIT_MAX_REV_INSTR || sgrad_row(prog) * 8 * 128 > 48 * 1024) {
      snprintf(why, (size_t)why_cap,
               "dual_sgrad's reverse-mode kernels hold at most %d instructions and a sample row of "
               "%d doubles (this program: %" PRId64 " instructions, a row of %" PRId64 ")",
               DUAL_JIT_MAX_REV_INSTR, 48 * 1024 / (8 * 128) - 1, prog->n_instr, sgrad_row(prog));
      return NULL;
    }
  }
  /* a long first-order program of one sweep: a looped kernel when it is made of runs
   * (jit_rev_loops.c, decided below), else segments */
  const int longp = first_order(job) && sweeps(job) == 1 &&
                    prog->n_instr > (cpu ? DUAL_CPU_REV_STRAIGHT_MAX : DUAL_JIT_MAX_REV_INSTR);
  const int64_t sums = dual_jit_rev_sums(job);
  if (sums > DUAL_JIT_MAX_REV_TERMS && !longp) {
    snprintf(why, (size_t)why_cap,
             "its %s kernels would hold %" PRId64 " tangent and adjoint terms, "
             "over the compiled tier's rule of %d (the compile would take minutes)",
             first_order(job) ? "reverse-mode" : "forward-over-reverse", sums, DUAL_JIT_MAX_REV_TERMS);
    return NULL;
  }
  genr g0, *g = &g0;
  memset(g, 0, sizeof *g);
  g->prog = prog, g->job = job, g->min_blocks = min_blocks, g->sgrad = sgrad, g->cpu = cpu;
  if (!longp) { /* normal draws in pairs (segments keep one at a time: pairs would cross them) */
    g->pairs = (uint8_t *)malloc((size_t)dual_program_num_draws(prog) / 2 + 1);
    if (g->pairs == NULL) {
      snprintf(why, (size_t)why_cap, "out of memory generating reverse-mode source");
      return NULL;
    }
  }
  g->opnd = (int64_t *)malloc(sizeof(int64_t) * 3 * (size_t)(prog->n_instr > 0 ? prog->n_instr : 1));
  int64_t *def = (int64_t *)malloc(sizeof(int64_t) * (size_t)(prog->n_regs > 0 ? prog->n_regs : 1));
  int64_t *first_load = (int64_t *)malloc(sizeof(int64_t) * (size_t)(prog->n_in > 0 ? prog->n_in : 1));
  const int64_t len = first_order(job) ? 0 : dual_pass2_out_len(job->mode, prog->n_in, job->b->h_layout);
  const size_t ni = (size_t)(prog->n_instr > 0 ? prog->n_instr : 1), nk = (size_t)lanes_max(job);
  const size_t nin = (size_t)(prog->n_in > 0 ? prog->n_in : 1);
  g->tp = (uint8_t *)malloc(ni * nk), g->ep = (uint8_t *)malloc(ni * 3u * nk);
  g->bp = (uint8_t *)malloc(ni * nk), g->early = (uint8_t *)malloc(nin * nk);
  g->lone = (int64_t *)malloc(sizeof(int64_t) * ni);
  g->last = (int64_t *)malloc(sizeof(int64_t) * nin * nk);
  if (g->tp == NULL || g->ep == NULL || g->bp == NULL || g->early == NULL || g->lone == NULL ||
      g->last == NULL) {
    free(g->opnd), free(def), free(first_load), free_presence(g);
    snprintf(why, (size_t)why_cap, "out of memory generating reverse-mode source");
    return NULL;
  }
  if (g->opnd == NULL || def == NULL || first_load == NULL ||
      dual_jit_stager_init(&g->stage, &g->out, prog->n_out, prog->n_in, len) != DUAL_SUCCESS) {
    free(g->opnd), free(def), free(first_load), free_presence(g);
    snprintf(why, (size_t)why_cap, "out of memory generating forward-over-reverse source");
    return NULL;
  }
  for (int32_t j = 0; j < prog->n_in; ++j) first_load[j] = -1;
  for (int32_t r = 0; r < prog->n_regs; ++r) def[r] = -1;
  for (int64_t t = 0; t < prog->n_instr; ++t) { /* operand definitions, then the result's */
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
    const int32_t reg[3] = {DUAL_INSTR_A(w), DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
    const int reads = info->prop == DUAL_PROP_LOAD ? 0 : info->arity;
    for (int i = 0; i < 3; ++i) g->opnd[3 * t + i] = i < reads ? def[reg[i]] : -1;
    if (info->prop != DUAL_PROP_OUT) def[DUAL_INSTR_DST(w)] = t;
    if (DUAL_INSTR_OP(w) == DUAL_OP_LDX && dual_jitr_active(prog, DUAL_INSTR_DST(w)) && first_load[reg[0]] < 0)
      first_load[reg[0]] = t;
  }
  free(def);
  for (int64_t t = 0; t < prog->n_instr; ++t) { /* the active loads of inputs loaded once */
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    g->lone[t] = -1;
    if (DUAL_INSTR_OP(w) != DUAL_OP_LDX || !dual_jitr_active(prog, DUAL_INSTR_DST(w))) continue;
    const int64_t j = DUAL_INSTR_A(w), t0 = first_load[j];
    if (t0 == t) g->lone[t] = j; /* the first load: the input's, unless another comes */
    else g->lone[t0] = -1;
  }
  const int looped = longp && dual_jitr_looped(g), segmented = longp && !looped;
  g->arrays = cpu && looped;
  const int64_t most = segmented ? DUAL_JIT_MAX_REV_SEGMENTED : DUAL_JIT_MAX_REV_INSTR;
  if (first_order(job) && !looped && prog->n_instr > most) {
    free(g->opnd), free(first_load), free(g->mark), free_presence(g);
    dual_jit_stager_free(&g->stage);
    snprintf(why, (size_t)why_cap,
             "its reverse-mode kernel would hold %" PRId64 " instructions, over the compiled "
             "tier's rule of %" PRId64 "%s (the compile would take minutes)", prog->n_instr, most,
             segmented ? " in segments" : " for several sweeps"); /* (here longp is segmented) */
    return NULL;
  }
  const int passes = dual_jit_rev_passes(job);
  const int planned = !segmented || dual_jitr_plan_segments(g, first_load) == DUAL_SUCCESS;
  if (planned && cpu) {
    if (looped) dual_jitr_emit_looped_kernel(g, first_load);
    else emit_pass(g, 0, first_load);
  } else if (planned) {
    EMIT("// dualbatch compiled tier, %s: %" PRId64 " instructions, mode %d, %d passes%s\n"
         "%s%s#include \"jit/jit_kernel2.h\"\n", first_order(job) ? "reverse mode" : "forward-over-reverse",
         prog->n_instr, job->mode, passes,
         segmented ? ", segmented" : looped ? ", looped" : !sgrad ? "" : job->score ? ", dual_sgrad (score function)" : ", dual_sgrad (pathwise)",
         segmented ? "#define DUAL_FN_OUTLINE 1 /* elementary functions called (dual/fn_bits.h) */\n" : "",
         sgrad ? "#define DUAL_JIT_SAMPLE sample_ /* the draws' sample: the sample loop's */\n" : "");
    if (looped) dual_jitr_emit_looped_kernel(g, first_load);
    else
      for (int p = 0; p < passes; ++p) emit_pass(g, p, first_load);
  }
  free(g->opnd), free(first_load);
  free(g->cslot), free(g->aslot), free(g->gslot), free(g->mark);
  free_presence(g);
  dual_jit_stager_free(&g->stage);
  if (planned && cpu) { /* the header, the block from the arrays the function declares */
    char *fn = dual_strbuf_take(&g->out);
    const int64_t names = g->ndecl;
    EMIT("/* dualbatch compiled CPU tier, generator %d, %s: %" PRId64 " instructions, mode %d%s */\n"
         "#define DUAL_CPU_BLK %d\n#define DUAL_CPU_LOADS_FLAGGED 1\n%s#include \"jit/cpu_kernel.h\"\n"
         "const int dual_cpu_block = DUAL_CPU_BLK;\n%s",
         DUAL_JIT_GENERATOR_VERSION, first_order(job) ? "reverse mode" : "forward-over-reverse", prog->n_instr,
         job->mode, looped ? ", looped" : segmented ? ", segmented" : "",
         cpu_block(looped || segmented, looped ? prog->n_in : 0, names),
         /* (a looped module's loop bodies hold its uses once: inlined) */
         !looped && dual_jit_cpu_outline(prog, first_order(job) ? 1 + segmented : 1 + groups_total(job))
             ? DUAL_CPU_OUTLINE_LINE : "", fn != NULL ? fn : "");
    if (fn == NULL) g->out.failed = 1;
    free(fn);
  }
  free(dual_strbuf_take(&g->decls));
  char *src = dual_strbuf_take(&g->out);
  if (!planned || src == NULL) {
    free(src);
    snprintf(why, (size_t)why_cap, "out of memory generating reverse-mode source");
    return NULL;
  }
  *npass = passes;
  return src;
}

char *dual_jit_source_rev(const dual_job *job, int min_blocks, int *npass, char *why, int64_t why_cap) {
  return generate(job, 0, min_blocks, npass, why, why_cap);
}

char *dual_jit_source_rev_cpu(const dual_job *job, char *why, int64_t why_cap) {
  int npass = 0;
  return generate(job, 1, 0, &npass, why, why_cap);
}
