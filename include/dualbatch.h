/*
 * dualbatch.h — the public C API of dualbatch, and its manual.
 *
 * dualbatch compiles a function f: R^n x R^p -> R^m once into validated bytecode (a "program") and
 * evaluates it over large batches of points, returning values and forward-mode derivatives
 * (JVPs, gradients, Jacobians, Hessians and Hessian-vector products) computed with multi-dual
 * numbers, reverse-mode gradients and VJPs, and Monte-Carlo gradients of expectations (dual_sgrad).
 * This is the only header a user
 * includes.  Every function returns a dual_status (0 = success); the detailed message of the last
 * failure is kept in the context (dual_context_last_error).  The library never calls abort() or
 * exit(), keeps no global mutable state, and a program may be used by many threads at once.
 *
 * Conventions used throughout:
 *   - sizes and strides are int64_t; counts of inputs/outputs are int32_t (no unsigned types);
 *   - arrays are host (CPU) memory unless a dual_batch says DUAL_MEMORY_DEVICE; a context runs
 *     on the CPU or on a CUDA GPU (see dual_context_create), with bitwise identical results
 *     (README "GPU");
 *   - on any error, the contents of output arrays are unspecified;
 *   - destroyers take the address of the handle, accept NULL, and set the handle to NULL.
 */
#ifndef DUALBATCH_H
#define DUALBATCH_H

#if !defined(__CUDACC_RTC__) /* the compiled GPU tier's NVRTC gets the types from portable.h */
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Every function declared here is the library's exported API: the library is built with hidden
 * visibility and this header gives its declarations the default one (a shared libdualbatch
 * exports nothing else). */
#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC visibility push(default)
#endif

/* The version of this header.  dual_version() gives the library's at run time, as
 * DUAL_VERSION_MAJOR * 10000 + DUAL_VERSION_MINOR * 100 + DUAL_VERSION_PATCH, and
 * dual_version_string() as "major.minor.patch": a program can check that the library it loaded
 * is the one it was compiled against (the same major version: the ABI of libdualbatch.so.<major>). */
#define DUAL_VERSION_MAJOR 0
#define DUAL_VERSION_MINOR 1
#define DUAL_VERSION_PATCH 0
int dual_version(void);
const char *dual_version_string(void);

/* ------------------------------------------------------------------------------------------------
 * Status codes.  One list, expanded into the enum and into dual_status_string().
 * X(name, value, message)
 * ---------------------------------------------------------------------------------------------- */
#define DUAL_STATUS_LIST(X)                                                                       \
  X(DUAL_SUCCESS, 0, "success")                                                                   \
  X(DUAL_ERR_ARGUMENT, 1, "invalid argument")                                                     \
  X(DUAL_ERR_NO_MEMORY, 2, "out of memory")                                                       \
  X(DUAL_ERR_SYNTAX, 3, "syntax or semantic error in program source")                             \
  X(DUAL_ERR_INVALID_PROGRAM, 4, "program failed validation")                                     \
  X(DUAL_ERR_FORMAT, 5, "malformed or unsupported program file")                                  \
  X(DUAL_ERR_IO, 6, "file input/output error")                                                    \
  X(DUAL_ERR_DIMENSION, 7, "array dimensions do not match the program")                           \
  X(DUAL_ERR_LIMIT, 8, "a size limit of the bytecode or engine was exceeded")                     \
  X(DUAL_ERR_NO_DEVICE, 9, "the requested device is not available")                               \
  X(DUAL_ERR_UNSUPPORTED, 10, "operation not supported by this build or program")                 \
  X(DUAL_ERR_INTERNAL, 11, "internal error (please report)")                                     \
  X(DUAL_ERR_DEVICE, 12, "the GPU reported an error (launch, copy or kernel failure)")            \
  X(DUAL_ERR_COMPILE, 13, "the compiled tier could not build or load the program's code")

typedef enum dual_status {
#define DUAL_X_ENUM(name, value, msg) name = value,
  DUAL_STATUS_LIST(DUAL_X_ENUM)
#undef DUAL_X_ENUM
} dual_status;

/* A static English message for a status code ("unknown status" for values outside the list). */
const char *dual_status_string(int status);

/* ------------------------------------------------------------------------------------------------
 * Per-point status flags.  Evaluation never fails because of one bad point: each point gets a
 * flag word (int32_t) that is 0 when everything is finite and regular.  Flags are OR-ed.
 * DUAL_PT_SINGULAR concerns derivatives, so dual_eval never sets it (log(0) there is just the
 * value -inf, flagged DUAL_PT_INF when it reaches an output).
 * ---------------------------------------------------------------------------------------------- */
#define DUAL_POINT_FLAG_LIST(X)                                                                    \
  X(DUAL_PT_NAN, 1, "an output value or derivative is NaN")                                       \
  X(DUAL_PT_INF, 2, "an output value or derivative is infinite")                                  \
  X(DUAL_PT_DOMAIN, 4, "an operation was evaluated outside its domain (e.g. log(-1), asin(2))")   \
  X(DUAL_PT_SINGULAR, 8, "an operation hit a singular point (pole, or no derivative: sqrt(0))")   \
  X(DUAL_PT_BAD_INPUT, 16, "an input, parameter or direction value is NaN or infinite")

enum dual_point_flag {
#define DUAL_X_ENUM(name, value, msg) name = value,
  DUAL_POINT_FLAG_LIST(DUAL_X_ENUM)
#undef DUAL_X_ENUM
};

/* ------------------------------------------------------------------------------------------------
 * Context: where and how to run, plus the last error message.  Not thread-safe itself: use one
 * context per thread (programs may be shared).
 * ---------------------------------------------------------------------------------------------- */
typedef struct dual_context dual_context;

typedef enum dual_device {
  DUAL_DEVICE_AUTO = 0,  /* the GPU when built with CUDA and one is present, else the CPU; with
                            a GPU, each host-array call where it is fastest ("Adaptive
                            dispatch" below) */
  DUAL_DEVICE_CPU = 1,
  DUAL_DEVICE_GPU = 2,
  DUAL_DEVICE_HYBRID = 3 /* reported only (dual_context_last_device): the last call split its
                            points between the GPU and the CPU */
} dual_device;

/* Create a context.  `device` is a dual_device; the environment variable DUALBATCH_DEVICE
 * (auto|cpu|gpu|gpu:N) overrides it, gpu:N also choosing CUDA device N (dual_context_set_gpu).  Asking for the GPU in a build without CUDA, or on a machine
 * without one (or with a driver older than the CUDA runtime the library was built with), fails
 * with DUAL_ERR_NO_DEVICE; AUTO takes the CPU instead.  A CPU context never initializes CUDA; AUTO
 * and GPU query the devices (the first GPU evaluation then creates the context's streams, memory
 * pool and pinned staging buffers, kept until destroy).  On failure *ctx is NULL, except for
 * DUAL_ERR_NO_DEVICE where *ctx is a usable CPU context holding the message (so the caller can
 * read it) that must still be destroyed.
 * A NULL context: every function that takes one and returns a status returns DUAL_ERR_ARGUMENT
 * (with nowhere to put a message) and sets its output pointers (*prog, *b) to NULL; the getters
 * return neutral values (DUAL_DEVICE_CPU, DUAL_AD_FORWARD, DUAL_TIER_INTERPRET, knob 0, note "",
 * error "no context"); dual_context_destroy ignores it. */
int dual_context_create(dual_context **ctx, int device);
void dual_context_destroy(dual_context **ctx);

/* The device this context evaluates on (DUAL_DEVICE_CPU or DUAL_DEVICE_GPU). */
int dual_context_device(const dual_context *ctx);

/* The device the last successful evaluation on this context ran on, and a note saying why it
 * was not the context's device, why a compiled tier did not serve, or that reverse mode ran in
 * checkpointed segments ("" when none; several, "; " between them).  An AUTO context whose GPU
 * evaluation fails
 * (out of device memory, a launch or kernel error) repeats the evaluation on the CPU, returns
 * its status, and records the GPU's error here. */
int dual_context_last_device(const dual_context *ctx);
const char *dual_context_last_note(const dual_context *ctx);

/* The points the last successful evaluation ran on the GPU and on the CPU (either pointer may be
 * NULL): (B, 0) or (0, B) on one device, both nonzero where AUTO split it (last device
 * DUAL_DEVICE_HYBRID). */
int dual_context_last_split(const dual_context *ctx, int64_t *gpu_points, int64_t *cpu_points);

/* Adaptive dispatch (the default; DUAL_KNOB_DISPATCH 1 keeps the GPU first).  A context asked
 * for as AUTO that has a GPU runs each call on host arrays where a model of this machine
 * says it is fastest: on the CPU (small batches), on the GPU, or split between the two (the
 * first points on the GPU through the staging path, with a few of the context's threads for its
 * copies, while the other threads take the rest on the CPU; the shares chosen so that both end
 * together).  Results are the same bits wherever the points run: the job (its AD mode) is the
 * GPU's either way, and the engines agree bitwise.  The model's figures come from a calibration
 * measured at the first such call (the CPU's speed at the thread count, a GPU call's fixed cost,
 * the staged copies' speed each way, the GPU kernels' speed; under a second) and stored in the
 * kernel cache's directory, checked as its entries are (a damaged one is measured again).  Each
 * program's own calls then correct the model for it: on each device alone (from two batch sizes,
 * its own fixed cost and per-point rate; a lone call 3x slower than expected is held back until
 * another confirms it; a device the model puts within 4x of the chosen one is tried where it was
 * never measured at a batch within 8x), and split (the two sides slow each other: a split is
 * measured per count of staging threads, each side's time as a line in its points, the counts
 * beside the best one tried).  A measurement moves the estimate half way down to a faster call
 * and a quarter of the way up to a slower one (a disturbance only slows a call), and what the
 * model passes over but puts within 2x of its choice runs again after 4, 8, ... up to every 64
 * calls, so one disturbed call does not keep a device or a split out of use.  A few of a
 * program's first calls at a new batch size are such tries.
 * Device memory stays on the GPU; DUAL_DEVICE_CPU and DUAL_DEVICE_GPU contexts never move;
 * DUAL_KNOB_DISPATCH turns splits or the model off, DUAL_KNOB_SPLIT_SHARE fixes a split.  dual_context_calibrate measures the figures
 * again (the compiled tier's kernels too, which a first calibration takes to be the
 * interpreter's), stores them, and writes them to `report` (may be NULL; "name value" lines, cut
 * to cap bytes).  A CPU context measures the CPU's only. */
int dual_context_calibrate(dual_context *ctx, char *report, int64_t cap);

/* Number of CUDA devices the library can use: 0 in a build without CUDA, without a driver, or
 * without a GPU.  Initializes the CUDA runtime (unlike creating a CPU context). */
int dual_device_count(void);

/* GPU contexts: the CUDA device the context runs on, an ordinal 0 .. dual_device_count() - 1.
 * A GPU or AUTO context takes the device current on the creating thread (0 unless the caller
 * chose another with cudaSetDevice), or N from DUALBATCH_DEVICE=gpu:N (past the last device:
 * DUAL_ERR_NO_DEVICE and a CPU context, as for 'gpu' without one).  Every call makes the
 * context's device current for its own work and makes the caller's current again before it
 * returns, so each thread or MPI rank can drive its own GPU, and one thread several contexts on
 * several GPUs; nothing is shared between contexts but the compiled kernels (one per GPU model,
 * process-wide) and the disk cache.  Choosing another device releases the context's buffers on
 * the old one and its dispatch figures (measured again on the new one).  A device-memory batch
 * must live on the context's device (else DUAL_ERR_ARGUMENT).  Out of range: DUAL_ERR_ARGUMENT;
 * a context on the CPU: DUAL_ERR_NO_DEVICE.  dual_context_gpu returns the ordinal, or -1 for a
 * context on the CPU. */
int dual_context_set_gpu(dual_context *ctx, int ordinal);
int dual_context_gpu(const dual_context *ctx);

/* GPU contexts: run on `count` devices at once (1 .. 16 distinct ordinals; 1 is
 * dual_context_set_gpu; DUALBATCH_DEVICE=gpu:N,M,... at creation).  A call with host arrays is cut
 * into contiguous shares of its points, one per device, sized by each device's points per second
 * measured on the context's earlier calls (even shares at first), and run on all of them at once,
 * each device with its own streams, memory pool and a 1/count part of the context's host threads
 * for staging; the results are the bits one GPU (or the CPU) gives.  No share goes to the CPU
 * (AUTO's hybrid dispatch is for one GPU).  A device-memory batch must live on the first device;
 * it is cut the same way among the first device and those with peer access to its memory (NVLink
 * or PCIe peer-to-peer, enabled by the library): their kernels read and write its arrays in place,
 * after the work queued before the call on the first device (on your stream, or the legacy default
 * stream), again the bits of one GPU.  dual_newton and dual_lsq cut host arrays the same way (by
 * the devices' measured solve rates), each device solving its share with its part of the host
 * threads for its CPU fallbacks; on device arrays they run on the first device.  Errors as
 * dual_context_set_gpu, and a device listed twice or a count out of
 * range is DUAL_ERR_ARGUMENT.  dual_context_gpus writes up to cap ordinals and returns how many
 * devices the context runs on (0 on the CPU). */
int dual_context_set_gpus(dual_context *ctx, int count, const int *ordinals);
int dual_context_gpus(const dual_context *ctx, int *ordinals, int cap);

/* GPU contexts: the CUDA stream (a cudaStream_t) that evaluations of device-memory batches run
 * on; NULL (default) = the context's own stream, which first waits for the work queued before the
 * call on the legacy default stream and the blocking streams (a cudaMemcpy that filled the arrays,
 * even one from pageable memory that returned before its DMA ended).  On a stream of yours the
 * ordering is yours: the call's work follows what that stream holds.  Each call returns only when
 * its results are complete (it synchronizes the stream). */
int dual_context_set_stream(dual_context *ctx, void *cuda_stream);

/* Page-lock `bytes` of host memory from `ptr` (cudaHostRegister, for every GPU) so that GPU calls
 * on host arrays inside it copy straight between it and the devices.  An array qualifies when its
 * points lie packed one after another (ldx = n, a Jacobian's ldj = m * n, ...: the default
 * layouts) and its first and last entries are in locked memory; each chunk of it is then one DMA
 * copy, with none of the library's host threads copying it through staging buffers.  This holds
 * for every evaluation and for dual_newton's and dual_lsq's x and p (their status, step-count and
 * norm arrays are copied straight in any case); a status array of an evaluation is staged.  Where the
 * host's memory bandwidth is the limit (host arrays on one or several GPUs: BENCHMARKS.md) this
 * raises the throughput; the results are the same bits.  Locking costs time in proportion to the
 * size (the system locks each page), so lock arrays reused over many calls, once; locked memory
 * cannot be swapped out.  dual_host_unpin(ctx, ptr) releases a range locked here, and must be
 * called before that memory is freed.  A context on the CPU, or a build without CUDA: both do
 * nothing and succeed.  Errors: a NULL pointer or bytes < 1, a range overlapping one already
 * locked, or unpinning a pointer that does not start a locked range: DUAL_ERR_ARGUMENT; the
 * system refusing to lock that much: DUAL_ERR_NO_MEMORY. */
int dual_host_pin(dual_context *ctx, void *ptr, int64_t bytes);
int dual_host_unpin(dual_context *ctx, void *ptr);

/* GPU contexts: the most device memory, in bytes, the context's pool may hold (0 = default: 90%
 * of the memory free when the pool is first used); buffers kept from earlier calls past a lowered
 * limit are released at the next call.  Host-memory batches larger than the pool are
 * split into chunks; results do not depend on the chunking.  On the CPU it bounds the reverse-mode
 * workspaces of all threads together (0 = 1 GiB); past it the sweeps are checkpointed
 * (dual_context_set_ad_mode).  A limit is 0 or at least DUAL_MEMORY_LIMIT_MIN bytes (else
 * DUAL_ERR_ARGUMENT); a CPU evaluation whose limit leaves a thread less than one block of 16
 * points (128 bytes) returns DUAL_ERR_ARGUMENT; one that leaves too little for the program's tape
 * returns DUAL_ERR_NO_MEMORY. */
#define DUAL_MEMORY_LIMIT_MIN 1024
int dual_context_set_memory_limit(dual_context *ctx, int64_t bytes);

/* Number of CPU threads (OpenMP) used by evaluations; 0 (default) = all available cores. */
int dual_context_set_threads(dual_context *ctx, int threads);

/* Multi-dual width N, the number of tangent directions carried per pass: 0 (default) = chosen
 * automatically; otherwise one of 1, 2, 4, 8, 16, 32.  A Jacobian with n inputs takes
 * ceil(n / N) passes.  Results are bitwise identical for every width. */
int dual_context_set_width(dual_context *ctx, int width);

/* How derivatives are computed: DUAL_AD_FORWARD (multi-dual passes, ceil(n / N) of them; nested
 * second-order passes for dual_hessian / dual_hvp), DUAL_AD_REVERSE (one forward sweep that tapes
 * each op's partials, then one adjoint sweep per output: the cost of a gradient does not grow
 * with n; dual_hessian / dual_hvp run forward-over-reverse: a sweep carrying one direction's
 * tangents, then adjoint pairs, so an HVP costs a few gradients whatever n), or DUAL_AD_AUTO
 * (default: a cost model over n, the outputs and the device picks: reverse for a gradient from
 * n = 33 inputs on the CPU, and on the GPU from n = 8 while its compiled kernel is within the
 * compile rule, from n = 24 otherwise; forward-over-reverse for HVPs of one output; for
 * Hessians nested forward up to ~400 inputs on the CPU, and on the GPU forward-over-reverse for
 * one output from n = 12 while its compiled kernel is within the compile rule (12 000 terms:
 * about 30 inputs of the grad family), nested forward otherwise; bench/NOTES.md has the
 * measured crossovers).  The GPU's second-order model is fitted to the compiled tier, which
 * serves these products by default (H200: reverse gradients 1.12x forward at n = 8, 1.99x at
 * 24; forward-over-reverse Hessians 1.03x nested forward at n = 12, 1.36x at 16, 2.06x at 24).  The choice never depends on the tier
 * (a call's bits are the same on both) nor on a forced width.  dual_vjp always runs in reverse.  The results of the
 * two modes agree to rounding (their sums run in different orders); each is bitwise
 * reproducible.  Reverse mode needs per point (doubles): the registers, the tape (one row per
 * operand of each computing op; two in forward-over-reverse), one adjoint per active register
 * and one derivative per input (dualbatch disasm shows the counts); the CPU holds blocks of 16
 * points per thread, the GPU one point per resident thread.  When that exceeds the memory limit
 * (dual_context_set_memory_limit; CPU default 1 GiB for all threads) the program runs in
 * checkpointed segments — snapshots of the registers at each segment's start, each segment
 * recomputed once — with the same bits, and dual_context_last_note says so. */
typedef enum dual_ad_mode { DUAL_AD_AUTO = 0, DUAL_AD_FORWARD = 1, DUAL_AD_REVERSE = 2 } dual_ad_mode;
int dual_context_set_ad_mode(dual_context *ctx, int mode);
/* The mode the last successful evaluation used (DUAL_AD_FORWARD or DUAL_AD_REVERSE): AUTO's
 * choice is reported here. */
int dual_context_last_ad_mode(const dual_context *ctx);

/* GPU contexts: which of the two GPU tiers runs a product (every product: forward and reverse
 * first order, second order nested or forward-over-reverse, dual_sgrad; the knobs
 * DUAL_KNOB_JIT_SECOND, _REVERSE and _SGRAD keep a family on the interpreter).
 *   DUAL_TIER_INTERPRET  the interpreter: one pre-built kernel family runs every program, with no
 *                        compilation.
 *   DUAL_TIER_COMPILE    the compiled tier: the program gets its own kernel, generated as CUDA C
 *                        (straight-line, values and tangents in machine registers) and compiled
 *                        with NVRTC to a CUBIN for the GPU, kept in memory for the process and on
 *                        disk (dual_context_set_cache_dir).  A call waits for its compile; if the
 *                        kernel cannot be built or loaded (no NVRTC, a compile error, a load or
 *                        launch failure, a program over the size rule below) it fails with
 *                        DUAL_ERR_COMPILE and a message that says why.
 *   DUAL_TIER_AUTO       (default) compiled when the kernel is in memory or in the disk cache;
 *                        otherwise the call interprets while the kernel compiles in a background
 *                        thread (one at a time per process), and later calls switch to it when it
 *                        is ready.  Where the compiled tier cannot serve, the interpreter does,
 *                        and dual_context_last_note says why (with the compiler's log).  The
 *                        background compile runs in a child process (fork), so the process may
 *                        exit at any time: the child finishes the compile in progress and stores
 *                        its CUBIN in the disk cache (queued ones are dropped); a fork()ed child
 *                        of the application starts with no compile in flight.
 * Both tiers compute every op with the same rules and floating-point options: results are bitwise
 * equal, to each other and to the CPU.  Size rules (beyond them a compile would take minutes):
 * programs of more than 20000 instructions, or whose instructions times passes exceed 100000;
 * forward kernels of over 4000 tangent-lane sums; reverse-mode and forward-over-reverse kernels
 * of over 12000 tangent and adjoint terms, or (first order) over 1000 instructions unless one
 * sweep made of the language's loops (written as loops again) or up to 2048 (in segments);
 * reverse-mode dual_sgrad over 1000 instructions or a sample row of 47 doubles.  A program over
 * a rule stays on the interpreter under AUTO (the note names the rule) and fails under COMPILE.
 * CPU contexts (the CPU's compiled tier, under construction: issue 21): DUAL_TIER_COMPILE runs
 * eval, JVP, Jacobian and gradient calls, Hessians and HVPs by nested forward passes, and
 * reverse-mode gradients, Jacobians and VJPs (within the GPU tier's reverse-mode rules above,
 * a long program only as loops), through C generated from the program (the same rules, loops
 * over a block of points that the compiler vectorizes) and compiled with the system C compiler ($DUALBATCH_CC,
 * else `cc` on PATH; flags that keep every rounding), loaded into the process, kept in memory
 * and in the same disk cache (its key names the compiler, its flags and the CPU); a call waits
 * for its compile (up to seconds for a large program); no compiler or a failed compile is
 * DUAL_ERR_COMPILE with the reason.  DUAL_TIER_AUTO interprets a product until it has taken
 * DUAL_KNOB_CPU_JIT_AFTER_MS (default 1 s) of interpreter time in the process, then builds its
 * module in a background thread (from the disk cache when there) and runs it from the next call
 * on; without a compiler, or where the compile fails, it keeps interpreting.  Forward-over-reverse
 * and dual_sgrad interpret for now.  Results are bitwise the interpreter's.
 * DUALBATCH_TIER=auto|interpret|compile (GPU contexts) and DUALBATCH_CPU_TIER (CPU contexts),
 * read when the context is created, override the default. */
typedef enum dual_tier { DUAL_TIER_AUTO = 0, DUAL_TIER_INTERPRET = 1, DUAL_TIER_COMPILE = 2 } dual_tier;
int dual_context_set_tier(dual_context *ctx, int tier);
/* The tier of the last successful evaluation: DUAL_TIER_COMPILE or DUAL_TIER_INTERPRET (also for
 * CPU evaluations). */
int dual_context_last_tier(const dual_context *ctx);

/* The compiled tier's disk cache directory (a copy of `dir` is kept; NULL or "" = the default:
 * $DUALBATCH_CACHE_DIR, else $XDG_CACHE_HOME/dualbatch, else ~/.cache/dualbatch).  Entries are
 * named by a SHA-256 of everything that decides the kernel's bits, written atomically, created
 * private (0700) and checked on every load (a directory that another user owns or can write,
 * or below one that is, is not used; an entry must be yours, unlinked elsewhere, and carry the
 * HMAC tag of the directory's secret: README "The cache directory is code the library runs");
 * an unusable directory only costs the cache (the kernel is still compiled and kept in memory;
 * an untrusted one is named in dual_context_last_note). */
int dual_context_set_cache_dir(dual_context *ctx, const char *dir);
/* The directory in use (written into buf like snprintf), its entry count and total bytes (either
 * pointer may be NULL).  A missing directory is an empty cache; one that fails the trust checks
 * returns DUAL_ERR_IO saying why. */
int dual_context_cache_usage(dual_context *ctx, char *buf, int64_t cap, int64_t *entries,
                             int64_t *bytes);
/* Remove every entry of the cache directory and its secret (other files are left); *removed
 * (may be NULL) gets the count of entries.  Kernels already loaded in this process stay usable. */
int dual_context_cache_clear(dual_context *ctx, int64_t *removed);

/* Tuning knobs, for benchmarks and diagnosis: the defaults are the measured best (the rules in
 * bench/NOTES.md), and no knob changes a result, only where and how fast it is computed, but
 * for the solvers' cuBLAS factorizations (DUAL_KNOB_SOLVE_LU = 3, DUAL_KNOB_SOLVE_QR), whose
 * results agree with the CPU's to rounding.  Each has an environment variable that, when set,
 * replaces the default in contexts created afterwards (read once, by dual_context_create).
 *   DUAL_KNOB_GPU_GROUP       interpreter: threads per point, 0 = the rule (2 from 32 lanes), or
 *                             1, 2, 4, 8, 16                      DUALBATCH_GPU_GROUP=n
 *   DUAL_KNOB_GPU_REGFILE     interpreter: 1 = register files in shared memory when a block fits,
 *                             0 = in global memory (default)      DUALBATCH_GPU_REGFILE=shared
 *   DUAL_KNOB_GPU2_BLOCKS     second-order interpreter: resident blocks per multiprocessor,
 *                             0 = as many as fit (default)        DUALBATCH_GPU2_BLOCKS=n
 *   DUAL_KNOB_HESSIAN_NESTED  nested Hessians: 1 = diagonal blocks carry every pair, as a
 *                             dual-of-dual number (0 = the upper triangle, default)
 *                                                                 DUALBATCH_HESSIAN_BLOCKS=nested
 *   DUAL_KNOB_JIT_WIDTH       compiled tier: lanes per pass, 0 = the rule (passes of up to 16),
 *                             or 1..32; compiled forward-over-reverse: Hessian directions per
 *                             kernel (0 = 4)                      DUALBATCH_JIT_WIDTH=n
 *   DUAL_KNOB_JIT_GROUPS      compiled forward-over-reverse Hessians: groups of DUAL_KNOB_JIT_WIDTH
 *                             directions per kernel, which computes the values once for its
 *                             groups; 0 = all in one kernel (default), 1..64
 *                                                                 DUALBATCH_JIT_GROUPS=n
 *   DUAL_KNOB_JIT_MIN_BLOCKS  compiled tier: resident blocks asked of the compiler, -1 = the rule
 *                             (3 for one pass, 2 for several; dual_sgrad in reverse mode 4),
 *                             0 = the compiler's choice, 1..16
 *                                                                 DUALBATCH_JIT_MINBLOCKS=n
 *   DUAL_KNOB_JIT_TRACE       compiled tier: 1 = the time of each step of a kernel's preparation,
 *                             and its registers and spills, on stderr
 *                                                                 DUALBATCH_JIT_TRACE (any value)
 *   DUAL_KNOB_JIT_SECOND      compiled tier: 1 = Hessians and HVPs too (default), in the
 *                             context's AD mode (nested forward or forward-over-reverse); 0 = they
 *                             interpret (hess at B = 1e6 on the H200: 8.1e8 Hessians/s compiled,
 *                             6.6e7 interpreted)                  DUALBATCH_JIT_SECOND=0
 *   DUAL_KNOB_JIT_REVERSE     compiled tier: 1 = reverse-mode gradients, Jacobians and VJPs too
 *                             (default); gradients of over 1000 instructions made of the
 *                             language's unrolled loops as loops again, other gradients and VJPs
 *                             of over 1000 in segments; 0 = they interpret (grad at B = 1e5 on
 *                             the H200: 1.9e7 gradients/s compiled, 6.5e6 interpreted)
 *                                                                 DUALBATCH_JIT_REVERSE=0
 *   DUAL_KNOB_JIT_SGRAD       compiled tier: 1 = dual_sgrad too (default: pathwise and score
 *                             function, with or without antithetic sampling) in the context's AD
 *                             mode: forward, one kernel per pass of up to 16 inputs running each
 *                             point's sample blocks; reverse, a thread per sample and one adjoint
 *                             sweep; 0 = it interprets (sgrad.db at B = 1e5 on the H200: 1.3e7
 *                             points/s compiled in reverse mode)  DUALBATCH_JIT_SGRAD=0
 *   DUAL_KNOB_JIT_LOADS_AHEAD compiled reverse mode's loops (above): D = 1..8, each iteration
 *                             loads the inputs of the iteration D ahead, so that their latency
 *                             overlaps D iterations' work (default 1), 0 = loads where they
 *                             are used                            DUALBATCH_JIT_LOADS_AHEAD=D
 *   DUAL_KNOB_SOLVE_LU        dual_newton on the GPU: the step's LU, 0 = the rule (a group of
 *                             16 lanes per point for 8 < n <= 16, a warp for 16 < n <= 32, one
 *                             thread per point otherwise), 1 = one thread per point, 2 = the
 *                             lane groups where n <= 32 (kin_steady, n = 32, at 1e6 on the H200:
 *                             3.9e6 cells/s warp, 1.7e6 thread), 3 = cuBLAS's getrfBatched and
 *                             getrsBatched (loaded with dlopen; DUALBATCH_CUBLAS names the file,
 *                             "none" for none, and without it the rule's LU runs, with a note;
 *                             slower than the thread per point at n = 48 and 64 on the H200; its
 *                             results agree with the CPU's to rounding, not bitwise as the
 *                             in-kernel LUs do)
 *                                                               DUALBATCH_SOLVE_LU=0|1|2|3
 *   DUAL_KNOB_SOLVE_QR        dual_lsq on the GPU: the Jacobian's QR, 0 = the rule (cuBLAS where
 *                             m >= 64, n >= 8 and m > n, when it loads; else in the kernel),
 *                             1 = in the kernel (MINPACK's qrfac with column pivoting on the m x n
 *                             J, a thread per point: the CPU's bits), 2 = cuBLAS's geqrfBatched
 *                             on [J F] first (no pivoting), then the kernel's pivoted QR of the
 *                             (n + 1) x n R it leaves (m > n only; results agree with the CPU's
 *                             to rounding, not bitwise; without cuBLAS the kernel's, with a note)
 *                                                               DUALBATCH_SOLVE_QR=0|1|2
 *   DUAL_KNOB_DISPATCH        an AUTO context with a GPU, host arrays: 0 = the model (the CPU, the
 *                             GPU or the points split between them, whichever the calibration
 *                             and the program's measured times say is fastest: "Adaptive
 *                             dispatch" above; the default), 1 = the GPU first (the CPU only
 *                             where the GPU fails: the rule before the model), 2 = the model
 *                             without splits
 *                                                               DUALBATCH_DISPATCH=0|1|2
 *   DUAL_KNOB_SPLIT_SHARE     with DUAL_KNOB_DISPATCH 0: a fixed split instead of the model's
 *                             choice, S = 1 .. 999 thousandths of each call's points on the GPU
 *                             (to whole blocks of the CPU engine, each side at least one; a call
 *                             too small for that runs as without it), 0 = the model (default):
 *                             for a workload whose balance the caller knows, and for measuring
 *                             the split path itself                 DUALBATCH_SPLIT_SHARE=S
 *   DUAL_KNOB_SPLIT_THREADS   the fixed split's CPU threads staging the GPU's side (the others
 *                             run the CPU's side; at most the call's threads less one), 0 = the
 *                             model's count (default)               DUALBATCH_SPLIT_THREADS=k
 *   DUAL_KNOB_CPU_JIT_AFTER_MS a CPU context under DUAL_TIER_AUTO: the milliseconds of interpreter
 *                             time a program's product (eval, JVP, Jacobian, gradient, nested
 *                             Hessian or HVP) takes in the process before its compiled module is
 *                             built in the background, 0 .. 1e9 (0: at its first call, which
 *                             waits for it — a product the tier declines interprets, the reason
 *                             in the note; default 1000: a compile takes seconds of a core,
 *                             worth it for a product that has already taken a second)
 *                                                                  DUALBATCH_CPU_JIT_AFTER_MS=T
 * A value out of range is DUAL_ERR_ARGUMENT. */
typedef enum dual_knob {
  DUAL_KNOB_GPU_GROUP = 0,
  DUAL_KNOB_GPU_REGFILE = 1,
  DUAL_KNOB_GPU2_BLOCKS = 2,
  DUAL_KNOB_HESSIAN_NESTED = 3,
  DUAL_KNOB_JIT_WIDTH = 4,
  DUAL_KNOB_JIT_MIN_BLOCKS = 5,
  DUAL_KNOB_JIT_TRACE = 6,
  DUAL_KNOB_JIT_SECOND = 7,
  DUAL_KNOB_JIT_REVERSE = 8,
  DUAL_KNOB_JIT_SGRAD = 9,
  DUAL_KNOB_JIT_GROUPS = 10,
  DUAL_KNOB_JIT_LOADS_AHEAD = 11,
  DUAL_KNOB_SOLVE_LU = 12,
  DUAL_KNOB_SOLVE_QR = 13,
  DUAL_KNOB_DISPATCH = 14,
  DUAL_KNOB_SPLIT_SHARE = 15,
  DUAL_KNOB_SPLIT_THREADS = 16,
  DUAL_KNOB_CPU_JIT_AFTER_MS = 17,
  DUAL_KNOB_COUNT = 18
} dual_knob;
int dual_context_set_knob(dual_context *ctx, int knob, int64_t value);
/* The knob's value (0 for an unknown knob or a NULL context). */
int64_t dual_context_knob(const dual_context *ctx, int knob);

/* The seed of the random draws (dual_builder_normal / uniform, the language's normal() and
 * uniform()) for every call but dual_sgrad (which takes its own): default 0.  Such calls see
 * sample 0 of this seed — one fixed realization of the draws, the same on every run. */
int dual_context_set_seed(dual_context *ctx, int64_t seed); /* any value: its 64 bits key the draws */

/* The message of the last failure on this context (a static "no error" if none).  The pointer
 * stays valid until the next call that takes this context. */
const char *dual_context_last_error(const dual_context *ctx);

/* A short human-readable description of the build and devices ("CUDA: off; OpenMP threads: 2").
 * Writes at most `cap` bytes including the terminating NUL into `buf`; returns the length it
 * needed (excluding NUL), like snprintf. */
int64_t dual_build_info(char *buf, int64_t cap);

/* ------------------------------------------------------------------------------------------------
 * Programs: immutable, validated bytecode for f.  A program is built from the text language
 * (see README "Language") or the builder API below, can be saved and loaded (validated again on
 * load), and is safe to share between threads.
 * ---------------------------------------------------------------------------------------------- */
typedef struct dual_program dual_program;

/* Compile program text.  `name` is used in diagnostics (file:line:col); may be NULL.  On a syntax
 * or semantic error returns DUAL_ERR_SYNTAX, leaves *prog NULL, and the context's last error holds
 * all diagnostics ("name:line:col: error: ...", the line and a caret). */
int dual_program_compile(dual_context *ctx, const char *source, const char *name,
                         dual_program **prog);
/* Same, reading the text from a file. */
int dual_program_compile_file(dual_context *ctx, const char *path, dual_program **prog);

/* Serialize to the versioned binary format.  With buf == NULL only *size is set.  Otherwise
 * `cap` must be >= the size (DUAL_ERR_ARGUMENT if not). */
int dual_program_save(dual_context *ctx, const dual_program *prog, void *buf, int64_t cap,
                      int64_t *size);
int dual_program_save_file(dual_context *ctx, const dual_program *prog, const char *path);
/* Load and validate a serialized program.  Any corruption yields DUAL_ERR_FORMAT or
 * DUAL_ERR_INVALID_PROGRAM, never a crash. */
int dual_program_load(dual_context *ctx, const void *buf, int64_t size, dual_program **prog);
/* Load a program from a file: the binary format, or program text (detected by content). */
int dual_program_load_file(dual_context *ctx, const char *path, dual_program **prog);

void dual_program_destroy(dual_program **prog);

/* Shape of a program: n active inputs, p passive parameters, m outputs (scalars). */
int32_t dual_program_num_inputs(const dual_program *prog);
int32_t dual_program_num_params(const dual_program *prog);
int32_t dual_program_num_outputs(const dual_program *prog);
/* Bytecode statistics: instructions, registers (all, and those carrying tangents). */
int64_t dual_program_num_instructions(const dual_program *prog);
int32_t dual_program_num_registers(const dual_program *prog);
int32_t dual_program_num_active_registers(const dual_program *prog);
/* Random draws the program makes per sample: one more than the largest draw index in its
 * bytecode (0: a deterministic program). */
int32_t dual_program_num_draws(const dual_program *prog);

/* Name of scalar input/param/output i ("cam[3]", "w"); NULL when out of range. */
const char *dual_program_input_name(const dual_program *prog, int32_t i);
const char *dual_program_param_name(const dual_program *prog, int32_t i);
const char *dual_program_output_name(const dual_program *prog, int32_t i);

/* Human-readable disassembly (one instruction per line with its op synopsis, then the register
 * counts).  snprintf-style: writes at most cap bytes into buf, returns the needed length. */
int64_t dual_program_disassemble(const dual_program *prog, char *buf, int64_t cap);

/* ------------------------------------------------------------------------------------------------
 * Builder: construct a program from C at run time.  Values are referred to by int32_t ids.
 * Operations are named by their language spelling: "+", "-", "*", "/", "^", "neg", "<", "<=",
 * ">", ">=", "==", "!=", "&&", "||", "!", "select" (c ? a : b) and every function of the language
 * ("sin", "atan2", "fma", ...).  The first error is sticky: later calls return it and
 * dual_builder_finish fails with the message.
 * ---------------------------------------------------------------------------------------------- */
typedef struct dual_builder dual_builder;

int dual_builder_create(dual_context *ctx, dual_builder **b);
void dual_builder_destroy(dual_builder **b);
/* Declare the next active input / passive parameter (in order); *id receives its value id. */
int dual_builder_input(dual_builder *b, const char *name, int32_t *id);
int dual_builder_param(dual_builder *b, const char *name, int32_t *id);
/* A finite constant. */
int dual_builder_constant(dual_builder *b, double value, int32_t *id);
/* A random draw, fresh for every sample of dual_sgrad: a standard normal N(0, 1) or a uniform
 * U(0, 1) (never exactly 0 or 1).  Draws are numbered in the order they are made; draw k of
 * sample s at point b is a pure function of (seed, b, s, k) (Philox-4x32-10, dual/random.h), so
 * results do not depend on the batch's chunking, threads or device.  N(mu, sigma^2) is
 * fma(sigma, z, mu) ("fma" with a normal draw as its second argument: dual_sgrad's
 * score-function estimator recognizes that form); U(a, b) is a + (b - a) u.  Outside dual_sgrad
 * every draw takes sample 0 of the context's seed (dual_context_set_seed). */
int dual_builder_normal(dual_builder *b, int32_t *id);
int dual_builder_uniform(dual_builder *b, int32_t *id);
/* Apply an operation to nargs value ids (nargs must equal the operation's arity). */
int dual_builder_apply(dual_builder *b, const char *op, int32_t nargs, const int32_t *args,
                       int32_t *id);
/* Declare the next output (in order) as the value `id`. */
int dual_builder_output(dual_builder *b, const char *name, int32_t id);
/* Run the compile passes (constant folding, CSE, dead-code elimination, register allocation),
 * validate, and produce the program.  The builder may be destroyed afterwards. */
int dual_builder_finish(dual_builder *b, dual_program **prog);

/* ------------------------------------------------------------------------------------------------
 * Evaluation.
 *
 * The simple calls below take point-major arrays with a leading dimension: point b's values
 * start at ptr + b*ld and are contiguous.  In C that is double x[B][ld]; in Fortran x(ld, B).
 * For any other layout (e.g. Fortran x(B, n), or SoA) use dual_run with explicit strides.
 *
 * `status` (may be NULL) receives B int32_t flag words (DUAL_PT_*), one per point.
 * Parameters `p` may be NULL when the program has none.  All pointers are host memory.
 * A NaN or infinite input never fails the call: that point is flagged.
 * ---------------------------------------------------------------------------------------------- */

/* y[b][j] = f_j(x_b, p_b).   x: [B][ldx>=n], p: [B][ldp>=p], y: [B][ldy>=m] */
int dual_eval(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
              int64_t ldx, const double *p, int64_t ldp, double *y, int64_t ldy, int32_t *status);

/* Jacobian-vector product: y = f(x), jv = J(x) v, one direction v_b per point.
 * v: [B][ldv>=n], y: [B][ldy>=m] (may be NULL), jv: [B][ldjv>=m] */
int dual_jvp(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, int64_t ldx,
             const double *p, int64_t ldp, const double *v, int64_t ldv, double *y, int64_t ldy,
             double *jv, int64_t ldjv, int32_t *status);

/* Full Jacobian by chunked forward mode.  J: [B][ldj>=m*n]; per point row-major m x n,
 * J[b*ldj + i*n + j] = d f_i / d x_j.  y: [B][ldy>=m] (may be NULL). */
int dual_jacobian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                  int64_t ldx, const double *p, int64_t ldp, double *y, int64_t ldy, double *J,
                  int64_t ldj, int32_t *status);

/* Gradient of a scalar program (m == 1, else DUAL_ERR_DIMENSION).  f: [B] (may be NULL),
 * g: [B][ldg>=n]. */
int dual_gradient(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                  int64_t ldx, const double *p, int64_t ldp, double *f, double *g, int64_t ldg,
                  int32_t *status);

/* Second order.  Hessians of every output, by nested forward mode (second-order multi-duals over
 * the same bytecode): per point the values y [B][ldy>=m] (may be NULL), the Jacobian J
 * [B][ldj>=m*n] as in dual_jacobian (may be NULL), and the m Hessians in H [B][ldh], output i's
 * Hessian starting at H + b*ldh + i*len with len = n*n (layout DUAL_HESSIAN_FULL, row-major,
 * H[j][k] = d2 f_i / dx_j dx_k) or len = n(n+1)/2 (DUAL_HESSIAN_PACKED: the upper triangle row by
 * row, (0,0) (0,1) .. (0,n-1) (1,1) .. (n-1,n-1); entry (j,k), j <= k, at j*n - j*(j-1)/2 + k - j).
 * Each pair (j, k) is computed once, so H is exactly symmetric.  The context width N sets the
 * blocking of the directions: n <= N takes one pass over the upper triangle; otherwise the n x n
 * matrix is covered by blocks of min(N, 16) directions, upper blocks only (automatic width: one
 * pass up to n = 32).  Results are bitwise identical for every width, chunking and device, and
 * the values and Jacobian equal dual_jacobian's. */
typedef enum dual_hessian_layout { DUAL_HESSIAN_FULL = 0, DUAL_HESSIAN_PACKED = 1 } dual_hessian_layout;

int dual_hessian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                 int64_t ldx, const double *p, int64_t ldp, double *y, int64_t ldy, double *J,
                 int64_t ldj, double *H, int64_t ldh, int layout, int32_t *status);

/* Hessian-vector products without forming H: hv[b*ldhv + i*n + k] = sum_j d2 f_i / dx_k dx_j v_j
 * for one direction v_b [B][ldv>=n] per point; y and J as in dual_hessian (may be NULL).  Cost per
 * point: ceil(n / C) passes, each carrying v and a chunk of C = min(N, 31) inputs (C second-order
 * components), so it grows with n like a gradient.  A NaN or infinite v flags its point
 * (DUAL_PT_BAD_INPUT). */
int dual_hvp(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, int64_t ldx,
             const double *p, int64_t ldp, const double *v, int64_t ldv, double *y, int64_t ldy,
             double *J, int64_t ldj, double *hv, int64_t ldhv, int32_t *status);

/* Vector-Jacobian products by reverse mode: g = u^T J, i.e. g[b*ldg + j] = sum_i u_i df_i/dx_j,
 * for one cotangent u_b [B][ldu>=m] per point; y [B][ldy>=m] may be NULL, g: [B][ldg>=n].  A NaN
 * or infinite u flags its point (DUAL_PT_BAD_INPUT).  CPU and GPU (the same sweeps: equal bits). */
int dual_vjp(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, int64_t ldx,
             const double *p, int64_t ldp, const double *u, int64_t ldu, double *y, int64_t ldy,
             double *g, int64_t ldg, int32_t *status);

/* The general entry point: any strides.  Element (point b, component i) of an array A with
 * strides (ps, es) is A[b*ps + i*es]; derivative element (b, output i, input j) of D is
 * D[b*d_ps + i*d_rs + j*d_cs].  Unused arrays are NULL.  Strides may be any value (negative too);
 * outputs must not overlap inputs. */
typedef enum dual_mode {
  DUAL_MODE_EVAL = 0,     /* y */
  DUAL_MODE_JVP = 1,      /* y, d = J v (d_cs unused) */
  DUAL_MODE_JACOBIAN = 2, /* y, d = J */
  DUAL_MODE_GRADIENT = 3, /* m == 1: y, d = grad (d_rs unused) */
  DUAL_MODE_HESSIAN = 4,  /* y, d = J (may be NULL), h = the m Hessians (h_layout) */
  DUAL_MODE_HVP = 5,      /* y, d = J (may be NULL), h = the m vectors H_i v (v: the direction) */
  DUAL_MODE_VJP = 6,      /* y, d = u^T J (n entries; d_rs unused), u: the cotangent */
  DUAL_MODE_SGRAD = 7     /* m == 1, as dual_sgrad: y = E f, d = the gradient estimate (d_rs
                             unused), h = its standard errors (h_rs unused); samples, seed and
                             sgrad_flags below */
} dual_mode;

/* Where a batch's arrays live.  Host memory works on every device (a GPU context copies it
 * through pinned staging buffers, in chunks that overlap copies and compute).  Device memory
 * (pointers from cudaMalloc or managed memory) needs a GPU context and is used in place: nothing
 * is copied, so data can stay on the GPU between calls.  All arrays of a batch live in the same
 * memory; the library checks each pointer with CUDA and refuses a mismatch. */
typedef enum dual_memory { DUAL_MEMORY_HOST = 0, DUAL_MEMORY_DEVICE = 1 } dual_memory;

/* A batch: fill it after dual_batch_init, which zeroes every field and sets `size`.  The library
 * refuses (DUAL_ERR_ARGUMENT) a batch whose size is not its own sizeof(dual_batch), so a binding
 * or a program compiled against another version of this header fails cleanly instead of being
 * misread.  Fields are int64_t, int32_t and pointers only. */
typedef struct dual_batch {
  int64_t size;  /* sizeof(dual_batch), set by dual_batch_init */
  int64_t count; /* B, number of points (>= 0) */
  const double *x;
  int64_t x_ps, x_es; /* inputs (n per point) */
  const double *p;
  int64_t p_ps, p_es; /* parameters (p per point) */
  const double *v;
  int64_t v_ps, v_es; /* JVP directions (n per point) */
  double *y;
  int64_t y_ps, y_es; /* outputs (m per point) */
  double *d;
  int64_t d_ps, d_rs, d_cs; /* derivatives */
  int32_t *status;          /* [count] flag words, contiguous; may be NULL */
  int32_t memory;           /* dual_memory of every array above; 0 = host */
  /* Second order (DUAL_MODE_HESSIAN, DUAL_MODE_HVP): element e of output i's Hessian (index as
   * in dual_hessian for h_layout) or of its H v (e = k) is h[b*h_ps + i*h_rs + e*h_es]. */
  double *h;
  int64_t h_ps, h_rs, h_es;
  int32_t h_layout; /* dual_hessian_layout */
  const double *u;
  int64_t u_ps, u_es; /* VJP cotangents (m per point) */
  /* DUAL_MODE_SGRAD only (ignored otherwise): samples per point, the seed of the draws, and
   * DUAL_SGRAD_* flags, as the arguments of dual_sgrad. */
  int64_t samples;
  int64_t seed; /* any value: its 64 bits key the draws */
  int32_t sgrad_flags;
  /* Every mode: the index the random draws see for the batch's first point (point b draws as
   * point0 + b), so that a large batch cut into calls keeps the draws of one call (default 0;
   * the simple calls use 0). */
  int64_t point0;
} dual_batch;

/* Zero *batch (host memory, no arrays, point0 0) and set batch->size. */
void dual_batch_init(dual_batch *batch);

int dual_run(dual_context *ctx, const dual_program *prog, int mode, const dual_batch *batch);

/* ------------------------------------------------------------------------------------------------
 * Stochastic gradients: Monte-Carlo estimates of g(x) = E_xi[f(x, p, xi)] and of its gradient,
 * for a scalar program (m == 1) that makes random draws (dual_builder_normal / uniform, the
 * language's normal() and uniform()).
 *
 * Each point b gets `samples` samples; sample s evaluates f with draw k equal to
 * Philox-4x32-10 keyed (seed, b, s, k) (dual/random.h), so the estimate is a pure function of
 * (x_b, p_b, seed, samples, flags): bitwise the same for any batch chunking, thread count, width,
 * device (the GPU and the CPU run the same sweeps and reductions) and on every run.  The point
 * index b is the position in this call's batch (plus dual_batch.point0 through dual_run).  Per
 * point:
 *   f[b]            the sample mean of f (the estimate of E f),
 *   g[b*ldg + j]    the sample mean of the per-sample gradients (the estimate of dE f / dx_j),
 *   se[b*ldse + j]  the standard error of g_j: the sample standard deviation of the per-sample
 *                   gradients over sqrt(units), units = samples (pairs with antithetic sampling).
 * Means and variances are accumulated inside the kernels, nothing of size samples x B stored:
 * within blocks of 8 units by a fixed pairwise tree (units 2i and 2i + 1, then pairs of
 * pairs, ... by Chan's formula), the blocks combined in order by Chan's formula — so small batches spread a point's sample blocks over GPU threads with the same bits
 * as one thread running them all.  f, g or se may be NULL (not wanted).
 *
 * flags (OR them):
 *   DUAL_SGRAD_ANTITHETIC  samples 2j and 2j + 1 see mirrored draws (z and -z, u and 1 - u); a
 *                          unit is the mean of a pair (samples must be even).  Exact for the
 *                          linear part of f, so it helps most for nearly odd functions of the
 *                          draws.
 *   DUAL_SGRAD_SCORE       the score-function (likelihood-ratio) estimator for draws of the form
 *                          xi = normal(mu, sigma), i.e. fma(sigma, z, mu) with z a standard normal
 *                          draw, whose mu and sigma may depend on the inputs: the per-sample
 *                          gradient is grad f|xi fixed + f * grad log N(xi; mu, sigma^2), so f
 *                          need not be differentiable in xi (indicators, comparisons, select).
 *                          Other draws keep the pathwise derivative (still unbiased).  Fails with
 *                          DUAL_ERR_UNSUPPORTED when the program has no such draw, or when a z of
 *                          that form is also used elsewhere.  Variance is typically much larger
 *                          than pathwise; there is no baseline subtraction.
 * Without SCORE the gradient is pathwise: the mean of the per-sample gradients of f with the
 * draws held fixed (unbiased when f is differentiable in the draws almost everywhere and
 * integrable; a step function of xi gives the pathwise derivative 0, use SCORE).
 *
 * samples >= 2 (>= 4 with ANTITHETIC): the standard error needs two units.  The gradients run in
 * forward or reverse mode as dual_gradient would (dual_context_set_ad_mode; AUTO by n).  Status
 * flags are the OR over a point's samples.  The cost is about `samples` gradients per point. */
enum dual_sgrad_flag { DUAL_SGRAD_ANTITHETIC = 1, DUAL_SGRAD_SCORE = 2 };

int dual_sgrad(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
               int64_t ldx, const double *p, int64_t ldp, int64_t samples, int64_t seed,
               int flags, double *f, double *g, int64_t ldg, double *se, int64_t ldse,
               int32_t *status);

/* ------------------------------------------------------------------------------------------------
 * Batched nonlinear solvers: one small system per point, each point solved on its own (a point's
 * failure never stops the others; points that have converged cost nothing more).
 *
 *   dual_newton  square systems F(x; p) = 0 (m == n): Newton's method, the step from an LU
 *                factorization with partial pivoting of the Jacobian, kept to J's structural
 *                band, which the library reads from the program (LAPACK's dgbtrf for a banded J:
 *                a tridiagonal J costs O(n) instead of O(n^3), with the dense factorization's
 *                values, bits differing at most in the sign of an exact zero; dgetrf for a dense
 *                one), damped by a backtracking line search on phi = ||F||^2 / 2 (Armijo,
 *                c = 1e-4; halving or a quadratic model, never below a tenth of the previous
 *                step; at most 40 reductions).  A
 *                point whose Jacobian is singular, whose line search fails, or that needed a
 *                damped step 10 times in a row continues with the trust region of dual_lsq
 *                from where it stopped, then with Newton again, whose tests alone decide that
 *                it converged (its info is that second run's; iters counts both solvers').
 *                Still failing, it does the same from its starting point, and last runs
 *                Powell's hybrid method (MINPACK hybrj1's dogleg with Broyden updates,
 *                unscaled) from the start, then Newton; a point that last fallback does not
 *                solve keeps the result it had before it.
 *   dual_lsq     least squares min ||F(x; p)||^2 / 2 (m >= n): Levenberg-Marquardt with the trust
 *                region of MINPACK's lmder (Moré 1978): QR with column pivoting of J, the
 *                parameter from the secular equation, variables scaled by J's column norms (the
 *                largest seen), the region's radius step_bound * ||D x0|| at first.
 *
 * The program's inputs are the unknowns x (n per point), its parameters p are held fixed, its
 * outputs are F.  x [B][ldx >= n] holds the starting points and receives the last iterates.
 * Per point (each may be NULL): info[b] a dual_solve_status, iters[b] the steps taken, fnorm[b]
 * ||F||_2 at the returned x.  A point converges when, after an iteration,
 *     ||F||_2 <= f_abs  or  ||F||_2 <= f_rel * ||F(x0)||_2  or  ||dx||_2 <= x_rel * ||x||_2 + x_abs,
 * the step test only for a full Newton step dx (one the line search took undamped); ||F|| = 0
 * converges at once.  dual_newton sums the squares of these norms in one fixed order on every
 * device (16 partial sums, entry j into partial j mod 16, then a pairwise tree: the order of a
 * GPU lane group's shuffles), dual_lsq in index order.  Each point goes through the same
 * arithmetic however the batch is chunked or threaded: results are bitwise identical across
 * thread counts and chunkings, and a GPU context gives the CPU's bits (but dual_lsq where
 * m >= 64 and n >= 8, and the cuBLAS knobs: to rounding, below).
 *
 * J comes from forward mode (reverse where the context's AD mode says so).  Where its structure,
 * read from the program, lets columns that share no row be seeded together (Curtis, Powell and
 * Reid's column coloring: a tridiagonal J takes 3 directions whatever n), the solvers evaluate J
 * S for those few directions instead of J's n columns and read J's entries from it: on the CPU
 * where that saves the engine a pass of its width, on the GPU in dual_newton's lane groups.
 * Every entry has the bits of the dense evaluation, so results do not change.
 *
 * On a GPU context dual_newton keeps the iterates on the device: each round evaluates F and J at
 * the points not done (the compiled or interpreted tier, straight into the solver's layout) and
 * one kernel runs every point's line-search verdict and LU step (16 lanes per point for
 * 8 < n <= 16, a warp for 16 < n <= 32, a thread per point otherwise: the CPU's statements in the
 * CPU's order, so the same bits); only a count of points comes back to the host per round.  Its
 * arrays (x, p, info, iters, fnorm) may be host memory (copied in and out once per call) or all
 * device memory (cudaMalloc: solved in place, nothing copied but the few points the fallback
 * takes, which runs on the host); mixed memory is refused.  The context keeps the solver's device work arrays
 * (below 2 GiB and an eighth of the free memory, larger batches run in chunks) and the starting
 * points of up to 256 MiB of the batch (for the fallback) between calls, until it is destroyed.
 * Where the GPU fails (out of memory, a launch error) an AUTO context solves the points not yet
 * finished on the CPU, and the call ends with dual_context_last_device CPU and a note that says
 * so (the first such note of the call, whatever its later parts ran on); a GPU context returns the
 * error (so do device-memory arrays).  dual_lsq on a GPU context works the same way: iterates and the trust
 * region's state stay on the device, a thread per point runs the CPU's QR and Levenberg–Marquardt
 * statements (the same bits), two counts come back to the host per round (the points that need a
 * Jacobian, those with a trial step), arrays all host or all device memory, the same chunking and
 * AUTO fallback to the CPU.  Where m >= 64, n >= 8, m > n (DUAL_KNOB_SOLVE_QR) cuBLAS's batched
 * QR first reduces each point's [J F] to n + 1 rows without pivoting (the same column norms and,
 * after the thread's pivoted QR of those rows, the same R), so the iteration is MINPACK's but the
 * results agree with the CPU's to rounding, not bitwise: the same statuses and ||F|| to 1e-10
 * relative on 2000 Osborne 2 fits (65 x 11) in the tests.
 * -------------------------------------------------------------------------------------------- */
typedef enum dual_solve_status {
  DUAL_SOLVE_CONVERGED = 0,   /* a convergence test held */
  DUAL_SOLVE_MAX_ITER = 1,    /* max_iter steps taken without convergence */
  DUAL_SOLVE_SINGULAR = 2,    /* the Jacobian is singular to working precision: a pivot of
                                 magnitude <= n * eps * max |J_ij| */
  DUAL_SOLVE_NONFINITE = 3,   /* F or J not finite at an iterate, or a NaN/inf start or param */
  DUAL_SOLVE_LINE_SEARCH = 4, /* no step along the Newton direction decreased phi enough */
  DUAL_SOLVE_NO_PROGRESS = 5  /* least squares: f_red, x_rel or g_tol is below the double
                                 epsilon's reach: no further reduction is possible */
} dual_solve_status;

/* Options: fill after dual_solve_options_init, which sets `size` and the defaults below; the
 * library refuses (DUAL_ERR_ARGUMENT) a struct of another size or a value out of range.  Fields
 * are int64_t, int32_t and double only. */
typedef struct dual_solve_options {
  int64_t size;        /* sizeof(dual_solve_options), set by dual_solve_options_init */
  int32_t max_iter;    /* >= 0; Newton: steps per point (0: 50); least squares: Jacobians per
                          point (0: no limit but max_evals) */
  int32_t max_evals;   /* >= 0; least squares: residual evaluations per point (0: 100 (n + 1),
                          MINPACK lmder1's) */
  int32_t line_search; /* Newton: 1 backtracking and the trust-region fallback (default), 0 full
                          steps only (no fallback) */
  int32_t reserved;    /* 0 */
  double f_abs;        /* >= 0: converged when ||F||_2 <= f_abs (default 0) */
  double f_rel;        /* >= 0: Newton: converged when ||F||_2 <= f_rel ||F(x0)||_2 (default 0) */
  double x_abs;        /* >= 0: Newton: the step test's absolute part (default 0) */
  double x_rel;        /* >= 0: Newton: the step test's relative part (default 1.49e-8, the square
                          root of the double epsilon, as MINPACK's hybrj1 and lmder1) */
  double f_red;        /* >= 0: least squares: converged when the actual and the predicted
                          relative reductions of ||F||^2 are both <= f_red (MINPACK's ftol;
                          default 1.49e-8); its x_rel test is on the trust region: radius <=
                          x_rel * ||D x|| (MINPACK's xtol) */
  double g_tol;        /* >= 0: least squares: converged when the cosine of the angle between F
                          and every column of J is <= g_tol (MINPACK's gtol; default 0: only an
                          exact zero gradient or F = 0) */
  double step_bound;   /* > 0: least squares: the first trust region's radius over ||D x0||
                          (MINPACK's factor; default 100) */
} dual_solve_options;

void dual_solve_options_init(dual_solve_options *opt);

/* opt may be NULL (the defaults).  Fails with DUAL_ERR_DIMENSION unless m == n. */
int dual_newton(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt,
                int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info,
                int32_t *iters, double *fnorm);

/* opt may be NULL (the defaults).  Fails with DUAL_ERR_DIMENSION unless m >= n >= 1.  iters[b]:
 * the Jacobians taken; fnorm[b]: ||F||_2 at the returned x, the best point found. */
int dual_lsq(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt, int64_t B,
             double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
             double *fnorm);

/* The name of a dual_solve_status ("converged", ...; "unknown" otherwise). */
const char *dual_solve_status_string(int status);

#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* DUALBATCH_H */
