/*
 * multi_gpu.c — a context over several GPUs (dual_context_set_gpus).  The first device is the
 * context's own; each other device has a peer context, made with the list: the caller's settings
 * (copied again at each call) and a GPU state of its own.  A host-memory call is cut into
 * contiguous shares, one per device, sized by each device's measured points per second (even at
 * first), and run at once (dual_run_parts), each share by the engines one device would use: the
 * bits one GPU gives.  A device-memory batch (on the first device) is cut the same way among the
 * devices with peer access to the first's memory: their kernels read and write its arrays in
 * place, over the link between the devices, after the caller's work queued on the first device
 * (an event they wait for); their rates are learned apart from the host batches'.
 */
#include "multi_gpu.h"

#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dispatch/split.h"
#include "gpu.h"
#include "solve/solve_common.h" /* dual_solve_fell_back, dual_solve_threads */

_Static_assert(DUAL_MAX_GPUS <= DUAL_SPLIT_MAX_PARTS, "a call over every GPU is one split call");

/* The caller's settings onto a peer (its own state, error and note stay its own). */
static int peer_sync(const dual_context *ctx, dual_context *p) {
  p->device = ctx->device, p->requested = ctx->requested;
  p->threads = ctx->threads, p->width = ctx->width, p->ad_mode = ctx->ad_mode, p->seed = ctx->seed;
  p->memory_limit = ctx->memory_limit, p->tier = ctx->tier, p->cpu_tier = ctx->cpu_tier;
  memcpy(p->knobs, ctx->knobs, sizeof p->knobs);
  const int same = (ctx->cache_dir == NULL && p->cache_dir == NULL) ||
                   (ctx->cache_dir != NULL && p->cache_dir != NULL && strcmp(ctx->cache_dir, p->cache_dir) == 0);
  if (same) return DUAL_SUCCESS;
  free(p->cache_dir);
  p->cache_dir = ctx->cache_dir != NULL ? dual_strdup(ctx->cache_dir) : NULL;
  return ctx->cache_dir == NULL || p->cache_dir != NULL ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
}

void dual_multi_gpu_free(dual_context *ctx) {
  for (int i = 1; i < ctx->n_gpus; ++i) dual_context_destroy(&ctx->gpu_peers[i]);
  ctx->n_gpus = ctx->device == DUAL_DEVICE_GPU ? 1 : 0;
}

int dual_multi_gpu_set(dual_context *ctx, int count, const int *ordinals) {
  dual_multi_gpu_free(ctx);
  ctx->gpu_list[0] = ordinals[0];
  for (int i = 1; i < count; ++i) {
    dual_context *p = (dual_context *)calloc(1, sizeof *p);
    if (p == NULL) {
      dual_multi_gpu_free(ctx);
      return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory creating the context of GPU %d", ordinals[i]);
    }
    p->last_device = DUAL_DEVICE_GPU, p->last_ad_mode = DUAL_AD_FORWARD, p->last_tier = DUAL_TIER_INTERPRET;
    p->gpu_ordinal = ordinals[i], p->n_gpus = 1, p->gpu_list[0] = ordinals[i];
    ctx->gpu_peers[i] = p, ctx->gpu_list[i] = ordinals[i];
    ctx->gpu_rate[i] = ctx->gpu_rate_dev[i] = ctx->gpu_rate_solve[i] = 0.0;
    ctx->gpu_peer_access[i] = 0;
    ctx->n_gpus = i + 1;
    if (peer_sync(ctx, p) != DUAL_SUCCESS) {
      dual_multi_gpu_free(ctx);
      return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory creating the context of GPU %d", ordinals[i]);
    }
  }
  ctx->gpu_rate[0] = ctx->gpu_rate_dev[0] = ctx->gpu_rate_solve[0] = 0.0;
  ctx->n_gpus = count;
  return DUAL_SUCCESS;
}

/* Device i's context for a call: the context itself (i = 0), or its peer with the caller's
 * settings and no error or note; NULL, with ctx's error set, when the settings cannot be copied. */
static dual_context *part_context(dual_context *ctx, int i) {
  if (i == 0) return ctx;
  dual_context *p = ctx->gpu_peers[i];
  if (peer_sync(ctx, p) != DUAL_SUCCESS) {
    dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory");
    return NULL;
  }
  dual_set_note(p, NULL), dual_clear_error(p);
  return p;
}

/* A device's rate from its share of `count` points in `secs`: the mean of its last two measures
 * (a share of a few chunks times noisily); not from a share that (re)allocated the device's
 * buffers (`allocated`: a first call, or a larger share than before — allocating pinned host
 * memory is slow), as the hybrid dispatch does: such a time would shrink the device's next share,
 * and the swing make the other device reallocate. */
static void learn_rate(double *rate, int64_t count, double secs, int allocated) {
  if (count == 0 || secs <= 0.0 || allocated) return;
  const double r = (double)count / secs;
  *rate = *rate > 0.0 ? 0.5 * (*rate + r) : r;
}

/* The points each device's share of a host-array split of `count` points over `parts` devices
 * sizes its staging (gpu_stage.c) and solver chunks by (ctx->stage_points): the even share and a
 * quarter more, whatever its own share.  Shares move with the measured rates, and buffers sized
 * from a share would be outgrown, and pinned or allocated again (seconds for gigabytes). */
static int64_t stage_basis(int64_t count, int parts) {
  const int64_t even = (count + parts - 1) / parts;
  return even + even / 4;
}

/* Whether device i of the list may take a share of a device-memory batch on the first device:
 * the first itself, or a device with peer access to its memory (asked once). */
static int reaches_first(dual_context *ctx, int i) {
  if (i == 0) return 1;
  if (ctx->gpu_peer_access[i] == 0)
    ctx->gpu_peer_access[i] = dual_gpu_enable_peer(ctx->gpu_list[i], ctx->gpu_list[0]) ? 1 : -1;
  return ctx->gpu_peer_access[i] > 0;
}

int dual_multi_gpu_run(dual_context *ctx, const dual_job *job, dual_engine_fn engine) {
  const int k = ctx->n_gpus, device = job->b->memory == DUAL_MEMORY_DEVICE;
  dual_context *ctxs[DUAL_SPLIT_MAX_PARTS];
  dual_engine_fn fn[DUAL_SPLIT_MAX_PARTS];
  int threads[DUAL_SPLIT_MAX_PARTS], st[DUAL_SPLIT_MAX_PARTS], used[DUAL_SPLIT_MAX_PARTS];
  int64_t counts[DUAL_SPLIT_MAX_PARTS], some[DUAL_SPLIT_MAX_PARTS] = {0};
  double secs[DUAL_SPLIT_MAX_PARTS], some_rate[DUAL_SPLIT_MAX_PARTS] = {0};
  double *rate = device ? ctx->gpu_rate_dev : ctx->gpu_rate;
  const int each = job->threads / k > 0 ? job->threads / k : 1; /* staging threads per device */
  int n_used = 0;
  if (device) { /* on the first device, whichever shares the devices take */
    const int s = dual_gpu_check_batch(ctx, job->b);
    if (s != DUAL_SUCCESS) return s;
  }
  for (int i = 0; i < k; ++i) {
    if ((ctxs[i] = part_context(ctx, i)) == NULL) return DUAL_ERR_NO_MEMORY;
    fn[i] = engine, threads[i] = each;
    used[i] = !device || reaches_first(ctx, i);
    if (used[i]) some_rate[n_used++] = rate[i];
  }
  /* the shares over the devices used (a device batch: those that reach the first's memory) */
  dual_split_shares(job->b->count, n_used, some_rate, DUAL_MULTI_GPU_QUANTUM, some);
  for (int i = 0, u = 0; i < k; ++i) counts[i] = used[i] ? some[u++] : 0;
  void *after = NULL; /* a device batch: the peers' kernels wait for the caller's work on the first device */
  if (device && n_used > 1) {
    const int s = dual_gpu_mark_caller(ctx, &after);
    if (s != DUAL_SUCCESS) return s;
  }
  const int64_t basis = stage_basis(job->b->count, n_used);
  uint64_t allocs[DUAL_SPLIT_MAX_PARTS];
  for (int i = 0; i < k; ++i) {
    allocs[i] = dual_gpu_allocations(ctxs[i]);
    if (i > 0 && device && used[i]) ctxs[i]->gpu_after = after, ctxs[i]->gpu_reach = ctx->gpu_list[0] + 1;
    if (!device && n_used > 1) ctxs[i]->stage_points = basis;
  }
  const int ret = dual_run_parts(ctx, job, k, counts, ctxs, fn, threads, st, secs);
  for (int i = 0; i < k; ++i) ctxs[i]->stage_points = 0;
  for (int i = 1; i < k; ++i) ctxs[i]->gpu_after = NULL, ctxs[i]->gpu_reach = 0;
  if (ret != DUAL_SUCCESS) return ret;
  int first = -1;
  int64_t gpu_points = 0;
  for (int i = 0; i < k; ++i) {
    if (counts[i] == 0) continue;
    if (first < 0) first = i;
    if (ctxs[i]->last_device == DUAL_DEVICE_GPU) gpu_points += counts[i]; /* (else AUTO's fallback) */
    learn_rate(&rate[i], counts[i], secs[i], dual_gpu_allocations(ctxs[i]) != allocs[i]);
  }
  if (first > 0) { /* the context's own device had no share: what ran is a peer's to say */
    ctx->last_tier = ctxs[first]->last_tier, ctx->last_ad_mode = ctxs[first]->last_ad_mode;
    if (ctxs[first]->note != NULL) dual_set_note(ctx, dual_strdup(ctxs[first]->note));
  }
  ctx->last_device = gpu_points == job->b->count ? DUAL_DEVICE_GPU : DUAL_DEVICE_HYBRID;
  ctx->last_split[0] = gpu_points, ctx->last_split[1] = job->b->count - gpu_points;
  return DUAL_SUCCESS;
}

/* One device's share of a solver call (dual_multi_gpu_solve). */
typedef struct solve_share {
  dual_context *ctx;
  int64_t first, count;
  dual_share_fn solve;
  void *arg;
} solve_share;

static int run_share(void *p) {
  solve_share *s = (solve_share *)p;
  return s->count > 0 ? s->solve(s->ctx, s->first, s->count, s->arg) : DUAL_SUCCESS;
}

int dual_multi_gpu_solve(dual_context *ctx, int64_t B, dual_share_fn solve, void *arg) {
  const int k = ctx->n_gpus;
  const int T = dual_solve_threads(ctx);
  dual_context *ctxs[DUAL_SPLIT_MAX_PARTS];
  int64_t counts[DUAL_SPLIT_MAX_PARTS];
  uint64_t allocs[DUAL_SPLIT_MAX_PARTS];
  int st[DUAL_SPLIT_MAX_PARTS];
  double secs[DUAL_SPLIT_MAX_PARTS];
  solve_share shares[DUAL_SPLIT_MAX_PARTS];
  void *args[DUAL_SPLIT_MAX_PARTS];
  dual_split_shares(B, k, ctx->gpu_rate_solve, DUAL_MULTI_GPU_QUANTUM, counts);
  int64_t first = 0;
  for (int i = 0; i < k; ++i) {
    if ((ctxs[i] = part_context(ctx, i)) == NULL) return DUAL_ERR_NO_MEMORY;
    if (i > 0) ctxs[i]->threads = T / k > 0 ? T / k : 1;
    allocs[i] = dual_gpu_allocations(ctxs[i]);
    shares[i] = (solve_share){ctxs[i], first, counts[i], solve, arg};
    args[i] = &shares[i];
    first += counts[i];
  }
  for (int i = 0; i < k; ++i) ctxs[i]->stage_points = stage_basis(B, k);
  const int saved_threads = ctx->threads;
  ctx->threads = T / k > 0 ? T / k : 1, ctx->solve_share = 1;
  const int ret = dual_run_tasks(ctx, k, run_share, args, st, secs);
  ctx->threads = saved_threads, ctx->solve_share = 0;
  for (int i = 0; i < k; ++i) ctxs[i]->stage_points = 0;
  if (ret != DUAL_SUCCESS) return ret;
  for (int i = 0; i < k; ++i) {
    if (st[i] == DUAL_SUCCESS) continue;
    if (i > 0) dual_fail(ctx, st[i], "%s", ctxs[i]->error != NULL ? ctxs[i]->error : "a device's share failed");
    return st[i];
  }
  int fell = 0;
  for (int i = 0; i < k; ++i) {
    if (counts[i] == 0) continue;
    if (i > 0 && ctxs[i]->last_device == DUAL_DEVICE_CPU && !fell) { /* a peer's share fell back */
      const char *note = dual_context_last_note(ctxs[i]);
      dual_solve_fell_back(ctx, dual_strdup(note[0] != '\0' ? note : "a device's share ran on the CPU"));
      fell = 1;
    }
    learn_rate(&ctx->gpu_rate_solve[i], counts[i], secs[i], dual_gpu_allocations(ctxs[i]) != allocs[i]);
  }
  if (!fell && !ctx->solve_fell) ctx->last_device = DUAL_DEVICE_GPU;
  return DUAL_SUCCESS;
}
