/*
 * jit_rev_gen.h — the reverse-mode generator's state and the emitters its two parts share
 * (internal to src/jit): jit_source_rev.c writes one kernel per pass of straight-line sweeps,
 * jit_rev_segments.c cuts a long first-order sweep into segments.  Host code.
 */
#ifndef DUAL_JIT_REV_GEN_H
#define DUAL_JIT_REV_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "exec.h"
#include "jit/jit_stage2.h"
#include "jit/strbuf.h"

/* The most progressions of input loads a loop keeps one iteration ahead (more load in place). */
#define DUAL_JITR_MAX_PIPE 64

typedef struct genr {
  dual_strbuf out;
  const dual_program *prog;
  const dual_job *job;
  int64_t *opnd; /* [n_instr][3] the definitions an instruction reads (-1: none) */
  int K;         /* directions of the group being written */
  int k0;        /* its first Hessian column (HVP: -1, the direction v) */
  int phase;     /* what the forward sweep's emitters write: 0 everything an instruction has;
                    1 (a Hessian kernel's values) values and partials only; 2 (each group of
                    directions after them) tangents and d' only */
  int min_blocks; /* resident blocks asked of the compiler (0: its choice) */
  dual_jit_stager stage; /* the pass's stores, staged per warp and flushed by chunks */
  /* segmented reverse mode (jit_rev_segments.c; NULL slots otherwise): per instruction its
   * checkpoint and carried-adjoint slots (-1: none), per input its carried-gradient slot; their
   * counts */
  int64_t *cslot, *aslot, *gslot;
  int64_t nc, na, ng;
  int64_t *mark; /* [n_instr] scratch: the listing a value was last named in */
  int64_t tag;   /* the current listing */
  /* structural presence per direction k of the pass (forward-over-reverse; an absent term is a
   * signed zero that changes no bit of any result, engine/interp_rev.h, so it is left out): the
   * tangent of definition t (tp[t*K+k]), d' of its operand i (ep[(t*3+i)*K+k]), the adjoint
   * tangent g' of t in the current sweep (bp[t*K+k]) */
  uint8_t *tp, *ep, *bp;
  /* early stores of an input loaded once (lone[t]: the input of the only active load t, else
   * -1): lane k of input j is final after instruction last[j*K+k]'s adjoint terms (found by a
   * dry run of the sweep, `dry`), and early[j*K+k] says it has been stored */
  int64_t *lone, *last;
  uint8_t *early;
  int dry;
  /* deferred first terms (forward-over-reverse sweeps, jit_source_rev.c's acc_*; pend NULL in
   * a sweep that does not defer): per accumulator (a<t>, b<t>_<k>, then the inputs' g<j>,
   * h<j>_<k>; K + 1 per definition or input) the expression of its value while it has one term
   * and is not yet written (pend, NULL otherwise), and whether its variable holds its value (set) */
  char **pend;
  uint8_t *set;
  /* dual_sgrad's kernels (job->samples > 0): the body inside the sample loop, the sample's
   * values and gradient entries into the thread's row s2_ (m values, then m rows of n entries)
   * instead of the stager, folded after each sample (jit_source.h: dual_jit_emit_sgrad_fold) */
  int sgrad;
  /* normal draws computed in pairs (dual/random.h; NULL: one at a time, as in segments): pair
   * j's z<j>_ declared in the body so far */
  uint8_t *pairs;
  /* looped kernels (jit_rev_loops.c): gradient entries stored directly (DUAL_JIT2_PUT_D), and
   * every input's load accumulating its adjoint in gx_[input] */
  int direct;
  /* first touches of gx_ (NULL: gx_ zeroed at the start): the inputs whose slot has a term so
   * far in the emission (a slot's first term is written 0.0 op term, an untouched slot read as
   * 0.0), and whether a loop touched part of a progression of slots (gx_mixed: written again
   * with gx_ zeroed) */
  uint8_t *gx_seen;
  int gx_mixed;
  /* looped kernels with job->loads_ahead: while a loop's body is written (piping), its loads
   * of inputs base + (k_ + shift) step, and its reads of the gx_ slots of the load positions
   * gx_ahead marks, each progression (base, step, shift, 0 for x or 1 for gx_) once in pipe,
   * read variable lx<q>, which an iteration before loaded (job->loads_ahead before for inputs,
   * one before for gx_ slots) */
  int piping, npipe;
  int64_t pipe[DUAL_JITR_MAX_PIPE][4];
  const uint8_t *gx_ahead;
  /* the CPU target (jit/cpu_kernel.h; first-order reverse mode only): the rules by value, the
   * loads flagged in place, gradient entries stored directly (DUAL_CPU_PUT_D).  A looped module
   * (`arrays`) runs each piece between loops and each loop iteration as an `omp simd` loop over
   * the block's points, so every name that crosses them (every name outside a loop's body) is a
   * block array indexed by the point, in the thread's scratch after gx_ (decls: their pointers),
   * and gx_ holds slot j of point i_ at j * DUAL_CPU_BLK + i_. */
  int cpu, arrays;
  dual_strbuf decls;
  int64_t ndecl; /* the units (DUAL_CPU_BLK doubles) of the block arrays in decls */
} genr;

/* The index a name outside a loop's body takes: "[i_]" in a looped CPU module, else "". */
const char *dual_jitr_ix(const genr *g);

/* Declare name (type: "double" or "const double"), with an initializer when init (the caller
 * writes it and the ";\n"): in a looped CPU module the block array is declared at the head (in
 * the scratch) and here only name[i_] = is written (nothing without init). */
void dual_jitr_declare(genr *g, const char *indent, const char *type, const char *name, int init);

/* A looped CPU module's block array `name` of `units` times DUAL_CPU_BLK doubles in the scratch
 * (a tape: one unit per iteration of its loop). */
void dual_jitr_declare_block(genr *g, const char *name, int64_t units);

/* gx_'s slot `index` (an expression) as the module reads it. */
void dual_jitr_gx(const genr *g, const char *index, char *buf, size_t cap);

/* A value step of op `info` on operands a b c into result `res`, its partials into q<i> names
 * (partials[i] NULL: not kept; the GPU's DUAL_VALUE_STEP, the CPU's DUAL_CPU_STEP by value),
 * inside braces of its own at `indent`. */
void dual_jitr_emit_step(genr *g, const char *indent, int op, const char *a, const char *b, const char *c,
                         const char *res, const char *const partials[3]);


/* The CPU target's pass function dual_cpu_p0 (jit/cpu_kernel.h) around `body` (NULL: the
 * generation fails), whose pieces open and close their point loops (DUAL_CPU_SEG_BEGIN/END):
 * the block arrays in its scratch (gx_ of gx_len slots, then g->decls; the module's
 * dual_cpu_scratch says how many bytes), every point's status zeroed before and stored after. */
void dual_jitr_emit_cpu_function(genr *g, int64_t gx_len, const char *body);

/* Whether register r is active (carries derivatives). */
int dual_jitr_active(const dual_program *prog, int32_t r);

/* Load instruction t (op LDX, LDP, LDK or a draw) into v<t> (and, when active, its tangents). */
void dual_jitr_emit_load(genr *g, int op, int64_t t, uint32_t a, int active);

/* Computing instruction t (words w): its value, taped partials and tangents. */
void dual_jitr_emit_compute(genr *g, const uint32_t *w, int64_t t);

/* Input j's results of output s through the stager (with `expect`: only announce them). */
void dual_jitr_emit_input_stores(genr *g, int s, int store_grad, int64_t j, int expect);

/* Operand i's first-order adjoint term of an op with adjoint rule adj (LIN: the guarded product
 * of its partial and the result's adjoint acc; CHOOSE: acc where the partial is nonzero; ADD,
 * SUB, NEG: acc) into term; returns the sign it is added with. */
char dual_jitr_adjoint_term(int adj, int i, const char *partial, const char *acc, char *term, size_t cap);

/* The adjoint sweep of output s over instructions t1 - 1 down to t0. */
void dual_jitr_emit_sweep(genr *g, int s, int store_grad, const int64_t *first_load, int64_t t0,
                          int64_t t1);

/* Segmented first-order modules (jit_rev_segments.c): the slots of the values and inputs that
 * cross a cut (DUAL_SUCCESS or DUAL_ERR_NO_MEMORY; the caller frees g's slot arrays), the
 * segments' functions, and the kernel's body that calls them. */
int dual_jitr_plan_segments(genr *g, const int64_t *first_load);
void dual_jitr_emit_segment_functions(genr *g, int pass, const int64_t *first_load);
void dual_jitr_emit_segmented_body(genr *g, int pass, const int64_t *first_load);

/* Looped first-order modules (jit_rev_loops.c): whether the job's program takes one (a gradient
 * or Jacobian of one output or a VJP, mostly periodic runs, each input loaded once, every value a run needs backward
 * computable again), and its kernel. */
int dual_jitr_looped(genr *g);
void dual_jitr_emit_looped_kernel(genr *g, const int64_t *first_load);

#endif /* DUAL_JIT_REV_GEN_H */
