/*
 * jit_stage2.h — how a generated second-order kernel leaves its results (the generator's side;
 * the kernel's side is jit/jit_kernel2.h).  Each value a thread stores goes to a slot of its row
 * in the warp's shared memory, and the entries are written out by aligned chunks of
 * DUAL_JIT_CHUNK consecutive elements of one output's block (Jacobian row or h block), 32 points
 * at once, as soon as the chunk's last entry of the pass is staged: one store instruction then
 * writes whole 32-byte sectors of 8 points instead of 8 bytes of 32 points.  The stager knows
 * every element a pass will store (dual_jit_stager_expect) before the kernel's code is written
 * (dual_jit_stager_put), so it flushes each chunk once, and a value stored at two elements (the
 * mirror of a Hessian entry) is staged once.  A thread's row holds at most DUAL_JIT_STAGE_SLOTS
 * slots: when they are all taken, the open chunks are flushed as far as they are staged.
 * Host code, independent of CUDA.
 */
#ifndef DUAL_JIT_STAGE2_H
#define DUAL_JIT_STAGE2_H

#include <stdint.h>

#include "jit/strbuf.h"

/* The arrays a second-order kernel stores through the stager. */
enum { DUAL_JIT_STAGE_D = 0, DUAL_JIT_STAGE_H = 1 };

/* Elements of a chunk, and the most slots of a thread's row (odd: a warp's rows then fall in
 * distinct shared-memory banks; 4 warps x 32 x 45 doubles = 45 KiB a block, under the 48 KiB
 * of static shared memory a kernel may declare). */
#define DUAL_JIT_CHUNK 4
#define DUAL_JIT_STAGE_SLOTS 45

typedef struct dual_jit_chunk {
  uint8_t want, have;                 /* elements the pass stores, and those staged so far */
  int16_t slot[DUAL_JIT_CHUNK];       /* the slot of each staged element */
  int32_t open_at;                    /* its index in the open list, -1 when closed */
} dual_jit_chunk;

typedef struct dual_jit_stager {
  dual_strbuf *out;
  int64_t m;                /* outputs */
  int64_t nc[2];            /* chunks per output of d and h */
  dual_jit_chunk *chunk;    /* [m * (nc[0] + nc[1])]: d's chunks, then h's */
  int64_t *open;            /* the chunks with staged entries */
  int64_t nopen;
  int refs[DUAL_JIT_STAGE_SLOTS]; /* elements still to flush from each slot (0: free) */
  int peak;                 /* the most slots in use at once in this pass */
  int d_flags_always;       /* d's entries flag the point even when the caller passed no d (the
                               nested interpreters do; forward-over-reverse and reverse mode
                               flag only what they store) */
} dual_jit_stager;

/* A stager writing to `out` for m outputs with nd elements per output in d (n: a gradient row)
 * and nh in h.  DUAL_SUCCESS or DUAL_ERR_NO_MEMORY. */
int dual_jit_stager_init(dual_jit_stager *s, dual_strbuf *out, int64_t m, int64_t nd, int64_t nh);
void dual_jit_stager_free(dual_jit_stager *s);

/* Start a pass: no chunk expected or open, no slot taken. */
void dual_jit_stager_reset(dual_jit_stager *s);

/* The pass will store element e (>= 0) of output b's block of `array`. */
void dual_jit_stager_expect(dual_jit_stager *s, int array, int64_t b, int64_t e);

/* Write the code that stores `value` (an expression) at element e0 of output b's block of
 * `array`, and at e1 too when e1 >= 0: it stages the value (with its flags) and flushes every
 * chunk it completes.  d's entries are staged and flushed only when the caller passed a d. */
void dual_jit_stager_put(dual_jit_stager *s, int array, int64_t b, const char *value, int64_t e0,
                         int64_t e1);

/* Flush whatever is still open (nothing, when every expected element was put). */
void dual_jit_stager_finish(dual_jit_stager *s);

/* The slots per thread row the pass's kernel declares: its peak, odd, at least 1. */
int dual_jit_stager_row(const dual_jit_stager *s);

/* Write kernel `pass` (named as jit_source2.h's DUAL_JIT2_KERNEL_NAME, taking a dual_jit_args)
 * around `body`, the pass's code for the thread's point `pt`: the warps' staging rows as long as
 * the pass needed, the warp-tiled loop of jit_kernel.h (s2_: the thread's row), and the point's
 * status word (the first pass stores it, later ones OR their flags in). */
void dual_jit_stager_kernel(const dual_jit_stager *s, int pass, const char *body);

/* The same kernel around two copies of a body whose products are DUAL_RTM / DUAL_RTT
 * (jit_kernel2.h; the second-order and reverse-mode generators).  The fast copy, inline in the
 * tile loop, takes every product plain (DUAL_TF, DUAL_TT_PLAIN) and notes its staged entries by
 * one FMA into nf_ instead of their flags; a warp where some point's stored entry came out NaN
 * or infinite (nf_ NaN) reruns its tile through the guarded copy, a never-inlined function with
 * the interpreters' products and exact flags, restaging and restoring everything.  Same bits: a
 * plain product differs from its guard only where it is NaN (DUAL_TM: 0 x inf; DUAL_TT: a NaN
 * product with a zero factor), and from there on the fast copy carries NaN — sums and products
 * keep it, and a CHOOSE drops an operand in both copies alike (the partials, from the values,
 * are the same) — so every quantity of the fast copy is either the guarded one's or NaN, and a
 * stored NaN sends the warp through the guarded copy.  Where no entry is NaN or infinite the
 * flags the fast copy leaves out are zero.  The guarded copy costs NVRTC time, not registers.
 * min_blocks > 0 asks the compiler for that many resident blocks per multiprocessor. */
void dual_jit_stager_kernel_fast(const dual_jit_stager *s, int pass, const char *body, int min_blocks);

#endif /* DUAL_JIT_STAGE2_H */
