/* ba_jacobians.c — bundle-adjustment Jacobians with dualbatch, as a least-squares solver uses.
 * Reads an ADBench BA problem (compact format), makes one batch point per observation, compiles
 * the reprojection residual once and computes every 2 x 15 Jacobian in a single dual_jacobian call.
 * Usage: ba_jacobians [problem.txt]   (default: ADBench's data/ba/test.txt, copied into tests/data) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dualbatch.h"

/* The residual of one observation, in dualbatch's language (the function of bench/programs/ba.db).
 * Inputs (differentiated): the 11 camera parameters, the 3D point and the weight; parameter
 * (not differentiated): the observed feature.  Output: the 2 weighted reprojection errors. */
static const char ba_source[] =
    "input  cam[11]     # r0 r1 r2, C0 C1 C2, f, u0 v0, k1 k2\n"
    "input  X[3]\n"
    "input  w\n"
    "param  feat[2]\n"
    "output r[2]\n"
    "let d0 = X[0] - cam[3]\n"
    "let d1 = X[1] - cam[4]\n"
    "let d2 = X[2] - cam[5]\n"
    "let theta2 = cam[0] * cam[0] + cam[1] * cam[1] + cam[2] * cam[2]\n"
    "let big = theta2 > 0\n"
    "let theta = sqrt(big ? theta2 : 1)   # keeps the unused branch finite at theta = 0\n"
    "let ct = cos(theta)\n"
    "let st = sin(theta)\n"
    "let a0 = cam[0] / theta\n"
    "let a1 = cam[1] / theta\n"
    "let a2 = cam[2] / theta\n"
    "let t = (a0 * d0 + a1 * d1 + a2 * d2) * (1 - ct)\n"
    "let xc0 = big ? d0 * ct + (a1 * d2 - a2 * d1) * st + a0 * t : d0 + cam[1] * d2 - cam[2] * d1\n"
    "let xc1 = big ? d1 * ct + (a2 * d0 - a0 * d2) * st + a1 * t : d1 + cam[2] * d0 - cam[0] * d2\n"
    "let xc2 = big ? d2 * ct + (a0 * d1 - a1 * d0) * st + a2 * t : d2 + cam[0] * d1 - cam[1] * d0\n"
    "let p0 = xc0 / xc2\n"
    "let p1 = xc1 / xc2\n"
    "let s = p0 * p0 + p1 * p1\n"
    "let L = 1 + cam[9] * s + cam[10] * s * s\n"
    "r[0] = w * (p0 * L * cam[6] + cam[7] - feat[0])\n"
    "r[1] = w * (p1 * L * cam[6] + cam[8] - feat[1])\n";

enum { NCAM = 11, NIN = 15, NOUT = 2 };

static int fail(dual_context *ctx, const char *what, int status) {
  fprintf(stderr, "%s failed: %s\n%s\n", what, dual_status_string(status),
          ctx ? dual_context_last_error(ctx) : "");
  return EXIT_FAILURE;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : DUAL_SOURCE_DIR "/tests/data/adbench/ba/test.txt";
  FILE *fp = fopen(path, "r");
  if (!fp) {
    fprintf(stderr, "cannot open %s\n", path);
    return EXIT_FAILURE;
  }
  /* ADBench's compact format: "n m p", then one camera, one point, one weight and one feature.
   * Its reader replicates them: n cameras, m points, p observations, observation i seeing
   * point i mod m from camera i mod n. */
  int n, m, p;
  double cam[NCAM], X[3], w, feat[2];
  int ok = fscanf(fp, "%d %d %d", &n, &m, &p) == 3 && n > 0 && m > 0 && p > 0;
  for (int j = 0; ok && j < NCAM; j++)
    ok = fscanf(fp, "%lf", &cam[j]) == 1;
  for (int j = 0; ok && j < 3; j++)
    ok = fscanf(fp, "%lf", &X[j]) == 1;
  ok = ok && fscanf(fp, "%lf %lf %lf", &w, &feat[0], &feat[1]) == 3;
  fclose(fp);
  if (!ok) {
    fprintf(stderr, "%s: not an ADBench BA file\n", path);
    return EXIT_FAILURE;
  }

  /* One batch point per observation: inputs (camera, point, weight), parameters (feature). */
  size_t P = (size_t)p;
  double *x = malloc(P * NIN * sizeof(double)), *obs = malloc(P * 2 * sizeof(double));
  double *r = malloc(P * NOUT * sizeof(double)), *J = malloc(P * NOUT * NIN * sizeof(double));
  int32_t *status = malloc(P * sizeof(int32_t));
  if (!x || !obs || !r || !J || !status) {
    fprintf(stderr, "out of memory for %d observations\n", p);
    return EXIT_FAILURE;
  }
  for (size_t i = 0; i < P; i++) {
    memcpy(&x[i * NIN], cam, sizeof cam);  /* camera i mod n (all equal in this format) */
    memcpy(&x[i * NIN + NCAM], X, sizeof X); /* point i mod m */
    x[i * NIN + 14] = w;
    obs[i * 2] = feat[0];
    obs[i * 2 + 1] = feat[1];
  }

  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  int st = dual_context_create(&ctx, DUAL_DEVICE_AUTO);
  if (st != DUAL_SUCCESS)
    return fail(ctx, "dual_context_create", st);
  st = dual_program_compile(ctx, ba_source, "ba", &prog);
  if (st != DUAL_SUCCESS)
    return fail(ctx, "compiling the BA residual", st);

  struct timespec t0, t1;
  timespec_get(&t0, TIME_UTC);
  st = dual_jacobian(ctx, prog, p, x, NIN, obs, 2, r, NOUT, J, NOUT * NIN, status);
  timespec_get(&t1, TIME_UTC);
  if (st != DUAL_SUCCESS)
    return fail(ctx, "dual_jacobian", st);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

  printf("%s: %d cameras, %d points, %d observations\n", path, n, m, p);
  printf("observation 0: residuals %.17g %.17g, weight residual 1 - w^2 = %.17g\n", r[0], r[1],
         1.0 - w * w);
  printf("Jacobian (d r_i / d input):\n%-8s %24s %24s\n", "input", "r[0]", "r[1]");
  for (int j = 0; j < NIN; j++)
    printf("%-8s %24.17g %24.17g\n", dual_program_input_name(prog, j), J[j], J[NIN + j]);
  long flagged = 0;
  for (size_t i = 0; i < P; i++)
    flagged += status[i] != 0;
  printf("%d Jacobians in %.3f ms (%.3g points/s), %ld points flagged\n", p, 1e3 * secs,
         secs > 0 ? (double)p / secs : 0.0, flagged);

  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  free(x);
  free(obs);
  free(r);
  free(J);
  free(status);
  return EXIT_SUCCESS;
}
