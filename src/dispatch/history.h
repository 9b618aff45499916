/*
 * history.h — what a program's calls measured on one device, and the time it predicts for the
 * next call (AUTO's dispatch, dispatch/dispatch.c).  A call is seen as its measured seconds t
 * against the model's varying part v (dispatch_model.h: its time less the calibration's fixed
 * cost, at unit scale).  Two calls whose v differ by 2x or more give a line, t = F + a v: the
 * program's own fixed cost F (per-call work the calibration's trivial program does not have:
 * lane masks, workspaces, passes) and its per-point rate; one call gives the model scaled through
 * it.  Pure functions: tests/test_dispatch.c checks them against hand-worked figures.
 */
#ifndef DUAL_HISTORY_H
#define DUAL_HISTORY_H

#include <stdint.h>

/* The last DUAL_RATIOS_KEPT ratios of a measured time over its prediction, each clamped to
 * [1/2, 2], and their median: how far a way of predicting falls short or over.  A split's sides
 * are histories (below), which settle near the faster calls, and a split takes the longer of its
 * two varying sides: its sides predict it below its median time, by more the more they vary (on
 * the H200 AUTO kept splitting ba at 1e6, each split 1.16x the GPU's median time alone, its sides
 * predicting less).  The median of a few ratios takes that back (dispatch_model.h) and is not
 * moved by one or two disturbed calls. */
enum { DUAL_RATIOS_KEPT = 5, DUAL_RATIOS_MIN = 3 };
typedef struct dual_ratios {
  double r[DUAL_RATIOS_KEPT];
  int n, next; /* ratios kept; the slot of the next */
} dual_ratios;

/* Keep measured / predicted (both > 0; else nothing). */
void dual_ratios_add(dual_ratios *q, double measured, double predicted);

/* The median of the kept ratios (of four, the mean of the middle two); 1 with fewer than
 * DUAL_RATIOS_MIN (a choice run once or twice at a size keeps its optimistic estimate, so that it
 * is run again rather than left out on one or two disturbed calls). */
double dual_ratios_median(const dual_ratios *q);

typedef struct dual_device_history {
  double v[2], t[2]; /* [0] the latest batch size's call, [1] one at least 2x away in v */
  int n;             /* calls kept (0, 1 or 2) */
  int held;          /* 1: the last call was over DUAL_HISTORY_SUSPECT x its prediction, held back */
} dual_device_history;

/* A call this many times slower than predicted is held back until the next confirms it (over
 * DUAL_HISTORY_CONFIRM x its prediction): a lone slow call is a disturbance (another tenant, a
 * workspace's first touch, a compile in the background), and one kept would keep the device out
 * of use at that size, its estimate never measured again.  The first call too, against the
 * model's prediction: on the H200 AUTO's second GPU call of ba at 1e5 (its first in a fresh
 * process was not learned) took 25 ms where the GPU's median was 1.8 ms, and, kept as the GPU's
 * only call, it left every call of the size on the CPU at 1.9x the GPU's time. */
enum { DUAL_HISTORY_SUSPECT = 3, DUAL_HISTORY_CONFIRM = 2 };

/* The part of a measured t over the fixed cost: t - fixed, or half of t where t is under twice
 * the fixed cost (a call that fast says its own fixed cost was less; the two meet at 2 fixed). */
double dual_history_over(double fixed, double t);

/* The predicted seconds of a call with varying part v, fixed the calibration's fixed cost: the
 * model (fixed + v) with no call kept; through the line of two; else the kept call nearer in v
 * scaled by v: fixed + (t - fixed) v / v_kept. */
double dual_history_predict(const dual_device_history *h, double fixed, double v);

/* Keep a call (v > 0, t > 0): one within 2x in v of the latest moves it (in log space) halfway
 * down to a faster call, a quarter of the way up to a slower one (a disturbance only slows a
 * call), by at most 4x in its time; one farther away becomes the latest, the latest
 * the other.  A call over DUAL_HISTORY_SUSPECT x the prediction is held back unless the one
 * before was held too and this one is over DUAL_HISTORY_CONFIRM x (then it is kept). */
/* Returns 1 when the call was kept, 0 when held back or without time. */
int dual_history_add(dual_device_history *h, double fixed, double v, double t);

#endif /* DUAL_HISTORY_H */
