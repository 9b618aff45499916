/*
 * dispatch_workloads.c — the dispatch benchmarks' workloads (dispatch_workloads.h).
 */
#include "dispatch_workloads.h"

#include <stdio.h>
#include <string.h>

#include "bench_points.h"

const dispatch_workload dispatch_workloads[3] = {
    {"ba", "ba.db", 15, 2, 2, 0},
    {"kin", "kin.db", 32, 0, 32, 0},
    {"hess", "hess.db", 16, 0, 1, 1},
};

size_t dispatch_out_doubles(const dispatch_workload *w, int which) {
  return which == 0 ? (size_t)w->m : which == 1 ? (size_t)w->m * (size_t)w->n
                                                 : (size_t)w->m * (size_t)w->n * (size_t)w->n;
}

void dispatch_points(const dispatch_workload *w, int64_t B, double *x, double *p) {
  if (!strcmp(w->name, "ba")) bench_points_ba(B, 1, x, p);
  else if (!strcmp(w->name, "kin")) bench_points_kin(B, 1, x);
  else bench_points_hess(B, 1, x);
}

int dispatch_program(dual_context *ctx, const dispatch_workload *w, dual_program **prog) {
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s", DUAL_SOURCE_DIR, w->program);
  return dual_program_compile_file(ctx, path, prog);
}

#define AT(ptr, which) ((ptr) != NULL ? (ptr) + (size_t)first * dispatch_out_doubles(w, which) : NULL)

int dispatch_call(dual_context *ctx, const dual_program *prog, const dispatch_workload *w, int64_t first,
                  int64_t B, const double *x, const double *p, const dispatch_outputs *o) {
  const double *xs = x + (size_t)first * (size_t)w->n, *ps = p ? p + (size_t)first * (size_t)w->np : NULL;
  const int64_t mn = (int64_t)w->m * w->n;
  if (w->hessian)
    return dual_hessian(ctx, prog, B, xs, w->n, ps, w->np, AT(o->y, 0), w->m, AT(o->J, 1), mn, AT(o->H, 2),
                        mn * w->n, DUAL_HESSIAN_FULL, NULL);
  return dual_jacobian(ctx, prog, B, xs, w->n, ps, w->np, AT(o->y, 0), w->m, AT(o->J, 1), mn, NULL);
}
