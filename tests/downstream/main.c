/*
 * main.c — a user's first program, built against an installed dualbatch (CMake package or
 * pkg-config; scripts/check_install.sh): the library's version is the header's, and the
 * gradient of f(x, c) = x0 x1 + c sin(x0) over a batch equals the hand-derived
 * (x1 + c cos(x0), x0).  Prints "downstream ok ..." and exits 0, else says what differs.
 */
#include <math.h>
#include <stdio.h>

#include <dualbatch.h>

int main(void) {
  if (dual_version() != DUAL_VERSION_MAJOR * 10000 + DUAL_VERSION_MINOR * 100 + DUAL_VERSION_PATCH) {
    fprintf(stderr, "downstream: library %s, header %d.%d.%d\n", dual_version_string(), DUAL_VERSION_MAJOR,
            DUAL_VERSION_MINOR, DUAL_VERSION_PATCH);
    return 1;
  }
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  if (dual_context_create(&ctx, DUAL_DEVICE_CPU) != DUAL_SUCCESS ||
      dual_program_compile(ctx, "input x[2]\nparam c\noutput f = x[0]*x[1] + c*sin(x[0])\n", "f", &prog) !=
          DUAL_SUCCESS) {
    fprintf(stderr, "downstream: %s\n", dual_context_last_error(ctx));
    return 1;
  }
  enum { B = 1000 };
  static double x[2 * B], c[B], f[B], g[2 * B];
  for (int i = 0; i < B; ++i) x[2 * i] = 0.01 * i - 3.0, x[2 * i + 1] = 1.0 + 0.002 * i, c[i] = 0.5;
  if (dual_gradient(ctx, prog, B, x, 2, c, 1, f, g, 2, NULL) != DUAL_SUCCESS) {
    fprintf(stderr, "downstream: %s\n", dual_context_last_error(ctx));
    return 1;
  }
  double worst = 0.0;
  for (int i = 0; i < B; ++i) {
    const double x0 = x[2 * i], x1 = x[2 * i + 1];
    const double ref[3] = {x0 * x1 + 0.5 * sin(x0), x1 + 0.5 * cos(x0), x0};
    const double got[3] = {f[i], g[2 * i], g[2 * i + 1]};
    for (int k = 0; k < 3; ++k) {
      const double d = fabs(got[k] - ref[k]) / (1.0 + fabs(ref[k]));
      worst = d > worst ? d : worst;
    }
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  printf("downstream ok: dualbatch %s, %d gradients, worst difference from the formula %.3g\n",
         dual_version_string(), B, worst);
  return worst <= 1e-14 ? 0 : 1;
}
