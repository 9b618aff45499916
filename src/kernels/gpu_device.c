/*
 * gpu_device.c — device discovery and a context's GPU resources: the device count and
 * description (dualbatch info), the per-context state (streams, pool limit), the device memory
 * pool and pinned staging buffers (grown on demand, freed with the context), and the mapping of
 * CUDA errors to dual_status with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cublas_batched.h"
#include "kernels/gpu_state.h"

int dual_gpu_fail(dual_context *ctx, cudaError_t e, const char *what) {
  int status = DUAL_ERR_DEVICE;
  if (e == cudaErrorMemoryAllocation) status = DUAL_ERR_NO_MEMORY;
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice)
    status = DUAL_ERR_NO_DEVICE;
  cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
  return dual_fail(ctx, status, "GPU: %s failed: %s (%s)", what, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

cudaError_t dual_gpu_injected_fault(const char *where) {
  const char *f = getenv("DUALBATCH_GPU_FAULT");
  if (f == NULL || strcmp(f, where) != 0) return cudaSuccess;
  if (strcmp(where, "jit-load") == 0) return cudaErrorInvalidKernelImage;
  return strcmp(where, "alloc") == 0 ? cudaErrorMemoryAllocation : cudaErrorLaunchFailure;
}

int dual_gpu_count(char *why, size_t cap) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0) {
    if (why != NULL && cap > 0) {
      if (e == cudaErrorInsufficientDriver)
        snprintf(why, cap, "the CUDA driver is missing or older than the runtime (CUDA %d.%d) "
                 "this library was built with", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
      else if (e != cudaSuccess && e != cudaErrorNoDevice)
        snprintf(why, cap, "CUDA reports %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
      else
        snprintf(why, cap, "no CUDA device was found");
    }
    cudaGetLastError();
    return 0;
  }
  return count;
}

int dual_gpu_current_device(void) {
  int d = 0;
  if (cudaGetDevice(&d) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return d;
}

int dual_gpu_enter(dual_context *ctx, int *prev) {
  *prev = -1;
  int cur = 0;
  cudaError_t e = cudaGetDevice(&cur);
  if (e == cudaSuccess && cur != ctx->gpu_ordinal) {
    e = cudaSetDevice(ctx->gpu_ordinal);
    if (e == cudaSuccess) *prev = cur;
  }
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "making the context's GPU current");
  return DUAL_SUCCESS;
}

void dual_gpu_leave(int prev) {
  if (prev >= 0 && cudaSetDevice(prev) != cudaSuccess) cudaGetLastError();
}

int64_t dual_gpu_describe(char *buf, int64_t cap) {
  char text[2048];
  int n = 0, driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  char why[256] = "";
  int count = dual_gpu_count(why, sizeof why);
  n += snprintf(text + n, sizeof text - (size_t)n, "CUDA: on (runtime %d.%d, driver %d.%d)\n",
                runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10);
  n += snprintf(text + n, sizeof text - (size_t)n, "devices: cpu");
  for (int d = 0; d < count && n < (int)sizeof text - 200; ++d) {
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    n += snprintf(text + n, sizeof text - (size_t)n,
                  ", gpu%d: %s (sm_%d%d, %d multiprocessors, %.1f GiB)", d, prop.name, prop.major,
                  prop.minor, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1u << 30));
  }
  if (count == 0) n += snprintf(text + n, sizeof text - (size_t)n, " (no GPU: %s)", why);
  n += snprintf(text + n, sizeof text - (size_t)n, "\n");
  if (buf != NULL && cap > 0) snprintf(buf, (size_t)cap, "%s", text);
  return n;
}

/* The pool holds at most the context's memory limit: buffers kept from calls made before the
 * limit was lowered (a plan of every pass, a larger register file) are released, so a call sizes
 * its plan and register files within the limit and not within what is left beside them. */
static void fit_limit(const dual_context *ctx, struct dual_gpu *g) {
  if (ctx->memory_limit <= 0) return;
  const size_t held = g->plan.size + g->pool.size + g->stage.size;
  if (held <= (size_t)ctx->memory_limit) return;
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) cudaStreamSynchronize(g->streams[s]);
  dual_gpu_buffer *kept[3] = {&g->plan, &g->pool, &g->stage};
  for (int i = 0; i < 3; ++i) {
    if (kept[i]->ptr != NULL) cudaFree(kept[i]->ptr);
    kept[i]->ptr = NULL, kept[i]->size = 0;
  }
  g->key_valid = 0; /* the cached plan went with its buffer */
}

int dual_gpu_state(dual_context *ctx, struct dual_gpu **out) {
  if (ctx->gpu != NULL) {
    fit_limit(ctx, ctx->gpu);
    *out = ctx->gpu;
    return DUAL_SUCCESS;
  }
  struct dual_gpu *g = (struct dual_gpu *)calloc(1, sizeof *g);
  if (g == NULL) return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory creating the GPU state");
  cudaError_t e = cudaGetDevice(&g->ordinal); /* the context's: dual_gpu_enter made it current */
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&g->sm_count, cudaDevAttrMultiProcessorCount, g->ordinal);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&g->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, g->ordinal);
  int cc_major = 0, cc_minor = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, g->ordinal);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, g->ordinal);
  g->cc = cc_major * 10 + cc_minor;
  size_t free_b = 0, total_b = 0;
  if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
  for (int s = 0; s < DUAL_GPU_STREAMS && e == cudaSuccess; ++s)
    e = cudaStreamCreateWithFlags(&g->streams[s], cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    dual_gpu_release(g);
    return dual_gpu_fail(ctx, e, "initializing the device");
  }
  g->limit = (size_t)(0.9 * (double)free_b);
  ctx->gpu = g;
  *out = g;
  return DUAL_SUCCESS;
}

/* The size a buffer of `have` bytes (0: none yet) is reallocated at to hold `need`: a quarter
 * over its old size where that is more, so a batch that grows a little at a time (AUTO's split
 * moving its balance point, a caller's batches growing call by call) reallocates a logarithmic
 * number of times, not at each call: pinning gigabytes of staging costs seconds
 * (kin's Jacobian at 750 000 points: 2.3 s a call on the H200 while its split's balance moved). */
static size_t grown_size(size_t have, size_t need) {
  const size_t more = have + have / 4;
  return have > 0 && more > need ? more : need;
}

/* A buffer of the context's GPU state was allocated. */
static void g_count(dual_context *ctx) {
  if (ctx->gpu != NULL) ctx->gpu->allocations++;
}

int dual_gpu_reserve(dual_context *ctx, dual_gpu_buffer *buf, size_t bytes, const char *what) {
  cudaError_t e = dual_gpu_injected_fault("alloc");
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, what);
  if (buf->size >= bytes) return DUAL_SUCCESS;
  /* Under a memory limit the size asked, no margin: the callers size their buffers within it. */
  const size_t grown = ctx->memory_limit > 0 ? bytes : grown_size(buf->size, bytes);
  if (buf->ptr != NULL) cudaFree(buf->ptr);
  buf->ptr = NULL, buf->size = 0;
  size_t size = grown;
  e = cudaMalloc(&buf->ptr, size);
  if (e != cudaSuccess && grown > bytes) { /* the margin did not fit: the size asked */
    cudaGetLastError();
    size = bytes, e = cudaMalloc(&buf->ptr, size);
  }
  if (e != cudaSuccess) {
    buf->ptr = NULL;
    return dual_gpu_fail(ctx, e, what);
  }
  buf->size = size;
  g_count(ctx);
  return DUAL_SUCCESS;
}

int dual_gpu_reserve_pinned(dual_context *ctx, struct dual_gpu *g, size_t bytes) {
  if (g->pinned_size >= bytes) return DUAL_SUCCESS;
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) {
    if (g->pinned[s] != NULL) cudaFreeHost(g->pinned[s]);
    g->pinned[s] = NULL;
  }
  const size_t want = bytes;
  bytes = grown_size(g->pinned_size, want);
  g->pinned_size = 0;
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) {
    cudaError_t e = cudaHostAlloc(&g->pinned[s], bytes, cudaHostAllocDefault);
    if (e != cudaSuccess && bytes > want) { /* the margin did not fit: all streams at the size asked */
      cudaGetLastError();
      g->pinned[s] = NULL;
      for (int r = 0; r < s; ++r) cudaFreeHost(g->pinned[r]), g->pinned[r] = NULL;
      bytes = want, s = -1;
      continue;
    }
    if (e != cudaSuccess) {
      g->pinned[s] = NULL;
      return dual_gpu_fail(ctx, e, "allocating pinned staging buffers");
    }
  }
  g->pinned_size = bytes;
  g->allocations++;
  return DUAL_SUCCESS;
}

uint64_t dual_gpu_allocations(const dual_context *ctx) {
  return ctx != NULL && ctx->gpu != NULL ? ctx->gpu->allocations : 0;
}

int dual_gpu_device_stream(dual_context *ctx, struct dual_gpu *g, void *job_stream, cudaStream_t *out) {
  if (job_stream != NULL || ctx->stream != NULL) {
    *out = (cudaStream_t)(job_stream != NULL ? job_stream : ctx->stream);
    return DUAL_SUCCESS;
  }
  *out = g->streams[0];
  if (ctx->gpu_no_wait) return DUAL_SUCCESS;
  cudaError_t e = cudaSuccess;
  if (g->caller_done == NULL) e = cudaEventCreateWithFlags(&g->caller_done, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventRecord(g->caller_done, cudaStreamLegacy);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(g->streams[0], g->caller_done, 0);
  if (e == cudaSuccess && ctx->gpu_after != NULL) /* another device's event: allowed */
    e = cudaStreamWaitEvent(g->streams[0], (cudaEvent_t)ctx->gpu_after, 0);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "ordering the call after the caller's copies");
}

int dual_gpu_enable_peer(int from, int to) {
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess || !can) {
    cudaGetLastError();
    return 0;
  }
  const int prev = dual_gpu_current_device();
  cudaError_t e = cudaSetDevice(from);
  if (e == cudaSuccess) e = cudaDeviceEnablePeerAccess(to, 0);
  const int ok = e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled;
  cudaGetLastError(); /* (already enabled is not an error to keep) */
  if (prev != from && cudaSetDevice(prev) != cudaSuccess) cudaGetLastError();
  return ok;
}

/* A cudaHostRegister or cudaHostUnregister error as a status: a range already (or not) pinned and
 * a bad range are the caller's, a refusal for want of memory is NO_MEMORY, the rest the device's. */
static int pin_error(dual_context *ctx, cudaError_t e, const char *what) {
  cudaGetLastError();
  switch (e) {
  case cudaErrorHostMemoryAlreadyRegistered:
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: the range overlaps host memory already page-locked", what);
  case cudaErrorHostMemoryNotRegistered:
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: the pointer does not start a range dual_host_pin locked", what);
  case cudaErrorInvalidValue:
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: %s", what, cudaGetErrorString(e));
  case cudaErrorMemoryAllocation:
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: %s", what, cudaGetErrorString(e));
  default: return dual_gpu_fail(ctx, e, what);
  }
}

int dual_gpu_page_locked(const void *p) {
  struct cudaPointerAttributes at;
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return at.type == cudaMemoryTypeHost;
}

/* The caller's mistakes a page-locked end of the range tells apart are answered before any CUDA
 * call, so that no failing call is made (compute-sanitizer reports each); a range that only
 * contains a locked one, or a pointer inside a locked range, is left to CUDA's answer. */
static int pin_on_current(dual_context *ctx, void *ptr, size_t bytes) {
  if (dual_gpu_page_locked(ptr) || dual_gpu_page_locked((const char *)ptr + bytes - 1))
    return pin_error(ctx, cudaErrorHostMemoryAlreadyRegistered, "dual_host_pin");
  const cudaError_t e = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
  return e == cudaSuccess ? DUAL_SUCCESS : pin_error(ctx, e, "dual_host_pin");
}

static int unpin_on_current(dual_context *ctx, void *ptr) {
  if (!dual_gpu_page_locked(ptr)) return pin_error(ctx, cudaErrorHostMemoryNotRegistered, "dual_host_unpin");
  const cudaError_t e = cudaHostUnregister(ptr);
  return e == cudaSuccess ? DUAL_SUCCESS : pin_error(ctx, e, "dual_host_unpin");
}

int dual_gpu_host_pin(dual_context *ctx, void *ptr, size_t bytes) {
  DUAL_ON_CONTEXT_GPU(ctx, pin_on_current(ctx, ptr, bytes));
}

int dual_gpu_host_unpin(dual_context *ctx, void *ptr) {
  DUAL_ON_CONTEXT_GPU(ctx, unpin_on_current(ctx, ptr));
}

static int check_on_current(dual_context *ctx, const dual_batch *b) {
  struct dual_gpu *g = NULL;
  const int st = dual_gpu_state(ctx, &g);
  return st == DUAL_SUCCESS ? dual_gpu_check_memory(ctx, g, b) : st;
}

int dual_gpu_check_batch(dual_context *ctx, const dual_batch *b) {
  DUAL_ON_CONTEXT_GPU(ctx, check_on_current(ctx, b));
}

static int mark_on_current(dual_context *ctx, void **event) {
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st != DUAL_SUCCESS) return st;
  cudaError_t e = cudaSuccess;
  if (g->caller_mark == NULL) e = cudaEventCreateWithFlags(&g->caller_mark, cudaEventDisableTiming);
  if (e == cudaSuccess)
    e = cudaEventRecord(g->caller_mark, ctx->stream != NULL ? (cudaStream_t)ctx->stream : cudaStreamLegacy);
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "marking the caller's work for the other devices");
  *event = (void *)g->caller_mark;
  return DUAL_SUCCESS;
}

int dual_gpu_mark_caller(dual_context *ctx, void **event) {
  *event = NULL;
  DUAL_ON_CONTEXT_GPU(ctx, mark_on_current(ctx, event));
}

void dual_gpu_release(struct dual_gpu *g) {
  if (g == NULL) return;
  int prev = dual_gpu_current_device(); /* on the state's own device, then the caller's again */
  if (prev != g->ordinal && cudaSetDevice(g->ordinal) != cudaSuccess) cudaGetLastError();
  dual_cublas_release(g);
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) {
    if (g->streams[s] != NULL) {
      cudaStreamSynchronize(g->streams[s]);
      cudaStreamDestroy(g->streams[s]);
    }
    if (g->pinned[s] != NULL) cudaFreeHost(g->pinned[s]);
  }
  if (g->pool.ptr != NULL) cudaFree(g->pool.ptr);
  if (g->stage.ptr != NULL) cudaFree(g->stage.ptr);
  for (int i = 0; i < 2; ++i)
    if (g->solve[i].ptr != NULL) cudaFree(g->solve[i].ptr);
  if (g->plan.ptr != NULL) cudaFree(g->plan.ptr);
  if (g->caller_done != NULL) cudaEventDestroy(g->caller_done);
  if (g->caller_mark != NULL) cudaEventDestroy(g->caller_mark);
  free(g->key_code);
  free(g->key_consts);
  if (prev != g->ordinal && cudaSetDevice(prev) != cudaSuccess) cudaGetLastError();
  free(g);
  cudaGetLastError();
}
