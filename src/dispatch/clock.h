/*
 * clock.h — the clock AUTO's dispatch times its calls with (dispatch.c, split.c): monotonic
 * seconds, or for tests a clock of their own (a thread's virtual time, advanced by engines that
 * stand for the devices), so that the learning rules are checked without the timer's noise.
 */
#ifndef DUAL_DISPATCH_CLOCK_H
#define DUAL_DISPATCH_CLOCK_H

/* Monotonic seconds (CLOCK_MONOTONIC): the calibration's measurements. */
double dual_monotonic_seconds(void);

/* The dispatch's clock: dual_monotonic_seconds unless a test set another. */
double dual_dispatch_now(void);

/* Tests: time the dispatch's calls with fn (NULL: the monotonic clock again).  Not thread-safe
 * against calls in flight. */
void dual_dispatch_set_clock(double (*fn)(void));

#endif /* DUAL_DISPATCH_CLOCK_H */
