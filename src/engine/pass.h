/*
 * pass.h — which derivative columns a forward pass fills, shared by the CPU engine (cpu/engine.c)
 * and the per-point GPU interpreter (kernels/interp_point.h).  Valid C11 and CUDA.
 */
#ifndef DUAL_PASS_H
#define DUAL_PASS_H

#include <stdint.h>

#include "dual/portable.h"
#include "dualbatch.h"

/* Columns of the pass starting at input c0 (width lanes): a JVP fills one, a Jacobian or
 * gradient pass the inputs c0 .. c0 + width - 1 that exist, an evaluation none. */
DUAL_INLINE int dual_pass_columns(int mode, int64_t n_in, int64_t c0, int width) {
  if (mode == DUAL_MODE_JVP) return 1;
  if (mode == DUAL_MODE_JACOBIAN || mode == DUAL_MODE_GRADIENT)
    return (int)(n_in - c0 < width ? n_in - c0 : width);
  return 0;
}

#endif /* DUAL_PASS_H */
