/*
 * clock.c — the dispatch's clock (clock.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/clock.h"

#include <stddef.h>
#include <time.h>

double dual_monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double (*clock_fn)(void) = dual_monotonic_seconds;

double dual_dispatch_now(void) { return clock_fn(); }

void dual_dispatch_set_clock(double (*fn)(void)) { clock_fn = fn != NULL ? fn : dual_monotonic_seconds; }
