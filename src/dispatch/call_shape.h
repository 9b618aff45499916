/*
 * call_shape.h — a checked job as AUTO's dispatch model sees it (dispatch/dispatch_model.h): its
 * program's instructions by kind, the mode's work over one value sweep on each engine, the CPU
 * engine's block of points, and the bytes a point copies to and from a GPU.
 */
#ifndef DUAL_CALL_SHAPE_H
#define DUAL_CALL_SHAPE_H

#include "dispatch/dispatch_model.h"
#include "exec.h"

/* Whether an op counts as a special-function instruction in the model (its F_SPECIAL flag in the
 * op table, dual/ops.def); the others are arithmetic. */
int dual_op_is_special(int op);

/* The shape of `job` (its GPU form: the width and AD mode run.c chose for a GPU context) with
 * cpu_width the forward width the CPU engine would take for it, and gpu_tier whether the GPU
 * would run it compiled; the measured scales are 1. */
void dual_call_shape_of(const dual_job *job, int cpu_width, int gpu_tier, dual_call_shape *s);

/* The program's instructions by kind (a pass over its code: AUTO keeps them per program, the
 * pass took 2 us a call for kin's 621 instructions), and the shape from them. */
void dual_call_shape_count(const dual_program *prog, double *arith, double *special);
void dual_call_shape_from(const dual_job *job, int cpu_width, int gpu_tier, double arith, double special,
                          dual_call_shape *s);

#endif /* DUAL_CALL_SHAPE_H */
