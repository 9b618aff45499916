/* classic_ref.h — independent references for six classic test functions of Moré, Garbow &
 * Hillstrom, "Testing Unconstrained Optimization Software" (ACM TOMS 7, 1981), as objectives
 * f(x) = sum_i r_i(x)^2: value, gradient and Hessian derived by hand (classic_ref.c), the same
 * function as a dualbatch program, and the standard starting point.  Checked against quad
 * differences by tests/test_classic_ref.c; the reference for dual_hessian's acceptance test. */
#ifndef DUAL_TEST_CLASSIC_REF_H
#define DUAL_TEST_CLASSIC_REF_H

typedef struct classic_fn {
  const char *name;   /* "rosenbrock", "powell_singular", "wood", "beale", "helical_valley",
                         "box3d" */
  int n;              /* inputs */
  const char *source; /* the function in the dualbatch language: `input x[n]`, one output `f` */
  double (*value)(const double *x);
  void (*gradient)(const double *x, double *g); /* analytic, by hand: g[n] */
  void (*hessian)(const double *x, double *H);  /* analytic, by hand, row-major n x n, symmetric */
  const double *x0;                             /* the standard starting point */
} classic_fn;

extern const classic_fn classic_fns[];
extern const int classic_fn_count;

#endif /* DUAL_TEST_CLASSIC_REF_H */
