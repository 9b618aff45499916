/*
 * solve_common.h — what the batched solvers share: option checks, the work-chunk size, and the
 * engine calls on the compacted active points (gathered x and p, results contiguous).
 */
#ifndef DUAL_SOLVE_COMMON_H
#define DUAL_SOLVE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "dualbatch.h"
#include "solve/jacobian_colors.h"

/* Options `opt` (NULL: the defaults) checked and copied into *out; a DUAL_ERR_* status with the
 * context's error naming `fn` and the field otherwise. */
int dual_solve_check_options(dual_context *ctx, const char *fn, const dual_solve_options *opt,
                             dual_solve_options *out);

/* The arrays' checks both solvers make (B, x, ldx, p, ldp against the program); a DUAL_ERR_*
 * status with the context's error naming `fn` otherwise. */
int dual_solve_check_arrays(dual_context *ctx, const char *fn, const dual_program *prog, int64_t B,
                            const double *x, int64_t ldx, const double *p, int64_t ldp);

/* Where the arrays live: always host memory on a CPU context (CUDA is not touched); on a GPU
 * context all host or all device memory (cudaMalloc; NULL arrays do not count), *device says
 * which.  Mixed memory, or device memory where the solver takes none (allow_device 0), is a
 * DUAL_ERR_ARGUMENT naming `fn`. */
int dual_solve_check_memory(dual_context *ctx, const char *fn, int allow_device, const double *x,
                            const double *p, const int32_t *info, const int32_t *iters,
                            const double *fnorm, int *device);

/* Points per chunk of work for a system of n unknowns, m residuals and np parameters: the
 * chunk's work arrays stay near 64 MiB. */
int64_t dual_solve_chunk(int64_t B, int n, int m, int np);

/* The chunk capacity where each CPU thread solves chunks of its own, for per_point bytes of work
 * arrays a point: near 2 MiB a chunk, so that they stay in the thread's cache from the engine's F
 * and J through the factorizations (dual_newton at n = 32, 15 and 3 ran 1.4-1.7x faster than
 * with 64 MiB chunks, one thread; 512 and 128 KiB ran slower, 8 MiB the same), in whole blocks of
 * 64 points (the CPU engine's block: a round of 79 points pays for 128), at least 64 and at most
 * a thread's share of B. */
int64_t dual_solve_thread_chunk(int64_t B, int64_t per_point, int threads);

/* Solve the B points in chunks of at most C, chunk after chunk on T threads (T <= 1: this
 * thread), each thread with its own worker (worker t at (char *)workers + t * size): fn(worker,
 * b0, cnt) solves points b0 .. b0 + cnt and writes their results.  On one thread every chunk but
 * the last has C points; on T the threads take chunks as they finish, of sizes that shrink as the
 * batch runs out (next_chunk in solve_common.c), so that they finish together: chunks of a fixed
 * size made 16 threads wait for the slowest one's last chunk (bratu15, B = 1e5: 33 chunks a turn
 * of 16 threads).  The first failure's status is returned and the chunks not yet handed out are
 * skipped. */
typedef int (*dual_solve_chunk_fn)(void *worker, int64_t b0, int64_t cnt);
int dual_solve_run_chunks(int64_t B, int64_t C, int T, void *workers, size_t size, dual_solve_chunk_fn fn);

/* The structural band of the program's Jacobian dF/dx (square or not): *lo = max (i - j) and
 * *hi = max (j - i) over the entries (i, j) that may be nonzero, from the lane masks the engines
 * evaluate it by (engine/lanes.h: an entry outside them is an exact zero on every engine).  A
 * Jacobian without entries gets 0, 0; where the scratch cannot be allocated, -1, -1 (dense). */
void dual_solve_jacobian_band(const dual_program *prog, int32_t *lo, int32_t *hi);

/* Gather the k points idx[0..k) of x (point stride ldx) and p (ldp; p may be NULL) into the
 * contiguous xa [k][n] and pa [k][np]. */
void dual_solve_gather(int64_t k, const int64_t *idx, int n, int np, const double *x, int64_t ldx,
                       const double *p, int64_t ldp, double *xa, double *pa, int threads);

/* The structure and coloring of prog's Jacobian for a solver (jacobian_colors.h).  The colored
 * view is dropped where the context takes reverse mode for Jacobians (the view is forward mode
 * only, and J by rows is what the context asked), and with fewer_passes where it would not save
 * the CPU engine a pass: the engine's lane masks already skip a dense pass's structural zeros,
 * so the view saves the values' recomputation in the passes it removes, and costs an expansion
 * of whole J (2-core AMD, 2 threads, dual_newton: bratu48 1.50x faster with it, from three passes
 * to one; kin and bratu15, one pass either way, 2 % slower; dual_newton on a CPU context now
 * expands one point at a time instead, dual_solve_residuals_cpu_packed).  DUAL_ERR_NO_MEMORY with the context's
 * error naming `fn` otherwise. */
int dual_solve_colors(dual_context *ctx, const char *fn, const dual_program *prog, int fewer_passes,
                      dual_jac_colors *jc);

/* F (and J, row-major m x n, when J is not NULL) at the k contiguous points xa, pa (the solvers
 * judge a point by the finiteness of F and J, not by the engine's flag words).  J by the colored
 * view where jc has one (jc may be NULL): J S from the engine, expanded in place, the same bits
 * as the dense pass.  Any engine error is the call's. */
int dual_solve_residuals(dual_context *ctx, const dual_program *prog, const dual_jac_colors *jc,
                         int64_t k, const double *xa, const double *pa, double *F, double *J);

/* dual_solve_residuals on a CPU context with `threads` threads (dual_run_cpu_quiet): the same
 * bits, and nothing of the context changes but its error, so that threads may call it at once. */
int dual_solve_residuals_cpu(dual_context *ctx, const dual_program *prog, const dual_jac_colors *jc,
                             int64_t k, const double *xa, const double *pa, double *F, double *J,
                             int threads);

/* F and J S by jc's colored view (which it must have) on this thread alone, J S left packed:
 * point i's (m x ncolors, row-major) at JS + i * m * ncolors, for the caller to expand one point
 * at a time (dual_jac_expand) where it uses J. */
int dual_solve_residuals_cpu_packed(dual_context *ctx, const dual_jac_colors *jc, int64_t k, const double *xa,
                                    const double *pa, double *F, double *JS);

/* A solver's public call begins and ends (dual_solve_end returns st): the outermost call's record
 * (dual_context_last_device, _last_note) is the whole call's.  Where any part of it fell back to
 * the CPU (dual_solve_fell_back), it ends on the CPU with the first fallback's note, whatever an
 * inner call (dual_newton's rescue calls dual_lsq) or a later slice on the GPU recorded since. */
void dual_solve_begin(dual_context *ctx);
int dual_solve_end(dual_context *ctx, int st);

/* After the GPU solved the first `done` of B points and failed with `st`: 1 when the rest may be
 * solved on the CPU (an AUTO context, host memory, not an argument error), with *note the note
 * that says so (heap; the caller passes it to dual_solve_fell_back, or frees it). */
int dual_solve_may_fall_back(dual_context *ctx, const char *fn, int st, int device_mem, int64_t B,
                             int64_t done, char **note);

/* The CPU finished the rest: the error cleared, `note` set, the last device the CPU. */
void dual_solve_fell_back(dual_context *ctx, char *note);

/* A host-array solver call's arguments, for its shares over several GPUs (multi_gpu.h), and the
 * call of `solver` (dual_newton, dual_lsq) on points [first, first + count) of them on ctx. */
typedef struct dual_solve_args {
  const dual_program *prog;
  const dual_solve_options *opt;
  double *x;
  int64_t ldx;
  const double *p;
  int64_t ldp;
  int32_t *info, *iters;
  double *fnorm;
} dual_solve_args;
#define DUAL_SOLVE_SHARE(solver, ctx, a, first, count)                                                 \
  solver((ctx), (a)->prog, (a)->opt, (count), (a)->x + (first) * (a)->ldx, (a)->ldx,                   \
         (a)->p != NULL ? (a)->p + (first) * (a)->ldp : NULL, (a)->ldp,                                \
         (a)->info != NULL ? (a)->info + (first) : NULL, (a)->iters != NULL ? (a)->iters + (first) : NULL, \
         (a)->fnorm != NULL ? (a)->fnorm + (first) : NULL)

/* The threads the solvers' per-point loops use (the context's setting; 0 = the default). */
int dual_solve_threads(const dual_context *ctx);

#endif /* DUAL_SOLVE_COMMON_H */
