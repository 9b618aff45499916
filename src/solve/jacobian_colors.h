/*
 * jacobian_colors.h — the structure of a program's Jacobian dF/dx and a column coloring of it
 * (Curtis, Powell and Reid, 1974): columns that share no row get one color, and a forward pass
 * seeded with one direction per color (a colored view, program.h) computes J S, from which J is
 * read back entry by entry.  The structure comes from the lane masks the engines evaluate J by
 * (engine/lanes.h), so it is exact: an entry outside it is an exact zero on every engine.
 *
 * The engines compute each lane of J S by the same operations, on the same values, as the lane
 * of the dense pass that seeds the entry's column (an operand depends on at most one input of a
 * color where it feeds an output, or that output would have two columns of the color), so the
 * expanded J has the dense one's bits, its structural zeros +0.0 as the engines write them.
 */
#ifndef DUAL_JACOBIAN_COLORS_H
#define DUAL_JACOBIAN_COLORS_H

#include <stdint.h>

#include "dual/portable.h"
#include "dualbatch.h"

typedef struct dual_jac_colors {
  int32_t n, m;      /* J is m x n */
  int32_t lo, hi;    /* the structural band: max (i - j) and max (j - i) over the entries */
  int32_t ncolors;   /* directions of the colored view (<= n) */
  int32_t *color;    /* [n] */
  int32_t *row_start; /* [m + 1]: row i's entries are cols[row_start[i] .. row_start[i + 1]) */
  int32_t *cols;     /* increasing in each row */
  dual_program *view; /* the colored view, or NULL where it would save nothing (ncolors 0 or n) */
} dual_jac_colors;

/* The structure, band and greedy coloring (columns in order, each the least color no column of
 * its rows has) of prog's Jacobian, and the colored view where 0 < ncolors < n.  DUAL_SUCCESS, or
 * DUAL_ERR_NO_MEMORY (*c then holds nothing to free). */
int dual_jac_colors_build(const dual_program *prog, dual_jac_colors *c);
void dual_jac_colors_free(dual_jac_colors *c);

/* One point's J S, entry (i, c) at JS[(i * ncolors + c) * es], expanded into J, entry (i, j) at
 * J[(i * n + j) * es].  JS may be J itself (J S in J's first m * ncolors entries): rows go last to
 * first, each read before it is written, so no entry is overwritten before it is read (J's row i
 * starts at i * n >= i * ncolors, past every earlier row of JS).  `row` is scratch of ncolors
 * entries. */
DUAL_INLINE void dual_jac_expand(int32_t m, int32_t n, int32_t ncolors, const int32_t *color,
                                 const int32_t *row_start, const int32_t *cols, const double *JS,
                                 double *J, int64_t es, double *row) {
  for (int32_t i = m - 1; i >= 0; --i) {
    for (int32_t c = 0; c < ncolors; ++c) row[c] = JS[((int64_t)i * ncolors + c) * es];
    double *Ji = J + (int64_t)i * n * es;
    for (int32_t j = 0; j < n; ++j) Ji[j * es] = 0.0;
    for (int32_t e = row_start[i]; e < row_start[i + 1]; ++e) Ji[cols[e] * es] = row[color[cols[e]]];
  }
}

/* One point's square J (n x n, row-major) from its J S (JS, another array, row-major n x
 * ncolors), set only where a banded LU reads it (solve/lu_small.h): entries (i, j) with
 * -lo <= j - i <= up, up = the lower plus the upper bandwidth (the fill-in of the row
 * interchanges); the structure's entries lie within.  The other entries keep what they held.
 * The CPU's dual_newton expands each point's J so right before its LU (n = 15, tridiagonal: 4
 * entries a row instead of 15). */
DUAL_INLINE void dual_jac_expand_band(int32_t n, int32_t ncolors, const int32_t *color, const int32_t *row_start,
                                      const int32_t *cols, const double *JS, double *J, int32_t lo, int32_t up) {
  for (int32_t i = 0; i < n; ++i) {
    const double *row = JS + (int64_t)i * ncolors;
    double *Ji = J + (int64_t)i * n;
    const int32_t j0 = i - lo > 0 ? i - lo : 0, j1 = up < n - 1 - i ? i + up : n - 1;
    for (int32_t j = j0; j <= j1; ++j) Ji[j] = 0.0;
    for (int32_t e = row_start[i]; e < row_start[i + 1]; ++e) Ji[cols[e]] = row[color[cols[e]]];
  }
}

#endif /* DUAL_JACOBIAN_COLORS_H */
