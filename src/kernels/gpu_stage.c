/*
 * gpu_stage.c — the GPU engines' host staging path (gpu_stage.h): chunks of a host-memory batch
 * gathered into pinned staging, copied in, launched, copied out (each result array's written
 * part) and scattered, alternating the context's two streams.  An array already in page-locked
 * memory, laid out as the packed chunk, is copied straight to and from the device instead.
 */
#include "kernels/gpu_stage.h"

#include <string.h>

#include "stage_copy.h"

enum { ALIGN = 256 };

static size_t align_up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static size_t entry_size(const dual_stage_array *a) { return a->status ? 4 : 8; }

typedef struct layout {
  size_t at[DUAL_STAGE_MAX_ARRAYS];
  size_t in_end, end;
} layout;

/* Byte offsets of each array in a chunk of c points: the staged inputs first (one copy in), then
 * the direct ones, then the results (copied out one by one: copy_out).  `pinned`: the layout of
 * the pinned buffer, which holds only the staged arrays (a direct array's offset there is unused);
 * its staged inputs lie where the device layout's do, so one copy moves them all. */
static layout layout_for(const dual_stage_array *arr, int narr, const int *direct, int pinned, int64_t c) {
  layout l;
  size_t off = 0;
  for (int pass = 0; pass < 3; ++pass) {
    if (pass == 1) l.in_end = off;
    for (int i = 0; i < narr; ++i) {
      const int in_pass = arr[i].out ? pass == 2 : pass == (direct[i] ? 1 : 0);
      if (!in_pass) continue;
      l.at[i] = off;
      if (arr[i].host != NULL && !(pinned && direct[i]))
        off += align_up((size_t)c * (size_t)arr[i].len * entry_size(&arr[i]));
    }
  }
  l.end = off;
  return l;
}

static void gather(const dual_stage_array *arr, int narr, const int *direct, const layout *l, int64_t p0,
                   int64_t c, char *pin, int threads) {
  for (int i = 0; i < narr; ++i)
    if (!arr[i].out && arr[i].host != NULL && !direct[i])
      dual_stage_gather((const double *)arr[i].host, arr[i].ps, arr[i].cs, p0, c, arr[i].len,
                        (double *)(pin + l->at[i]), threads);
}

static void scatter_one(const dual_stage_array *a, const char *src, int64_t p0, int64_t c,
                        int threads) {
  if (a->status) {
    const int32_t *s = (const int32_t *)src;
    int32_t *h = (int32_t *)a->host;
    for (int64_t i = 0; i < c; ++i) {
      const int64_t pt = (p0 + i) * a->ps;
      h[pt] = a->or_into ? (h[pt] | s[i]) : s[i];
    }
    return;
  }
  dual_stage_scatter((const double *)src, a->len, a->cols, a->pick, a->npick, (double *)a->host, a->ps, a->rs, a->cs,
                     p0, c, threads);
}

/* How much of a result array's columns the launch writes: every column (no pick), none (an empty
 * pick: nothing to copy), one run of them, or scattered ones (a second-order pass's Hessian
 * components). */
enum { COLS_ALL, COLS_NONE, COLS_RUN, COLS_SCATTERED };

static int written_cols(const dual_stage_array *a) {
  const int64_t cols = a->cols > 0 ? a->cols : 1;
  if (a->pick == NULL || a->npick >= cols) return COLS_ALL;
  if (a->npick == 0) return COLS_NONE;
  for (int32_t j = 1; j < a->npick; ++j)
    if (a->pick[j] != a->pick[0] + j) return COLS_SCATTERED;
  return COLS_RUN;
}

/* Before a launch: an array whose columns the launch writes scattered is cleared on the device,
 * as copy_out then copies it whole (one copy, not one per column; the clear runs at device
 * bandwidth) and so reads no byte nothing wrote (compute-sanitizer's initcheck). */
static cudaError_t clear_scattered(const dual_stage_array *a, char *dev, int64_t c, cudaStream_t stream) {
  if (written_cols(a) != COLS_SCATTERED) return cudaSuccess;
  return cudaMemsetAsync(dev, 0, (size_t)c * (size_t)a->len * entry_size(a), stream);
}

/* One result array of a chunk of c points back into its pinned place: only what the launch
 * wrote — c points, not the chunk's capacity nor the alignment gap after it, and of a run of
 * columns only that run (a row of the pitched copy per point and row) — so no byte nothing
 * wrote is copied (initcheck) and a group of passes moves only its columns. */
static cudaError_t copy_out(const dual_stage_array *a, char *pin, const char *dev, int64_t c, cudaStream_t stream) {
  const size_t es = entry_size(a);
  const int64_t cols = a->cols > 0 ? a->cols : 1, rows = a->len / cols;
  switch (written_cols(a)) {
  case COLS_NONE: return cudaSuccess;
  case COLS_RUN: {
    const size_t skip = (size_t)a->pick[0] * es, pitch = (size_t)cols * es;
    return cudaMemcpy2DAsync(pin + skip, pitch, dev + skip, pitch, (size_t)a->npick * es, (size_t)(c * rows),
                             cudaMemcpyDeviceToHost, stream);
  }
  default: return cudaMemcpyAsync(pin, dev, (size_t)c * (size_t)a->len * es, cudaMemcpyDeviceToHost, stream);
  }
}

/* Whether array a of a B-point batch moves straight between the caller's memory and the device:
 * page-locked from its first entry to its last, and a chunk of it one run of the packed layout
 * (point-major, no gaps; of a result, what copy_out writes, with the other columns untouched):
 * then each chunk is one copy (or one pitched copy) and no host thread touches it.  A status array
 * (ORed into, a few bytes a point) always goes through staging. */
static int moves_direct(const dual_stage_array *a, int64_t B) {
  if (a->host == NULL || a->status || a->len <= 0 || a->cs != 1 || a->ps != a->len || B <= 0) return 0;
  const int64_t cols = a->cols > 0 ? a->cols : 1; /* (a single row's stride rs is unused) */
  if (a->out && ((a->len > cols && a->rs != cols) || written_cols(a) == COLS_SCATTERED)) return 0;
  const double *h = (const double *)a->host;
  return dual_gpu_page_locked(h) && dual_gpu_page_locked(h + B * a->len - 1);
}

int dual_gpu_stage(dual_context *ctx, struct dual_gpu *g, int64_t B, int threads,
                   const dual_stage_array *arr, int narr, size_t scratch, size_t room,
                   dual_stage_launch launch, void *user) {
  if (narr > DUAL_STAGE_MAX_ARRAYS) return dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU staging: too many arrays");
  const int S = DUAL_GPU_STREAMS;
  int direct[DUAL_STAGE_MAX_ARRAYS];
  size_t per_point = 0;
  for (int i = 0; i < narr; ++i) {
    direct[i] = moves_direct(&arr[i], B);
    if (arr[i].host != NULL) per_point += (size_t)arr[i].len * entry_size(&arr[i]);
  }
  if (per_point == 0) per_point = 1;
  const size_t fixed = (size_t)S * (align_up(scratch) + (size_t)(narr + 1) * ALIGN);
  if (room <= fixed + (size_t)S * per_point)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "GPU: the memory limit of %zu bytes holds no chunk of points", room);
  int64_t chunk = (int64_t)((room - fixed) / ((size_t)S * per_point));
  /* several chunks, so copies overlap compute; a share of a split over several GPUs counts from
   * the split's basis (ctx->stage_points), not its own size, which moves call by call with the
   * devices' measured rates: a chunk grown past the buffers would pin them again (seconds) */
  const int64_t basis = ctx->stage_points > B ? ctx->stage_points : B;
  int64_t target = (basis + 3) / 4;
  if (target < ((int64_t)1 << 14)) target = (int64_t)1 << 14;
  if (target > ((int64_t)1 << 20)) target = (int64_t)1 << 20;
  if (chunk > target) chunk = target;
  if (chunk > B) chunk = B;
  const layout l = layout_for(arr, narr, direct, 0, chunk), lp = layout_for(arr, narr, direct, 1, chunk);
  const size_t scr = align_up(scratch);
  int st = DUAL_SUCCESS;
  if (scr > 0) st = dual_gpu_reserve(ctx, &g->pool, (size_t)S * scr, "allocating the register files");
  if (st == DUAL_SUCCESS)
    st = dual_gpu_reserve(ctx, &g->stage, (size_t)S * (l.end > 0 ? l.end : 1),
                          "allocating the staging buffers");
  if (st == DUAL_SUCCESS && lp.end > 0) st = dual_gpu_reserve_pinned(ctx, g, lp.end);
  if (st != DUAL_SUCCESS) return st;
  const int64_t nchunks = (B + chunk - 1) / chunk;
  for (int64_t i = 0; i < nchunks + S && st == DUAL_SUCCESS; ++i) {
    const int s = (int)(i % S);
    cudaStream_t stream = g->streams[s];
    char *pin = (char *)g->pinned[s];
    char *dev = (char *)g->stage.ptr + (size_t)s * l.end;
    const int64_t done = i - S; /* the chunk this stream finished before */
    if (done >= 0) {
      cudaError_t e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess) {
        st = dual_gpu_fail(ctx, e, "running a chunk");
        break;
      }
      const int64_t d0 = done * chunk, dc = B - d0 < chunk ? B - d0 : chunk;
      for (int a = 0; a < narr; ++a)
        if (arr[a].out && arr[a].host != NULL && !direct[a]) scatter_one(&arr[a], pin + lp.at[a], d0, dc, threads);
    }
    if (i >= nchunks) continue;
    const int64_t p0 = i * chunk, c = B - p0 < chunk ? B - p0 : chunk;
    gather(arr, narr, direct, &lp, p0, c, pin, threads);
    cudaError_t e = lp.in_end > 0 ? cudaMemcpyAsync(dev, pin, lp.in_end, cudaMemcpyHostToDevice, stream)
                                  : cudaSuccess;
    for (int a = 0; a < narr && e == cudaSuccess; ++a)
      if (!arr[a].out && direct[a]) {
        const size_t run = (size_t)arr[a].len * entry_size(&arr[a]);
        e = cudaMemcpyAsync(dev + l.at[a], (const char *)arr[a].host + (size_t)p0 * run, (size_t)c * run,
                            cudaMemcpyHostToDevice, stream);
      }
    if (e != cudaSuccess) {
      st = dual_gpu_fail(ctx, e, "copying a chunk to the device");
      break;
    }
    void *ptrs[DUAL_STAGE_MAX_ARRAYS];
    for (int a = 0; a < narr; ++a) ptrs[a] = arr[a].host != NULL ? dev + l.at[a] : NULL;
    for (int a = 0; a < narr && e == cudaSuccess; ++a)
      if (arr[a].out && arr[a].host != NULL) e = clear_scattered(&arr[a], dev + l.at[a], c, stream);
    if (e != cudaSuccess) {
      st = dual_gpu_fail(ctx, e, "clearing a chunk's results");
      break;
    }
    st = launch(ctx, user, p0, c, ptrs, scr > 0 ? (char *)g->pool.ptr + (size_t)s * scr : NULL, stream);
    if (st != DUAL_SUCCESS) break;
    for (int a = 0; a < narr && e == cudaSuccess; ++a) {
      if (!arr[a].out || arr[a].host == NULL) continue;
      char *to = direct[a] ? (char *)arr[a].host + (size_t)p0 * (size_t)arr[a].len * entry_size(&arr[a])
                           : pin + lp.at[a];
      e = copy_out(&arr[a], to, dev + l.at[a], c, stream);
    }
    if (e != cudaSuccess) st = dual_gpu_fail(ctx, e, "copying a chunk from the device");
  }
  for (int s = 0; s < S; ++s) cudaStreamSynchronize(g->streams[s]);
  cudaGetLastError();
  return st;
}
