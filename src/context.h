/*
 * context.h — the internal layout of a dual_context and the error-reporting helper every public
 * function uses.  Included by all library sources.
 */
#ifndef DUAL_CONTEXT_H
#define DUAL_CONTEXT_H

#include <stdarg.h>
#include <stddef.h>

#include "dualbatch.h"
#include "stress.h"

/* The CPU's memory limit when none is set: the reverse-mode workspaces of all threads together
 * (cpu/engine_rev.c), and the compiled tier's scratch (jit/cpu_jit.c), in bytes. */
#define DUAL_CPU_MEMORY_DEFAULT ((int64_t)1 << 30)

/* The most GPUs one context runs on (dual_context_set_gpus). */
#define DUAL_MAX_GPUS 16

struct dual_context {
  int device;           /* DUAL_DEVICE_CPU or DUAL_DEVICE_GPU (resolved, never AUTO) */
  int requested;        /* what was asked for, after DUALBATCH_DEVICE (AUTO may fall back) */
  int threads;          /* 0 = all cores */
  int width;            /* 0 = auto */
  int ad_mode;          /* dual_ad_mode */
  int last_ad_mode;     /* the mode of the last successful evaluation */
  uint64_t seed;        /* random draws outside dual_sgrad (sample 0 of this seed) */
  char *error;          /* last error message, heap, NULL = none */
  int last_device;      /* where the last successful evaluation ran */
  char *note;           /* why that was not `device` (heap, NULL = none) */
  void *stream;         /* caller's cudaStream_t for device-memory batches, NULL = own */
  int gpu_no_wait;      /* internal, the solvers' rounds: a device-memory GPU evaluation of the
                           solver's own arrays (not checked again) returns once its kernels are
                           queued (the caller waits on the stream) */
  int64_t memory_limit; /* GPU pool bytes; on the CPU the reverse-mode workspaces' (0 = default:
                           DUAL_CPU_MEMORY_DEFAULT on the CPU) */
  struct dual_gpu *gpu; /* GPU state, created by the first GPU evaluation */
  int gpu_ordinal;      /* a GPU context's CUDA device (dual_context_set_gpu); -1 on the CPU */
  int n_gpus;           /* devices it runs on (dual_context_set_gpus): 1 on a GPU, 0 on the CPU */
  int gpu_list[DUAL_MAX_GPUS]; /* their ordinals, gpu_list[0] = gpu_ordinal */
  struct dual_context *gpu_peers[DUAL_MAX_GPUS]; /* [1 ..): the other devices' contexts (multi_gpu.h) */
  double gpu_rate[DUAL_MAX_GPUS]; /* each device's measured points per second (0: not yet measured) */
  double gpu_rate_dev[DUAL_MAX_GPUS]; /* the same for device-memory batches (a peer's share of the
                           first device's arrays crosses the link between the devices) */
  double gpu_rate_solve[DUAL_MAX_GPUS]; /* the same for dual_newton's and dual_lsq's host-array calls */
  int solve_share;      /* a solver call running as one device's share (multi_gpu.h): not split again */
  int gpu_peer_access[DUAL_MAX_GPUS]; /* [i]: kernels on device i may use the first device's
                           memory (1), may not (-1), not yet asked (0) */
  int gpu_reach;        /* a peer during a device-memory split call: 1 + the ordinal whose memory
                           its batch may also live in (0: none) */
  void *gpu_after;      /* a peer during a device-memory split call: the cudaEvent_t (another
                           device's) its kernels first wait for: the caller's work (NULL: none) */
  int64_t stage_points; /* a device's share of a host-array split call: the points its staging
                           sizes chunks by when its share is smaller (0: its share) */
  int tier;             /* dual_tier asked for (after DUALBATCH_TIER) */
  int cpu_tier;           /* the CPU's compiled tier on a CPU context (jit/cpu_jit.h): dual_tier, from
                           DUALBATCH_CPU_TIER or dual_context_set_tier */
  int last_tier;        /* the tier of the last successful evaluation */
  char *cache_dir;      /* the compiled tier's disk cache (heap; NULL = default) */
  int64_t knobs[DUAL_KNOB_COUNT]; /* dual_knob values (dual_context_set_knob) */
  int solve_depth;      /* solver calls in progress (dual_newton's rescue calls dual_lsq) */
  int solve_fell;       /* the outermost solver call fell back to the CPU somewhere */
  char *solve_note;     /* the note of its first fallback (heap, NULL = none) */
  struct dual_calibration *calib; /* AUTO's dispatch figures (dispatch/calibration.h; heap, NULL =
                                     not yet known) */
  struct dual_dispatch_memo *memo; /* AUTO's measured scales of programs (dispatch/dispatch.c) */
  int64_t last_split[2];           /* the last call's points on the GPU and on the CPU */
  struct dual_split_worker *split_worker; /* the threads of split calls (dispatch/split.c), or NULL */
};

/* The context's note (takes ownership of a heap string; NULL clears it, as each call does at its
 * start): a second note in one call is appended to the first ("first; second"). */
void dual_set_note(dual_context *ctx, char *note);
/* The cache directory this context's compiled tiers read and write (into buf): 1, or 0 when
 * there is none or it fails the trust checks (jit/jit_cache_trust.h; then noted). */
int dual_context_cache_dir(dual_context *ctx, char *buf, size_t cap);

#if defined(__GNUC__)
#define DUAL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DUAL_PRINTF(f, a)
#endif

/* Record a formatted message as the context's last error and return `status`.  ctx may be NULL
 * (the message is then dropped).  Never fails: on OOM the message degrades to the status text. */
int dual_fail(dual_context *ctx, int status, const char *fmt, ...) DUAL_PRINTF(3, 4);
/* Take ownership of a heap message as the last error. */
int dual_fail_owned(dual_context *ctx, int status, char *msg);
/* Clear the last error (start of every successful public call). */
void dual_clear_error(dual_context *ctx);

/* printf into a fresh heap string (NULL on OOM). */
char *dual_strdup_printf(const char *fmt, ...) DUAL_PRINTF(1, 2);
char *dual_strdup(const char *s);

#endif /* DUAL_CONTEXT_H */
