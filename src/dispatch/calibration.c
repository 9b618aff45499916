/*
 * calibration.c — the dispatch model's machine figures (calibration.h): the CPU's measured with
 * two calibration programs, one of arithmetic and one of special functions, whose instructions
 * are counted as the model counts a program's (dispatch/call_shape.h), so that the two costs per
 * instruction come out of a 2 x 2 system; the text form; the disk entry.
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/calibration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytecode.h"
#include "context.h"
#include "dispatch/clock.h"
#include "dispatch/call_shape.h"
#include "gpu.h"
#include "jit/jit_cache.h"
#include "jit/sha256.h"
#include "program.h"

/* ---- the text form ---------------------------------------------------------------------- */

#define CALIB_VERSION "dualbatch calibration 2"

/* The figures, in their order in the text: name, offset, whether the GPU's. */
#define CALIB_FIELDS(X)                                                                          \
  X(cpu_call_s, 0) X(cpu_arith_s, 0) X(cpu_special_s, 0) X(gpu_call_s, 1) X(gpu_in_Bps, 1)       \
  X(gpu_out_Bps, 1) X(gpu_in_Bps_1, 1) X(gpu_out_Bps_1, 1) X(gpu_arith_s[0], 1) X(gpu_arith_s[1], 1) X(gpu_special_s[0], 1)           \
  X(gpu_special_s[1], 1) X(gpu_lat_arith_s[0], 1) X(gpu_lat_arith_s[1], 1)                     \
  X(gpu_lat_special_s[0], 1) X(gpu_lat_special_s[1], 1) X(split_call_s, 1)

int dual_calibration_format(const dual_calibration *c, char *buf, size_t cap) {
  size_t len = 0;
  int n = snprintf(buf, cap, "%s\nthreads %d\ngpu %d\n", CALIB_VERSION, c->threads, c->gpu);
  if (n < 0 || (size_t)n >= cap) return -1;
  len = (size_t)n;
#define CALIB_PRINT(f, g)                                                                        \
  n = snprintf(buf + len, cap - len, "%s %.17g\n", #f, c->f);                                    \
  if (n < 0 || (size_t)n >= cap - len) return -1;                                                \
  len += (size_t)n;
  CALIB_FIELDS(CALIB_PRINT)
#undef CALIB_PRINT
  return 0;
}

/* The value of line "name value" in text (exactly one such line), or -1. */
static int field(const char *text, size_t len, const char *name, double *v) {
  const size_t nl = strlen(name);
  int found = 0;
  for (size_t i = 0; i < len;) {
    size_t e = i;
    while (e < len && text[e] != '\n') ++e;
    if (e - i > nl && memcmp(text + i, name, nl) == 0 && text[i + nl] == ' ') {
      char num[64];
      const size_t k = e - i - nl - 1;
      if (k == 0 || k >= sizeof num || found) return -1;
      memcpy(num, text + i + nl + 1, k), num[k] = '\0';
      char *end = NULL;
      *v = strtod(num, &end);
      if (end == num || *end != '\0') return -1;
      found = 1;
    }
    i = e + 1;
  }
  return found ? 0 : -1;
}

int dual_calibration_parse(const char *text, size_t len, dual_calibration *c) {
  const size_t vl = strlen(CALIB_VERSION);
  if (len < vl + 1 || memcmp(text, CALIB_VERSION, vl) != 0 || text[vl] != '\n') return -1;
  dual_calibration r;
  memset(&r, 0, sizeof r);
  double t, g;
  if (field(text, len, "threads", &t) || field(text, len, "gpu", &g) || !(t >= 1 && t <= 1 << 20) ||
      (g != 0.0 && g != 1.0) || t != floor(t))
    return -1;
  r.threads = (int)t, r.gpu = (int)g;
#define CALIB_READ(f, gpu_only)                                                                  \
  if (field(text, len, #f, &r.f) != 0) return -1;                                                \
  if ((!(gpu_only) || r.gpu) && !(r.f > 0.0 && r.f < INFINITY)) return -1;
  CALIB_FIELDS(CALIB_READ)
#undef CALIB_READ
  *c = r;
  return 0;
}

/* ---- measuring the CPU ------------------------------------------------------------------ */

/* The calibration programs: a chain of multiply-adds, and one of special functions between a few
 * additions (their instructions are counted from the bytecode, so constant folding and the
 * compiler's other passes do not matter).  Both stay finite and normal for inputs near 0.5. */
static const char *const arith_src =
    "input x[4]\nlet s = x[0]\nfor i in 0..128 { s = s * x[1] + x[2]; s = s - x[3] * s }\noutput y = s\n";
static const char *const special_src =
    "input x[2]\nlet s = x[0]\n"
    "for i in 0..24 { s = exp(-s) + x[1]; s = log(s + 2); s = sin(s); s = sqrt(s * s + 1) / (s + 3) }\n"
    "output y = s\n";

const char *dual_calibration_source(int special) { return special ? special_src : arith_src; }

void dual_calibration_count(const dual_program *prog, double *arith, double *special) {
  *arith = *special = 0.0;
  for (int64_t i = 0; i < prog->n_instr; ++i)
    *(dual_op_is_special(DUAL_INSTR_OP(prog->code + i * DUAL_INSTR_WORDS)) ? special : arith) += 1.0;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The least seconds of `reps` evals of B points (x: B rows of n): the least is what the machine
 * does undisturbed (a median of calls sharing the cores with other processes was 16 ms for a
 * 5 us call on 2 cores, its threads waiting for each other's turn). */
static int time_eval(dual_context *cpu, const dual_program *prog, int64_t B, const double *x, double *y,
                     int reps, double *secs) {
  double t[31];
  if (reps > 31) reps = 31;
  for (int r = -1; r < reps; ++r) {
    const double t0 = dual_monotonic_seconds();
    const int st = dual_eval(cpu, prog, B, x, prog->n_in, NULL, 0, y, 1, NULL);
    if (st != DUAL_SUCCESS) return st;
    if (r >= 0) t[r] = dual_monotonic_seconds() - t0;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  *secs = t[0];
  return DUAL_SUCCESS;
}

void dual_calibration_solve(double ta, double ts, double aa, double sa, double as, double ss, double *ca,
                            double *cs) {
  /* ta = aa ca + sa cs, ts = as ca + ss cs */
  const double det = aa * ss - sa * as;
  double a = det != 0.0 ? (ta * ss - sa * ts) / det : ta / (aa + sa);
  double s = det != 0.0 ? (aa * ts - as * ta) / det : ts / (as + ss);
  if (!(a > 0.0)) a = ta / (aa + sa); /* timing noise: each figure stays positive */
  if (!(s > a)) s = ts / (as + ss) > a ? ts / (as + ss) : a;
  *ca = a, *cs = s;
}

/* One thread's seconds per point of `prog`'s eval at `threads` threads, the call's fixed part
 * taken off: B grows until a call takes 5 ms. */
static int per_point(dual_context *cpu, const dual_program *prog, int threads, double call_s, double *x,
                     double *y, int64_t cap, double *secs) {
  int64_t B = 256 * (int64_t)threads;
  double t = 0.0;
  for (;;) {
    const int st = time_eval(cpu, prog, B, x, y, 5, &t);
    if (st != DUAL_SUCCESS) return st;
    if (t >= 5e-3 || 2 * B > cap) break;
    B *= 2;
  }
  /* the eval engine's blocks are 256 points; a thread takes whole blocks */
  const int64_t blocks = (B + 255) / 256, turns = (blocks + threads - 1) / threads;
  const double pts = (double)(turns * 256 < B ? turns * 256 : B);
  *secs = (call_s < 0.5 * t ? t - call_s : t) / pts; /* (a call's fixed part is small beside 5 ms) */
  return DUAL_SUCCESS;
}

int dual_calibration_measure_cpu(dual_context *ctx, int threads, dual_calibration *c) {
  dual_context *cpu = NULL;
  dual_program *pa = NULL, *ps = NULL, *p1 = NULL;
  const int64_t cap = (int64_t)1 << 20;
  double *x = malloc(sizeof(double) * 4 * (size_t)cap), *y = malloc(sizeof(double) * (size_t)cap);
  int st = x != NULL && y != NULL ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
  if (st == DUAL_SUCCESS) st = dual_context_create(&cpu, DUAL_DEVICE_CPU);
  if (st == DUAL_SUCCESS) st = dual_context_set_threads(cpu, threads);
  /* the interpreter's figures (the dispatch model's CPU side), whatever tier the environment asks */
  if (st == DUAL_SUCCESS) st = dual_context_set_tier(cpu, DUAL_TIER_INTERPRET);
  if (st == DUAL_SUCCESS) st = dual_program_compile(cpu, arith_src, "calibration", &pa);
  if (st == DUAL_SUCCESS) st = dual_program_compile(cpu, special_src, "calibration", &ps);
  if (st == DUAL_SUCCESS) st = dual_program_compile(cpu, "input x\noutput y = x\n", "calibration", &p1);
  double call = 0.0, ta = 0.0, ts = 0.0, aa, sa, as, ss;
  if (st == DUAL_SUCCESS) {
    for (int64_t i = 0; i < 4 * cap; ++i) x[i] = 0.25 + 0.5 * (double)(i % 7) / 7.0;
    /* a call's fixed part: a block of a trivial program for each thread (their start and end) */
    st = time_eval(cpu, p1, 256 * (int64_t)threads, x, y, 31, &call);
  }
  if (st == DUAL_SUCCESS) st = per_point(cpu, pa, threads, call, x, y, cap, &ta);
  if (st == DUAL_SUCCESS) st = per_point(cpu, ps, threads, call, x, y, cap, &ts);
  if (st == DUAL_SUCCESS) {
    dual_calibration_count(pa, &aa, &sa), dual_calibration_count(ps, &as, &ss);
    double ca, cs;
    dual_calibration_solve(ta, ts, aa, sa, as, ss, &ca, &cs);
    c->threads = threads, c->cpu_call_s = call, c->cpu_arith_s = ca, c->cpu_special_s = cs;
  } else if (cpu != NULL) {
    st = dual_fail(ctx, st, "calibrating the CPU: %s", dual_context_last_error(cpu));
  }
  dual_program_destroy(&pa), dual_program_destroy(&ps), dual_program_destroy(&p1);
  dual_context_destroy(&cpu);
  free(x), free(y);
  if (st == DUAL_ERR_NO_MEMORY) return dual_fail(ctx, st, "calibrating the CPU: out of memory");
  return st;
}

/* ---- the disk entry --------------------------------------------------------------------- */

void dual_calibration_key(const dual_context *ctx, int threads, uint8_t key[32]) {
  char buf[4096];
  int len = snprintf(buf, sizeof buf, "%s\nlibrary %s\nthreads %d\ncpus %ld\n", CALIB_VERSION,
                     dual_version_string(), threads, sysconf(_SC_NPROCESSORS_ONLN));
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "model name", 10) == 0) {
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%s", line);
      break;
    }
  if (f != NULL) fclose(f);
  if (ctx->device == DUAL_DEVICE_GPU && len < (int)sizeof buf) /* the devices, and which is ours */
    len += snprintf(buf + len, sizeof buf - (size_t)len, "gpu %d\n", ctx->gpu_ordinal);
  if (ctx->device == DUAL_DEVICE_GPU && len < (int)sizeof buf)
    dual_gpu_describe(buf + len, (int64_t)(sizeof buf - (size_t)len));
  dual_sha256 s;
  dual_sha256_init(&s);
  dual_sha256_update(&s, buf, strlen(buf));
  dual_sha256_final(&s, key);
}

int dual_calibration_get(dual_context *ctx, int threads, int force, dual_calibration *out) {
  if (!force && ctx->calib != NULL && ctx->calib->threads == threads) {
    *out = *ctx->calib;
    return DUAL_SUCCESS;
  }
  char dir[4096];
  const int have_dir = dual_context_cache_dir(ctx, dir, sizeof dir);
  uint8_t key[32];
  dual_calibration_key(ctx, threads, key);
  dual_calibration c;
  memset(&c, 0, sizeof c);
  int known = 0;
  if (!force && have_dir) {
    void *image = NULL;
    size_t size = 0;
    /* a checked entry that does not parse (another version's, or damaged before it was
     * checksummed) is measured again like a missing one */
    if (dual_jit_cache_load(dir, key, &image, &size, NULL) == 0)
      known = dual_calibration_parse(image, size, &c) == 0 && c.threads == threads &&
              c.gpu == (ctx->device == DUAL_DEVICE_GPU);
    free(image);
  }
  if (!known) {
    memset(&c, 0, sizeof c);
    int st = dual_calibration_measure_cpu(ctx, threads, &c);
    /* a GPU context's: the GPU's too (the compiled tier's only when asked for: it compiles two
     * kernels the first time; at first need the interpreter's figures stand for them) */
    if (st == DUAL_SUCCESS && ctx->device == DUAL_DEVICE_GPU) st = dual_gpu_calibrate(ctx, force, &c);
    if (st != DUAL_SUCCESS) return st;
    char text[2048];
    if (have_dir && c.gpu == (ctx->device == DUAL_DEVICE_GPU) && dual_calibration_format(&c, text, sizeof text) == 0)
      (void)dual_jit_cache_store(dir, key, text, strlen(text), NULL); /* no cache: measured again next time */
  }
  if (ctx->calib == NULL) ctx->calib = malloc(sizeof *ctx->calib);
  if (ctx->calib != NULL) *ctx->calib = c;
  *out = c;
  return DUAL_SUCCESS;
}
