/*
 * jit_kernel2.h — what every generated second-order kernel (jit/jit_source2.c) includes beyond
 * the first-order kernels' header: the stores of an OUT's Jacobian column and Hessian
 * components.  One thread per point, stores straight to the caller's layout (coalescing through
 * shared memory, as the first-order kernels do, is still to come).  Compiled by NVRTC only
 * (embedded in the library as text), or as host C++ by the tests.
 */
#ifndef DUAL_JIT_KERNEL2_H
#define DUAL_JIT_KERNEL2_H

#include "jit/jit_kernel.h"

/* Jacobian entry (output b, input column col) of the point, and its flags. */
#define DUAL_JIT2_OUT_D(b, col, t)                                                               \
  {                                                                                              \
    const double t_ = (t);                                                                       \
    st |= DUAL_PT_FLAGS(t_);                                                                     \
    if (A.d != NULL) A.d[pt * A.d_ps + (int64_t)(b) * A.d_rs + (int64_t)(col) * A.d_cs] = t_;   \
  }

/* A component `value` of output b: element e0 of its block of h, and its mirror e1 (-1: none). */
#define DUAL_JIT2_OUT_H(b, e0, e1, value)                                                        \
  {                                                                                              \
    const double h_ = (value);                                                                   \
    double *hs_ = A.h + pt * A.h_ps + (int64_t)(b) * A.h_rs;                                     \
    st |= DUAL_PT_FLAGS(h_);                                                                     \
    hs_[(int64_t)(e0) * A.h_es] = h_;                                                            \
    if ((e1) >= 0) hs_[(int64_t)(e1) * A.h_es] = h_;                                             \
  }

#endif /* DUAL_JIT_KERNEL2_H */
