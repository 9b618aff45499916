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

/* The CPU's figures at `threads` threads, measured on this machine (calibration programs
 * evaluated on a CPU context: a few tens of milliseconds).  c->gpu is left as it was. */
int dual_calibration_measure_cpu(dual_context *ctx, int threads, dual_calibration *c);

/* The context's calibration for `threads` threads: the context's copy, else the disk cache's
 * entry, else measured (the CPU's figures, and the GPU's on a context with a GPU: gpu.h) and
 * stored.  force: measure again even if known.  A DUAL_ERR_* status where measuring fails (the
 * caller then keeps its device); a cache that cannot be written is not an error. */
int dual_calibration_get(dual_context *ctx, int threads, int force, dual_calibration *out);

/* The cache entry's key for `threads` threads on this machine (the GPU's description included). */
void dual_calibration_key(const dual_context *ctx, int threads, uint8_t key[32]);

#endif /* DUAL_CALIBRATION_H */
