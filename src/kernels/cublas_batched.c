/*
 * cublas_batched.c — cuBLAS's batched LU for dual_newton and QR for dual_lsq (cublas_batched.h):
 * the library through dlopen, its six entry points declared here (no cublas_v2.h needed to
 * build), one load per process, one handle per context.
 */
#include "kernels/cublas_batched.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "context.h"
#include "dl_load.h"

typedef struct cublas_ctx *cublas_handle;
typedef int (*create_fn)(cublas_handle *);
typedef int (*destroy_fn)(cublas_handle);
typedef int (*set_stream_fn)(cublas_handle, cudaStream_t);
typedef int (*getrf_fn)(cublas_handle, int, double *const[], int, int *, int *, int);
typedef int (*getrs_fn)(cublas_handle, int, int, int, const double *const[], int, const int *,
                        double *const[], int, int *, int);
typedef int (*geqrf_fn)(cublas_handle, int, int, double *const[], int, double *const[], int *, int);

enum { CUBLAS_OP_N_ = 0, CUBLAS_OP_T_ = 1 };

static struct {
  pthread_once_t once;
  void *lib;
  char why[512];
  create_fn create;
  destroy_fn destroy;
  set_stream_fn set_stream;
  getrf_fn getrf;
  getrs_fn getrs;
  geqrf_fn geqrf;
} blas = {PTHREAD_ONCE_INIT, NULL, "", NULL, NULL, NULL, NULL, NULL, NULL};

static void load_cublas(void) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  blas.lib = dual_dl_load("DUALBATCH_CUBLAS", names, 3, blas.why, sizeof blas.why); /* that file, or none */
  if (blas.lib == NULL) return;
  blas.create = (create_fn)dlsym(blas.lib, "cublasCreate_v2");
  blas.destroy = (destroy_fn)dlsym(blas.lib, "cublasDestroy_v2");
  blas.set_stream = (set_stream_fn)dlsym(blas.lib, "cublasSetStream_v2");
  blas.getrf = (getrf_fn)dlsym(blas.lib, "cublasDgetrfBatched");
  blas.getrs = (getrs_fn)dlsym(blas.lib, "cublasDgetrsBatched");
  blas.geqrf = (geqrf_fn)dlsym(blas.lib, "cublasDgeqrfBatched");
  if (!blas.create || !blas.destroy || !blas.set_stream || !blas.getrf || !blas.getrs || !blas.geqrf) {
    snprintf(blas.why, sizeof blas.why, "the cuBLAS library found lacks an entry point");
    dlclose(blas.lib);
    blas.lib = NULL;
  }
}

int dual_cublas_available(char *why, size_t cap) {
  pthread_once(&blas.once, load_cublas);
  if (blas.lib == NULL && why != NULL && cap > 0)
    snprintf(why, cap, "cuBLAS is not available (%s)", blas.why[0] ? blas.why : "not found");
  return blas.lib != NULL;
}

static int blas_fail(dual_context *ctx, int status, const char *what) {
  return dual_fail(ctx, status == 3 ? DUAL_ERR_NO_MEMORY : DUAL_ERR_DEVICE,
                   "GPU: cuBLAS %s failed (cublasStatus_t %d)", what, status);
}

/* The context's handle (created on first use) on `stream`. */
static int handle_on(dual_context *ctx, struct dual_gpu *g, cudaStream_t stream) {
  char why[600];
  if (!dual_cublas_available(why, sizeof why)) return dual_fail(ctx, DUAL_ERR_UNSUPPORTED, "%s", why);
  int s = 0;
  if (g->cublas == NULL && (s = blas.create((cublas_handle *)&g->cublas)) != 0) {
    g->cublas = NULL;
    return blas_fail(ctx, s, "creating a handle");
  }
  if ((s = blas.set_stream((cublas_handle)g->cublas, stream)) != 0) return blas_fail(ctx, s, "setting the stream");
  return DUAL_SUCCESS;
}

int dual_cublas_lu_solve(dual_context *ctx, struct dual_gpu *g, cudaStream_t stream, int n,
                         double *const *A, int *piv, int *info, double *const *B, int count) {
  int st = handle_on(ctx, g, stream), s = 0;
  if (st != DUAL_SUCCESS) return st;
  if ((s = blas.getrf((cublas_handle)g->cublas, n, A, n, piv, info, count)) != 0)
    return blas_fail(ctx, s, "getrfBatched");
  int arg_info = 0; /* getrs's check of its arguments (host) */
  if ((s = blas.getrs((cublas_handle)g->cublas, CUBLAS_OP_T_, n, 1, (const double *const *)A, n, piv, B, n,
                      &arg_info, count)) != 0 || arg_info != 0)
    return blas_fail(ctx, s != 0 ? s : -arg_info, "getrsBatched");
  return DUAL_SUCCESS;
}

int dual_cublas_qr(dual_context *ctx, struct dual_gpu *g, cudaStream_t stream, int m, int n,
                   double *const *A, int lda, double *const *Tau, int count) {
  int st = handle_on(ctx, g, stream), s = 0;
  if (st != DUAL_SUCCESS) return st;
  int arg_info = 0; /* geqrf's check of its arguments (host) */
  if ((s = blas.geqrf((cublas_handle)g->cublas, m, n, A, lda, Tau, &arg_info, count)) != 0 || arg_info != 0)
    return blas_fail(ctx, s != 0 ? s : -arg_info, "geqrfBatched");
  return DUAL_SUCCESS;
}

void dual_cublas_release(struct dual_gpu *g) {
  if (g->cublas != NULL && blas.lib != NULL) blas.destroy((cublas_handle)g->cublas);
  g->cublas = NULL;
}
