/*
 * lower_impl.h — the lowering's shared state and helpers (errors with loop context, builder
 * calls that check limits, compile-time integers).  Included only by lower_*.c.
 */
#ifndef DUAL_LANG_LOWER_IMPL_H
#define DUAL_LANG_LOWER_IMPL_H

#include <stdint.h>

#include "lang/lower.h"
#include "lang/scope.h"

typedef struct lower {
  const lang_source *src;
  const lang_token *tok;
  dual_builder *b;
  dual_context *ctx;
  lang_diags *diag;
  lang_scope scope;
  int32_t loops[2 * LANG_MAX_DEPTH]; /* active loop/reduction variables (symbol indices) */
  int32_t nloops;
  int32_t *outputs; /* symbol indices of the output declarations, in order */
  int32_t nout, outcap;
  int quiet_unset; /* syntax errors happened: reads of unassigned values fail silently */
  int failed;      /* the current statement has an error: everything else is silent */
  int fatal;       /* stop lowering: builder error, limit, OOM, too many errors */
  int oom;
  int64_t work;      /* unrolling steps taken */
  int64_t max_work;  /* the step budget of this source (common.h) */
  int64_t max_nodes; /* the node budget of this source */
  int32_t stmt_tok; /* first token of the statement being lowered */
  int32_t top_tok;  /* first token of the top-level statement being lowered */
} lower;

/* Name of a token as printf arguments for "%.*s%s" (cut when very long). */
#define LW_NAME(L, t) LANG_SHOW((L)->src->text + (L)->tok[t].off, (L)->tok[t].len)

/* Report a semantic error at token `t` (the first of the statement only), with the values of
 * the enclosing loop variables appended.  Returns LANG_POISON. */
int32_t lw_error(lower *L, int32_t t, const char *fmt, ...) DUAL_PRINTF(3, 4);
/* Would lw_error at token t be recorded?  (Test before building expensive messages.) */
int lw_wanted(const lower *L, int32_t t);
/* Fail the statement silently (an error was already reported for its cause). */
int32_t lw_poison(lower *L);
/* A read of an unassigned value: an error, or silent after syntax errors. */
int32_t lw_unset(lower *L, int32_t t, const char *what, const char *name, int32_t len,
                 int64_t index);
/* Undeclared name or unknown function, with a "did you mean" suggestion. */
int32_t lw_unknown(lower *L, int32_t t, int is_call);

/* Count `units` of unrolling work; 0 (fatal error reported) past the source's budget. */
int lw_tick(lower *L, int64_t units);

/* Builder calls; LANG_POISON when an argument is poison or the statement already failed.
 * Builder errors become fatal diagnostics at the current statement. */
int32_t lw_apply(lower *L, const char *op, int nargs, const int32_t *args);
int32_t lw_const(lower *L, double v);
/* A fresh random draw: standard normal (normal != 0) or uniform on (0, 1). */
int32_t lw_draw(lower *L, int normal);
void lw_builder_failed(lower *L, int status);

/* The compile-time integer value of `id` (|v| <= 2^53, exact): 1 and *out, or 0 (error
 * reported at token t, `what` naming the quantity, e.g. "the start of the loop range"; silent
 * when id is poison).  Range checks are the caller's, with their own messages. */
int lw_const_int(lower *L, int32_t id, int32_t t, const char *what, int64_t *out);

/* First token of an expression (for positions). */
int32_t lw_expr_tok(const lang_expr *e);

/* lower_expr.c */
int32_t lower_expr(lower *L, const lang_expr *e);
/* Resolve NAME[IX] (reading or writing): the vector's symbol index and the checked element.
 * 0 on error (reported, or silent for poison). */
int lower_element(lower *L, int32_t name_tok, const lang_expr *ix, int32_t *yi, int64_t *k);
/* A compile-time integer bound of a for/sum/prod range. */
int lower_bound(lower *L, const lang_expr *e, const char *what, int64_t *out);
/* Open a scope holding loop variable `var_tok` = value; its symbol index, or -1 (error). */
int32_t lower_push_loop_var(lower *L, int32_t var_tok, int64_t value);
/* Close the scope opened by lower_push_loop_var (popping everything declared in it). */
void lower_pop_loop_var(lower *L, int32_t yi);

#endif /* DUAL_LANG_LOWER_IMPL_H */
