/*
 * interp_loads.h — the loads of inputs' values, parameters and constants and the NaN/Inf flag
 * test, shared by the CPU block interpreters of first order (interp_block.h), second order
 * (interp2_block.h) and reverse mode (interp_rev_block.h); the includer defines DUAL_POINTS and
 * DUAL_VAL and has job, b, p0, nb, st, ra, dst and prog in scope.
 */
#ifndef DUAL_CPU_INTERP_LOADS_H
#define DUAL_CPU_INTERP_LOADS_H

#include "engine/draws.h"
#include "engine/value_step.h" /* DUAL_FINITE_FLAGS, DUAL_INPUT_FLAGS */

/* x[i] of every point in the block into the register's value row, with the non-finite check
 * (the start of each interpreter's LDX; a padded point repeats the block's first). */
#define DUAL_LOAD_X_VALUES()                                                                     \
  {                                                                                              \
    double *DUAL_RESTRICT vr = DUAL_VAL(dst);                                                    \
    const double *xs = b->x + (int64_t)ra * b->x_es + p0 * b->x_ps;                              \
    const int64_t xps = b->x_ps;                                                                 \
    DUAL_POINTS(p) {                                                                             \
      double v = xs[(p < nb ? p : 0) * xps];                                                     \
      vr[p] = v;                                                                                 \
      st[p] |= DUAL_INPUT_FLAGS(v);                                     \
    }                                                                                            \
  }

/* Seed lane row `tr` of input i (= ra) for every point: the direction's v[i] (JVP, HVP), with the
 * non-finite check, when `from_v`; else the unit seed 1. */
#define DUAL_SEED_ROW(tr, from_v)                                                                \
  if (from_v) {                                                                                  \
    const double *vs = b->v + (int64_t)ra * b->v_es + p0 * b->v_ps;                              \
    const int64_t vps = b->v_ps;                                                                 \
    DUAL_POINTS(p) {                                                                             \
      double v = vs[(p < nb ? p : 0) * vps];                                                     \
      (tr)[p] = v;                                                                               \
      st[p] |= DUAL_INPUT_FLAGS(v);                                     \
    }                                                                                            \
  } else {                                                                                       \
    DUAL_POINTS(p) { (tr)[p] = 1.0; }                                                            \
  }

/* p[i] of every point in the block, with the non-finite check. */
#define DUAL_ENGINE_LDP()                                                                        \
  {                                                                                              \
    double *DUAL_RESTRICT vr = DUAL_VAL(dst);                                                    \
    const double *ps = b->p + (int64_t)ra * b->p_es + p0 * b->p_ps;                              \
    const int64_t pps = b->p_ps;                                                                 \
    DUAL_POINTS(p) {                                                                             \
      double v = ps[(p < nb ? p : 0) * pps];                                                     \
      vr[p] = v;                                                                                 \
      st[p] |= DUAL_INPUT_FLAGS(v);                                     \
    }                                                                                            \
  }

#define DUAL_ENGINE_LDK()                                                                        \
  {                                                                                              \
    double *DUAL_RESTRICT vr = DUAL_VAL(dst);                                                    \
    const double kv = prog->consts[ra];                                                          \
    DUAL_POINTS(p) { vr[p] = kv; }                                                               \
  }

/* Random draw ra of every point in the block (engine/draws.h; a padded point repeats the
 * block's first). */
#define DUAL_ENGINE_DRAW_ROW(normal)                                                             \
  {                                                                                              \
    double *DUAL_RESTRICT vr = DUAL_VAL(dst);                                                    \
    const int64_t q0_ = job->point0 + p0;                                                        \
    for (int p = 0; p < nb; ++p)                                                                 \
      vr[p] = dual_draw_value(normal, job->seed, q0_ + p, job->sample, job->antithetic, ra);    \
    const double first_ = vr[0];                                                                 \
    DUAL_POINTS(p) { vr[p] = p < nb ? vr[p] : first_; }                                          \
  }
#define DUAL_ENGINE_RNORM() DUAL_ENGINE_DRAW_ROW(1)
#define DUAL_ENGINE_RUNIF() DUAL_ENGINE_DRAW_ROW(0)

#endif /* DUAL_CPU_INTERP_LOADS_H */
