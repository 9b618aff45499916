/*
 * cli_progress.h — the `dualbatch` tool's progress line: "dualbatch: 1.2M points, 340k points/s",
 * redrawn in place with '\r' on stderr, shown only when stderr is a terminal and the run has
 * already taken more than two seconds.  Included by cli_run.c.
 */
#ifndef DUAL_CLI_PROGRESS_H
#define DUAL_CLI_PROGRESS_H

#include <stdint.h>

typedef struct cli_progress {
  int enabled;      /* stderr is a terminal */
  int shown;        /* a progress line is on screen and not yet ended */
  double start;     /* monotonic seconds at start */
  double last_draw; /* when the line was last redrawn */
} cli_progress;

/* Start timing; the line is enabled only when stderr is a terminal. */
void cli_progress_start(cli_progress *p);
/* Report that `points` points are done in total; redraws at most ~5 times a second. */
void cli_progress_update(cli_progress *p, int64_t points);
/* At the end of a run: if a line is shown, draw the final count (rate limit ignored) and end it. */
void cli_progress_done(cli_progress *p, int64_t points);
/* End the progress line (newline) if one is shown, so other messages start on a fresh line. */
void cli_progress_end(cli_progress *p);
/* "1.2M", "340k", "17": a count in 3-4 characters (buf needs 16 bytes). */
void cli_progress_human(double x, char *buf, int cap);

#endif /* DUAL_CLI_PROGRESS_H */
