/*
 * ulp_ref.c — ulp_error(): a double result against a quad-precision reference (ulp_ref.h).
 */
#include "ulp_ref.h"

#include <float.h>
#include <math.h>
#include <quadmath.h>
#include <string.h>

double ref_from_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

uint64_t ref_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t ref_to_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

double ulp_error(double got, __float128 ref) {
  if (isnanq(ref) || isnan(got)) return (isnanq(ref) && isnan(got)) ? 0.0 : INFINITY;
  if (isinf(got)) {
    int same = (got > 0) == (ref > 0);
    if (isinfq(ref)) return same ? 0.0 : INFINITY;
    return (same && fabsq(ref) > (__float128)DBL_MAX) ? 0.5 : INFINITY;
  }
  if (isinfq(ref)) return INFINITY;
  __float128 mag = fabsq(ref);
  int e;
  if (mag < (__float128)DBL_MIN) {
    e = -1074;
  } else {
    (void)frexpq(mag, &e); /* mag = f 2^e, f in [0.5, 1) */
    e -= 53;
  }
  __float128 err = fabsq((__float128)got - ref);
  return (double)ldexpq(err, -e);
}
