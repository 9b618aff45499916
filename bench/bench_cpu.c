/*
 * bench_cpu.c — dualbatch_bench_cpu: the CPU benchmark of BENCHMARKS.md.  For ba and kin it
 * generates the points once, runs dual_jacobian and the Ceres ceres::Jet peer (bench/peers) on the
 * identical points with 1 thread and all cores (warm-up, then interleaved timed runs, median),
 * checks that both agree (and the peer against central differences), and prints one Markdown
 * table with the machine, date and commit; also each program's first call (one point: on the
 * CPU's compiled tier, DUALBATCH_CPU_TIER=compile, its compile or its load from the disk cache).
 * Run through bench/run_cpu.sh.
 */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_host.h"
#include "bench_points.h"
#include "ceres_jet.h"
#include "dualbatch.h"

#ifndef DUAL_SOURCE_DIR
#define DUAL_SOURCE_DIR "."
#endif

enum { MAX_THREAD_COUNTS = 8, MAX_ROWS = 64, FD_POINTS = 16 };

/* Agreement tolerances.  Both tools evaluate the same formulas in a different operation order,
 * so entries differ by rounding only, amplified on ill-conditioned points (ba: Xc2 near 0).
 * Measured against a long-double Jet evaluation, each tool is off by up to 1.3e-10 (relative,
 * floored) on the 1e5 default ba points; 1e-8 leaves margin and is far below a real error (a
 * wrong term is O(1)).  An entry smaller than CHECK_FLOOR x the point's largest entry counts as
 * that size (cancellation makes such entries' relative difference meaningless).  Central
 * differences carry O(h^2) truncation and O(eps/h) rounding error: 1e-6 relative. */
#define CHECK_TOL 1e-8
#define CHECK_FLOOR 1e-6
#define FD_TOL 1e-6

typedef struct workload {
  const char *name;
  int32_t n, p, m;
  int64_t default_batch;
  const char *program; /* path relative to the source directory */
} workload;

static const workload WORKLOADS[] = {
    {"ba", 15, 2, 2, 1000000, "bench/programs/ba.db"},
    {"kin", 32, 0, 32, 200000, "bench/programs/kin.db"},
};
enum { NUM_WORKLOADS = (int)(sizeof WORKLOADS / sizeof WORKLOADS[0]) };

typedef struct options {
  int run[NUM_WORKLOADS];
  int64_t batch; /* 0: per-workload default */
  int threads[MAX_THREAD_COUNTS];
  int num_threads;
  int width;
  int reps;
  uint64_t seed;
} options;

typedef struct row {
  const char *workload;
  int64_t batch;
  int threads;
  const char *tool;
  double median, lo, hi; /* points/s */
  double ratio;          /* dualbatch / Ceres, or 0 on the Ceres row */
  int wrong;             /* results failed the agreement check */
  double others;         /* share of the CPUs other processes used meanwhile; < 0: unknown */
} row;

static row g_rows[MAX_ROWS];
static int g_num_rows;

/* ---- small utilities --------------------------------------------------------------------- */

static void print_header(const options *opt) {
  char cpu[400], load[128], commit[64], dirty[64], date[64], info[300];
  bench_cpu_model(cpu, sizeof cpu);
  bench_load_average(load, sizeof load);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", commit,
               sizeof commit);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' status --porcelain --untracked-files=no 2>/dev/null",
               dirty, sizeof dirty);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
  char raw[256];
  dual_build_info(raw, (int64_t)sizeof raw);
  size_t len = 0; /* one line: "a\nb\n" -> "a; b" */
  for (const char *c = raw; *c && len + 3 < sizeof info; ++c) {
    if (*c != '\n') {
      info[len++] = *c;
    } else if (c[1]) {
      info[len++] = ';';
      info[len++] = ' ';
    }
  }
  info[len] = '\0';
  printf("# dualbatch CPU benchmark (dualbatch_bench_cpu)\n");
  printf("date:      %s\n", date);
  printf("machine:   %s, %d CPUs\n", cpu, omp_get_num_procs());
  printf("load avg:  %s (1, 5, 15 min, at start)\n", load[0] ? load : "unknown");
  printf("commit:    %s%s\n", commit[0] ? commit : "unknown (not a git checkout, or no commit yet)",
         dirty[0] ? " + uncommitted changes" : "");
  if (opt->width)
    printf("dualbatch: %s; width %d (forced)\n", info, opt->width);
  else
    printf("dualbatch: %s; width automatic\n", info);
  printf("peer:      %s\n", ceres_peer_info());
#if defined(__GNUC__)
  printf("harness:   cc %s\n", __VERSION__);
#endif
  printf("method:    FP64 Jacobians, points/s = B / wall time of one call; warm-up call, then %d "
         "timed calls per tool, interleaved; median [min, max]; others' CPU = share of all CPUs "
         "used by other processes during those calls\n\n",
         opt->reps);
}

/* ---- the two tools behind one signature -------------------------------------------------- */

static void ceres_run(const workload *w, int64_t B, const double *x, const double *p, double *y,
                      double *J, int threads) {
  if (strcmp(w->name, "ba") == 0)
    ceres_ba_jacobian(B, x, p, y, J, threads);
  else
    ceres_kin_jacobian(B, x, y, J, threads);
}

static void ceres_value(const workload *w, const double *x, const double *p, double *y) {
  if (strcmp(w->name, "ba") == 0)
    ceres_ba_value(x, p, y);
  else
    ceres_kin_value(x, y);
}

static int dual_run_jacobian(dual_context *ctx, const dual_program *prog, const workload *w,
                             int64_t B, const double *x, const double *p, double *y, double *J,
                             int32_t *status) {
  int rc = dual_jacobian(ctx, prog, B, x, w->n, w->p ? p : NULL, w->p, y, w->m, J,
                         (int64_t)w->m * w->n, status);
  if (rc != DUAL_SUCCESS) {
    fprintf(stderr, "dualbatch_bench_cpu: %s: dual_jacobian failed: %s: %s\n", w->name,
            dual_status_string(rc), dual_context_last_error(ctx));
  }
  return rc;
}

/* ---- checks ------------------------------------------------------------------------------ */

/* Per point: the largest relative difference over the m + m*n entries of (y, J), both as is and
 * with the floor described at CHECK_FLOOR.  Returns the maxima over all points. */
static void compare(const workload *w, int64_t B, const double *y1, const double *J1,
                    const double *y2, const double *J2, double *max_rel, double *max_floored,
                    int64_t *worst_point) {
  const int64_t mn = (int64_t)w->m * w->n;
  double rel = 0.0, floored = 0.0;
  int64_t worst = 0;
  for (int64_t b = 0; b < B; ++b) {
    double scale = 0.0;
    for (int64_t k = 0; k < w->m; ++k) scale = fmax(scale, fabs(y2[b * w->m + k]));
    for (int64_t k = 0; k < mn; ++k) scale = fmax(scale, fabs(J2[b * mn + k]));
    for (int64_t k = 0; k < w->m + mn; ++k) {
      double a = k < w->m ? y1[b * w->m + k] : J1[b * mn + k - w->m];
      double c = k < w->m ? y2[b * w->m + k] : J2[b * mn + k - w->m];
      double diff = fabs(a - c), big = fmax(fabs(a), fabs(c));
      if (a != c && !(diff <= DBL_MAX)) diff = INFINITY; /* NaN or Inf on one side */
      double r = diff == 0.0 ? 0.0 : diff / fmax(big, DBL_MIN);
      double f = diff == 0.0 ? 0.0 : diff / fmax(big, CHECK_FLOOR * scale);
      if (r > rel) rel = r;
      if (f > floored) {
        floored = f;
        worst = b;
      }
    }
  }
  *max_rel = rel;
  *max_floored = floored;
  *worst_point = worst;
}

/* The peer's Jacobian against central differences of its own plain-double functor, on the first
 * few points: an independent check that the peer computes what BENCHMARKS.md defines. */
static double fd_check(const workload *w, int64_t B, const double *x, const double *p,
                       const double *J) {
  double xp[64], yp[64], ym[64], worst = 0.0;
  const int64_t mn = (int64_t)w->m * w->n;
  for (int64_t b = 0; b < B && b < FD_POINTS; ++b) {
    for (int32_t j = 0; j < w->n; ++j) {
      memcpy(xp, x + b * w->n, (size_t)w->n * sizeof *xp);
      double h = 1e-5 * fmax(1.0, fabs(xp[j]));
      xp[j] = x[b * w->n + j] + h;
      ceres_value(w, xp, p ? p + b * w->p : NULL, yp);
      xp[j] = x[b * w->n + j] - h;
      ceres_value(w, xp, p ? p + b * w->p : NULL, ym);
      for (int32_t i = 0; i < w->m; ++i) {
        double fd = (yp[i] - ym[i]) / (2.0 * h), ad = J[b * mn + (int64_t)i * w->n + j];
        double e = fabs(fd - ad) / fmax(1.0, fabs(ad));
        if (!(e <= worst)) worst = e; /* also catches NaN */
      }
    }
  }
  return worst;
}

/* ---- one workload ------------------------------------------------------------------------ */

static void add_row(const workload *w, int64_t B, int threads, const char *tool,
                    const double *rate, int reps, double ratio, int wrong, double others) {
  if (g_num_rows == MAX_ROWS) return;
  row *r = &g_rows[g_num_rows++];
  r->workload = w->name;
  r->batch = B;
  r->threads = threads;
  r->tool = tool;
  r->median = bench_median(rate, reps);
  r->lo = r->hi = rate[0];
  for (int i = 1; i < reps; ++i) {
    r->lo = fmin(r->lo, rate[i]);
    r->hi = fmax(r->hi, rate[i]);
  }
  r->ratio = ratio;
  r->wrong = wrong;
  r->others = others;
}

/* Returns 0 when both tools ran and agree, 1 on disagreement, 2 on a failure to run. */
static int run_workload(const workload *w, const options *opt, dual_context *ctx) {
  const int64_t B = opt->batch > 0 ? opt->batch : w->default_batch;
  const int64_t mn = (int64_t)w->m * w->n;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", DUAL_SOURCE_DIR, w->program);

  dual_program *prog = NULL;
  if (dual_program_compile_file(ctx, path, &prog) != DUAL_SUCCESS) {
    fprintf(stderr, "dualbatch_bench_cpu: %s\n", dual_context_last_error(ctx));
    return 2;
  }
  if (dual_program_num_inputs(prog) != w->n || dual_program_num_params(prog) != w->p ||
      dual_program_num_outputs(prog) != w->m) {
    fprintf(stderr, "dualbatch_bench_cpu: %s has n=%d p=%d m=%d, expected n=%d p=%d m=%d\n", path,
            dual_program_num_inputs(prog), dual_program_num_params(prog),
            dual_program_num_outputs(prog), w->n, w->p, w->m);
    dual_program_destroy(&prog);
    return 2;
  }

  double *x = bench_xmalloc((size_t)(B * w->n) * sizeof *x);
  double *p = w->p ? bench_xmalloc((size_t)(B * w->p) * sizeof *p) : NULL;
  double *y_d = bench_xmalloc((size_t)(B * w->m) * sizeof *y_d);
  double *y_c = bench_xmalloc((size_t)(B * w->m) * sizeof *y_c);
  double *J_d = bench_xmalloc((size_t)(B * mn) * sizeof *J_d);
  double *J_c = bench_xmalloc((size_t)(B * mn) * sizeof *J_c);
  int32_t *status = bench_xmalloc((size_t)B * sizeof *status);
  if (strcmp(w->name, "ba") == 0)
    bench_points_ba(B, opt->seed, x, p);
  else
    bench_points_kin(B, opt->seed, x);

  int result = 0;
  /* The program's first call, of one point: on the CPU's compiled tier its compile, or its load
   * from the disk cache (run twice, with an empty cache directory and then the filled one). */
  dual_context_set_threads(ctx, 0);
  const double first_t0 = omp_get_wtime();
  if (dual_run_jacobian(ctx, prog, w, 1, x, p, y_d, J_d, status) != DUAL_SUCCESS) {
    result = 2;
    goto done;
  }
  const double first_s = omp_get_wtime() - first_t0;
  const int first_compiled = dual_context_last_tier(ctx) == DUAL_TIER_COMPILE;
  /* Correctness first, with all cores; these calls also fault in the output pages. */
  dual_context_set_threads(ctx, 0);
  if (dual_run_jacobian(ctx, prog, w, B, x, p, y_d, J_d, status) != DUAL_SUCCESS) {
    result = 2;
    goto done;
  }
  ceres_run(w, B, x, p, y_c, J_c, 0);
  int64_t flagged = 0;
  for (int64_t b = 0; b < B; ++b) flagged += status[b] != 0;
  double rel, floored, fd;
  int64_t worst;
  compare(w, B, y_d, J_d, y_c, J_c, &rel, &floored, &worst);
  fd = fd_check(w, B, x, p, J_c);
  int wrong = !(floored <= CHECK_TOL) || !(fd <= FD_TOL);
  printf("%s: B = %lld, n = %d, m = %d, program %s (%lld instructions, %d registers)\n", w->name,
         (long long)B, w->n, w->m, w->program, (long long)dual_program_num_instructions(prog),
         dual_program_num_registers(prog));
  printf("  first call (1 point): %.3g s, %s\n", first_s,
         first_compiled ? "compiled tier (the module's compile, or its load from the disk cache)" : "interpreted");
  printf("  check dualbatch vs Ceres, all %lld points, values + Jacobian: max relative difference "
         "per entry %.3g (entries floored at %.0e x point max: %.3g, point %lld) -> %s\n",
         (long long)B, rel, CHECK_FLOOR, floored, (long long)worst,
         floored <= CHECK_TOL ? "agree" : "DISAGREE");
  printf("  check Ceres vs central differences, first %d points: max error %.3g -> %s\n",
         FD_POINTS, fd, fd <= FD_TOL ? "ok" : "WRONG");
  printf("  dualbatch per-point status flags set: %lld of %lld points\n", (long long)flagged,
         (long long)B);
  if (wrong) result = 1;

  for (int t = 0; t < opt->num_threads; ++t) {
    const int threads = opt->threads[t];
    double rate_d[BENCH_MAX_REPS], rate_c[BENCH_MAX_REPS];
    dual_context_set_threads(ctx, threads);
    /* warm-up: thread pool, caches, page tables */
    if (dual_run_jacobian(ctx, prog, w, B, x, p, y_d, J_d, status) != DUAL_SUCCESS) {
      result = 2;
      goto done;
    }
    ceres_run(w, B, x, p, y_c, J_c, threads);
    bench_cpu_sample before, after;
    bench_cpu_sample_take(&before);
    for (int r = 0; r < opt->reps; ++r) {
      double t0 = omp_get_wtime();
      if (dual_run_jacobian(ctx, prog, w, B, x, p, y_d, J_d, status) != DUAL_SUCCESS) {
        result = 2;
        goto done;
      }
      double t1 = omp_get_wtime();
      ceres_run(w, B, x, p, y_c, J_c, threads);
      double t2 = omp_get_wtime();
      rate_d[r] = (double)B / (t1 - t0);
      rate_c[r] = (double)B / (t2 - t1);
    }
    bench_cpu_sample_take(&after);
    const double others = bench_others_share(&before, &after);
    double med_d = bench_median(rate_d, opt->reps), med_c = bench_median(rate_c, opt->reps);
    printf("  %d thread%s: dualbatch %.3g points/s, Ceres %.3g points/s; other processes used "
           "%.0f%% of the CPUs meanwhile\n",
           threads, threads == 1 ? "" : "s", med_d, med_c, others * 100.0);
    add_row(w, B, threads, "dualbatch", rate_d, opt->reps, med_d / med_c, wrong, others);
    add_row(w, B, threads, "Ceres Jet", rate_c, opt->reps, 0.0, 0, others);
  }

done:
  fflush(stdout);
  dual_program_destroy(&prog);
  free(x);
  free(p);
  free(y_d);
  free(y_c);
  free(J_d);
  free(J_c);
  free(status);
  return result;
}

/* ---- command line ------------------------------------------------------------------------ */

static void usage(FILE *f) {
  fprintf(f,
          "usage: dualbatch_bench_cpu [--workload ba|kin|all] [--batch B] [--threads T[,T...]]\n"
          "                           [--width N] [--reps R] [--seed S]\n"
          "  --workload  which workloads (default all)\n"
          "  --batch     points per call (default 1e6 for ba, 2e5 for kin)\n"
          "  --threads   thread counts to run, comma-separated (default <all cores>,1)\n"
          "  --width     dualbatch multi-dual width 1,2,4,8,16,32 (default 0 = automatic)\n"
          "  --reps      timed calls per tool and thread count (default 7, at least 5 advised)\n"
          "  --seed      RNG seed of the points (default 20261122)\n");
}

static int parse_options(int argc, char **argv, options *opt) {
  memset(opt, 0, sizeof *opt);
  for (int i = 0; i < NUM_WORKLOADS; ++i) opt->run[i] = 1;
  opt->reps = 7;
  opt->seed = 20261122u;
  const int all = omp_get_num_procs();
  opt->threads[opt->num_threads++] = all; /* the headline figure first */
  if (all > 1) opt->threads[opt->num_threads++] = 1;

  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      usage(stdout);
      exit(0);
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "dualbatch_bench_cpu: unknown option or missing value: %s\n", arg);
      return -1;
    }
    const char *val = argv[++i];
    char *end = NULL;
    if (strcmp(arg, "--workload") == 0) {
      int found = 0;
      for (int k = 0; k < NUM_WORKLOADS; ++k) {
        opt->run[k] = strcmp(val, "all") == 0 || strcmp(val, WORKLOADS[k].name) == 0;
        found |= opt->run[k];
      }
      if (!found) {
        fprintf(stderr, "dualbatch_bench_cpu: unknown workload '%s'\n", val);
        return -1;
      }
    } else if (strcmp(arg, "--batch") == 0) {
      double b = strtod(val, &end);
      if (*end || !(b >= 1.0 && b <= 1e10)) {
        fprintf(stderr, "dualbatch_bench_cpu: bad batch '%s'\n", val);
        return -1;
      }
      opt->batch = (int64_t)b;
    } else if (strcmp(arg, "--threads") == 0) {
      opt->num_threads = 0;
      const char *s = val;
      while (*s) {
        long t = strtol(s, &end, 10);
        if (end == s || t < 1 || t > 4096 || opt->num_threads == MAX_THREAD_COUNTS ||
            (*end && *end != ',')) {
          fprintf(stderr, "dualbatch_bench_cpu: bad thread list '%s'\n", val);
          return -1;
        }
        opt->threads[opt->num_threads++] = (int)t;
        s = *end ? end + 1 : end;
      }
      if (opt->num_threads == 0) return -1;
    } else if (strcmp(arg, "--width") == 0) {
      long wd = strtol(val, &end, 10);
      if (*end || wd < 0 || wd > 32) {
        fprintf(stderr, "dualbatch_bench_cpu: bad width '%s'\n", val);
        return -1;
      }
      opt->width = (int)wd;
    } else if (strcmp(arg, "--reps") == 0) {
      long r = strtol(val, &end, 10);
      if (*end || r < 1 || r > BENCH_MAX_REPS) {
        fprintf(stderr, "dualbatch_bench_cpu: --reps must be 1..%d\n", BENCH_MAX_REPS);
        return -1;
      }
      opt->reps = (int)r;
    } else if (strcmp(arg, "--seed") == 0) {
      opt->seed = (uint64_t)strtoull(val, &end, 0);
      if (*end) return -1;
    } else {
      fprintf(stderr, "dualbatch_bench_cpu: unknown option %s\n", arg);
      return -1;
    }
  }
  return 0;
}

/* "1e6", "2e5" for round batches, else the plain count. */
static void format_batch(int64_t B, char *buf, size_t cap) {
  int64_t mant = B;
  int exp10 = 0;
  while (mant >= 10 && mant % 10 == 0) {
    mant /= 10;
    ++exp10;
  }
  if (exp10 >= 3 && mant < 10)
    snprintf(buf, cap, "%lde%d", (long)mant, exp10);
  else
    snprintf(buf, cap, "%lld", (long long)B);
}

/* Returns 1 when some timing was taken while other processes used more than BENCH_OTHERS_WARN. */
static int print_table(void) {
  int disturbed = 0;
  printf("\n| workload | batch B | threads | tool | points/s (median) | [min, max] | "
         "dualbatch / Ceres | others' CPU |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < g_num_rows; ++i) {
    const row *r = &g_rows[i];
    char ratio[64] = "";
    if (r->ratio > 0.0)
      snprintf(ratio, sizeof ratio, "%.2fx%s", r->ratio, r->wrong ? " (RESULTS DISAGREE)" : "");
    char batch[32];
    format_batch(r->batch, batch, sizeof batch);
    char others[32] = "?";
    if (r->others >= 0.0) snprintf(others, sizeof others, "%.0f%%", r->others * 100.0);
    disturbed |= r->others > BENCH_OTHERS_WARN;
    printf("| %s | %s | %d | %s | %.3g | [%.3g, %.3g] | %s | %s |\n", r->workload, batch,
           r->threads, r->tool, r->median, r->lo, r->hi, ratio, others);
  }
  return disturbed;
}

int main(int argc, char **argv) {
  options opt;
  if (parse_options(argc, argv, &opt) != 0) {
    usage(stderr);
    return 2;
  }
  dual_context *ctx = NULL;
  int rc = dual_context_create(&ctx, DUAL_DEVICE_CPU);
  if (rc != DUAL_SUCCESS) {
    fprintf(stderr, "dualbatch_bench_cpu: cannot create a CPU context: %s\n",
            ctx ? dual_context_last_error(ctx) : dual_status_string(rc));
    dual_context_destroy(&ctx);
    return 2;
  }
  if (opt.width && dual_context_set_width(ctx, opt.width) != DUAL_SUCCESS) {
    fprintf(stderr, "dualbatch_bench_cpu: %s\n", dual_context_last_error(ctx));
    dual_context_destroy(&ctx);
    return 2;
  }
  print_header(&opt);
  int worst = 0;
  for (int k = 0; k < NUM_WORKLOADS; ++k) {
    if (!opt.run[k]) continue;
    int r = run_workload(&WORKLOADS[k], &opt, ctx);
    if (r > worst) worst = r;
  }
  const int disturbed = print_table();
  char load[128];
  bench_load_average(load, sizeof load);
  printf("\nload avg at end: %s\n", load);
  if (disturbed)
    printf("\nWARNING: other processes used more than %.0f%% of the CPUs during some timed calls "
           "(column \"others' CPU\"): those figures are not representative; re-run when quiet.\n",
           BENCH_OTHERS_WARN * 100.0);
  if (worst == 1) printf("\nERROR: dualbatch and Ceres disagree (see the checks above).\n");
  dual_context_destroy(&ctx);
  return worst;
}
