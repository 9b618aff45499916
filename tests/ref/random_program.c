/*
 * random_program.c — see random_program.h.
 */
#include "random_program.h"
#include "ulp_ref.h"

#include <stdio.h>
#include <stdlib.h>

#include "builder.h"
#include "dual/ops.h"

uint64_t rp_next(uint64_t *state) { return ref_next(state); }

double rp_uniform(uint64_t *state, double lo, double hi) {
  return lo + (hi - lo) * (double)(rp_next(state) >> 11) * 0x1p-53;
}

int rp_pick(uint64_t *state, int n) { return (int)(rp_next(state) % (uint64_t)n); }

dual_program *rp_op_program(dual_context *ctx, int op) {
  const dual_op_info *info = &dual_op_table[op];
  if (info->spelling[0] == '\0') return NULL;
  dual_builder *b = NULL;
  if (dual_builder_create(ctx, &b) != DUAL_SUCCESS) return NULL;
  int32_t in[3], out;
  dual_program *prog = NULL;
  int st = DUAL_SUCCESS;
  for (int k = 0; k < 3 && st == DUAL_SUCCESS; ++k) st = dual_builder_input(b, NULL, &in[k]);
  if (st == DUAL_SUCCESS) st = dual_builder_apply(b, info->spelling, info->arity, in, &out);
  if (st == DUAL_SUCCESS) st = dual_builder_output(b, NULL, out);
  if (st == DUAL_SUCCESS) st = dual_builder_finish(b, &prog);
  dual_builder_destroy(&b);
  return st == DUAL_SUCCESS ? prog : NULL;
}

dual_program *rp_random_program(dual_context *ctx, uint64_t *state, int len, int nin, int npar,
                                int nout) {
  int ops[DUAL_OP_COUNT], nops = 0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op)
    if (dual_op_table[op].spelling[0] != '\0') ops[nops++] = op;
  dual_builder *b = NULL;
  int32_t *vals = (int32_t *)malloc(sizeof(int32_t) * (size_t)(len + nin + npar + 8));
  dual_program *prog = NULL;
  int nv = 0, st = vals ? dual_builder_create(ctx, &b) : DUAL_ERR_NO_MEMORY;
  for (int i = 0; i < nin && st == 0; ++i) st = dual_builder_input(b, NULL, &vals[nv++]);
  for (int i = 0; i < npar && st == 0; ++i) st = dual_builder_param(b, NULL, &vals[nv++]);
  if (st == 0) st = dual_builder_constant(b, rp_uniform(state, -2, 2), &vals[nv++]);
  const int leaves = nin + npar;
  for (int i = 0; i < len && st == 0; ++i) {
    int op = ops[i < nops ? i : rp_pick(state, nops)];
    int ar = dual_op_table[op].arity;
    int32_t args[3];
    for (int k = 0; k < ar; ++k) /* an input or parameter half the time, else a recent value */
      args[k] = rp_pick(state, 2) ? vals[rp_pick(state, leaves)]
                                  : vals[nv - 1 - rp_pick(state, nv < 12 ? nv : 12)];
    int all_const = 1;
    for (int k = 0; k < ar; ++k) all_const &= dual_builder_const_value(b, args[k], NULL);
    if (all_const) args[0] = vals[rp_pick(state, leaves)]; /* folding could leave the domain */
    st = dual_builder_apply(b, dual_op_table[op].spelling, ar, args, &vals[nv++]);
  }
  for (int j = 0; j < nout && st == 0; ++j) { /* each output sums a few values */
    int32_t acc = vals[nv - 1 - j], args2[2];
    for (int k = 0; k < 6 && st == 0; ++k) {
      args2[0] = acc;
      args2[1] = vals[leaves + 1 + rp_pick(state, nv - leaves - 1)];
      st = dual_builder_apply(b, "+", 2, args2, &acc);
    }
    if (st == 0) st = dual_builder_output(b, NULL, acc);
  }
  if (st == 0) dual_builder_finish(b, &prog);
  dual_builder_destroy(&b);
  free(vals);
  return prog;
}

dual_program *rp_chain_program(dual_context *ctx, uint64_t *state, int nin, int nout, int steps) {
  static const char *step[] = {"t = sin(t) * x[%d] + u", "u = t * x[%d] - cos(u)",
                               "t = exp(-0.1 * t * t) + x[%d] * u", "u = tanh(u + x[%d]) * t",
                               "t = log1p(t * t) * x[%d] + t", "u = max(t, x[%d]) * u",
                               "t = hypot(t, x[%d]) - u", "u = sqrt(u * u + x[%d] * x[%d] + 1)",
                               "t = (t < x[%d] ? t : u) * 0.5 + u", "u = u / (1 + x[%d] * x[%d])"};
  const size_t cap = 64 * (size_t)(steps + nout + 8);
  char *src = malloc(cap), line[128];
  if (src == NULL) return NULL;
  int len = snprintf(src, cap, "input x[%d]\nlet t = x[0]\nlet u = x[%d]\n", nin, nin - 1);
  for (int k = 0; k < steps; ++k) {
    const int j = rp_pick(state, nin);
    snprintf(line, sizeof line, step[rp_pick(state, 10)], j, j);
    len += snprintf(src + len, cap - (size_t)len, "%s\n", line);
  }
  for (int i = 0; i < nout; ++i)
    len += snprintf(src + len, cap - (size_t)len, "output f%d = t * %d + u * x[%d]\n", i, i + 1, i % nin);
  dual_program *prog = NULL;
  dual_program_compile(ctx, src, "chain", &prog);
  free(src);
  return prog;
}

int rp_sweep_step(void) {
  const char *env = getenv("DUALBATCH_TEST_SWEEP_DIV");
  const long k = env != NULL ? strtol(env, NULL, 10) : 1;
  return k >= 1 && k <= 1000000 ? (int)k : 1;
}

