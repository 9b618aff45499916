/*
 * test_oom.c — out of memory at every allocation: this executable interposes malloc, calloc and
 * realloc (forwarding to glibc's __libc_* functions) so that the n-th allocation fails, and runs
 * compile -> jacobian -> save -> load with n = 1, 2, ... until the scenario completes without
 * reaching n.  Every run must end in success or a clean DUAL_ERR_NO_MEMORY (never a crash or a
 * wrong status).  Not built with sanitizers, whose allocators cannot be interposed this way.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);

static long fail_at = -1, calls = 0;
static int should_fail(void) { return fail_at > 0 && ++calls == fail_at; }
void *malloc(size_t n) { return should_fail() ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t m) { return should_fail() ? NULL : __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { return should_fail() ? NULL : __libc_realloc(p, n); }

static const char *source =
    "input x[4]\nparam c\nconst k = 2\noutput f[3]\n"
    "for i in 0..3 { f[i] = sin(x[i]) * x[i+1] + c * exp(-x[i]) }\n"
    "f[0] += sum(i in 0..4, x[i]^k)\n";

/* One pass of the scenario; returns the first failing status (0 = all fine). */
static int scenario(dual_context *ctx, const double *x, const double *p, double *J) {
  dual_program *prog = NULL, *back = NULL;
  int st = dual_program_compile(ctx, source, "oom", &prog);
  if (st) return st;
  st = dual_jacobian(ctx, prog, 40, x, 4, p, 1, NULL, 0, J, 12, NULL);
  int64_t size = 0;
  void *buf = NULL;
  if (!st) st = dual_program_save(ctx, prog, NULL, 0, &size);
  if (!st && !(buf = malloc((size_t)size))) st = DUAL_ERR_NO_MEMORY;
  if (!st) st = dual_program_save(ctx, prog, buf, size, &size);
  if (!st) st = dual_program_load(ctx, buf, size, &back);
  free(buf);
  dual_program_destroy(&back);
  dual_program_destroy(&prog);
  return st;
}

Test(oom, every_allocation_failure_is_a_clean_error) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  cr_assert_eq(dual_context_set_threads(ctx, 1), 0);
  double x[160], p[40], J[40 * 12], Jref[40 * 12];
  for (int i = 0; i < 160; ++i) x[i] = 0.1 * (i % 17);
  for (int i = 0; i < 40; ++i) p[i] = 0.5;
  cr_assert_eq(scenario(ctx, x, p, Jref), 0, "%s", dual_context_last_error(ctx)); /* warm-up */
  long n;
  int failures = 0;
  for (n = 1; n < 100000; ++n) {
    calls = 0;
    fail_at = n;
    int st = scenario(ctx, x, p, J);
    long reached = calls;
    fail_at = -1;
    if (reached < n) { /* the n-th allocation never happened: every site was covered */
      cr_assert_eq(st, 0);
      cr_assert(memcmp(J, Jref, sizeof J) == 0, "results differ after the OOM runs");
      break;
    }
    cr_assert_eq(st, DUAL_ERR_NO_MEMORY, "allocation %ld failed but the status is %d (%s)", n, st,
                 dual_context_last_error(ctx));
    failures++;
  }
  cr_log_info("%d allocation sites failed cleanly", failures);
  cr_assert_gt(failures, 20, "the scenario should allocate many times");
  dual_context_destroy(&ctx);
}
