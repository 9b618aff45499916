/*
 * calibration.h — the machine figures of AUTO's dispatch model (dispatch/dispatch_model.h):
 * measured at first need, kept in the context, and stored as an entry of the compiled tier's disk
 * cache (jit/jit_cache.h: written atomically, checked on load, a corrupt or foreign entry is
 * measured again and replaced, never used), keyed by the machine (CPU model and count, the GPU
 * and driver, the library version) and the thread count.  `dualbatch calibrate` measures again.
 */
#ifndef DUAL_CALIBRATION_H
#define DUAL_CALIBRATION_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/dispatch_model.h"
#include "dualbatch.h"

/* The text form of a calibration (one "name value" line per figure, after a version line), and
 * back: 0, or -1 when a line is missing, malformed, or a figure is not finite and positive (the
 * GPU's only when `gpu` is 1). */
int dual_calibration_format(const dual_calibration *c, char *buf, size_t cap);
int dual_calibration_parse(const char *text, size_t len, dual_calibration *c);

/* The calibration programs (special 0: a chain of multiply-adds; 1: special functions between a
 * few additions), their instructions counted as the model counts a program's, and the two costs
 * per instruction (*ca arithmetic, *cs special, both positive, cs >= ca) from the per-point times
 * ta and ts of the two programs of (aa, sa) and (as, ss) instructions. */
const char *dual_calibration_source(int special);
struct dual_program;
void dual_calibration_count(const struct dual_program *prog, double *arith, double *special);
void dual_calibration_solve(double ta, double ts, double aa, double sa, double as, double ss, double *ca,
                            double *cs);

/* The CPU's figures at `threads` threads, measured on this machine (calibration programs
 * evaluated on a CPU context: a few tens of milliseconds).  c->gpu is left as it was. */
int dual_calibration_measure_cpu(dual_context *ctx, int threads, dual_calibration *c);

/* The context's calibration for `threads` threads: the context's copy, else the disk cache's
 * entry, else measured (the CPU's figures, and the GPU's on a context with a GPU: gpu.h) and
 * stored.  force: measure again even if known, the compiled tier's kernels too (without it, a
 * first measurement takes the interpreter's for them).  A DUAL_ERR_* status where measuring
 * fails (the caller then keeps its device); a cache that cannot be written is not an error. */
int dual_calibration_get(dual_context *ctx, int threads, int force, dual_calibration *out);

/* The cache entry's key for `threads` threads on this machine (the GPU's description included). */
void dual_calibration_key(const dual_context *ctx, int threads, uint8_t key[32]);

#endif /* DUAL_CALIBRATION_H */
