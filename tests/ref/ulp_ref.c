/*
 * ulp_ref.c — ulp_error(): a double result against a quad-precision reference (ulp_ref.h).
 */
#include "ulp_ref.h"

#include <float.h>
#include <math.h>
#include <quadmath.h>

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
