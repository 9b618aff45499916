/*
 * cli_progress.c — the progress line of the `dualbatch` tool (see cli_progress.h).  Uses the
 * monotonic clock, isatty(stderr), and redraws with '\r' so only one line is ever used.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli_progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define CLI_PROGRESS_DELAY_S 2.0  /* stay quiet for short runs */
#define CLI_PROGRESS_PERIOD_S 0.2 /* redraw rate */

static double now_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_human(double x, char *buf, int cap) {
  static const char suffix[] = {' ', 'k', 'M', 'G', 'T', 'P'};
  int k = 0;
  while (x >= 999.5 && k < 5) {
    x /= 1000.0;
    k++;
  }
  if (k == 0)
    snprintf(buf, (size_t)cap, "%.0f", x);
  else
    snprintf(buf, (size_t)cap, x < 9.95 ? "%.1f%c" : "%.0f%c", x, suffix[k]);
}

void cli_progress_start(cli_progress *p) {
  p->enabled = isatty(STDERR_FILENO) == 1;
  p->shown = 0;
  p->start = now_seconds();
  p->last_draw = 0.0;
}

void cli_progress_update(cli_progress *p, int64_t points) {
  if (!p->enabled) return;
  double t = now_seconds();
  double elapsed = t - p->start;
  if (elapsed <= CLI_PROGRESS_DELAY_S || t - p->last_draw < CLI_PROGRESS_PERIOD_S) return;
  char count[16], rate[16];
  cli_progress_human((double)points, count, (int)sizeof count);
  cli_progress_human((double)points / elapsed, rate, (int)sizeof rate);
  fprintf(stderr, "\rdualbatch: %s points, %s points/s   ", count, rate);
  fflush(stderr);
  p->shown = 1;
  p->last_draw = t;
}

void cli_progress_done(cli_progress *p, int64_t points) {
  if (!p->shown) return;
  p->last_draw = 0.0;
  cli_progress_update(p, points);
  cli_progress_end(p);
}

void cli_progress_end(cli_progress *p) {
  if (!p->shown) return;
  fputc('\n', stderr);
  fflush(stderr);
  p->shown = 0;
}
