/*
 * bench_program.h — compile one of the benchmark programs (bench/programs/<name>.db) of the
 * source tree, asserting success.  Header-only (it asserts with Criterion); included by the
 * tests that run the benchmark functions.
 */
#ifndef DUAL_BENCH_PROGRAM_H
#define DUAL_BENCH_PROGRAM_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "dualbatch.h"

static inline dual_program *bench_program(dual_context *ctx, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s.db", DUAL_SOURCE_DIR, name);
  dual_program *prog = NULL;
  int st = dual_program_compile_file(ctx, path, &prog);
  cr_assert(st == DUAL_SUCCESS && prog, "compiling %s failed (%s):\n%s", path,
            dual_status_string(st), dual_context_last_error(ctx));
  return prog;
}

#endif /* DUAL_BENCH_PROGRAM_H */
