/*
 * test_jit_host.c — the compiled tier's generated kernels run on the CPU, bit for bit against
 * the CPU engine, without a GPU: each module is compiled as host C++ with a CUDA shim
 * (tests/jit_host/cuda_shim.h) and its kernels run one warp as 32 threads, so the generator's
 * lanes, staging and flushes (row by row, all rows at once, column-major results), early OUTs,
 * status words and the warp-wide rerun through the guarded body (NaN and infinite partials) are
 * all checked where CI runs.  What only the GPU can show (NVRTC, the device's arithmetic) is
 * test_gpu_engine's, run with DUALBATCH_TIER=compile.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_program.h"
#include "engine/sgrad_reduce.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "jit/jit_args.h"
#include "jit/jit_source.h"
#include "jit/jit_source2.h"
#include "jit/jit_source_rev.h"
#include "program.h"
#include "random_program.h"
#include "sgrad_score.h"
#include "loop_programs.h"
#include "test_arrays.h"

#ifndef DUAL_HOST_CXX
#define DUAL_HOST_CXX "g++"
#endif

typedef void (*kernel_fn)(dual_jit_args);
typedef struct module {
  void *so;
  kernel_fn kernels[64];
  void (*set_lane)(int);
} module;

static module load_source(char *src, const char *name_fmt, int npass);

/* Generate the module of (prog, mode, width, npass), compile it as host C++, load it. */
static module build(const dual_program *prog, int mode, int width, int npass) {
  char why[256];
  char *src = dual_jit_source(prog, mode, width, npass, 0, why, sizeof why);
  cr_assert(src != NULL, "generator: %s", why);
  return load_source(src, DUAL_JIT_KERNEL_NAME, npass);
}

/* Compile generated source (taken) as host C++ with the CUDA shim and load its npass kernels. */
static module load_source(char *src, const char *name_fmt, int npass) {
  cr_assert(npass <= 64, "%d kernels", npass);
  char dir[] = "/tmp/dual_jit_host_XXXXXX";
  cr_assert(mkdtemp(dir) != NULL);
  char cu[128], so[128], cmd[2048];
  snprintf(cu, sizeof cu, "%s/k.cu", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  FILE *fp = fopen(cu, "w");
  cr_assert(fp != NULL);
  fputs(src, fp);
  fclose(fp);
  free(src);
  snprintf(cmd, sizeof cmd,
           "%s -std=c++17 -O0 -fPIC -shared -ffp-contract=off -fno-math-errno -w -DDUAL_FN_EXTERN=1 -x c++ "
           "-I%s/src -I%s/include -include %s/tests/jit_host/cuda_shim.h %s -o %s -lpthread",
           DUAL_HOST_CXX, DUAL_SOURCE_DIR, DUAL_SOURCE_DIR, DUAL_SOURCE_DIR, cu, so);
  cr_assert(system(cmd) == 0, "the host compile failed: %s", cmd);
  module m;
  memset(&m, 0, sizeof m);
  m.so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  cr_assert(m.so != NULL, "%s", dlerror());
  void (*init)(void) = (void (*)(void))dlsym(m.so, "dual_shim_init");
  m.set_lane = (void (*)(int))dlsym(m.so, "dual_shim_set_lane");
  cr_assert(init && m.set_lane);
  init();
  for (int p = 0; p < npass; ++p) {
    char name[32];
    snprintf(name, sizeof name, name_fmt, p);
    m.kernels[p] = (kernel_fn)dlsym(m.so, name);
    cr_assert(m.kernels[p] != NULL, "no kernel %s", name);
  }
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert(system(cmd) == 0);
  return m;
}

typedef struct lane_job {
  const module *m;
  kernel_fn k;
  dual_jit_args a;
  int lane;
} lane_job;

static void *run_lane(void *p) {
  lane_job *j = (lane_job *)p;
  j->m->set_lane(j->lane);
  j->k(j->a);
  return NULL;
}

/* Every pass of the module with arguments a, one warp of 32 threads per pass. */
static void run_args(const module *m, int npass, const dual_jit_args *a) {
  for (int p = 0; p < npass; ++p) {
    pthread_t t[32];
    lane_job jobs[32];
    for (int l = 0; l < 32; ++l) {
      jobs[l] = (lane_job){m, m->kernels[p], *a, l};
      cr_assert(pthread_create(&t[l], NULL, run_lane, &jobs[l]) == 0);
    }
    for (int l = 0; l < 32; ++l) pthread_join(t[l], NULL);
  }
}

/* Every pass of the module over the batch, one warp of 32 threads per pass. */
static void run(const module *m, int npass, const dual_batch *b, const dual_program *prog) {
  dual_jit_args a;
  memset(&a, 0, sizeof a);
  a.count = b->count;
  a.x = b->x, a.x_ps = b->x_ps, a.x_es = b->x_es;
  a.p = b->p, a.p_ps = b->p_ps, a.p_es = b->p_es;
  a.v = b->v, a.v_ps = b->v_ps, a.v_es = b->v_es;
  a.y = b->y, a.y_ps = b->y_ps, a.y_es = b->y_es;
  a.d = b->d, a.d_ps = b->d_ps, a.d_rs = b->d_rs, a.d_cs = b->d_cs;
  a.h = b->h, a.h_ps = b->h_ps, a.h_rs = b->h_rs, a.h_es = b->h_es;
  a.u = b->u, a.u_ps = b->u_ps, a.u_es = b->u_es;
  a.status = b->status;
  (void)prog;
  run_args(m, npass, &a);
}

/* n entries of the CPU engine's results (cpu) and the module's (jit) must be the same bits;
 * `what` names them in a failure (mode, width, array). */
static void assert_same_bits(const double *cpu, const double *jit, int64_t n, const char *what) {
  for (int64_t i = 0; i < n; ++i)
    cr_assert(same_bits(cpu[i], jit[i]), "%s, entry %lld: %.17g vs %.17g", what, (long long)i,
              cpu[i], jit[i]);
}

/* The status words of B points must be equal; returns how many points had a flag. */
static int64_t assert_same_status(const int32_t *cpu, const int32_t *jit, int64_t B, const char *what) {
  int64_t flagged = 0;
  for (int64_t i = 0; i < B; ++i) {
    cr_assert_eq(cpu[i], jit[i], "%s: status of point %lld: %d vs %d", what, (long long)i, cpu[i], jit[i]);
    flagged += cpu[i] != 0;
  }
  return flagged;
}

static int64_t compare_ad(const dual_program *prog, int mode, int width, int reverse, int64_t B,
                          const double *x, const double *p, const double *v, int colmajor);

/* The program in `mode` on B points (x row-major, p, v), by the CPU engine and by the module,
 * row-major results, or column-major ones when `colmajor`; every entry and status word must be
 * the same bits.  Returns how many points had a flag (so callers can see the guarded path ran). */
static int64_t compare(const dual_program *prog, int mode, int width, int64_t B, const double *x,
                       const double *p, const double *v, int colmajor) {
  return compare_ad(prog, mode, width, 0, B, x, p, v, colmajor);
}

/* The loops' loads ahead (DUAL_KNOB_JIT_LOADS_AHEAD) of compare_ad's reverse-mode kernels: the
 * knob's default, unless a test sets it. */
static int rev_loads_ahead = 1;

/* As compare, or in reverse mode (`reverse`: the CPU engine in DUAL_AD_REVERSE against the
 * kernel of jit/jit_source_rev.c; mode GRADIENT, JACOBIAN, or VJP with the cotangents in v). */
static int64_t compare_ad(const dual_program *prog, int mode, int width, int reverse, int64_t B,
                          const double *x, const double *p, const double *v, int colmajor) {
  const int64_t n = prog->n_in, m = prog->n_out, np = prog->n_par;
  const int npass = reverse || mode == DUAL_MODE_EVAL || mode == DUAL_MODE_JVP || n == 0
                        ? 1 : (int)((n + width - 1) / width);
  const int64_t nd = mode == DUAL_MODE_JACOBIAN ? m * n
                   : mode == DUAL_MODE_GRADIENT || mode == DUAL_MODE_VJP ? n
                   : mode == DUAL_MODE_JVP ? m : 0;
  double *y[2], *d[2];
  int32_t *st[2];
  for (int k = 0; k < 2; ++k) {
    y[k] = calloc((size_t)(B * m + 1), 8), d[k] = calloc((size_t)(B * nd + 1), 8);
    st[k] = calloc((size_t)B, 4);
  }
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.x = x, b.x_ps = n, b.x_es = 1, b.p = p, b.p_ps = np, b.p_es = 1;
  if (mode == DUAL_MODE_VJP) b.u = v, b.u_ps = m, b.u_es = 1;
  else b.v = v, b.v_ps = n, b.v_es = 1;
  const int64_t rows = mode == DUAL_MODE_GRADIENT || mode == DUAL_MODE_VJP ? 1 : m, cols = nd / (m ? rows : 1);
  b.y_ps = colmajor ? 1 : m, b.y_es = colmajor ? B : 1;
  b.d_ps = colmajor ? 1 : nd;
  b.d_rs = rows == 1 ? 0 : (colmajor ? B : (mode == DUAL_MODE_JVP ? 1 : cols));
  b.d_cs = mode == DUAL_MODE_JVP ? 0 : (colmajor ? B * rows : 1);
  dual_context *cpu = NULL;
  cr_assert(dual_context_create(&cpu, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  cr_assert(dual_context_set_ad_mode(cpu, reverse ? DUAL_AD_REVERSE : DUAL_AD_FORWARD) == DUAL_SUCCESS);
  b.y = y[0], b.d = mode == DUAL_MODE_EVAL ? NULL : d[0], b.status = st[0];
  int s = dual_run(cpu, prog, mode, &b);
  cr_assert(s == DUAL_SUCCESS, "CPU: %s", dual_context_last_error(cpu));
  cr_assert_eq(dual_context_last_ad_mode(cpu), reverse ? DUAL_AD_REVERSE : DUAL_AD_FORWARD);
  dual_context_destroy(&cpu);
  module mod;
  if (reverse) {
    dual_job job;
    memset(&job, 0, sizeof job);
    job.prog = prog, job.b = &b, job.mode = mode, job.threads = 1, job.reverse = 1;
    job.loads_ahead = rev_loads_ahead;
    int np2 = 0;
    char why[256];
    char *src = dual_jit_source_rev(&job, 0, &np2, why, sizeof why);
    cr_assert(src != NULL, "generator: %s", why);
    cr_assert_eq(np2, 1);
    mod = load_source(src, DUAL_JIT2_KERNEL_NAME, 1);
  } else {
    mod = build(prog, mode, width, npass);
  }
  b.y = y[1], b.d = mode == DUAL_MODE_EVAL ? NULL : d[1], b.status = st[1];
  run(&mod, npass, &b, prog);
  char what[64];
  snprintf(what, sizeof what, "mode %d width %d reverse %d: values", mode, width, reverse);
  assert_same_bits(y[0], y[1], B * m, what);
  snprintf(what, sizeof what, "mode %d width %d reverse %d: derivatives", mode, width, reverse);
  assert_same_bits(d[0], d[1], B * nd, what);
  const int64_t flagged = assert_same_status(st[0], st[1], B, what);
  dlclose(mod.so);
  for (int k = 0; k < 2; ++k) free(y[k]), free(d[k]), free(st[k]);
  return flagged;
}

static int jit_width(int64_t n) {
  int w = 1;
  while (w < n && w < 32) w *= 2;
  return w;
}

/* Each op alone on special, huge, kink and singular arguments: the guarded rerun where a
 * partial is NaN or infinite, bitwise. */
Test(jit_host, every_op_on_special_arguments) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 4242;
  const int64_t B = 100; /* 4 tiles, the last one partial */
  int64_t flagged = 0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    const dual_op_info *info = &dual_op_table[op];
    if (info->spelling[0] == '\0') continue;
    dual_program *prog = rp_op_program(ctx, op);
    cr_assert_not_null(prog, "op %s: %s", info->name, dual_context_last_error(ctx));
    double *x = random_array(&rng, B * 3, -3.0, 3.0);
    for (int64_t i = 0; i < B * 3; i += 7) x[i] = rp_uniform(&rng, -40.0, 40.0);
    for (int64_t i = 5; i < B * 3; i += 13)
      x[i] = (rp_next(&rng) & 1 ? -1.0 : 1.0) * pow(10.0, rp_uniform(&rng, 0.0, 308.0));
    x[0] = 0.0, x[3] = 1.0, x[6] = -1.0, x[9] = NAN, x[12] = INFINITY, x[15] = -INFINITY;
    x[18] = -0.0, x[21] = 4.9e-324, x[70] = 0.0, x[71] = 0.0, x[72] = 0.0;
    flagged += compare(prog, DUAL_MODE_JACOBIAN, 4, B, x, NULL, NULL, 0);
    free(x);
    dual_program_destroy(&prog);
  }
  cr_assert_gt(flagged, 0, "no point was flagged: the guarded path never ran");
  dual_context_destroy(&ctx);
}

/* Random programs in every first-order mode, with one pass and with several, row-major and
 * column-major results. */
Test(jit_host, random_programs_every_mode) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 77;
  const int64_t B = 70;
  for (int i = 0; i < 6; ++i) {
    const int nout = i % 3 == 0 ? 1 : 3;
    dual_program *prog = rp_random_program(ctx, &rng, 60 + 10 * i, 7, 2, nout);
    cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
    double *x = random_array(&rng, B * 7, -1.5, 1.5), *p = random_array(&rng, B * 2, -1.5, 1.5);
    double *v = random_array(&rng, B * 7, -1.0, 1.0);
    x[5] = 0.0, x[11] = 1.0;
    compare(prog, DUAL_MODE_EVAL, 0, B, x, p, NULL, i % 2);
    compare(prog, DUAL_MODE_JVP, 1, B, x, p, v, i % 2);
    compare(prog, DUAL_MODE_JACOBIAN, i < 3 ? jit_width(7) : 2, B, x, p, NULL, i % 2);
    if (nout == 1) compare(prog, DUAL_MODE_GRADIENT, 4, B, x, p, NULL, i % 2);
    if (i == 1) compare(prog, DUAL_MODE_JACOBIAN, 1, B, x, p, NULL, 0); /* seven passes of one lane */
    free(x), free(p), free(v);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* ba (all rows staged at once) and kin (row by row, 32 lanes and 16 x 2), both layouts. */
Test(jit_host, ba_and_kin) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 5;
  const int64_t B = 40;
  dual_program *ba = bench_program(ctx, "ba"), *kin = bench_program(ctx, "kin");
  double *x = random_array(&rng, B * 15, -1.0, 1.0), *p = random_array(&rng, B * 2, -1.0, 1.0);
  for (int64_t i = 0; i < B; ++i) x[i * 15 + 13] += 10.0, x[i * 15 + 14] = 1.0;
  compare(ba, DUAL_MODE_JACOBIAN, 16, B, x, p, NULL, 0);
  compare(ba, DUAL_MODE_JACOBIAN, 16, B, x, p, NULL, 1);
  double *xk = random_array(&rng, B * 32, 0.5, 1.5);
  compare(kin, DUAL_MODE_JACOBIAN, 32, B, xk, NULL, NULL, 0);
  compare(kin, DUAL_MODE_JACOBIAN, 16, B, xk, NULL, NULL, 1);
  /* a program without inputs: one pass, values only */
  dual_program *none = NULL;
  cr_assert(dual_program_compile(ctx, "param c\noutput f = 2*c\n", "none", &none) == 0);
  compare(none, DUAL_MODE_JACOBIAN, 1, B, x, p, NULL, 0);
  dual_program_destroy(&none);
  free(x), free(p), free(xk);
  dual_program_destroy(&ba), dual_program_destroy(&kin);
  dual_context_destroy(&ctx);
}

/* Where an infinite partial meets an exactly zero tangent the guarded sum gives 0 (the plain one
 * would give NaN): sqrt(x0 x1) at x1 = 0 has d/dx0 = x1 / (2 sqrt(x0 x1)) -> the convention's 0,
 * and log(x0 x1 + x2) likewise at x1 = 0, x2 = 0.  Hand-derived values, and the CPU engine's bits. */
Test(jit_host, guarded_sums_on_zero_tangents) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert(dual_program_compile(ctx, "input x[3]\noutput f = sqrt(x[0]*x[1])\n"
                                      "output g = log(x[0]*x[1] + x[2])\n", "guard", &prog) == 0,
            "%s", dual_context_last_error(ctx));
  const int64_t B = 64;
  double *x = malloc(sizeof(double) * B * 3);
  for (int64_t i = 0; i < B; ++i) {
    x[3 * i] = 0.5 + 0.01 * (double)i;
    x[3 * i + 1] = i % 5 == 0 ? 0.0 : 0.25 + 0.001 * (double)i;
    x[3 * i + 2] = i % 5 == 0 ? 0.0 : 1.0;
  }
  compare(prog, DUAL_MODE_JACOBIAN, 4, B, x, NULL, NULL, 0);
  /* the values the comparison just matched, against the hand-derived ones */
  double y[2], J[6];
  int32_t st;
  cr_assert(dual_jacobian(ctx, prog, 1, x, 3, NULL, 0, y, 2, J, 6, &st) == DUAL_SUCCESS);
  cr_assert(J[0] == 0.0 && isinf(J[1]) && J[2] == 0.0, "df/dx = (%g, %g, %g)", J[0], J[1], J[2]);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* Rows flushed one at a time with a column count that does not divide 32 (5 inputs, 90 outputs:
 * too many rows to stage at once), both layouts, and a lane that overflows to infinity although
 * every partial is finite (so only the staged entries' flags see it): d/dx0 of x0 * 1e300 * 1e300
 * at x0 = 1e-300 is 1e600 = inf, flagged DUAL_PT_INF, value 1e300. */
Test(jit_host, row_flushes_and_lane_overflow) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  char text[8192];
  int len = snprintf(text, sizeof text, "input x[5]\n");
  for (int r = 0; r < 90; ++r)
    len += snprintf(text + len, sizeof text - (size_t)len, "output f%d = x[%d] * x[%d] + %d\n", r,
                    r % 5, (r / 5) % 5, r);
  len += snprintf(text + len, sizeof text - (size_t)len, "output big = x[0] * 1e300 * 1e300\n");
  dual_program *prog = NULL;
  cr_assert(dual_program_compile(ctx, text, "rows", &prog) == 0, "%s", dual_context_last_error(ctx));
  uint64_t rng = 9;
  const int64_t B = 45; /* a full tile and a partial one */
  double *x = random_array(&rng, B * 5, -2.0, 2.0);
  for (int64_t i = 0; i < B; i += 3) x[5 * i] = 1e-300;
  const int64_t flagged = compare(prog, DUAL_MODE_JACOBIAN, 8, B, x, NULL, NULL, 0);
  cr_assert_eq(flagged, B, "flagged points: %lld (elsewhere the value itself is infinite)",
               (long long)flagged);
  compare(prog, DUAL_MODE_JACOBIAN, 8, B, x, NULL, NULL, 1);
  double y[91], J[91 * 5];
  int32_t st;
  cr_assert(dual_jacobian(ctx, prog, 1, x, 5, NULL, 0, y, 91, J, 91 * 5, &st) == DUAL_SUCCESS);
  cr_assert(y[90] == 1e300 * 1e-300 * 1e300 || fabs(y[90] - 1e300) < 1e286, "big = %g", y[90]);
  cr_assert(isinf(J[90 * 5]) && J[90 * 5] > 0.0, "d big/dx0 = %g", J[90 * 5]);
  cr_assert(st & DUAL_PT_INF, "status %#x lacks DUAL_PT_INF", st);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* ---- second order (jit/jit_source2.c) ------------------------------------------------------ */

/* The Hessian (full or packed layout) or HVP of prog on B points, by the CPU engine and by the
 * generated second-order kernels of width `width`: every value, Jacobian entry, component and
 * status word the same bits.  Returns how many points had a flag. */
static int64_t compare2n(const dual_program *prog, int mode, int layout, int width, int nested,
                         int reverse, int opts, int64_t B, const double *x, const double *p,
                         const double *v);
static int64_t compare2(const dual_program *prog, int mode, int layout, int width, int64_t B,
                        const double *x, const double *p, const double *v) {
  return compare2n(prog, mode, layout, width, 0, 0, 0, B, x, p, v);
}

/* As compare2 for forward-over-reverse: the CPU engine in DUAL_AD_REVERSE against the kernels
 * of jit/jit_source_rev.c with `dirs` directions per pass (0: the default). */
static int64_t compare_rev(const dual_program *prog, int mode, int layout, int dirs, int64_t B,
                           const double *x, const double *p, const double *v) {
  return compare2n(prog, mode, layout, dirs, 0, 1, 0, B, x, p, v);
}

/* As compare2, with the nested-Hessian blocking (DUAL_KNOB_HESSIAN_NESTED) when `nested`, or
 * forward-over-reverse when `reverse`; `opts`: OPT_COLMAJOR results point-fastest, OPT_NO_D no
 * Jacobian asked for (d NULL: the flags of its entries follow each engine's rule),
 * OPT_GROUPS(k) forward-over-reverse kernels of k groups of directions each (default: one kernel
 * of all of them). */
enum { OPT_COLMAJOR = 1, OPT_NO_D = 2 };
#define OPT_GROUPS(k) ((k) << 8)
static int64_t compare2n(const dual_program *prog, int mode, int layout, int width, int nested,
                         int reverse, int opts, int64_t B, const double *x, const double *p,
                         const double *v) {
  const int colmajor = opts & OPT_COLMAJOR;
  const int64_t n = prog->n_in, m = prog->n_out, np = prog->n_par;
  const int64_t len = mode == DUAL_MODE_HVP ? n : layout == DUAL_HESSIAN_PACKED ? n * (n + 1) / 2 : n * n;
  double *y[2], *d[2], *h[2];
  int32_t *st[2];
  for (int k = 0; k < 2; ++k) {
    y[k] = calloc((size_t)(B * m + 1), 8), d[k] = calloc((size_t)(B * m * n + 1), 8);
    h[k] = calloc((size_t)(B * m * len + 1), 8), st[k] = calloc((size_t)B, 4);
  }
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.x = x, b.x_ps = n, b.x_es = 1, b.p = p, b.p_ps = np, b.p_es = 1;
  b.v = v, b.v_ps = n, b.v_es = 1;
  b.y_ps = m, b.y_es = 1, b.d_ps = m * n, b.d_rs = n, b.d_cs = 1;
  b.h_ps = m * len, b.h_rs = len, b.h_es = 1, b.h_layout = layout;
  if (colmajor) {
    b.y_ps = 1, b.y_es = B, b.d_ps = 1, b.d_rs = n * B, b.d_cs = B;
    b.h_ps = 1, b.h_rs = len * B, b.h_es = B;
  }
  dual_context *cpu = NULL;
  cr_assert(dual_context_create(&cpu, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  cr_assert(dual_context_set_width(cpu, width) == DUAL_SUCCESS);
  cr_assert(dual_context_set_ad_mode(cpu, reverse ? DUAL_AD_REVERSE : DUAL_AD_FORWARD) == DUAL_SUCCESS);
  cr_assert(dual_context_set_knob(cpu, DUAL_KNOB_HESSIAN_NESTED, nested) == DUAL_SUCCESS);
  b.y = y[0], b.d = opts & OPT_NO_D ? NULL : d[0], b.h = h[0], b.status = st[0];
  int s = dual_run(cpu, prog, mode, &b);
  cr_assert(s == DUAL_SUCCESS, "CPU: %s", dual_context_last_error(cpu));
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = mode, job.width = width, job.threads = 1;
  job.nested_hessian = nested, job.reverse = reverse, job.groups = opts >> 8;
  job.loads_ahead = 1; /* (looped kernels: the default of DUAL_KNOB_JIT_LOADS_AHEAD) */
  int npass = 0;
  char why[256];
  char *src = reverse ? dual_jit_source_rev(&job, 0, &npass, why, sizeof why)
                      : dual_jit_source2(&job, &npass, why, sizeof why);
  cr_assert(src != NULL, "generator: %s", why);
  module mod = load_source(src, DUAL_JIT2_KERNEL_NAME, npass);
  b.y = y[1], b.d = opts & OPT_NO_D ? NULL : d[1], b.h = h[1], b.status = st[1];
  run(&mod, npass, &b, prog);
  char what[80];
  cr_assert(dual_context_last_ad_mode(cpu) == (reverse ? DUAL_AD_REVERSE : DUAL_AD_FORWARD));
  dual_context_destroy(&cpu);
  snprintf(what, sizeof what, "mode %d layout %d width %d nested %d reverse %d: values", mode, layout, width, nested, reverse);
  assert_same_bits(y[0], y[1], B * m, what);
  snprintf(what, sizeof what, "mode %d layout %d width %d nested %d reverse %d: Jacobian", mode, layout, width, nested, reverse);
  assert_same_bits(d[0], d[1], B * m * n, what);
  snprintf(what, sizeof what, "mode %d layout %d width %d nested %d reverse %d: components", mode, layout, width, nested, reverse);
  assert_same_bits(h[0], h[1], B * m * len, what);
  const int64_t flagged = assert_same_status(st[0], st[1], B, what);
  dlclose(mod.so);
  for (int k = 0; k < 2; ++k) free(y[k]), free(d[k]), free(h[k]), free(st[k]);
  return flagged;
}

/* hess (full and packed, one block and several, triangular and nested diagonal blocks), and its
 * HVP. */
Test(jit_host2, hess_hessians_and_hvps) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *hess = bench_program(ctx, "hess");
  uint64_t rng = 31;
  const int64_t B = 40;
  double *x = random_array(&rng, B * 16, -1.5, 1.5), *v = random_array(&rng, B * 16, -1.0, 1.0);
  compare2(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 16, B, x, NULL, NULL);
  compare2(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_PACKED, 8, B, x, NULL, NULL);
  compare2(hess, DUAL_MODE_HVP, DUAL_HESSIAN_FULL, 8, B, x, NULL, v);
  compare2n(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 8, 1, 0, 0, B, x, NULL, NULL); /* nested blocks */
  free(x), free(v);
  dual_program_destroy(&hess);
  dual_context_destroy(&ctx);
}

/* Random programs (every op kind the generator draws, parameters, several outputs), Hessians
 * and HVPs in several blockings. */
Test(jit_host2, random_programs) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 808;
  const int64_t B = 36;
  for (int i = 0; i < 4; ++i) {
    dual_program *prog = rp_random_program(ctx, &rng, 40 + 15 * i, 6, 2, i % 2 ? 2 : 1);
    cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
    double *x = random_array(&rng, B * 6, -1.5, 1.5), *p = random_array(&rng, B * 2, -1.5, 1.5);
    double *v = random_array(&rng, B * 6, -1.0, 1.0);
    x[4] = 0.0, x[7] = 1.0;
    compare2(prog, DUAL_MODE_HESSIAN, i % 2 ? DUAL_HESSIAN_PACKED : DUAL_HESSIAN_FULL, i < 2 ? 8 : 2, B,
             x, p, NULL);
    compare2(prog, DUAL_MODE_HVP, DUAL_HESSIAN_FULL, i < 2 ? 4 : 2, B, x, p, v);
    free(x), free(p), free(v);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* Each op alone on special arguments: NaN and infinite partials take the guarded products,
 * bitwise as the CPU's, in nested forward, forward-over-reverse and reverse mode. */
Test(jit_host2, every_op_on_special_arguments) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 4243;
  const int64_t B = 40;
  int64_t flagged = 0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    const dual_op_info *info = &dual_op_table[op];
    if (info->spelling[0] == '\0') continue;
    dual_program *prog = rp_op_program(ctx, op);
    cr_assert_not_null(prog, "op %s: %s", info->name, dual_context_last_error(ctx));
    double *x = random_array(&rng, B * 3, -3.0, 3.0);
    for (int64_t i = 5; i < B * 3; i += 13)
      x[i] = (rp_next(&rng) & 1 ? -1.0 : 1.0) * pow(10.0, rp_uniform(&rng, 0.0, 308.0));
    x[0] = 0.0, x[3] = 1.0, x[6] = -1.0, x[9] = NAN, x[12] = INFINITY, x[18] = -0.0;
    flagged += compare2(prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 4, B, x, NULL, NULL);
    /* forward-over-reverse (jit/jit_source_rev.c): Hessians and HVPs along special directions */
    double *v = random_array(&rng, B * 3, -1.0, 1.0), *u = random_array(&rng, B * prog->n_out, -1.0, 1.0);
    v[2] = 0.0, v[5] = -0.0, v[8] = INFINITY;
    flagged += compare_rev(prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 0, B, x, NULL, NULL);
    flagged += compare_rev(prog, DUAL_MODE_HVP, DUAL_HESSIAN_FULL, 0, B, x, NULL, v);
    /* reverse mode (first order), and a VJP whose cotangents are not finite */
    u[1] = INFINITY, u[3] = NAN, u[5] = 0.0;
    flagged += compare_ad(prog, DUAL_MODE_JACOBIAN, 0, 1, B, x, NULL, NULL, 0);
    flagged += compare_ad(prog, DUAL_MODE_VJP, 0, 1, B, x, NULL, u, 0);
    free(x), free(v), free(u);
    dual_program_destroy(&prog);
  }
  cr_assert_gt(flagged, 0, "no point was flagged");
  dual_context_destroy(&ctx);
}


/* ---- forward-over-reverse (jit/jit_source_rev.c) ------------------------------------------- */

/* hess: Hessians (full and packed) and HVPs against the CPU engine in reverse mode. */
Test(jit_host_rev, hess_hessians_and_hvps) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *hess = bench_program(ctx, "hess");
  uint64_t rng = 37;
  const int64_t B = 40;
  double *x = random_array(&rng, B * 16, -1.5, 1.5), *v = random_array(&rng, B * 16, -1.0, 1.0);
  compare_rev(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 0, B, x, NULL, NULL);
  compare_rev(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_PACKED, 16, B, x, NULL, NULL); /* one pass */
  compare_rev(hess, DUAL_MODE_HVP, DUAL_HESSIAN_FULL, 0, B, x, NULL, v);
  /* no Jacobian asked for (d NULL): nothing is staged for d, values, components and flags as
   * the CPU's, nested forward and forward-over-reverse */
  compare2n(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 8, 0, 0, OPT_NO_D, B, x, NULL, NULL);
  compare2n(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 0, 0, 1, OPT_NO_D, B, x, NULL, NULL);
  /* column-major results (points adjacent): each staged chunk leaves point-fastest */
  compare2n(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 0, 0, 1, OPT_COLMAJOR, B, x, NULL, NULL);
  compare2n(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_PACKED, 8, 0, 0, OPT_COLMAJOR, B, x, NULL, NULL);
  /* a kernel per group of four directions (values recomputed by each), and 8 groups of two in
   * kernels of three, three and two groups */
  compare2n(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 4, 0, 1, OPT_GROUPS(1), B, x, NULL, NULL);
  compare2n(hess, DUAL_MODE_HESSIAN, DUAL_HESSIAN_PACKED, 2, 0, 1, OPT_GROUPS(3), B, x, NULL, NULL);
  free(x), free(v);
  dual_program_destroy(&hess);
  dual_context_destroy(&ctx);
}

/* Forward-over-reverse where first-order adjoints are infinite or NaN (sqrt, log and 1/u at 0
 * deep in a chain): the generated sweeps leave out structurally absent terms, which is exact
 * only because an exactly zero d' adds nothing even against an infinite adjoint (DUAL_TT,
 * engine/interp_rev.h); against the CPU bitwise, Hessians by 1, 2 and 3 (the default)
 * directions per pass. */
Test(jit_host_rev, infinite_adjoints_and_absent_terms) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  const char *texts[3] = {
      "input x\ninput y\ninput z\noutput f = sqrt(x * y) + z",
      "input x\ninput y\ninput z\noutput f = log(x * y + z * z) * z + sqrt(square(x) * y)",
      "input x\ninput y\ninput z\nlet u = x * y - z\noutput f = 1 / u + exp(z) * sqrt(u * u)",
  };
  const double pts[6][3] = {{0.0, 1.0, 2.0}, {1.0, 0.0, 0.0}, {0.0, 0.0, 0.0},
                            {2.0, 1.0, 2.0}, {INFINITY, 1.0, 0.5}, {-0.0, 3.0, 1.0}};
  const int64_t B = 6;
  double x[18], v[18];
  for (int b = 0; b < 6; ++b)
    for (int j = 0; j < 3; ++j) x[b * 3 + j] = pts[b][j], v[b * 3 + j] = j == b % 3 ? 1.0 : 0.5 * j;
  for (int i = 0; i < 3; ++i) {
    dual_program *prog = NULL;
    cr_assert(dual_program_compile(ctx, texts[i], "inf_adj", &prog) == DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    for (int dirs = 0; dirs <= 2; ++dirs) { /* 0: the default, one pass */
      compare_rev(prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, dirs, B, x, NULL, NULL);
      compare_rev(prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_PACKED, dirs, B, x, NULL, NULL);
    }
    compare_rev(prog, DUAL_MODE_HVP, DUAL_HESSIAN_FULL, 0, B, x, NULL, v);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* Random programs (every op kind the generator draws, parameters, several outputs); n = 20
 * takes five groups of the default four directions, in one kernel and in kernels of two groups,
 * and one program runs all its six directions in one group (width 16). */
Test(jit_host_rev, random_programs) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 909;
  const int64_t B = 36;
  for (int i = 0; i < 4; ++i) {
    const int n = i == 3 ? 20 : 6;
    dual_program *prog = rp_random_program(ctx, &rng, 30 + 10 * i, n, 2, i % 2 ? 2 : 1);
    cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
    double *x = random_array(&rng, B * n, -1.5, 1.5), *p = random_array(&rng, B * 2, -1.5, 1.5);
    double *v = random_array(&rng, B * n, -1.0, 1.0);
    x[4] = 0.0, x[7] = 1.0;
    compare_rev(prog, DUAL_MODE_HESSIAN, i % 2 ? DUAL_HESSIAN_PACKED : DUAL_HESSIAN_FULL, i == 1 ? 16 : 0,
                B, x, p, NULL);
    if (i == 3) /* five groups of four in kernels of two, two and one */
      compare2n(prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, 4, 0, 1, OPT_GROUPS(2), B, x, p, NULL);
    compare_rev(prog, DUAL_MODE_HVP, DUAL_HESSIAN_FULL, 0, B, x, p, v);
    free(x), free(p), free(v);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* ---- reverse mode, first order (jit/jit_source_rev.c without directions) ------------------- */

/* Gradients, Jacobians by rows and VJPs of random programs (parameters, several outputs),
 * row- and column-major, and of hess, against the CPU engine in reverse mode. */
Test(jit_host_rev, reverse_mode_gradients_jacobians_vjps) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 5150;
  const int64_t B = 45; /* two tiles, the second partial */
  for (int i = 0; i < 4; ++i) {
    const int n = i == 3 ? 9 : 5, m = i % 2 ? 3 : 1;
    dual_program *prog = rp_random_program(ctx, &rng, 30 + 10 * i, n, 2, m);
    cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
    double *x = random_array(&rng, B * n, -1.5, 1.5), *p = random_array(&rng, B * 2, -1.5, 1.5);
    double *u = random_array(&rng, B * m, -1.0, 1.0);
    x[4] = 0.0, x[7] = 1.0, u[2] = 0.0;
    compare_ad(prog, DUAL_MODE_JACOBIAN, 0, 1, B, x, p, NULL, i == 2);
    compare_ad(prog, DUAL_MODE_VJP, 0, 1, B, x, p, u, i == 1);
    if (m == 1) compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, p, NULL, i == 0);
    free(x), free(p), free(u);
    dual_program_destroy(&prog);
  }
  dual_program *hess = bench_program(ctx, "hess");
  double *x = random_array(&rng, B * 16, -1.5, 1.5);
  compare_ad(hess, DUAL_MODE_GRADIENT, 0, 1, B, x, NULL, NULL, 0);
  free(x);
  dual_program_destroy(&hess);
  dual_context_destroy(&ctx);
}

/* Programs over DUAL_JIT_MAX_REV_INSTR that no loop takes (jit_rev_loops.c) get the segmented
 * kernel (jit_source_rev.h): a running product of 400 terms (its carried value is needed
 * backward; 1602 instructions, seven segments: adjoints carried across every cut), its VJP, and
 * a chain of 500 random ops over two running values and seven inputs read all along; bitwise
 * against the CPU engine in reverse mode. */
Test(jit_host_rev, segmented_reverse_mode) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  const char *text = "input x[400]\noutput f = prod(i in 0..400, 1 + 0.001 * x[i])\n";
  dual_program *prog = NULL;
  cr_assert(dual_program_compile(ctx, text, "prod400", &prog) == DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert(prog->n_instr > DUAL_JIT_MAX_REV_INSTR && prog->n_instr <= DUAL_JIT_MAX_REV_SEGMENTED,
            "%lld instructions", (long long)prog->n_instr);
  uint64_t rng = 6061;
  const int64_t B = 40;
  double *x = random_array(&rng, B * 400, -1.5, 1.5), *u = random_array(&rng, B, -1.0, 1.0);
  x[3] = NAN, x[450] = 0.0;
  compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, NULL, NULL, 0);
  compare_ad(prog, DUAL_MODE_VJP, 0, 1, B, x, NULL, u, 1);
  free(x), free(u);
  dual_program_destroy(&prog);
  prog = rp_chain_program(ctx, &rng, 7, 1, 500);
  cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
  cr_assert(prog->n_instr > DUAL_JIT_MAX_REV_INSTR && prog->n_instr <= DUAL_JIT_MAX_REV_SEGMENTED,
            "%lld instructions", (long long)prog->n_instr);
  x = random_array(&rng, B * 7, -1.5, 1.5);
  compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, NULL, NULL, 0);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* The reverse-mode gradient kernel's source for prog (NULL with the reason in why). */
static char *gradient_source(const dual_program *prog, char *why, int64_t cap) {
  dual_batch b;
  dual_batch_init(&b);
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = DUAL_MODE_GRADIENT, job.threads = 1, job.reverse = 1;
  job.loads_ahead = 1;
  int np = 0;
  return dual_jit_source_rev(&job, 0, &np, why, cap);
}

/* Long programs made of runs take the looped kernel (jit/jit_rev_loops.c; its header comment
 * names it): grad itself (n = 1024, 6145 instructions: two loops and 11 straight instructions),
 * with a NaN, an infinity and zeros among the inputs, also its VJP and column-major results; a long sum of products of parameters,
 * draws and divisions (runs whose bodies read parameters, draws and values from before the run);
 * a running product, whose carried value the backward loop would need (not an input), so it
 * takes segments; a sum whose iterations share a square with their neighbour, which the
 * backward loop computes again for the iteration before; and a running sum that starts from a
 * constant beside a passive running count (neither the constant nor the count takes an
 * adjoint).  Gradients bitwise against the CPU engine in reverse mode (grad's also with its
 * loops' loads where used, and 4 and 8 iterations ahead). */
Test(jit_host_rev, looped_reverse_mode) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  const char *const *texts = dual_test_loop_programs;
  const int looped[DUAL_TEST_LOOP_PROGRAMS] = {1, 1, 0, 1, 1};
  uint64_t rng = 6063;
  const int64_t B = 40;
  for (int c = 0; c < 5; ++c) {
    dual_program *prog = NULL;
    cr_assert(dual_program_compile(ctx, texts[c], "looped", &prog) == DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    cr_assert_gt(prog->n_instr, DUAL_JIT_MAX_REV_INSTR);
    char why[256];
    char *src = gradient_source(prog, why, sizeof why);
    cr_assert(src != NULL, "generator: %s", why);
    cr_assert_eq(strstr(src, ", looped\n") != NULL, looped[c], "program %d: looped %d", c, looped[c]);
    if (looped[c]) cr_assert_lt(strlen(src), 40000, "program %d: %zu bytes of source", c, strlen(src));
    if (looped[c]) /* its loops load their inputs an iteration ahead */
      cr_assert(strstr(src, "DUAL_JIT_LDX_AHEAD(") != NULL, "program %d", c);
    if (c == 0) /* the backward ring loop reads x[k_ + 1] as the next iteration's x[k_ + 2] */
      cr_assert(strstr(src, "      nb0_1_0 = lx0;\n") != NULL);
    if (c == 3) /* square(x[i]) is the iteration before's square(x[i + 1]): computed again */
      cr_assert(strstr(src, "      if (k_ > 0) {\n") != NULL);
    free(src);
    double *x = random_array(&rng, B * prog->n_in, -1.5, 1.5), *p = random_array(&rng, B * (prog->n_par + 1), 0.5, 2.0);
    x[3] = NAN, x[prog->n_in + 5] = INFINITY, x[2 * prog->n_in] = 0.0, x[2 * prog->n_in + 1] = -0.0;
    compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, prog->n_par ? p : NULL, NULL, 0);
    if (c == 0) { /* its VJP (cotangents with a zero and a NaN) and its column-major gradient */
      double *u = random_array(&rng, B, -2.0, 2.0);
      u[1] = 0.0, u[2] = NAN;
      compare_ad(prog, DUAL_MODE_VJP, 0, 1, B, x, NULL, u, 0);
      compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, NULL, NULL, 1);
      for (int d = 0; d <= 8; d += 4) { /* loads where used, and 4 and 8 iterations ahead */
        rev_loads_ahead = d;
        compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, NULL, NULL, 0);
      }
      rev_loads_ahead = 1;
      free(u);
    }
    free(x), free(p);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* Random programs of loops for the looped kernel: a few sums (and sometimes a product, which
 * takes segments) over N inputs of bodies drawn from a list — neighbours, values from before the
 * loop, a parameter, comparisons, select, max, the elementary functions — tied together by
 * straight-line code; gradients and VJPs bitwise against the CPU engine in reverse mode, the
 * loops' loads 1, 2 or 3 iterations ahead.  Bodies
 * with x[i] and x[i + 1] share values between neighbouring iterations (CSE), so some loops
 * carry a computed value that their backward loop computes again for the iteration before. */
static char *random_loop_program(uint64_t *rng, int n) {
  static const char *bodies[] = {
      "sin(x[i]) * x[i + 1]", "exp(0.1 * x[i]) / (1.5 + square(x[i + 1]))", "tanh(x[i] - c0) * w[0]",
      "sqrt(1 + square(x[i])) * c0", "x[i] * x[i + 1] - cos(x[i + 1])", "abs(x[i] - 0.3) * x[i]",
      "max(x[i], x[i + 1]) * 2", "(x[i] > 0) * x[i + 1]", "select(x[i] > x[i + 1], x[i], sin(x[i + 1]))",
      "atan2(x[i], 1 + square(x[i + 1]))", "pow(1.2 + sigmoid(x[i]), c1)", "hypot(x[i], c0) - x[i]",
      "log1p(square(x[i] * c1))", "softplus(x[i] - x[i + 1]) * w[1]", "fma(x[i], c0, x[i + 1]) * x[i]"};
  const int nb = (int)(sizeof bodies / sizeof bodies[0]);
  char *text = malloc(8192);
  int len = snprintf(text, 8192, "input x[%d]\nparam w[2]\nlet c0 = 0.5 + square(sin(x[0]))\n"
                                 "let c1 = 1.0 + 0.1 * cos(x[1] * x[0])\n", n);
  const int loops = 2 + (int)(rp_next(rng) % 3);
  int order[sizeof bodies / sizeof bodies[0]]; /* each body once: a body shared by two loops is
                                                  computed once (CSE), and the later loop then reads
                                                  the earlier one's values, which keeps it straight */
  for (int i = 0; i < nb; ++i) order[i] = i;
  for (int i = nb - 1; i > 0; --i) {
    const int j = (int)(rp_next(rng) % (uint64_t)(i + 1)), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  for (int k = 0; k < loops; ++k) {
    const int prod = rp_next(rng) % 5 == 0;
    const char *b1 = bodies[order[2 * k]], *b2 = bodies[order[2 * k + 1]];
    if (prod)
      len += snprintf(text + len, (size_t)(8192 - len), "let s%d = prod(i in 0..%d, 1 + 0.001 * (%s))\n", k, n - 1, b1);
    else
      len += snprintf(text + len, (size_t)(8192 - len), "let s%d = sum(i in 0..%d, %s + %s * %s)\n", k, n - 1, b1,
                      k ? "s0" : "c1", b2);
  }
  len += snprintf(text + len, (size_t)(8192 - len), "output f = s0");
  for (int k = 1; k < loops; ++k) len += snprintf(text + len, (size_t)(8192 - len), " + 0.5 * s%d", k);
  snprintf(text + len, (size_t)(8192 - len), " + c0 * x[%d]\n", n - 1);
  return text;
}

Test(jit_host_rev, looped_random_programs) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  uint64_t rng = 9090;
  const int64_t B = 33;
  int looped = 0, prevs = 0;
  for (int c = 0; c < 12; ++c) {
    const int n = 150 + (int)(rp_next(&rng) % 200);
    char *text = random_loop_program(&rng, n);
    dual_program *prog = NULL;
    cr_assert(dual_program_compile(ctx, text, "loops", &prog) == DUAL_SUCCESS, "%s\n%s", dual_context_last_error(ctx), text);
    free(text);
    cr_assert_gt(prog->n_instr, DUAL_JIT_MAX_REV_INSTR);
    char why[256];
    char *src = gradient_source(prog, why, sizeof why);
    if (src == NULL) { /* no loop takes it and it is over the segments' rule */
      cr_assert(prog->n_instr > DUAL_JIT_MAX_REV_SEGMENTED && strstr(why, "rule") != NULL, "%s", why);
      dual_program_destroy(&prog);
      continue;
    }
    looped += strstr(src, ", looped\n") != NULL;
    prevs += strstr(src, "      if (k_ > 0) {\n") != NULL; /* values of the iteration before */
    free(src);
    double *x = random_array(&rng, B * n, -1.5, 1.5), *p = random_array(&rng, B * 2, 0.5, 2.0);
    double *u = random_array(&rng, B, -1.0, 1.0);
    x[5] = NAN, x[n + 2] = 0.0, x[2 * n + 7] = -0.0;
    rev_loads_ahead = 1 + c % 3; /* the loops' loads 1, 2 or 3 iterations ahead */
    compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, p, NULL, 0);
    compare_ad(prog, DUAL_MODE_VJP, 0, 1, B, x, p, u, 0);
    rev_loads_ahead = 1;
    free(x), free(p), free(u);
    dual_program_destroy(&prog);
  }
  cr_assert_geq(looped, 6, "only %d of the programs were looped", looped);
  cr_assert_geq(prevs, 1, "only %d looped kernels computed the iteration before's values again", prevs);
  dual_context_destroy(&ctx);
}

/* Bytecode the language never emits but dual_program_load accepts: the inputs loaded again
 * every five instructions, so in a segmented kernel each input's gradient is carried from
 * segment to segment (1203 instructions):
 *   r0 = x0; r1 = x1; 240 times { r2 = x[k % 2]; r3 = sin(r0); r0 = r0 + r2; r2 = r3 * r1;
 *   r1 = r1 + r2 }; out f = r1 */
static dual_program *reloading_program(void) {
  enum { REPS = 240 };
  const int64_t n = 2 + 5 * REPS + 1;
  dual_program *prog = dual_program_alloc(2, 0, 1, 0, n);
  cr_assert_not_null(prog);
  prog->n_regs = 4, prog->n_active = 4;
  int64_t t = 0;
  const uint32_t ops[5][4] = {{DUAL_OP_LDX, 2, 0, 0}, {DUAL_OP_SIN, 3, 0, 0}, {DUAL_OP_ADD, 0, 0, 2},
                              {DUAL_OP_MUL, 2, 3, 1}, {DUAL_OP_ADD, 1, 1, 2}};
  for (int k = -1; k < REPS; ++k)
    for (int i = 0; i < (k < 0 ? 2 : 5); ++i) {
      uint32_t *w = prog->code + DUAL_INSTR_WORDS * t++;
      const uint32_t *o = k < 0 ? (const uint32_t[4]){DUAL_OP_LDX, (uint32_t)i, (uint32_t)i, 0} : ops[i];
      w[0] = o[0] << DUAL_DST_BITS | o[1], w[1] = o[2], w[2] = o[3], w[3] = 0;
      if (k >= 0 && i == 0) w[1] = (uint32_t)(k % 2); /* x[k % 2] */
    }
  uint32_t *w = prog->code + DUAL_INSTR_WORDS * t++;
  w[0] = (uint32_t)DUAL_OP_OUT << DUAL_DST_BITS, w[1] = 1, w[2] = 0, w[3] = 0;
  cr_assert_eq(t, n);
  for (int i = 0; i < 2; ++i) prog->in_names[i] = strdup(i ? "x1" : "x0");
  prog->out_names[0] = strdup("f");
  char msg[256];
  cr_assert_eq(dual_program_validate(prog, msg, sizeof msg), DUAL_SUCCESS, "%s", msg);
  return prog;
}

/* The reloading program's gradient and VJP: carried input gradients, bitwise. */
Test(jit_host_rev, segmented_reverse_mode_with_reloaded_inputs) {
  dual_program *prog = reloading_program();
  cr_assert_gt(prog->n_instr, DUAL_JIT_MAX_REV_INSTR);
  uint64_t rng = 6062;
  const int64_t B = 36;
  double *x = random_array(&rng, B * 2, -0.01, 0.01), *u = random_array(&rng, B, -1.0, 1.0);
  compare_ad(prog, DUAL_MODE_GRADIENT, 0, 1, B, x, NULL, NULL, 0);
  compare_ad(prog, DUAL_MODE_VJP, 0, 1, B, x, NULL, u, 0);
  free(x), free(u);
  dual_program_destroy(&prog);
}

/* ---- dual_sgrad (jit/jit_source.c's sgrad kernels) ------------------------------------------ */

/* dual_sgrad of prog on B points (x row-major, p; draws keyed from point0, S samples, `flags`
 * DUAL_SGRAD_*) by the CPU engine in forward mode and by the generated sgrad kernels of `width`
 * lanes per pass — or, with width 0, by the CPU engine in reverse mode and the reverse-mode
 * sgrad kernel of jit_source_rev.c — (an item per point and sample block, the blocks then folded in order as
 * kernels/sgrad_combine.cu folds them), gradients and errors row-major or, with a negative
 * width, column-major (point index fastest): every E f, gradient mean, standard error and status
 * word must be the same bits.  Returns how many points had a flag. */
static int64_t compare_sgrad(const dual_program *prog, int flags, int width, int64_t B, int64_t S,
                             int64_t point0, const double *x, const double *p) {
  const int colmajor = width < 0;
  if (colmajor) width = -width;
  const int64_t n = prog->n_in, np = prog->n_par;
  const int score = (flags & DUAL_SGRAD_SCORE) != 0;
  double *f[2], *g[2], *se[2];
  int32_t *st[2];
  for (int k = 0; k < 2; ++k) {
    f[k] = calloc((size_t)B + 1, 8), g[k] = calloc((size_t)(B * n + 1), 8);
    se[k] = calloc((size_t)(B * n + 1), 8), st[k] = calloc((size_t)B, 4);
  }
  dual_context *cpu = NULL;
  cr_assert(dual_context_create(&cpu, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  const int reverse = width == 0, ad = reverse ? DUAL_AD_REVERSE : DUAL_AD_FORWARD;
  cr_assert(dual_context_set_ad_mode(cpu, ad) == DUAL_SUCCESS);
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.x = x, b.x_ps = n, b.x_es = 1, b.p = p, b.p_ps = np, b.p_es = 1;
  b.y = f[0], b.y_ps = 1, b.y_es = 1, b.d = g[0], b.d_ps = colmajor ? 1 : n, b.d_cs = colmajor ? B : 1;
  b.h = se[0], b.h_ps = b.d_ps, b.h_es = b.d_cs, b.status = st[0];
  b.samples = S, b.seed = 0x5eedULL + (uint64_t)S, b.sgrad_flags = flags, b.point0 = point0;
  cr_assert(dual_run(cpu, prog, DUAL_MODE_SGRAD, &b) == DUAL_SUCCESS, "CPU: %s", dual_context_last_error(cpu));
  cr_assert(dual_context_last_ad_mode(cpu) == ad);
  dual_program *sp = NULL;
  if (score) cr_assert(dual_sgrad_score_program(cpu, prog, &sp) == DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
  const dual_program *kp = score ? sp : prog;
  int npass = reverse || n == 0 ? 1 : (int)((n + width - 1) / width);
  char why[256];
  char *src = NULL;
  if (reverse) {
    dual_job job;
    memset(&job, 0, sizeof job);
    job.prog = kp, job.b = &b, job.mode = score ? DUAL_MODE_JACOBIAN : DUAL_MODE_GRADIENT;
    job.threads = 1, job.reverse = 1, job.samples = S, job.score = score;
    src = dual_jit_source_rev(&job, 0, &npass, why, sizeof why);
    cr_assert(src == NULL || npass == 1, "%d reverse-mode sgrad kernels", npass);
  } else {
    src = dual_jit_source_sgrad(kp, score, width, npass, 0, why, sizeof why);
  }
  cr_assert(src != NULL, "generator: %s", why);
  module mod = load_source(src, reverse ? DUAL_JIT2_KERNEL_NAME : DUAL_JIT_KERNEL_NAME, npass);
  dual_jit_args a;
  memset(&a, 0, sizeof a);
  a.x = x, a.x_ps = n, a.x_es = 1, a.p = p, a.p_ps = np, a.p_es = 1;
  /* items (point, sample block), then the blocks folded in order as kernels/sgrad_combine.cu */
  const int64_t units = dual_sgrad_units(S, (flags & DUAL_SGRAD_ANTITHETIC) != 0);
  const int64_t P = dual_sgrad_blocks(units), E = 1 + n;
  double *part = calloc((size_t)(B * P * E * 2), 8);
  int32_t *pst = calloc((size_t)(B * P), 4);
  cr_assert(part && pst);
  a.count = B * P, a.sg_parts = P, a.sg_entries = E, a.sg_part = part, a.status = pst;
  a.seed = b.seed, a.point0 = point0, a.antithetic = (flags & DUAL_SGRAD_ANTITHETIC) != 0, a.samples = S;
  run_args(&mod, npass, &a);
  for (int64_t q = 0; q < B; ++q)
    for (int64_t e = 0; e < E; ++e) {
      double mean, m2;
      dual_sgrad_combine_blocks(part, P, E, units, q, e, &mean, &m2);
      if (e == 0) f[1][q] = mean;
      else g[1][q * b.d_ps + (e - 1) * b.d_cs] = mean, se[1][q * b.h_ps + (e - 1) * b.h_es] = dual_sgrad_se(m2, units);
      for (int64_t k = 0; e == 0 && k < P; ++k) st[1][q] |= pst[q * P + k];
    }
  free(part), free(pst);
  char what[96];
  snprintf(what, sizeof what, "sgrad flags %d width %d S %lld: E f", flags, width, (long long)S);
  assert_same_bits(f[0], f[1], B, what);
  snprintf(what, sizeof what, "sgrad flags %d width %d S %lld: gradient", flags, width, (long long)S);
  assert_same_bits(g[0], g[1], B * n, what);
  snprintf(what, sizeof what, "sgrad flags %d width %d S %lld: standard errors", flags, width, (long long)S);
  assert_same_bits(se[0], se[1], B * n, what);
  const int64_t flagged = assert_same_status(st[0], st[1], B, what);
  int64_t finite = 0;
  for (int64_t i = 0; i < B * n; ++i) finite += isfinite(g[0][i]) && se[0][i] > 0.0;
  cr_assert_gt(finite, 0, "%s: no finite estimate with a nonzero error: nothing was compared", what);
  dlclose(mod.so);
  dual_program_destroy(&sp);
  dual_context_destroy(&cpu);
  for (int k = 0; k < 2; ++k) free(f[k]), free(g[k]), free(se[k]), free(st[k]);
  return flagged;
}

/* Pathwise, antithetic and score-function estimates of small programs with parameters, over
 * several tiles (the last partial), with NaN and infinite inputs and a parameter that makes
 * some samples' partials infinite (the guarded rerun inside the sample loop); draws keyed from a
 * nonzero point0. */
Test(jit_host_sgrad, pathwise_antithetic_and_score) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *pw = NULL, *sf = NULL;
  cr_assert(dual_program_compile(ctx, "input x[3]\nparam s\n"
                                      "output f = exp(normal(x[0], s)) * sin(x[1] + uniform()) + "
                                      "sqrt(x[2] * normal()^2) + x[0] * x[1] * s\n", "pw", &pw) == 0,
            "%s", dual_context_last_error(ctx));
  cr_assert(dual_program_compile(ctx, "input x[2]\nparam s\n"
                                      "output f = (normal(x[0], s) > 0) + x[1] * normal(x[1], 0.5)^2\n",
                                 "sf", &sf) == 0, "%s", dual_context_last_error(ctx));
  uint64_t rng = 1717;
  const int64_t B = 45;
  double *x = random_array(&rng, B * 3, -1.5, 1.5), *p = random_array(&rng, B, 0.2, 0.8);
  for (int64_t i = 0; i < B; ++i) x[3 * i + 2] = fabs(x[3 * i + 2]);
  x[3 * 4 + 0] = NAN, x[3 * 9 + 1] = INFINITY, x[3 * 20 + 2] = 0.0, x[3 * 21 + 2] = 0.0; /* sqrt'(0) */
  p[30] = INFINITY;
  int64_t flagged = 0;
  flagged += compare_sgrad(pw, 0, 4, B, 16, 0, x, p);
  flagged += compare_sgrad(pw, DUAL_SGRAD_ANTITHETIC, 4, B, 12, 1000, x, p);
  flagged += compare_sgrad(pw, 0, 1, B, 5, 7, x, p); /* three passes of one lane */
  flagged += compare_sgrad(pw, 0, -2, B, 6, 0, x, p); /* column-major results, two passes */
  flagged += compare_sgrad(sf, DUAL_SGRAD_SCORE, 2, B, 16, 3, x, p);
  flagged += compare_sgrad(sf, DUAL_SGRAD_SCORE | DUAL_SGRAD_ANTITHETIC, 1, B, 8, 0, x, p);
  /* reverse mode: the sample's gradient by one adjoint sweep (two for the score's rows) */
  flagged += compare_sgrad(pw, 0, 0, B, 16, 0, x, p);
  flagged += compare_sgrad(pw, DUAL_SGRAD_ANTITHETIC, 0, B, 12, 1000, x, p);
  flagged += compare_sgrad(sf, DUAL_SGRAD_SCORE, 0, B, 16, 3, x, p);
  flagged += compare_sgrad(sf, DUAL_SGRAD_SCORE | DUAL_SGRAD_ANTITHETIC, 0, B, 8, 0, x, p);
  flagged += compare_sgrad(pw, 0, 0, B, 21, 5, x, p); /* blocks of 8, 8 and 5 */
  cr_assert_gt(flagged, 0, "no point was flagged");
  free(x), free(p);
  dual_program_destroy(&pw), dual_program_destroy(&sf);
  dual_context_destroy(&ctx);
}

/* More than 16 inputs: passes of 16 lanes (the compiled tier's rule for n = 20), each pass
 * folding its own columns; pathwise, antithetic and score. */
Test(jit_host_sgrad, several_passes) {
  dual_context *ctx = NULL;
  cr_assert(dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS);
  dual_program *pw = NULL, *sf = NULL;
  cr_assert(dual_program_compile(ctx, "input x[20]\nparam s\n"
                                      "output f = sum(i in 0..20, sin(x[i] * uniform(0.5, 1.5)) * "
                                      "exp(0.1 * normal(x[i], s)))\n", "pw20", &pw) == 0,
            "%s", dual_context_last_error(ctx));
  cr_assert(dual_program_compile(ctx, "input x[20]\n"
                                      "output f = sum(i in 0..20, (normal(x[i], 0.5) > 0) * (1 + x[i]^2))\n",
                                 "sf20", &sf) == 0, "%s", dual_context_last_error(ctx));
  uint64_t rng = 2020;
  const int64_t B = 40;
  double *x = random_array(&rng, B * 20, -1.0, 1.0), *p = random_array(&rng, B, 0.2, 0.8);
  x[7] = NAN;
  int64_t flagged = 0;
  flagged += compare_sgrad(pw, 0, 16, B, 8, 0, x, p);
  flagged += compare_sgrad(pw, DUAL_SGRAD_ANTITHETIC, 16, B, 8, 0, x, p);
  flagged += compare_sgrad(sf, DUAL_SGRAD_SCORE, 16, B, 8, 0, x, NULL);
  flagged += compare_sgrad(sf, DUAL_SGRAD_SCORE, -8, B, 4, 0, x, NULL); /* 3 passes, column-major */
  flagged += compare_sgrad(pw, 0, 0, B, 8, 0, x, p); /* reverse mode */
  flagged += compare_sgrad(pw, 0, 0, B, 13, 0, x, p); /* a full block, then 5 units */
  flagged += compare_sgrad(pw, DUAL_SGRAD_ANTITHETIC, 0, B, 20, 0, x, p); /* 8 pairs, then 2 */
  flagged += compare_sgrad(sf, DUAL_SGRAD_SCORE, 0, B, 4, 0, x, NULL);
  cr_assert_gt(flagged, 0, "no point was flagged");
  free(x), free(p);
  dual_program_destroy(&pw), dual_program_destroy(&sf);
  dual_context_destroy(&ctx);
}
