/*
 * test_draws.c — random draws in the language and the builder (normal(), uniform(),
 * normal(mu, sigma), uniform(a, b), nograd): what they compile to, the values every evaluation
 * mode sees (sample 0 of the context's seed, against dual/random.h, which test_random.c checks
 * against Philox's published answers), their pathwise derivatives against the hand-derived ones,
 * the numbering of draws in unrolled loops, and the errors for wrong arguments.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dual/random.h"
#include "dualbatch.h"
#include "test_arrays.h"

/* y = (normal(mu, s), uniform(a, b), x * nograd(x)) at B points, in both AD modes and two
 * seeds: values from the generator, Jacobian rows (1, z, 0, 0, 0), (0, 0, 1 - u, u, 0),
 * (0, 0, 0, 0, x). */
Test(draws, values_and_pathwise_derivatives) {
  static const char *src = "input mu\ninput s\ninput a\ninput b\ninput x\n"
                           "output n = normal(mu, s)\noutput u = uniform(a, b)\n"
                           "output g = x * nograd(x)\n";
  enum { B = 300, N = 5, M = 3 };
  static double xs[B * N], y[B * M], J[B * M * N];
  for (int q = 0; q < B; ++q)
    for (int i = 0; i < N; ++i) xs[q * N + i] = 0.25 * (i + 1) + 0.01 * q;
  static const uint64_t seeds[2] = {0, 12345};
  for (int mode = 0; mode < 2; ++mode)
    for (int k = 0; k < 2; ++k) {
      dual_context *ctx = mode_context(DUAL_DEVICE_CPU, mode ? DUAL_AD_REVERSE : DUAL_AD_FORWARD, 0);
      cr_assert_eq(dual_context_set_seed(ctx, seeds[k]), DUAL_SUCCESS);
      dual_program *prog = compile_ok(ctx, src);
      cr_assert_eq(dual_program_num_draws(prog), 2);
      cr_assert_eq(dual_jacobian(ctx, prog, B, xs, N, NULL, 0, y, M, J, M * N, NULL), DUAL_SUCCESS,
                   "%s", dual_context_last_error(ctx));
      for (int q = 0; q < B; ++q) {
        const double *x = xs + q * N, *yq = y + q * M, *Jq = J + q * M * N;
        const double z = dual_draw_normal(seeds[k], q, 0, 0), u = dual_draw_uniform(seeds[k], q, 0, 1);
        cr_assert_eq(yq[0], fma(x[1], z, x[0]), "point %d: normal(mu, s)", q);
        cr_assert_eq(yq[1], fma(x[3] - x[2], u, x[2]), "point %d: uniform(a, b)", q);
        cr_assert_eq(yq[2], x[4] * x[4]);
        const double want[M][N] = {{1, z, 0, 0, 0}, {0, 0, 1 - u, u, 0}, {0, 0, 0, 0, x[4]}};
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j)
            cr_assert(fabs(Jq[i * N + j] - want[i][j]) <= 1e-15, "mode %d point %d: J[%d][%d] %.17g, want %.17g",
                      mode, q, i, j, Jq[i * N + j], want[i][j]);
      }
      dual_program_destroy(&prog);
      dual_context_destroy(&ctx);
    }
}

/* Each unrolled call is its own draw, numbered in order: sum of four normal() has four draws
 * whose sum is the output. */
Test(draws, unrolled_calls_are_distinct_draws) {
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 0);
  dual_program *prog = compile_ok(ctx, "input x\noutput f = x + sum(i in 0..4, normal())\n");
  cr_assert_eq(dual_program_num_draws(prog), 4);
  double x[3] = {0.5, -1.0, 2.0}, y[3];
  cr_assert_eq(dual_eval(ctx, prog, 3, x, 1, NULL, 0, y, 1, NULL), DUAL_SUCCESS);
  for (int q = 0; q < 3; ++q) {
    double want = x[q];
    for (int k = 0; k < 4; ++k) want += dual_draw_normal(0, q, 0, k);
    cr_assert(fabs(y[q] - want) <= 1e-15 * (1 + fabs(want)), "point %d: %.17g vs %.17g", q, y[q], want);
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* The builder's draws match the language's. */
Test(draws, builder_draws) {
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 0);
  dual_builder *b = NULL;
  int32_t z, u, s;
  cr_assert_eq(dual_builder_create(ctx, &b), DUAL_SUCCESS);
  cr_assert_eq(dual_builder_normal(b, &z), DUAL_SUCCESS);
  cr_assert_eq(dual_builder_uniform(b, &u), DUAL_SUCCESS);
  const int32_t zu[2] = {z, u};
  cr_assert_eq(dual_builder_apply(b, "+", 2, zu, &s), DUAL_SUCCESS);
  cr_assert_eq(dual_builder_output(b, "s", s), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_builder_finish(b, &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  dual_builder_destroy(&b);
  cr_assert_eq(dual_context_set_seed(ctx, 77), DUAL_SUCCESS);
  double y[2];
  cr_assert_eq(dual_eval(ctx, prog, 2, NULL, 0, NULL, 0, y, 1, NULL), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
  for (int q = 0; q < 2; ++q)
    cr_assert_eq(y[q], dual_draw_normal(77, q, 0, 0) + dual_draw_uniform(77, q, 0, 1));
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(draws, wrong_arguments_are_reported) {
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 0);
  static const char *bad[] = {"input x\noutput f = normal(x)\n", "input x\noutput f = uniform(x, x, x)\n",
                              "input x\noutput f = nograd()\n", "input x\noutput f = normall()\n"};
  static const char *want[] = {"'normal' takes 0 arguments or 2 (mu, sigma), but 1 was given",
                               "'uniform' takes 0 arguments or 2 (a, b), but 3 were given",
                               "'nograd' takes 1 argument", "did you mean 'normal'?"};
  for (int i = 0; i < 4; ++i) {
    dual_program *prog = NULL;
    cr_assert_neq(dual_program_compile(ctx, bad[i], "bad", &prog), DUAL_SUCCESS);
    cr_assert(strstr(dual_context_last_error(ctx), want[i]) != NULL, "case %d: %s", i,
              dual_context_last_error(ctx));
  }
  dual_context_destroy(&ctx);
}
