/*
 * cpu_jit.c — the CPU compiled tier's modules (cpu_jit.h): build, load, run, and the tier's use
 * on a CPU context (dual_cpu_jit_try): the compiler found once per process, each module kept
 * loaded for the process's life under its memory key, its shared object in the disk cache; under
 * DUAL_TIER_AUTO a (program, product) interprets until it has taken DUAL_KNOB_CPU_JIT_AFTER_MS of
 * interpreter time, then its module is built by a background thread (dual_cpu_jit_interpreted).
 */
#define _POSIX_C_SOURCE 200809L

#include "jit/cpu_jit.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "engine/pass2.h"
#include "jit/jit_args.h"
#include "jit/jit_cache.h"
#include "jit/jit_key.h"
#include "jit/jit_source2.h"
#include "jit/jit_source_rev.h"
#include "jit/rtc_child.h"

int dual_cpu_jit_load(const void *image, size_t size, int mode, int width, int npass,
                      dual_cpu_jit_module **out, char **why) {
  *out = NULL;
  *why = NULL;
  dual_cpu_jit_module *m = calloc(1, sizeof *m);
  dual_cpu_jit_pass *pass = calloc((size_t)(npass > 0 ? npass : 1), sizeof *pass);
  if (m == NULL || pass == NULL) {
    free(m), free(pass);
    *why = dual_strdup("out of memory loading a compiled CPU module");
    return -1;
  }
  m->mode = mode, m->width = width, m->npass = npass, m->pass = pass, m->fd = -1;
  if (dual_cc_load(image, size, &m->handle, &m->fd, why) != 0) {
    free(pass), free(m);
    return -1;
  }
  const void *blk = dlsym(m->handle, DUAL_CPU_JIT_BLOCK_NAME);
  if (blk != NULL) memcpy(&m->block, blk, sizeof m->block);
  if (blk == NULL || m->block < 1 || m->block > DUAL_CPU_JIT_BLOCK) {
    *why = dual_strdup("the compiled CPU module has no block size in range");
    dual_cpu_jit_free(m);
    return -1;
  }
  const void *scr = dlsym(m->handle, DUAL_CPU_JIT_SCRATCH_NAME);
  if (scr != NULL) memcpy(&m->scratch, scr, sizeof m->scratch);
  if (m->scratch < 0 || m->scratch > ((int64_t)1 << 30)) {
    *why = dual_strdup("the compiled CPU module's scratch size is out of range");
    dual_cpu_jit_free(m);
    return -1;
  }
  for (int k = 0; k < npass; ++k) {
    char name[64];
    snprintf(name, sizeof name, DUAL_CPU_JIT_PASS_NAME, k);
    void *f = dlsym(m->handle, name);
    if (f == NULL) {
      *why = dual_strdup_printf("the compiled CPU module has no function %s", name);
      dual_cpu_jit_free(m);
      return -1;
    }
    memcpy(&pass[k], &f, sizeof f); /* (object to function pointer: POSIX's dlsym) */
  }
  *out = m;
  return 0;
}

/* Compile src with cc, store the object in the disk cache under `disk` (when dir is not NULL)
 * and load it: 0 with *out; 1 when the compile failed (*why: its log), 2 when the object did not
 * load (*why: the reason). */
static int compile_and_load(const dual_cc *cc, const char *src, int mode, int width, int npass, const char *dir,
                            const uint8_t disk[32], dual_cpu_jit_module **out, char **why) {
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  *out = NULL, *why = NULL;
  if (dual_cc_compile(cc, src, &image, &size, &log) != 0) {
    *why = log != NULL ? log : dual_strdup("the C compiler failed");
    return 1;
  }
  free(log);
  if (dir != NULL) (void)dual_jit_cache_store(dir, disk, image, size, NULL); /* no cache: compiled again */
  const int lst = dual_cpu_jit_load(image, size, mode, width, npass, out, why);
  free(image);
  return lst == 0 ? 0 : 2;
}

int dual_cpu_jit_build(const dual_cc *cc, const dual_program *prog, int mode, int width, int npass,
                       dual_cpu_jit_module **out, char **why) {
  *out = NULL;
  *why = NULL;
  char reason[512];
  char *src = dual_jit_source_cpu(prog, mode, width, npass, reason, sizeof reason);
  if (src == NULL) {
    *why = dual_strdup(reason);
    return -1;
  }
  const int st = compile_and_load(cc, src, mode, width, npass, NULL, NULL, out, why);
  free(src);
  return st == 0 ? 0 : -1;
}

void dual_cpu_jit_free(dual_cpu_jit_module *m) {
  if (m == NULL) return;
  dual_cc_unload(m->handle, m->fd);
  free(m->pass);
  free(m);
}

/* The job's arrays as the generated code reads them. */
static void job_args(const dual_job *job, dual_jit_args *a) {
  const dual_batch *b = job->b;
  memset(a, 0, sizeof *a);
  a->count = b->count;
  a->x = b->x, a->p = b->p, a->v = b->v, a->u = b->u, a->u_ps = b->u_ps, a->u_es = b->u_es;
  a->x_ps = b->x_ps, a->x_es = b->x_es, a->p_ps = b->p_ps, a->p_es = b->p_es, a->v_ps = b->v_ps, a->v_es = b->v_es;
  a->y = b->y, a->y_ps = b->y_ps, a->y_es = b->y_es;
  a->d = b->d, a->d_ps = b->d_ps, a->d_rs = b->d_rs, a->d_cs = b->d_cs;
  a->h = b->h, a->h_ps = b->h_ps, a->h_rs = b->h_rs, a->h_es = b->h_es;
  a->status = b->status;
  a->seed = job->seed, a->point0 = job->point0, a->sample = job->sample, a->antithetic = job->antithetic;
}

/* The passes of a job: reverse mode's one, first order's (dual_job_passes) or second order's
 * (engine/pass2.h). */
static int64_t job_passes(const dual_job *job) {
  if (job->reverse) return 1;
  return dual_mode_is_second_order(job->mode) ? dual_pass2_count(job) : dual_job_passes(job);
}

/* The threads that run the job through m: the job's, at most one per block of m's points (one
 * for an empty batch). */
static int run_threads(const dual_job *job, const dual_cpu_jit_module *m) {
  const int64_t nblocks = (job->b->count + m->block - 1) / m->block;
  const int threads = job->threads > 0 ? job->threads : 1;
  return nblocks < 1 ? 1 : (int64_t)threads > nblocks ? (int)nblocks : threads;
}

int dual_cpu_jit_run(dual_context *ctx, const dual_job *job, const dual_cpu_jit_module *m) {
  const int64_t count = job->b->count;
  if (count == 0) return DUAL_SUCCESS;
  if (job->mode != m->mode || (job->mode != DUAL_MODE_EVAL && job->width != m->width) ||
      job_passes(job) != m->npass)
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "the compiled CPU module (mode %d, width %d, %d passes) "
                     "does not fit the job (mode %d, width %d)", m->mode, m->width, m->npass, job->mode, job->width);
  const int64_t blk = m->block, nblocks = (count + blk - 1) / blk;
  const int threads = run_threads(job, m);
  const int take = dual_blocks_per_take(nblocks, threads);
  dual_jit_args a;
  job_args(job, &a);
  /* derivative results past DUAL_CPU_JIT_STREAM_BYTES go to memory with non-temporal stores */
  const double dbytes = job->b->d != NULL && !dual_mode_is_second_order(job->mode)
                            ? 8.0 * (double)count * (double)job->prog->n_out *
                                  (double)dual_program_jacobian_columns(job->prog)
                            : 0.0; /* (second order: its copy-out never streams) */
  const int stream = dbytes >= (double)DUAL_CPU_JIT_STREAM_BYTES;
  /* passes inside the block loop: a block's points stay in cache from pass to pass; each thread
   * its own scratch (a thread that gets none takes no block) */
  int nomem = 0;
#pragma omp parallel num_threads(threads)
  {
    double *scratch = NULL;
    if (m->scratch > 0) {
      scratch = (double *)malloc((size_t)m->scratch);
      if (scratch == NULL) {
#pragma omp atomic write
        nomem = 1;
      }
    }
#pragma omp for schedule(dynamic, take)
    for (int64_t ib = 0; ib < nblocks; ++ib) {
      if (m->scratch > 0 && scratch == NULL) continue;
      const int64_t p0 = ib * blk, nb = count - p0 < blk ? count - p0 : blk;
      for (int k = 0; k < m->npass; ++k) m->pass[k](&a, p0, nb, stream, scratch);
    }
    free(scratch);
  }
  if (nomem)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory: %lld bytes of scratch per thread for a compiled CPU module",
                     (long long)m->scratch);
  return DUAL_SUCCESS;
}

/* ---- the tier on a CPU context ------------------------------------------------------------ */

typedef struct loaded {
  uint8_t key[32]; /* dual_jit_memory_key of the program and job shape */
  dual_cpu_jit_module *m;
  struct loaded *next;
} loaded;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int cc_state;  /* 0: not looked for, 1: found, -1: none (cc_why says why) */
static dual_cc cc;
static char *cc_why;
static loaded *modules;

static dual_cpu_jit_module *find_loaded(const uint8_t key[32]) {
  for (loaded *l = modules; l != NULL; l = l->next)
    if (memcmp(l->key, key, 32) == 0) return l->m;
  return NULL;
}

/* The module in the disk cache under `disk` (dir NULL: none), or NULL: absent, or an entry that
 * passes the check but does not load (another machine's object under the same key would be a
 * bug; a truncated one fails the check), which is then compiled again. */
static dual_cpu_jit_module *load_cached(const char *dir, const uint8_t disk[32], int mode, int width, int npass) {
  void *image = NULL;
  size_t size = 0;
  dual_cpu_jit_module *m = NULL;
  char *why = NULL;
  if (dir != NULL && dual_jit_cache_load(dir, disk, &image, &size, NULL) == 0) {
    if (dual_cpu_jit_load(image, size, mode, width, npass, &m, &why) != 0) m = NULL;
    free(why), free(image);
  }
  return m;
}

/* Keep m among the process's modules under `key`, unless another thread kept one meanwhile (m
 * is then freed): the module kept, or NULL when out of memory (m freed). */
static const dual_cpu_jit_module *keep_module(const uint8_t key[32], dual_cpu_jit_module *m) {
  loaded *l = malloc(sizeof *l);
  if (l == NULL) {
    dual_cpu_jit_free(m);
    return NULL;
  }
  pthread_mutex_lock(&lock);
  const dual_cpu_jit_module *kept = find_loaded(key);
  if (kept == NULL) {
    memcpy(l->key, key, 32), l->m = m, l->next = modules, modules = l;
    kept = m, l = NULL, m = NULL;
  }
  pthread_mutex_unlock(&lock);
  free(l), dual_cpu_jit_free(m);
  return kept;
}

/* The source of the job's module: reverse mode (dual_jit_source_rev_cpu), first order
 * (dual_jit_source_cpu) or second (dual_jit_source2_cpu), NULL with why where the generator
 * declines or the source is over DUAL_CPU_JIT_MAX_SOURCE. */
static char *job_source(const dual_job *job, int npass, char *why, int64_t cap) {
  int made = npass;
  char *src = job->reverse                         ? dual_jit_source_rev_cpu(job, why, cap)
              : dual_mode_is_second_order(job->mode) ? dual_jit_source2_cpu(job, &made, why, cap)
                                                     : dual_jit_source_cpu(job->prog, job->mode, job->width, npass, why, cap);
  if (src != NULL && made != npass) {
    free(src);
    snprintf(why, (size_t)cap, "the generator made %d passes for %d", made, npass);
    return NULL;
  }
  const size_t len = src != NULL ? strlen(src) : 0;
  if (len > DUAL_CPU_JIT_MAX_SOURCE) {
    free(src);
    snprintf(why, (size_t)cap, "its C source would take %zu KiB (%d passes), over the CPU tier's rule of %d KiB "
             "(the compile would take minutes)", len >> 10, npass, DUAL_CPU_JIT_MAX_SOURCE >> 10);
    return NULL;
  }
  return src;
}

/* The module's memory key: the program, and the job's mode with, for second order, what the
 * generator bakes in beside it (the h layout, the nested-Hessian choice), or reverse mode, its
 * width and passes. */
static void module_key(const dual_job *job, int npass, uint8_t key[32]) {
  const int second = dual_mode_is_second_order(job->mode);
  const int key_mode = job->mode | (second ? 1 << 16 | job->b->h_layout << 8 | job->nested_hessian << 12 : 0) |
                       (job->reverse ? 1 << 20 : 0);
  dual_jit_memory_key(job->prog, key_mode, job->width, npass, 0, -1, key);
}

/* The module for the job: loaded before, from the disk cache, or compiled now (and stored). */
static int module_for(dual_context *ctx, const dual_job *job, int npass, const dual_cpu_jit_module **out) {
  uint8_t key[32];
  module_key(job, npass, key);
  pthread_mutex_lock(&lock);
  const dual_cpu_jit_module *have = find_loaded(key);
  if (have == NULL && cc_state == 0) {
    cc_state = dual_cc_find(&cc, &cc_why) == 0 ? 1 : -1;
  }
  const int cc_ok = cc_state == 1;
  pthread_mutex_unlock(&lock);
  if (have != NULL) {
    *out = have;
    return DUAL_SUCCESS;
  }
  if (!cc_ok)
    return dual_fail(ctx, DUAL_ERR_COMPILE, "the compiled CPU tier needs a C compiler: %s",
                     cc_why != NULL ? cc_why : "none found");
  char reason[512];
  char *src = job_source(job, npass, reason, sizeof reason);
  if (src == NULL) return dual_fail(ctx, DUAL_ERR_COMPILE, "the compiled CPU tier declined the program: %s", reason);
  uint8_t disk[32];
  dual_jit_cpu_disk_key(src, cc.identity, disk);
  char dir[4096];
  const int have_dir = dual_context_cache_dir(ctx, dir, sizeof dir);
  dual_cpu_jit_module *m = load_cached(have_dir ? dir : NULL, disk, job->mode, job->width, npass);
  char *why = NULL;
  const int built = m != NULL ? 0 : compile_and_load(&cc, src, job->mode, job->width, npass, have_dir ? dir : NULL,
                                                      disk, &m, &why);
  free(src);
  if (built != 0) {
    const int st = built == 1 ? dual_fail(ctx, DUAL_ERR_COMPILE, "the compiled CPU tier's compile failed:\n%s",
                                          why != NULL ? why : "(no log)")
                              : dual_fail(ctx, DUAL_ERR_COMPILE, "the compiled CPU module did not load: %s",
                                          why != NULL ? why : "");
    free(why);
    return st;
  }
  *out = keep_module(key, m);
  return *out != NULL ? DUAL_SUCCESS : dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory keeping a compiled CPU module");
}

/* ---- DUAL_TIER_AUTO: the interpreter first, the module compiled in the background ---------- */

/* What AUTO knows of a (program, product): the interpreter's time on it so far, and whether its
 * module is queued, built or declined.  Kept process-wide (programs' uids are), at most
 * HOT_SLOTS of them, the oldest forgotten first (its count starts again). */
enum { HOT_SLOTS = 64 };
typedef struct hot {
  uint64_t uid; /* the program's (0: free) */
  int mode, width, layout, nested, reverse;
  double interp_s;              /* seconds interpreted */
  int state;                    /* 0 counting, 1 queued, 2 declined (the generator's rules, no
                                   compiler), 3 being queued (its source generated) */
  uint8_t key[32];              /* the module's memory key (state 1) */
  const dual_cpu_jit_module *m; /* the module, once the background compile has loaded it */
} hot;
static hot hots[HOT_SLOTS];
static int hot_next;

/* A background compile: the module's source and keys, where its object goes. */
typedef struct queued {
  uint8_t key[32];
  char *src, *dir;
  int mode, width, npass;
  struct queued *next;
} queued;
static queued *queue_head;
static int worker_running;

static hot *hot_find(const dual_job *job) { /* (caller holds the lock) */
  const int layout = dual_mode_is_second_order(job->mode) ? job->b->h_layout : 0;
  const int nested = dual_mode_is_second_order(job->mode) ? job->nested_hessian : 0;
  for (int i = 0; i < HOT_SLOTS; ++i) {
    hot *h = &hots[i];
    if (h->uid == job->prog->uid && h->mode == job->mode && h->width == job->width && h->layout == layout &&
        h->nested == nested && h->reverse == job->reverse)
      return h;
  }
  hot *h = &hots[hot_next];
  hot_next = (hot_next + 1) % HOT_SLOTS;
  memset(h, 0, sizeof *h);
  h->uid = job->prog->uid, h->mode = job->mode, h->width = job->width, h->layout = layout, h->nested = nested;
  h->reverse = job->reverse;
  return h;
}

/* The process's compiler as jit/rtc_child.h's compile function (the child's: its int unused). */
static int cc_compile_fn(const char *src, int unused, void **image, size_t *size, char **log) {
  (void)unused;
  return dual_cc_compile(&cc, src, image, size, log) == 0 ? DUAL_SUCCESS : DUAL_ERR_COMPILE;
}

/* The background thread: each queued module from the disk cache or compiled (and stored), then
 * added to the process's modules; one that fails stays out (its product keeps interpreting).
 * The compile runs in a fork()ed child (jit/rtc_child.h), as the GPU tier's: the process may
 * exit during it, and the child finishes the compile, stores the object in the disk cache and
 * ends, where a compiler run from a thread of the process would be left running with no one to
 * store its object or remove its files. */
static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&lock);
    queued *q = queue_head;
    if (q == NULL) {
      worker_running = 0;
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    queue_head = q->next;
    pthread_mutex_unlock(&lock);
    uint8_t disk[32];
    dual_jit_cpu_disk_key(q->src, cc.identity, disk);
    dual_cpu_jit_module *m = load_cached(q->dir, disk, q->mode, q->width, q->npass);
    char *why = NULL;
    if (m == NULL) {
      void *image = NULL;
      size_t size = 0;
      char *log = NULL;
      int st = dual_rtc_compile_in_child(cc_compile_fn, q->src, 0, q->dir, disk, &image, &size, &log);
      if (st == -1) { /* no child: here, and stored here */
        st = cc_compile_fn(q->src, 0, &image, &size, &log);
        if (st == DUAL_SUCCESS && q->dir != NULL) (void)dual_jit_cache_store(q->dir, disk, image, size, NULL);
      }
      if (st == DUAL_SUCCESS && dual_cpu_jit_load(image, size, q->mode, q->width, q->npass, &m, &why) != 0)
        m = NULL;
      free(image), free(log);
    }
    free(why);
    if (m != NULL) (void)keep_module(q->key, m); /* (out of memory: not kept, interpreted) */
    free(q->src), free(q->dir), free(q);
  }
}

/* The job's module as a queue entry: its source (generated now: the program may be gone by the
 * time the worker runs), keys and cache directory; NULL when the generator declines or memory
 * runs out.  Called without the lock (kin's source takes milliseconds). */
static queued *queue_entry(dual_context *ctx, const dual_job *job, int npass) {
  char reason[256];
  char *src = job_source(job, npass, reason, sizeof reason);
  char dir[4096];
  const int have_dir = dual_context_cache_dir(ctx, dir, sizeof dir);
  queued *q = src != NULL ? calloc(1, sizeof *q) : NULL;
  if (q == NULL) {
    free(src);
    return NULL;
  }
  module_key(job, npass, q->key);
  q->src = src, q->dir = have_dir ? dual_strdup(dir) : NULL;
  q->mode = job->mode, q->width = job->width, q->npass = npass;
  return q;
}

/* Append q to the queue, starting the worker if it is not running; the caller holds the lock.
 * 0 when queued, -1 (q freed) when no thread could be started. */
static int queue_module(queued *q) {
  queued **tail = &queue_head;
  while (*tail != NULL) tail = &(*tail)->next;
  *tail = q;
  if (!worker_running) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    worker_running = pthread_create(&t, &attr, worker, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (!worker_running) { /* no thread: nothing compiles (the product keeps interpreting) */
      *tail = NULL;
      free(q->src), free(q->dir), free(q);
      return -1;
    }
  }
  return 0;
}

/* The job as the tier sees it (an eval's or reverse mode's width 0 — forward-over-reverse then
 * takes DUAL_JIT_REV_DIRECTIONS directions a group, all groups in one function — no loads ahead)
 * and its passes; 0 when the tier does not take it (a dual_sgrad job — whose samples come here
 * one by one as gradients, cpu/engine_sgrad.c — over the second-order generator's passes). */
static int tier_job(const dual_context *ctx, const dual_job *job, dual_job *j, int64_t *npass) {
  if (ctx->device != DUAL_DEVICE_CPU || ctx->cpu_tier == DUAL_TIER_INTERPRET || job->samples > 0) return 0;
  *j = *job;
  if (j->mode == DUAL_MODE_EVAL || j->reverse) j->width = 0;
  j->loads_ahead = 0, j->groups = 0;
  *npass = job_passes(j);
  return *npass <= 4096;
}

int dual_cpu_jit_try(dual_context *ctx, const dual_job *job, int *ran) {
  *ran = 0;
  dual_job j;
  int64_t npass = 0;
  if (!tier_job(ctx, job, &j, &npass)) return DUAL_SUCCESS;
  /* compiled at this call and waited for: under COMPILE, and under AUTO at 0 ms (where a module
   * the tier cannot build interprets, the reason in the note); AUTO otherwise runs the module
   * once the background compile has loaded it.  A product's module, once this process has it,
   * is found through its hot entry, without its memory key (a hash of the program). */
  const int compile = ctx->cpu_tier == DUAL_TIER_COMPILE;
  const int now = compile || ctx->knobs[DUAL_KNOB_CPU_JIT_AFTER_MS] == 0;
  pthread_mutex_lock(&lock);
  hot *h = hot_find(&j);
  if (h->state == 1 && h->m == NULL) h->m = find_loaded(h->key);
  const dual_cpu_jit_module *m = h->m;
  const int declined = h->state == 2;
  pthread_mutex_unlock(&lock);
  if (m == NULL && (!now || (declined && !compile))) return DUAL_SUCCESS;
  if (m == NULL) {
    const int st = module_for(ctx, &j, (int)npass, &m);
    pthread_mutex_lock(&lock);
    h = hot_find(&j);
    if (st == DUAL_SUCCESS) h->m = m, h->state = 1, module_key(&j, (int)npass, h->key);
    else if (!compile) h->state = 2;
    pthread_mutex_unlock(&lock);
    if (st != DUAL_SUCCESS && compile) {
      *ran = 1;
      return st;
    }
    if (st != DUAL_SUCCESS) { /* AUTO at 0 ms: the reason is a note, not an error */
      char *why = dual_strdup_printf("the compiled CPU tier did not serve: %s", dual_context_last_error(ctx));
      dual_clear_error(ctx);
      dual_set_note(ctx, why);
      return DUAL_SUCCESS;
    }
  }
  /* the module's scratch for the threads that would run it counts against the memory limit, as
   * the interpreter's reverse-mode workspaces: past it AUTO interprets (whose sweeps are then
   * checkpointed), COMPILE fails */
  const int64_t limit = ctx->memory_limit > 0 ? ctx->memory_limit : DUAL_CPU_MEMORY_DEFAULT;
  const int64_t threads = run_threads(&j, m);
  if (m->scratch > 0 && threads * m->scratch > limit) {
    if (compile) {
      *ran = 1;
      return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "the compiled CPU module needs %lld bytes of scratch for %lld threads, "
                       "over the memory limit of %lld bytes (dual_context_set_memory_limit)",
                       (long long)(threads * m->scratch), (long long)threads, (long long)limit);
    }
    dual_set_note(ctx, dual_strdup_printf("the compiled CPU tier did not serve: its module's scratch (%lld bytes for "
                                          "%lld threads) is over the memory limit of %lld bytes",
                                          (long long)(threads * m->scratch), (long long)threads, (long long)limit));
    return DUAL_SUCCESS;
  }
  *ran = 1;
  const int st = dual_cpu_jit_run(ctx, &j, m);
  if (st == DUAL_SUCCESS) ctx->last_tier = DUAL_TIER_COMPILE;
  return st;
}

void dual_cpu_jit_interpreted(dual_context *ctx, const dual_job *job, double seconds) {
  dual_job j;
  int64_t npass = 0;
  if (ctx->cpu_tier != DUAL_TIER_AUTO || ctx->knobs[DUAL_KNOB_CPU_JIT_AFTER_MS] == 0 || !tier_job(ctx, job, &j, &npass))
    return; /* (at 0 ms dual_cpu_jit_try compiles at once) */
  const double after = (double)ctx->knobs[DUAL_KNOB_CPU_JIT_AFTER_MS] / 1000.0;
  pthread_mutex_lock(&lock);
  hot *h = hot_find(&j);
  h->interp_s += seconds > 0.0 ? seconds : 0.0;
  const int due = h->state == 0 && h->interp_s >= after;
  if (due && cc_state == 0) cc_state = dual_cc_find(&cc, &cc_why) == 0 ? 1 : -1;
  if (due) h->state = cc_state == 1 ? 3 : 2;
  pthread_mutex_unlock(&lock);
  if (!due || cc_state != 1) return;
  /* the source and keys outside the lock; the entry found again (another product may have
   * taken its slot meanwhile: this product's entry is then a new one) */
  queued *q = queue_entry(ctx, &j, (int)npass);
  pthread_mutex_lock(&lock);
  h = hot_find(&j);
  if (q != NULL) memcpy(h->key, q->key, 32);
  h->state = q != NULL && queue_module(q) == 0 ? 1 : 2;
  pthread_mutex_unlock(&lock);
}
