/*
 * context.c — dual_context: device choice (with the DUALBATCH_DEVICE override), thread count,
 * width, the last-error message, and the status-code strings.
 */
#include "context.h"
#include "dispatch/calibration.h"
#include "dispatch/dispatch.h"
#include "gpu.h"
#include "jit/jit_cache.h"
#include "multi_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

const char *dual_status_string(int status) {
  switch (status) {
#define DUAL_X_CASE(name, value, msg)                                                            \
  case value:                                                                                    \
    return msg;
    DUAL_STATUS_LIST(DUAL_X_CASE)
#undef DUAL_X_CASE
  default:
    return "unknown status";
  }
}

char *dual_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *r = (char *)malloc(n);
  if (r) memcpy(r, s, n);
  return r;
}

static char *vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return NULL;
  char *s = (char *)malloc((size_t)n + 1);
  if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

char *dual_strdup_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

int dual_fail_owned(dual_context *ctx, int status, char *msg) {
  if (ctx == NULL) {
    free(msg);
    return status;
  }
  /* one at a time: dual_newton's CPU chunks run engine calls on several threads of a context */
#pragma omp critical(dual_context_error)
  {
    free(ctx->error);
    ctx->error = msg;
  }
  return status;
}

int dual_fail(dual_context *ctx, int status, const char *fmt, ...) {
  if (ctx == NULL) return status;
  va_list ap;
  va_start(ap, fmt);
  char *s = vformat(fmt, ap);
  va_end(ap);
  return dual_fail_owned(ctx, status, s);
}

void dual_clear_error(dual_context *ctx) {
  if (ctx == NULL) return;
#pragma omp critical(dual_context_error)
  {
    free(ctx->error);
    ctx->error = NULL;
  }
}

const char *dual_context_last_error(const dual_context *ctx) {
  if (ctx == NULL) return "no context";
  return ctx->error ? ctx->error : "no error";
}

/* Resolve DUALBATCH_DEVICE, if set, over the caller's choice; gpu:N[,M...] also names the
 * devices (*count of them into list; 0 when none is named). */
static int device_from_env(int requested, int *bad_env, int *list, int *count) {
  const char *env = getenv("DUALBATCH_DEVICE");
  *bad_env = 0, *count = 0;
  if (env == NULL || env[0] == '\0') return requested;
  if (strcmp(env, "auto") == 0) return DUAL_DEVICE_AUTO;
  if (strcmp(env, "cpu") == 0) return DUAL_DEVICE_CPU;
  if (strcmp(env, "gpu") == 0) return DUAL_DEVICE_GPU;
  if (strncmp(env, "gpu:", 4) == 0) {
    const char *s = env + 4;
    while (*count < DUAL_MAX_GPUS && *s >= '0' && *s <= '9') {
      char *end = NULL;
      const long v = strtol(s, &end, 10);
      if (v >= 4096) break;
      list[(*count)++] = (int)v;
      if (*end == '\0') return DUAL_DEVICE_GPU;
      if (*end != ',') break;
      s = end + 1;
    }
  }
  *bad_env = 1, *count = 0;
  return requested;
}

/* ---- tuning knobs ------------------------------------------------------------------------- */

/* Each knob: its range, its default, and its environment variable (with a word for 1, when the
 * variable takes one instead of a number: DUALBATCH_GPU_REGFILE=shared). */
static const struct knob_def {
  int64_t lo, hi, value;
  const char *env, *word;
} knob_defs[DUAL_KNOB_COUNT] = {
    [DUAL_KNOB_GPU_GROUP] = {0, 16, 0, "DUALBATCH_GPU_GROUP", NULL},
    [DUAL_KNOB_GPU_REGFILE] = {0, 1, 0, "DUALBATCH_GPU_REGFILE", "shared"},
    [DUAL_KNOB_GPU2_BLOCKS] = {0, 64, 0, "DUALBATCH_GPU2_BLOCKS", NULL},
    [DUAL_KNOB_HESSIAN_NESTED] = {0, 1, 0, "DUALBATCH_HESSIAN_BLOCKS", "nested"},
    [DUAL_KNOB_JIT_WIDTH] = {0, 32, 0, "DUALBATCH_JIT_WIDTH", NULL},
    [DUAL_KNOB_JIT_MIN_BLOCKS] = {-1, 16, -1, "DUALBATCH_JIT_MINBLOCKS", NULL},
    [DUAL_KNOB_JIT_TRACE] = {0, 1, 0, "DUALBATCH_JIT_TRACE", ""},
    [DUAL_KNOB_JIT_SECOND] = {0, 1, 1, "DUALBATCH_JIT_SECOND", NULL},
    [DUAL_KNOB_JIT_REVERSE] = {0, 1, 1, "DUALBATCH_JIT_REVERSE", NULL},
    [DUAL_KNOB_JIT_SGRAD] = {0, 1, 1, "DUALBATCH_JIT_SGRAD", NULL},
    [DUAL_KNOB_JIT_GROUPS] = {0, 64, 0, "DUALBATCH_JIT_GROUPS", NULL},
    [DUAL_KNOB_JIT_LOADS_AHEAD] = {0, 8, 1, "DUALBATCH_JIT_LOADS_AHEAD", NULL},
    [DUAL_KNOB_SOLVE_LU] = {0, 3, 0, "DUALBATCH_SOLVE_LU", NULL},
    [DUAL_KNOB_SOLVE_QR] = {0, 2, 0, "DUALBATCH_SOLVE_QR", NULL},
    [DUAL_KNOB_DISPATCH] = {0, 2, 0, "DUALBATCH_DISPATCH", NULL},
    [DUAL_KNOB_SPLIT_SHARE] = {0, 999, 0, "DUALBATCH_SPLIT_SHARE", NULL},
    [DUAL_KNOB_SPLIT_THREADS] = {0, 4096, 0, "DUALBATCH_SPLIT_THREADS", NULL},
    [DUAL_KNOB_CPU_JIT_AFTER_MS] = {0, 1000000000, 1000, "DUALBATCH_CPU_JIT_AFTER_MS", NULL},
};

static int knob_ok(int knob, int64_t value) {
  if (knob < 0 || knob >= DUAL_KNOB_COUNT) return 0;
  if (value < knob_defs[knob].lo || value > knob_defs[knob].hi) return 0;
  if (knob == DUAL_KNOB_GPU_GROUP) return (value & (value - 1)) == 0; /* 0 or a power of two */
  return 1;
}

/* Defaults, then the environment's overrides (a value the knob does not take is ignored). */
static void knobs_from_env(dual_context *ctx) {
  for (int k = 0; k < DUAL_KNOB_COUNT; ++k) {
    const struct knob_def *d = &knob_defs[k];
    ctx->knobs[k] = d->value;
    const char *env = getenv(d->env);
    if (env == NULL || env[0] == '\0') continue;
    if (d->word != NULL) {
      if (d->word[0] == '\0' || strcmp(env, d->word) == 0) ctx->knobs[k] = 1;
      continue;
    }
    char *end = NULL;
    const long long v = strtoll(env, &end, 10);
    if (end != env && *end == '\0' && knob_ok(k, v)) ctx->knobs[k] = v;
  }
}

int dual_context_set_knob(dual_context *ctx, int knob, int64_t value) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (knob < 0 || knob >= DUAL_KNOB_COUNT)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "knob %d is not a dual_knob", knob);
  if (!knob_ok(knob, value))
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "knob %d (%s) does not take %lld (range %lld .. %lld%s)",
                     knob, knob_defs[knob].env, (long long)value, (long long)knob_defs[knob].lo,
                     (long long)knob_defs[knob].hi,
                     knob == DUAL_KNOB_GPU_GROUP ? ", a power of two or 0" : "");
  ctx->knobs[knob] = value;
  return DUAL_SUCCESS;
}

int64_t dual_context_knob(const dual_context *ctx, int knob) {
  if (ctx == NULL || knob < 0 || knob >= DUAL_KNOB_COUNT) return 0;
  return ctx->knobs[knob];
}

/* DUALBATCH_TIER (GPU contexts) or DUALBATCH_CPU_TIER (CPU contexts: the CPU's compiled tier,
 * jit/cpu_jit.h), if set, over the default AUTO; -1 when it names no tier. */
static int tier_from_env(const char *name) {
  const char *env = getenv(name);
  if (env == NULL || env[0] == '\0' || strcmp(env, "auto") == 0) return DUAL_TIER_AUTO;
  if (strcmp(env, "interpret") == 0) return DUAL_TIER_INTERPRET;
  if (strcmp(env, "compile") == 0) return DUAL_TIER_COMPILE;
  return -1;
}

int dual_context_create(dual_context **out, int device) {
  if (out == NULL) return DUAL_ERR_ARGUMENT;
  *out = NULL;
  if (device < DUAL_DEVICE_AUTO || device > DUAL_DEVICE_GPU) return DUAL_ERR_ARGUMENT;
  dual_context *ctx = (dual_context *)calloc(1, sizeof *ctx);
  if (ctx == NULL) return DUAL_ERR_NO_MEMORY;
  ctx->device = DUAL_DEVICE_CPU;
  ctx->gpu_ordinal = -1;
  ctx->last_device = DUAL_DEVICE_CPU;
  ctx->last_ad_mode = DUAL_AD_FORWARD;
  ctx->last_tier = DUAL_TIER_INTERPRET;
  knobs_from_env(ctx);
  *out = ctx;
  ctx->tier = tier_from_env("DUALBATCH_TIER");
  ctx->cpu_tier = tier_from_env("DUALBATCH_CPU_TIER");
  if (ctx->tier < 0 || ctx->cpu_tier < 0) {
    const char *name = ctx->tier < 0 ? "DUALBATCH_TIER" : "DUALBATCH_CPU_TIER";
    ctx->tier = ctx->cpu_tier = DUAL_TIER_AUTO;
    ctx->requested = DUAL_DEVICE_CPU;
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "%s='%s' is not one of auto, interpret, compile (context uses the CPU)", name, getenv(name));
  }
  int bad_env = 0, list[DUAL_MAX_GPUS], listed = 0;
  int want = device_from_env(device, &bad_env, list, &listed);
  ctx->requested = bad_env ? DUAL_DEVICE_CPU : want;
  if (bad_env)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "DUALBATCH_DEVICE='%s' is not one of auto, cpu, gpu, gpu:N, gpu:N,M,... (context uses the CPU)",
                     getenv("DUALBATCH_DEVICE"));
  if (want == DUAL_DEVICE_CPU) return DUAL_SUCCESS; /* never touches CUDA */
  char why[256];
  const int count = dual_gpu_count(why, sizeof why);
  for (int i = 0; i < listed && count > 0; ++i)
    if (list[i] >= count) {
      ctx->requested = DUAL_DEVICE_CPU;
      return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "DUALBATCH_DEVICE='%s': this machine has %d CUDA "
                       "device%s, 0 .. %d (context uses the CPU)", getenv("DUALBATCH_DEVICE"), count,
                       count == 1 ? "" : "s", count - 1);
    }
  if (count > 0) {
    ctx->device = DUAL_DEVICE_GPU;
    ctx->last_device = DUAL_DEVICE_GPU;
    ctx->gpu_ordinal = listed > 0 ? list[0] : dual_gpu_current_device();
    ctx->n_gpus = 1, ctx->gpu_list[0] = ctx->gpu_ordinal;
    if (listed > 1) {
      const int st = dual_context_set_gpus(ctx, listed, list);
      if (st != DUAL_SUCCESS) { /* a repeated device: the variable is wrong */
        ctx->device = ctx->last_device = DUAL_DEVICE_CPU, ctx->requested = DUAL_DEVICE_CPU;
        ctx->gpu_ordinal = -1, ctx->n_gpus = 0;
        return dual_fail(ctx, st, "DUALBATCH_DEVICE='%s': %s (context uses the CPU)", getenv("DUALBATCH_DEVICE"),
                         dual_context_last_error(ctx));
      }
    }
    return DUAL_SUCCESS;
  }
  if (want == DUAL_DEVICE_GPU) {
    ctx->requested = DUAL_DEVICE_CPU;
    return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "device 'gpu' requested but %s (context uses the CPU)",
                     why);
  }
  return DUAL_SUCCESS;
}

void dual_context_destroy(dual_context **ctx) {
  if (ctx == NULL || *ctx == NULL) return;
  dual_multi_gpu_free(*ctx);
  dual_gpu_release((*ctx)->gpu);
  free((*ctx)->error);
  free((*ctx)->note);
  free((*ctx)->solve_note);
  free((*ctx)->cache_dir);
  free((*ctx)->calib);
  dual_dispatch_memo_free((*ctx)->memo);
  dual_split_worker_free((*ctx)->split_worker);
  free(*ctx);
  *ctx = NULL;
}

int dual_context_device(const dual_context *ctx) { return ctx ? ctx->device : DUAL_DEVICE_CPU; }

int dual_context_last_device(const dual_context *ctx) {
  return ctx ? ctx->last_device : DUAL_DEVICE_CPU;
}

int dual_context_calibrate(dual_context *ctx, char *report, int64_t cap) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (report != NULL && cap > 0) report[0] = '\0';
  dual_calibration c;
  int threads = ctx->threads;
#ifdef _OPENMP
  if (threads <= 0) threads = omp_get_max_threads(); /* as run.c's jobs */
#endif
  if (threads <= 0) threads = 1;
  const int st = dual_calibration_get(ctx, threads, 1, &c);
  if (st != DUAL_SUCCESS) return st;
  char text[2048];
  if (report != NULL && cap > 0 && dual_calibration_format(&c, text, sizeof text) == 0)
    snprintf(report, (size_t)cap, "%s", text);
  dual_clear_error(ctx);
  return DUAL_SUCCESS;
}

int dual_context_last_split(const dual_context *ctx, int64_t *gpu_points, int64_t *cpu_points) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (gpu_points != NULL) *gpu_points = ctx->last_split[0];
  if (cpu_points != NULL) *cpu_points = ctx->last_split[1];
  return DUAL_SUCCESS;
}

const char *dual_context_last_note(const dual_context *ctx) {
  return ctx && ctx->note ? ctx->note : "";
}

void dual_set_note(dual_context *ctx, char *note) {
#pragma omp critical(dual_context_note) /* as dual_fail_owned */
  {
    /* a call's second note follows its first (the compiled tier's reason, then the
     * interpreter's checkpointing, say); out of memory keeps the first */
    char *both = note != NULL && ctx->note != NULL ? dual_strdup_printf("%s; %s", ctx->note, note) : NULL;
    if (note == NULL || ctx->note == NULL || both != NULL) {
      free(ctx->note);
      ctx->note = both != NULL ? both : note;
      if (both != NULL) free(note);
    } else {
      free(note);
    }
  }
}

int dual_device_count(void) { return dual_gpu_count(NULL, 0); }

int dual_context_set_stream(dual_context *ctx, void *cuda_stream) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (cuda_stream != NULL && ctx->device != DUAL_DEVICE_GPU)
    return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "a CUDA stream was given to a CPU context");
  ctx->stream = cuda_stream;
  return DUAL_SUCCESS;
}

/* A device ordinal of this machine (DUAL_ERR_ARGUMENT otherwise) for a GPU context. */
static int check_ordinal(dual_context *ctx, int ordinal, int count) {
  if (ordinal >= 0 && ordinal < count) return DUAL_SUCCESS;
  return dual_fail(ctx, DUAL_ERR_ARGUMENT, "GPU %d: this machine has %d CUDA device%s, 0 .. %d", ordinal,
                   count, count == 1 ? "" : "s", count - 1);
}

int dual_context_set_gpu(dual_context *ctx, int ordinal) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (ctx->device != DUAL_DEVICE_GPU)
    return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "GPU %d: the context runs on the CPU%s", ordinal,
                     ctx->requested == DUAL_DEVICE_CPU ? "" : " (no usable GPU was found)");
  const int st = check_ordinal(ctx, ordinal, dual_gpu_count(NULL, 0));
  if (st != DUAL_SUCCESS) return st;
  dual_multi_gpu_free(ctx); /* one device from now on */
  if (ordinal == ctx->gpu_ordinal) return DUAL_SUCCESS;
  /* the state, the dispatch figures and the programs' scales were the other device's */
  dual_gpu_release(ctx->gpu);
  ctx->gpu = NULL;
  free(ctx->calib);
  ctx->calib = NULL;
  dual_dispatch_memo_free(ctx->memo);
  ctx->memo = NULL;
  ctx->gpu_ordinal = ctx->gpu_list[0] = ordinal;
  return DUAL_SUCCESS;
}

int dual_context_gpu(const dual_context *ctx) {
  return ctx != NULL && ctx->device == DUAL_DEVICE_GPU ? ctx->gpu_ordinal : -1;
}

int dual_context_set_gpus(dual_context *ctx, int count, const int *ordinals) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (count < 1 || count > DUAL_MAX_GPUS || ordinals == NULL)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%d GPUs: a context runs on 1 .. %d", count, DUAL_MAX_GPUS);
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < i; ++j)
      if (ordinals[i] == ordinals[j])
        return dual_fail(ctx, DUAL_ERR_ARGUMENT, "GPU %d is listed twice", ordinals[i]);
  const int count_here = ctx->device == DUAL_DEVICE_GPU ? dual_gpu_count(NULL, 0) : 0;
  for (int i = 1; i < count && ctx->device == DUAL_DEVICE_GPU; ++i)
    if (check_ordinal(ctx, ordinals[i], count_here) != DUAL_SUCCESS) return DUAL_ERR_ARGUMENT;
  const int st = dual_context_set_gpu(ctx, ordinals[0]); /* (checks the first; a CPU context: NO_DEVICE) */
  if (st != DUAL_SUCCESS || count == 1) return st;
  return dual_multi_gpu_set(ctx, count, ordinals);
}

int dual_context_gpus(const dual_context *ctx, int *ordinals, int cap) {
  if (ctx == NULL || ctx->device != DUAL_DEVICE_GPU) return 0;
  for (int i = 0; i < ctx->n_gpus && i < cap && ordinals != NULL; ++i) ordinals[i] = ctx->gpu_list[i];
  return ctx->n_gpus;
}

int dual_context_set_memory_limit(dual_context *ctx, int64_t bytes) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (bytes < 0 || (bytes > 0 && bytes < DUAL_MEMORY_LIMIT_MIN))
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "memory limit %lld bytes: a limit is 0 (the default) or at least %d bytes",
                     (long long)bytes, (int)DUAL_MEMORY_LIMIT_MIN);
  ctx->memory_limit = bytes;
  return DUAL_SUCCESS;
}

int dual_context_set_threads(dual_context *ctx, int threads) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (threads < 0)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "thread count %d is negative (0 = all cores)", threads);
  ctx->threads = threads;
  return DUAL_SUCCESS;
}

int dual_context_set_width(dual_context *ctx, int width) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (width != 0 && width != 1 && width != 2 && width != 4 && width != 8 && width != 16 &&
      width != 32)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "width %d is not one of 0 (auto), 1, 2, 4, 8, 16, 32", width);
  ctx->width = width;
  return DUAL_SUCCESS;
}

int dual_context_set_ad_mode(dual_context *ctx, int mode) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (mode != DUAL_AD_AUTO && mode != DUAL_AD_FORWARD && mode != DUAL_AD_REVERSE)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "AD mode %d is not DUAL_AD_AUTO, DUAL_AD_FORWARD or DUAL_AD_REVERSE", mode);
  ctx->ad_mode = mode;
  return DUAL_SUCCESS;
}

int dual_context_set_seed(dual_context *ctx, int64_t seed) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  ctx->seed = (uint64_t)seed;
  return DUAL_SUCCESS;
}

int dual_context_set_tier(dual_context *ctx, int tier) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (tier != DUAL_TIER_AUTO && tier != DUAL_TIER_INTERPRET && tier != DUAL_TIER_COMPILE)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                     "tier %d is not DUAL_TIER_AUTO, DUAL_TIER_INTERPRET or DUAL_TIER_COMPILE", tier);
  ctx->tier = ctx->cpu_tier = tier;
  return DUAL_SUCCESS;
}

int dual_context_last_tier(const dual_context *ctx) {
  return ctx == NULL ? DUAL_TIER_INTERPRET : ctx->last_tier;
}

int dual_context_set_cache_dir(dual_context *ctx, const char *dir) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  char *copy = NULL;
  if (dir != NULL && dir[0] != '\0' && (copy = dual_strdup(dir)) == NULL)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory");
  free(ctx->cache_dir);
  ctx->cache_dir = copy;
  return DUAL_SUCCESS;
}

int dual_context_cache_dir(dual_context *ctx, char *buf, size_t cap) {
  const char *why = NULL;
  const int st = dual_jit_cache_dir_trusted(ctx->cache_dir, buf, cap, &why);
  if (st == -2)
    dual_set_note(ctx, dual_strdup_printf("the kernel cache directory %s is not used: %s", buf, why));
  return st == 0;
}

int dual_context_cache_usage(dual_context *ctx, char *buf, int64_t cap, int64_t *entries,
                             int64_t *bytes) {
  if (ctx == NULL || (buf == NULL && cap != 0) || cap < 0) return DUAL_ERR_ARGUMENT;
  char dir[4096];
  const char *why = NULL;
  const int trust = dual_jit_cache_dir_trusted(ctx->cache_dir, dir, sizeof dir, &why);
  if (trust == -1)
    return dual_fail(ctx, DUAL_ERR_IO, "no cache directory: set DUALBATCH_CACHE_DIR or HOME");
  if (buf != NULL && cap > 0) snprintf(buf, (size_t)cap, "%s", dir);
  if (trust == -2)
    return dual_fail(ctx, DUAL_ERR_IO, "the cache directory %s is not used: %s", dir, why);
  int64_t n = 0, b = 0;
  if (dual_jit_cache_usage(dir, &n, &b) != 0)
    return dual_fail(ctx, DUAL_ERR_IO, "cannot read the cache directory %s", dir);
  if (entries) *entries = n;
  if (bytes) *bytes = b;
  return DUAL_SUCCESS;
}

int dual_context_cache_clear(dual_context *ctx, int64_t *removed) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  char dir[4096];
  if (dual_jit_cache_dir(ctx->cache_dir, dir, sizeof dir) != 0)
    return dual_fail(ctx, DUAL_ERR_IO, "no cache directory: set DUALBATCH_CACHE_DIR or HOME");
  if (dual_jit_cache_clear(dir, removed) != 0)
    return dual_fail(ctx, DUAL_ERR_IO, "could not remove every entry of %s", dir);
  return DUAL_SUCCESS;
}

int dual_context_last_ad_mode(const dual_context *ctx) {
  return ctx == NULL ? DUAL_AD_FORWARD : ctx->last_ad_mode;
}

int dual_version(void) { return DUAL_VERSION_MAJOR * 10000 + DUAL_VERSION_MINOR * 100 + DUAL_VERSION_PATCH; }

#define DUAL_STR_(x) #x
#define DUAL_STR(x) DUAL_STR_(x)
const char *dual_version_string(void) {
  return DUAL_STR(DUAL_VERSION_MAJOR) "." DUAL_STR(DUAL_VERSION_MINOR) "." DUAL_STR(DUAL_VERSION_PATCH);
}

int64_t dual_build_info(char *buf, int64_t cap) {
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  int n = snprintf(buf, buf && cap > 0 ? (size_t)cap : 0, "dualbatch %d.%d.%d\nOpenMP: %s, %d threads\n",
                   DUAL_VERSION_MAJOR, DUAL_VERSION_MINOR, DUAL_VERSION_PATCH,
#ifdef _OPENMP
                   "on",
#else
                   "off",
#endif
                   threads);
  if (n < 0) return 0;
  int64_t used = n < cap ? n : (cap > 0 ? cap - 1 : 0);
  int64_t more = dual_gpu_describe(buf ? buf + used : NULL, cap > used ? cap - used : 0);
  return n + more;
}
