/*
 * minpack_cases.c — reading MINPACK's driver output and the reference solutions
 * (minpack_cases.h).  The drivers print "problem P dimension N" (hyjdrv) or
 * "problem P dimensions N M" (lmddrv) at the head of each case.
 */
#include "minpack_cases.h"

#include <stdio.h>
#include <stdlib.h>

static FILE *open_data(const char *name, char *why, int cap_why) {
  char path[1024];
  snprintf(path, sizeof path, "%s/minpack/%s", DUAL_TESTS_DATA, name);
  FILE *f = fopen(path, "r");
  if (f == NULL) snprintf(why, (size_t)cap_why, "cannot open %s", path);
  return f;
}

int minpack_read_cases(const char *driver_file, const char *solutions_file, minpack_case *cs,
                       int cap, char *why, int cap_why) {
  FILE *f = open_data(driver_file, why, cap_why);
  if (f == NULL) return -1;
  static char line[8192];
  int k = -1, pp = -1, pn = -1, pm = -1, tries = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    int p, n, m = -1, info;
    double v;
    if (sscanf(line, " problem %d dimensions %d %d", &p, &n, &m) == 3 ||
        sscanf(line, " problem %d dimension %d", &p, &n) == 2) {
      if (++k >= cap) break;
      if (m < 0) m = n;
      tries = (p == pp && n == pn && m == pm) ? tries + 1 : 0;
      pp = p, pn = n, pm = m;
      cs[k].nprob = p, cs[k].n = n, cs[k].m = m, cs[k].info = -1;
      cs[k].factor = tries == 0 ? 1 : tries == 1 ? 10 : 100;
    } else if (k >= 0 && sscanf(line, " initial l2 norm of the residuals %lf", &v) == 1) {
      cs[k].fnorm0 = v;
    } else if (k >= 0 && sscanf(line, " final l2 norm of the residuals %lf", &v) == 1) {
      cs[k].fnorm_final = v;
    } else if (k >= 0 && sscanf(line, " exit parameter %d", &info) == 1) {
      cs[k].info = info;
    }
  }
  fclose(f);
  if (k >= cap) {
    snprintf(why, (size_t)cap_why, "%s: more than %d cases", driver_file, cap);
    return -1;
  }
  f = open_data(solutions_file, why, cap_why);
  if (f == NULL) return -1;
  int found = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    int c, off = 0;
    if (line[0] == '#' || sscanf(line, "%d :%n", &c, &off) != 1 || c < 1 || c > k + 1) continue;
    const char *s = line + off;
    for (int j = 0; j < cs[c - 1].n; ++j) {
      char *end;
      cs[c - 1].ref[j] = strtod(s, &end);
      if (end == s) {
        fclose(f);
        snprintf(why, (size_t)cap_why, "%s: case %d has fewer than %d values", solutions_file, c, cs[c - 1].n);
        return -1;
      }
      s = end;
    }
    ++found;
  }
  fclose(f);
  if (found != k + 1) {
    snprintf(why, (size_t)cap_why, "%s: %d solutions for %d cases", solutions_file, found, k + 1);
    return -1;
  }
  return k + 1;
}
