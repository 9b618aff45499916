/*
 * lower_util.c — the lowering's helpers: error reporting (first error per statement, loop
 * context, suggestions), work and size limits, builder calls that turn builder errors into
 * positioned diagnostics, and compile-time integer checks.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "lang/functions.h"
#include "lang/lower_impl.h"
#include "lang/suggest.h"

static lang_pos tok_pos(const lower *L, int32_t t) {
  lang_pos p = {L->tok[t].off, L->tok[t].line, L->tok[t].col};
  return p;
}

int lw_wanted(const lower *L, int32_t t) {
  return !L->failed && !L->fatal && lang_diag_wanted(L->diag, tok_pos(L, t));
}

int32_t lw_poison(lower *L) {
  L->failed = 1;
  return LANG_POISON;
}

/* " (when i = 3, r = 5)" for the active loop variables, outermost first (at most 6 shown). */
static void loop_context(const lower *L, char *buf, size_t cap) {
  buf[0] = '\0';
  if (L->nloops == 0) return;
  size_t n = 0;
  int32_t first = L->nloops > 6 ? L->nloops - 6 : 0;
  n += (size_t)snprintf(buf + n, cap - n, " (when %s", first > 0 ? "..., " : "");
  for (int32_t i = first; i < L->nloops && n < cap; ++i) {
    const lang_sym *y = &L->scope.sym[L->loops[i]];
    n += (size_t)snprintf(buf + n, cap - n, "%s%.*s%s = %lld", i > first ? ", " : "",
                          LANG_SHOW(y->name, y->len), (long long)y->loop_value);
  }
  if (n < cap) snprintf(buf + n, cap - n, ")");
}

static void report(lower *L, int status, lang_pos pos, const char *msg) {
  char ctx[512];
  loop_context(L, ctx, sizeof ctx);
  lang_diag_add(L->diag, status, pos, "%s%s", msg, ctx);
  if (lang_diag_full(L->diag)) L->fatal = 1;
}

int32_t lw_error(lower *L, int32_t t, const char *fmt, ...) {
  if (lw_wanted(L, t)) {
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report(L, DUAL_ERR_SYNTAX, tok_pos(L, t), msg);
  }
  return lw_poison(L);
}

int32_t lw_unset(lower *L, int32_t t, const char *what, const char *name, int32_t len,
                 int64_t index) {
  if (L->quiet_unset) return lw_poison(L);
  if (index < 0)
    return lw_error(L, t, "'%.*s%s' is %s before it is assigned", LANG_SHOW(name, len), what);
  return lw_error(L, t, "'%.*s%s[%lld]' is %s before it is assigned", LANG_SHOW(name, len),
                  (long long)index, what);
}

int32_t lw_unknown(lower *L, int32_t t, int is_call) {
  if (!lw_wanted(L, t)) return lw_poison(L);
  const char *name = L->src->text + L->tok[t].off;
  int32_t len = L->tok[t].len;
  lang_suggest s;
  lang_suggest_init(&s, name, len);
  for (int pass = 0; pass < 2; ++pass) {
    if ((pass == 0) == (is_call != 0)) {
      for (int fn = 0; fn < lang_function_limit(); ++fn) {
        const char *f = lang_function_name(fn);
        if (f != NULL) lang_suggest_offer(&s, f, (int32_t)strlen(f));
      }
      lang_suggest_offer(&s, "normal", 6); /* the random draws (lower_expr.c) */
      lang_suggest_offer(&s, "uniform", 7);
    } else {
      for (int32_t i = L->scope.count - 1; i >= 0; --i)
        lang_suggest_offer(&s, L->scope.sym[i].name, L->scope.sym[i].len);
    }
  }
  const char *kind = is_call ? "unknown function" : "undeclared name";
  if (s.best != NULL)
    return lw_error(L, t, "%s '%.*s%s'; did you mean '%.*s%s'?", kind, LANG_SHOW(name, len),
                    LANG_SHOW(s.best, s.best_len));
  return lw_error(L, t, "%s '%.*s%s'", kind, LANG_SHOW(name, len));
}

/* A fatal limit error at the current top-level statement. */
static void limit_error(lower *L, const char *msg) {
  if (L->fatal) return;
  report(L, DUAL_ERR_LIMIT, tok_pos(L, L->top_tok), msg);
  L->fatal = 1;
  L->failed = 1;
}

int lw_tick(lower *L, int64_t units) {
  L->work += units;
  if (L->work <= L->max_work) return !L->fatal;
  char msg[200];
  snprintf(msg, sizeof msg,
           "unrolling the program takes more than %lld steps (the limit for a source of %d bytes); "
           "reduce the loop ranges",
           (long long)L->max_work, (int)L->src->len);
  limit_error(L, msg);
  return 0;
}

static int check_nodes(lower *L) {
  if (dual_builder_node_count(L->b) <= L->max_nodes) return 1;
  char msg[200];
  snprintf(msg, sizeof msg,
           "the unrolled program has more than %lld operations (the limit for a source of %d "
           "bytes); reduce the loop ranges",
           (long long)L->max_nodes, (int)L->src->len);
  limit_error(L, msg);
  return 0;
}

void lw_builder_failed(lower *L, int status) {
  if (L->fatal) return;
  const char *m = dual_context_last_error(L->ctx);
  int st = (status == DUAL_ERR_NO_MEMORY || status == DUAL_ERR_LIMIT || status == DUAL_ERR_INTERNAL)
               ? status
               : DUAL_ERR_SYNTAX;
  if (status == DUAL_ERR_NO_MEMORY) L->oom = 1;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", m);
  report(L, st, tok_pos(L, L->stmt_tok), msg);
  L->fatal = 1;
  L->failed = 1;
}

int32_t lw_apply(lower *L, const char *op, int nargs, const int32_t *args) {
  if (L->fatal || L->failed) return LANG_POISON;
  for (int i = 0; i < nargs; ++i)
    if (args[i] < 0) return lw_poison(L);
  int32_t id = LANG_POISON;
  int st = dual_builder_apply(L->b, op, nargs, args, &id);
  if (st != DUAL_SUCCESS) {
    lw_builder_failed(L, st);
    return LANG_POISON;
  }
  return check_nodes(L) ? id : LANG_POISON;
}

int32_t lw_draw(lower *L, int normal) {
  if (L->fatal || L->failed) return LANG_POISON;
  int32_t id = LANG_POISON;
  int st = normal ? dual_builder_normal(L->b, &id) : dual_builder_uniform(L->b, &id);
  if (st != DUAL_SUCCESS) {
    lw_builder_failed(L, st);
    return LANG_POISON;
  }
  return check_nodes(L) ? id : LANG_POISON;
}

int32_t lw_const(lower *L, double v) {
  if (L->fatal || L->failed) return LANG_POISON;
  int32_t id = LANG_POISON;
  int st = dual_builder_constant(L->b, v, &id);
  if (st != DUAL_SUCCESS) {
    lw_builder_failed(L, st);
    return LANG_POISON;
  }
  return check_nodes(L) ? id : LANG_POISON;
}

int lw_const_int(lower *L, int32_t id, int32_t t, const char *what, int64_t *out) {
  if (id < 0) {
    lw_poison(L);
    return 0;
  }
  double v = 0.0;
  if (!dual_builder_const_value(L->b, id, &v)) {
    lw_error(L, t,
             "%s must be a compile-time integer, but it depends on an input, a parameter or a "
             "non-constant value",
             what);
    return 0;
  }
  if (!(fabs(v) <= LANG_MAX_EXACT_INT)) {
    lw_error(L, t, "%s must be a compile-time integer of magnitude at most 2^53, but it is %.17g",
             what, v);
    return 0;
  }
  int64_t k = (int64_t)v;
  if ((double)k != v) {
    lw_error(L, t, "%s must be an integer, but it is %.17g", what, v);
    return 0;
  }
  *out = k;
  return 1;
}

int32_t lw_expr_tok(const lang_expr *e) {
  while (e->kind == EX_CHAIN || e->kind == EX_POW || e->kind == EX_COND) e = e->a;
  return e->tok;
}
