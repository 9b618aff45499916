/*
 * mgh_equations.h — the Moré–Garbow–Hillstrom nonlinear-equation problems 1–14 as MINPACK's
 * hybrj test drivers define them (vecfcn, initpt), written in the dualbatch language: the
 * program text for problem `nprob` at dimension n, and its standard starting point times
 * `factor` (MINPACK's convention: problem 6, Watson, starts at 0, so its multiples are all
 * `factor`).  Written from the problems' definitions (Moré, Garbow, Hillstrom, ACM TOMS 7, 1981);
 * tests/data/minpack/hyjdrv.fortran.ref's initial residual norms check each one.
 */
#ifndef DUAL_MGH_EQUATIONS_H
#define DUAL_MGH_EQUATIONS_H

/* The program text (heap; caller frees), or NULL for an unknown problem. */
char *mgh_equations_source(int nprob, int n);

/* x0[0..n) = the starting point times factor. */
void mgh_equations_start(int nprob, int n, double factor, double *x0);

#endif /* DUAL_MGH_EQUATIONS_H */
