/*
 * lower_expr.c — expressions to builder values: names and bounds-checked elements, calls
 * checked against the op table's arity, operators by their builder spelling, '%' evaluated here
 * on compile-time integers, and sum/prod unrolled left to right.
 */
#include <stdio.h>
#include <string.h>

#include "builder.h"
#include "lang/functions.h"
#include "lang/lower_impl.h"

static const char *binary_spelling(int tk) {
  switch (tk) {
  case TK_PLUS: return "+";
  case TK_MINUS: return "-";
  case TK_STAR: return "*";
  case TK_SLASH: return "/";
  case TK_LT: return "<";
  case TK_LE: return "<=";
  case TK_GT: return ">";
  case TK_GE: return ">=";
  case TK_EQ: return "==";
  case TK_NE: return "!=";
  case TK_ANDAND: return "&&";
  default: return "||";
  }
}

/* Look a name up; reports (and returns NULL) when it is undeclared or a function. */
static lang_sym *find_value(lower *L, int32_t t) {
  const lang_token *tk = &L->tok[t];
  const char *name = L->src->text + tk->off;
  lang_sym *y = lang_scope_find(&L->scope, name, tk->len);
  if (y != NULL) return y;
  if (lang_function_find(name, tk->len) >= 0)
    lw_error(L, t, "'%.*s%s' is a function; call it with arguments, e.g. %.*s%s(x)", LW_NAME(L, t),
             LW_NAME(L, t));
  else
    lw_unknown(L, t, 0);
  return NULL;
}

static int32_t lower_name(lower *L, const lang_expr *e) {
  lang_sym *y = find_value(L, e->tok);
  if (y == NULL) return LANG_POISON;
  if (y->poison) return lw_poison(L);
  if (y->kind == SYM_LOOP) return lw_const(L, (double)y->loop_value);
  if (y->is_vec)
    return lw_error(L, e->tok,
                    "'%.*s%s' is a vector of length %lld and needs an index, e.g. %.*s%s[0]",
                    LW_NAME(L, e->tok), (long long)y->n, LW_NAME(L, e->tok));
  if (y->id == LANG_POISON) return lw_poison(L);
  if (y->id == LANG_UNSET) return lw_unset(L, e->tok, "read", y->name, y->len, -1);
  return y->id;
}

/* The element index of vector symbol `yi` given by expression `ix`: 1 and *k, or 0. */
static int element_index(lower *L, int32_t yi, int32_t name_tok, const lang_expr *ix, int64_t *k) {
  int32_t id = lower_expr(L, ix);
  if (id < 0) {
    lw_poison(L);
    return 0;
  }
  int32_t t = lw_expr_tok(ix);
  char what[128];
  snprintf(what, sizeof what, "the index of '%.*s%s'", LW_NAME(L, name_tok));
  if (!lw_const_int(L, id, t, what, k)) return 0;
  const lang_sym *y = &L->scope.sym[yi];
  if (*k < 0 || *k >= y->n) {
    lw_error(L, t,
             "index %lld is out of bounds for '%.*s%s' (length %lld: valid indices are 0 to "
             "%lld)",
             (long long)*k, LW_NAME(L, name_tok), (long long)y->n, (long long)(y->n - 1));
    return 0;
  }
  return 1;
}

/* Resolve NAME[IX] for reading or writing: the symbol index and element.  0 on error. */
int lower_element(lower *L, int32_t name_tok, const lang_expr *ix, int32_t *yi_out, int64_t *k) {
  lang_sym *y = find_value(L, name_tok);
  if (y == NULL) return 0;
  if (y->poison) {
    lw_poison(L);
    return 0;
  }
  if (!y->is_vec) {
    lw_error(L, name_tok, "'%.*s%s' is %s, not a vector, and cannot be indexed",
             LW_NAME(L, name_tok), lang_sym_kind_text(y->kind));
    return 0;
  }
  int32_t yi = (int32_t)(y - L->scope.sym); /* y moves if the index pushes symbols (sum) */
  *yi_out = yi;
  return element_index(L, yi, name_tok, ix, k);
}

static int32_t lower_index(lower *L, const lang_expr *e) {
  int32_t yi;
  int64_t k;
  if (!lower_element(L, e->tok, e->a, &yi, &k)) return LANG_POISON;
  const lang_sym *y = &L->scope.sym[yi];
  int32_t v = y->elem[k];
  if (v == LANG_POISON) return lw_poison(L);
  if (v == LANG_UNSET) return lw_unset(L, e->tok, "read", y->name, y->len, k);
  return v;
}

/* normal(), uniform(): a fresh draw per sample; normal(mu, sigma) = fma(sigma, z, mu) (the form
 * dual_sgrad's score-function estimator recognizes), uniform(a, b) = fma(b - a, u, a). */
static int32_t lower_draw(lower *L, const lang_expr *e, int normal) {
  if (e->nargs != 0 && e->nargs != 2)
    return lw_error(L, e->tok, "'%.*s%s' takes 0 arguments or 2 (%s), but %d %s given",
                    LW_NAME(L, e->tok), normal ? "mu, sigma" : "a, b", (int)e->nargs,
                    e->nargs == 1 ? "was" : "were");
  int32_t args[2] = {0, 0};
  const lang_expr *a = e->args;
  for (int i = 0; i < e->nargs; ++i, a = a->next)
    if ((args[i] = lower_expr(L, a)) < 0) return lw_poison(L);
  const int32_t r = lw_draw(L, normal);
  if (e->nargs == 0 || r < 0) return r;
  if (normal) {
    const int32_t f[3] = {args[1], r, args[0]};
    return lw_apply(L, "fma", 3, f);
  }
  const int32_t d[2] = {args[1], args[0]};
  const int32_t w = lw_apply(L, "-", 2, d);
  const int32_t f[3] = {w, r, args[0]};
  return w < 0 ? w : lw_apply(L, "fma", 3, f);
}

static int32_t lower_call(lower *L, const lang_expr *e) {
  const lang_token *tk = &L->tok[e->tok];
  const char *name = L->src->text + tk->off;
  if ((tk->len == 6 && memcmp(name, "normal", 6) == 0) || (tk->len == 7 && memcmp(name, "uniform", 7) == 0))
    return lower_draw(L, e, tk->len == 6);
  int fn = lang_function_find(name, tk->len);
  if (fn < 0) {
    const lang_sym *y = lang_scope_find(&L->scope, name, tk->len);
    if (y != NULL)
      return lw_error(L, e->tok, "'%.*s%s' is %s, not a function", LW_NAME(L, e->tok),
                      lang_sym_kind_text(y->kind));
    return lw_unknown(L, e->tok, 1);
  }
  int arity = lang_function_arity(fn);
  if (e->nargs != arity)
    return lw_error(L, e->tok, "'%.*s%s' takes %d argument%s, but %d %s given", LW_NAME(L, e->tok),
                    arity, arity == 1 ? "" : "s", (int)e->nargs, e->nargs == 1 ? "was" : "were");
  int32_t args[3] = {0, 0, 0};
  if (arity > 3) return lw_error(L, e->tok, "internal error: arity %d", arity);
  const lang_expr *a = e->args;
  for (int i = 0; i < arity; ++i, a = a->next)
    if ((args[i] = lower_expr(L, a)) < 0) return lw_poison(L);
  return lw_apply(L, lang_function_name(fn), arity, args);
}

/* a % b on compile-time integers, floored (the result has the sign of b). */
static int32_t lower_mod(lower *L, int32_t a, int32_t b, int32_t t) {
  int64_t x, y;
  if (!lw_const_int(L, a, t, "the left operand of '%'", &x) ||
      !lw_const_int(L, b, t, "the right operand of '%'", &y))
    return LANG_POISON;
  if (y == 0) return lw_error(L, t, "modulo by zero");
  int64_t r = x % y; /* |x|, |y| <= 2^53: no overflow */
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return lw_const(L, (double)r);
}

static int32_t lower_chain(lower *L, const lang_expr *e) {
  int32_t acc = lower_expr(L, e->a);
  for (const lang_link *l = e->chain; l != NULL && acc >= 0; l = l->next) {
    int32_t rhs = lower_expr(L, l->rhs);
    if (rhs < 0) return lw_poison(L);
    int32_t args[2] = {acc, rhs};
    acc = l->op == TK_PERCENT ? lower_mod(L, acc, rhs, l->tok)
                              : lw_apply(L, binary_spelling(l->op), 2, args);
  }
  return acc;
}

/* A bound of a for/sum/prod range. */
int lower_bound(lower *L, const lang_expr *e, const char *what, int64_t *out) {
  int32_t id = lower_expr(L, e);
  return lw_const_int(L, id, lw_expr_tok(e), what, out);
}

/* Push a loop variable in a fresh scope; returns its symbol index or -1 (OOM, fatal). */
int32_t lower_push_loop_var(lower *L, int32_t var_tok, int64_t value) {
  lang_sym y;
  memset(&y, 0, sizeof y);
  y.name = L->src->text + L->tok[var_tok].off;
  y.len = L->tok[var_tok].len;
  y.kind = SYM_LOOP;
  y.decl_tok = var_tok;
  y.loop_value = value;
  y.id = LANG_UNSET;
  if (lang_function_find(y.name, y.len) >= 0) {
    lw_error(L, var_tok, "'%.*s%s' is a function name and cannot be used as a loop variable",
             LW_NAME(L, var_tok));
    return -1;
  }
  if (L->nloops >= (int32_t)(sizeof L->loops / sizeof L->loops[0])) {
    lw_error(L, var_tok, "loops nested too deeply");
    return -1;
  }
  lang_scope_enter(&L->scope);
  int32_t yi = lang_scope_push(&L->scope, &y);
  if (yi < 0) {
    lang_scope_leave(&L->scope, L->scope.count);
    L->oom = L->fatal = L->failed = 1;
    return -1;
  }
  L->loops[L->nloops++] = yi;
  return yi;
}

void lower_pop_loop_var(lower *L, int32_t yi) {
  --L->nloops;
  lang_scope_leave(&L->scope, yi);
}

static int32_t lower_reduce(lower *L, const lang_expr *e) {
  int is_sum = e->op == TK_SUM;
  int64_t lo, hi;
  if (!lower_bound(L, e->a,
                   is_sum ? "the start of the sum's range" : "the start of the prod's range",
                   &lo) ||
      !lower_bound(L, e->b, is_sum ? "the end of the sum's range" : "the end of the prod's range",
                   &hi))
    return LANG_POISON;
  if (hi <= lo) return lw_const(L, is_sum ? 0.0 : 1.0);
  int32_t yi = lower_push_loop_var(L, e->var_tok, lo);
  if (yi < 0) return LANG_POISON;
  int32_t acc = LANG_POISON;
  for (int64_t i = lo; i < hi; ++i) {
    if (!lw_tick(L, 1)) break;
    L->scope.sym[yi].loop_value = i;
    int32_t term = lower_expr(L, e->c);
    if (term < 0) {
      acc = LANG_POISON;
      break;
    }
    int32_t args[2] = {acc, term};
    acc = i == lo ? term : lw_apply(L, is_sum ? "+" : "*", 2, args);
    if (acc < 0) break;
  }
  lower_pop_loop_var(L, yi);
  return acc < 0 ? lw_poison(L) : acc;
}

int32_t lower_expr(lower *L, const lang_expr *e) {
  if (L->fatal || L->failed || !lw_tick(L, 1)) return LANG_POISON;
  switch (e->kind) {
  case EX_NUM: return lw_const(L, e->num);
  case EX_NAME: return lower_name(L, e);
  case EX_INDEX: return lower_index(L, e);
  case EX_CALL: return lower_call(L, e);
  case EX_UNARY: {
    int32_t a = lower_expr(L, e->a);
    return lw_apply(L, e->op == TK_MINUS ? "neg" : "!", 1, &a);
  }
  case EX_POW: {
    int32_t args[2];
    args[0] = lower_expr(L, e->a);
    args[1] = args[0] < 0 ? LANG_POISON : lower_expr(L, e->b);
    return lw_apply(L, "^", 2, args);
  }
  case EX_CHAIN: return lower_chain(L, e);
  case EX_COND: {
    int32_t args[3] = {lower_expr(L, e->a), LANG_POISON, LANG_POISON};
    if (args[0] >= 0) args[1] = lower_expr(L, e->b);
    if (args[1] >= 0) args[2] = lower_expr(L, e->c);
    return lw_apply(L, "select", 3, args);
  }
  case EX_REDUCE: return lower_reduce(L, e);
  default: return lw_error(L, e->tok, "internal error: unknown expression kind %d", (int)e->kind);
  }
}
