/*
 * jit_rev_segments.c — reverse-mode kernels for programs over DUAL_JIT_MAX_REV_INSTR
 * (jit_source_rev.h): the sweep cut into segments of DUAL_JIT_REV_SEGMENT instructions (the CPU's
 * DUAL_CPU_REV_SEGMENT), each a
 * forward and an adjoint __noinline__ function, so NVRTC's time grows with the program instead of
 * its square.  The forward functions run once and checkpoint the values later segments read;
 * the adjoint functions run from the last segment to the first, each computing its values again
 * and carrying the adjoints of values and inputs that cross a cut, so every adjoint takes its
 * terms in the interpreters' order and the bits are theirs.
 *
 * The CPU target (g->cpu) writes the same functions as `omp simd` loops over a block of points
 * (jit/cpu_kernel.h's DUAL_CPU_SEG_BEGIN/END, DUAL_CPU_NOINLINE, so gcc compiles each on its own:
 * its time too grows with the program instead of its square), the checkpoints and carried
 * adjoints (ac_) and gradients block arrays in the thread's scratch (slot s of point i_ at
 * s * DUAL_CPU_BLK + i_), gradient entries straight to d.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "jit/jit_rev_gen.h"
#include "jit/jit_source_rev.h"

#define EMIT(...) dual_strbuf_printf(&g->out, __VA_ARGS__)

/* Segment of instruction t, and the end of segment i. */
static int64_t seg_len(const genr *g) { return g->cpu ? DUAL_CPU_REV_SEGMENT : DUAL_JIT_REV_SEGMENT; }
static int64_t seg_of(const genr *g, int64_t t) { return t / seg_len(g); }
static int64_t seg_end(const genr *g, int64_t i) {
  const int64_t t1 = (i + 1) * seg_len(g);
  return t1 < g->prog->n_instr ? t1 : g->prog->n_instr;
}

static const uint32_t *words(const dual_program *prog, int64_t t) {
  return prog->code + t * DUAL_INSTR_WORDS;
}

/* The carried adjoints' array: ad_ (the CPU's ac_: DUAL_CPU_ARGS names the caller's d ad_). */
#define ADJ(g) ((g)->cpu ? "ac_" : "ad_")

/* Slot s of a module's array (ck_, ad_ or gc_): the thread's (the GPU's) or the point's in the
 * block array (the CPU's). */
static const char *slot(const genr *g, const char *array, int64_t s, char *buf, size_t cap) {
  if (g->cpu) snprintf(buf, cap, "%s[%" PRId64 " * DUAL_CPU_BLK + i_]", array, s);
  else snprintf(buf, cap, "%s[%" PRId64 "]", array, s);
  return buf;
}

/* Whether instruction t defines an active value, and whether it is an active LDX. */
static int active_def(const dual_program *prog, int64_t t) {
  return dual_jitr_active(prog, DUAL_INSTR_DST(words(prog, t)));
}
static int active_load(const dual_program *prog, int64_t t) {
  return DUAL_INSTR_OP(words(prog, t)) == DUAL_OP_LDX && active_def(prog, t);
}

/* The slots of a segmented module (first order, one sweep): a value used in a later segment than
 * its own is checkpointed (cslot) by the forward functions — unless it is a load (an input,
 * parameter, constant or draw), which the later segment loads again — and if it is active its
 * adjoint is carried (aslot) from the later segments' adjoint functions to earlier ones; an
 * input loaded in several segments carries its gradient (gslot). */
int dual_jitr_plan_segments(genr *g, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  const int64_t n = prog->n_instr > 0 ? prog->n_instr : 1, nin = prog->n_in > 0 ? prog->n_in : 1;
  int64_t *last = (int64_t *)malloc(sizeof(int64_t) * (size_t)n); /* a value's last segment */
  g->cslot = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
  g->aslot = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
  g->mark = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
  g->gslot = (int64_t *)malloc(sizeof(int64_t) * (size_t)nin);
  if (last == NULL || g->cslot == NULL || g->aslot == NULL || g->mark == NULL || g->gslot == NULL) {
    free(last);
    return DUAL_ERR_NO_MEMORY;
  }
  for (int64_t t = 0; t < prog->n_instr; ++t) last[t] = seg_of(g, t), g->mark[t] = -1;
  for (int64_t t = 0; t < prog->n_instr; ++t)
    for (int i = 0; i < 3; ++i) {
      const int64_t d = g->opnd[3 * t + i];
      if (d >= 0 && seg_of(g, t) > last[d]) last[d] = seg_of(g, t);
    }
  g->nc = g->na = g->ng = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const int crossing = last[t] > seg_of(g, t);
    const int load = dual_op_table[DUAL_INSTR_OP(words(prog, t))].prop == DUAL_PROP_LOAD;
    g->cslot[t] = crossing && !load ? g->nc++ : -1;
    g->aslot[t] = crossing && active_def(prog, t) ? g->na++ : -1;
  }
  for (int32_t j = 0; j < prog->n_in; ++j) g->gslot[j] = -1;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const int32_t j = DUAL_INSTR_A(words(prog, t));
    if (active_load(prog, t) && g->gslot[j] < 0 && seg_of(g, t) > seg_of(g, first_load[j])) g->gslot[j] = g->ng++;
  }
  free(last);
  return DUAL_SUCCESS;
}

/* The values of earlier segments that segment i reads: from their checkpoints, a load loaded
 * again (`adjoint` 0); or their carried adjoints, declared (`back` 0) or written back. */
static void emit_crossing_in(genr *g, int64_t i, int adjoint, int back) {
  const dual_program *prog = g->prog;
  const int64_t t0 = i * seg_len(g), t1 = seg_end(g, i);
  const int64_t tag = g->tag++; /* names each value once per listing */
  for (int64_t t = t0; t < t1; ++t)
    for (int k = 0; k < 3; ++k) {
      const int64_t d = g->opnd[3 * t + k];
      if (d < 0 || d >= t0 || g->mark[d] == tag) continue;
      g->mark[d] = tag;
      const uint32_t *wd = words(prog, d);
      char ref[64];
      if (!adjoint && g->cslot[d] < 0)
        dual_jitr_emit_load(g, DUAL_INSTR_OP(wd), d, (uint32_t)DUAL_INSTR_A(wd), active_def(prog, d));
      else if (!adjoint) EMIT("    const double v%" PRId64 " = %s;\n", d, slot(g, "ck_", g->cslot[d], ref, sizeof ref));
      else if (g->aslot[d] >= 0 && !back)
        EMIT("    double a%" PRId64 " = %s;\n", d, slot(g, ADJ(g), g->aslot[d], ref, sizeof ref));
      else if (g->aslot[d] >= 0) EMIT("    %s = a%" PRId64 ";\n", slot(g, ADJ(g), g->aslot[d], ref, sizeof ref), d);
    }
}

/* Segment i's instructions: loads and values (the forward function also checkpoints the values
 * later segments read, and stores the outputs' values). */
static void emit_segment_values(genr *g, int64_t i, int forward) {
  const dual_program *prog = g->prog;
  for (int64_t t = i * seg_len(g); t < seg_end(g, i); ++t) {
    const uint32_t *w = words(prog, t);
    const int op = DUAL_INSTR_OP(w), prop = dual_op_table[op].prop;
    if (prop == DUAL_PROP_OUT) {
      if (forward && g->cpu) EMIT("    DUAL_CPU_OUT_VALUE(%d, v%" PRId64 ")\n", DUAL_INSTR_B(w), g->opnd[3 * t]);
      else if (forward) EMIT("    DUAL_JIT_OUT_VALUE(%d, v%" PRId64 ", 1)\n", DUAL_INSTR_B(w), g->opnd[3 * t]);
      continue;
    }
    if (prop == DUAL_PROP_LOAD) dual_jitr_emit_load(g, op, t, (uint32_t)DUAL_INSTR_A(w), active_def(prog, t));
    else dual_jitr_emit_compute(g, w, t);
    char ref[64];
    if (forward && g->cslot[t] >= 0) EMIT("    %s = v%" PRId64 ";\n", slot(g, "ck_", g->cslot[t], ref, sizeof ref), t);
  }
}

/* Whether active LDX t is its input's first active load in [t0, t]. */
static int first_load_from(const dual_program *prog, int64_t t0, int64_t t) {
  const int32_t j = DUAL_INSTR_A(words(prog, t));
  for (int64_t u = t0; u < t; ++u)
    if (active_load(prog, u) && DUAL_INSTR_A(words(prog, u)) == j) return 0;
  return 1;
}

/* Per segment a forward function (values, checkpoints, outputs) and an adjoint function (its
 * values again, then its part of the sweep with the carried adjoints and gradients).  The
 * adjoint functions are written in the order they run (last segment first): their stores go
 * through the stager in that order. */
void dual_jitr_emit_segment_functions(genr *g, int pass, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  const int64_t nseg = seg_of(g, prog->n_instr - 1) + 1;
  char ref[64];
  for (int64_t i = 0; i < nseg; ++i) {
    if (g->cpu)
      EMIT("\nstatic DUAL_CPU_NOINLINE void dual_cpu_p%d_f%" PRId64 "(const dual_jit_args *A, const int64_t p0, "
           "const int64_t nb, int *const st_b_, double *const ck_) {\n  DUAL_CPU_ARGS\n  DUAL_CPU_REV_ARGS\n"
           "  DUAL_CPU_SEG_BEGIN\n", pass, i);
    else
      EMIT("\nstatic __noinline__ __device__ void dual_jit2_p%d_f%" PRId64 "(const dual_jit_args &A, "
           "const int64_t pt, const int live_, int &st, double *const ck_) {\n", pass, i);
    emit_crossing_in(g, i, 0, 0);
    emit_segment_values(g, i, 1);
    EMIT("%s}\n", g->cpu ? "  DUAL_CPU_SEG_END\n" : "");
  }
  for (int64_t i = nseg - 1; i >= 0; --i) {
    const int64_t t0 = i * seg_len(g), t1 = seg_end(g, i);
    if (g->cpu)
      EMIT("\nstatic DUAL_CPU_NOINLINE void dual_cpu_p%d_a%" PRId64 "(const dual_jit_args *A, const int64_t p0, "
           "const int64_t nb, int *const st_b_, const double *const ck_, double *const ac_, double *const gc_) {\n"
           "  DUAL_CPU_ARGS\n  DUAL_CPU_REV_ARGS\n  DUAL_CPU_SEG_BEGIN\n", pass, i);
    else
      EMIT("\nstatic __noinline__ __device__ void dual_jit2_p%d_a%" PRId64 "(const dual_jit_args &A, "
           "const int64_t pt, int &st, const double *const ck_, double *const ad_, double *const gc_, "
           "double *const s2_, double *const sw2_, const int sp_, const int64_t base_, "
           "const int lane_) {\n  DUAL_JIT2_FLUSH_BEGIN\n", pass, i);
    emit_crossing_in(g, i, 0, 0);
    emit_segment_values(g, i, 0);
    for (int64_t t = t0; t < t1; ++t) { /* the adjoints of the segment's own values */
      if (dual_op_table[DUAL_INSTR_OP(words(prog, t))].prop == DUAL_PROP_OUT || !active_def(prog, t)) continue;
      if (g->aslot[t] >= 0) EMIT("    double a%" PRId64 " = %s;\n", t, slot(g, ADJ(g), g->aslot[t], ref, sizeof ref));
      else EMIT("    double a%" PRId64 " = 0.0;\n", t);
    }
    emit_crossing_in(g, i, 1, 0);
    for (int64_t t = t0; t < t1; ++t) { /* the gradients of the inputs it loads, once each */
      if (!active_load(prog, t) || !first_load_from(prog, t0, t)) continue;
      const int32_t j = DUAL_INSTR_A(words(prog, t));
      if (g->gslot[j] >= 0) EMIT("    double g%d = %s;\n", j, slot(g, "gc_", g->gslot[j], ref, sizeof ref));
      else EMIT("    double g%d = 0.0;\n", j);
    }
    dual_jitr_emit_sweep(g, 0, 1, first_load, t0, t1);
    emit_crossing_in(g, i, 1, 1);
    for (int64_t t = t0; t < t1; ++t) { /* gradients not final yet go back to their slots */
      if (!active_load(prog, t) || !first_load_from(prog, t0, t)) continue;
      const int32_t j = DUAL_INSTR_A(words(prog, t));
      if (first_load[j] < t0) EMIT("    %s = g%d;\n", slot(g, "gc_", g->gslot[j], ref, sizeof ref), j);
    }
    EMIT("%s}\n", g->cpu ? "  DUAL_CPU_SEG_END\n" : "");
  }
}

/* The kernel's body of a segmented module: the forward functions in order, then the adjoint
 * functions from the last segment, then the inputs no instruction loads (zeros). */
void dual_jitr_emit_segmented_body(genr *g, int pass, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  const int64_t nseg = seg_of(g, prog->n_instr - 1) + 1;
  if (g->cpu) { /* the arrays in the thread's scratch; the functions over the block */
    dual_jitr_declare_block(g, "ck_", g->nc > 0 ? g->nc : 1);
    dual_jitr_declare_block(g, "ac_", g->na > 0 ? g->na : 1);
    dual_jitr_declare_block(g, "gc_", g->ng > 0 ? g->ng : 1);
    for (int64_t i = 0; i < nseg; ++i) EMIT("  dual_cpu_p%d_f%" PRId64 "(A, p0, nb, st_b_, ck_);\n", pass, i);
    EMIT("  for (int64_t i_ = 0; i_ < %" PRId64 " * DUAL_CPU_BLK; ++i_) ac_[i_] = 0.0;\n", g->na);
    EMIT("  for (int64_t i_ = 0; i_ < %" PRId64 " * DUAL_CPU_BLK; ++i_) gc_[i_] = 0.0;\n", g->ng);
    for (int64_t i = nseg - 1; i >= 0; --i)
      EMIT("  dual_cpu_p%d_a%" PRId64 "(A, p0, nb, st_b_, ck_, ac_, gc_);\n", pass, i);
    int unloaded = 0;
    for (int64_t j = 0; j < prog->n_in; ++j) unloaded += first_load[j] < 0;
    if (unloaded == 0) return;
    EMIT("  DUAL_CPU_SEG_BEGIN\n");
    for (int64_t j = 0; j < prog->n_in; ++j)
      if (first_load[j] < 0) dual_jitr_emit_input_stores(g, 0, 1, j, 0);
    EMIT("  DUAL_CPU_SEG_END\n");
    return;
  }
  EMIT("    double ck_[%" PRId64 "], ad_[%" PRId64 "], gc_[%" PRId64 "];\n", g->nc > 0 ? g->nc : 1,
       g->na > 0 ? g->na : 1, g->ng > 0 ? g->ng : 1);
  for (int64_t i = 0; i < nseg; ++i)
    EMIT("    dual_jit2_p%d_f%" PRId64 "(A, pt, live_, st, ck_);\n", pass, i);
  EMIT("    for (int i_ = 0; i_ < %" PRId64 "; ++i_) ad_[i_] = 0.0;\n", g->na);
  EMIT("    for (int i_ = 0; i_ < %" PRId64 "; ++i_) gc_[i_] = 0.0;\n", g->ng);
  for (int64_t i = nseg - 1; i >= 0; --i)
    EMIT("    dual_jit2_p%d_a%" PRId64 "(A, pt, st, ck_, ad_, gc_, s2_, sw2_, sp_, base_, lane_);\n", pass, i);
  for (int64_t j = 0; j < prog->n_in; ++j)
    if (first_load[j] < 0) dual_jitr_emit_input_stores(g, 0, 1, j, 0);
  dual_jit_stager_finish(&g->stage);
}
