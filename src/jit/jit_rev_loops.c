/*
 * jit_rev_loops.c — the reverse-mode kernel of a long program made mostly of periodic runs
 * (jit_runs.h: loops the language unrolled), for a gradient or Jacobian of one output or a VJP
 * (one sweep, one row of results): each run is written as a loop again, so the kernel's code and
 * NVRTC's time stay small whatever the trip count.
 *
 * Forward, the straight-line pieces are jit_source_rev.c's, and a run is a loop over its
 * iterations whose carried operands live in variables from one iteration to the next; after the
 * loop, the run's values read later get their names (an input loaded again, or the last
 * iteration's value).  Backward, the straight pieces are jit_source_rev.c's sweep and a run is a
 * loop from its last iteration to its first: the values whose partials the adjoints need are
 * computed again (an operand carried from the iteration before is an input, loaded again, or
 * that iteration's value computed again from its own loads: a neighbour's square the language
 * shared, say — never a running value), then each position's adjoint takes its terms and hands
 * them on, positions in reverse order — to the same iteration's positions, through a carried
 * accumulator to the iteration before, to the definitions before the run, or to an input's.
 * Every adjoint of an input's load is its slot of gx_ (the kernel's array of one per input), so
 * terms from any piece, loop or not, meet in one accumulator; each input is loaded once.  gx_ is
 * not zeroed: the generator tracks which slots have a term so far, writes a slot's first term as
 * 0.0 op term and reads an untouched slot as 0.0 (the same values), and zeroes only what a loop
 * needs zeroed (or all of gx_, when a loop reaches part of a progression of slots already
 * touched).  Every accumulator takes its terms in the interpreters' order with the interpreters'
 * products (DUAL_RTM: the guarded ones), so the bits are theirs.  Gradient entries are stored as
 * they become final (DUAL_JIT2_PUT_D).
 *
 * The CPU target (g->cpu, g->arrays) writes the same code with each straight piece and each
 * iteration of a loop an `omp simd` loop over a block of points (jit/cpu_kernel.h's
 * DUAL_CPU_SEG_BEGIN/END), every name outside a loop's body a block array in the thread's
 * scratch; a choice on k_ reads both sides and keeps one (dual_cpu_sel: gcc 12 vectorizes no
 * masked gather and no ?: between vectors on a scalar condition), loads of the iteration before
 * are clamped to the loop's first; and the costly values and partials the backward loop would
 * compute again are taped by the forward loop instead (tape_plan).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "jit/jit_rev_gen.h"
#include "jit/jit_runs.h"
#include "jit/jit_source.h"  /* DUAL_CPU_JIT_PASS_NAME */
#include "jit/jit_source2.h" /* DUAL_JIT2_KERNEL_NAME */
#include "jit/jit_source_rev.h"

#define EMIT(...) dual_strbuf_printf(&g->out, __VA_ARGS__)

static const uint32_t *words(const dual_program *prog, int64_t t) {
  return prog->code + t * DUAL_INSTR_WORDS;
}

typedef struct loops {
  dual_jit_run *runs;
  int64_t nruns;
  int64_t *run_of; /* [n_instr] the run holding instruction t, -1: straight-line */
  uint8_t *later;  /* [n_instr] read by an instruction outside its run (it needs a name) */
  uint8_t *comp;   /* per run, [period]: computed again backward (run r at comp + r * max P) */
  uint8_t *prev;   /* per run, [period]: the iteration before's values computed again backward
                      (an operand carried from it that is not an input) */
  uint8_t *tape;   /* the CPU's, per run, [period]: TAPE_VALUE and TAPE_PARTIALS of a position the
                      forward loop stores for the backward loop (tape_plan), which reads them
                      instead of computing them again; NULL: none */
  int64_t maxp;
} loops;

/* What a looped CPU module tapes of a position (loops.tape). */
enum { TAPE_VALUE = 1, TAPE_PARTIALS = 2 };

static void loops_free(loops *L) {
  dual_jit_runs_free(L->runs, L->nruns);
  free(L->run_of), free(L->later), free(L->comp), free(L->prev), free(L->tape);
  memset(L, 0, sizeof *L);
}

/* Position j of run r: its instruction in iteration k. */
static int64_t at(const dual_jit_run *run, int64_t k, int64_t j) { return run->t0 + k * run->period + j; }

/* Whether the looped kernel takes prog: runs over half of it and at most DUAL_JIT_MAX_REV_INSTR
 * straight instructions, at most DUAL_JIT_LOOP_MAX_INPUTS inputs, each loaded once, every value
 * a run needs backward computable again.  Fills L. */
static int plan(const genr *g, loops *L) {
  const dual_program *prog = g->prog;
  memset(L, 0, sizeof *L);
  if (dual_jit_find_runs(prog, DUAL_JIT_RUN_MAX_PERIOD, DUAL_JIT_RUN_MIN_COUNT, &L->runs, &L->nruns) != DUAL_SUCCESS)
    return 0;
  const size_t n = (size_t)prog->n_instr;
  int64_t covered = 0;
  for (int64_t r = 0; r < L->nruns; ++r) {
    covered += L->runs[r].period * L->runs[r].count;
    if (L->runs[r].period > L->maxp) L->maxp = L->runs[r].period;
  }
  L->run_of = (int64_t *)malloc(sizeof(int64_t) * (n + 1));
  L->later = (uint8_t *)calloc(n + 1, 1);
  L->comp = (uint8_t *)calloc((size_t)(L->nruns * L->maxp + 1), 1);
  L->prev = (uint8_t *)calloc((size_t)(L->nruns * L->maxp + 1), 1);
  uint8_t *loaded = (uint8_t *)calloc((size_t)prog->n_in + 1, 1);
  /* the straight pieces are one kernel's straight-line code: jit_source_rev.h's rule for it;
   * gx_ is each thread's local memory */
  int ok = 2 * covered >= prog->n_instr && prog->n_instr - covered <= DUAL_JIT_MAX_REV_INSTR &&
           prog->n_in <= DUAL_JIT_LOOP_MAX_INPUTS &&
           L->run_of && L->later && L->comp && L->prev && loaded;
  for (size_t t = 0; ok && t < n; ++t) L->run_of[t] = -1;
  for (int64_t r = 0; ok && r < L->nruns; ++r)
    for (int64_t t = L->runs[r].t0; t < at(&L->runs[r], L->runs[r].count, 0); ++t) L->run_of[t] = r;
  for (int64_t t = 0; ok && t < prog->n_instr; ++t) {
    const uint32_t *w = words(prog, t);
    if (DUAL_INSTR_OP(w) == DUAL_OP_LDX) { /* each input loaded once */
      ok = !loaded[DUAL_INSTR_A(w)];
      loaded[DUAL_INSTR_A(w)] = 1;
    }
    for (int i = 0; ok && i < 3; ++i) { /* read by name: not as a run's input loaded again */
      const int64_t d = g->opnd[3 * t + i], ru = L->run_of[t];
      if (d < 0 || L->run_of[d] < 0 || L->run_of[d] == ru) continue;
      const dual_jit_run *run = ru >= 0 ? &L->runs[ru] : NULL;
      if (run == NULL || run->kind[3 * ((t - run->t0) % run->period) + i] != DUAL_RUN_LOAD) L->later[d] = 1;
    }
  }
  for (int64_t r = 0; ok && r < L->nruns; ++r) { /* what the backward loop computes again */
    const dual_jit_run *run = &L->runs[r];
    uint8_t *comp = L->comp + r * L->maxp, *prev = L->prev + r * L->maxp;
    for (int64_t j = run->period - 1; j >= 0; --j) {
      const uint32_t *w = words(prog, at(run, 1, j));
      const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
      if (dual_jitr_active(prog, DUAL_INSTR_DST(w)) && (info->adj == DUAL_ADJ_LIN || info->adj == DUAL_ADJ_CHOOSE))
        comp[j] = 1;
      if (!comp[j]) continue;
      for (int i = 0; i < 3; ++i) {
        const int64_t x = 3 * j + i, js = j + run->off[x] + run->period;
        if (run->kind[x] == DUAL_RUN_SAME) comp[j + run->off[x]] = 1;
        if (run->kind[x] == DUAL_RUN_CARRY && DUAL_INSTR_OP(words(prog, run->t0 + js)) != DUAL_OP_LDX) prev[js] = 1;
      }
    }
    /* the iteration before's values: from its own loads and fixed values only (an operand it
     * carries from the one before it must be an input, loaded again) */
    for (int64_t j = run->period - 1; ok && j >= 0; --j) {
      if (!prev[j]) continue;
      for (int i = 0; ok && i < 3; ++i) {
        const int64_t x = 3 * j + i;
        if (run->kind[x] == DUAL_RUN_SAME) prev[j + run->off[x]] = 1;
        if (run->kind[x] == DUAL_RUN_CARRY)
          ok = DUAL_INSTR_OP(words(prog, at(run, 1, j) + run->off[x])) == DUAL_OP_LDX;
      }
    }
    for (int64_t t = run->t0; ok && t < at(run, run->count - 1, 0); ++t) /* (jit_runs.h's promise) */
      ok = !L->later[t] || DUAL_INSTR_OP(words(prog, t)) == DUAL_OP_LDX;
  }
  free(loaded);
  if (!ok) loops_free(L);
  return ok;
}

/* The accumulator of definition d outside the loop being written: an input's load takes its gx_
 * slot, any other definition its a<d>. */
static void acc_of(const genr *g, int64_t d, char *buf, size_t cap) {
  const uint32_t *w = words(g->prog, d);
  char idx[32];
  snprintf(idx, sizeof idx, "%d", DUAL_INSTR_A(w));
  if (DUAL_INSTR_OP(w) == DUAL_OP_LDX) dual_jitr_gx(g, idx, buf, cap);
  else snprintf(buf, cap, "a%" PRId64 "%s", d, dual_jitr_ix(g));
}

/* The store of a gradient entry: straight to d (jit_kernel2.h, or the CPU's jit/cpu_kernel.h). */
static const char *put_d(const genr *g) { return g->cpu ? "DUAL_CPU_PUT_D" : "DUAL_JIT2_PUT_D"; }

/* The index of load position j of run r in iteration `k` (an expression). */
static void load_index(const dual_jit_run *run, const dual_program *prog, int64_t j, const char *k, char *buf, size_t cap) {
  snprintf(buf, cap, "%d + (%s) * %" PRId64, DUAL_INSTR_A(words(prog, run->t0 + j)), k, run->astep[j]);
}

/* While piping, the variable lx<q> of progression (base, step, shift) of x (gx = 0) or of gx_
 * (gx = 1), added if new; 0 when the table is full. */
static int pipe_ref(genr *g, int64_t base, int64_t step, int shift, int gx, char *buf, size_t cap) {
  int q = 0;
  while (q < g->npipe && !(g->pipe[q][0] == base && g->pipe[q][1] == step && g->pipe[q][2] == shift &&
                           g->pipe[q][3] == gx))
    ++q;
  if (q == DUAL_JITR_MAX_PIPE) return 0;
  if (q == g->npipe) g->pipe[q][0] = base, g->pipe[q][1] = step, g->pipe[q][2] = shift, g->pipe[q][3] = gx, ++g->npipe;
  snprintf(buf, cap, "lx%d", q);
  return 1;
}

/* The value of input base + (k_ + shift) step in the loop being written (shift 0, -1, -2): its
 * load there, or while piping its variable lx<q>, loaded by the iteration before. */
static void load_ref(genr *g, int64_t base, int64_t step, int shift, char *buf, size_t cap) {
  if (g->piping && pipe_ref(g, base, step, shift, 0, buf, cap)) return;
  if (shift != 0 && g->cpu) /* (read unconditionally there: clamped to the loop's first) */
    snprintf(buf, cap, "DUAL_JIT_LDX(%" PRId64 " + dual_cpu_back(k_, %d) * %" PRId64 ")", base, -shift, step);
  else if (shift == 0) snprintf(buf, cap, "DUAL_JIT_LDX(%" PRId64 " + (k_) * %" PRId64 ")", base, step);
  else snprintf(buf, cap, "DUAL_JIT_LDX(%" PRId64 " + (k_ - %d) * %" PRId64 ")", base, -shift, step);
}

/* The value operand i of position j of run r (back: in the backward loop, of iteration k_, or
 * with `prev` of iteration k_ - 1, whose values are p<j>). */
static void operand(genr *g, const dual_jit_run *run, int64_t r, int64_t j, int i, int back, int prev,
                    char *buf, size_t cap) {
  const int64_t x = 3 * j + i, js = j + run->off[x] + run->period;
  const char *k = prev ? "k_ - 1" : "k_", *ix = dual_jitr_ix(g);
  char idx[96];
  switch (run->kind[x]) {
  case DUAL_RUN_SAME: snprintf(buf, cap, "%c%" PRId64, prev ? 'p' : 'w', j + run->off[x]); break;
  case DUAL_RUN_CARRY:
    if (!back) snprintf(buf, cap, "c%" PRId64 "_%" PRId64 "%s", r, x, ix);
    else if (DUAL_INSTR_OP(words(g->prog, run->t0 + js)) == DUAL_OP_LDX) { /* an input: loaded again */
      load_ref(g, DUAL_INSTR_A(words(g->prog, run->t0 + js)), run->astep[js], prev ? -2 : -1, idx, sizeof idx);
      if (g->cpu) snprintf(buf, cap, "dual_cpu_sel(%s > 0, %s, v%" PRId64 "%s)", k, idx, run->init[x], ix);
      else snprintf(buf, cap, "(%s > 0 ? %s : v%" PRId64 "%s)", k, idx, run->init[x], ix);
    } else { /* (plan: only from iteration k_) */
      snprintf(buf, cap, "%s(k_ > 0%s p%" PRId64 "%s v%" PRId64 "%s)", g->cpu ? "dual_cpu_sel" : "",
               g->cpu ? "," : " ?", js, g->cpu ? "," : " :", run->init[x], ix);
    }
    break;
  case DUAL_RUN_FIXED: snprintf(buf, cap, "v%" PRId64 "%s", run->off[x], ix); break;
  case DUAL_RUN_LOAD: load_ref(g, run->off[x], run->step[x], prev ? -1 : 0, buf, cap); break;
  default: snprintf(buf, cap, "0.0"); break;
  }
}

/* What the forward loop of run r tapes of position j (0: nothing). */
static int tape_of(const loops *L, int64_t r, int64_t j) { return L->tape != NULL ? L->tape[r * L->maxp + j] : 0; }

/* The CPU's tape (loops.tape): the positions the backward loop would compute again whose op is
 * costly (ops.def's F_SPECIAL: the elementary functions, division, powers, draws) — their values
 * (and, for an op the adjoint reads partials of, their partials) stored by the forward loop, one
 * block array per quantity and iteration; a multiply or an add is computed again.  grad on the
 * 2-core development machine: the backward ring loop's sine from the tape ran 1.45x as fast.
 * None when the tapes, gx_ and 64 other arrays would not fit DUAL_CPU_JIT_LOOP_BYTES at the
 * smallest block (4 points): a loop of millions of iterations computes again.  0 on allocation
 * failure. */
static int tape_plan(const genr *g, loops *L) {
  const dual_program *prog = g->prog;
  L->tape = (uint8_t *)calloc((size_t)(L->nruns * L->maxp + 1), 1);
  if (L->tape == NULL) return 0;
  int64_t units = 0;
  for (int64_t r = 0; r < L->nruns; ++r) {
    const dual_jit_run *run = &L->runs[r];
    for (int64_t j = 0; j < run->period; ++j) {
      const uint32_t *w = words(prog, at(run, 1, j));
      const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
      const int comp = L->comp[r * L->maxp + j], prev = L->prev[r * L->maxp + j];
      if (!(info->flags & F_SPECIAL) || (!comp && !prev)) continue;
      int t = TAPE_VALUE, q = 0;
      if (comp && dual_jitr_active(prog, DUAL_INSTR_DST(w)) && (info->adj == DUAL_ADJ_LIN || info->adj == DUAL_ADJ_CHOOSE))
        t |= TAPE_PARTIALS, q = info->arity;
      L->tape[r * L->maxp + j] = (uint8_t)t;
      units += run->count * (1 + q);
    }
  }
  if ((units + prog->n_in + 64) * 4 * 8 > DUAL_CPU_JIT_LOOP_BYTES) memset(L->tape, 0, (size_t)(L->nruns * L->maxp + 1));
  return 1;
}

/* Declare run r's tapes (dual_jitr_declare_block: one unit per iteration). */
static void declare_tapes(genr *g, const loops *L, int64_t r) {
  const dual_jit_run *run = &L->runs[r];
  for (int64_t j = 0; j < run->period; ++j) {
    const int t = tape_of(L, r, j);
    char name[64];
    if (t & TAPE_VALUE) snprintf(name, sizeof name, "tw%" PRId64 "_%" PRId64, r, j), dual_jitr_declare_block(g, name, run->count);
    const int arity = dual_op_table[DUAL_INSTR_OP(words(g->prog, at(run, 1, j)))].arity;
    for (int i = 0; (t & TAPE_PARTIALS) && i < arity; ++i)
      snprintf(name, sizeof name, "tq%" PRId64 "_%" PRId64 "_%d", r, j, i), dual_jitr_declare_block(g, name, run->count);
  }
}

/* The tape of position j of run r: its value (i < 0) or partial i, in iteration `k` (an
 * expression). */
static void tape_ref(int64_t r, int64_t j, int i, const char *k, char *buf, size_t cap) {
  if (i < 0) snprintf(buf, cap, "tw%" PRId64 "_%" PRId64 "[(%s) * DUAL_CPU_BLK + i_]", r, j, k);
  else snprintf(buf, cap, "tq%" PRId64 "_%" PRId64 "_%d[(%s) * DUAL_CPU_BLK + i_]", r, j, i, k);
}

/* Position j's value (and partials) in the loop's iteration k_: w<j>, q<j>_<i>; with `prev`
 * (backward), its value in iteration k_ - 1 into p<j>, declared before.  tape (a looped CPU
 * module's loops.tape of the position): forward, the value and partials are stored on the tape
 * too; backward, read from it. */
static void emit_position(genr *g, const dual_jit_run *run, int64_t r, int64_t j, int back, int prev, int tape) {
  const dual_program *prog = g->prog;
  const uint32_t *w = words(prog, at(run, 1, j));
  const int op = DUAL_INSTR_OP(w);
  const dual_op_info *info = &dual_op_table[op];
  const char *decl = prev ? "      " : "      const double ", vn = prev ? 'p' : 'w';
  char tref[128];
  if (back && (tape & TAPE_VALUE)) { /* from the tape: no flags (the forward loop raised them) */
    tape_ref(r, j, -1, prev ? "dual_cpu_back(k_, 1)" : "k_", tref, sizeof tref);
    EMIT("%s%c%" PRId64 " = %s;\n", prev ? "      " : "      double ", vn, j, tref);
    for (int i = 0; !prev && (tape & TAPE_PARTIALS) && i < info->arity; ++i) {
      tape_ref(r, j, i, "k_", tref, sizeof tref);
      EMIT("      const double q%" PRId64 "_%d = %s;\n", j, i, tref);
    }
    return;
  }
  char idx[96]; /* (the CPU's iteration before is computed at k_ = 0 too, from clamped loads) */
  load_index(run, prog, j, !prev ? "k_" : g->cpu ? "dual_cpu_back(k_, 1)" : "k_ - 1", idx, sizeof idx);
  switch (op) {
  case DUAL_OP_LDX:
    load_ref(g, DUAL_INSTR_A(words(prog, run->t0 + j)), run->astep[j], prev ? -1 : 0, idx, sizeof idx);
    EMIT("%s%c%" PRId64 " = %s;\n", decl, vn, j, idx);
    return;
  case DUAL_OP_LDP: EMIT("%s%c%" PRId64 " = DUAL_JIT_LDP(%s);\n", decl, vn, j, idx); return;
  case DUAL_OP_LDK:
    EMIT("%s%c%" PRId64 " = ", decl, vn, j);
    dual_strbuf_double(&g->out, prog->consts[DUAL_INSTR_A(w)]);
    EMIT(";\n");
    return;
  case DUAL_OP_RNORM:
  case DUAL_OP_RUNIF:
    EMIT("%s%c%" PRId64 " = DUAL_JIT_DRAW(%d, %s);\n", decl, vn, j, op == DUAL_OP_RNORM, idx);
    if (tape & TAPE_VALUE) tape_ref(r, j, -1, "k_", tref, sizeof tref), EMIT("      %s = w%" PRId64 ";\n", tref, j);
    return;
  default: break;
  }
  char v[3][160];
  for (int i = 0; i < 3; ++i) {
    if (i < info->arity) operand(g, run, r, j, i, back, prev, v[i], sizeof v[i]);
    else snprintf(v[i], sizeof v[i], "0.0");
  }
  const int taped = ((back && !prev) || (tape & TAPE_PARTIALS)) && dual_jitr_active(prog, DUAL_INSTR_DST(w)) &&
                    (info->adj == DUAL_ADJ_LIN || info->adj == DUAL_ADJ_CHOOSE);
  if (!prev) EMIT("      double w%" PRId64 ";\n", j);
  for (int i = 0; taped && i < info->arity; ++i) EMIT("      double q%" PRId64 "_%d;\n", j, i);
  char res[32], qn[3][32];
  const char *part[3] = {NULL, NULL, NULL};
  snprintf(res, sizeof res, "%c%" PRId64, vn, j);
  for (int i = 0; taped && i < info->arity; ++i) snprintf(qn[i], sizeof qn[i], "q%" PRId64 "_%d", j, i), part[i] = qn[i];
  dual_jitr_emit_step(g, "      ", op, v[0], v[1], v[2], res, part);
  if (tape & TAPE_VALUE) tape_ref(r, j, -1, "k_", tref, sizeof tref), EMIT("      %s = w%" PRId64 ";\n", tref, j);
  for (int i = 0; taped && (tape & TAPE_PARTIALS) && i < info->arity; ++i)
    tape_ref(r, j, i, "k_", tref, sizeof tref), EMIT("      %s = q%" PRId64 "_%d;\n", tref, j, i);
}

/* A loop's body is written into a buffer of its own (returns the text so far), its loads of
 * inputs collected when job->loads_ahead asks for them. */
static dual_strbuf body_begin(genr *g) {
  const dual_strbuf outer = g->out;
  memset(&g->out, 0, sizeof g->out);
  g->piping = g->job->loads_ahead > 0 && !g->cpu, g->npipe = 0;
  return outer;
}

/* Then the loop: the collected loads' variables n<tag><r>_<q>_<d> loaded for iterations `first`
 * .. first + D - 1 before it (D = job->loads_ahead for inputs, 1 for gx_ slots), the `head`
 * line, each iteration's lx<q> taken from n.._0 (and flagged there), the others moved down and
 * the load for the iteration D ahead issued (after, or before when `back`; clamped to the loop's,
 * whose inputs the loop loads anyway, so the flags do not change), and the body.  A progression
 * of inputs whose value the next iteration reads through another progression — the same
 * inputs one step along (x[k_ + 1] read again as x[k_] after an iteration forward, x[k_ - 1] as
 * x[k_] backward) — hands its value over instead of loading it again (the same clamped index,
 * so the same value and flags). */
static void body_end(genr *g, dual_strbuf outer, const char *head, int64_t first, int back, int64_t C, int64_t r,
                     char tag) {
  dual_strbuf body = g->out;
  g->out = outer;
  g->out.failed |= body.failed;
  const int64_t dir = back ? -1 : 1;
  int from[DUAL_JITR_MAX_PIPE]; /* the progression whose lx the next iteration's lx<q> is, or -1 */
  for (int q = 0; q < g->npipe; ++q) {
    const int64_t *pq = g->pipe[q];
    from[q] = -1;
    for (int p = 0; p < g->npipe && !pq[3]; ++p) {
      const int64_t *pp = g->pipe[p];
      if (!pp[3] && pp[0] == pq[0] && pp[1] == pq[1] && pp[2] == pq[2] + dir) from[q] = p;
    }
  }
  for (int q = 0; q < g->npipe; ++q) {
    const int64_t *pq = g->pipe[q];
    const int D = pq[3] || from[q] >= 0 ? 1 : g->job->loads_ahead;
    for (int d = 0; d < D; ++d) {
      int64_t k0 = first + dir * d + pq[2];
      k0 = k0 < 0 ? 0 : k0 > C - 1 ? C - 1 : k0;
      EMIT("    double n%c%" PRId64 "_%d_%d = %s%" PRId64 "%s;\n", tag, r, q, d,
           pq[3] ? "gx_[" : "DUAL_JIT_LDX_AHEAD(", pq[0] + k0 * pq[1], pq[3] ? "]" : ")");
    }
  }
  if (g->arrays) EMIT("  DUAL_CPU_SEG_END\n"); /* (the CPU's: the loop's iterations a point loop each) */
  EMIT("%s", head);
  if (g->arrays) EMIT("      DUAL_CPU_SEG_BEGIN\n");
  for (int q = 0; q < g->npipe; ++q) {
    if (g->pipe[q][3]) EMIT("      const double lx%d = n%c%" PRId64 "_%d_0;\n", q, tag, r, q);
    else EMIT("      const double lx%d = DUAL_JIT_TAKE(n%c%" PRId64 "_%d_0);\n", q, tag, r, q);
  }
  for (int q = 0; q < g->npipe; ++q) {
    const int64_t *pq = g->pipe[q];
    if (from[q] >= 0) {
      EMIT("      n%c%" PRId64 "_%d_0 = lx%d;\n", tag, r, q, from[q]);
      continue;
    }
    const int D = pq[3] ? 1 : g->job->loads_ahead;
    const int64_t d = dir * D + pq[2];
    for (int e = 0; e + 1 < D; ++e)
      EMIT("      n%c%" PRId64 "_%d_%d = n%c%" PRId64 "_%d_%d;\n", tag, r, q, e, tag, r, q, e + 1);
    EMIT("      n%c%" PRId64 "_%d_%d = %s%" PRId64 " + dual_jit_clamp(k_ %c %" PRId64 ", %" PRId64 ") * %" PRId64
         "%s;\n",
         tag, r, q, D - 1, pq[3] ? "gx_[" : "DUAL_JIT_LDX_AHEAD(", pq[0], d < 0 ? '-' : '+', d < 0 ? -d : d, C - 1,
         pq[1], pq[3] ? "]" : ")");
  }
  if (body.s != NULL) EMIT("%s", body.s);
  if (g->arrays) EMIT("      DUAL_CPU_SEG_END\n");
  free(body.s);
  g->piping = 0, g->npipe = 0;
}

/* The end of a loop body_end wrote (the CPU's: the next piece's point loop begins). */
static void loop_close(genr *g) {
  EMIT("    }\n");
  if (g->arrays) EMIT("  DUAL_CPU_SEG_BEGIN\n");
}

/* The forward loop of run r, then the names of its values read later. */
static void emit_forward_run(genr *g, const loops *L, int64_t r) {
  const dual_program *prog = g->prog;
  const dual_jit_run *run = &L->runs[r];
  const int64_t P = run->period;
  EMIT("    /* run %" PRId64 ": %" PRId64 " iterations of %" PRId64 " instructions from %" PRId64 " */\n",
       r, run->count, P, run->t0);
  const char *ix = dual_jitr_ix(g);
  char name[64];
  declare_tapes(g, L, r);
  for (int64_t x = 0; x < 3 * P; ++x)
    if (run->kind[x] == DUAL_RUN_CARRY) {
      snprintf(name, sizeof name, "c%" PRId64 "_%" PRId64, r, x);
      dual_jitr_declare(g, "    ", "double", name, 1);
      EMIT("v%" PRId64 "%s;\n", run->init[x], ix);
    }
  for (int64_t j = 0; j < P; ++j)
    if (L->later[at(run, run->count - 1, j)] && DUAL_INSTR_OP(words(prog, run->t0 + j)) != DUAL_OP_LDX) {
      snprintf(name, sizeof name, "e%" PRId64 "_%" PRId64, r, j);
      dual_jitr_declare(g, "    ", "double", name, 1);
      EMIT("0.0;\n");
    }
  const dual_strbuf outer = body_begin(g);
  for (int64_t j = 0; j < P; ++j) emit_position(g, run, r, j, 0, 0, tape_of(L, r, j));
  for (int64_t x = 0; x < 3 * P; ++x) /* the carried operands for the next iteration */
    if (run->kind[x] == DUAL_RUN_CARRY)
      EMIT("      c%" PRId64 "_%" PRId64 "%s = w%" PRId64 ";\n", r, x, ix, x / 3 + run->off[x] + P);
  for (int64_t j = 0; j < P; ++j)
    if (L->later[at(run, run->count - 1, j)] && DUAL_INSTR_OP(words(prog, run->t0 + j)) != DUAL_OP_LDX)
      EMIT("      e%" PRId64 "_%" PRId64 "%s = w%" PRId64 ";\n", r, j, ix, j);
  char head[96];
  snprintf(head, sizeof head, "    for (int64_t k_ = 0; k_ < %" PRId64 "; ++k_) {\n", run->count);
  body_end(g, outer, head, 0, 0, run->count, r, 'f');
  loop_close(g);
  for (int64_t t = run->t0; t < at(run, run->count, 0); ++t) {
    if (!L->later[t]) continue;
    const uint32_t *w = words(prog, t);
    snprintf(name, sizeof name, "v%" PRId64, t);
    dual_jitr_declare(g, "    ", "const double", name, 1);
    if (DUAL_INSTR_OP(w) == DUAL_OP_LDX) EMIT("DUAL_JIT_LDX(%d);\n", DUAL_INSTR_A(w));
    else EMIT("e%" PRId64 "_%" PRId64 "%s;\n", r, (t - run->t0) % P, ix);
  }
}

/* Position j's adjoint on entering iteration k_ (or with `prev` k_ - 1; an expression): its
 * input's gx_ slot for a load; for the last iteration's value read later, its a<t>; else +0.0. */
static void incoming(genr *g, const loops *L, const dual_jit_run *run, int64_t j, int prev, int last,
                     int zero, char *buf, size_t cap) {
  const dual_program *prog = g->prog;
  const char *k = !prev ? "k_" : g->cpu ? "dual_cpu_back(k_, 1)" : "k_ - 1"; /* (the CPU's: clamped) */
  char idx[96];
  if (DUAL_INSTR_OP(words(prog, run->t0 + j)) == DUAL_OP_LDX && zero) {
    snprintf(buf, cap, "0.0"); /* (its slots untouched so far: gx_plan) */
  } else if (DUAL_INSTR_OP(words(prog, run->t0 + j)) == DUAL_OP_LDX) {
    if (g->piping && g->gx_ahead != NULL && g->gx_ahead[j] &&
        pipe_ref(g, DUAL_INSTR_A(words(prog, run->t0 + j)), run->astep[j], prev ? -1 : 0, 1, buf, cap))
      return; /* read an iteration ahead (gx_ahead_plan) */
    load_index(run, prog, j, k, idx, sizeof idx);
    dual_jitr_gx(g, idx, buf, cap);
  } else if (L->later[at(run, run->count - 1, j)]) {
    const char *ix = dual_jitr_ix(g);
    if (last) snprintf(buf, cap, "a%" PRId64 "%s", at(run, run->count - 1, j), ix);
    else if (g->cpu) snprintf(buf, cap, "dual_cpu_sel(%s == %" PRId64 ", a%" PRId64 "%s, 0.0)", prev ? "k_ - 1" : "k_",
                              run->count - 1, at(run, run->count - 1, j), ix);
    else snprintf(buf, cap, "(%s == %" PRId64 " ? a%" PRId64 "%s : 0.0)", k, run->count - 1, at(run, run->count - 1, j), ix);
  } else {
    snprintf(buf, cap, "0.0");
  }
}

/* gx_'s first touches around the backward loop of a run (g->gx_seen set): the loop's
 * progressions of slots are each load position's adjoint start (read), each LOAD operand's
 * target, and each fixed or starting operand that is an input's load (one slot, written in
 * several iterations).  Progressions none of whose slots has a term yet: a load position's
 * start reads 0.0 (inc_zero), a LOAD target's terms are assignments of 0.0 op term (assign),
 * a single slot is zeroed before the loop — unless two progressions share a slot, when every
 * untouched progression is zeroed before the loop.  A progression partly touched sets
 * g->gx_mixed (the kernel is then written with gx_ zeroed).  Afterwards all are touched. */
static void gx_plan(genr *g, const dual_jit_run *run, uint8_t *inc_zero, uint8_t *assign) {
  const dual_program *prog = g->prog;
  const int64_t P = run->period, C = run->count;
  int64_t (*pr)[4] = (int64_t(*)[4])malloc(sizeof *pr * (size_t)(4 * P)); /* base, step, count, who */
  int *cnt = (int *)calloc((size_t)prog->n_in + 1, sizeof(int));
  if (pr == NULL || cnt == NULL) {
    free(pr), free(cnt);
    g->out.failed = 1;
    return;
  }
  int64_t np = 0;
  for (int64_t j = 0; j < P; ++j) {
    const uint32_t *w = words(prog, at(run, 1, j));
    if (DUAL_INSTR_OP(w) == DUAL_OP_LDX) {
      pr[np][0] = DUAL_INSTR_A(words(prog, run->t0 + j)), pr[np][1] = run->astep[j], pr[np][2] = C, pr[np++][3] = j;
      continue;
    }
    for (int i = 0; i < dual_op_table[DUAL_INSTR_OP(w)].arity; ++i) {
      const int64_t x = 3 * j + i, d = run->kind[x] == DUAL_RUN_FIXED ? run->off[x]
                                      : run->kind[x] == DUAL_RUN_CARRY ? run->init[x] : -1;
      if (!dual_jitr_active(prog, (int32_t)w[1 + i])) continue;
      if (run->kind[x] == DUAL_RUN_LOAD)
        pr[np][0] = run->off[x], pr[np][1] = run->step[x], pr[np][2] = C, pr[np++][3] = P + x;
      else if (d >= 0 && DUAL_INSTR_OP(words(prog, d)) == DUAL_OP_LDX)
        pr[np][0] = DUAL_INSTR_A(words(prog, d)), pr[np][1] = 0, pr[np][2] = 1, pr[np++][3] = -1;
    }
  }
  int overlap = 0;
  for (int64_t q = 0; q < np; ++q)
    for (int64_t k = 0; k < pr[q][2]; ++k) overlap |= ++cnt[pr[q][0] + k * pr[q][1]] > 1;
  for (int64_t q = 0; q < np; ++q) {
    int64_t seen = 0;
    for (int64_t k = 0; k < pr[q][2]; ++k) seen += g->gx_seen[pr[q][0] + k * pr[q][1]];
    if (seen > 0 && seen < pr[q][2]) g->gx_mixed = 1;
    if (seen > 0) continue;
    const int64_t who = pr[q][3];
    if (!overlap && who >= 0 && who < P) inc_zero[who] = 1;
    else if (!overlap && who >= P) assign[who - P] = 1;
    else {
      char idx[64], ref[128];
      if (pr[q][2] == 1) snprintf(idx, sizeof idx, "%" PRId64, pr[q][0]);
      else snprintf(idx, sizeof idx, "%" PRId64 " + k_ * %" PRId64, pr[q][0], pr[q][1]);
      dual_jitr_gx(g, idx, ref, sizeof ref);
      if (pr[q][2] == 1) EMIT("    %s = 0.0;\n", ref);
      else EMIT("    for (int64_t k_ = 0; k_ < %" PRId64 "; ++k_) %s = 0.0;\n", pr[q][2], ref);
    }
  }
  for (int64_t q = 0; q < np; ++q)
    for (int64_t k = 0; k < pr[q][2]; ++k) g->gx_seen[pr[q][0] + k * pr[q][1]] = 1;
  free(pr), free(cnt);
}

/* Which load positions' gx_ slots the backward loop of run may read an iteration ahead: those
 * no slot of whose progression the loop writes (a LOAD operand's target, a fixed operand's or a
 * carried operand's start that is an input's load), so the value read early is the value the
 * iteration would read.  0 on allocation failure. */
static int gx_ahead_plan(const genr *g, const dual_jit_run *run, uint8_t *ok) {
  const dual_program *prog = g->prog;
  const int64_t P = run->period, C = run->count;
  uint8_t *w = (uint8_t *)calloc((size_t)prog->n_in + 1, 1);
  if (w == NULL) return 0;
  for (int64_t j = 0; j < P; ++j) {
    const uint32_t *wj = words(prog, at(run, 1, j));
    if (DUAL_INSTR_OP(wj) == DUAL_OP_LDX) continue;
    for (int i = 0; i < dual_op_table[DUAL_INSTR_OP(wj)].arity; ++i) {
      const int64_t x = 3 * j + i, d = run->kind[x] == DUAL_RUN_FIXED ? run->off[x]
                                      : run->kind[x] == DUAL_RUN_CARRY ? run->init[x] : -1;
      if (run->kind[x] == DUAL_RUN_LOAD)
        for (int64_t k = 0; k < C; ++k) w[run->off[x] + k * run->step[x]] = 1;
      else if (d >= 0 && DUAL_INSTR_OP(words(prog, d)) == DUAL_OP_LDX) w[DUAL_INSTR_A(words(prog, d))] = 1;
    }
  }
  for (int64_t j = 0; j < P; ++j) {
    const uint32_t *w0 = words(prog, run->t0 + j);
    ok[j] = DUAL_INSTR_OP(w0) == DUAL_OP_LDX;
    for (int64_t k = 0; ok[j] && k < C; ++k) ok[j] = !w[DUAL_INSTR_A(w0) + k * run->astep[j]];
  }
  free(w);
  return 1;
}

/* The backward loop of run r. */
static void emit_backward_run(genr *g, const loops *L, int64_t r) {
  const dual_program *prog = g->prog;
  const dual_jit_run *run = &L->runs[r];
  const int64_t P = run->period;
  const uint8_t *comp = L->comp + r * L->maxp;
  uint8_t *carried = (uint8_t *)calloc((size_t)P, 1); /* positions the next iteration reads */
  uint8_t *inc_zero = (uint8_t *)calloc((size_t)P, 1), *assign = (uint8_t *)calloc((size_t)(3 * P), 1);
  if (carried == NULL || inc_zero == NULL || assign == NULL) {
    free(carried), free(inc_zero), free(assign);
    g->out.failed = 1;
    return;
  }
  for (int64_t x = 0; x < 3 * P; ++x) /* (a passive value's users give it no adjoint) */
    if (run->kind[x] == DUAL_RUN_CARRY &&
        dual_jitr_active(prog, DUAL_INSTR_DST(words(prog, run->t0 + x / 3 + run->off[x] + P))))
      carried[x / 3 + run->off[x] + P] = 1;
  char buf[256], idx[96], name[64];
  const char *ix = dual_jitr_ix(g);
  if (!g->arrays) EMIT("    { /* run %" PRId64 ", backward */\n", r); /* (the CPU's names are the run's own) */
  if (g->gx_seen != NULL) gx_plan(g, run, inc_zero, assign);
  for (int64_t j = 0; j < P; ++j)
    if (carried[j]) {
      if (DUAL_INSTR_OP(words(prog, run->t0 + j)) == DUAL_OP_LDX && !inc_zero[j]) {
        snprintf(idx, sizeof idx, "%" PRId64, (int64_t)DUAL_INSTR_A(words(prog, run->t0 + j)) + (run->count - 1) * run->astep[j]);
        dual_jitr_gx(g, idx, buf, sizeof buf);
      } else {
        incoming(g, L, run, j, 0, 1, inc_zero[j], buf, sizeof buf);
      }
      snprintf(name, sizeof name, "ca%" PRId64 "_%" PRId64, r, j);
      dual_jitr_declare(g, "    ", "double", name, 1);
      EMIT("%s;\n", buf);
    }
  uint8_t *ahead = g->job->loads_ahead > 0 && !g->cpu ? (uint8_t *)calloc((size_t)P, 1) : NULL;
  if (ahead != NULL && !gx_ahead_plan(g, run, ahead)) free(ahead), ahead = NULL;
  const dual_strbuf outer = body_begin(g);
  g->gx_ahead = ahead;
  const uint8_t *prev = L->prev + r * L->maxp;
  int any_prev = 0;
  for (int64_t j = 0; j < P; ++j)
    if (prev[j]) EMIT("      double p%" PRId64 " = 0.0;\n", j), any_prev = 1;
  if (any_prev) { /* the iteration before's values an operand carries (none before iteration 0;
                    the CPU's point loop computes them there too, their flags then dropped) */
    EMIT(g->cpu ? "      {\n      const int st0_ = st;\n" : "      if (k_ > 0) {\n");
    for (int64_t j = 0; j < P; ++j)
      if (prev[j]) emit_position(g, run, r, j, 1, 1, tape_of(L, r, j));
    EMIT(g->cpu ? "      st = st0_ | (st & (0 - (int)(k_ > 0)));\n      }\n" : "      }\n");
  }
  for (int64_t j = 0; j < P; ++j)
    if (comp[j]) emit_position(g, run, r, j, 1, 0, tape_of(L, r, j));
  for (int64_t j = 0; j < P; ++j) {
    if (!dual_jitr_active(prog, DUAL_INSTR_DST(words(prog, at(run, 1, j))))) continue;
    if (carried[j]) snprintf(buf, sizeof buf, "ca%" PRId64 "_%" PRId64 "%s", r, j, ix);
    else incoming(g, L, run, j, 0, 0, inc_zero[j], buf, sizeof buf);
    EMIT("      double aw%" PRId64 " = %s;\n", j, buf);
  }
  for (int64_t j = 0; j < P; ++j)
    if (carried[j]) {
      incoming(g, L, run, j, 1, 0, inc_zero[j], buf, sizeof buf);
      if (g->cpu) EMIT("      ca%" PRId64 "_%" PRId64 "%s = dual_cpu_sel(k_ > 0, %s, 0.0);\n", r, j, ix, buf);
      else EMIT("      ca%" PRId64 "_%" PRId64 "%s = k_ > 0 ? %s : 0.0;\n", r, j, ix, buf);
    }
  for (int64_t j = P - 1; j >= 0; --j) {
    const uint32_t *w = words(prog, at(run, 1, j));
    const int op = DUAL_INSTR_OP(w);
    const dual_op_info *info = &dual_op_table[op];
    const int adj = info->adj;
    if (adj == DUAL_ADJ_NONE || !dual_jitr_active(prog, DUAL_INSTR_DST(w))) continue;
    if (adj == DUAL_ADJ_GRAD) { /* an input's load: its gradient entry is final */
      load_index(run, prog, j, "k_", idx, sizeof idx);
      EMIT("      %s(0, %s, 0.0 + aw%" PRId64 ")\n", put_d(g), idx, j);
      continue;
    }
    const int32_t reg[3] = {DUAL_INSTR_A(w), DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
    for (int i = op == DUAL_OP_SELECT; i < info->arity; ++i) {
      if (!dual_jitr_active(prog, reg[i])) continue;
      const int64_t x = 3 * j + i;
      char term[160], dst[160], q[48], aw[48];
      snprintf(q, sizeof q, "q%" PRId64 "_%d", j, i);
      snprintf(aw, sizeof aw, "aw%" PRId64, j);
      const char opc = dual_jitr_adjoint_term(adj, i, q, aw, term, sizeof term);
      switch (run->kind[x]) {
      case DUAL_RUN_SAME: EMIT("      aw%" PRId64 " %c= %s;\n", j + run->off[x], opc, term); break;
      case DUAL_RUN_CARRY: /* iteration 0's start takes the term only if it is active */
        acc_of(g, run->init[x], dst, sizeof dst);
        if (g->cpu) { /* both written, one changed (a store under a condition would be masked) */
          char ca[64];
          snprintf(ca, sizeof ca, "ca%" PRId64 "_%" PRId64 "%s", r, j + run->off[x] + P, ix);
          EMIT("      %s = dual_cpu_sel(k_ > 0, %s %c (%s), %s);\n", ca, ca, opc, term, ca);
          if (dual_jitr_active(prog, DUAL_INSTR_DST(words(prog, run->init[x]))))
            EMIT("      %s = dual_cpu_sel(k_ > 0, %s, %s %c (%s));\n", dst, dst, dst, opc, term);
          break;
        }
        EMIT("      if (k_ > 0) ca%" PRId64 "_%" PRId64 "%s %c= %s;\n", r, j + run->off[x] + P, ix, opc, term);
        if (dual_jitr_active(prog, DUAL_INSTR_DST(words(prog, run->init[x]))))
          EMIT("      else %s %c= %s;\n", dst, opc, term);
        break;
      case DUAL_RUN_FIXED:
        acc_of(g, run->off[x], dst, sizeof dst);
        EMIT("      %s %c= %s;\n", dst, opc, term);
        break;
      case DUAL_RUN_LOAD: /* (assign: the slot's first term, gx_plan) */
        snprintf(idx, sizeof idx, "%" PRId64 " + k_ * %" PRId64, run->off[x], run->step[x]);
        dual_jitr_gx(g, idx, dst, sizeof dst);
        if (assign[x]) EMIT("      %s = 0.0 %c (%s);\n", dst, opc, term);
        else EMIT("      %s %c= %s;\n", dst, opc, term);
        break;
      default: break;
      }
    }
  }
  char head[96];
  snprintf(head, sizeof head, "    for (int64_t k_ = %" PRId64 "; k_ >= 0; --k_) {\n", run->count - 1);
  body_end(g, outer, head, run->count - 1, 1, run->count, r, 'b');
  g->gx_ahead = NULL;
  free(ahead);
  loop_close(g);
  if (!g->arrays) EMIT("    }\n");
  free(carried), free(inc_zero), free(assign);
}

/* Declare accumulator <c><i> at +0.0. */
static void declare_zero(genr *g, char c, int64_t i) {
  char name[32];
  snprintf(name, sizeof name, "%c%" PRId64, c, i);
  dual_jitr_declare(g, "    ", "double", name, 1);
  EMIT("0.0;\n");
}

/* The backward part of a looped kernel: the accumulators (inputs' loads in gx_, declared
 * before), then the pieces from the last, then the inputs no instruction loads. */
static void emit_backward(genr *g, const loops *Lp, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  const loops L = *Lp;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = words(prog, t);
    const int op = DUAL_INSTR_OP(w);
    if (dual_op_table[op].prop == DUAL_PROP_OUT || op == DUAL_OP_LDX || !dual_jitr_active(prog, DUAL_INSTR_DST(w)))
      continue;
    if (L.run_of[t] < 0 || L.later[t]) declare_zero(g, 'a', t);
  }
  for (int64_t j = 0; j < prog->n_in; ++j)
    if (first_load[j] >= 0 && L.run_of[first_load[j]] < 0) declare_zero(g, 'g', j);
  for (int64_t t = prog->n_instr; t > 0;) {
    const int64_t r = L.run_of[t - 1];
    if (r >= 0) {
      emit_backward_run(g, &L, r);
      t = L.runs[r].t0;
      continue;
    }
    int64_t t0 = t - 1;
    while (t0 > 0 && L.run_of[t0 - 1] < 0) --t0;
    dual_jitr_emit_sweep(g, 0, 1, first_load, t0, t);
    t = t0;
  }
  for (int64_t j = 0; j < prog->n_in; ++j)
    if (first_load[j] < 0) EMIT("    %s(0, %" PRId64 ", 0.0)\n", put_d(g), j);
}

int dual_jitr_looped(genr *g) {
  loops L;
  const int mode = g->job->mode;
  const int one_row = mode == DUAL_MODE_VJP || ((mode == DUAL_MODE_GRADIENT || mode == DUAL_MODE_JACOBIAN) && g->prog->n_out == 1);
  if (!one_row || g->sgrad || g->K != 0) return 0;
  return plan(g, &L) ? (loops_free(&L), 1) : 0;
}

void dual_jitr_emit_looped_kernel(genr *g, const int64_t *first_load) {
  const dual_program *prog = g->prog;
  loops L;
  if (!plan(g, &L)) {
    g->out.failed = 1;
    return;
  }
  if (g->cpu && !tape_plan(g, &L)) {
    loops_free(&L);
    g->out.failed = 1;
    return;
  }
  g->direct = 1;
  const dual_strbuf head = g->out; /* (the CPU's: the function's head is written last) */
  if (g->cpu) {
    memset(&g->out, 0, sizeof g->out);
    EMIT("  DUAL_CPU_SEG_BEGIN\n");
  } else {
    EMIT("\nextern \"C\" __global__ void __launch_bounds__(DUAL_JIT_THREADS) " DUAL_JIT2_KERNEL_NAME
         "(const dual_jit_args A) {\n  DUAL_JIT_TILE_BEGIN\n", 0);
  }
  /* forward: the straight pieces and the loops, in program order */
  for (int64_t t = 0; t < prog->n_instr;) {
    const int64_t r = L.run_of[t];
    if (r >= 0) {
      emit_forward_run(g, &L, r);
      t = at(&L.runs[r], L.runs[r].count, 0);
      continue;
    }
    const uint32_t *w = words(prog, t);
    const int op = DUAL_INSTR_OP(w), prop = dual_op_table[op].prop;
    if (prop == DUAL_PROP_OUT && g->cpu)
      EMIT("    DUAL_CPU_OUT_VALUE(%d, v%" PRId64 "%s)\n", DUAL_INSTR_B(w), g->opnd[3 * t], dual_jitr_ix(g));
    else if (prop == DUAL_PROP_OUT) EMIT("    DUAL_JIT_OUT_VALUE(%d, v%" PRId64 ", 1)\n", DUAL_INSTR_B(w), g->opnd[3 * t]);
    else if (prop == DUAL_PROP_LOAD) dual_jitr_emit_load(g, op, t, (uint32_t)DUAL_INSTR_A(w), dual_jitr_active(prog, DUAL_INSTR_DST(w)));
    else dual_jitr_emit_compute(g, w, t);
    ++t;
  }
  /* backward: once with gx_'s first touches tracked; if a loop touched part of a progression,
   * again with gx_ zeroed (and the CPU's block arrays declared afresh) */
  const dual_strbuf keep = g->out;
  const size_t decls = g->decls.len;
  memset(&g->out, 0, sizeof g->out);
  g->gx_seen = (uint8_t *)calloc((size_t)prog->n_in + 1, 1);
  g->gx_mixed = g->gx_seen == NULL;
  if (g->gx_seen != NULL) emit_backward(g, &L, first_load);
  char *tracked = dual_strbuf_take(&g->out);
  free(g->gx_seen);
  g->gx_seen = NULL;
  g->out = keep;
  if (!g->cpu) EMIT("    double gx_[%d];\n", prog->n_in > 0 ? prog->n_in : 1);
  if (tracked != NULL && !g->gx_mixed) {
    EMIT("%s", tracked);
  } else {
    if (g->decls.s != NULL) g->decls.s[decls] = '\0', g->decls.len = decls;
    if (g->cpu) EMIT("    for (int j_ = 0; j_ < %d; ++j_) gx_[j_ * DUAL_CPU_BLK + i_] = 0.0;\n", prog->n_in);
    else EMIT("    for (int i_ = 0; i_ < %d; ++i_) gx_[i_] = 0.0;\n", prog->n_in);
    emit_backward(g, &L, first_load);
  }
  free(tracked);
  g->direct = 0;
  loops_free(&L);
  if (!g->cpu) {
    EMIT("  DUAL_JIT_TILE_END(1, -1)\n}\n");
    return;
  }
  EMIT("  DUAL_CPU_SEG_END\n");
  char *body = dual_strbuf_take(&g->out);
  g->out = head;
  dual_jitr_emit_cpu_function(g, prog->n_in > 0 ? prog->n_in : 1, body);
  free(body);
}
