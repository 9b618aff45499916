/* test_classic_ref.c — checks the hand-derived references of tests/ref/classic_ref.h themselves,
 * independently of the library's derivatives: analytic gradients and Hessians against
 * Richardson-extrapolated central differences of quad-precision (__float128) versions of the six
 * functions written here from the MINPACK definitions, at the standard starting point and 200
 * random points per function (fixed seed); exact symmetry of H; known values at x0 and at the
 * minimizers; and that each program text compiles and dual_eval of it (values only) equals the
 * reference value. */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <math.h>
#include <quadmath.h>
#include <stdint.h>
#include <string.h>

#include "classic_ref.h"
#include "dualbatch.h"
#include "ulp_ref.h"

#define NRANDOM 200
#define NMAX 4

/* Tolerances for (a), relative to the largest magnitude of the quad reference (over the gradient
 * vector; over the whole Hessian).  The double formulas round each operation (2^-53), and what
 * they cannot avoid is the conditioning of the functions themselves: a residual near one of its
 * zeros, e.g. helical valley's T = x3 - 10 theta = -0.05 from terms of 1.7, which a 1-ulp change of
 * x3 moves as much.  Measured maxima over these points: 3.6e-15 (gradient), 1.5e-15 (Hessian).
 * 2e-14 leaves a 5x margin and keeps the reference's share of dual_hessian's 1e-12 acceptance
 * budget at 2%.  The quad differences' own error stays below FD_SELF_TOL (checked). */
#define DERIV_TOL 2e-14
/* The value against quad, relative to |f|: f is a sum of squares (no cancellation in the sum), so
 * only a residual cancelling near one of its zeros loses more than a few ulps (measured
 * 2.2e-15). */
#define VALUE_TOL 1e-14
/* Library evaluation of the program text against the reference value, relative to |f|: the
 * library's elementary functions (within 0.8 ulp) and glibc's differ by an ulp or so; the texts
 * otherwise do the same operations in the same order (measured 3.6e-16). */
#define EVAL_TOL 1e-14
/* Bound on the quad differences' own error, relative as above: the change made by the last
 * Richardson level, which bounds the error of the level before it (the result's is smaller still);
 * measured 4.4e-20 (helical valley).  Rounding in quad adds ~1e-24. */
#define FD_SELF_TOL 1e-18

typedef __float128 Q;
typedef Q (*quad_fn)(const Q *x);

/* ---- quad-precision values, from the definitions (plain forms: quad's 113 bits absorb the
 * cancellations that classic_ref.c rewrites) ------------------------------------------------- */
static Q q_rosenbrock(const Q *x) {
  Q u = x[1] - x[0] * x[0];
  return 100 * u * u + (1 - x[0]) * (1 - x[0]);
}

static Q q_powell_singular(const Q *x) {
  Q r1 = x[0] + 10 * x[1], r2 = sqrtq(5) * (x[2] - x[3]);
  Q r3 = (x[1] - 2 * x[2]) * (x[1] - 2 * x[2]), r4 = sqrtq(10) * (x[0] - x[3]) * (x[0] - x[3]);
  return r1 * r1 + r2 * r2 + r3 * r3 + r4 * r4;
}

static Q q_wood(const Q *x) { /* MINPACK's form: 10.1 (...)^2 + 19.8 (x2 - 1)(x4 - 1) */
  Q s = x[1] - x[0] * x[0], t = x[3] - x[2] * x[2];
  return 100 * s * s + (1 - x[0]) * (1 - x[0]) + 90 * t * t + (1 - x[2]) * (1 - x[2]) +
         (Q)101 / 10 * ((x[1] - 1) * (x[1] - 1) + (x[3] - 1) * (x[3] - 1)) +
         (Q)198 / 10 * (x[1] - 1) * (x[3] - 1);
}

static Q q_beale(const Q *x) {
  static const Q y[3] = {1.5Q, 2.25Q, 2.625Q};
  Q f = 0, pw = 1;
  for (int i = 0; i < 3; i++) {
    pw *= x[1];
    Q r = y[i] - x[0] * (1 - pw);
    f += r * r;
  }
  return f;
}

static Q q_helical_valley(const Q *x) {
  Q theta = atanq(x[1] / x[0]) / (2 * M_PIq) + (x[0] < 0 ? (Q)0.5 : (Q)0);
  Q r1 = 10 * (x[2] - 10 * theta), r2 = 10 * (sqrtq(x[0] * x[0] + x[1] * x[1]) - 1);
  return r1 * r1 + r2 * r2 + x[2] * x[2];
}

static Q q_box3d(const Q *x) {
  Q f = 0;
  for (int i = 1; i <= 10; i++) {
    Q t = (Q)i / 10;
    Q r = expq(-t * x[0]) - expq(-t * x[1]) - x[2] * (expq(-t) - expq(-10 * t));
    f += r * r;
  }
  return f;
}

/* How each function is checked: its quad value and the box random points are drawn from.
 * x1_away > 0: |x1| is drawn from [x1_away, hi[0]] with a random sign (helical valley's theta
 * jumps across x1 = 0, x2 < 0, and its derivatives grow like 1/rho^k near the x3 axis). */
typedef struct quad_case {
  const char *name;
  quad_fn f;
  double lo[NMAX], hi[NMAX];
  double x1_away;
} quad_case;

static const quad_case quad_cases[] = {
    {"rosenbrock", q_rosenbrock, {-3, -3}, {3, 3}, 0},
    {"powell_singular", q_powell_singular, {-3, -3, -3, -3}, {3, 3, 3, 3}, 0},
    {"wood", q_wood, {-3, -3, -3, -3}, {3, 3, 3, 3}, 0},
    {"beale", q_beale, {-4.5, -4.5}, {4.5, 4.5}, 0},
    {"helical_valley", q_helical_valley, {0, -3, -3}, {3, 3, 3}, 0.2},
    {"box3d", q_box3d, {-2, -2, -20}, {20, 20, 20}, 0},
};
#define NCASES ((int)(sizeof quad_cases / sizeof quad_cases[0]))

static const quad_case *find_case(const char *name) {
  for (int c = 0; c < NCASES; c++)
    if (strcmp(quad_cases[c].name, name) == 0)
      return &quad_cases[c];
  cr_assert_fail("no quad reference for classic function '%s'", name);
  return NULL;
}

/* ---- random points (splitmix64, fixed seed) ------------------------------------------------- */
static uint64_t rng_state;
static double u01(void) { return (double)(ref_next(&rng_state) >> 11) * 0x1p-53; }

static void random_point(const quad_case *qc, int n, double *x) {
  for (int j = 0; j < n; j++)
    x[j] = qc->lo[j] + (qc->hi[j] - qc->lo[j]) * u01();
  if (qc->x1_away > 0) {
    x[0] = qc->x1_away + (qc->hi[0] - qc->x1_away) * u01();
    if (ref_next(&rng_state) & 1)
      x[0] = -x[0];
  }
}

/* The points of a function: x0 first, then NRANDOM random ones; returns the count. */
static int make_points(const classic_fn *fn, const quad_case *qc, double *pts) {
  rng_state = 0xC1A551CULL;
  memcpy(pts, fn->x0, (size_t)fn->n * sizeof *pts);
  for (int k = 1; k <= NRANDOM; k++)
    random_point(qc, fn->n, &pts[k * fn->n]);
  return NRANDOM + 1;
}

/* ---- quad central differences, Richardson-extrapolated -------------------------------------- */
/* f(x + sj e_j + sk e_k) in quad (k < 0: no second step; j == k: both steps on one coordinate). */
static Q f_shifted(quad_fn f, const double *x, int n, int j, Q sj, int k, Q sk) {
  Q y[NMAX];
  for (int i = 0; i < n; i++)
    y[i] = x[i];
  y[j] += sj;
  if (k >= 0)
    y[k] += sk;
  return f(y);
}

/* Step of coordinate j: scaled to the coordinate, small against every function's length scale at
 * the sampled points (>= 0.2, helical valley's distance to the x3 axis).  The smallest step, h/4,
 * leaves quad rounding at ~1e-34 |f| / (2.5e-6)^2 = 1.6e-23 |f|; truncation after two Richardson
 * levels is O(h^6). */
static Q step(const double *x, int j) { return (Q)1e-5Q * (Q)fmax(1.0, fabs(x[j])); }

/* D(s) has the expansion d + c2 s^2 + c4 s^4 + ...; two Richardson levels over s = 1, 1/2, 1/4
 * leave O(s^6); *err = |R2 - R1| estimates what is left. */
static Q richardson(const Q D[3], Q *err) {
  Q r1a = (4 * D[1] - D[0]) / 3, r1b = (4 * D[2] - D[1]) / 3;
  Q r2 = (16 * r1b - r1a) / 15;
  *err = fabsq(r2 - r1b);
  return r2;
}

static Q fd_gradient(quad_fn f, const double *x, int n, int j, Q *err) {
  Q D[3];
  for (int l = 0; l < 3; l++) {
    Q h = step(x, j) / (1 << l);
    D[l] = (f_shifted(f, x, n, j, h, -1, 0) - f_shifted(f, x, n, j, -h, -1, 0)) / (2 * h);
  }
  return richardson(D, err);
}

/* d2f / dxj dxk = [f(+hj, +hk) - f(+hj, -hk) - f(-hj, +hk) + f(-hj, -hk)] / (4 hj hk) + O(h^2);
 * for j == k this is the second difference with step 2h. */
static Q fd_hessian(quad_fn f, const double *x, int n, int j, int k, Q *err) {
  Q D[3];
  for (int l = 0; l < 3; l++) {
    Q hj = step(x, j) / (1 << l), hk = step(x, k) / (1 << l);
    D[l] = (f_shifted(f, x, n, j, hj, k, hk) - f_shifted(f, x, n, j, hj, k, -hk) -
            f_shifted(f, x, n, j, -hj, k, hk) + f_shifted(f, x, n, j, -hj, k, -hk)) /
           (4 * hj * hk);
  }
  return richardson(D, err);
}

/* max_i |a_i - ref_i| / max_i |ref_i| (NaN counts as infinite). */
static double scaled_err(const double *a, const Q *ref, int len, double *scale_out) {
  double scale = 0.0, worst = 0.0;
  for (int i = 0; i < len; i++)
    scale = fmax(scale, fabs((double)ref[i]));
  for (int i = 0; i < len; i++) {
    double e = (double)fabsq((Q)a[i] - ref[i]) / scale;
    if (!(e <= worst))
      worst = isnan(e) ? INFINITY : e;
  }
  *scale_out = scale;
  return worst;
}

/* ---- the table itself ----------------------------------------------------------------------- */
Test(classic_ref, table) {
  static const char *const names[] = {"rosenbrock", "powell_singular", "wood",
                                      "beale",      "helical_valley",  "box3d"};
  static const int dims[] = {2, 4, 4, 2, 3, 3};
  cr_assert_eq(classic_fn_count, 6);
  for (int c = 0; c < classic_fn_count; c++) {
    const classic_fn *fn = &classic_fns[c];
    cr_assert_str_eq(fn->name, names[c]);
    cr_assert_eq(fn->n, dims[c], "%s: n = %d", fn->name, fn->n);
    cr_assert(fn->source && fn->value && fn->gradient && fn->hessian && fn->x0, "%s", fn->name);
    find_case(fn->name);
  }
}

/* ---- (a) gradient and Hessian against quad differences; value against quad ------------------- */
Test(classic_ref, derivatives_vs_quad_differences) {
  static double pts[(NRANDOM + 1) * NMAX];
  for (int c = 0; c < classic_fn_count; c++) {
    const classic_fn *fn = &classic_fns[c];
    const quad_case *qc = find_case(fn->name);
    int n = fn->n, np = make_points(fn, qc, pts);
    double worst_g = 0, worst_h = 0, worst_v = 0, worst_fd = 0;
    for (int k = 0; k < np; k++) {
      const double *x = &pts[k * n];
      double g[NMAX], H[NMAX * NMAX], scale_g, scale_h, fd_err_g = 0, fd_err_h = 0;
      Q gq[NMAX], Hq[NMAX * NMAX], err;
      fn->gradient(x, g);
      fn->hessian(x, H);
      for (int j = 0; j < n; j++) {
        gq[j] = fd_gradient(qc->f, x, n, j, &err);
        fd_err_g = fmax(fd_err_g, (double)err);
        for (int i = 0; i < n; i++) {
          Hq[j * n + i] = fd_hessian(qc->f, x, n, j, i, &err);
          fd_err_h = fmax(fd_err_h, (double)err);
        }
      }
      double eg = scaled_err(g, gq, n, &scale_g), eh = scaled_err(H, Hq, n * n, &scale_h);
      double fd_err = fmax(fd_err_g / scale_g, fd_err_h / scale_h);
      Q fq;
      {
        Q xq[NMAX];
        for (int j = 0; j < n; j++)
          xq[j] = x[j];
        fq = qc->f(xq);
      }
      double ev = (double)(fabsq((Q)fn->value(x) - fq) / fq);
      cr_assert(fd_err <= FD_SELF_TOL, "%s point %d: quad differences uncertain (%.3g)", fn->name,
                k, fd_err);
      cr_assert(eg <= DERIV_TOL, "%s point %d (x1 = %.17g): gradient error %.3g", fn->name, k, x[0],
                eg);
      cr_assert(eh <= DERIV_TOL, "%s point %d (x1 = %.17g): Hessian error %.3g", fn->name, k, x[0],
                eh);
      cr_assert(ev <= VALUE_TOL, "%s point %d (x1 = %.17g): value error %.3g", fn->name, k, x[0],
                ev);
      worst_g = fmax(worst_g, eg);
      worst_h = fmax(worst_h, eh);
      worst_v = fmax(worst_v, ev);
      worst_fd = fmax(worst_fd, fd_err);
    }
    cr_log_info("%-16s %d points: max scaled error vs quad differences: gradient %.3g, Hessian "
                "%.3g; value %.3g; quad differences' own %.3g",
                fn->name, np, worst_g, worst_h, worst_v, worst_fd);
  }
}

/* ---- (b) the Hessian is exactly symmetric --------------------------------------------------- */
Test(classic_ref, hessian_exactly_symmetric) {
  static double pts[(NRANDOM + 1) * NMAX];
  for (int c = 0; c < classic_fn_count; c++) {
    const classic_fn *fn = &classic_fns[c];
    int n = fn->n, np = make_points(fn, find_case(fn->name), pts);
    for (int k = 0; k < np; k++) {
      double H[NMAX * NMAX];
      fn->hessian(&pts[k * n], H);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          cr_assert(isfinite(H[i * n + j]), "%s point %d: H[%d][%d] not finite", fn->name, k, i, j);
          cr_assert(memcmp(&H[i * n + j], &H[j * n + i], sizeof(double)) == 0,
                    "%s point %d: H[%d][%d] = %a != H[%d][%d] = %a", fn->name, k, i, j,
                    H[i * n + j], j, i, H[j * n + i]);
        }
    }
  }
}

/* ---- (c) the program texts compile, and dual_eval of them equals value ---------------------- */
Test(classic_ref, programs_evaluate_to_value) {
  static double pts[(NRANDOM + 1) * NMAX];
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  for (int c = 0; c < classic_fn_count; c++) {
    const classic_fn *fn = &classic_fns[c];
    int n = fn->n, np = make_points(fn, find_case(fn->name), pts);
    dual_program *prog = NULL;
    int st = dual_program_compile(ctx, fn->source, fn->name, &prog);
    cr_assert(st == DUAL_SUCCESS, "%s: %s", fn->name, dual_context_last_error(ctx));
    cr_assert(dual_program_num_inputs(prog) == n && dual_program_num_params(prog) == 0 &&
                  dual_program_num_outputs(prog) == 1,
              "%s: shape (%d, %d, %d)", fn->name, (int)dual_program_num_inputs(prog),
              (int)dual_program_num_params(prog), (int)dual_program_num_outputs(prog));
    double y[NRANDOM + 1];
    int32_t status[NRANDOM + 1];
    st = dual_eval(ctx, prog, np, pts, n, NULL, 0, y, 1, status);
    cr_assert(st == DUAL_SUCCESS, "%s: dual_eval: %s", fn->name, dual_context_last_error(ctx));
    double worst = 0;
    for (int k = 0; k < np; k++) {
      double f = fn->value(&pts[k * n]), e = fabs(y[k] - f) / fabs(f);
      cr_assert(status[k] == 0, "%s point %d: flags 0x%x", fn->name, k, status[k]);
      cr_assert(e <= EVAL_TOL, "%s point %d: dual_eval %.17g, value %.17g (%.3g)", fn->name, k,
                y[k], f, e);
      worst = fmax(worst, e);
    }
    cr_log_info("%-16s dual_eval vs value over %d points: max relative difference %.3g",
                fn->name, np, worst);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* ---- known values --------------------------------------------------------------------------- */
static const classic_fn *find_fn(const char *name) {
  for (int c = 0; c < classic_fn_count; c++)
    if (strcmp(classic_fns[c].name, name) == 0)
      return &classic_fns[c];
  cr_assert_fail("no classic function '%s'", name);
  return NULL;
}

/* f at the standard starting point, by hand: Rosenbrock 100 (1 - 1.44)^2 + 2.2^2 = 24.2, Powell
 * 7^2 + 5 * 1 + 1^4 + 10 * 2^4 = 215, Wood 10000 + 16 + 9000 + 16 + 160 + 0 = 19192, Beale
 * 1.5^2 + 2.25^2 + 2.625^2 = 14.203125, helical valley (10 (0 - 10 * 0.5))^2 = 2500.  And the
 * residual norms sqrt(f(x0)) printed by MINPACK's lmder driver (8 digits;
 * shared/data/minpack/cminpack/ref/lmddrv.fortran.ref, problems 4, 5, 6 and 12 with m = 10):
 * Box 3-D has no short closed form, 3.2111584e+01 is its check. */
Test(classic_ref, values_at_starting_points) {
  static const struct {
    const char *name;
    double f, rtol;
  } exact[] = {
      {"rosenbrock", 24.2, 1e-15},   {"powell_singular", 215.0, 0}, {"wood", 19192.0, 0},
      {"beale", 14.203125, 0},       {"helical_valley", 2500.0, 0},
  };
  static const struct {
    const char *name;
    double norm;
  } minpack[] = {
      {"rosenbrock", 4.9193496},
      {"helical_valley", 5.0000000e+01},
      {"powell_singular", 1.4662878e+01},
      {"box3d", 3.2111584e+01},
  };
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
    const classic_fn *fn = find_fn(exact[i].name);
    double f = fn->value(fn->x0);
    cr_assert(fabs(f - exact[i].f) <= exact[i].rtol * exact[i].f,
              "%s: f(x0) = %.17g, expected %.17g", fn->name, f, exact[i].f);
  }
  for (size_t i = 0; i < sizeof minpack / sizeof minpack[0]; i++) {
    const classic_fn *fn = find_fn(minpack[i].name);
    double norm = sqrt(fn->value(fn->x0));
    /* half a unit in the 8th printed digit */
    cr_assert(fabs(norm - minpack[i].norm) <= 0.5e-7 * minpack[i].norm,
              "%s: ||r(x0)|| = %.10g, MINPACK prints %.8g", fn->name, norm, minpack[i].norm);
  }
}

/* f = 0 and g = 0 at the minimizers (Box 3-D: to rounding, its residuals there are
 * e^-t - e^(-10 t) - (e^-t - e^-i) with t = i / 10 rounded). */
Test(classic_ref, minimizers) {
  static const struct {
    const char *name;
    double x[NMAX];
    double ftol, gtol;
  } minima[] = {
      {"rosenbrock", {1, 1}, 0, 0},
      {"powell_singular", {0, 0, 0, 0}, 0, 0},
      {"wood", {1, 1, 1, 1}, 0, 0},
      {"beale", {3, 0.5}, 0, 0},
      {"helical_valley", {1, 0, 0}, 0, 0},
      {"box3d", {1, 10, 1}, 1e-30, 1e-15},
      {"box3d", {10, 1, -1}, 1e-30, 1e-15},
      {"box3d", {2.5, 2.5, 0}, 0, 0},
  };
  for (size_t m = 0; m < sizeof minima / sizeof minima[0]; m++) {
    const classic_fn *fn = find_fn(minima[m].name);
    double g[NMAX], f = fn->value(minima[m].x);
    fn->gradient(minima[m].x, g);
    cr_assert(fabs(f) <= minima[m].ftol, "%s minimizer %zu: f = %.3g", fn->name, m, f);
    for (int j = 0; j < fn->n; j++)
      cr_assert(fabs(g[j]) <= minima[m].gtol, "%s minimizer %zu: g[%d] = %.3g", fn->name, m, j,
                g[j]);
  }
  /* Hessians at the minimizers, by hand: Rosenbrock [802, -400; -400, 200]; Powell's is singular
   * (rank 2: 2 grad a grad a^T + 10 grad b grad b^T, the c^4 and d^4 terms vanish). */
  double H[NMAX * NMAX];
  static const double H_rosen[4] = {802, -400, -400, 200};
  static const double H_powell[16] = {2, 20, 0, 0, 20, 200, 0, 0, 0, 0, 10, -10, 0, 0, -10, 10};
  find_fn("rosenbrock")->hessian(minima[0].x, H);
  cr_assert(memcmp(H, H_rosen, sizeof H_rosen) == 0, "Rosenbrock H(1, 1)");
  find_fn("powell_singular")->hessian(minima[1].x, H);
  for (int i = 0; i < 16; i++)
    cr_assert(H[i] == H_powell[i], "Powell H(0)[%d] = %g, expected %g", i, H[i], H_powell[i]);
}
