/*
 * call_shape.c — dual_call_shape_of (call_shape.h).  The modes' work over one value sweep is the
 * cost model run.c's AD-mode choice is fitted with (bench/NOTES.md, in its units of a value sweep
 * per instruction: 4 on the CPU, 8 on the GPU): it only needs to be right within a factor of a
 * few, since each program's measured time replaces it (dispatch/dispatch.c).
 */
#include "dispatch/call_shape.h"

#include "bytecode.h"
#include "program.h"

int dual_op_is_special(int op) {
  return op >= 0 && op < DUAL_OP_COUNT && (dual_op_table[op].flags & F_SPECIAL) != 0;
}

/* Work of a first-order job over one value sweep, forward at `width` or reverse, on the CPU
 * (gpu 0) or the GPU. */
static double first_order(const dual_job *job, int width, int gpu, int reverse) {
  const dual_program *prog = job->prog;
  if (job->mode == DUAL_MODE_EVAL) return 1.0;
  const int64_t cols = dual_program_jacobian_columns(prog), n = cols > 0 ? cols : 1;
  const double s = job->mode == DUAL_MODE_JACOBIAN ? (double)prog->n_out : 1.0;
  if (reverse) return gpu ? (3.0 + 12.0 * s) / 8.0 : (12.0 + 28.0 * s) / 4.0;
  const int w = job->mode == DUAL_MODE_JVP ? 1 : width > 0 ? width : 1;
  const double passes = job->mode == DUAL_MODE_JVP ? 1.0 : (double)((n + w - 1) / w);
  return gpu ? passes * (8.0 + (double)(n < w ? n : w)) / 8.0 : passes * (w + 4.0) / 4.0;
}

/* Work of a second-order job over one value sweep (run.c's choose_reverse2 models). */
static double second_order(const dual_job *job, int gpu) {
  const double n = job->prog->n_in, m = job->prog->n_out, passes = (double)((job->prog->n_in + 30) / 31);
  const double unit = gpu ? 8.0 : 4.0;
  if (job->mode == DUAL_MODE_HVP)
    return job->reverse ? (gpu ? 13.0 + 20.0 * m : 40.0 + 60.0 * m) / unit
                        : (gpu ? passes * (14.0 + (n < 31 ? n : 31)) : passes * 128.0) / unit;
  return job->reverse ? n * (100.0 + 100.0 * m) / unit : (n * (n + 1.0) / 2.0 + 4.0 * n) / unit;
}

static double work(const dual_job *job, int width, int gpu) {
  double w = dual_mode_is_second_order(job->mode) ? second_order(job, gpu)
                                                  : first_order(job, width, gpu, job->reverse);
  return job->samples > 0 ? w * (double)job->samples : w;
}

void dual_call_shape_count(const dual_program *prog, double *arith, double *special) {
  *arith = *special = 0.0;
  for (int64_t i = 0; i < prog->n_instr; ++i) {
    const int op = DUAL_INSTR_OP(prog->code + i * DUAL_INSTR_WORDS);
    if (dual_op_is_special(op)) *special += 1.0;
    else *arith += 1.0;
  }
}

void dual_call_shape_of(const dual_job *job, int cpu_width, int gpu_tier, dual_call_shape *s) {
  double arith, special;
  dual_call_shape_count(job->prog, &arith, &special);
  dual_call_shape_from(job, cpu_width, gpu_tier, arith, special, s);
}

void dual_call_shape_from(const dual_job *job, int cpu_width, int gpu_tier, double arith, double special,
                          dual_call_shape *s) {
  const dual_program *prog = job->prog;
  const dual_batch *b = job->b;
  s->B = b->count;
  s->arith = arith, s->special = special;
  s->cpu_factor = work(job, cpu_width, 0);
  s->gpu_factor = work(job, job->width, 1);
  /* the forward engine's large blocks (cpu/engine.c; dual_sgrad's forward samples too); the
   * reverse and second-order engines take 16 points */
  const int other = job->reverse || dual_mode_is_second_order(job->mode);
  s->cpu_block = other ? 16 : cpu_width == 0 ? 256 : cpu_width <= 2 ? 128 : 64;
  s->gpu_chunk = (s->B + 3) / 4; /* the staging path's chunks: at least four (gpu_stage.c) */
  const double n = prog->n_in, m = prog->n_out, np = prog->n_par;
  const int64_t cols = dual_program_jacobian_columns(prog);
  double in = n + np, out = b->y != NULL ? m : 0.0;
  if (job->mode == DUAL_MODE_JVP || job->mode == DUAL_MODE_HVP) in += n;
  if (job->mode == DUAL_MODE_VJP) in += m;
  if (b->d != NULL) {
    switch (job->samples > 0 ? DUAL_MODE_SGRAD : job->mode) {
    case DUAL_MODE_JVP: out += m; break;
    case DUAL_MODE_GRADIENT: case DUAL_MODE_VJP: case DUAL_MODE_SGRAD: out += n; break;
    default: out += m * (double)cols; break;
    }
  }
  if (b->h != NULL)
    out += job->samples > 0 ? n
           : job->mode == DUAL_MODE_HVP ? m * n
           : b->h_layout == DUAL_HESSIAN_PACKED ? m * n * (n + 1.0) / 2.0 : m * n * n;
  s->in_bytes = 8.0 * in;
  s->out_bytes = 8.0 * out + (b->status != NULL ? 4.0 : 0.0);
  s->gpu_tier = gpu_tier;
  s->cpu_scale = s->gpu_scale = 1.0;
}
