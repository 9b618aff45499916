/*
 * test_gpu_jit.c — the compiled GPU tier's policy on a GPU: AUTO interprets while the kernel
 * compiles in the background and then switches, bitwise equal (first-order forward mode; second
 * order, reverse mode and dual_sgrad, whose knobs keep them interpreted); a disk cache entry
 * written by another process is used on the first call; a corrupt entry is ignored and
 * rebuilt; no NVRTC, a compile failure and a load failure fall back under AUTO (with a note
 * saying why) and fail with DUAL_ERR_COMPILE under COMPILE; column-major and strided results
 * through the warp-staged stores.  The cases that need a fresh process run
 * tests/tools/gpu_jit_child (exec, not fork: a forked child of a CUDA process cannot use CUDA,
 * nor can compute-sanitizer follow it).  The tier and cache are set per context, so this file
 * ignores DUALBATCH_TIER.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_program.h"
#include "dualbatch.h"
#include "random_program.h"
#include "test_arrays.h"

static dual_context *tier_context(int device, int tier, const char *cache) {
  dual_context *ctx = NULL;
  int st = dual_context_create(&ctx, device);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_tier(ctx, tier), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_cache_dir(ctx, cache), DUAL_SUCCESS);
  return ctx;
}

/* A fresh cache directory under the build tree. */
static void fresh_cache(char *dir, size_t cap, const char *name) {
  snprintf(dir, cap, "%s/jit-test-cache-%s-%d", DUAL_BINARY_DIR, name, (int)getpid());
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert(system(cmd) == 0);
}

typedef struct out {
  double *y, *J;
  int32_t *st;
} out;

/* A Jacobian of B points (x: n per point, p: np) into fresh arrays. */
static out run_jacobian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                        const double *p, int expect) {
  const int64_t n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog),
                np = dual_program_num_params(prog);
  out o = {calloc((size_t)(B * m), 8), calloc((size_t)(B * m * n), 8), calloc((size_t)B, 4)};
  int st = dual_jacobian(ctx, prog, B, x, n, p, np, o.y, m, o.J, m * n, o.st);
  cr_assert_eq(st, expect, "status %d (%s): %s", st, dual_status_string(st), dual_context_last_error(ctx));
  return o;
}

static void same(const out *a, const out *b, int64_t B, int64_t m, int64_t n, const char *what) {
  for (int64_t i = 0; i < B * m; ++i)
    cr_assert(same_bits(a->y[i], b->y[i]), "%s: value %lld differs", what, (long long)i);
  for (int64_t i = 0; i < B * m * n; ++i)
    cr_assert(same_bits(a->J[i], b->J[i]), "%s: derivative %lld differs: %.17g vs %.17g", what,
              (long long)i, a->J[i], b->J[i]);
  cr_assert(memcmp(a->st, b->st, sizeof(int32_t) * (size_t)B) == 0, "%s: status differs", what);
}

static void out_free(out *o) { free(o->y), free(o->J), free(o->st); }

static double *points(uint64_t *rng, int64_t count) { return random_array(rng, count, -1.2, 1.2); }

Test(gpu_jit, auto_interprets_then_switches) {
  need_gpu();
  char cache[1024];
  fresh_cache(cache, sizeof cache, "auto");
  dual_context *cpu = tier_context(DUAL_DEVICE_CPU, DUAL_TIER_AUTO, cache);
  dual_context *gpu = tier_context(DUAL_DEVICE_GPU, DUAL_TIER_AUTO, cache);
  uint64_t rng = 77;
  dual_program *prog = rp_random_program(cpu, &rng, 90, 6, 2, 3);
  cr_assert_not_null(prog);
  const int64_t B = 3000;
  double *x = points(&rng, B * 6), *p = points(&rng, B * 2);
  out ref = run_jacobian(cpu, prog, B, x, p, DUAL_SUCCESS);
  out first = run_jacobian(gpu, prog, B, x, p, DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_INTERPRET, "a cold program ran compiled");
  cr_assert(strstr(dual_context_last_note(gpu), "compiling in the background") != NULL, "note: %s",
            dual_context_last_note(gpu));
  same(&ref, &first, B, 3, 6, "interpreted vs CPU");
  int calls = 1;
  const time_t start = time(NULL);
  while (dual_context_last_tier(gpu) != DUAL_TIER_COMPILE && time(NULL) - start < 120) {
    out o = run_jacobian(gpu, prog, B, x, p, DUAL_SUCCESS);
    same(&ref, &o, B, 3, 6, "while compiling");
    out_free(&o);
    ++calls;
    usleep(20000);
  }
  cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_COMPILE, "never switched to the compiled tier");
  cr_assert_str_eq(dual_context_last_note(gpu), "");
  out o = run_jacobian(gpu, prog, B, x, p, DUAL_SUCCESS);
  same(&ref, &o, B, 3, 6, "compiled vs CPU");
  cr_log_info("AUTO switched to the compiled tier after %d interpreted calls", calls);
  int64_t entries = 0, bytes = 0;
  cr_assert_eq(dual_context_cache_usage(gpu, NULL, 0, &entries, &bytes), DUAL_SUCCESS);
  cr_assert_eq(entries, 1, "the background compile did not store its entry");
  out_free(&o), out_free(&ref), out_free(&first);
  free(x), free(p);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* The products beyond first-order forward mode, under AUTO with the knobs at their defaults:
 * nested and forward-over-reverse Hessians, reverse-mode gradients, dual_sgrad in both modes. */
enum { PROD_HESS_NESTED, PROD_HESS_FOR, PROD_GRAD_REV, PROD_SGRAD_FWD, PROD_SGRAD_REV, PROD_COUNT };
static const char *const PROD_NAMES[PROD_COUNT] = {"nested Hessian", "forward-over-reverse Hessian",
                                                   "reverse gradient", "forward sgrad", "reverse sgrad"};
enum { PN = 5 };
static const char *SMOOTH = "input x[5]\noutput f = sin(x[0]*x[1]) + exp(0.3*x[2])*x[3] + x[4]^3/(1 + x[0]^2)"
                            " + log1p(x[1]^2 + x[3]^2)\n";
static const char *DRAWN = "input x[5]\nlet y[5]\nfor i in 0..5 { y[i] = x[i] + 0.1 * normal() }\n"
                           "output f = sum(i in 0..4, (y[i+1] - y[i]^2)^2) + log(sum(i in 0..5, exp(y[i])))\n";

/* One call of product `k` over B points into `o` (1 + n + n*n doubles per point, packed by
 * entry); returns the call's status. */
static int run_product(dual_context *ctx, const dual_program *prog, int k, int64_t B, const double *x,
                       double *o) {
  const int64_t n = PN;
  double *f = o, *g = o + B, *h = o + B + B * n;
  dual_context_set_ad_mode(ctx, k == PROD_HESS_NESTED || k == PROD_SGRAD_FWD ? DUAL_AD_FORWARD : DUAL_AD_REVERSE);
  switch (k) {
  case PROD_HESS_NESTED:
  case PROD_HESS_FOR:
    return dual_hessian(ctx, prog, B, x, n, NULL, 0, f, 1, g, n, h, n * n, DUAL_HESSIAN_FULL, NULL);
  case PROD_GRAD_REV: return dual_gradient(ctx, prog, B, x, n, NULL, 0, f, g, n, NULL);
  default: return dual_sgrad(ctx, prog, B, x, n, NULL, 0, 64, 9, 0, f, g, n, h, n, NULL);
  }
}

Test(gpu_jit, auto_compiles_second_order_reverse_and_sgrad) {
  need_gpu();
  char cache[1024];
  fresh_cache(cache, sizeof cache, "auto2");
  dual_context *cpu = tier_context(DUAL_DEVICE_CPU, DUAL_TIER_AUTO, cache);
  dual_program *smooth = NULL, *drawn = NULL;
  cr_assert_eq(dual_program_compile(cpu, SMOOTH, "smooth", &smooth), DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
  cr_assert_eq(dual_program_compile(cpu, DRAWN, "drawn", &drawn), DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
  uint64_t rng = 31;
  const int64_t B = 700, len = B * (1 + PN + PN * PN);
  double *x = points(&rng, B * PN), *ref = calloc((size_t)len, 8), *o = calloc((size_t)len, 8);
  for (int k = 0; k < PROD_COUNT; ++k) {
    const dual_program *prog = k >= PROD_SGRAD_FWD ? drawn : smooth;
    memset(ref, 0, (size_t)len * 8);
    cr_assert_eq(run_product(cpu, prog, k, B, x, ref), DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
    /* with its knob off the product stays on the interpreter */
    dual_context *off = tier_context(DUAL_DEVICE_GPU, DUAL_TIER_AUTO, cache);
    const int knob = k >= PROD_SGRAD_FWD ? DUAL_KNOB_JIT_SGRAD : k == PROD_GRAD_REV ? DUAL_KNOB_JIT_REVERSE
                                                                                    : DUAL_KNOB_JIT_SECOND;
    cr_assert_eq(dual_context_set_knob(off, knob, 0), DUAL_SUCCESS);
    memset(o, 0, (size_t)len * 8);
    cr_assert_eq(run_product(off, prog, k, B, x, o), DUAL_SUCCESS, "%s", dual_context_last_error(off));
    cr_assert_eq(dual_context_last_tier(off), DUAL_TIER_INTERPRET, "%s with its knob off", PROD_NAMES[k]);
    cr_assert(memcmp(ref, o, (size_t)len * 8) == 0, "%s, interpreted: not bitwise the CPU's", PROD_NAMES[k]);
    dual_context_destroy(&off);
    /* by default: interpreted while its kernel compiles, then compiled, bitwise the same */
    dual_context *gpu = tier_context(DUAL_DEVICE_GPU, DUAL_TIER_AUTO, cache);
    int calls = 0;
    const time_t start = time(NULL);
    do {
      memset(o, 0, (size_t)len * 8);
      cr_assert_eq(run_product(gpu, prog, k, B, x, o), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
      cr_assert(memcmp(ref, o, (size_t)len * 8) == 0, "%s, call %d (%s): not bitwise the CPU's",
                PROD_NAMES[k], calls, dual_context_last_tier(gpu) == DUAL_TIER_COMPILE ? "compiled" : "interpreted");
      if (calls++ == 0)
        cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_INTERPRET, "%s: a cold kernel ran", PROD_NAMES[k]);
      else usleep(20000);
    } while (dual_context_last_tier(gpu) != DUAL_TIER_COMPILE && time(NULL) - start < 180);
    cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_COMPILE, "%s never switched: %s", PROD_NAMES[k],
                 dual_context_last_note(gpu));
    cr_log_info("%s: compiled after %d interpreted calls", PROD_NAMES[k], calls - 1);
    dual_context_destroy(&gpu);
  }
  free(x), free(ref), free(o);
  dual_program_destroy(&smooth), dual_program_destroy(&drawn);
  dual_context_destroy(&cpu);
}

/* Run gpu_jit_child (tests/tools/gpu_jit_child.c) with `args` in a fresh process, started with
 * exec (CUDA starts afresh in it, and compute-sanitizer follows it); it must exit 0. */
static void run_child(const char *args, const char *what) {
  char cmd[2400];
  snprintf(cmd, sizeof cmd, "'%s' %s", DUAL_JIT_CHILD, args);
  fflush(NULL);
  const int rc = system(cmd);
  cr_assert(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "%s (gpu_jit_child %s: status %d)", what, args,
            rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
}

Test(gpu_jit, disk_cache_serves_the_first_call_and_corrupt_entries_are_rebuilt) {
  need_gpu();
  char cache[1024], args[1200];
  fresh_cache(cache, sizeof cache, "disk");
  snprintf(args, sizeof args, "compile '%s' ba", cache);
  run_child(args, "the child's COMPILE run failed"); /* another process writes the entry */
  snprintf(args, sizeof args, "first-call '%s'", cache);
  run_child(args, "a fresh process did not run its first call from the disk cache, bitwise");
  /* corrupt the entry: this process has never loaded the kernel, so it must read the disk */
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "for f in '%s'/*.cubin; do printf 'XXXX' | dd of=\"$f\" bs=1 seek=200 conv=notrunc status=none; done", cache);
  cr_assert(system(cmd) == 0);
  dual_context *cpu = tier_context(DUAL_DEVICE_CPU, DUAL_TIER_AUTO, cache);
  dual_context *gpu = tier_context(DUAL_DEVICE_GPU, DUAL_TIER_AUTO, cache);
  int64_t entries = 0, bytes = 0;
  cr_assert_eq(dual_context_cache_usage(gpu, NULL, 0, &entries, &bytes), DUAL_SUCCESS);
  cr_assert(entries == 1 && bytes > 1000, "entries %lld, bytes %lld", (long long)entries, (long long)bytes);
  dual_program *prog = bench_program(cpu, "ba");
  uint64_t rng = 5;
  const int64_t B = 5000;
  double *x = points(&rng, B * 15), *p = points(&rng, B * 2);
  for (int64_t i = 0; i < B; ++i) x[i * 15 + 13] += 10.0, x[i * 15 + 14] = 1.0;
  out ref = run_jacobian(cpu, prog, B, x, p, DUAL_SUCCESS);
  out a = run_jacobian(gpu, prog, B, x, p, DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_INTERPRET, "a corrupt entry was loaded");
  same(&ref, &a, B, 2, 15, "interpreted");
  out_free(&a);
  /* COMPILE waits for the rebuild (queued by the AUTO call), which rewrites the entry */
  cr_assert_eq(dual_context_set_tier(gpu, DUAL_TIER_COMPILE), DUAL_SUCCESS);
  a = run_jacobian(gpu, prog, B, x, p, DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_COMPILE);
  same(&ref, &a, B, 2, 15, "compiled after the rebuild");
  out_free(&a);
  snprintf(cmd, sizeof cmd, "for f in '%s'/*.cubin; do dd if=\"$f\" bs=1 skip=200 count=4 status=none; done | grep -q XXXX", cache);
  cr_assert(system(cmd) != 0, "the corrupt entry was not rewritten");
  int64_t removed = 0;
  cr_assert_eq(dual_context_cache_clear(cpu, &removed), DUAL_SUCCESS);
  cr_assert_eq(removed, 1);
  out_free(&ref);
  free(x), free(p);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* In a fresh process (NVRTC is loaded once per process), with the environment `var`=`value`:
 * COMPILE fails with DUAL_ERR_COMPILE naming `why`, AUTO succeeds interpreted with a note
 * naming it. */
static void fallback_case(const char *var, const char *value, const char *why) {
  char args[1200], what[400];
  snprintf(args, sizeof args, "fallback %s %s '%s'", var, value, why);
  snprintf(what, sizeof what, "%s=%s: the fallback did not behave", var, value);
  run_child(args, what);
}

/* Processes that exit right after an AUTO call (the CLI: one Jacobian, then return from main)
 * while their kernels compile in the background, sixteen at once so that each compile is slow:
 * every process exits normally and each compile still lands in its disk cache (it runs in a child
 * process, jit/rtc_child.h).  When the compile ran in a thread of the exiting process, NVRTC's
 * teardown at exit crashed it or hung it: 3 CLI runs in 16 on a fresh H200 machine. */
Test(gpu_jit, exit_during_a_background_compile_is_clean) {
  need_gpu();
  enum { RUNS = 16 };
  char cache[1024], cmd[8192];
  fresh_cache(cache, sizeof cache, "exit");
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", cache);
  cr_assert(system(cmd) == 0);
  for (int k = 0; k < RUNS; ++k) { /* a new kernel for each process */
    char name[1200];
    snprintf(name, sizeof name, "%s/p%d.db", cache, k);
    FILE *f = fopen(name, "w");
    cr_assert_not_null(f);
    fprintf(f, "input x[3]\noutput f = x[0] * x[1] + sin(x[2]) * %d + exp(x[0] * x[2])\n", k + 2);
    fclose(f);
  }
  snprintf(cmd, sizeof cmd,
           "cd '%s' && for k in $(seq 0 %d); do ( echo 1,2,3 | DUALBATCH_TIER=auto DUALBATCH_DEVICE=gpu "
           "DUALBATCH_CACHE_DIR=c$k timeout 120 '%s/tools/dualbatch' jacobian p$k.db > /dev/null 2> err$k; "
           "echo $? > rc$k ) & done; wait",
           cache, RUNS - 1, DUAL_BINARY_DIR);
  cr_assert(system(cmd) == 0);
  for (int k = 0; k < RUNS; ++k) {
    char name[1200];
    snprintf(name, sizeof name, "%s/rc%d", cache, k);
    FILE *f = fopen(name, "r");
    int rc = -1;
    cr_assert(f != NULL && fscanf(f, "%d", &rc) == 1, "run %d left no exit status", k);
    fclose(f);
    cr_expect_eq(rc, 0, "run %d: the CLI ended with status %d (124: it hung at exit)", k, rc);
  }
  /* each CUBIN arrives when its compile ends, in at most a minute */
  int missing = RUNS;
  for (int t = 0; t < 600 && missing > 0; ++t) {
    missing = 0;
    for (int k = 0; k < RUNS; ++k) {
      snprintf(cmd, sizeof cmd, "ls '%s/c%d' 2>/dev/null | grep -q '\\.cubin$'", cache, k);
      missing += system(cmd) != 0;
    }
    if (missing > 0) usleep(100000);
  }
  cr_expect_eq(missing, 0, "%d of %d compiles left no CUBIN in their caches", missing, RUNS);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
  cr_assert(system(cmd) == 0);
}

Test(gpu_jit, no_nvrtc_compile_error_and_load_failure) {
  need_gpu();
  fallback_case("DUALBATCH_NVRTC", "none", "NVRTC is not available");
  fallback_case("DUALBATCH_GPU_FAULT", "jit-compile", "injected compile failure");
  fallback_case("DUALBATCH_GPU_FAULT", "jit-load", "loading the compiled kernel failed");
}

/* Results in Fortran order (point fastest) and with padded strides, host and device arrays:
 * the compiled tier's staged stores against the CPU, bitwise. */
Test(gpu_jit, strided_and_column_major_results) {
  need_gpu();
  char cache[1024];
  fresh_cache(cache, sizeof cache, "strides");
  dual_context *cpu = tier_context(DUAL_DEVICE_CPU, DUAL_TIER_AUTO, cache);
  dual_context *gpu = tier_context(DUAL_DEVICE_GPU, DUAL_TIER_COMPILE, cache);
  dual_program *prog = bench_program(cpu, "kin");
  uint64_t rng = 11;
  const int64_t B = 1000 + 37, n = 32, m = 32;
  double *x = random_array(&rng, B * n, 0.5, 1.5);
  out ref = run_jacobian(cpu, prog, B, x, NULL, DUAL_SUCCESS);
  for (int layout = 0; layout < 2; ++layout) {
    /* layout 0: column-major y(B, m), J(B, m, n); layout 1: rows padded, J transposed per point */
    const int64_t y_ps = layout ? m + 3 : 1, y_es = layout ? 1 : B;
    const int64_t d_ps = layout ? m * n + 5 : 1, d_rs = layout ? 1 : B, d_cs = layout ? m : B * m;
    double *y = calloc((size_t)(B * (m + 3)), 8), *J = calloc((size_t)(B * (m * n + 5)), 8);
    dual_batch b;
    dual_batch_init(&b);
    b.count = B, b.x = x, b.x_ps = n, b.x_es = 1;
    b.y = y, b.y_ps = y_ps, b.y_es = y_es, b.d = J, b.d_ps = d_ps, b.d_rs = d_rs, b.d_cs = d_cs;
    int st = dual_run(gpu, prog, DUAL_MODE_JACOBIAN, &b);
    cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
    cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_COMPILE);
    for (int64_t i = 0; i < B; ++i)
      for (int64_t r = 0; r < m; ++r) {
        cr_assert(same_bits(y[i * y_ps + r * y_es], ref.y[i * m + r]), "layout %d: y", layout);
        for (int64_t k = 0; k < n; ++k)
          cr_assert(same_bits(J[i * d_ps + r * d_rs + k * d_cs], ref.J[(i * m + r) * n + k]),
                    "layout %d: J[%lld][%lld][%lld]", layout, (long long)i, (long long)r, (long long)k);
      }
    free(y), free(J);
  }
  out_free(&ref);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}
