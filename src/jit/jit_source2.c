/*
 * jit_source2.c — generates second-order kernels (jit_source2.h).  It walks each pass's plan
 * (engine/plan2.h) in the bytecode's order, as the interpreter of one point does
 * (kernels/interp2_point.h), and keeps for every slot of the plan (a tangent lane or a pair
 * component) the name of the local that holds it now: an instruction's lanes and components get
 * locals of their own (t<t>_<lane>, h<t>_<entry>), and a component the plan lets an in-place
 * ADD/SUB keep (no entry) keeps its operand's local.  So the code is in SSA form and the CUDA
 * compiler allocates the registers.  Products are DUAL_RTM / DUAL_RTT: each pass's kernel runs
 * them plain and reruns a warp with the interpreters' guarded products (DUAL_TM, DUAL_TT) only
 * when a stored entry came out NaN or infinite, with the same bits
 * (dual_jit_stager_kernel_fast, jit_stage2.h).
 */
#include "jit/jit_source2.h"

#include "jit/jit_source.h" /* DUAL_JIT_MAX_LANE_SUMS, dual_jit_lane_sums */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "engine/pass2.h"
#include "engine/plan2.h"
#include "jit/jit_stage2.h"
#include "jit/strbuf.h"

/* What a slot holds now: lane `idx` of instruction `def`'s tangents, or its component of entry
 * `idx` (kind 'h'). */
typedef struct slot_ref {
  int64_t def;
  int32_t idx;
  char kind; /* 't', 'h', or 0: nothing yet */
} slot_ref;

typedef struct gen2 {
  dual_strbuf out;
  const dual_program *prog;
  int64_t *def;   /* [n_regs] the instruction that last defined each register */
  slot_ref *slot; /* [n_slots] */
  int64_t n_slots;
  dual_jit_stager stage; /* the pass's stores, staged per warp and flushed by chunks */
  /* the CPU target (jit/cpu_kernel.h): every stored value takes a slot of the block's stage, and
   * the copy-out after the point loop reads the slots back into the caller's arrays */
  int cpu;
  int32_t nslots;          /* stage slots the pass has taken */
  int32_t *ys;             /* [n_out] each output's value slot (-1: none) */
  int64_t *copy;           /* (array, output, element, slot) per stored element; slot -1: 0.0 */
  int64_t ncopy, capcopy;  /* elements, and room */
  int nomem;               /* a copy entry could not be kept */
} gen2;

#define EMIT(...) dual_strbuf_printf(&g->out, __VA_ARGS__)

/* The name of what slot s holds ("0.0" if nothing: the plan never reads such a slot). */
static void slot_name(const gen2 *g, uint32_t s, char *buf, size_t cap) {
  const slot_ref *r = (int64_t)s < g->n_slots ? &g->slot[s] : NULL;
  if (r == NULL || r->kind == 0) snprintf(buf, cap, "0.0");
  else snprintf(buf, cap, "%c%" PRId64 "_%d", r->kind, r->def, (int)r->idx);
}

/* Slot of lane k of a register whose lanes (mask m) are packed from slot offset o. */
static uint32_t lane_slot(uint32_t o, uint32_t m, int k) {
  uint32_t below = m & ((1u << k) - 1u), c = 0;
  for (; below != 0u; below &= below - 1u) ++c;
  return o + c;
}

static void set_slot(gen2 *g, uint32_t s, int64_t def, int32_t idx, char kind) {
  if ((int64_t)s < g->n_slots) g->slot[s] = (slot_ref){def, idx, kind};
}

/* The operands' tangent in lane k: the local of its slot, or 0.0 where the operand lacks it. */
static void lane_of(const gen2 *g, uint32_t m, uint32_t o, int k, char *buf, size_t cap) {
  if ((m >> k) & 1u) slot_name(g, lane_slot(o, m, k), buf, cap);
  else snprintf(buf, cap, "0.0");
}

static void emit_load(gen2 *g, const dual_pass2 *ps, const dual_plan_instr *q, int op, int64_t t) {
  switch (op) {
  case DUAL_OP_LDX:
    EMIT("    const double v%" PRId64 " = DUAL_JIT_LDX(%u);\n", t, q->a);
    if (g->cpu) EMIT("    DUAL_CPU_TAKEN(v%" PRId64 ")\n", t); /* (the GPU's load flags it) */
    for (uint32_t m = q->ma; m != 0u; m &= m - 1u) {
      const int k = DUAL_CTZ(m);
      EMIT("    const double t%" PRId64 "_%d = ", t, k);
      if (k == ps->vlane) EMIT("DUAL_JIT_LDV(%u);\n", q->a);
      else EMIT("1.0;\n");
      set_slot(g, lane_slot(q->od, q->md, k), t, k, 't');
    }
    break;
  case DUAL_OP_LDP:
    EMIT("    const double v%" PRId64 " = DUAL_JIT_LDP(%u);\n", t, q->a);
    if (g->cpu) EMIT("    DUAL_CPU_TAKEN(v%" PRId64 ")\n", t);
    break;
  case DUAL_OP_LDK:
    EMIT("    const double v%" PRId64 " = ", t);
    dual_strbuf_double(&g->out, g->prog->consts[q->a]);
    EMIT(";\n");
    break;
  default: /* RNORM, RUNIF: sample 0, as the interpreters */
    EMIT("    const double v%" PRId64 " = DUAL_JIT_DRAW(%d, %u);\n", t, op == DUAL_OP_RNORM, q->a);
    break;
  }
}

/* The stores of an OUT (output q->b) that a pass makes, told to the stager before the pass's
 * code is written: this pass's Jacobian columns and its components (and their mirrors). */
static void expect_out(gen2 *g, const dual_pass2 *ps, const dual_plan_instr *q) {
  for (int i = 0; i < ps->ngrad; ++i)
    dual_jit_stager_expect(&g->stage, DUAL_JIT_STAGE_D, q->b, ps->grad_col[i]);
  for (int i = 0; i < ps->npairs; ++i) {
    dual_jit_stager_expect(&g->stage, DUAL_JIT_STAGE_H, q->b, ps->out0[i]);
    if (ps->out1[i] >= 0) dual_jit_stager_expect(&g->stage, DUAL_JIT_STAGE_H, q->b, ps->out1[i]);
  }
}

/* The CPU target's store of `value` at element e0 (and e1 when >= 0) of output b's block of
 * `array`: a slot of the stage and its copy entries (a literal 0.0 takes no slot). */
static void put_cpu(gen2 *g, int array, int64_t b, const char *value, int64_t e0, int64_t e1) {
  int32_t slot = -1;
  if (strcmp(value, "0.0") != 0) {
    slot = g->nslots++;
    EMIT("    DUAL_CPU2_PUT(%d, %s)\n", slot, value);
  }
  for (int i = 0; i < 2; ++i) {
    const int64_t e = i ? e1 : e0;
    if (e < 0) continue;
    if (g->ncopy == g->capcopy) {
      const int64_t cap = g->capcopy ? 2 * g->capcopy : 256;
      int64_t *c = (int64_t *)realloc(g->copy, sizeof(int64_t) * 4 * (size_t)cap);
      if (c == NULL) {
        g->nomem = 1;
        return;
      }
      g->copy = c, g->capcopy = cap;
    }
    int64_t *c = g->copy + 4 * g->ncopy++;
    c[0] = array, c[1] = b, c[2] = e, c[3] = slot;
  }
}

/* The stores of an OUT, through the stager or (CPU) the stage. */
static void put(gen2 *g, int array, int64_t b, const char *value, int64_t e0, int64_t e1) {
  if (g->cpu) put_cpu(g, array, b, value, e0, e1);
  else dual_jit_stager_put(&g->stage, array, b, value, e0, e1);
}

/* An OUT: the value (first pass), this pass's Jacobian columns, its components, through the
 * stager (CPU: the stage). */
static void emit_out(gen2 *g, const dual_pass2 *ps, const dual_plan2 *pl, const dual_plan_instr *q,
                     int64_t t, int first) {
  const int64_t d = g->def[q->a];
  if (first && g->cpu) {
    g->ys[q->b] = g->nslots;
    EMIT("    DUAL_CPU_OUT(1, %d, v%" PRId64 ")\n", g->nslots++, d);
  } else if (first) {
    EMIT("    DUAL_JIT_OUT_VALUE(%u, v%" PRId64 ", 1)\n", q->b, d);
  }
  char name[48];
  for (int i = 0; i < ps->ngrad; ++i) {
    lane_of(g, q->ma, q->oa, ps->grad_lane[i], name, sizeof name);
    put(g, DUAL_JIT_STAGE_D, q->b, name, ps->grad_col[i], -1);
  }
  const uint32_t e0 = pl->first[t], e1 = pl->first[t + 1];
  for (int i = 0; i < ps->npairs; ++i) {
    snprintf(name, sizeof name, "0.0");
    if (e1 > e0 && (pl->ents[e0 + (uint32_t)i].flags & DUAL_PE_HA))
      slot_name(g, pl->ents[e0 + (uint32_t)i].ha, name, sizeof name);
    put(g, DUAL_JIT_STAGE_H, q->b, name, ps->out0[i], ps->out1[i]);
  }
}

/* A computing instruction: value and partials (first and second), lanes, then components. */
static void emit_compute(gen2 *g, const dual_plan2 *pl, const dual_plan_instr *q, int op, int64_t t) {
  const dual_op_info *info = &dual_op_table[op];
  const int64_t da[3] = {g->def[q->a], info->arity > 1 ? g->def[q->b] : -1,
                         info->arity > 2 ? g->def[q->c] : -1};
  char v[3][32];
  for (int i = 0; i < 3; ++i) {
    if (i < info->arity) snprintf(v[i], sizeof v[i], "v%" PRId64, da[i]);
    else snprintf(v[i], sizeof v[i], "0.0");
  }
  const int prop = info->prop;
  const uint32_t md = prop != DUAL_PROP_NONE ? (q->ma | q->mb | q->mc) : 0u;
  const uint32_t e0 = pl->first[t], e1 = pl->first[t + 1];
  EMIT("    double v%" PRId64 ";\n", t);
  for (int k = 0; k < 32; ++k)
    if ((md >> k) & 1u) EMIT("    double t%" PRId64 "_%d;\n", t, k);
  for (uint32_t e = e0; e < e1; ++e) EMIT("    double h%" PRId64 "_%u;\n", t, e - e0);
  if (g->cpu) { /* the rules by value (jit/cpu_kernel.h: nothing in the point loop address-taken) */
    EMIT("    {\n      DUAL_CPU_STEP%s(%s, %#x, %s, %s, %s, v%" PRId64 ")\n", prop != DUAL_PROP_NONE ? "2" : "",
         info->name, (unsigned)info->flags, v[0], v[1], v[2], t);
    if (prop == DUAL_PROP_NONE) EMIT("      const double qaa = 0.0, qab = 0.0, qbb = 0.0;\n");
    EMIT("      (void)qaa, (void)qab, (void)qbb;\n");
  } else {
    EMIT("    {\n      double d_[3], dd_[3];\n");
    EMIT("      DUAL_VALUE_STEP(%s, %#x, %s, %s, %s, v%" PRId64 ", d_, st)\n", info->name,
         (unsigned)info->flags, v[0], v[1], v[2], t);
    if (prop != DUAL_PROP_NONE)
      EMIT("      dual_rule2_%s(%s, %s, %s, v%" PRId64 ", d_, dd_);\n", info->name, v[0], v[1], v[2], t);
    else EMIT("      (void)dd_;\n");
    EMIT("      const double qa = d_[0], qb = d_[1], qc = d_[2], qaa = dd_[0], qab = dd_[1], "
         "qbb = dd_[2];\n      (void)qa, (void)qb, (void)qc, (void)qaa, (void)qab, (void)qbb;\n");
  }
  /* the lanes: tangent_terms.h's formula of the prop class (DUAL_RTM: see the file comment) */
  const uint32_t mk[3] = {q->ma, q->mb, q->mc}, ok[3] = {q->oa, q->ob, q->oc};
  char tn[3][48];
  for (int k = 0; k < 32; ++k) {
    if (!((md >> k) & 1u)) continue;
    int u[3];
    for (int i = 0; i < 3; ++i) {
      u[i] = (mk[i] >> k) & 1u;
      lane_of(g, mk[i], ok[i], k, tn[i], sizeof tn[i]);
    }
    EMIT("      t%" PRId64 "_%d = ", t, k);
    const char *const tnc[3] = {tn[0], tn[1], tn[2]};
    dual_jit_emit_lane(&g->out, prop, "DUAL_RTM", u, tnc);
    EMIT(";\n");
  }
  /* the components: engine/interp2_ops.h's formula per entry, reading the operands' slots as
   * they are before this instruction's results take theirs */
  for (uint32_t e = e0; e < e1; ++e) {
    const dual_pair_entry *E = &pl->ents[e];
    const uint32_t f = E->flags;
    char ha[48], hb[48], hc[48], tak[48], tal[48], tbk[48], tbl[48];
    slot_name(g, E->ha, ha, sizeof ha), slot_name(g, E->hb, hb, sizeof hb);
    slot_name(g, E->hc, hc, sizeof hc);
    slot_name(g, E->ak, tak, sizeof tak), slot_name(g, E->al, tal, sizeof tal);
    slot_name(g, E->bk, tbk, sizeof tbk), slot_name(g, E->bl, tbl, sizeof tbl);
    EMIT("      h%" PRId64 "_%u = ", t, e - e0);
    if (prop == DUAL_PROP_CHOOSE) {
      EMIT("qa != 0.0 ? %s : (qb != 0.0 ? %s : %s);\n", f & DUAL_PE_HA ? ha : "0.0",
           f & DUAL_PE_HB ? hb : "0.0", f & DUAL_PE_HC ? hc : "0.0");
      continue;
    }
    EMIT("-0.0");
    if (f & DUAL_PE_HA) EMIT(" + DUAL_RTM(qa, %s)", ha);
    if (f & DUAL_PE_HB) EMIT(" + DUAL_RTM(qb, %s)", hb);
    if (f & DUAL_PE_HC) EMIT(" + DUAL_RTM(qc, %s)", hc);
    if (f & DUAL_PE_AA) EMIT(" + DUAL_RTM(qaa, DUAL_RTT(%s, %s))", tak, tal);
    if (f & DUAL_PE_BB) EMIT(" + DUAL_RTM(qbb, DUAL_RTT(%s, %s))", tbk, tbl);
    if (f & (DUAL_PE_ABKL | DUAL_PE_ABLK)) {
      EMIT(" + DUAL_RTM(qab, -0.0");
      if (f & DUAL_PE_ABKL) EMIT(" + DUAL_RTT(%s, %s)", tak, tbl);
      if (f & DUAL_PE_ABLK) EMIT(" + DUAL_RTT(%s, %s)", tbk, tal);
      EMIT(")");
    }
    EMIT(";\n");
  }
  EMIT("    }\n");
  /* now the results hold their slots */
  for (int k = 0; k < 32; ++k)
    if ((md >> k) & 1u) set_slot(g, lane_slot(q->od, md, k), t, k, 't');
  for (uint32_t e = e0; e < e1; ++e) set_slot(g, pl->ents[e].hd, t, (int32_t)(e - e0), 'h');
}

/* The CPU target's function of a pass (jit/cpu_kernel.h) around its body: the tables of where
 * the copy-out finds each output's value and stored elements, the guarded copy of the body (the
 * interpreters' products, exact flags: a point whose stored entry came out NaN or infinite is run
 * again through it, as the GPU's warp is, dual_jit_stager_kernel_fast), then the point loop of
 * the fast copy (plain products) and the copy-out. */
static void emit_pass_cpu(gen2 *g, int pass, const char *body) {
  const int m = g->prog->n_out;
  EMIT("\nstatic const int32_t dual_cpu_ys_p%d[%d] = {", pass, m > 0 ? m : 1);
  for (int b = 0; b < (m > 0 ? m : 1); ++b) EMIT("%s%d", b ? ", " : "", b < m ? g->ys[b] : -1);
  EMIT("};\nstatic const int64_t dual_cpu2_cp_p%d[] = {", pass);
  for (int64_t i = 0; i < g->ncopy; ++i) {
    const int64_t *c = g->copy + 4 * i;
    EMIT("%s%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64, i ? (i % 4 ? ", " : ",\n  ") : "", c[0], c[1], c[2], c[3]);
  }
  if (g->ncopy == 0) EMIT("0, 0, 0, -1");
  EMIT("};\n\nstatic int dual_cpu2_guarded_p%d(const dual_jit_args *A, int64_t pt, double *stage_, int64_t i_) {\n"
       "  DUAL_CPU_ARGS\n  int st = 0;\n  unsigned bad_ = 0u;\n  (void)bad_;\n%s  return st;\n}\n", pass, body);
  EMIT("\n#undef DUAL_RTM\n#undef DUAL_RTT\n#undef DUAL_CPU2_NOTE\n#define DUAL_RTM DUAL_TF\n#define DUAL_RTT "
       "DUAL_TT_PLAIN\n#define DUAL_CPU2_NOTE DUAL_CPU2_NOTE_FAST\nvoid " DUAL_CPU_JIT_PASS_NAME DUAL_CPU_JIT_PASS_PARAMS ";\n", pass);
  EMIT("void " DUAL_CPU_JIT_PASS_NAME DUAL_CPU_JIT_PASS_PARAMS " {\n"
       "  (void)scratch;\n  double stage_[%d * DUAL_CPU_BLK];\n  (void)stream;\n  DUAL_CPU_LOOP_BEGIN\n%s  DUAL_CPU_LOOP_END\n",
       pass, g->nslots > 0 ? g->nslots : 1, body);
  EMIT("  for (int64_t i_ = 0; i_ < nb; ++i_) {\n    int st = st_[i_];\n"
       "    if (DUAL_CPU_BAD_POINT(i_)) st = dual_cpu2_guarded_p%d(A, p0 + i_, stage_, i_);\n", pass);
  if (pass == 0) EMIT("    DUAL_CPU_COPY_Y(%d, dual_cpu_ys_p%d)\n", m, pass);
  EMIT("    DUAL_CPU2_COPY(%" PRId64 ", dual_cpu2_cp_p%d)\n    DUAL_CPU_STATUS(i_, st, %d, ~0)\n  }\n}\n"
       "#undef DUAL_RTM\n#undef DUAL_RTT\n#undef DUAL_CPU2_NOTE\n#define DUAL_RTM DUAL_TM\n#define DUAL_RTT DUAL_TT\n"
       "#define DUAL_CPU2_NOTE DUAL_CPU2_NOTE_GUARDED\n", g->ncopy, pass, pass == 0);
}

/* The kernel of a pass: its body is written first (the staging rows the kernel declares are as
 * long as the body's stores need), then wrapped in its fast and guarded copies
 * (dual_jit_stager_kernel_fast; the CPU's: emit_pass_cpu). */
static int emit_pass(gen2 *g, const dual_plan2 *pl, const dual_pass2 *ps, int pass) {
  const dual_program *prog = g->prog;
  for (int64_t s = 0; s < g->n_slots; ++s) g->slot[s].kind = 0;
  for (int32_t r = 0; r < prog->n_regs; ++r) g->def[r] = -1;
  if (g->cpu) {
    g->nslots = 0, g->ncopy = 0;
    for (int b = 0; b < prog->n_out; ++b) g->ys[b] = -1;
  } else {
    dual_jit_stager_reset(&g->stage);
    for (int64_t t = 0; t < prog->n_instr; ++t)
      if (dual_op_table[pl->recs[t].op_dst >> DUAL_DST_BITS].prop == DUAL_PROP_OUT)
        expect_out(g, ps, &pl->recs[t]);
  }
  const dual_strbuf head = g->out;
  memset(&g->out, 0, sizeof g->out);
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const dual_plan_instr *q = &pl->recs[t];
    const int op = (int)(q->op_dst >> DUAL_DST_BITS);
    const uint32_t dst = q->op_dst & ((1u << DUAL_DST_BITS) - 1u);
    const int prop = dual_op_table[op].prop;
    if (prop == DUAL_PROP_OUT) {
      emit_out(g, ps, pl, q, t, pass == 0);
      continue;
    }
    if (prop == DUAL_PROP_LOAD) emit_load(g, ps, q, op, t);
    else emit_compute(g, pl, q, op, t);
    g->def[dst] = t;
  }
  if (!g->cpu) dual_jit_stager_finish(&g->stage);
  char *body = dual_strbuf_take(&g->out);
  g->out = head;
  if (body == NULL || g->nomem) {
    free(body);
    return DUAL_ERR_NO_MEMORY;
  }
  if (g->cpu) emit_pass_cpu(g, pass, body);
  else dual_jit_stager_kernel_fast(&g->stage, pass, body, 0);
  free(body);
  return DUAL_SUCCESS;
}

static char *generate2(const dual_job *job, int cpu, int *npass, char *why, int64_t why_cap) {
  if (why_cap > 0) why[0] = '\0';
  *npass = 0;
  if (job->mode != DUAL_MODE_HESSIAN && job->mode != DUAL_MODE_HVP) {
    snprintf(why, (size_t)why_cap, "mode %d is not second order", job->mode);
    return NULL;
  }
  const dual_program *prog = job->prog;
  const int64_t passes = dual_pass2_count(job);
  if (passes > 4096) {
    snprintf(why, (size_t)why_cap, "%" PRId64 " second-order passes: too many kernels", passes);
    return NULL;
  }
  gen2 g0, *g = &g0;
  memset(g, 0, sizeof *g);
  g->prog = prog;
  g->cpu = cpu;
  dual_plan2 plan;
  dual_pass2 *ps = (dual_pass2 *)malloc(sizeof *ps);
  g->def = (int64_t *)malloc(sizeof(int64_t) * (size_t)(prog->n_regs > 0 ? prog->n_regs : 1));
  g->ys = (int32_t *)malloc(sizeof(int32_t) * (size_t)(prog->n_out > 0 ? prog->n_out : 1));
  const int64_t len = dual_pass2_out_len(job->mode, prog->n_in, job->b->h_layout);
  int st = ps && g->def && g->ys ? dual_jit_stager_init(&g->stage, &g->out, prog->n_out, prog->n_in, len)
                                 : DUAL_ERR_NO_MEMORY;
  const int have_stager = st == DUAL_SUCCESS;
  int32_t most = 1; /* the CPU target: the most stage slots of a pass */
  g->stage.d_flags_always = 1; /* as the nested interpreters flag */
  if (st == DUAL_SUCCESS) st = dual_plan2_init(&plan, prog);
  int64_t sums = 0; /* lane sums and components so far */
  const int have_plan = st == DUAL_SUCCESS;
  if (st == DUAL_SUCCESS && !cpu)
    EMIT("// dualbatch compiled tier, second order: %" PRId64 " instructions, mode %d, width %d, "
         "%" PRId64 " passes\n#include \"jit/jit_kernel2.h\"\n",
         prog->n_instr, job->mode, job->width, passes);
  for (int64_t ip = 0; ip < passes && st == DUAL_SUCCESS; ++ip) {
    dual_pass2_make(job, ip, ps);
    st = dual_plan2_build(&plan, prog, ps);
    if (st != DUAL_SUCCESS) break;
    if (plan.n_slots > g->n_slots) {
      slot_ref *s = (slot_ref *)realloc(g->slot, sizeof(slot_ref) * (size_t)plan.n_slots);
      if (s == NULL) {
        st = DUAL_ERR_NO_MEMORY;
        break;
      }
      g->slot = s, g->n_slots = plan.n_slots;
    }
    /* the compile-time rule (jit_source.h): lane sums and components */
    sums += dual_jit_lane_sums(plan.recs, prog->n_instr) + (int64_t)plan.n_ents;
    if (sums > DUAL_JIT_MAX_LANE_SUMS) {
      st = DUAL_ERR_LIMIT;
      break;
    }
    st = emit_pass(g, &plan, ps, (int)ip);
    if (g->nslots > most) most = g->nslots;
  }
  if (have_plan) dual_plan2_free(&plan);
  if (have_stager) dual_jit_stager_free(&g->stage);
  free(ps);
  free(g->def);
  free(g->slot);
  free(g->ys);
  free(g->copy);
  if (cpu && st == DUAL_SUCCESS) {
    /* the block: as many points as keep the largest pass's stage within
     * DUAL_CPU_JIT_STAGE_BYTES (at least 8); the header, then the passes */
    int blk = DUAL_CPU_JIT_BLOCK;
    while (blk > 8 && (int64_t)most * blk * 8 > DUAL_CPU_JIT_STAGE_BYTES) blk /= 2;
    char *passes_src = dual_strbuf_take(&g->out);
    memset(&g->out, 0, sizeof g->out);
    EMIT("/* dualbatch compiled CPU tier, generator %d, second order: %" PRId64 " instructions, mode %d, "
         "width %d, layout %d, %" PRId64 " passes */\n#define DUAL_CPU_BLK %d\n%s#include \"jit/cpu_kernel.h\"\n"
         "const int dual_cpu_block = DUAL_CPU_BLK;\n%s",
         DUAL_JIT_GENERATOR_VERSION, prog->n_instr, job->mode, job->width, (int)job->b->h_layout, passes, blk,
         dual_jit_cpu_outline(prog, passes) ? DUAL_CPU_OUTLINE_LINE : "", passes_src != NULL ? passes_src : "");
    if (passes_src == NULL) st = DUAL_ERR_NO_MEMORY;
    free(passes_src);
  }
  char *src = dual_strbuf_take(&g->out);
  if (st != DUAL_SUCCESS || src == NULL) {
    free(src);
    if (st == DUAL_ERR_LIMIT)
      snprintf(why, (size_t)why_cap,
               "its kernels would hold over %d tangent-lane sums and pair components, the compiled "
               "tier's rule (the compile would take minutes)", DUAL_JIT_MAX_LANE_SUMS);
    else snprintf(why, (size_t)why_cap, "out of memory generating second-order kernel source");
    return NULL;
  }
  *npass = (int)passes;
  return src;
}

char *dual_jit_source2(const dual_job *job, int *npass, char *why, int64_t why_cap) {
  return generate2(job, 0, npass, why, why_cap);
}

char *dual_jit_source2_cpu(const dual_job *job, int *npass, char *why, int64_t why_cap) {
  return generate2(job, 1, npass, why, why_cap);
}
