/*
 * solve_peers.c — KINSOL and hybrj per cell (solve_peers.h).  KINSOL: KIN_LINESEARCH, dense
 * SUNMatrix and SUNLinSol_Dense, the user Jacobian, a new Jacobian every iteration
 * (KINSetMaxSetupCalls 1: plain Newton, as dual_newton), f tolerance 1e-12 (max norm) and scaled
 * step tolerance 1e-12.  hybrj1 with tol = sqrt(eps).  One solver object per thread.
 */
#include "solve_peers.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct cell {
  const solve_system *s;
  const double *p;
  double *J;
} cell;

#ifdef DUAL_HAVE_KINSOL
#include <kinsol/kinsol.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_version.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

static int kin_f(N_Vector u, N_Vector f, void *data) {
  const cell *c = (const cell *)data;
  c->s->residual(N_VGetArrayPointer(u), c->p, N_VGetArrayPointer(f), NULL);
  return 0;
}

static int kin_j(N_Vector u, N_Vector f, SUNMatrix J, void *data, N_Vector t1, N_Vector t2) {
  (void)f, (void)t1, (void)t2;
  const cell *c = (const cell *)data;
  const int n = c->s->n;
  double fx[64];
  c->s->residual(N_VGetArrayPointer(u), c->p, fx, c->J);
  for (int i = 0; i < n; ++i) /* SUNDIALS dense matrices are column-major */
    for (int j = 0; j < n; ++j) SM_ELEMENT_D(J, i, j) = c->J[i * n + j];
  return 0;
}

int peer_kinsol(const solve_system *s, int64_t B, const double *p, double *x, int32_t *converged,
                int32_t *iters, int threads) {
  const int n = s->n;
  int failed = 0;
#pragma omp parallel num_threads(threads)
  {
    SUNContext ctx;
    int ok = SUNContext_Create(NULL, &ctx) == 0;
    N_Vector u = ok ? N_VNew_Serial(n, ctx) : NULL, scale = ok ? N_VNew_Serial(n, ctx) : NULL;
    SUNMatrix J = ok ? SUNDenseMatrix(n, n, ctx) : NULL;
    SUNLinearSolver LS = u && J ? SUNLinSol_Dense(u, J, ctx) : NULL;
    void *kmem = ok ? KINCreate(ctx) : NULL;
    cell c = {s, NULL, malloc(sizeof(double) * (size_t)(n * n))};
    ok = ok && u && scale && J && LS && kmem && c.J && KINInit(kmem, kin_f, u) == 0 &&
         KINSetLinearSolver(kmem, LS, J) == 0 && KINSetJacFn(kmem, kin_j) == 0 &&
         KINSetUserData(kmem, &c) == 0 && KINSetMaxSetupCalls(kmem, 1) == 0 &&
         KINSetFuncNormTol(kmem, 1e-12) == 0 && KINSetScaledStepTol(kmem, 1e-12) == 0 &&
         KINSetNumMaxIters(kmem, 200) == 0;
    if (!ok) {
#pragma omp atomic write
      failed = 1;
    } else {
      N_VConst(1.0, scale);
#pragma omp for schedule(dynamic, 64)
      for (int64_t b = 0; b < B; ++b) {
        c.p = p + b * s->np;
        memcpy(N_VGetArrayPointer(u), x + b * n, sizeof(double) * (size_t)n);
        const int flag = KINSol(kmem, u, KIN_LINESEARCH, scale, scale);
        long nit = 0;
        KINGetNumNonlinSolvIters(kmem, &nit);
        converged[b] = flag >= 0;
        iters[b] = (int32_t)nit;
        memcpy(x + b * n, N_VGetArrayPointer(u), sizeof(double) * (size_t)n);
      }
    }
    if (kmem) KINFree(&kmem);
    if (LS) SUNLinSolFree(LS);
    if (J) SUNMatDestroy(J);
    if (u) N_VDestroy(u);
    if (scale) N_VDestroy(scale);
    free(c.J);
    if (ok || u) SUNContext_Free(&ctx);
  }
  return failed ? -1 : 0;
}

const char *peer_kinsol_version(void) {
  static char v[64] = "KINSOL ";
  if (v[7] == '\0') SUNDIALSGetVersion(v + 7, (int)sizeof v - 7);
  return v;
}
#else
int peer_kinsol(const solve_system *s, int64_t B, const double *p, double *x, int32_t *converged,
                int32_t *iters, int threads) {
  (void)s, (void)B, (void)p, (void)x, (void)converged, (void)iters, (void)threads;
  return -1;
}
const char *peer_kinsol_version(void) { return "not built (Debian: libsundials-dev)"; }
#endif

#ifdef DUAL_HAVE_CMINPACK
#include <cminpack-1/cminpack.h>

static int hyb_fcn(void *data, int n, const double *x, double *fvec, double *fjac, int ldfjac, int iflag) {
  const cell *c = (const cell *)data;
  if (iflag == 1) {
    c->s->residual(x, c->p, fvec, NULL);
  } else if (iflag == 2) { /* (fvec unchanged) */
    double scratch[64];
    c->s->residual(x, c->p, scratch, c->J);
    for (int i = 0; i < n; ++i) /* column-major */
      for (int j = 0; j < n; ++j) fjac[j * ldfjac + i] = c->J[i * n + j];
  }
  return 0;
}

int peer_hybrj(const solve_system *s, int64_t B, const double *p, double *x, int32_t *converged,
               int32_t *iters, int threads) {
  const int n = s->n, lwa = n * (n + 13) / 2;
  int failed = 0;
#pragma omp parallel num_threads(threads)
  {
    double *fvec = malloc(sizeof(double) * (size_t)n), *fjac = malloc(sizeof(double) * (size_t)(n * n));
    double *wa = malloc(sizeof(double) * (size_t)lwa);
    cell c = {s, NULL, malloc(sizeof(double) * (size_t)(n * n))};
    if (!fvec || !fjac || !wa || !c.J) {
#pragma omp atomic write
      failed = 1;
    } else {
#pragma omp for schedule(dynamic, 64)
      for (int64_t b = 0; b < B; ++b) {
        c.p = p + b * s->np;
        const int info = hybrj1(hyb_fcn, &c, n, x + b * n, fvec, fjac, n, sqrt(2.220446049250313e-16), wa, lwa);
        converged[b] = info == 1;
        iters[b] = info; /* hybrj1 reports no counts: its exit parameter */
      }
    }
    free(fvec), free(fjac), free(wa), free(c.J);
  }
  return failed ? -1 : 0;
}

const char *peer_hybrj_version(void) { return "cminpack hybrj1"; }
#else
int peer_hybrj(const solve_system *s, int64_t B, const double *p, double *x, int32_t *converged,
               int32_t *iters, int threads) {
  (void)s, (void)B, (void)p, (void)x, (void)converged, (void)iters, (void)threads;
  return -1;
}
const char *peer_hybrj_version(void) { return "not built (Debian: libcminpack-dev)"; }
#endif
