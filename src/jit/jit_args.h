/*
 * jit_args.h — the one argument of every generated kernel (jit/jit_source.c, jit_source2.c), filled
 * by the host (kernels/gpu_jit.c) and read by the kernel (jit/jit_kernel.h).  Plain C with
 * fixed-size fields only, so the host compiler and NVRTC lay it out alike.  Pointers are device
 * pointers; strides are in elements, as in dual_batch.
 */
#ifndef DUAL_JIT_ARGS_H
#define DUAL_JIT_ARGS_H

#include "dual/portable.h" /* stdint.h */

typedef struct dual_jit_args {
  int64_t count; /* points */
  const double *x, *p, *v;
  int64_t x_ps, x_es, p_ps, p_es, v_ps, v_es;
  double *y, *d, *h; /* h: second order (jit/jit_source2.c), the components of each output */
  int64_t y_ps, y_es, d_ps, d_rs, d_cs, h_ps, h_rs, h_es;
  int32_t *status; /* the first pass stores, later passes OR their flags in */
  uint64_t seed;   /* random draws: draw k of point pt is keyed (seed, point0 + pt, sample, k) */
  int64_t point0;
  int64_t sample; /* the CPU tier's modules (dual_sgrad's driver runs one call per sample); the
                   * GPU's sgrad kernels run their samples themselves and key by them */
  int32_t antithetic;
  int32_t sg_lanes; /* dual_sgrad: threads per item of the kernel (sizes the grid; 0: one) */
  const double *u; /* VJP cotangents (reverse mode, jit/jit_source_rev.c) */
  int64_t u_ps, u_es;
  /* dual_sgrad's kernels (dual_jit_source_sgrad): each point's samples 0 .. samples - 1 (draws
   * keyed by the sample) in sg_parts blocks (engine/sgrad_reduce.h): the launch covers count =
   * points x sg_parts items, item i being block i % sg_parts of point i / sg_parts; it stores
   * the block's mean and m2 of entry e (0: f, 1 + j: gradient entry j) at
   * sg_part[(i * sg_entries + e) * 2 + 0, 1] and its flags at status[i], and a combining kernel
   * (kernels/sgrad_combine.cu) folds the blocks in order; the reverse-mode kernels run a
   * thread per sample of the block (jit_kernel.h: DUAL_JIT_SAMPLES_BEGIN) */
  int64_t samples;
  int64_t sg_parts, sg_entries;
  double *sg_part;
} dual_jit_args;

#endif /* DUAL_JIT_ARGS_H */
