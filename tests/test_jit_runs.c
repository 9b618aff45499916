/*
 * test_jit_runs.c — the periodic runs of a program's bytecode (src/jit/jit_runs.h).  grad's runs
 * derived by hand from its disassembly (`dualbatch disasm bench/programs/grad.db`): the ring's
 * iterations SIN, LDX, MUL, ADD from instruction 4, the squared norm's SQUARE, ADD from 4096.
 * Every run found in these programs is checked against the contract of jit_runs.h by the test's
 * own reading of the bytecode; values that a later instruction reads from the middle of a stretch
 * keep it straight-line; a program with no repetition has no run.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "jit/jit_runs.h"
#include "program.h"

static const char *grad_src =
    "input  x[1024]\n"
    "let ring = sum(i in 0..1023, sin(x[i]) * x[i + 1]) + sin(x[1023]) * x[0]\n"
    "let norm = log1p(sum(i in 0..1024, square(x[i])))\n"
    "output f = ring + norm\n";

static dual_program *compile(dual_context *ctx, const char *src) {
  dual_program *p = NULL;
  cr_assert_eq(dual_program_compile(ctx, src, "runs", &p), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  return p;
}

static const uint32_t *W(const dual_program *p, int64_t t) { return p->code + t * DUAL_INSTR_WORDS; }

/* The definitions each instruction reads, by the test's own pass over the registers. */
static int64_t *operands(const dual_program *p) {
  int64_t *opnd = malloc(sizeof(int64_t) * 3 * (size_t)p->n_instr), *def = malloc(sizeof(int64_t) * (size_t)p->n_regs);
  for (int32_t r = 0; r < p->n_regs; ++r) def[r] = -1;
  for (int64_t t = 0; t < p->n_instr; ++t) {
    const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(W(p, t))];
    const int reads = info->prop == DUAL_PROP_LOAD ? 0 : info->arity;
    for (int i = 0; i < 3; ++i) opnd[3 * t + i] = i < reads ? def[(int32_t)W(p, t)[1 + i]] : -1;
    if (info->prop != DUAL_PROP_OUT) def[DUAL_INSTR_DST(W(p, t))] = t;
  }
  free(def);
  return opnd;
}

/* Every iteration of every run as jit_runs.h says; returns the instructions the runs cover. */
static int64_t check_contract(const dual_program *p, const dual_jit_run *runs, int64_t nruns) {
  int64_t *opnd = operands(p), covered = 0, prev_end = 0;
  for (int64_t r = 0; r < nruns; ++r) {
    const dual_jit_run *run = &runs[r];
    const int64_t s = run->t0, P = run->period, end = s + P * run->count;
    cr_assert(s >= prev_end && end <= p->n_instr && run->count >= DUAL_JIT_RUN_MIN_COUNT, "run %lld", (long long)r);
    prev_end = end;
    covered += end - s;
    for (int64_t k = 0; k < run->count; ++k)
      for (int64_t j = 0; j < P; ++j) {
        const int64_t t = s + k * P + j, t0 = s + j;
        const int op = DUAL_INSTR_OP(W(p, t));
        cr_assert_eq(op, DUAL_INSTR_OP(W(p, t0)), "run %lld: op at %lld", (long long)r, (long long)t);
        cr_assert(op != DUAL_OP_OUT);
        cr_assert_eq(DUAL_INSTR_DST(W(p, t)) < p->n_active, DUAL_INSTR_DST(W(p, t0)) < p->n_active);
        if (op == DUAL_OP_LDX || op == DUAL_OP_LDP || op == DUAL_OP_RNORM || op == DUAL_OP_RUNIF)
          cr_assert_eq((int64_t)DUAL_INSTR_A(W(p, t)), DUAL_INSTR_A(W(p, t0)) + k * run->astep[j]);
        if (op == DUAL_OP_LDK) cr_assert_eq(p->consts[DUAL_INSTR_A(W(p, t))], p->consts[DUAL_INSTR_A(W(p, t0))]);
        for (int i = 0; i < 3; ++i) {
          const int64_t d = opnd[3 * t + i], x = 3 * j + i;
          switch (run->kind[x]) {
          case DUAL_RUN_NONE: cr_assert_eq(d, -1); break;
          case DUAL_RUN_SAME: cr_assert(d == t + run->off[x] && d >= s + k * P, "SAME at %lld", (long long)t); break;
          case DUAL_RUN_CARRY:
            if (k == 0) cr_assert(d == run->init[x] && d < s, "CARRY start at %lld", (long long)t);
            else cr_assert(d == t + run->off[x] && d >= s + (k - 1) * P && d < s + k * P, "CARRY at %lld", (long long)t);
            break;
          case DUAL_RUN_FIXED: cr_assert(d == run->off[x] && d < s, "FIXED at %lld", (long long)t); break;
          case DUAL_RUN_LOAD:
            cr_assert(d >= 0 && DUAL_INSTR_OP(W(p, d)) == DUAL_OP_LDX &&
                      DUAL_INSTR_A(W(p, d)) == run->off[x] + k * run->step[x], "LOAD at %lld", (long long)t);
            break;
          default: cr_assert_fail("kind %d", run->kind[x]);
          }
        }
      }
    /* read after the run: loads, or the last iteration's values */
    for (int64_t u = end; u < p->n_instr; ++u)
      for (int i = 0; i < 3; ++i) {
        const int64_t d = opnd[3 * u + i];
        if (d >= s && d < end)
          cr_assert(DUAL_INSTR_OP(W(p, d)) == DUAL_OP_LDX || d >= end - P,
                    "instruction %lld reads %lld from the middle of run %lld", (long long)u, (long long)d, (long long)r);
      }
  }
  free(opnd);
  return covered;
}

static dual_jit_run *find(const dual_program *p, int64_t *n) {
  dual_jit_run *runs = NULL;
  cr_assert_eq(dual_jit_find_runs(p, DUAL_JIT_RUN_MAX_PERIOD, DUAL_JIT_RUN_MIN_COUNT, &runs, n), DUAL_SUCCESS);
  return runs;
}

Test(jit_runs, grad_is_two_loops) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  dual_program *p = compile(ctx, grad_src);
  cr_assert_eq(p->n_instr, 6145);
  int64_t n = 0;
  dual_jit_run *runs = find(p, &n);
  cr_assert_eq(n, 2, "%lld runs", (long long)n);
  /* the ring: 4 SIN x[k+1] (read from the LDX before: 2 for k = 0), 5 LDX x[k+2], 6 MUL, 7 ADD
   * (the running sum; its start is 3, the first product) */
  cr_assert(runs[0].t0 == 4 && runs[0].period == 4 && runs[0].count == 1022, "ring: %lld %lld %lld",
            (long long)runs[0].t0, (long long)runs[0].period, (long long)runs[0].count);
  cr_assert(runs[0].kind[0] == DUAL_RUN_CARRY && runs[0].off[0] == -3 && runs[0].init[0] == 2);
  cr_assert(runs[0].astep[1] == 1 && DUAL_INSTR_A(W(p, 5)) == 2);
  cr_assert(runs[0].kind[6] == DUAL_RUN_SAME && runs[0].off[6] == -1); /* MUL reads the LDX */
  cr_assert(runs[0].kind[7] == DUAL_RUN_SAME && runs[0].off[7] == -2); /* and the SIN */
  cr_assert(runs[0].kind[9] == DUAL_RUN_CARRY && runs[0].off[9] == -4 && runs[0].init[9] == 3);
  cr_assert(runs[0].kind[10] == DUAL_RUN_SAME && runs[0].off[10] == -1);
  /* the squared norm: SQUARE of x[k+1], loaded again (the ring's LDX), then the running sum from
   * 4095 (the square of x[0]) */
  cr_assert(runs[1].t0 == 4096 && runs[1].period == 2 && runs[1].count == 1023, "norm: %lld %lld %lld",
            (long long)runs[1].t0, (long long)runs[1].period, (long long)runs[1].count);
  cr_assert(runs[1].kind[0] == DUAL_RUN_LOAD && runs[1].off[0] == 1 && runs[1].step[0] == 1);
  cr_assert(runs[1].kind[3] == DUAL_RUN_CARRY && runs[1].off[3] == -2 && runs[1].init[3] == 4095);
  cr_assert(runs[1].kind[4] == DUAL_RUN_SAME && runs[1].off[4] == -1);
  cr_assert_eq(check_contract(p, runs, n), 4088 + 2046, "all but 11 instructions are in loops");
  dual_jit_runs_free(runs, n);
  dual_program_destroy(&p);
  dual_context_destroy(&ctx);
}

Test(jit_runs, contract_holds_and_middle_values_stay_straight) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  const char *srcs[] = {
      /* hess: the Rosenbrock chain and the log-sum-exp */
      "input x[16]\n"
      "let rosen = sum(i in 0..15, 100 * square(x[i + 1] - square(x[i])) + square(1 - x[i]))\n"
      "let lse = log(sum(i in 0..16, exp(x[i])))\noutput f = rosen + lse\n",
      /* every p[i] is read again by the sum: no loop may hold them */
      "input x[40]\nlet p[40]\nfor i in 0..40 { p[i] = sin(x[i]) * 3 }\n"
      "output f = sum(i in 0..40, p[i] * p[i])\noutput g = p[20]\n",
      /* a long product with parameters and draws stepping */
      "input x[30]\nparam w[30]\noutput f = sum(i in 0..30, w[i] * normal(x[i], 0.1))\n",
      /* nothing repeats */
      "input x[3]\noutput f = sin(x[0]) * x[1] + exp(x[2]) / (1 + x[0])\n"};
  const int64_t want_min[] = {150, 0, 170, 0}; /* instructions covered, at least (0: no run) */
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; ++i) {
    dual_program *p = compile(ctx, srcs[i]);
    int64_t n = 0;
    dual_jit_run *runs = find(p, &n);
    const int64_t covered = check_contract(p, runs, n);
    cr_assert_geq(covered, want_min[i], "program %zu: %lld of %lld instructions in %lld runs", i,
                  (long long)covered, (long long)p->n_instr, (long long)n);
    if (want_min[i] == 0) cr_assert_eq(n, 0, "program %zu: %lld runs", i, (long long)n);
    dual_jit_runs_free(runs, n);
    dual_program_destroy(&p);
  }
  dual_context_destroy(&ctx);
}
