/*
 * test_jit_source.c — the compiled GPU tier's source generator and compiler on the CPU: for the
 * benchmark programs and random programs covering every op, in every first-order mode, the
 * generated kernels compile with NVRTC (embedded headers, the library's fixed options) to a
 * CUBIN for sm_90, without a GPU; the generator emits exactly the lanes the plan says are
 * nonzero.  Skipped where NVRTC cannot be loaded.  (Running the kernels, bitwise against the
 * interpreter and the CPU, is test_gpu_engine's, on both tiers.)
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "bench_program.h"
#include "dualbatch.h"
#include "jit/jit_source.h"
#include "jit/jit_source2.h"
#include "jit/jit_source_rev.h"
#include "jit/rtc_compile.h"
#include "program.h"
#include "random_program.h"
#include "sgrad_score.h"

static void need_nvrtc(void) {
  char why[600];
  if (dual_rtc_version(why, sizeof why) == 0) cr_skip_test("%s", why);
}

/* NVRTC compiles generated source `src` to a CUBIN for sm_90. */
static void assert_compiles(const char *src) {
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  int st = dual_rtc_compile(src, 90, &image, &size, &log);
  cr_assert(st == DUAL_SUCCESS, "NVRTC failed (%s):\n%s\n--- source head ---\n%.3000s",
            dual_status_string(st), log ? log : "(no log)", src);
  cr_assert(size > 4 && memcmp(image, "\177ELF", 4) == 0, "the CUBIN is not an ELF image");
  free(image), free(log);
}

/* Generate and compile one module; returns the generated source (caller frees). */
static char *compile_module(const dual_program *prog, int mode, int width, int npass) {
  char why[256];
  char *src = dual_jit_source(prog, mode, width, npass, 0, why, sizeof why);
  cr_assert(src != NULL, "generator: %s", why);
  assert_compiles(src);
  return src;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *s = strstr(text, what); s; s = strstr(s + 1, what)) ++n;
  return n;
}

static const int modes[] = {DUAL_MODE_EVAL, DUAL_MODE_JVP, DUAL_MODE_JACOBIAN, DUAL_MODE_GRADIENT};

static void compile_all_modes(const dual_program *prog, int width) {
  for (int i = 0; i < 4; ++i) {
    if (modes[i] == DUAL_MODE_GRADIENT && prog->n_out != 1) continue;
    const int w = modes[i] == DUAL_MODE_EVAL ? 0 : modes[i] == DUAL_MODE_JVP ? 1 : width;
    const int npass = w == 0 || modes[i] == DUAL_MODE_JVP ? 1 : (prog->n_in + w - 1) / w;
    free(compile_module(prog, modes[i], w, npass));
  }
}

Test(jit_source, benchmark_programs_compile) {
  need_nvrtc();
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  static const char *names[] = {"ba", "kin", "hess", "sgrad"};
  for (int i = 0; i < 4; ++i) {
    dual_program *prog = bench_program(ctx, names[i]);
    compile_all_modes(prog, 16);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* Random programs: together they use every op callable by name, in each prop class. */
Test(jit_source, random_programs_compile) {
  need_nvrtc();
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 0x5eed1234u;
  for (int i = 0; i < 4; ++i) {
    dual_program *prog = rp_random_program(ctx, &rng, 120, 5, 2, i == 0 ? 1 : 3);
    cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
    compile_all_modes(prog, i % 2 ? 4 : 8);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* The lanes emitted: ba's Jacobian in one pass of 16 stages 2 x 15 derivative entries and no
 * more; every LDX of a Jacobian seeds one lane with 1.0; a JVP loads its direction instead. */
Test(jit_source, lanes_and_seeds) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *prog = bench_program(ctx, "ba");
  char why[256];
  char *src = dual_jit_source(prog, DUAL_MODE_JACOBIAN, 16, 1, 0, why, sizeof why);
  cr_assert(src != NULL, "%s", why);
  /* two bodies: the guarded function (first), then the kernel's plain body */
  cr_assert_eq(count(src, "DUAL_JIT_STAGE(") + count(src, "DUAL_JIT_STAGE_ZERO("), 2 * 2 * 15);
  cr_assert_eq(count(src, "DUAL_JIT_FLUSH_ALL("), 1, "ba's two rows are stored together");
  cr_assert_eq(count(src, "DUAL_JIT_FLUSH_Y("), 1);
  cr_assert_eq(count(src, "= DUAL_JIT_LDX("), 2 * 15);
  const char *kernel = strstr(src, "extern \"C\" __global__");
  cr_assert(kernel != NULL && count(src, "dual_jit_guarded_p0(") == 2);
  cr_assert(count(src, "DUAL_LANE_LIN(DUAL_TM,") > 0 && count(kernel, "DUAL_LANE_LIN(DUAL_TM,") == 0 &&
                count(src, "DUAL_LANE_LIN(DUAL_TF,") == count(kernel, "DUAL_LANE_LIN(DUAL_TF,"),
            "the guarded sums (DUAL_TM) belong to the guarded function, the plain ones to the kernel");
  cr_assert(count(kernel, "bad_ = max(bad_,") > 0, "the plain body notes non-finite partials");
  cr_assert(count(kernel, "DUAL_VALUE_STEP(") > 0 && count(src, "dual_rule_") == 0,
            "every value goes through the interpreters' step (engine/value_step.h)");
  cr_assert_eq(count(src, "_0 = 1.0;") + count(src, "_14 = 1.0;") > 0, 1);
  cr_assert_eq(count(src, "DUAL_JIT_LDV("), 0);
  free(src);
  src = dual_jit_source(prog, DUAL_MODE_JVP, 1, 1, 0, why, sizeof why);
  cr_assert(src != NULL, "%s", why);
  cr_assert_eq(count(src, "DUAL_JIT_LDV("), 2 * 15);
  cr_assert_eq(count(src, "DUAL_JIT_FLUSH_ALL("), 1);
  free(src);
  src = dual_jit_source(prog, DUAL_MODE_EVAL, 0, 1, 0, why, sizeof why);
  cr_assert(src != NULL, "%s", why);
  cr_assert_eq(count(src, "DUAL_JIT_FLUSH(") + count(src, "DUAL_JIT_FLUSH_ALL("), 0);
  cr_assert_eq(count(src, ", t") + count(src, "DUAL_TF(") + count(src, "DUAL_CHOOSE_T("), 0,
               "an evaluation kernel has no tangent");
  cr_assert_eq(count(src, "dual_jit_guarded"), 0, "an evaluation kernel needs no guarded body");
  free(src);
  dual_program_destroy(&prog);
  /* kin (32 outputs x 16 lanes per pass) stages one output row at a time */
  prog = bench_program(ctx, "kin");
  src = dual_jit_source(prog, DUAL_MODE_JACOBIAN, 16, 2, 0, why, sizeof why);
  cr_assert(src != NULL, "%s", why);
  cr_assert_eq(count(src, "DUAL_JIT_FLUSH("), 2 * 2 * 32);
  cr_assert_eq(count(src, "DUAL_JIT_FLUSH_ALL("), 0);
  free(src);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* Second order (jit/jit_source2.c): hess's Hessian (one block of 16: 136 pairs) and HVP compile
 * with NVRTC, one kernel per pass, each component of the plan emitted once. */
Test(jit_source, second_order_kernels_compile) {
  need_nvrtc();
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *prog = bench_program(ctx, "hess");
  dual_batch b;
  dual_batch_init(&b);
  b.h_layout = DUAL_HESSIAN_FULL;
  const int modes2[2] = {DUAL_MODE_HESSIAN, DUAL_MODE_HVP}, widths[2] = {16, 8};
  const int passes[2] = {1, 2}; /* one diagonal block of 16; the HVP's 16 inputs in chunks of 8 */
  for (int i = 0; i < 2; ++i) {
    dual_job job;
    memset(&job, 0, sizeof job);
    job.prog = prog, job.b = &b, job.mode = modes2[i], job.width = widths[i], job.threads = 1;
    int npass = 0;
    char why[256];
    char *src = dual_jit_source2(&job, &npass, why, sizeof why);
    cr_assert(src != NULL, "generator: %s", why);
    cr_assert_eq(npass, passes[i], "mode %d: %d passes", modes2[i], npass);
    cr_assert_eq(count(src, "extern \"C\" __global__"), npass);
    cr_assert(count(src, "DUAL_JIT2_STAGE_H(") > 0 && count(src, "DUAL_JIT2_FLUSH_H(") > 0 && count(src, "dual_rule_") == 0);
    assert_compiles(src);
    free(src);
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* Forward-over-reverse (jit/jit_source_rev.c): hess's Hessian, one kernel of four groups of four
 * directions and four kernels of one group, compiles with NVRTC; the same text at n = 32
 * (31 936 terms) is refused by its rule with the reason. */
Test(jit_source, forward_over_reverse_kernels_compile_and_their_rule_refuses) {
  need_nvrtc();
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *prog = bench_program(ctx, "hess");
  dual_batch b;
  dual_batch_init(&b);
  b.h_layout = DUAL_HESSIAN_FULL;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = DUAL_MODE_HESSIAN, job.threads = 1, job.reverse = 1;
  for (int groups = 0; groups <= 1; ++groups) { /* 0: all in one kernel */
    job.groups = groups;
    const int kernels = groups == 1 ? 4 : 1;
    int npass = 0;
    char why[256];
    char *src = dual_jit_source_rev(&job, 0, &npass, why, sizeof why);
    cr_assert(src != NULL, "generator: %s", why);
    cr_assert_eq(npass, kernels);
    cr_assert_eq(count(src, "extern \"C\" __global__"), kernels);
    cr_assert_eq(count(src, "    { /* directions "), 2 * 4, "a scope per group, in both copies");
    /* the upper triangle, each entry staged once (its mirror from the same slot), and the
     * 16 x 16 Hessian flushed by 64 chunks of 4 elements, the gradient by 4 — in each of the two
     * copies of every kernel: the plain one and the guarded function it calls when a stored
     * entry came out NaN or infinite */
    cr_assert(count(src, "DUAL_JIT2_STAGE_H(") == 2 * 136);
    cr_assert(count(src, "dual_rule_") == 0);
    cr_assert(count(src, "DUAL_JIT2_FLUSH_H(") == 2 * 64 && count(src, "DUAL_JIT2_FLUSH_D(") == 2 * 4);
    for (int p = 0; p < kernels; ++p) { /* defined, then called once, after its kernel's plain copy */
      char name[64];
      snprintf(name, sizeof name, "dual_jit2_guarded_p%d(", p);
      cr_assert_eq(count(src, name), 2, "%s", name);
    }
    cr_assert_eq(count(src, "#define DUAL_RTM DUAL_TF\n"), kernels);
    cr_assert_eq(count(src, "#define DUAL_RTM DUAL_TM\n"), kernels);
    assert_compiles(src);
    free(src);
  }
  job.groups = 0;
  dual_program_destroy(&prog);
  const char *text =
      "input x[32]\n"
      "let rosen = sum(i in 0..31, 100 * square(x[i + 1] - square(x[i])) + square(1 - x[i]))\n"
      "let lse = log(sum(i in 0..32, exp(x[i])))\n"
      "output f = rosen + lse\n";
  cr_assert(dual_program_compile(ctx, text, "hess32", &prog) == DUAL_SUCCESS, "%s",
            dual_context_last_error(ctx));
  job.prog = prog;
  cr_assert(dual_jit_rev_sums(&job) > DUAL_JIT_MAX_REV_TERMS);
  int npass = 0;
  char why[256];
  cr_assert(dual_jit_source_rev(&job, 0, &npass, why, sizeof why) == NULL);
  cr_assert(strstr(why, "forward-over-reverse") != NULL && strstr(why, "rule") != NULL, "%s", why);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* Reverse mode (jit/jit_source_rev.c without directions): ba's Jacobian by rows, its VJP and
 * hess's gradient compile with NVRTC as one kernel each; grad (n = 1024, 6145 instructions) as a
 * looped kernel (jit_rev_loops.c: its two runs a loop forward and one backward each); a running
 * product of 1602 instructions in segments; a two-output Jacobian over the instruction rule is
 * refused with the reason. */
Test(jit_source, reverse_mode_kernels_compile_and_their_rule_refuses) {
  need_nvrtc();
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  const char *names[3] = {"ba", "ba", "hess"};
  const int mode[3] = {DUAL_MODE_JACOBIAN, DUAL_MODE_VJP, DUAL_MODE_GRADIENT};
  dual_batch b;
  dual_batch_init(&b);
  dual_job job;
  memset(&job, 0, sizeof job);
  job.b = &b, job.threads = 1, job.reverse = 1;
  for (int i = 0; i < 3; ++i) {
    dual_program *prog = bench_program(ctx, names[i]);
    job.prog = prog, job.mode = mode[i];
    int npass = 0;
    char why[256];
    char *src = dual_jit_source_rev(&job, 0, &npass, why, sizeof why);
    cr_assert(src != NULL, "generator: %s", why);
    cr_assert_eq(npass, 1);
    /* a Jacobian's rows: one sweep per output, each row flushed by chunks; a VJP's one sweep */
    cr_assert_eq(count(src, "DUAL_JIT_LDU("), mode[i] == DUAL_MODE_VJP ? 2 * (int)prog->n_out : 0);
    cr_assert_eq(count(src, "DUAL_JIT2_STAGE_D("), /* the plain copy and the guarded one */
                 2 * (int)(prog->n_in * (mode[i] == DUAL_MODE_JACOBIAN ? prog->n_out : 1)));
    cr_assert_eq(count(src, "DUAL_JIT2_STAGE_H(") + count(src, "dual_rule2_"), 0);
    assert_compiles(src);
    free(src);
    dual_program_destroy(&prog);
  }
  /* grad (6145 instructions): two loops each way, the 1022 + 2 entries of the straight pieces
   * and the ring's loop stored directly (the norm's loop only adds to the inputs' adjoints) */
  dual_program *grad = bench_program(ctx, "grad");
  job.prog = grad, job.mode = DUAL_MODE_GRADIENT;
  int npass = 0;
  char why[256];
  char *gsrc = dual_jit_source_rev(&job, 0, &npass, why, sizeof why);
  cr_assert(gsrc != NULL, "generator: %s", why);
  cr_assert(strstr(gsrc, "looped") != NULL);
  cr_assert_eq(count(gsrc, "for (int64_t k_ = "), 4);
  cr_assert_eq(count(gsrc, "DUAL_JIT2_PUT_D("), 3, "x[0], x[1] and the ring's loop");
  cr_assert_lt(strlen(gsrc), 10000);
  assert_compiles(gsrc);
  free(gsrc);
  dual_program_destroy(&grad);
  /* loops over DUAL_JIT_LOOP_MAX_INPUTS inputs are looped, over it not (an adjoint per input in
   * each thread's local memory): refused there, over the segments' rule */
  for (int more = 0; more < 2; ++more) {
    char text[160];
    snprintf(text, sizeof text, "input x[%d]\noutput f = sum(i in 0..%d, sin(x[i]) * x[i])\n",
             DUAL_JIT_LOOP_MAX_INPUTS + more, DUAL_JIT_LOOP_MAX_INPUTS + more);
    dual_program *wide = NULL;
    cr_assert(dual_program_compile(ctx, text, "wide", &wide) == DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    job.prog = wide, job.mode = DUAL_MODE_GRADIENT;
    char *wsrc = dual_jit_source_rev(&job, 0, &npass, why, sizeof why);
    cr_assert_eq(wsrc != NULL, !more, "%d inputs: %s", DUAL_JIT_LOOP_MAX_INPUTS + more, why);
    if (!more) cr_assert(strstr(wsrc, "looped") != NULL);
    else cr_assert(strstr(why, "rule") != NULL, "%s", why);
    free(wsrc);
    dual_program_destroy(&wide);
  }
  /* a running product of 400 terms (1602 instructions; no loop: its carried value is needed
   * backward): seven segments of at most 256 instructions, a forward and an adjoint function
   * each, compiled by NVRTC */
  dual_program *p400 = NULL;
  cr_assert(dual_program_compile(ctx, "input x[400]\noutput f = prod(i in 0..400, 1 + 0.001 * x[i])\n",
                                 "prod400", &p400) == DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(p400->n_instr, 1602);
  job.prog = p400, job.mode = DUAL_MODE_GRADIENT;
  char *src = dual_jit_source_rev(&job, 0, &npass, why, sizeof why);
  cr_assert(src != NULL, "generator: %s", why);
  cr_assert(strstr(src, "segmented") != NULL);
  cr_assert_eq(count(src, "__noinline__ __device__ void dual_jit2_p0_f"), 7);
  cr_assert_eq(count(src, "__noinline__ __device__ void dual_jit2_p0_a"), 7);
  cr_assert_eq(count(src, "DUAL_JIT2_STAGE_D("), 400);
  assert_compiles(src);
  free(src);
  dual_program_destroy(&p400);
  /* a Jacobian of two outputs over the instruction rule is refused with the reason */
  const char *text =
      "input x[200]\n"
      "let ring = sum(i in 0..199, sin(x[i]) * x[i + 1]) + sin(x[199]) * x[0]\n"
      "output f = ring\n"
      "output g = log1p(sum(i in 0..200, square(x[i])))\n";
  dual_program *two = NULL;
  cr_assert(dual_program_compile(ctx, text, "two", &two) == DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  job.prog = two, job.mode = DUAL_MODE_JACOBIAN;
  cr_assert(dual_jit_source_rev(&job, 0, &npass, why, sizeof why) == NULL);
  cr_assert(strstr(why, "instructions") != NULL && strstr(why, "rule") != NULL, "%s", why);
  dual_program_destroy(&two);
  dual_context_destroy(&ctx);
}

/* The compile-time rule (DUAL_JIT_MAX_LANE_SUMS): a program whose 16 inputs reach every value
 * (so every one of its ~1 500 computing instructions carries 16 lanes) is refused with the
 * reason, before any source is written; kin (two passes of 16: 1 600 sums) and hess's Hessian
 * are under it (the tests above compile them). */
Test(jit_source, the_lane_sum_rule_refuses_dense_programs) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  char *text = malloc(1 << 20);
  int len = snprintf(text, 1 << 20, "input x[16]\nlet s = x[0]\n");
  for (int i = 0; i < 500; ++i)
    len += snprintf(text + len, (size_t)(1 << 20) - (size_t)len, "s = sin(s) * x[%d] + x[%d]\n",
                    i % 16, (i + 5) % 16);
  snprintf(text + len, (size_t)(1 << 20) - (size_t)len, "output f = s\n");
  dual_program *prog = NULL;
  cr_assert(dual_program_compile(ctx, text, "dense", &prog) == 0, "%s", dual_context_last_error(ctx));
  free(text);
  char why[256];
  /* after the first 16 statements every value carries all 16 lanes: about 3 x 500 x 16 sums */
  char *src = dual_jit_source(prog, DUAL_MODE_JACOBIAN, 16, 1, 0, why, sizeof why);
  cr_assert_null(src, "a dense program of %lld instructions was generated", (long long)prog->n_instr);
  cr_assert(strstr(why, "tangent-lane sums") != NULL, "reason: %s", why);
  /* values only: no lanes, no rule */
  src = dual_jit_source(prog, DUAL_MODE_EVAL, 0, 1, 0, why, sizeof why);
  cr_assert_not_null(src, "%s", why);
  free(src);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* dual_sgrad's kernels (jit_source.c, dual_jit_source_sgrad): a pathwise module of one pass and a
 * score-function module of two passes (20 inputs) compile with NVRTC; each kernel runs the
 * sample loop and folds its columns, the first one E f too, and the draws take the loop's
 * sample; so do their reverse-mode kernels (jit_source_rev.c).  A sample row over the stage
 * (forward: score, 32 lanes; reverse: score, 30 inputs) and a pathwise program of two outputs
 * are refused with the reason. */
Test(jit_source, sgrad_kernels_compile) {
  need_nvrtc();
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *pw = NULL, *sf = NULL, *two = NULL;
  cr_assert(dual_program_compile(ctx, "input x[3]\nparam s\noutput f = exp(normal(x[0], s)) * "
                                      "sin(x[1] + uniform()) + x[2] * normal()^2\n", "pw", &pw) == 0,
            "%s", dual_context_last_error(ctx));
  cr_assert(dual_program_compile(ctx, "input x[20]\noutput f = sum(i in 0..20, "
                                      "(normal(x[i], 0.5) > 0) * (1 + x[i]^2))\n", "sf", &sf) == 0,
            "%s", dual_context_last_error(ctx));
  dual_program *score = NULL;
  cr_assert(dual_sgrad_score_program(ctx, sf, &score) == DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  const struct {
    const dual_program *prog;
    int score, width, npass;
  } cases[2] = {{pw, 0, 4, 1}, {score, 1, 16, 2}};
  char why[256];
  for (int i = 0; i < 2; ++i) {
    char *src = dual_jit_source_sgrad(cases[i].prog, cases[i].score, cases[i].width, cases[i].npass, 0,
                                      why, sizeof why);
    cr_assert(src != NULL, "generator: %s", why);
    cr_assert_eq(count(src, "extern \"C\" __global__"), cases[i].npass);
    cr_assert_eq(count(src, "DUAL_JIT_SGRAD_BEGIN("), cases[i].npass);
    cr_assert_eq(count(src, "DUAL_JIT_SGRAD_STORE_F("), 1, "E f: the first pass only");
    cr_assert_eq(count(src, "DUAL_JIT_SGRAD_STORE("), cases[i].prog->n_in, "one gradient entry per input");
    cr_assert_eq(count(src, "DUAL_JIT_SGRAD_FOLD("), 1 + cases[i].prog->n_in);
    cr_assert_eq(count(src, "#define DUAL_JIT_SAMPLE sample_"), 1);
    cr_assert_eq(count(src, "DUAL_JIT_FLUSH"), 0, "no row of a sample leaves the stage");
    assert_compiles(src);
    free(src);
  }
  /* reverse mode (jit_source_rev.c): one kernel, a thread per sample, the warp's fold; the
   * score program's rows of 20 inputs (2 + 40 doubles) fit, 30 inputs' (62) do not */
  for (int i = 0; i < 2; ++i) {
    dual_batch b;
    dual_batch_init(&b);
    dual_job job;
    memset(&job, 0, sizeof job);
    job.prog = cases[i].prog, job.b = &b, job.threads = 1, job.reverse = 1, job.samples = 64;
    job.score = cases[i].score, job.mode = cases[i].score ? DUAL_MODE_JACOBIAN : DUAL_MODE_GRADIENT;
    int npass = 0;
    char *src = dual_jit_source_rev(&job, 0, &npass, why, sizeof why);
    cr_assert(src != NULL, "generator: %s", why);
    cr_assert_eq(npass, 1);
    cr_assert_eq(count(src, "DUAL_JIT_SAMPLES_BEGIN"), 1);
    cr_assert_eq(count(src, "DUAL_JIT2_SGRAD_PUT("), 2 * job.prog->n_out * job.prog->n_in,
                 "each gradient entry of each output, in the fast and the guarded copy");
    cr_assert_eq(count(src, "#define DUAL_JIT_SAMPLE sample_"), 1);
    assert_compiles(src);
    free(src);
  }
  {
    dual_program *sf30 = NULL, *score30 = NULL;
    cr_assert(dual_program_compile(ctx, "input x[30]\noutput f = sum(i in 0..30, "
                                        "(normal(x[i], 0.5) > 0) * x[i])\n", "sf30", &sf30) == 0);
    cr_assert(dual_sgrad_score_program(ctx, sf30, &score30) == DUAL_SUCCESS);
    dual_batch b;
    dual_batch_init(&b);
    dual_job job;
    memset(&job, 0, sizeof job);
    job.prog = score30, job.b = &b, job.threads = 1, job.reverse = 1, job.samples = 64, job.score = 1;
    job.mode = DUAL_MODE_JACOBIAN;
    int npass = 0;
    cr_assert_null(dual_jit_source_rev(&job, 0, &npass, why, sizeof why));
    cr_assert(strstr(why, "sample row") != NULL, "reason: %s", why);
    dual_program_destroy(&sf30), dual_program_destroy(&score30);
  }
  cr_assert_null(dual_jit_source_sgrad(score, 1, 32, 1, 0, why, sizeof why));
  cr_assert(strstr(why, "staging limit") != NULL, "reason: %s", why);
  cr_assert(dual_program_compile(ctx, "input x\noutput f = x * normal()\noutput g = x\n", "two", &two) == 0);
  cr_assert_null(dual_jit_source_sgrad(two, 0, 1, 1, 0, why, sizeof why));
  cr_assert(strstr(why, "outputs") != NULL, "reason: %s", why);
  dual_program_destroy(&pw), dual_program_destroy(&sf), dual_program_destroy(&score);
  dual_program_destroy(&two);
  dual_context_destroy(&ctx);
}
