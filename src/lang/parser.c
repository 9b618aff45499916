/*
 * parser.c — the grammar of docs/language.md, by recursive descent with one function per
 * precedence level.  Newlines end statements except inside ( ) and [ ] and after a binary
 * operator, '=', ',', '?' or ':'.  Nesting is bounded by LANG_MAX_DEPTH; on an error the rest of
 * the statement is skipped (braces balanced) and parsing resumes at the next one.
 */
#include "lang/parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dualbatch.h"

typedef struct parser {
  const lang_source *src;
  const lang_token *tok;
  int32_t ntok, pos;
  lang_arena *arena;
  lang_diags *diag;
  int depth;      /* current nesting */
  int nl_skip;    /* > 0 inside ( ) [ ]: newlines are not separators */
  int loop_depth; /* inside a for body */
  int failed;     /* the current statement has an error */
  int oom;
  int32_t errors;
} parser;

/* ---- tokens ------------------------------------------------------------------------------------
 */
static const lang_token *peek(parser *p) {
  if (p->nl_skip > 0)
    while (p->tok[p->pos].kind == TK_NEWLINE) ++p->pos;
  return &p->tok[p->pos];
}

static int at(parser *p, int kind) { return peek(p)->kind == kind; }

/* Consume the current token, return its index (never moves past TK_EOF). */
static int32_t advance(parser *p) {
  peek(p);
  int32_t i = p->pos;
  if (p->tok[i].kind != TK_EOF) ++p->pos;
  return i;
}

/* After a binary operator, '=', ',' ... the expression continues on the next line. */
static void skip_newlines(parser *p) {
  while (p->tok[p->pos].kind == TK_NEWLINE) ++p->pos;
}

static lang_pos pos_of(const parser *p, int32_t i) {
  lang_pos r = {p->tok[i].off, p->tok[i].line, p->tok[i].col};
  return r;
}

/* "found X" text for token i. */
static void describe(const parser *p, int32_t i, char *buf, size_t cap) {
  const lang_token *t = &p->tok[i];
  if (t->kind == TK_IDENT || t->kind == TK_NUM)
    snprintf(buf, cap, "'%.*s%s'", LANG_SHOW(p->src->text + t->off, t->len));
  else
    snprintf(buf, cap, "%s", lang_token_kind_text(t->kind));
}

/* Report a syntax error at token i (the first of the statement only).  A TK_ERROR token is
 * reported with the lexer's message instead, whatever was expected.  Returns NULL. */
static void *perr(parser *p, int32_t i, const char *fmt, ...) DUAL_PRINTF(3, 4);
static void *perr(parser *p, int32_t i, const char *fmt, ...) {
  if (p->failed) return NULL;
  p->failed = 1;
  ++p->errors;
  char msg[256];
  if (p->tok[i].kind == TK_ERROR) {
    lang_lex_error_message(p->src, &p->tok[i], msg, (int)sizeof msg);
  } else {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
  }
  lang_pos pos = pos_of(p, i);
  if (p->tok[i].kind == TK_EOF) { /* "found end of input": point just after the last token */
    int32_t j = i - 1;
    while (j >= 0 && p->tok[j].kind == TK_NEWLINE) --j;
    if (j >= 0) {
      pos.off = p->tok[j].off + p->tok[j].len;
      pos.line = p->tok[j].line;
      pos.col = p->tok[j].col + p->tok[j].len;
    }
  }
  lang_diag_add(p->diag, DUAL_ERR_SYNTAX, pos, "%s", msg);
  return NULL;
}

/* Expect token `kind`; `what` completes "expected ...". */
static int expect(parser *p, int kind, const char *what) {
  if (at(p, kind)) {
    advance(p);
    return 1;
  }
  char found[96];
  describe(p, p->pos, found, sizeof found);
  perr(p, p->pos, "expected %s, found %s", what, found);
  return 0;
}

/* The keywords are listed together in LANG_TOKEN_LIST, from TK_INPUT to TK_PROD. */
static int is_keyword(int kind) { return kind >= TK_INPUT && kind <= TK_PROD; }

/* Expect a name to declare; `what` says where ("after 'input'"). Returns its token or -1. */
static int32_t expect_name(parser *p, const char *what) {
  const lang_token *t = peek(p);
  if (t->kind == TK_IDENT) return advance(p);
  if (is_keyword(t->kind)) {
    perr(p, p->pos, "%s is a reserved word and cannot be used as a name",
         lang_token_kind_text(t->kind));
    return -1;
  }
  char found[96];
  describe(p, p->pos, found, sizeof found);
  perr(p, p->pos, "expected a name %s, found %s", what, found);
  return -1;
}

static lang_expr *new_expr(parser *p, int kind, int32_t tok) {
  lang_expr *e = (lang_expr *)lang_arena_alloc(p->arena, sizeof *e);
  if (e == NULL) {
    p->oom = 1;
    p->failed = 1;
    return NULL;
  }
  e->kind = kind;
  e->tok = tok;
  return e;
}

static lang_stmt *new_stmt(parser *p, int kind, int32_t tok) {
  lang_stmt *s = (lang_stmt *)lang_arena_alloc(p->arena, sizeof *s);
  if (s == NULL) {
    p->oom = 1;
    p->failed = 1;
    return NULL;
  }
  s->kind = kind;
  s->tok = tok;
  s->name_tok = -1;
  s->op_tok = -1;
  return s;
}

/* ---- expressions -------------------------------------------------------------------------------
 */
static lang_expr *parse_expr(parser *p);
static lang_expr *parse_unary(parser *p);

/* Enter one nesting level; 0 (error reported) beyond LANG_MAX_DEPTH. */
static int enter(parser *p) {
  if (p->depth >= LANG_MAX_DEPTH) {
    perr(p, p->pos,
         "nesting too deep (more than %d levels of parentheses, calls, operators or "
         "loops)",
         LANG_MAX_DEPTH);
    return 0;
  }
  ++p->depth;
  return 1;
}

/* ( expr ) after '(' was consumed; `open` is the '(' token, `what` names the construct. */
static int close_paren(parser *p, int kind, int32_t open, const char *what) {
  if (at(p, kind)) {
    advance(p);
    return 1;
  }
  char found[96];
  describe(p, p->pos, found, sizeof found);
  perr(p, p->pos, "expected '%s' to close %s opened at %d:%d, found %s",
       kind == TK_RPAREN ? ")" : "]", what, (int)p->tok[open].line, (int)p->tok[open].col, found);
  return 0;
}

/* f(a, b, ...) with the name at `name` and the current token '('. */
static lang_expr *parse_call(parser *p, int32_t name) {
  int32_t open = advance(p);
  lang_expr *e = new_expr(p, EX_CALL, name);
  if (e == NULL) return NULL;
  ++p->nl_skip;
  lang_expr **tail = &e->args;
  if (!at(p, TK_RPAREN)) {
    for (;;) {
      lang_expr *arg = parse_expr(p);
      if (arg == NULL) return NULL;
      *tail = arg;
      tail = &arg->next;
      ++e->nargs;
      if (!at(p, TK_COMMA)) break;
      advance(p);
    }
  }
  if (!close_paren(p, TK_RPAREN, open, "the argument list")) return NULL;
  --p->nl_skip;
  return e;
}

/* sum(I in A..B, EXPR) / prod(...), the current token being the keyword. */
static lang_expr *parse_reduce(parser *p) {
  int32_t kw = advance(p);
  lang_expr *e = new_expr(p, EX_REDUCE, kw);
  if (e == NULL) return NULL;
  e->op = p->tok[kw].kind;
  const char *name = e->op == TK_SUM ? "'sum'" : "'prod'";
  char what[64];
  snprintf(what, sizeof what, "'(' after %s (%s(i in A..B, expression))", name,
           e->op == TK_SUM ? "sum" : "prod");
  peek(p);
  int32_t open = p->pos;
  if (!expect(p, TK_LPAREN, what)) return NULL;
  ++p->nl_skip;
  snprintf(what, sizeof what, "as the index variable of %s", name);
  e->var_tok = expect_name(p, what);
  if (e->var_tok < 0) return NULL;
  if (!expect(p, TK_IN, "'in' after the index variable")) return NULL;
  if ((e->a = parse_expr(p)) == NULL) return NULL;
  if (!expect(p, TK_DOTDOT, "'..' in the range A..B")) return NULL;
  if ((e->b = parse_expr(p)) == NULL) return NULL;
  if (!expect(p, TK_COMMA, "',' before the summand")) return NULL;
  if ((e->c = parse_expr(p)) == NULL) return NULL;
  if (!close_paren(p, TK_RPAREN, open, name)) return NULL;
  --p->nl_skip;
  return e;
}

static lang_expr *parse_primary(parser *p) {
  const lang_token *t = peek(p);
  switch (t->kind) {
  case TK_NUM: {
    lang_expr *e = new_expr(p, EX_NUM, advance(p));
    if (e) e->num = t->num;
    return e;
  }
  case TK_IDENT: {
    int32_t name = advance(p);
    if (at(p, TK_LPAREN)) return parse_call(p, name);
    if (at(p, TK_LBRACK)) {
      int32_t open = advance(p);
      lang_expr *e = new_expr(p, EX_INDEX, name);
      if (e == NULL) return NULL;
      ++p->nl_skip;
      if ((e->a = parse_expr(p)) == NULL) return NULL;
      if (!close_paren(p, TK_RBRACK, open, "the index")) return NULL;
      --p->nl_skip;
      return e;
    }
    return new_expr(p, EX_NAME, name);
  }
  case TK_LPAREN: {
    int32_t open = advance(p);
    ++p->nl_skip;
    lang_expr *e = parse_expr(p);
    if (e == NULL || !close_paren(p, TK_RPAREN, open, "the parenthesis")) return NULL;
    --p->nl_skip;
    return e;
  }
  case TK_SUM:
  case TK_PROD: return parse_reduce(p);
  default: {
    char found[96];
    describe(p, p->pos, found, sizeof found);
    if (t->kind == TK_STAR && p->pos > 0 && p->tok[p->pos - 1].kind == TK_STAR &&
        p->tok[p->pos - 1].off + 1 == t->off)
      return perr(p, p->pos, "'**' is not an operator; write powers with '^' (x^2)");
    return perr(p, p->pos, "expected an expression, found %s", found);
  }
  }
}

/* power := primary ['^' unary]   (right-associative; binds tighter than unary minus) */
static lang_expr *parse_power(parser *p) {
  lang_expr *base = parse_primary(p);
  if (base == NULL || !at(p, TK_CARET)) return base;
  int32_t op = advance(p);
  skip_newlines(p);
  lang_expr *e = new_expr(p, EX_POW, op);
  if (e == NULL) return NULL;
  e->a = base;
  if (!enter(p)) return NULL;
  e->b = parse_unary(p);
  --p->depth;
  return e->b != NULL ? e : NULL;
}

/* unary := ('-' | '!') unary | power */
static lang_expr *parse_unary(parser *p) {
  int kind = peek(p)->kind;
  if (kind != TK_MINUS && kind != TK_BANG) return parse_power(p);
  lang_expr *e = new_expr(p, EX_UNARY, advance(p));
  if (e == NULL || !enter(p)) return NULL;
  e->op = kind;
  e->a = parse_unary(p);
  --p->depth;
  return e->a != NULL ? e : NULL;
}

/* Binary levels, loosest first; each is a left-associative chain. */
#define N_LEVELS 6
static int level_has(int level, int kind) {
  switch (level) {
  case 0: return kind == TK_OROR;
  case 1: return kind == TK_ANDAND;
  case 2: return kind == TK_EQ || kind == TK_NE;
  case 3: return kind == TK_LT || kind == TK_LE || kind == TK_GT || kind == TK_GE;
  case 4: return kind == TK_PLUS || kind == TK_MINUS;
  default: return kind == TK_STAR || kind == TK_SLASH || kind == TK_PERCENT;
  }
}

static lang_expr *parse_binary(parser *p, int level) {
  if (level == N_LEVELS) return parse_unary(p);
  lang_expr *lhs = parse_binary(p, level + 1);
  if (lhs == NULL || !level_has(level, peek(p)->kind)) return lhs;
  lang_expr *e = new_expr(p, EX_CHAIN, p->pos);
  if (e == NULL) return NULL;
  e->a = lhs;
  lang_link **tail = &e->chain;
  while (level_has(level, peek(p)->kind)) {
    lang_link *l = (lang_link *)lang_arena_alloc(p->arena, sizeof *l);
    if (l == NULL) {
      p->oom = p->failed = 1;
      return NULL;
    }
    l->tok = advance(p);
    l->op = p->tok[l->tok].kind;
    skip_newlines(p);
    if ((l->rhs = parse_binary(p, level + 1)) == NULL) return NULL;
    *tail = l;
    tail = &l->next;
  }
  return e;
}

/* expr := or ['?' expr ':' expr]   (right-associative) */
static lang_expr *parse_expr(parser *p) {
  if (!enter(p)) return NULL;
  lang_expr *e = parse_binary(p, 0);
  if (e != NULL && at(p, TK_QUESTION)) {
    lang_expr *c = new_expr(p, EX_COND, advance(p));
    skip_newlines(p);
    if (c != NULL) {
      c->a = e;
      c->b = parse_expr(p);
      if (c->b != NULL && expect(p, TK_COLON, "':' of the conditional expression c ? a : b")) {
        skip_newlines(p);
        c->c = parse_expr(p);
      }
    }
    e = (c != NULL && c->c != NULL) ? c : NULL;
  }
  --p->depth;
  return e;
}

/* ---- statements --------------------------------------------------------------------------------
 */
static lang_stmt *parse_stmts(parser *p, int in_block);

static lang_stmt *parse_decl(parser *p) {
  int32_t kw = advance(p);
  int kind = p->tok[kw].kind;
  const char *kwtext = lang_token_kind_text(kind);
  if (p->loop_depth > 0 && kind != TK_LET)
    return perr(p, kw, "%s declarations must be at the top level, not inside a 'for' loop", kwtext);
  char what[48];
  snprintf(what, sizeof what, "after %s", kwtext);
  int32_t name = expect_name(p, what);
  if (name < 0) return NULL;
  lang_stmt *st = new_stmt(p, ST_DECL, kw);
  if (st == NULL) return NULL;
  st->decl = kind;
  st->name_tok = name;
  const lang_token *nt = &p->tok[name];
  if (at(p, TK_LBRACK)) {
    int32_t open = advance(p);
    st->is_vec = 1;
    ++p->nl_skip;
    st->size = parse_expr(p);
    if (st->size == NULL || !close_paren(p, TK_RBRACK, open, "the vector length")) {
      st->bad = 1;
      return st;
    }
    --p->nl_skip;
  }
  if (at(p, TK_ASSIGN)) {
    int32_t eq = p->pos;
    if (st->is_vec) {
      perr(p, eq,
           "a vector declaration has no initializer; assign its elements, e.g. %.*s%s[0] = ...",
           LANG_SHOW(p->src->text + nt->off, nt->len));
    } else if (kind == TK_INPUT || kind == TK_PARAM) {
      perr(p, eq, "%s '%.*s%s' cannot be given a value: its values are supplied at evaluation time",
           kind == TK_INPUT ? "input" : "param", LANG_SHOW(p->src->text + nt->off, nt->len));
    } else {
      advance(p);
      skip_newlines(p);
      st->value = parse_expr(p);
    }
    if (st->value == NULL) st->bad = 1;
  } else if (kind == TK_CONST) {
    char found[96];
    describe(p, p->pos, found, sizeof found);
    perr(p, p->pos, "expected '=' and a value after 'const %.*s%s', found %s",
         LANG_SHOW(p->src->text + nt->off, nt->len), found);
    st->bad = 1;
  }
  return st;
}

static lang_stmt *parse_assign(parser *p) {
  int32_t name = advance(p);
  lang_stmt *st = new_stmt(p, ST_ASSIGN, name);
  if (st == NULL) return NULL;
  st->name_tok = name;
  if (at(p, TK_LBRACK)) {
    int32_t open = advance(p);
    ++p->nl_skip;
    st->index = parse_expr(p);
    if (st->index == NULL || !close_paren(p, TK_RBRACK, open, "the index")) {
      st->bad = 1;
      return st;
    }
    --p->nl_skip;
  }
  int kind = peek(p)->kind;
  if (kind != TK_ASSIGN && kind != TK_PLUSEQ && kind != TK_MINUSEQ && kind != TK_STAREQ &&
      kind != TK_SLASHEQ) {
    char found[96];
    describe(p, p->pos, found, sizeof found);
    const lang_token *nt = &p->tok[name];
    if (kind == TK_LPAREN)
      perr(p, p->pos, "a call is not a statement; use its value, e.g. 'let v = %.*s%s(...)'",
           LANG_SHOW(p->src->text + nt->off, nt->len));
    else
      perr(p, p->pos, "expected '=', '+=', '-=', '*=' or '/=' after '%.*s%s', found %s",
           LANG_SHOW(p->src->text + nt->off, nt->len), found);
    st->bad = 1;
    return st;
  }
  st->op = kind;
  st->op_tok = advance(p);
  skip_newlines(p);
  st->value = parse_expr(p);
  if (st->value == NULL) st->bad = 1;
  return st;
}

static lang_stmt *parse_for(parser *p) {
  int32_t kw = advance(p);
  if (!enter(p)) return NULL;
  lang_stmt *st = NULL;
  int32_t var = expect_name(p, "as the loop variable after 'for'");
  if (var >= 0 && expect(p, TK_IN, "'in' after the loop variable (for i in A..B { ... })") &&
      (st = new_stmt(p, ST_FOR, kw)) != NULL) {
    st->name_tok = var;
    if ((st->lo = parse_expr(p)) == NULL || !expect(p, TK_DOTDOT, "'..' in the loop range A..B") ||
        (st->hi = parse_expr(p)) == NULL) {
      st = NULL;
    } else {
      skip_newlines(p);
      int32_t open = p->pos;
      if (!expect(p, TK_LBRACE, "'{' to start the loop body")) {
        st = NULL;
      } else {
        ++p->loop_depth;
        st->body = parse_stmts(p, 1);
        --p->loop_depth;
        if (!p->oom && !lang_diag_full(p->diag) && !at(p, TK_RBRACE)) {
          char found[96];
          describe(p, p->pos, found, sizeof found);
          perr(p, p->pos, "expected '}' to close the loop body opened at %d:%d, found %s",
               (int)p->tok[open].line, (int)p->tok[open].col, found);
        } else {
          advance(p);
        }
      }
    }
  }
  --p->depth;
  return st;
}

static lang_stmt *parse_stmt(parser *p) {
  const lang_token *t = peek(p);
  switch (t->kind) {
  case TK_INPUT:
  case TK_PARAM:
  case TK_CONST:
  case TK_LET:
  case TK_OUTPUT: return parse_decl(p);
  case TK_FOR: return parse_for(p);
  case TK_IDENT: return parse_assign(p);
  default: {
    char found[96];
    describe(p, p->pos, found, sizeof found);
    return perr(p, p->pos, "expected a statement (a declaration, an assignment or 'for'), found %s",
                found);
  }
  }
}

static int starts_statement(int kind) {
  return kind == TK_INPUT || kind == TK_PARAM || kind == TK_CONST || kind == TK_LET ||
         kind == TK_OUTPUT || kind == TK_FOR;
}

/* Skip the rest of a failed statement: up to and including its newline or ';', or up to (not
 * including) an unmatched '}' or a declaration keyword that starts a later line.  Braces inside
 * the skipped text are balanced, so a broken loop header skips its whole body. */
static void sync(parser *p, int32_t start) {
  int braces = 0;
  for (;;) {
    const lang_token *t = &p->tok[p->pos];
    if (t->kind == TK_EOF) return;
    if (braces == 0) {
      if (t->kind == TK_NEWLINE || t->kind == TK_SEMI) {
        ++p->pos;
        return;
      }
      if (t->kind == TK_RBRACE) return;
      if (p->pos != start && t->bol && starts_statement(t->kind)) return;
    }
    if (t->kind == TK_LBRACE) ++braces;
    if (t->kind == TK_RBRACE) --braces;
    ++p->pos;
  }
}

static lang_stmt *parse_stmts(parser *p, int in_block) {
  lang_stmt *first = NULL, **tail = &first;
  while (!p->oom && !lang_diag_full(p->diag)) {
    p->nl_skip = 0;
    p->failed = 0;
    const lang_token *t = peek(p);
    if (t->kind == TK_NEWLINE || t->kind == TK_SEMI) {
      advance(p);
      continue;
    }
    if (t->kind == TK_EOF) break;
    if (t->kind == TK_RBRACE) {
      if (in_block) break;
      perr(p, advance(p), "unexpected '}' with no open block");
      continue;
    }
    int32_t start = p->pos;
    int depth = p->depth;
    lang_stmt *st = parse_stmt(p);
    if (!p->failed && st != NULL && st->kind != ST_FOR) {
      int k = peek(p)->kind;
      if (k != TK_NEWLINE && k != TK_SEMI && k != TK_RBRACE && k != TK_EOF) {
        char found[96];
        describe(p, p->pos, found, sizeof found);
        perr(p, p->pos, "expected the end of the statement (a new line or ';'), found %s", found);
      }
    }
    if (p->failed) {
      p->depth = depth;
      sync(p, start);
    }
    if (st != NULL) {
      *tail = st;
      tail = &st->next;
    }
  }
  p->failed = 0;
  return first;
}

int lang_parse(const lang_source *src, const lang_tokens *toks, lang_arena *arena, lang_diags *diag,
               lang_parse_result *out) {
  parser p;
  memset(&p, 0, sizeof p);
  p.src = src;
  p.tok = toks->tok;
  p.ntok = toks->count;
  p.arena = arena;
  p.diag = diag;
  out->first = parse_stmts(&p, 0);
  out->errors = p.errors;
  return p.oom ? DUAL_ERR_NO_MEMORY : DUAL_SUCCESS;
}
