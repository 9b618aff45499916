/*
 * hybrid.h — Powell's hybrid method for one point, dual_newton's last fallback: a port of
 * MINPACK's hybrj as hybrj1 runs it (hybrid.c).
 */
#ifndef DUAL_HYBRID_H
#define DUAL_HYBRID_H

#include <stdint.h>

#include "dualbatch.h"

/* Run hybrj from x (host memory, n values; p the point's parameters, may be NULL) with hybrj1's
 * settings: unscaled (diag = 1), the first region step_bound ||x|| (step_bound if x = 0), xtol =
 * x_rel (1.49e-8 where x_rel is 0), at most 100 (n + 1) evaluations of F.  It stops on hybrj's
 * tests: the region below xtol ||x|| or F = 0, the evaluation limit, a step below the rounding of
 * x, no progress over five Jacobians or ten steps (or a Jacobian that is not finite); x gets the
 * last accepted point.  From the same start, F and J it takes hybrj's steps (the same bits as the
 * Fortran on the MGH test problems).  *steps (may be NULL): the steps it accepted.  A DUAL_ERR_*
 * status only for an engine or memory failure; whether x solves F = 0 is for the caller's
 * tests. */
int dual_hybrid_point(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                      double *x, const double *p, int32_t *steps);

#endif /* DUAL_HYBRID_H */
