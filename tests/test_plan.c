/*
 * test_plan.c — the GPU engine's plan and per-point interpreter, run on the CPU.
 *
 * The plan (engine/plan.h) packs each register's tangent lanes into slots that are recycled at
 * last use; the per-point interpreter (kernels/interp_point.h) is the code every GPU thread runs.
 * Here both run on the CPU, one point at a time, and must reproduce the CPU engine bitwise (same
 * rules, same libm), for every width and mode, on random programs and the benchmark functions.
 * A separate check replays each plan and asserts that every operand's lanes are read from slots
 * still holding that operand's value — a slot reused too early fails here even when the values
 * happen to agree.  No GPU needed, so CI covers this part of the GPU engine.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "engine/plan.h"
#include "program.h"
#include "bench_program.h"
#include "random_program.h"

#define DUAL_W 0
#include "kernels/interp_point.h"
#undef DUAL_W
#define DUAL_W 1
#include "kernels/interp_point.h"
#undef DUAL_W

#define NIN 7
#define NPAR 2
#define NOUT 3
#define B 37
#define SHARE 3u /* points sharing one register file: a point's tangent slots are SHARE apart */

static int64_t passes_of(const dual_program *prog, int mode, int width) {
  if (mode != DUAL_MODE_JACOBIAN && mode != DUAL_MODE_GRADIENT) return 1;
  return prog->n_in == 0 ? 1 : (prog->n_in + width - 1) / width;
}

/* Replay the plan: each slot remembers the instruction that last wrote it. */
static void check_slots(const dual_program *prog, const dual_plan_instr *recs, int64_t passes,
                        int64_t n_slots) {
  int64_t *owner = malloc(sizeof(int64_t) * (size_t)(n_slots + 1));
  int64_t *def = malloc(sizeof(int64_t) * (size_t)(prog->n_active + 1));
  for (int64_t pass = 0; pass < passes; ++pass) {
    for (int64_t s = 0; s < n_slots; ++s) owner[s] = -1;
    for (int32_t r = 0; r < prog->n_active; ++r) def[r] = -2;
    for (int64_t t = 0; t < prog->n_instr; ++t) {
      const dual_plan_instr *q = &recs[pass * prog->n_instr + t];
      const int op = (int)(q->op_dst >> DUAL_DST_BITS);
      const uint32_t dst = q->op_dst & ((1u << DUAL_DST_BITS) - 1u);
      const uint32_t regs[3] = {q->a, q->b, q->c}, masks[3] = {q->ma, q->mb, q->mc},
                     offs[3] = {q->oa, q->ob, q->oc};
      for (int i = 0; i < 3 && op != DUAL_OP_LDX; ++i) /* LDX: `ma` is the seed, not an operand */
        for (int k = 0; k < 32; ++k)
          if ((masks[i] >> k) & 1u) {
            int64_t slot = offs[i] + DUAL_POPC(masks[i] & ((1u << k) - 1u));
            cr_assert_lt(slot, n_slots, "instruction %lld reads slot %lld of %lld", (long long)t,
                         (long long)slot, (long long)n_slots);
            cr_assert_eq(owner[slot], def[regs[i]],
                         "pass %lld instruction %lld (%s): operand %d lane %d reads slot %lld "
                         "written by instruction %lld, not by its definition %lld",
                         (long long)pass, (long long)t, dual_op_table[op].name, i, k,
                         (long long)slot, (long long)owner[slot], (long long)def[regs[i]]);
          }
      if (dual_op_table[op].prop == DUAL_PROP_OUT || (int32_t)dst >= prog->n_active) continue;
      for (int k = 0; k < 32; ++k)
        if ((q->md >> k) & 1u) owner[q->od + DUAL_POPC(q->md & ((1u << k) - 1u))] = t;
      def[dst] = t;
    }
  }
  free(owner);
  free(def);
}

/* Run `mode` at `width` through the plan and the per-point interpreter, each point by a group of
 * `group` emulated threads run one after the other (each its own values, the point's tangents
 * shared); compare with the CPU engine's results (y, d, status) bitwise (NaN payloads aside). */
static void check_mode(dual_context *ctx, const dual_program *prog, int mode, int width, int group,
                       const double *x, const double *p, const double *v) {
  const int64_t n = prog->n_in, np = prog->n_par, m = prog->n_out;
  const int64_t nd = mode == DUAL_MODE_JACOBIAN ? m * n : (mode == DUAL_MODE_JVP ? m : 0);
  double *y0 = calloc((size_t)(B * m + 1), sizeof(double)), *y1 = calloc((size_t)(B * m + 1), sizeof(double));
  double *d0 = calloc((size_t)(B * nd + 1), sizeof(double)), *d1 = calloc((size_t)(B * nd + 1), sizeof(double));
  int32_t s0[B], s1[B];
  dual_batch b;
  dual_batch_init(&b);
  b.count = B;
  b.x = x, b.x_ps = n, b.x_es = 1;
  b.p = p, b.p_ps = np, b.p_es = 1;
  b.v = v, b.v_ps = n, b.v_es = 1;
  b.y = y0, b.y_ps = m, b.y_es = 1;
  b.d = mode == DUAL_MODE_EVAL ? NULL : d0;
  b.d_ps = nd, b.d_rs = mode == DUAL_MODE_JACOBIAN ? n : 1, b.d_cs = mode == DUAL_MODE_JVP ? 0 : 1;
  b.status = s0;
  cr_assert_eq(dual_context_set_width(ctx, mode == DUAL_MODE_JACOBIAN ? width : 0), 0);
  cr_assert_eq(dual_run(ctx, prog, mode, &b), 0, "%s", dual_context_last_error(ctx));

  const int w = mode == DUAL_MODE_EVAL ? 0 : (mode == DUAL_MODE_JVP ? 1 : width);
  const int64_t passes = passes_of(prog, mode, w);
  dual_plan_instr *recs = malloc(sizeof *recs * (size_t)(passes * prog->n_instr + 1));
  int64_t n_slots = 0;
  cr_assert_eq(dual_plan_build(prog, mode, w, 0, passes, recs, &n_slots), 0);
  check_slots(prog, recs, passes, n_slots);
  dual_gpu_args a;
  memset(&a, 0, sizeof a);
  a.plan = recs, a.n_instr = prog->n_instr, a.count = B;
  a.pass0 = 0, a.passes = (int32_t)passes, a.width = w, a.mode = mode, a.n_in = (int32_t)n;
  a.n_regs = prog->n_regs, a.n_slots = (int32_t)n_slots;
  a.x = x, a.x_ps = n, a.x_es = 1, a.p = p, a.p_ps = np, a.p_es = 1, a.v = v, a.v_ps = n, a.v_es = 1;
  a.y = y1, a.y_ps = m, a.y_es = 1, a.d = d1, a.d_ps = nd, a.d_rs = b.d_rs, a.d_cs = b.d_cs;
  const uint32_t G = w > 0 ? (uint32_t)group : 1u, S = SHARE * G;
  const size_t nv = (size_t)prog->n_regs * S, nt = (size_t)n_slots * SHARE;
  double *vals = malloc(sizeof(double) * (nv + 1)), *tans = malloc(sizeof(double) * (nt + 1));
  for (int64_t pt = 0; pt < B; ++pt) {
    for (size_t i = 0; i < nv; ++i) vals[i] = NAN; /* stale registers would show */
    for (size_t i = 0; i < nt; ++i) tans[i] = NAN;
    const uint32_t col = (uint32_t)(pt % SHARE);
    s1[pt] = 0;
    for (uint32_t lane = 0; lane < G; ++lane) {
      double *V = vals + col * G + lane, *T = tans + col;
      s1[pt] |= w > 0 ? dual_point_run_w1(&a, V, T, S, SHARE, pt, lane, G, 0)
                      : dual_point_run_w0(&a, V, T, S, SHARE, pt, 0u, 1u, 0);
    }
  }
  for (int64_t i = 0; i < B * m; ++i)
    cr_assert(memcmp(&y0[i], &y1[i], 8) == 0 || (isnan(y0[i]) && isnan(y1[i])),
              "mode %d width %d value %lld: %.17g vs %.17g", mode, w, (long long)i, y0[i], y1[i]);
  for (int64_t i = 0; i < B * nd; ++i)
    cr_assert(memcmp(&d0[i], &d1[i], 8) == 0 || (isnan(d0[i]) && isnan(d1[i])),
              "mode %d width %d derivative %lld: %.17g vs %.17g", mode, w, (long long)i, d0[i], d1[i]);
  cr_assert(memcmp(s0, s1, sizeof s0) == 0, "mode %d width %d: status differs", mode, w);
  free(vals), free(tans), free(recs), free(y0), free(y1), free(d0), free(d1);
}

static void check_program(dual_context *ctx, const dual_program *prog, uint64_t *rng) {
  const int64_t n = prog->n_in, np = prog->n_par;
  double *x = malloc(sizeof(double) * (size_t)(B * n + 1)), *p = malloc(sizeof(double) * (size_t)(B * np + 1));
  double *v = malloc(sizeof(double) * (size_t)(B * n + 1));
  for (int64_t i = 0; i < B * n; ++i) x[i] = rp_uniform(rng, -1.5, 1.5), v[i] = rp_uniform(rng, -1, 1);
  for (int64_t i = 0; i < B * np; ++i) p[i] = rp_uniform(rng, -1.5, 1.5);
  if (B * n > 11) x[5] = 0.0, x[11] = 1.0; /* kinks and singular points */
  check_mode(ctx, prog, DUAL_MODE_EVAL, 0, 1, x, p, v);
  check_mode(ctx, prog, DUAL_MODE_JVP, 1, 1, x, p, v);
  for (int w = 1; w <= 32; w *= 2)
    for (int g = 1; g <= 8; g *= 2) check_mode(ctx, prog, DUAL_MODE_JACOBIAN, w, g, x, p, v);
  free(x), free(p), free(v);
}

Test(plan, random_programs_match_cpu_engine) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  uint64_t rng = 777;
  for (int i = 0; i < 150; ++i) {
    dual_program *prog = rp_random_program(ctx, &rng, 40 + i % 60, NIN, NPAR, NOUT);
    cr_assert_not_null(prog, "%s", dual_context_last_error(ctx));
    if (i % rp_sweep_step() == 0) check_program(ctx, prog, &rng);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

Test(plan, benchmark_functions_match_cpu_engine) {
  static const char *files[] = {"ba", "kin", "hess"};
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  uint64_t rng = 99;
  for (int f = 0; f < 3; ++f) {
    dual_program *prog = bench_program(ctx, files[f]);
    check_program(ctx, prog, &rng);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* Packing pays: the benchmark functions need far fewer tangent slots than registers x width. */
Test(plan, packed_slots_are_fewer_than_dense) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  dual_program *prog = bench_program(ctx, "kin");
  dual_plan_instr *recs = malloc(sizeof *recs * (size_t)prog->n_instr);
  int64_t n_slots = 0;
  cr_assert_eq(dual_plan_build(prog, DUAL_MODE_JACOBIAN, 32, 0, 1, recs, &n_slots), 0);
  cr_log_info("kin: %lld packed slots vs %lld dense", (long long)n_slots,
              (long long)prog->n_active * 32);
  cr_assert_lt(n_slots, (int64_t)prog->n_active * 32 / 4);
  free(recs);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
