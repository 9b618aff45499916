/*
 * suggest.c — the nearest-name search behind "did you mean ...?".  A candidate is accepted when
 * its distance is at most max(1, len/3) and smaller than the name's length (so one-letter names
 * are never "corrected" into other one-letter names), or when it differs only in case.
 */
#include "lang/suggest.h"

#include <string.h>

#define SUGGEST_MAX_LEN 64 /* longer names are not compared (bounded work per error) */

static int lower_char(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

static int same_ignoring_case(const char *a, int32_t al, const char *b, int32_t bl) {
  if (al != bl) return 0;
  for (int32_t i = 0; i < al; ++i)
    if (lower_char((unsigned char)a[i]) != lower_char((unsigned char)b[i])) return 0;
  return 1;
}

/* Optimal-string-alignment distance; both lengths <= SUGGEST_MAX_LEN. */
static int osa_distance(const char *a, int32_t al, const char *b, int32_t bl) {
  int rows[3][SUGGEST_MAX_LEN + 1];
  int *pp = rows[0], *p = rows[1], *c = rows[2];
  for (int32_t j = 0; j <= bl; ++j) p[j] = (int)j;
  for (int32_t i = 1; i <= al; ++i) {
    c[0] = (int)i;
    for (int32_t j = 1; j <= bl; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int v = p[j] + 1;
      if (c[j - 1] + 1 < v) v = c[j - 1] + 1;
      if (p[j - 1] + cost < v) v = p[j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
        v = pp[j - 2] + 1;
      c[j] = v;
    }
    int *t = pp;
    pp = p;
    p = c;
    c = t;
  }
  return p[bl];
}

void lang_suggest_init(lang_suggest *s, const char *want, int32_t want_len) {
  s->want = want;
  s->want_len = want_len;
  s->best = 0;
  s->best_len = 0;
  s->best_dist = 1 << 30;
}

void lang_suggest_offer(lang_suggest *s, const char *cand, int32_t cand_len) {
  if (s->want_len > SUGGEST_MAX_LEN || cand_len > SUGGEST_MAX_LEN || cand_len == 0) return;
  if (cand_len == s->want_len && memcmp(cand, s->want, (size_t)cand_len) == 0) return;
  if (same_ignoring_case(cand, cand_len, s->want, s->want_len)) {
    if (s->best_dist > 0) { /* differs only in case: the best possible suggestion */
      s->best = cand;
      s->best_len = cand_len;
      s->best_dist = 0;
    }
    return;
  }
  int32_t diff = cand_len > s->want_len ? cand_len - s->want_len : s->want_len - cand_len;
  int limit = s->want_len / 3 > 1 ? (int)(s->want_len / 3) : 1;
  if (diff > limit) return;
  int d = osa_distance(s->want, s->want_len, cand, cand_len);
  if (d <= limit && d < s->want_len && d < s->best_dist) {
    s->best = cand;
    s->best_len = cand_len;
    s->best_dist = d;
  }
}
