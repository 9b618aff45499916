/*
 * fn.h — the library's own elementary functions, one header per family (fn_exp.h, fn_log.h,
 * fn_pow.h, fn_trig.h, fn_atrig.h, fn_hyp.h, fn_erf.h).  rules.h computes every op with these
 * instead of the C library's and CUDA's: both engines then run the same arithmetic, built only
 * from operations IEEE 754 rounds exactly (+ - * / sqrt fma), so CPU and GPU results are bitwise
 * identical.  Accuracy against quad precision: tests/test_fn_*.c.  Valid C11 and CUDA.
 */
#ifndef DUAL_FN_H
#define DUAL_FN_H

#include "fn_exp.h"
#include "fn_log.h"
#include "fn_pow.h"
#include "fn_trig.h"
#include "fn_atrig.h"
#include "fn_hyp.h"
#include "fn_erf.h"

#endif /* DUAL_FN_H */
