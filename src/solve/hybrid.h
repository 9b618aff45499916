/*
 * hybrid.h — Powell's hybrid method (MINPACK hybrj's dogleg with Broyden updates) for one point,
 * dual_newton's last fallback (hybrid.c).
 */
#ifndef DUAL_HYBRID_H
#define DUAL_HYBRID_H

#include <stdint.h>

#include "dualbatch.h"

/* Run the hybrid method from x (host memory, n values; p the point's parameters, may be NULL)
 * until hybrj's tests stop it (the region below x_rel ||D x||, F = 0, 100 (n + 1) evaluations,
 * no progress); x gets the last accepted point.  *steps (may be NULL): the steps it accepted.  A
 * DUAL_ERR_* status only for an engine or memory failure; whether x solves F = 0 is for the
 * caller's tests. */
int dual_hybrid_point(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                      double *x, const double *p, int32_t *steps);

#endif /* DUAL_HYBRID_H */
