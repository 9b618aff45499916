/*
 * bench_host.c — what the benchmark harnesses share: memory that exits on failure, medians, a
 * clock, files for the peers, batch lists, the machine's description, and how busy it was.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_host.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void *bench_xmalloc(size_t bytes) {
  void *ptr = malloc(bytes ? bytes : 1);
  if (!ptr) {
    fprintf(stderr, "dualbatch bench: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return ptr;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(const double *v, int count) {
  double sorted[BENCH_MAX_REPS];
  memcpy(sorted, v, (size_t)count * sizeof *v);
  qsort(sorted, (size_t)count, sizeof *sorted, cmp_double);
  return count % 2 ? sorted[count / 2] : 0.5 * (sorted[count / 2 - 1] + sorted[count / 2]);
}

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_write_file(const char *dir, const char *name, const void *data, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "dualbatch bench: cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

int bench_parse_batches(const char *list, double *out, int cap, int64_t *largest) {
  int n = 0;
  *largest = 0;
  for (const char *s = list; *s && n < cap;) {
    out[n] = strtod(s, NULL);
    if ((int64_t)out[n] > *largest) *largest = (int64_t)out[n];
    ++n;
    s = strchr(s, ',');
    if (s == NULL) break;
    ++s;
  }
  return n;
}

void bench_args_init(bench_args *a) {
  a->dir = NULL, a->commit = "unknown", a->batches = "1e3,1e4,1e5";
  a->reps = 7;
}

int bench_args_take(bench_args *a, const char *opt, const char *val) {
  if (val == NULL) return 0;
  if (!strcmp(opt, "--dir")) a->dir = val;
  else if (!strcmp(opt, "--batches")) a->batches = val;
  else if (!strcmp(opt, "--reps")) a->reps = atoi(val);
  else if (!strcmp(opt, "--commit")) a->commit = val;
  else return 0;
  return 1;
}

int bench_args_batches(bench_args *a, double *bs, int cap, int64_t *largest) {
  if (a->reps < 1 || a->reps > BENCH_MAX_REPS) a->reps = 7;
  return bench_parse_batches(a->batches, bs, cap, largest);
}

/* First line of a shell command's output (trailing newline removed); "" when it fails. */
void bench_command_line(const char *cmd, char *buf, size_t cap) {
  buf[0] = '\0';
  FILE *pipe = popen(cmd, "r");
  if (!pipe) return;
  if (!fgets(buf, (int)cap, pipe)) buf[0] = '\0';
  pclose(pipe);
  buf[strcspn(buf, "\r\n")] = '\0';
}

/* "AMD EPYC (family 26, model 2)" from /proc/cpuinfo. */
void bench_cpu_model(char *buf, size_t cap) {
  char line[512], name[256] = "unknown CPU", family[32] = "?", model[32] = "?";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    int got = 0;
    while (got != 7 && fgets(line, sizeof line, f)) {
      char *colon = strchr(line, ':');
      if (!colon) continue;
      char *value = colon + 1 + strspn(colon + 1, " \t");
      value[strcspn(value, "\r\n")] = '\0';
      if (!(got & 1) && strncmp(line, "model name", 10) == 0) {
        snprintf(name, sizeof name, "%s", value);
        got |= 1;
      } else if (!(got & 2) && strncmp(line, "cpu family", 10) == 0) {
        snprintf(family, sizeof family, "%s", value);
        got |= 2;
      } else if (!(got & 4) && strncmp(line, "model\t", 6) == 0) {
        snprintf(model, sizeof model, "%s", value);
        got |= 4;
      }
    }
    fclose(f);
  }
  snprintf(buf, cap, "%s (family %s, model %s)", name, family, model);
}

void bench_load_average(char *buf, size_t cap) {
  buf[0] = '\0';
  FILE *f = fopen("/proc/loadavg", "r");
  if (!f) return;
  if (!fgets(buf, (int)cap, f)) buf[0] = '\0';
  fclose(f);
  /* keep the three averages */
  char *p = buf;
  for (int i = 0; i < 3 && p; ++i) p = strchr(p + 1, ' ');
  if (p) *p = '\0';
  buf[strcspn(buf, "\r\n")] = '\0';
}

/* ---- how busy the machine was ---------------------------------------------------------------
 * The machine is shared: a timing taken while another process computes is worthless.  Sample the
 * busy ticks of all CPUs (/proc/stat) and this process's own ticks (/proc/self/stat) around the
 * timed calls; the difference is what others used, as a share of wall time x CPUs. */
void bench_cpu_sample_take(bench_cpu_sample *s) {
  long long v[8] = {0}, ut = 0, st = 0, cut = 0, cst = 0;
  char line[1024];
  s->ok = 0;
  s->wall = omp_get_wtime();
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return;
  int got = fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
  fclose(f);
  if (got < 4) return;
  s->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* all but idle and iowait; steal counts */
  f = fopen("/proc/self/stat", "r");
  if (!f) return;
  char *ok = fgets(line, sizeof line, f);
  fclose(f);
  const char *after = ok ? strrchr(line, ')') : NULL; /* the command name may hold spaces */
  /* utime, stime, and cutime, cstime: the waited-for children count as this process (the ADOL-C
   * peers fork their workers) */
  if (!after || sscanf(after + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld %lld %lld",
                       &ut, &st, &cut, &cst) != 4)
    return;
  s->self = ut + st + cut + cst;
  s->ok = 1;
}

double bench_others_share(const bench_cpu_sample *a, const bench_cpu_sample *b) {
  const double capacity =
      (b->wall - a->wall) * (double)sysconf(_SC_CLK_TCK) * (double)omp_get_num_procs();
  if (!a->ok || !b->ok || !(capacity > 0.0)) return -1.0;
  const double share = (double)((b->busy - a->busy) - (b->self - a->self)) / capacity;
  return share < 0.0 ? 0.0 : share;
}
