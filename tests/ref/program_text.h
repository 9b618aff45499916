/*
 * program_text.h — a growing string for tests that write program text term by term (the MGH
 * problems): printf-style appends, the text on the heap.
 */
#ifndef DUAL_PROGRAM_TEXT_H
#define DUAL_PROGRAM_TEXT_H

#include <stddef.h>

typedef struct program_text {
  char *s; /* NUL-terminated; the caller frees it */
  size_t len, cap;
} program_text;

/* Append printf(fmt, ...) (one append is at most 4095 bytes). */
void pt_put(program_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The MGH Chebyquad sums: `let s[m]`, s[i] = sum over the n inputs x[j] of the shifted
 * Chebyshev polynomial T_(i+1)(2 x[j] - 1), by the three-term recurrence; then f[i] = s[i] / n,
 * plus 1/((i+1)^2 - 1) for even i + 1 (the integral's part). */
void pt_chebyquad(program_text *t, int n, int m);

/* The MGH helical valley residuals f[0..2] (MINPACK's angle convention). */
void pt_helical_valley(program_text *t);

/* The MGH Powell singular residuals f[0..3]. */
void pt_powell_singular(program_text *t);

/* The MGH Brown almost-linear residuals f[0..n). */
void pt_brown_almost_linear(program_text *t, int n);

#endif /* DUAL_PROGRAM_TEXT_H */
