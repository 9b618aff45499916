/*
 * gpu.h — the GPU engine as the rest of the library sees it.  Implemented by src/kernels/ in
 * builds with CUDA and by gpu_none.c (stubs that report "built without CUDA") otherwise, so no
 * other file needs an #ifdef.
 */
#ifndef DUAL_GPU_H
#define DUAL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "exec.h"

struct dual_gpu; /* a context's GPU state: streams, memory pool, pinned staging, plan cache */

/* Number of usable CUDA devices (0 when none, the driver is missing or too old, or the build has
 * no CUDA; then `why` receives the reason).  Initializes the CUDA runtime. */
int dual_gpu_count(char *why, size_t cap);

/* The calling thread's current CUDA device (0 without CUDA or when CUDA fails). */
int dual_gpu_current_device(void);

/* Run a checked job on the context's GPU (creating its GPU state on first use).  Host-memory
 * batches are staged through pinned buffers in chunks over two streams; device-memory batches are
 * used in place.  Returns when the results are in the caller's arrays. */
int dual_gpu_run(dual_context *ctx, const dual_job *job);

/* The same for a second-order job (Hessian, HVP: kernels/gpu_run2.c). */
int dual_gpu_run2(dual_context *ctx, const dual_job *job);

/* The same for a reverse-mode job (VJP; gradient or Jacobian in reverse mode:
 * kernels/gpu_run_rev.c). */
int dual_gpu_run_rev(dual_context *ctx, const dual_job *job);

/* The same for dual_sgrad (kernels/gpu_sgrad.c): the sample loop runs in the first-order or the
 * reverse kernel; host-memory batches are staged in chunks. */
int dual_gpu_run_sgrad(dual_context *ctx, const dual_job *job);

/* dual_newton on the GPU (kernels/gpu_newton.c): B points solved with the iterates on the device,
 * options `o` (solve/newton_point.h), results as newton.c's CPU path and the same bits.  The
 * arrays x, p, info, iters, fnorm (the last three may be NULL) are all host memory, or all device
 * memory (device_mem).  host_state (host memory, may be NULL) also receives the statuses.  *done
 * counts the leading points whose results are final (all B on success; on an error the caller may
 * solve the rest elsewhere). */
struct dual_newton_opts;
int dual_gpu_newton(dual_context *ctx, const dual_program *prog, const struct dual_newton_opts *o,
                    int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info,
                    int32_t *iters, double *fnorm, int device_mem, int32_t *host_state,
                    int64_t *done);

/* dual_lsq on the GPU (kernels/gpu_lsq.c): B points solved with the iterates and the solver's
 * state on the device, options `o` (solve/lm_point.h), results as lm.c's CPU path and the same
 * bits.  Arrays as dual_gpu_newton's; *done likewise. */
struct dual_lm_opts;
int dual_gpu_lsq(dual_context *ctx, const dual_program *prog, const struct dual_lm_opts *o, int64_t B,
                 double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
                 double *fnorm, int device_mem, int64_t *done);

/* 1 when p is device or managed memory of a CUDA device (0 for host memory, NULL, or a build
 * without CUDA). */
int dual_gpu_is_device_pointer(const void *p);

/* Copy `rows` rows of `bytes` each (row r at src + r * src_pitch, to dst + r * dst_pitch, pitches
 * in bytes) between any host and device memory, synchronously; a DUAL_ERR_* status naming `what`
 * on failure. */
int dual_gpu_copy(dual_context *ctx, void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                  size_t bytes, int64_t rows, const char *what);

/* At least `bytes` of the context's device buffer `which` (0: dual_newton's work arrays, 1: its
 * kept starting points), kept and grown between calls and freed with the context (*p NULL on
 * failure, with a DUAL_ERR_* status naming `what`). */
int dual_gpu_solve_buffer(dual_context *ctx, int which, size_t bytes, void **p, const char *what);

/* 1 when the GPU would run `job` with its compiled kernel (in memory or in the disk cache; under
 * DUAL_TIER_AUTO a missing one is queued for the background compile, as a GPU run would), 0 when
 * it would interpret it (or has no GPU state). */
int dual_gpu_would_compile(dual_context *ctx, const dual_job *job);

/* 1 while a compiled kernel is being compiled in the background (in this process): the compile
 * takes CPU time from the calls meanwhile, so AUTO's dispatch does not learn from their times. */
int dual_gpu_compiling(void);

/* Peer access from device `from` to device `to`'s memory (ordinals), enabled where the devices
 * allow it: 1 when kernels on `from` may then use memory of `to`, 0 when they may not.  The
 * caller's current device is kept. */
int dual_gpu_enable_peer(int from, int to);

/* dual_host_pin / dual_host_unpin on a GPU context, arguments checked: cudaHostRegister (portable
 * to every device) and cudaHostUnregister, the CUDA errors as DUAL_ERR_* statuses with the reason.
 * A build without CUDA does nothing and succeeds. */
int dual_gpu_host_pin(dual_context *ctx, void *ptr, size_t bytes);
int dual_gpu_host_unpin(dual_context *ctx, void *ptr);

/* A device-memory batch for a context over several GPUs, checked before it is cut among them:
 * every array on the context's first device (dual_gpu_check_memory's rules), whatever share
 * each device would take; a DUAL_ERR_* status naming the array otherwise. */
int dual_gpu_check_batch(dual_context *ctx, const dual_batch *b);

/* On ctx's device, an event recorded after the work queued so far on the caller's stream
 * (dual_context_set_stream) or else on the legacy default stream: *event, for the kernels of
 * other devices to wait for (a peer's gpu_after, in a split of a device-memory batch). */
int dual_gpu_mark_caller(dual_context *ctx, void **event);

/* How many device or pinned buffers the context's GPU state has allocated (grown) so far: a run
 * that moved it paid for allocations a steady caller does not (AUTO's dispatch does not learn
 * from it).  0 without GPU state. */
uint64_t dual_gpu_allocations(const dual_context *ctx);

/* The GPU's figures of AUTO's dispatch model (dispatch/calibration.h), measured on the context's
 * GPU (kernels/gpu_calibrate.c): a host-array call's fixed cost, the staged copies' bytes per
 * second each way, the kernels' time per instruction per point at full occupancy and for one
 * point alone (the interpreter's; the compiled tier's where `compiled` is 1, which compiles the
 * calibration's two kernels once, then finds them in the disk cache; with 0 the compiled figures
 * are the interpreter's, an upper bound), and a split call's extra cost.  Sets c->gpu. */
struct dual_calibration;
int dual_gpu_calibrate(dual_context *ctx, int compiled, struct dual_calibration *c);

/* Free a context's GPU state (NULL is fine). */
void dual_gpu_release(struct dual_gpu *gpu);

/* Append a description of the CUDA runtime and devices to buf (snprintf-like, returns the length
 * it needed). */
int64_t dual_gpu_describe(char *buf, int64_t cap);

#endif /* DUAL_GPU_H */
