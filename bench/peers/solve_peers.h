/*
 * solve_peers.h — the solver benchmark's CPU peers, one solve per cell, cells shared among
 * OpenMP threads: SUNDIALS KINSOL (Newton with its line search, dense direct solver, the
 * Jacobian every iteration) and MINPACK's hybrj (cminpack; Powell's hybrid method).  Both get the
 * systems' hand-written residuals and Jacobians (bench/solve_systems.c).
 */
#ifndef DUAL_SOLVE_PEERS_H
#define DUAL_SOLVE_PEERS_H

#include <stdint.h>

#include "solve_systems.h"

/* Solve the B cells (parameters p [B][np], x [B][n] starts in, solutions out); converged[b] 1 or
 * 0, iters[b] the peer's Newton iterations (KINSOL) or Jacobian evaluations (hybrj).  Returns 0,
 * or -1 when the peer is not built in. */
int peer_kinsol(const solve_system *s, int64_t B, const double *p, double *x, int32_t *converged,
                int32_t *iters, int threads);
int peer_hybrj(const solve_system *s, int64_t B, const double *p, double *x, int32_t *converged,
               int32_t *iters, int threads);

/* The peers' versions ("KINSOL 6.4.1", ...) or "not built". */
const char *peer_kinsol_version(void);
const char *peer_hybrj_version(void);

#endif /* DUAL_SOLVE_PEERS_H */
