/*
 * history.c — a device's measured calls of a program and its prediction (history.h).
 */
#include "dispatch/history.h"

#include <math.h>

void dual_ratios_add(dual_ratios *q, double measured, double predicted) {
  if (!(measured > 0.0) || !(predicted > 0.0)) return;
  double r = measured / predicted;
  r = r > 2.0 ? 2.0 : r < 0.5 ? 0.5 : r;
  q->r[q->next] = r;
  q->next = (q->next + 1) % DUAL_RATIOS_KEPT;
  if (q->n < DUAL_RATIOS_KEPT) q->n++;
}

double dual_ratios_median(const dual_ratios *q) {
  if (q->n < DUAL_RATIOS_MIN) return 1.0;
  double a[DUAL_RATIOS_KEPT];
  for (int i = 0; i < q->n; ++i) { /* insertion sort of at most five */
    int j = i;
    for (; j > 0 && a[j - 1] > q->r[i]; --j) a[j] = a[j - 1];
    a[j] = q->r[i];
  }
  return q->n % 2 ? a[q->n / 2] : 0.5 * (a[q->n / 2 - 1] + a[q->n / 2]);
}

double dual_history_over(double fixed, double t) { return t > 2.0 * fixed ? t - fixed : 0.5 * t; }

/* One kept call's time scaled to v (the part over `fixed` grows with v). */
static double scaled(double fixed, double vk, double tk, double v) {
  return fixed + dual_history_over(fixed, tk) * v / vk;
}

double dual_history_predict(const dual_device_history *h, double fixed, double v) {
  if (h->n == 0) return fixed + v;
  if (h->n == 2) {
    const double a = (h->t[0] - h->t[1]) / (h->v[0] - h->v[1]);
    if (a > 0.0) {
      const double F = h->t[0] - a * h->v[0];
      const double t = (F > 0.0 ? F : 0.0) + a * v;
      if (t > 0.0) return t;
    }
    /* no line (noise made it fall): the kept call nearer in v */
    const int k = fabs(log(v / h->v[1])) < fabs(log(v / h->v[0])) ? 1 : 0;
    return scaled(fixed, h->v[k], h->t[k], v);
  }
  return scaled(fixed, h->v[0], h->t[0], v);
}

int dual_history_add(dual_device_history *h, double fixed, double v, double t) {
  if (!(v > 0.0) || !(t > 0.0)) return 0;
  { /* (with nothing kept, the prediction is the model's) */
    const double p = dual_history_predict(h, fixed, v);
    const int confirmed = h->held && t > DUAL_HISTORY_CONFIRM * p;
    h->held = 0;
    if (t > DUAL_HISTORY_SUSPECT * p && !confirmed) {
      h->held = 1;
      return 0;
    }
  }
  if (h->n > 0 && v < 2.0 * h->v[0] && h->v[0] < 2.0 * v) {
    const double old = scaled(fixed, h->v[0], h->t[0], v);
    /* a disturbance only slows a call: up a quarter of the way, down half */
    double r = t < old ? sqrt(t / old) : sqrt(sqrt(t / old));
    r = r > 4.0 ? 4.0 : r < 0.25 ? 0.25 : r;
    h->v[0] = v, h->t[0] = old * r;
    return 1;
  }
  if (h->n > 0) h->v[1] = h->v[0], h->t[1] = h->t[0], h->n = 2;
  else h->n = 1;
  h->v[0] = v, h->t[0] = t;
  return 1;
}
