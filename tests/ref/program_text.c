/*
 * program_text.c — the growing string and the MGH residual blocks that both the equation and
 * the least-squares problems use (program_text.h).
 */
#include "program_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pt_put(program_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[4096];
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if (t->len + (size_t)k + 1 > t->cap) {
    size_t cap = 2 * (t->len + (size_t)k + 1);
    char *s = realloc(t->s, cap);
    if (s == NULL) return;
    t->s = s, t->cap = cap;
  }
  memcpy(t->s + t->len, tmp, (size_t)k + 1);
  t->len += (size_t)k;
}

void pt_chebyquad(program_text *t, int n, int m) {
  pt_put(t, "let s[%d]\n", m);
  for (int i = 0; i < m; ++i) pt_put(t, "s[%d] = 0\n", i);
  for (int j = 0; j < n; ++j) {
    pt_put(t, "let p%d = 1\nlet q%d = 2 * x[%d] - 1\nlet u%d = 2 * q%d\nlet v%d = 0\n", j, j, j, j, j, j);
    for (int i = 0; i < m; ++i)
      pt_put(t, "s[%d] += q%d\nv%d = u%d * q%d - p%d\np%d = q%d\nq%d = v%d\n", i, j, j, j, j, j, j, j, j, j);
  }
  for (int i = 1; i <= m; ++i) {
    if (i % 2 == 0) pt_put(t, "f[%d] = s[%d] / %d + 1 / %d\n", i - 1, i - 1, n, i * i - 1);
    else pt_put(t, "f[%d] = s[%d] / %d\n", i - 1, i - 1, n);
  }
}

void pt_helical_valley(program_text *t) {
  /* MINPACK's angle: atan(x1/x0)/2pi, plus 1/2 for x0 < 0, +-1/4 on x0 = 0 */
  pt_put(t, "const tpi = 8 * atan(1)\n"
            "let th = x[0] > 0 ? atan(x[1] / x[0]) / tpi : "
            "(x[0] < 0 ? atan(x[1] / x[0]) / tpi + 0.5 : (x[1] >= 0 ? 0.25 : -0.25))\n"
            "f[0] = 10 * (x[2] - 10 * th)\nf[1] = 10 * (sqrt(x[0]^2 + x[1]^2) - 1)\nf[2] = x[2]\n");
}

void pt_powell_singular(program_text *t) {
  pt_put(t, "f[0] = x[0] + 10 * x[1]\nf[1] = sqrt(5) * (x[2] - x[3])\n"
            "f[2] = (x[1] - 2 * x[2])^2\nf[3] = sqrt(10) * (x[0] - x[3])^2\n");
}

void pt_brown_almost_linear(program_text *t, int n) {
  pt_put(t, "let s = sum(j in 0..%d, x[j]) - %d\nlet pr = prod(j in 0..%d, x[j])\n", n, n + 1, n);
  for (int k = 0; k < n - 1; ++k) pt_put(t, "f[%d] = x[%d] + s\n", k, k);
  pt_put(t, "f[%d] = pr - 1\n", n - 1);
}
