/* gpu_jit_child.c — the fresh processes of test_gpu_jit: each case that needs a process with no
 * kernel in memory (or NVRTC loaded under another environment) runs this program, started with
 * exec, so CUDA starts afresh in it and compute-sanitizer can follow it (a CUDA child forked
 * without exec can be neither used nor attached to).  Exit status 0 when the case behaved,
 * 1 (with the reason on stderr) when not, 2 on a usage error.
 *   gpu_jit_child compile CACHE PROGRAM     a COMPILE run of bench/programs/PROGRAM.db's Jacobian
 *                                           (64 points), which writes CACHE's entry
 *   gpu_jit_child first-call CACHE          an AUTO context's first ba Jacobian (3000 points) runs
 *                                           compiled from CACHE, bitwise equal to the CPU
 *   gpu_jit_child fallback VAR VALUE WHY    with VAR=VALUE: COMPILE fails with DUAL_ERR_COMPILE
 *                                           naming WHY, AUTO succeeds interpreted with a note
 *                                           naming it */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dualbatch.h"
#include "random_program.h"

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "gpu_jit_child: %s%s%s\n", what, detail != NULL ? ": " : "", detail != NULL ? detail : "");
  return 1;
}

static dual_context *context(int device, int tier, const char *cache) {
  dual_context *ctx = NULL;
  if (dual_context_create(&ctx, device) != DUAL_SUCCESS || dual_context_set_tier(ctx, tier) != DUAL_SUCCESS ||
      (cache != NULL && dual_context_set_cache_dir(ctx, cache) != DUAL_SUCCESS)) {
    fprintf(stderr, "gpu_jit_child: context: %s\n", dual_context_last_error(ctx));
    dual_context_destroy(&ctx);
  }
  return ctx;
}

static dual_program *bench_program(dual_context *ctx, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s.db", DUAL_SOURCE_DIR, name);
  dual_program *prog = NULL;
  if (ctx != NULL && dual_program_compile_file(ctx, path, &prog) != DUAL_SUCCESS)
    fprintf(stderr, "gpu_jit_child: %s: %s\n", path, dual_context_last_error(ctx));
  return prog;
}

static int compile_entry(const char *cache, const char *name) {
  dual_context *ctx = context(DUAL_DEVICE_GPU, DUAL_TIER_COMPILE, cache);
  dual_program *prog = bench_program(ctx, name);
  double x[15 * 64], y[2 * 64], J[30 * 64], feat[2 * 64];
  for (int i = 0; i < 15 * 64; ++i) x[i] = 0.1 + 0.01 * i;
  for (int i = 0; i < 2 * 64; ++i) feat[i] = 0.5;
  int rc = prog == NULL ? 1 : 0;
  if (rc == 0 && dual_jacobian(ctx, prog, 64, x, 15, feat, 2, y, 2, J, 30, NULL) != DUAL_SUCCESS)
    rc = fail("the COMPILE run failed", dual_context_last_error(ctx));
  if (rc == 0 && dual_context_last_tier(ctx) != DUAL_TIER_COMPILE) rc = fail("the COMPILE run did not run compiled", NULL);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return rc;
}

static int first_call(const char *cache) {
  dual_context *cpu = context(DUAL_DEVICE_CPU, DUAL_TIER_AUTO, NULL), *gpu = context(DUAL_DEVICE_GPU, DUAL_TIER_AUTO, cache);
  dual_program *prog = gpu != NULL ? bench_program(cpu, "ba") : NULL;
  enum { B = 3000 };
  static double x[15 * B], p[2 * B], y[2][2 * B], J[2][30 * B];
  uint64_t rng = 5;
  for (int i = 0; i < 15 * B; ++i) x[i] = rp_uniform(&rng, -1.0, 1.0) + (i % 15 == 13 ? 10.0 : 0.0);
  for (int i = 0; i < 2 * B; ++i) p[i] = rp_uniform(&rng, -1.0, 1.0);
  int rc = prog == NULL ? 1 : 0;
  if (rc == 0 && dual_jacobian(cpu, prog, B, x, 15, p, 2, y[0], 2, J[0], 30, NULL) != DUAL_SUCCESS)
    rc = fail("the CPU run failed", dual_context_last_error(cpu));
  if (rc == 0 && dual_jacobian(gpu, prog, B, x, 15, p, 2, y[1], 2, J[1], 30, NULL) != DUAL_SUCCESS)
    rc = fail("the GPU run failed", dual_context_last_error(gpu));
  if (rc == 0 && dual_context_last_tier(gpu) != DUAL_TIER_COMPILE) rc = fail("first call interpreted", dual_context_last_note(gpu));
  if (rc == 0 && (memcmp(y[0], y[1], sizeof y[0]) != 0 || memcmp(J[0], J[1], sizeof J[0]) != 0))
    rc = fail("the compiled first call differs from the CPU", NULL);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
  return rc;
}

static int fallback(const char *var, const char *value, const char *why) {
  setenv(var, value, 1);
  char cache[1024];
  snprintf(cache, sizeof cache, "%s/jit-test-cache-fallback-%d", DUAL_BINARY_DIR, (int)getpid());
  dual_context *comp = context(DUAL_DEVICE_GPU, DUAL_TIER_COMPILE, cache), *autoc = context(DUAL_DEVICE_GPU, DUAL_TIER_AUTO, cache);
  uint64_t rng = 99;
  dual_program *prog = comp != NULL && autoc != NULL ? rp_random_program(comp, &rng, 50, 4, 0, 2) : NULL;
  if (prog == NULL) return fail("no program", comp != NULL ? dual_context_last_error(comp) : NULL);
  double x[4 * 100], y[2 * 100], J[8 * 100];
  for (int i = 0; i < 400; ++i) x[i] = 0.3 + 0.001 * i;
  int rc = 0;
  int st = dual_jacobian(comp, prog, 100, x, 4, NULL, 0, y, 2, J, 8, NULL);
  if (st != DUAL_ERR_COMPILE || strstr(dual_context_last_error(comp), why) == NULL) {
    fprintf(stderr, "gpu_jit_child: COMPILE: status %d, error '%s'\n", st, dual_context_last_error(comp));
    rc = 1;
  }
  st = dual_jacobian(autoc, prog, 100, x, 4, NULL, 0, y, 2, J, 8, NULL);
  /* AUTO may have queued a compile that fails in the background: its next call says so */
  for (int k = 0; k < 200 && st == DUAL_SUCCESS && strstr(dual_context_last_note(autoc), why) == NULL; ++k) {
    usleep(50000);
    st = dual_jacobian(autoc, prog, 100, x, 4, NULL, 0, y, 2, J, 8, NULL);
  }
  if (st != DUAL_SUCCESS || dual_context_last_tier(autoc) != DUAL_TIER_INTERPRET ||
      strstr(dual_context_last_note(autoc), why) == NULL) {
    fprintf(stderr, "gpu_jit_child: AUTO: status %d, tier %d, note '%s'\n", st, dual_context_last_tier(autoc),
            dual_context_last_note(autoc));
    rc = 1;
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&comp), dual_context_destroy(&autoc);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
  if (system(cmd) != 0) rc = fail("could not remove", cache);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "compile") == 0) return compile_entry(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "first-call") == 0) return first_call(argv[2]);
  if (argc == 5 && strcmp(argv[1], "fallback") == 0) return fallback(argv[2], argv[3], argv[4]);
  fprintf(stderr, "usage: gpu_jit_child compile CACHE PROGRAM | first-call CACHE | fallback VAR VALUE WHY\n");
  return 2;
}
