/*
 * diag.h — the diagnostics of one compilation: up to LANG_MAX_ERRORS errors, at most one per
 * source position, rendered in source order as "name:line:col: error: message" followed by the
 * source line and a caret.  Included by parser.c, lower*.c and compile.c.
 */
#ifndef DUAL_LANG_DIAG_H
#define DUAL_LANG_DIAG_H

#include <stdint.h>

#include "context.h"
#include "lang/common.h"

/* A position in the source; line 0 means "no position" (whole-program errors). */
typedef struct lang_pos {
  int32_t off, line, col;
} lang_pos;

typedef struct lang_diag {
  lang_pos pos;
  int status; /* DUAL_ERR_SYNTAX, DUAL_ERR_LIMIT, ... */
  char *msg;  /* heap; NULL when it could not be allocated */
} lang_diag;

typedef struct lang_diags {
  const lang_source *src;
  lang_diag item[LANG_MAX_ERRORS];
  int32_t count;
} lang_diags;

void lang_diags_init(lang_diags *d, const lang_source *src);
void lang_diags_free(lang_diags *d);

/* Would an error at `pos` be recorded?  No when one is already recorded at the same offset
 * (repeated unrolled iterations report once) or the limit is reached.  Callers test this before
 * building an expensive message (suggestions). */
int lang_diag_wanted(const lang_diags *d, lang_pos pos);

/* Record an error; returns 1 if recorded, 0 if dropped (see lang_diag_wanted). */
int lang_diag_add(lang_diags *d, int status, lang_pos pos, const char *fmt, ...) DUAL_PRINTF(4, 5);

/* The limit of collected errors was reached: callers stop working. */
int lang_diag_full(const lang_diags *d);

/* The status the compilation returns: DUAL_ERR_NO_MEMORY, else DUAL_ERR_LIMIT, else
 * DUAL_ERR_INTERNAL if any diagnostic has it, else DUAL_ERR_SYNTAX; DUAL_SUCCESS when empty. */
int lang_diag_status(const lang_diags *d);

/* All diagnostics as one heap string (NULL on OOM). */
char *lang_diag_render(const lang_diags *d);

#endif /* DUAL_LANG_DIAG_H */
