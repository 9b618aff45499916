/*
 * minpack_cases.h — the cases of MINPACK's test drivers as tests/data/minpack records them: the
 * driver's output (hyjdrv or lmddrv: per case the problem, its dimensions, the initial and final
 * residual norms and the exit parameter; the starting-point factors 1, 10, 100 follow from the
 * repeated problems) joined with fortran-lang/minpack's reference solutions.
 */
#ifndef DUAL_MINPACK_CASES_H
#define DUAL_MINPACK_CASES_H

typedef struct minpack_case {
  int nprob, n, m, info; /* m: residuals (n for the equation drivers) */
  double factor, fnorm0, fnorm_final, ref[40];
} minpack_case;

/* Read `driver_file` and `solutions_file` (paths under tests/data/minpack) into cs[0..cap);
 * returns the number of cases, or -1 with a message in why[0..cap_why) when a file is missing or
 * malformed. */
int minpack_read_cases(const char *driver_file, const char *solutions_file, minpack_case *cs,
                       int cap, char *why, int cap_why);

#endif /* DUAL_MINPACK_CASES_H */
