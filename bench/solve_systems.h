/*
 * solve_systems.h — the systems of the solver benchmark (bench_solve.c), by hand for the peers:
 * kin_steady (n = 32, bench/programs/kin_steady.db), rob3 (n = 3, bench/programs/rob3.db) and
 * the Bratu problem on 15, 48 and 64 points (bench/programs/bratu15.db, bratu48.db, bratu64.db),
 * their residuals and dense Jacobians, and the cells' parameters and perturbed starts.
 */
#ifndef DUAL_SOLVE_SYSTEMS_H
#define DUAL_SOLVE_SYSTEMS_H

#include <stdint.h>

typedef struct solve_system {
  const char *name, *program; /* program: path under bench/programs */
  int n, np;
  /* F(x; p) into f; J (row-major n x n, may be NULL) */
  void (*residual)(const double *x, const double *p, double *f, double *J);
  /* cell b's parameters and starting point (deterministic in b) */
  void (*cell)(int64_t b, double *p, double *x0);
} solve_system;

extern const solve_system solve_kin_steady, solve_rob3, solve_bratu15, solve_bratu48, solve_bratu64;

#endif /* DUAL_SOLVE_SYSTEMS_H */
