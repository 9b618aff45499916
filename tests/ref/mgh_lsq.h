/*
 * mgh_lsq.h — the Moré–Garbow–Hillstrom least-squares problems 1–18 as MINPACK's lmder test
 * drivers define them (ssqfcn, initpt), in the dualbatch language: the program text of problem
 * `nprob` with n unknowns and m residuals, and the standard starting point times `factor`.
 * Written from the problems' definitions (Moré, Garbow, Hillstrom, ACM TOMS 7, 1981);
 * tests/data/minpack/lmddrv.fortran.ref's initial residual norms check each one.
 */
#ifndef DUAL_MGH_LSQ_H
#define DUAL_MGH_LSQ_H

/* The program text (heap; caller frees), or NULL for an unknown problem. */
char *mgh_lsq_source(int nprob, int n, int m);

/* x0[0..n) = the starting point times factor (a zero start becomes all `factor`, as
 * MINPACK's initpt does for Watson). */
void mgh_lsq_start(int nprob, int n, double factor, double *x0);

#endif /* DUAL_MGH_LSQ_H */
