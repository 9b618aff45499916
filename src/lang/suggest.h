/*
 * suggest.h — "did you mean ...?": picks the candidate name closest to a misspelled one by edit
 * distance (optimal string alignment: insert, delete, substitute, swap two neighbours).
 * Included by the lowering (unknown names and functions).
 */
#ifndef DUAL_LANG_SUGGEST_H
#define DUAL_LANG_SUGGEST_H

#include <stdint.h>

typedef struct lang_suggest {
  const char *want; /* the unknown name */
  int32_t want_len;
  const char *best; /* closest acceptable candidate so far, NULL if none */
  int32_t best_len;
  int best_dist;
} lang_suggest;

void lang_suggest_init(lang_suggest *s, const char *want, int32_t want_len);
/* Consider one candidate; earlier candidates win ties. */
void lang_suggest_offer(lang_suggest *s, const char *cand, int32_t cand_len);

#endif /* DUAL_LANG_SUGGEST_H */
