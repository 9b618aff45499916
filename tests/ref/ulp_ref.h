/*
 * ulp_ref.h — error of a double result in units in the last place of a quad-precision reference.
 * Used by the elementary-function accuracy tests (tests/test_fn_*.c), with the bit casts they
 * build arguments from.
 */
#ifndef DUAL_ULP_REF_H
#define DUAL_ULP_REF_H

#include <stdint.h>

double ref_from_bits(uint64_t u);
uint64_t ref_to_bits(double x);
uint64_t ref_next(uint64_t *state); /* splitmix64 */

/* |got - ref| in ulps of the double nearest ref (ulp of the binade of ref, 2^-1074 below
 * DBL_MIN): 0 when both are NaN or both the same infinity; a result of +-inf against a reference
 * beyond DBL_MAX (same sign) counts as 0.5; INFINITY for any other NaN/inf mismatch. */
double ulp_error(double got, __float128 ref);

#endif /* DUAL_ULP_REF_H */
