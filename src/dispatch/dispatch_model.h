/*
 * dispatch_model.h — AUTO's model of where a host-array call runs fastest (issue 20): the time of
 * a call on the CPU, on the GPU (through the staging path) and split between the two, from the
 * machine's calibration (dispatch/calibration.h) and the call's shape (dispatch/call_shape.h), and
 * the choice among them.  Pure functions of their arguments: tests/test_dispatch.c drives them
 * with synthetic calibrations.
 */
#ifndef DUAL_DISPATCH_MODEL_H
#define DUAL_DISPATCH_MODEL_H

#include <stdint.h>

#include "dispatch/history.h"

/* What the calibration measured on this machine.  Seconds per instruction are those of one value
 * sweep (an eval) per point; a mode's work is a multiple of it (dual_call_shape's factors). */
typedef struct dual_calibration {
  int threads;             /* the CPU's thread count when measured */
  double cpu_call_s;       /* a CPU call's fixed cost (the threads' start and end, workspaces) */
  double cpu_arith_s;      /* per thread: seconds per arithmetic instruction per point */
  double cpu_special_s;    /* per thread: seconds per special-function instruction per point
                              (division, square root, exp, log, pow, the trigonometric ones) */
  int gpu;                 /* 1: the GPU's figures below were measured */
  double gpu_call_s;       /* a host-array GPU call's fixed cost (launches, waits, small copies) */
  double gpu_in_Bps;       /* bytes per second from the caller's arrays to the device (staged
                              by `threads` threads) */
  double gpu_out_Bps;      /* bytes per second from the device to the caller's arrays */
  double gpu_in_Bps_1;     /* the same with one staging thread (a split's GPU side has a few) */
  double gpu_out_Bps_1;
  double gpu_arith_s[2];   /* a full GPU: seconds per arithmetic instruction per point,
                              [0] the interpreter, [1] the compiled tier */
  double gpu_special_s[2]; /* the same per special-function instruction */
  double gpu_lat_arith_s[2];   /* one point alone (a kernel's least time): per arithmetic */
  double gpu_lat_special_s[2]; /* and per special-function instruction */
  double split_call_s;     /* a split call's extra cost: the GPU side handed to its host thread
                              and waited for */
} dual_calibration;

/* A call as the model sees it. */
typedef struct dual_call_shape {
  int64_t B;                   /* points */
  double arith, special;       /* the program's instructions of each kind (one value sweep) */
  double cpu_factor;           /* the mode's work on the CPU engine over one value sweep */
  double gpu_factor;           /* the same on the GPU */
  int64_t cpu_block;           /* the CPU engine's block of points (a thread takes whole blocks) */
  int64_t gpu_chunk;           /* points per chunk of the GPU's staging path (0: one chunk) */
  double in_bytes, out_bytes;  /* per point, copied to and from the device */
  int gpu_tier;                /* 0: the GPU would interpret, 1: run the compiled kernel */
  double cpu_scale, gpu_scale; /* measured over modelled time of this program and mode on each,
                                  its varying part (all but the call's fixed cost; 1 until
                                  measured) */
} dual_call_shape;

/* Modelled seconds of the shape's first B points (0 <= B <= s->B) on the CPU with `threads`
 * threads, and on the GPU with `staging` host threads gathering and scattering its copies (the
 * copies' rate each way: the calibration's at all threads, or `staging` times its one-thread rate
 * where that is less). */
double dual_model_cpu(const dual_calibration *c, const dual_call_shape *s, int64_t B, int threads);
double dual_model_gpu(const dual_calibration *c, const dual_call_shape *s, int64_t B, int staging);

/* The splits of the same program and product measured before with k staging threads on the GPU's
 * side: each side's calls as a history (history.h) whose v is the side's points and whose fixed
 * cost is the calibration's for its device, so a side's time is a line in its points (its own
 * fixed part: a kernel's latency, the staging threads' hand-over) once two splits 2x apart in a
 * side's points were kept, else one kept split's scaled through the calibration's fixed cost. */
typedef struct dual_split_seen {
  int64_t B; /* the batch of the latest split kept (0: none) */
  int k;     /* the GPU side's staging threads (0: an empty entry) */
  dual_device_history gpu, cpu;
  dual_ratios over; /* splits at batches within 2x of B: the longer side's time (and the split's
                       extra cost) over dual_split_seen_sides's, before each was kept */
} dual_split_seen;

/* Where AUTO runs the call. */
/* A split must be modelled this much faster than the better device: 10 % where the model's
 * (each side's rate from the calibration: it does not see how the sides slow each other), 8 %
 * where a measured split's (its sides' measured rates, balanced, times the split's measured
 * overhead).  On the H200 the best hand-made splits gained 3-9 % at ba 1e5, kin 1e5 and hess
 * 1e4 (bench/results/probe-split-2026-11-28-h200.txt), 10-15 % at kin 1e6; with a 3 % margin
 * AUTO kept splitting kin 1e5 on predictions 3-6 % under the GPU's while its splits took
 * 1.05-1.2x the GPU alone (host memory shared by the two sides, the prediction from two or three
 * splits: bench/results/dispatch-trace-2026-11-29d-h200.txt). A gain under the machine's noise
 * is not worth a split's spread. */
enum { DUAL_PLAN_MIN_SPLIT_GAIN_PCT = 10, DUAL_PLAN_MIN_MEASURED_SPLIT_GAIN_PCT = 8 };
typedef struct dual_dispatch_plan {
  int device;         /* DUAL_DEVICE_CPU, DUAL_DEVICE_GPU or DUAL_DEVICE_HYBRID */
  int64_t gpu_points; /* HYBRID: points [0, gpu_points) on the GPU, the rest on the CPU */
  int gpu_threads;    /* HYBRID: the GPU side's host threads (its staging); the CPU side has the
                         others */
  double t_cpu, t_gpu, t_split; /* modelled seconds (t_split: the best split's, or 0 when none) */
  int64_t split_points; /* the best split's GPU points and staging threads, chosen or not (0: none) */
  int split_threads;
  int split_measured;   /* 1: the best split is a measured one's (seen), 0 the model's */
} dual_dispatch_plan;

/* The plan for the shape's B points with `threads` CPU threads (a split gives 1, 2, 4, ... up to
 * half of them to the GPU's side, whichever is modelled fastest): the faster device, or a split
 * where it is modelled at least DUAL_PLAN_MIN_SPLIT_GAIN_PCT percent faster than both (a
 * measured one DUAL_PLAN_MIN_MEASURED_SPLIT_GAIN_PCT; each side at least one CPU block).
 * Splits seen at a batch within 4x of this one (seen[0 .. nseen), one per k; entries with k 0 or
 * without both sides kept are passed over; seen may be NULL) stand for the model's: the fastest
 * of them at its sides' balance.  Without the GPU's figures (c->gpu 0), the CPU. */
void dual_dispatch_plan_call(const dual_calibration *c, const dual_call_shape *s, int threads,
                             const dual_split_seen *seen, int nseen, dual_dispatch_plan *p);

/* 1 when `seen` (k > 0, both sides kept) was measured at a batch within 4x of B. */
int dual_split_seen_near(const dual_split_seen *seen, int64_t B);

/* The seconds of B points split at g as `seen`'s two sides predict them: the longer side's and
 * the split's extra cost. */
double dual_split_seen_sides(const dual_calibration *c, const dual_split_seen *seen, int64_t B, int64_t g);

/* The seconds of the shape's B points split as `seen`'s sides predict at their balance (each side
 * at least one CPU block), the split's extra cost included, times the median of seen->over (a
 * median split's time); its GPU points in *g. */
double dual_split_seen_time(const dual_calibration *c, const dual_call_shape *s, const dual_split_seen *seen,
                            int64_t *g);

#endif /* DUAL_DISPATCH_MODEL_H */
