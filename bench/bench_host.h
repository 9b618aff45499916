/*
 * bench_host.h — helpers shared by the benchmark harnesses (bench_cpu.c, bench_cpu_hess.c,
 * bench_cpu_grad.c, bench_crossover.c, bench_sgrad.c, bench_hvp.c).
 */
#ifndef DUAL_BENCH_HOST_H
#define DUAL_BENCH_HOST_H

#include <stddef.h>
#include <stdint.h>

enum { BENCH_MAX_REPS = 101 };

/* malloc that prints and exits on failure (a benchmark harness, not the library). */
void *bench_xmalloc(size_t bytes);

/* Median of count <= BENCH_MAX_REPS values. */
double bench_median(const double *v, int count);

/* Monotonic seconds. */
double bench_now(void);

/* Write `bytes` of data to dir/name; prints and exits on failure. */
void bench_write_file(const char *dir, const char *name, const void *data, size_t bytes);

/* A comma-separated list of batch sizes ("1e3,1e4") into at most cap values; their count, and
 * the largest in *largest. */
int bench_parse_batches(const char *list, double *out, int cap, int64_t *largest);

/* The options the GPU harnesses share (bench_hvp.c, bench_sgrad.c): --dir DIR (points and
 * reference results for the peers), --batches LIST, --reps R, --commit SHA. */
typedef struct bench_args {
  const char *dir, *commit, *batches;
  int reps;
} bench_args;

/* No dir, commit "unknown", batches 1e3,1e4,1e5, 7 reps. */
void bench_args_init(bench_args *a);

/* Takes option `opt` with value `val` (NULL: none left) when it is one of the shared ones:
 * returns 1 (the caller skips the value), else 0. */
int bench_args_take(bench_args *a, const char *opt, const char *val);

/* The reps clamped (1 .. BENCH_MAX_REPS, else 7) and the batch sizes into bs (at most cap):
 * their count, and the largest in *largest. */
int bench_args_batches(bench_args *a, double *bs, int cap, int64_t *largest);

/* First line of a shell command's output (trailing newline removed); "" when it fails. */
void bench_command_line(const char *cmd, char *buf, size_t cap);
/* "AMD EPYC (family 26, model 2)" from /proc/cpuinfo. */
void bench_cpu_model(char *buf, size_t cap);
/* The 1, 5 and 15 minute load averages. */
void bench_load_average(char *buf, size_t cap);

/* How busy the machine was: the busy ticks of all CPUs and of this process (with its waited-for
 * children: forked peer workers) around timed calls; the difference is what other processes
 * used, as a share of wall time x CPUs (-1: unknown). */
#define BENCH_OTHERS_WARN 0.10
typedef struct bench_cpu_sample {
  double wall;
  long long busy, self;
  int ok;
} bench_cpu_sample;
void bench_cpu_sample_take(bench_cpu_sample *s);
double bench_others_share(const bench_cpu_sample *a, const bench_cpu_sample *b);

#endif /* DUAL_BENCH_HOST_H */
