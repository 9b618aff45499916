/*
 * fn.h — the library's own elementary functions, one header per family (fn_exp.h, fn_log.h,
 * fn_pow.h, fn_trig.h, fn_atrig.h, fn_hyp.h, fn_erf.h).  rules.h computes every op with these
 * instead of the C library's and CUDA's: both engines then run the same arithmetic, built only
 * from operations IEEE 754 rounds exactly (+ - * / sqrt fma), so CPU and GPU results are bitwise
 * identical.  Accuracy against quad precision: tests/test_fn_*.c.  Valid C11 and CUDA: CUDA
 * inlines the definitions; C sees prototypes of the out-of-line definitions in fn.c, except the
 * CPU compiled tier's generated code (DUAL_FN_JIT_CPU), which gets the definitions.
 */
#ifndef DUAL_FN_H
#define DUAL_FN_H

#if !defined(__CUDACC__) && !defined(DUAL_FN_JIT_CPU) /* the CPU calls the one definition in fn.c */
double dual_exp(double x);
double dual_exp2(double x);
double dual_expm1(double x);
double dual_log(double x);
double dual_log2(double x);
double dual_log10(double x);
double dual_log1p(double x);
double dual_pow(double a, double b);
double dual_cbrt(double x);
double dual_hypot(double x, double y);
double dual_sin(double x);
double dual_cos(double x);
double dual_tan(double x);
void dual_sincos(double x, double *s, double *c);
double dual_atan(double x);
double dual_atan2(double y, double x);
double dual_asin(double x);
double dual_acos(double x);
double dual_sinh(double x);
double dual_cosh(double x);
double dual_tanh(double x);
double dual_asinh(double x);
double dual_acosh(double x);
double dual_atanh(double x);
double dual_erf(double x);
double dual_erfc(double x);
#endif


#if defined(__CUDACC__) || defined(DUAL_FN_EXTERN) || defined(DUAL_FN_JIT_CPU) /* the definitions (fn_bits.h) */
#include "fn_exp.h"
#include "fn_log.h"
#include "fn_pow.h"
#include "fn_trig.h"
#include "fn_atrig.h"
#include "fn_hyp.h"
#include "fn_erf.h"
#endif

#endif /* DUAL_FN_H */
