/*
 * sgrad_score.h — the program that dual_sgrad's score-function estimator differentiates
 * (sgrad_score.c).
 */
#ifndef DUAL_SGRAD_SCORE_H
#define DUAL_SGRAD_SCORE_H

#include "dualbatch.h"

/* From a scalar program with draws xi = fma(sigma, z, mu) (z a standard normal draw, sigma in
 * either multiplicand), build the two-output program (f with every such xi replaced by
 * nograd(xi), L = sum of -((xi - mu) / sigma)^2 / 2 - log|sigma|): grad f + f grad L is the
 * per-sample score-function gradient.  Draw indices are kept, so the samples are the pathwise
 * estimator's.  DUAL_ERR_UNSUPPORTED when there is no such draw or such a z is used elsewhere. */
int dual_sgrad_score_program(dual_context *ctx, const dual_program *prog, dual_program **out);

#endif /* DUAL_SGRAD_SCORE_H */
