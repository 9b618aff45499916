/*
 * gpu_jit.c — the compiled GPU tier's policy and modules (gpu_jit.h).  A module is found, in
 * this order, among the modules loaded in the process (keyed by the program's bytes and the job
 * shape, jit/jit_key.h), in the disk cache (keyed by the generated source and everything that
 * decides the CUBIN), or compiled: at once for DUAL_TIER_COMPILE, in the background for
 * DUAL_TIER_AUTO (one worker thread per process takes the queued compiles in order; the call that
 * queued one interprets, and the first call after it finished loads the CUBIN; the worker runs
 * each compile in a child process, jit/rtc_child.h, so that the process may exit at any time and
 * the compile still lands in the disk cache).  Loaded modules stay for the life of the process
 * and are shared by its contexts.  Modules are loaded with the
 * runtime's library API (cudaLibraryLoadData), so no driver library is linked.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "kernels/gpu_jit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jit/jit_args.h"
#include "jit/jit_cache.h"
#include "jit/jit_key.h"
#include "jit/jit_source.h"
#include "jit/jit_source2.h"
#include "jit/jit_source_rev.h"
#include "jit/rtc_child.h"
#include "jit/rtc_compile.h"
#include "engine/pass2.h"

enum { JIT_THREADS = 128, MAX_INSTR = 20000, MAX_WORK = 100000 };

struct dual_jit_module {
  uint8_t key[32];
  int npass, blocks_per_sm;
  int regs, local_bytes; /* the most registers and local (spill) bytes of a kernel (the trace) */
  cudaLibrary_t lib;
  cudaKernel_t *kernels; /* [npass] */
  struct dual_jit_module *next;
};

/* A compile handed to the background worker. */
typedef struct pending {
  uint8_t key[32], disk_key[32];
  char *source, *cache_dir;
  int cc, state; /* QUEUED, RUNNING, DONE, FAILED */
  void *image;
  size_t size;
  char *log;
  struct pending *next;
} pending;
enum { QUEUED, RUNNING, DONE, FAILED };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static dual_jit_module *loaded;
static pending *pendings;
static int worker_running;
static int exiting; /* set at process exit: the worker takes no new compile */

/* ---- tracing ------------------------------------------------------------------------------ */

/* DUAL_KNOB_JIT_TRACE: the time of each step of a module's preparation on stderr (benchmarks,
 * diagnosis). */
static double trace_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void trace(const dual_context *ctx, const char *step, double *t0) {
  const double t = trace_clock();
  if (ctx->knobs[DUAL_KNOB_JIT_TRACE]) fprintf(stderr, "dualbatch jit: %-28s %.4f s\n", step, t - *t0);
  *t0 = t;
}

/* ---- shape and size rule ------------------------------------------------------------------ */

/* Lanes per pass: a Jacobian or gradient of n inputs takes the smallest power of two >= n, at
 * most 16: one pass up to 16 inputs, passes of 16 beyond.  Measured on the H200 (bench/NOTES.md,
 * run_jit_study.sh, after the scheduled emission order and the out-of-line row flush): kin
 * (n = 32) ran at 2.10e8 Jacobians/s in two passes of 16 and 1.93e8 in one of 32 (values are
 * recomputed in every extra pass, but a 16-lane pass keeps its live lanes in registers).
 * Benchmark knob: DUAL_KNOB_JIT_WIDTH forces it. */
static int jit_width(const dual_context *ctx, const dual_job *job) {
  if (job->mode == DUAL_MODE_EVAL) return 0;
  if (job->mode == DUAL_MODE_JVP) return 1;
  if (ctx->knobs[DUAL_KNOB_JIT_WIDTH] > 0) return (int)ctx->knobs[DUAL_KNOB_JIT_WIDTH];
  int w = 1;
  while (w < dual_program_jacobian_columns(job->prog) && w < 16) w *= 2;
  return w;
}

/* Resident blocks per multiprocessor asked of the compiler (0: its own choice).  Blocks of 128
 * threads; three blocks allow 168 registers a thread, two 255.  Measured on the H200
 * (bench/NOTES.md): ba (one pass of 16 lanes) 5.8e9 points/s with three (it took 182 registers
 * alone, two blocks, 3.99e9 at 227ba9b); kin (two passes of 16) 2.10e8 with two and 1.83e8 with
 * three, where its passes spill.  Rule: three for a job of one pass, two when it takes several,
 * the compiler's choice above 16 lanes.  Benchmark knob: DUAL_KNOB_JIT_MIN_BLOCKS (0 = the
 * compiler's choice). */
static int jit_min_blocks(const dual_context *ctx, int width, int npass) {
  if (ctx->knobs[DUAL_KNOB_JIT_MIN_BLOCKS] >= 0) return (int)ctx->knobs[DUAL_KNOB_JIT_MIN_BLOCKS];
  if (width > 16) return 0;
  return npass > 1 ? 2 : 3;
}

/* Passes of that width: as the interpreter's dual_job_passes, one for a program without inputs. */
static int jit_passes(const dual_job *job, int width) {
  if (job->mode != DUAL_MODE_JACOBIAN && job->mode != DUAL_MODE_GRADIENT) return 1;
  const int64_t n = dual_program_jacobian_columns(job->prog);
  return n == 0 ? 1 : (int)((n + width - 1) / width);
}

/* ---- modules ------------------------------------------------------------------------------ */

static dual_jit_module *find_loaded(const uint8_t key[32]) {
  for (dual_jit_module *m = loaded; m != NULL; m = m->next)
    if (memcmp(m->key, key, 32) == 0) return m;
  return NULL;
}

static pending *find_pending(const uint8_t key[32]) {
  for (pending *p = pendings; p != NULL; p = p->next)
    if (memcmp(p->key, key, 32) == 0) return p;
  return NULL;
}

/* Load a CUBIN as a module of npass kernels (caller holds the lock); NULL with *why on failure. */
static dual_jit_module *load_module(const uint8_t key[32], int npass, const char *name_fmt,
                                    const void *image, char *why, size_t why_cap) {
  dual_jit_module *m = (dual_jit_module *)calloc(1, sizeof *m);
  cudaKernel_t *k = (cudaKernel_t *)calloc((size_t)npass, sizeof *k);
  if (m == NULL || k == NULL) {
    free(m);
    free(k);
    snprintf(why, why_cap, "out of memory loading a compiled kernel");
    return NULL;
  }
  memcpy(m->key, key, 32);
  m->npass = npass, m->kernels = k, m->blocks_per_sm = 1 << 30;
  cudaError_t e = dual_gpu_injected_fault("jit-load");
  if (e == cudaSuccess) e = cudaLibraryLoadData(&m->lib, image, NULL, NULL, 0, NULL, NULL, 0);
  for (int p = 0; p < npass && e == cudaSuccess; ++p) {
    char name[64];
    snprintf(name, sizeof name, name_fmt, p);
    e = cudaLibraryGetKernel(&k[p], m->lib, name);
    int blocks = 0;
    if (e == cudaSuccess)
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)k[p], JIT_THREADS, 0);
    if (e == cudaSuccess && blocks < m->blocks_per_sm) m->blocks_per_sm = blocks > 0 ? blocks : 1;
    struct cudaFuncAttributes fa;
    if (e == cudaSuccess && cudaFuncGetAttributes(&fa, (const void *)k[p]) == cudaSuccess) {
      if (fa.numRegs > m->regs) m->regs = fa.numRegs;
      if ((int)fa.localSizeBytes > m->local_bytes) m->local_bytes = (int)fa.localSizeBytes;
    }
  }
  if (e != cudaSuccess) {
    snprintf(why, why_cap, "loading the compiled kernel failed: %s (%s)", cudaGetErrorString(e),
             cudaGetErrorName(e));
    if (m->lib != NULL) cudaLibraryUnload(m->lib);
    cudaGetLastError();
    free(k);
    free(m);
    return NULL;
  }
  m->next = loaded;
  loaded = m;
  return m;
}

/* The module of `key`: the one another context loaded meanwhile, else the CUBIN `image` loaded. */
static dual_jit_module *adopt_module(const uint8_t key[32], int npass, const char *name_fmt,
                                     const void *image, char *why, size_t why_cap) {
  pthread_mutex_lock(&lock);
  dual_jit_module *m = find_loaded(key);
  if (m == NULL) m = load_module(key, npass, name_fmt, image, why, why_cap);
  pthread_mutex_unlock(&lock);
  return m;
}

/* ---- the background worker ---------------------------------------------------------------- */

/* NVRTC, or the test hook DUALBATCH_GPU_FAULT=jit-compile. */
static int compile(const char *source, int cc, void **image, size_t *size, char **log) {
  if (dual_gpu_injected_fault("jit-compile") != cudaSuccess) {
    *image = NULL, *size = 0;
    *log = dual_strdup("injected compile failure (DUALBATCH_GPU_FAULT=jit-compile)");
    return DUAL_ERR_INTERNAL;
  }
  return dual_rtc_compile(source, cc, image, size, log);
}

static void *worker(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  for (;;) {
    pending *p = pendings;
    while (p != NULL && p->state != QUEUED) p = p->next;
    if (p == NULL || exiting) break;
    p->state = RUNNING;
    pthread_mutex_unlock(&lock);
    void *image = NULL;
    size_t size = 0;
    char *log = NULL;
    /* in a child process (jit/rtc_child.h: the process may exit meanwhile), which also stores
     * the CUBIN in the disk cache; in this thread where no child can be started */
    int st = dual_rtc_compile_in_child(compile, p->source, p->cc, p->cache_dir, p->disk_key, &image,
                                       &size, &log);
    if (st < 0) {
      st = compile(p->source, p->cc, &image, &size, &log);
      if (st == DUAL_SUCCESS && p->cache_dir != NULL)
        dual_jit_cache_store(p->cache_dir, p->disk_key, image, size, NULL);
    }
    pthread_mutex_lock(&lock);
    p->image = image, p->size = size, p->log = log;
    p->state = st == DUAL_SUCCESS ? DONE : FAILED;
    pthread_cond_broadcast(&finished);
  }
  worker_running = 0;
  pthread_cond_broadcast(&finished);
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* At process exit (atexit): start no other compile.  The one in progress runs in its own
 * process (jit/rtc_child.h), which finishes it and stores its CUBIN in the disk cache; this
 * thread meanwhile only waits on a pipe, out of the way of the exit's teardown. */
static void stop_worker_at_exit(void) {
  pthread_mutex_lock(&lock);
  exiting = 1;
  pthread_mutex_unlock(&lock);
}

/* fork(): the child has no worker thread, so the compiles queued or running in the parent are
 * forgotten there (a call of the child queues its own again).  They are unlinked, not freed:
 * the worker's own compile child still reads the source of the compile it runs.  The lock is
 * held across the fork so that its state is consistent. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) {
  pendings = NULL;
  worker_running = 0;
  pthread_mutex_unlock(&lock);
}

/* Queue a compile (caller holds the lock; takes ownership of source and dir). */
static int queue_compile(const uint8_t key[32], const uint8_t disk_key[32], char *source, char *dir,
                         int cc) {
  pending *p = (pending *)calloc(1, sizeof *p);
  if (p == NULL) {
    free(source);
    free(dir);
    return -1;
  }
  memcpy(p->key, key, 32);
  memcpy(p->disk_key, disk_key, 32);
  p->source = source, p->cache_dir = dir, p->cc = cc, p->state = QUEUED;
  p->next = pendings;
  pendings = p;
  if (!worker_running) {
    static int hooks; /* (under the lock) */
    if (!hooks)
      hooks = atexit(stop_worker_at_exit) == 0 && pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &at, worker, NULL) == 0) worker_running = 1;
    pthread_attr_destroy(&at);
    if (!worker_running) p->state = FAILED, p->log = dual_strdup("could not start the compile thread");
  }
  return 0;
}

static void drop_pending(pending *p) {
  for (pending **pp = &pendings; *pp != NULL; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  free(p->source);
  free(p->cache_dir);
  free(p->image);
  free(p->log);
  free(p);
}

/* ---- the policy --------------------------------------------------------------------------- */

/* AUTO: interpret, with a note saying why; COMPILE: fail with DUAL_ERR_COMPILE. */
static int decline(dual_context *ctx, char *reason) {
  if (ctx->tier == DUAL_TIER_COMPILE) {
    int st = dual_fail(ctx, DUAL_ERR_COMPILE, "compiled tier: %s", reason ? reason : "out of memory");
    free(reason);
    return st;
  }
  char *note = reason ? dual_strdup_printf("interpreted: %s", reason) : NULL;
  free(reason);
  dual_set_note(ctx, note);
  return DUAL_SUCCESS;
}

/* The context's memo of the module for this program and job shape (struct dual_gpu). */
static const dual_jit_module *remember(struct dual_gpu *g, const dual_program *prog, int key_mode, int width,
                                       int npass, int min_blocks, const dual_jit_module *m) {
  g->memo_uid = prog->uid, g->memo_mode = key_mode, g->memo_width = width, g->memo_npass = npass;
  g->memo_min_blocks = min_blocks, g->memo_module = m;
  return m;
}

int dual_gpu_jit_select(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                        const dual_jit_module **out) {
  *out = NULL;
  const dual_program *prog = job->prog;
  const int second = dual_mode_is_second_order(job->mode);
  const int rev = job->reverse; /* reverse mode or forward-over-reverse (jit/jit_source_rev.c) */
  const int gen2 = second || rev; /* kernels of jit_source2.c or jit_source_rev.c */
  /* dual_sgrad: the sample loop's kernels, forward mode (dual_jit_source_sgrad) or reverse mode
   * (dual_jit_source_rev) */
  const int sgrad = job->samples > 0;
  if (ctx->tier == DUAL_TIER_INTERPRET) return DUAL_SUCCESS;
  /* Each family beyond first-order forward mode has a knob that keeps it on the interpreter (on
   * by default): dual_sgrad, second order (nested or forward-over-reverse), reverse mode. */
  const int knob = sgrad ? DUAL_KNOB_JIT_SGRAD : second ? DUAL_KNOB_JIT_SECOND
                   : rev ? DUAL_KNOB_JIT_REVERSE : -1;
  if (knob >= 0 && !ctx->knobs[knob]) return DUAL_SUCCESS;
  /* Second order (Hessian, HVP): one kernel per pass of engine/pass2.h at the job's block
   * width (forward-over-reverse: per pass of directions; reverse mode: one kernel), the
   * compiler's choice of registers; its key also names the layout, the blocking and the AD mode. */
  dual_job fj; /* reverse: the directions per pass in the width field (first order: none) */
  if (rev) {
    fj = *job;
    fj.width = !second ? 0
               : ctx->knobs[DUAL_KNOB_JIT_WIDTH] > 0 ? (int)ctx->knobs[DUAL_KNOB_JIT_WIDTH]
                                                     : DUAL_JIT_REV_DIRECTIONS;
    fj.groups = second ? (int)ctx->knobs[DUAL_KNOB_JIT_GROUPS] : 0;
    fj.loads_ahead = (int)ctx->knobs[DUAL_KNOB_JIT_LOADS_AHEAD];
    job = &fj;
  }
  const int64_t passes2 = rev ? dual_jit_rev_passes(job) : second ? dual_pass2_count(job) : 0;
  const int width = gen2 ? job->width : jit_width(ctx, job);
  const int npass = gen2 ? (int)(passes2 < MAX_WORK ? passes2 : MAX_WORK) : jit_passes(job, width);
  /* sgrad and reverse mode: the compiler's choice unless the knob says (sgrad's accumulators
   * take registers too; reverse-mode kernels hold their sweep's values); nested second order:
   * the compiler's */
  const int knob_blocks = (int)ctx->knobs[DUAL_KNOB_JIT_MIN_BLOCKS];
  /* (dual_sgrad in reverse mode: a thread holds one sample's sweep, and 4 blocks of 128 ran
   * sgrad.db 5% faster than the compiler's 2 on the H100, its draw-free part 37%: bench/NOTES.md) */
  const int min_blocks = rev && sgrad && knob_blocks < 0       ? 4
                         : rev                                 ? (knob_blocks > 0 ? knob_blocks : 0)
                         : gen2 || (sgrad && knob_blocks < 0) ? 0
                                                               : jit_min_blocks(ctx, width, npass);
  /* the memory key's mode: the job's, and what else the generator bakes in (second order: the
   * layout, the blocking; reverse: the AD mode, the loops' loads ahead; sgrad: the sample loop
   * and pathwise or score) */
  const int sg_bits = sgrad << 14 | (sgrad && job->score != 0) << 15;
  const int key_mode = gen2 ? job->mode | (second ? job->b->h_layout << 8 | job->nested_hessian << 12 : 0) |
                                  rev << 13 | (rev ? job->groups : 0) << 16 | (rev ? job->loads_ahead : 0) << 23 |
                                  sg_bits
                              : job->mode | sg_bits;
  const char *name_fmt = gen2 ? DUAL_JIT2_KERNEL_NAME : DUAL_JIT_KERNEL_NAME;
  if (prog->n_instr > MAX_INSTR || prog->n_instr * (int64_t)npass > MAX_WORK)
    return decline(ctx, dual_strdup_printf(
                            "the program (%lld instructions x %d passes) is over the compiled "
                            "tier's size rule (%d instructions, %d instruction-passes)",
                            (long long)prog->n_instr, npass, MAX_INSTR, MAX_WORK));
  if (g->memo_module != NULL && g->memo_uid == prog->uid && g->memo_mode == key_mode &&
      g->memo_width == width && g->memo_npass == npass && g->memo_min_blocks == min_blocks) {
    *out = g->memo_module; /* the last call's, as a solver's rounds make them */
    return DUAL_SUCCESS;
  }
  double t0 = trace_clock();
  uint8_t key[32], disk_key[32];
  dual_jit_memory_key(prog, key_mode, width, npass, min_blocks, g->cc, key);
  pthread_mutex_lock(&lock);
  dual_jit_module *m = find_loaded(key);
  pending *p = m == NULL ? find_pending(key) : NULL;
  while (p != NULL && ctx->tier == DUAL_TIER_COMPILE && (p->state == QUEUED || p->state == RUNNING))
    pthread_cond_wait(&finished, &lock);
  char why[512] = "";
  if (p != NULL && p->state == DONE) {
    m = load_module(key, npass, name_fmt, p->image, why, sizeof why);
    drop_pending(p);
    p = NULL;
  } else if (p != NULL && p->state == FAILED) {
    char *reason = dual_strdup_printf("its kernel did not compile:\n%s", p->log ? p->log : "");
    pthread_mutex_unlock(&lock);
    return decline(ctx, reason);
  } else if (p != NULL) {
    pthread_mutex_unlock(&lock);
    return decline(ctx, dual_strdup("its kernel is compiling in the background"));
  }
  pthread_mutex_unlock(&lock);
  if (m != NULL) {
    *out = remember(g, prog, key_mode, width, npass, min_blocks, m);
    return DUAL_SUCCESS;
  }
  if (why[0] != '\0') return decline(ctx, dual_strdup(why));
  int version = dual_rtc_version(why, sizeof why);
  if (version == 0) return decline(ctx, dual_strdup(why));

  /* Not in this process: generate the source, then the disk cache, else compile. */
  trace(ctx, "memory lookup, NVRTC load", &t0);
  int npass2 = npass;
  char *source = rev      ? dual_jit_source_rev(job, min_blocks, &npass2, why, sizeof why)
                 : second ? dual_jit_source2(job, &npass2, why, sizeof why)
                 : sgrad  ? dual_jit_source_sgrad(prog, job->score, width, npass, min_blocks, why, sizeof why)
                        : dual_jit_source(prog, job->mode, width, npass, min_blocks, why, sizeof why);
  if (source != NULL && npass2 != npass) {
    free(source);
    return decline(ctx, dual_strdup_printf("the generator made %d kernels for %d passes", npass2, npass));
  }
  if (source == NULL) return decline(ctx, dual_strdup(why));
  trace(ctx, "source generated", &t0);
  dual_jit_disk_key(source, g->cc, version, disk_key);
  char dir_buf[4096];
  const int have_dir = dual_context_cache_dir(ctx, dir_buf, sizeof dir_buf);
  void *image = NULL;
  size_t size = 0;
  const int cached = have_dir && dual_jit_cache_load(dir_buf, disk_key, &image, &size, NULL) == 0;
  trace(ctx, cached ? "disk cache read (hit)" : "disk cache read (miss)", &t0);
  if (cached) {
    m = adopt_module(key, npass, name_fmt, image, why, sizeof why);
    free(image);
    if (m != NULL) {
      free(source);
      *out = remember(g, prog, key_mode, width, npass, min_blocks, m);
      return DUAL_SUCCESS;
    }
  }
  if (ctx->tier == DUAL_TIER_AUTO) {
    pthread_mutex_lock(&lock);
    int queued = 1;
    if (find_pending(key) != NULL) free(source); /* another context queued it meanwhile */
    else queued = queue_compile(key, disk_key, source, have_dir ? dual_strdup(dir_buf) : NULL,
                                g->cc) == 0; /* takes the source */
    pthread_mutex_unlock(&lock);
    return decline(ctx, dual_strdup(queued ? "its kernel is compiling in the background"
                                           : "out of memory queueing its compile"));
  }
  char *log = NULL;
  int st = compile(source, g->cc, &image, &size, &log);
  free(source);
  trace(ctx, "NVRTC compile", &t0);
  if (st != DUAL_SUCCESS) {
    char *reason = dual_strdup_printf("the kernel did not compile (%s):\n%s",
                                      dual_status_string(st), log ? log : "");
    free(log);
    return decline(ctx, reason);
  }
  free(log);
  if (have_dir) dual_jit_cache_store(dir_buf, disk_key, image, size, NULL);
  trace(ctx, "disk cache write", &t0);
  m = adopt_module(key, npass, name_fmt, image, why, sizeof why);
  free(image);
  trace(ctx, "module load", &t0);
  if (m != NULL && ctx->knobs[DUAL_KNOB_JIT_TRACE])
    fprintf(stderr, "dualbatch jit: %d kernels, at most %d registers and %d local bytes per thread, "
            "%d blocks per multiprocessor\n", m->npass, m->regs, m->local_bytes, m->blocks_per_sm);
  if (m == NULL) return decline(ctx, dual_strdup(why));
  *out = remember(g, prog, key_mode, width, npass, min_blocks, m);
  return DUAL_SUCCESS;
}

int dual_gpu_jit_try(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                     dual_gpu_jit_runner run, int *st) {
  const dual_jit_module *jit = NULL;
  *st = dual_gpu_jit_select(ctx, g, job, &jit);
  if (*st != DUAL_SUCCESS) return 1;
  if (jit == NULL) return 0;
  *st = run(ctx, g, job, jit);
  if (*st == DUAL_SUCCESS) {
    ctx->last_tier = DUAL_TIER_COMPILE;
    return 1;
  }
  if (ctx->tier == DUAL_TIER_COMPILE) return 1;
  /* AUTO: the interpreter runs the whole job again, and the note says what failed */
  dual_set_note(ctx, dual_strdup_printf("interpreted: the compiled kernel failed: %s",
                                        dual_context_last_error(ctx)));
  dual_clear_error(ctx);
  *st = DUAL_SUCCESS;
  return 0;
}

int dual_gpu_jit_launch(const struct dual_gpu *g, const dual_jit_module *m, const dual_jit_args *ja,
                        void *stream) {
  /* Blocks of 128 threads; a batch too small for two blocks per multiprocessor gets blocks of
   * 64 or 32 threads instead, so that it spreads over every multiprocessor.  Every pass gets the
   * grid of the pass with the fewest resident blocks: a grid per pass (4 blocks of hess's lighter
   * passes instead of 3) ran 8% slower on the H100 (bench/NOTES.md). */
  const int64_t work = ja->count * (ja->sg_lanes > 1 ? ja->sg_lanes : 1); /* threads' worth */
  int threads = JIT_THREADS;
  while (threads > 32 && (work + threads - 1) / threads < 2 * (int64_t)g->sm_count) threads /= 2;
  int64_t blocks = (work + threads - 1) / threads;
  const int64_t resident = (int64_t)g->sm_count * m->blocks_per_sm * (JIT_THREADS / threads);
  if (blocks > resident) blocks = resident;
  dual_jit_args a = *ja;
  void *params[1] = {&a};
  const dim3 grid = {(unsigned)blocks, 1, 1}, block = {(unsigned)threads, 1, 1};
  cudaError_t e = dual_gpu_injected_fault("launch");
  for (int p = 0; p < m->npass && e == cudaSuccess; ++p)
    e = cudaLaunchKernel((const void *)m->kernels[p], grid, block, params, 0, (cudaStream_t)stream);
  return (int)e;
}

int dual_gpu_compiling(void) {
  pthread_mutex_lock(&lock);
  const int busy = worker_running;
  pthread_mutex_unlock(&lock);
  return busy;
}

int dual_gpu_would_compile(dual_context *ctx, const dual_job *job) {
  struct dual_gpu *g = NULL;
  const dual_jit_module *m = NULL;
  int prev = -1;
  int st = dual_gpu_enter(ctx, &prev);
  if (st == DUAL_SUCCESS) st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_jit_select(ctx, g, job, &m);
  dual_gpu_leave(prev);
  if (st != DUAL_SUCCESS) dual_clear_error(ctx); /* the run that follows meets it and reports it */
  return st == DUAL_SUCCESS && m != NULL;
}
