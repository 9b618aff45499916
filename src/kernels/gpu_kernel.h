/*
 * gpu_kernel.h — the interface between the GPU engine's host code (gpu_engine.c, C) and the
 * interpreter kernel (interp_kernel.cu): the kernel's argument block and the launch functions.
 * Plain C, no CUDA types, so it is included on both sides.
 */
#ifndef DUAL_GPU_KERNEL_H
#define DUAL_GPU_KERNEL_H

#include <stdint.h>

#include "engine/pass2.h"
#include "engine/plan.h"
#include "engine/plan2.h"
#include "engine/sgrad_reduce.h" /* DUAL_SGRAD_FIELDS */

#ifdef __cplusplus
extern "C" {
#endif

/* Random draws and dual_sgrad, in every launch's arguments.  Draw k of point pt in sample s is
 * keyed (seed, point0 + pt, s, k) (engine/draws.h).  With samples > 0 (first-order and reverse
 * kernels) each thread runs its point's samples in order: the outputs of a sample go to the
 * thread's spare storage rows from `row` on (a sample row of m + m n, then the DUAL_SGRAD_FIELDS
 * accumulators of 1 + n entries each: engine/sgrad_reduce.h) instead of y and d, are folded
 * there, and after the last
 * sample E f, the gradient means and their standard errors are stored in y, d, h (each may be
 * NULL). */
typedef struct dual_gpu_sgrad {
  uint64_t seed;
  int64_t point0, samples;
  int32_t antithetic, score, n, m, row;
  double *y, *d, *h;
  int64_t y_ps, d_ps, d_cs, h_ps, h_es;
} dual_gpu_sgrad;

/* Spare storage rows per thread that dual_sgrad needs for n inputs and m outputs. */
#define DUAL_GPU_SGRAD_ROWS(n, m) \
  ((int64_t)(m) + (int64_t)(m) * (n) + DUAL_SGRAD_FIELDS * (1 + (int64_t)(n)))

/* dual_sgrad split over sample blocks (the compiled tier, small batches; jit/jit_args.h): item
 * i = pt * parts + k left block k's mean and m2 of entry e at part[(i * entries + e) * 2 + 0, 1]
 * and its flags at pstatus[i]; the combining kernel folds each point's blocks in order
 * (engine/sgrad_reduce.h: dual_sgrad_combine) into y (E f, entry 0), d (the gradient, entries
 * 1 + j) and h (its standard errors), and stores the blocks' ORed flags in status.  Any of y, d,
 * h, status may be NULL. */
typedef struct dual_gpu_sgrad_split {
  int64_t count, parts, entries, units;
  const double *part;
  const int32_t *pstatus;
  double *y, *d, *h;
  int64_t y_ps, d_ps, d_cs, h_ps, h_es;
  int32_t *status;
} dual_gpu_sgrad_split;

/* Launch the combining kernel on `stream` (a cudaError_t value). */
int dual_gpu_sgrad_combine(const dual_gpu_sgrad_split *a, void *stream);

/* The first-order kernel's instances: values only or with tangents, each without or with the
 * random-draw code (the generator's registers would otherwise cost every program spills), and
 * dual_sgrad's sample loop (tangents and draws, one thread per point). */
enum dual_gpu_kind {
  DUAL_GPU_VALUES = 0,
  DUAL_GPU_TANGENTS = 1,
  DUAL_GPU_SGRAD = 2,
  DUAL_GPU_VALUES_DRAWS = 3,
  DUAL_GPU_TANGENTS_DRAWS = 4
};

/* Everything one launch needs; pointers are device pointers.  Array strides are in elements, as
 * in dual_batch.  Each point is run by a group of `group` threads (interp_point.h).  A block's
 * register files — the values of each thread ([n_regs][threads]), then the packed tangents of
 * each point ([n_slots][tstride], tstride >= points per block, padded against bank conflicts) —
 * are in shared memory, or in global `scratch` (slab doubles per block) when they do not fit. */
typedef struct dual_gpu_args {
  const dual_plan_instr *plan; /* [passes][n_instr], passes pass0 .. pass0 + passes - 1 */
  int64_t n_instr, count;
  int32_t kind; /* enum dual_gpu_kind */
  int32_t pass0, passes, width, mode, n_in;
  int32_t n_regs, n_slots, group, tstride;
  const double *x, *p, *v;
  int64_t x_ps, x_es, p_ps, p_es, v_ps, v_es;
  double *y, *d;
  int64_t y_ps, y_es, d_ps, d_rs, d_cs;
  int32_t *status;
  int32_t status_or; /* OR the flags into status (a later group of passes) instead of storing */
  double *scratch;   /* NULL: shared memory */
  int64_t slab;
  dual_gpu_sgrad sg; /* n_regs then counts its spare rows too */
} dual_gpu_args;

/* Launch geometry for a program shape. */
typedef struct dual_gpu_geometry {
  int threads;       /* per block */
  int group;         /* threads per point */
  int tstride;       /* tangent row length (points per block, padded) */
  int64_t slab;      /* doubles of register file per block */
  int blocks_per_sm; /* resident blocks per multiprocessor */
  size_t shared;     /* dynamic shared memory per block, bytes (0: register file in global) */
} dual_gpu_geometry;

/* Choose threads per block and where the register files live for n_regs values per thread and
 * n_slots tangents per point with `group` threads per point (kind: enum dual_gpu_kind), the
 * arrangement with the most resident threads per multiprocessor.  sm_shared_optin = 0 keeps the
 * register files in global memory.  Returns a cudaError_t value (0 = success). */
int dual_gpu_kernel_geometry(int kind, int64_t n_regs, int64_t n_slots, int group,
                             int sm_shared_optin, dual_gpu_geometry *geo);

/* Launch the interpreter on `stream` (a cudaStream_t) with `blocks` blocks.  Returns the
 * cudaError_t of the launch (0 = success). */
int dual_gpu_kernel_launch(const dual_gpu_args *args, const dual_gpu_geometry *geo, int64_t blocks,
                           void *stream);

/* Second order (interp2_kernel.cu): one pass of engine/pass2.h per launch, one thread per point.
 * A block's register file is global `scratch`: the values [n_regs][threads], then the slots
 * (lanes and pairs of engine/plan2.h) [n_slots][threads]. */
typedef struct dual_gpu_args2 {
  const dual_plan_instr *recs; /* [n_instr] */
  const uint32_t *first;       /* [n_instr + 1] */
  const dual_pair_entry *ents;
  const dual_pass2 *pass;
  int64_t n_instr, count;
  int32_t n_regs, n_slots;
  int32_t first_pass; /* store the values and the status (else OR the status in) */
  const double *x, *p, *v;
  int64_t x_ps, x_es, p_ps, p_es, v_ps, v_es;
  double *y, *d, *h;
  int64_t y_ps, y_es, d_ps, d_rs, d_cs, h_ps, h_rs, h_es;
  int32_t *status;
  double *scratch;
  int64_t slab; /* doubles per block */
  dual_gpu_sgrad sg; /* the draws' seed and point0 (no sampling in second order) */
} dual_gpu_args2;

/* Threads per block of the second-order kernel, and how many blocks of it fit on a
 * multiprocessor (a cudaError_t value is returned, 0 = success). */
#define DUAL_GPU2_THREADS 128
int dual_gpu_kernel2_blocks_per_sm(int *blocks);

/* Launch the second-order interpreter with `blocks` blocks of DUAL_GPU2_THREADS on `stream`. */
int dual_gpu_kernel2_launch(const dual_gpu_args2 *args, int64_t blocks, void *stream);

/* Reverse mode (interp_rev_kernel.cu): one thread per point runs the sweeps of
 * engine/interp_rev.h over the bytecode with the auxiliary words and segments of
 * engine/rev_plan.h.  A block's storage is global `scratch`, [row][thread] with the rows of
 * dual_rev_layout (o_*: its offsets).  Forward-over-reverse (`second` = DUAL_MODE_HVP or
 * DUAL_MODE_HESSIAN, 0 for first order) runs a second kernel: per direction (v, or each input's
 * unit vector) one sweep per output, storing g (into d when it is not NULL) and g' into h. */
typedef struct dual_gpu_rev_args {
  const uint32_t *code; /* [n_instr][4] bytecode words */
  const uint32_t *aux;  /* [n_instr] */
  const double *consts;
  const int64_t *seg; /* [nseg + 1] */
  int64_t n_instr, count;
  int32_t nseg, n_regs, n_active, n_in, sweeps; /* sweeps: 1, or m for a Jacobian */
  int32_t vjp;                                  /* cotangents from u (else unit vectors) */
  int32_t second, n_out, h_packed;              /* forward-over-reverse (above) */
  int64_t o_val, o_tan, o_snap, o_tape, o_adj, o_adjd, o_grad, o_gradd, o_scratch;
  const double *x, *p, *u, *v;
  int64_t x_ps, x_es, p_ps, p_es, u_ps, u_es, v_ps, v_es;
  double *y, *d, *h;
  int64_t y_ps, y_es, d_ps, d_rs, d_cs, h_ps, h_rs, h_es;
  int32_t *status;
  double *scratch;
  int64_t slab; /* doubles per block */
  dual_gpu_sgrad sg; /* spare rows from sg.row, after the layout's */
} dual_gpu_rev_args;

#define DUAL_GPU_REV_THREADS 128
/* Resident blocks per multiprocessor of a reverse kernel: kind 0 reverse mode, 1
 * forward-over-reverse, 2 reverse mode with dual_sgrad's sample loop (a cudaError_t value is
 * returned). */
int dual_gpu_kernel_rev_blocks_per_sm(int kind, int *blocks);
/* Launch the reverse kernel of args' kind (second: forward-over-reverse; sg.samples: sgrad) with
 * `blocks` blocks of DUAL_GPU_REV_THREADS on `stream`. */
int dual_gpu_kernel_rev_launch(const dual_gpu_rev_args *args, int64_t blocks, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* DUAL_GPU_KERNEL_H */
