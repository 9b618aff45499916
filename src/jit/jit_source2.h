/*
 * jit_source2.h — the compiled tier's source generator for second order (issue 17, first step):
 * from a validated program and a Hessian or HVP job, CUDA C for one kernel per second-order pass
 * of engine/pass2.h, straight-line code from the pass's plan (engine/plan2.h): a local per value,
 * tangent lane and structurally nonzero pair component.  Every value and lane is the shared step
 * of the interpreters (engine/value_step.h, engine/tangent_terms.h), every component the
 * interpreters' pair formula (engine/interp2_ops.h), so results are bitwise those of the CPU and
 * the GPU interpreter.  Host code, independent of CUDA.  The results leave through the stager
 * (jit_stage2.h).
 */
#ifndef DUAL_JIT_SOURCE2_H
#define DUAL_JIT_SOURCE2_H

#include <stdint.h>

#include "exec.h"

/* Kernel `pass` of a second-order module is named "dual_jit2_p<pass>". */
#define DUAL_JIT2_KERNEL_NAME "dual_jit2_p%d"

/* The source of the kernels of every pass of `job` (mode DUAL_MODE_HESSIAN or DUAL_MODE_HVP; the
 * job's width, h layout and nested-Hessian choice decide the passes, as for the interpreters);
 * *npass receives their number.  Each kernel takes a dual_jit_args (jit/jit_args.h) and runs one
 * thread per point.  Returns a heap string, or NULL with a reason in why. */
char *dual_jit_source2(const dual_job *job, int *npass, char *why, int64_t why_cap);

/* The same passes for the CPU compiled tier (jit/cpu_kernel.h, jit/cpu_jit.h): C with a function
 * per pass over a block of points, named and called as the first-order target's
 * (DUAL_CPU_JIT_PASS_NAME, dual_cpu_jit_pass), the body in one `omp simd` point loop, its stored
 * values staged and copied out per point; a point whose stored entry came out NaN or infinite
 * runs again through the guarded copy, as a GPU warp does. */
char *dual_jit_source2_cpu(const dual_job *job, int *npass, char *why, int64_t why_cap);

#endif /* DUAL_JIT_SOURCE2_H */
