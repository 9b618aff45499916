/*
 * fn.c — the CPU's one out-of-line definition of the library's elementary functions (fn.h):
 * the fn_*.h headers compiled with external linkage (DUAL_FN_EXTERN, fn_bits.h).  The GPU
 * kernel inlines the same headers instead.
 */
#define DUAL_FN_EXTERN 1
#include "fn.h" /* prototypes, then the definitions */
