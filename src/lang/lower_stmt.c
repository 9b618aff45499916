/*
 * lower_stmt.c — statements: declarations (inputs and params declared to the builder in order),
 * assignments and compound assignments on lets and outputs, compile-time `for` loops unrolled
 * with their block scope, then the end-of-program checks and the outputs' declaration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "lang/functions.h"
#include "lang/lower_impl.h"

static void lower_stmts(lower *L, const lang_stmt *st, int top);

static int sym_kind_of(int decl) {
  switch (decl) {
  case TK_INPUT: return SYM_INPUT;
  case TK_PARAM: return SYM_PARAM;
  case TK_CONST: return SYM_CONST;
  case TK_LET: return SYM_LET;
  default: return SYM_OUTPUT;
  }
}

/* "x" or "x[3]" as a fresh heap string for the builder; NULL on OOM. */
static char *scalar_name(const lang_sym *y, int64_t k) {
  char *s = (char *)malloc((size_t)y->len + 32);
  if (s == NULL) return NULL;
  memcpy(s, y->name, (size_t)y->len);
  if (k < 0)
    s[y->len] = '\0';
  else
    snprintf(s + y->len, 32, "[%lld]", (long long)k);
  return s;
}

/* Declare the inputs or params of symbol *y to the builder, in order. */
static void declare_leaves(lower *L, lang_sym *y) {
  int64_t n = y->is_vec ? y->n : 1;
  for (int64_t k = 0; k < n && !L->fatal; ++k) {
    char *name = scalar_name(y, y->is_vec ? k : -1);
    if (name == NULL) {
      L->oom = L->fatal = 1;
      return;
    }
    int32_t id = LANG_POISON;
    int st = y->kind == SYM_INPUT ? dual_builder_input(L->b, name, &id)
                                  : dual_builder_param(L->b, name, &id);
    free(name);
    if (st != DUAL_SUCCESS) {
      lw_builder_failed(L, st);
      return;
    }
    if (y->is_vec)
      y->elem[k] = id;
    else
      y->id = id;
  }
}

/* The length K of a vector declaration; 0 on error. */
static int64_t vector_length(lower *L, const lang_stmt *st) {
  int64_t n;
  char what[128];
  snprintf(what, sizeof what, "the length of '%.*s%s'", LW_NAME(L, st->name_tok));
  if (!lower_bound(L, st->size, what, &n)) return 0;
  int32_t t = lw_expr_tok(st->size);
  if (n < 1) {
    lw_error(L, t, "the length of '%.*s%s' must be at least 1, but it is %lld",
             LW_NAME(L, st->name_tok), (long long)n);
    return 0;
  }
  if (n > LANG_MAX_VECTOR) {
    lw_error(L, t, "the length of '%.*s%s' is %lld, more than the limit of %lld elements",
             LW_NAME(L, st->name_tok), (long long)n, (long long)LANG_MAX_VECTOR);
    return 0;
  }
  return n;
}

static void lower_decl(lower *L, const lang_stmt *st) {
  int32_t nt = st->name_tok;
  const char *name = L->src->text + L->tok[nt].off;
  int32_t len = L->tok[nt].len;
  lang_sym y;
  memset(&y, 0, sizeof y);
  y.name = name;
  y.len = len;
  y.kind = sym_kind_of(st->decl);
  y.decl_tok = nt;
  y.id = LANG_UNSET;
  y.is_vec = st->is_vec;
  y.poison = st->bad;
  if (!st->bad && lang_function_find(name, len) >= 0) {
    lw_error(L, nt, "'%.*s%s' is a function name and cannot be declared as a variable",
             LW_NAME(L, nt));
    y.poison = 1;
  }
  const lang_sym *prev = lang_scope_find(&L->scope, name, len);
  if (prev != NULL && prev->depth == L->scope.depth) {
    if (!st->bad)
      lw_error(L, nt, "'%.*s%s' is already declared (as %s at %d:%d)", LW_NAME(L, nt),
               lang_sym_kind_text(prev->kind), (int)L->tok[prev->decl_tok].line,
               (int)L->tok[prev->decl_tok].col);
    return; /* the first declaration stays */
  }
  if (!y.poison && st->is_vec) {
    y.n = vector_length(L, st);
    if (y.n == 0) {
      y.poison = 1;
    } else {
      if (!lw_tick(L, y.n)) return;
      y.elem = (int32_t *)malloc((size_t)y.n * sizeof *y.elem);
      if (y.elem == NULL) {
        L->oom = L->fatal = 1;
        return;
      }
      for (int64_t k = 0; k < y.n; ++k) y.elem[k] = LANG_UNSET;
    }
  }
  if (!y.poison && st->value != NULL) {
    y.id = lower_expr(L, st->value);
    if (y.id >= 0 && st->decl == TK_CONST) {
      double v;
      if (!dual_builder_const_value(L->b, y.id, &v))
        y.id = lw_error(L, lw_expr_tok(st->value),
                        "the value of const '%.*s%s' must be a finite compile-time constant, but "
                        "it depends on an input, a parameter or a non-constant value",
                        LW_NAME(L, nt));
    }
  }
  if (!y.poison && (y.kind == SYM_INPUT || y.kind == SYM_PARAM)) declare_leaves(L, &y);
  int32_t yi = lang_scope_push(&L->scope, &y);
  if (yi < 0) {
    L->oom = L->fatal = 1;
    return;
  }
  if (y.kind == SYM_OUTPUT) {
    if (L->nout == L->outcap) {
      int32_t ncap = L->outcap ? L->outcap * 2 : 16;
      int32_t *o = ncap > 0 ? (int32_t *)realloc(L->outputs, (size_t)ncap * sizeof *o) : NULL;
      if (o == NULL) {
        L->oom = L->fatal = 1;
        return;
      }
      L->outputs = o;
      L->outcap = ncap;
    }
    L->outputs[L->nout++] = yi;
  }
}

static const char *assign_spelling(int op) {
  switch (op) {
  case TK_PLUSEQ: return "+";
  case TK_MINUSEQ: return "-";
  case TK_STAREQ: return "*";
  default: return "/";
  }
}

static void lower_assign(lower *L, const lang_stmt *st) {
  int32_t nt = st->name_tok;
  const char *name = L->src->text + L->tok[nt].off;
  lang_sym *y = lang_scope_find(&L->scope, name, L->tok[nt].len);
  if (y == NULL) {
    if (st->bad)
      lw_poison(L);
    else if (lang_function_find(name, L->tok[nt].len) >= 0)
      lw_error(L, nt, "'%.*s%s' is a function and cannot be assigned", LW_NAME(L, nt));
    else
      lw_unknown(L, nt, 0);
    return;
  }
  int assignable = y->kind == SYM_LET || y->kind == SYM_OUTPUT;
  if (st->bad) { /* cut short by a syntax error: its target's value is unknown from now on */
    if (assignable) y->poison = 1;
    lw_poison(L);
    return;
  }
  if (y->poison) {
    lw_poison(L);
    return;
  }
  if (!assignable) {
    lw_error(L, nt, "cannot assign to '%.*s%s': it is %s", LW_NAME(L, nt), lang_sym_kind_text(y->kind));
    return;
  }
  if (y->is_vec && st->index == NULL) {
    lw_error(L, nt, "'%.*s%s' is a vector; assign its elements one by one, e.g. %.*s%s[0] = ...",
             LW_NAME(L, nt), LW_NAME(L, nt));
    return;
  }
  int32_t yi = (int32_t)(y - L->scope.sym);
  int64_t k = -1;
  if (st->index != NULL) {
    int32_t vi;
    if (!lower_element(L, nt, st->index, &vi, &k)) {
      L->scope.sym[yi].poison = 1; /* which element was meant is unknown */
      return;
    }
  }
  y = &L->scope.sym[yi];
  int32_t *slot = k >= 0 ? &y->elem[k] : &y->id;
  int32_t old = *slot;
  if (st->op != TK_ASSIGN) {
    if (old == LANG_POISON) {
      lw_poison(L);
      return;
    }
    if (old == LANG_UNSET) {
      char what[32];
      snprintf(what, sizeof what, "read by '%s='", assign_spelling(st->op));
      lw_unset(L, nt, what, y->name, y->len, k);
      *slot = LANG_POISON;
      return;
    }
  }
  int32_t v = lower_expr(L, st->value);
  if (st->op != TK_ASSIGN) {
    int32_t args[2] = {old, v};
    v = lw_apply(L, assign_spelling(st->op), 2, args);
  }
  y = &L->scope.sym[yi]; /* the value may have pushed symbols (sum) */
  slot = k >= 0 ? &y->elem[k] : &y->id;
  *slot = v < 0 ? LANG_POISON : v;
}

/* A loop whose range is in error never runs: what its body assigns becomes poison, so reads
 * of those values later do not report a second, consequential error. */
static void poison_targets(lower *L, const lang_stmt *st) {
  for (; st != NULL; st = st->next) {
    if (st->kind == ST_FOR) {
      poison_targets(L, st->body);
    } else if (st->kind == ST_ASSIGN) {
      const lang_token *t = &L->tok[st->name_tok];
      lang_sym *y = lang_scope_find(&L->scope, L->src->text + t->off, t->len);
      if (y != NULL && (y->kind == SYM_LET || y->kind == SYM_OUTPUT)) y->poison = 1;
    }
  }
}

static void lower_for(lower *L, const lang_stmt *st) {
  int64_t lo, hi;
  if (!lower_bound(L, st->lo, "the start of the loop range", &lo) ||
      !lower_bound(L, st->hi, "the end of the loop range", &hi)) {
    poison_targets(L, st->body);
    return;
  }
  if (hi <= lo) return; /* an empty or reversed range runs zero times */
  int32_t yi = lower_push_loop_var(L, st->name_tok, lo);
  if (yi < 0) return;
  for (int64_t i = lo; i < hi && !L->fatal; ++i) {
    /* Once the compilation has an error its result is never built: later iterations would only
     * repeat the body's diagnostics, so a loop's body is checked once (its first iteration);
     * values the skipped iterations would have assigned are then unknown, not errors. */
    if (i > lo && L->diag->count > 0) {
      L->quiet_unset = 1;
      break;
    }
    if (!lw_tick(L, 1)) break;
    L->scope.sym[yi].loop_value = i;
    lower_stmts(L, st->body, 0);
    lang_scope_truncate(&L->scope, yi + 1); /* the body's lets live for one iteration */
  }
  lower_pop_loop_var(L, yi);
}

static void lower_stmts(lower *L, const lang_stmt *st, int top) {
  for (; st != NULL && !L->fatal; st = st->next) {
    L->failed = 0;
    L->stmt_tok = st->tok;
    if (top) L->top_tok = st->tok;
    switch (st->kind) {
    case ST_DECL: lower_decl(L, st); break;
    case ST_ASSIGN: lower_assign(L, st); break;
    default: lower_for(L, st); break;
    }
  }
  L->failed = 0;
}

/* Outputs never (fully) assigned, one error per declaration naming the elements. */
static void check_outputs(lower *L) {
  for (int32_t i = 0; i < L->nout && !L->fatal; ++i) {
    const lang_sym *y = &L->scope.sym[L->outputs[i]];
    L->failed = 0;
    if (y->poison) continue;
    int32_t t = y->decl_tok;
    if (!y->is_vec) {
      if (y->id == LANG_UNSET)
        lw_error(L, t, "output '%.*s%s' is never assigned", LANG_SHOW(y->name, y->len));
      continue;
    }
    int64_t missing = 0, shown = 0;
    char list[160];
    size_t n = 0;
    list[0] = '\0';
    for (int64_t k = 0; k < y->n; ++k) {
      if (y->elem[k] != LANG_UNSET) continue;
      if (++missing <= 3 && n < sizeof list) {
        n += (size_t)snprintf(list + n, sizeof list - n, "%s'%.*s%s[%lld]'", shown ? ", " : "",
                              LANG_SHOW(y->name, y->len), (long long)k);
        ++shown;
      }
    }
    if (missing == 1)
      lw_error(L, t, "output element %s is never assigned", list);
    else if (missing > shown)
      lw_error(L, t, "output elements %s and %lld more are never assigned", list,
               (long long)(missing - shown));
    else if (missing > 0)
      lw_error(L, t, "output elements %s are never assigned", list);
  }
}

/* Hand the outputs to the builder, in declaration order, vectors element by element. */
static void declare_outputs(lower *L) {
  for (int32_t i = 0; i < L->nout && !L->fatal; ++i) {
    const lang_sym *y = &L->scope.sym[L->outputs[i]];
    int64_t n = y->is_vec ? y->n : 1;
    for (int64_t k = 0; k < n && !L->fatal; ++k) {
      char *name = scalar_name(y, y->is_vec ? k : -1);
      if (name == NULL) {
        L->oom = L->fatal = 1;
        return;
      }
      int st = dual_builder_output(L->b, name, y->is_vec ? y->elem[k] : y->id);
      free(name);
      if (st != DUAL_SUCCESS) lw_builder_failed(L, st);
    }
  }
}

int lang_lower(const lang_source *src, const lang_tokens *toks, const lang_stmt *prog,
               int32_t syntax_errors, dual_builder *b, lang_diags *diag) {
  lower *L = (lower *)calloc(1, sizeof *L);
  if (L == NULL) return DUAL_ERR_NO_MEMORY;
  L->src = src;
  L->tok = toks->tok;
  L->b = b;
  L->ctx = dual_builder_context(b);
  L->diag = diag;
  L->quiet_unset = syntax_errors > 0;
  L->max_work = LANG_WORK_BASE + (int64_t)src->len * LANG_WORK_PER_BYTE;
  if (L->max_work > LANG_MAX_WORK) L->max_work = LANG_MAX_WORK;
  L->max_nodes = LANG_NODES_BASE + (int64_t)src->len * LANG_NODES_PER_BYTE;
  if (L->max_nodes > LANG_MAX_NODES) L->max_nodes = LANG_MAX_NODES;
  lang_scope_init(&L->scope);
  lower_stmts(L, prog, 1);
  if (!L->fatal && !L->quiet_unset) {
    check_outputs(L);
    if (L->nout == 0) {
      L->failed = 0;
      int32_t t = 0; /* at the first statement */
      while (toks->tok[t].kind == TK_NEWLINE || toks->tok[t].kind == TK_SEMI) ++t;
      lw_error(L, t, "the program has no output; declare one, e.g. 'output y = x^2'");
    }
  }
  int ok = !L->fatal && diag->count == 0;
  if (ok) {
    L->stmt_tok = L->top_tok = toks->count - 1;
    declare_outputs(L);
    ok = !L->fatal && diag->count == 0;
  }
  int oom = L->oom;
  lang_scope_free(&L->scope);
  free(L->outputs);
  free(L);
  if (oom) return DUAL_ERR_NO_MEMORY;
  return ok ? DUAL_SUCCESS : DUAL_ERR_SYNTAX;
}
