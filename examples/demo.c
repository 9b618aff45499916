/*
 * demo.c — dualbatch's first example: compile the ADBench bundle-adjustment reprojection
 * residual from a string, evaluate its 2 x 15 Jacobian at 1,000,000 random observations on all
 * cores, print the throughput, the first point's residual and Jacobian, and check one Jacobian
 * column against a central finite difference.  Run it as `./build/examples/demo [points]`.
 */
#define _POSIX_C_SOURCE 200809L

#include <dualbatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* r = w * (f * L(|p|^2) * p + (u0, v0) - feat), p = projection of the camera-frame point. */
static const char *const BA_SOURCE =
    "input  cam[11]        # r0 r1 r2 (axis-angle), C0 C1 C2 (center), f, u0 v0, k1 k2\n"
    "input  X[3]           # the 3-D point\n"
    "input  w              # weight\n"
    "param  feat[2]        # observed feature\n"
    "output r[2]\n"
    "let Xd[3]\n"
    "for i in 0..3 { Xd[i] = X[i] - cam[3 + i] }\n"
    "let theta2 = cam[0]^2 + cam[1]^2 + cam[2]^2\n"
    "let theta = sqrt(theta2)\n"
    "let ct = cos(theta)\n"
    "let st = sin(theta)\n"
    "let om[3]\n"
    "for i in 0..3 { om[i] = cam[i] / theta }\n"
    "let odot = sum(i in 0..3, om[i] * Xd[i])\n"
    "let Xc[3]             # Rodrigues rotation; first order when theta = 0\n"
    "for i in 0..3 {\n"
    "  let rot = Xd[i]*ct + (om[(i+1)%3]*Xd[(i+2)%3] - om[(i+2)%3]*Xd[(i+1)%3])*st"
    " + om[i]*odot*(1 - ct)\n"
    "  let lin = Xd[i] + cam[(i+1)%3]*Xd[(i+2)%3] - cam[(i+2)%3]*Xd[(i+1)%3]\n"
    "  Xc[i] = theta2 != 0 ? rot : lin\n"
    "}\n"
    "let px = Xc[0] / Xc[2]\n"
    "let py = Xc[1] / Xc[2]\n"
    "let s = px^2 + py^2\n"
    "let L = 1 + cam[9]*s + cam[10]*s^2\n"
    "r[0] = w * (cam[6]*L*px + cam[7] - feat[0])\n"
    "r[1] = w * (cam[6]*L*py + cam[8] - feat[1])\n";

enum { N_IN = 15, N_PAR = 2, N_OUT = 2 };

static void check(dual_context *ctx, int status, const char *what) {
  if (status == DUAL_SUCCESS) return;
  fprintf(stderr, "demo: %s failed: %s\n", what, ctx ? dual_context_last_error(ctx) : "");
  exit(1);
}

/* A standard normal number (Box-Muller over a small xorshift generator: reproducible). */
static double normal(void) {
  static uint64_t s = 0x9E3779B97F4A7C15u;
  double u[2];
  for (int i = 0; i < 2; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    u[i] = ((double)(s >> 11) + 0.5) / 9007199254740992.0; /* in (0, 1) */
  }
  return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  const int64_t B = argc > 1 ? atoll(argv[1]) : 1000000; /* optional: number of points */
  if (B < 1) {
    fprintf(stderr, "usage: demo [points >= 1]\n");
    return 2;
  }
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  check(ctx, dual_context_create(&ctx, DUAL_DEVICE_AUTO), "dual_context_create");
  check(ctx, dual_program_compile(ctx, BA_SOURCE, "ba.dual", &prog), "compiling the program");

  /* Observations, point-major: x[b][15], feat[b][2]; outputs y[b][2], J[b][2][15]. */
  double *x = malloc(sizeof(double) * N_IN * (size_t)B);
  double *feat = malloc(sizeof(double) * N_PAR * (size_t)B);
  double *y = malloc(sizeof(double) * N_OUT * (size_t)B);
  double *J = malloc(sizeof(double) * N_OUT * N_IN * (size_t)B);
  int32_t *status = malloc(sizeof(int32_t) * (size_t)B);
  if (!x || !feat || !y || !J || !status) check(ctx, DUAL_ERR_NO_MEMORY, "malloc");
  for (int64_t b = 0; b < B; b++) {
    for (int i = 0; i < N_IN; i++) x[b * N_IN + i] = normal();
    x[b * N_IN + 13] += 10.0; /* X2: put the point in front of the camera */
    x[b * N_IN + 14] = 1.0;   /* w */
    for (int i = 0; i < N_PAR; i++) feat[b * N_PAR + i] = normal();
  }

  double t0 = now();
  check(ctx, dual_jacobian(ctx, prog, B, x, N_IN, feat, N_PAR, y, N_OUT, J, N_OUT * N_IN, status),
        "dual_jacobian");
  double secs = now() - t0;
  int64_t flagged = 0;
  for (int64_t b = 0; b < B; b++) flagged += status[b] != 0;
  printf("bundle-adjustment Jacobians: %lld points in %.3f s = %.3g points/s (%lld flagged)\n",
         (long long)B, secs, (double)B / secs, (long long)flagged);

  printf("\npoint 0: r = (%.10g, %.10g)\n\n  %-8s %15s %15s\n", y[0], y[1], "input", "dr0/dinput",
         "dr1/dinput");
  for (int j = 0; j < N_IN; j++)
    printf("  %-8s %15.8g %15.8g\n", dual_program_input_name(prog, j), J[j], J[N_IN + j]);

  /* Check column j = 0 (rotation r0) at point 0: (f(x + h e_j) - f(x - h e_j)) / 2h. */
  const int j = 0;
  const double h = 1e-6;
  double xp[N_IN], xm[N_IN], yp[N_OUT], ym[N_OUT], max_rel = 0.0;
  for (int i = 0; i < N_IN; i++) xp[i] = xm[i] = x[i];
  xp[j] += h;
  xm[j] -= h;
  check(ctx, dual_eval(ctx, prog, 1, xp, N_IN, feat, N_PAR, yp, N_OUT, NULL), "dual_eval");
  check(ctx, dual_eval(ctx, prog, 1, xm, N_IN, feat, N_PAR, ym, N_OUT, NULL), "dual_eval");
  for (int i = 0; i < N_OUT; i++) {
    double fd = (yp[i] - ym[i]) / (2.0 * h), ad = J[i * N_IN + j];
    double rel = fabs(fd - ad) / fmax(fabs(ad), 1e-300);
    if (rel > max_rel) max_rel = rel;
  }
  printf("\ncolumn %s vs central difference (h = %g): max relative difference %.2e\n",
         dual_program_input_name(prog, j), h, max_rel);

  free(x);
  free(feat);
  free(y);
  free(J);
  free(status);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return max_rel < 1e-6 ? 0 : 1;
}
