/*
 * dispatch_workloads.h — the host-array workloads of the dispatch benchmarks (bench_dispatch.c,
 * probe_split.c): ba's and kin's Jacobians and hess's Hessians, their points, and one call.
 */
#ifndef DUAL_BENCH_DISPATCH_WORKLOADS_H
#define DUAL_BENCH_DISPATCH_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "dualbatch.h"

typedef struct dispatch_workload {
  const char *name, *program; /* program: a file of bench/programs */
  int n, np, m, hessian;
} dispatch_workload;

extern const dispatch_workload dispatch_workloads[3];

/* The outputs of one call: y, J and (hess) H, point-major. */
typedef struct dispatch_outputs {
  double *y, *J, *H;
} dispatch_outputs;

/* Doubles per point of output `which` (0 y, 1 J, 2 H). */
size_t dispatch_out_doubles(const dispatch_workload *w, int which);

/* The benchmark points of w for B points: x (B rows of n) and p (B rows of np, or NULL). */
void dispatch_points(const dispatch_workload *w, int64_t B, double *x, double *p);

/* The workload's program (bench/programs) compiled on ctx. */
int dispatch_program(dual_context *ctx, const dispatch_workload *w, dual_program **prog);

/* One call of B points from point `first` of x, p and the outputs. */
int dispatch_call(dual_context *ctx, const dual_program *prog, const dispatch_workload *w, int64_t first,
                  int64_t B, const double *x, const double *p, const dispatch_outputs *o);

#endif /* DUAL_BENCH_DISPATCH_WORKLOADS_H */
