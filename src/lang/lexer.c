/*
 * lexer.c — program text to tokens: names, keywords, numbers (parsed independently of the C
 * locale), operators, newlines as statement separators, `#` comments.  Every byte either
 * belongs to a token, to whitespace/comments, or to a TK_ERROR token; nothing is skipped silently.
 */
#include "lang/lexer.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"

static const char *const kind_text[TK_COUNT] = {
#define LANG_X_TEXT(kind, text) text,
    LANG_TOKEN_LIST(LANG_X_TEXT)
#undef LANG_X_TEXT
};

const char *lang_token_kind_text(int kind) {
  return (kind >= 0 && kind < TK_COUNT) ? kind_text[kind] : "a token";
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }

static const struct {
  const char *word;
  int kind;
} keywords[] = {{"input", TK_INPUT}, {"param", TK_PARAM},   {"const", TK_CONST},
                {"let", TK_LET},     {"output", TK_OUTPUT}, {"for", TK_FOR},
                {"in", TK_IN},       {"sum", TK_SUM},       {"prod", TK_PROD}};

static int keyword_kind(const char *s, int32_t len) {
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; ++i)
    if ((size_t)len == strlen(keywords[i].word) && memcmp(s, keywords[i].word, (size_t)len) == 0)
      return keywords[i].kind;
  return TK_IDENT;
}

/* Convert a validated decimal literal ([0-9]*.?[0-9]*([eE][+-]?[0-9]+)?) to a double.  strtod
 * reads the locale's decimal point, so '.' is replaced by it first.  0 on OOM. */
static int number_value(const char *s, int32_t len, double *out) {
  const char *dp = localeconv()->decimal_point;
  size_t dpl = (dp && dp[0]) ? strlen(dp) : 1;
  size_t cap = (size_t)len * dpl + 1;
  char small[128];
  char *buf = cap <= sizeof small ? small : (char *)malloc(cap);
  if (buf == NULL) return 0;
  size_t k = 0;
  for (int32_t i = 0; i < len; ++i) {
    if (s[i] == '.' && dp && dp[0]) {
      memcpy(buf + k, dp, dpl);
      k += dpl;
    } else {
      buf[k++] = s[i];
    }
  }
  buf[k] = '\0';
  *out = strtod(buf, NULL);
  if (buf != small) free(buf);
  return 1;
}

typedef struct lexer {
  const lang_source *src;
  lang_tokens *out;
  int32_t cap;
  int32_t pos, line, line_start;
  int32_t bol; /* no token yet on the current line */
} lexer;

static int push(lexer *lx, int kind, int32_t start, int32_t end) {
  if (lx->out->count == lx->cap) {
    if (lx->cap > INT32_MAX / 2) return DUAL_ERR_LIMIT;
    int32_t ncap = lx->cap ? lx->cap * 2 : 256;
    lang_token *t = (lang_token *)realloc(lx->out->tok, (size_t)ncap * sizeof *t);
    if (t == NULL) return DUAL_ERR_NO_MEMORY;
    lx->out->tok = t;
    lx->cap = ncap;
  }
  lang_token *t = &lx->out->tok[lx->out->count++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->off = start;
  t->len = end - start;
  t->line = lx->line;
  t->col = start - lx->line_start + 1;
  t->bol = lx->bol;
  lx->bol = 0;
  return DUAL_SUCCESS;
}

/* Scan a number starting at lx->pos; pushes TK_NUM or TK_ERROR. */
static int lex_number(lexer *lx) {
  const char *s = lx->src->text;
  int32_t n = lx->src->len, i = lx->pos, start = lx->pos;
  int ok = 1;
  while (i < n && is_digit((unsigned char)s[i])) ++i;
  if (i < n && s[i] == '.' && !(i + 1 < n && s[i + 1] == '.')) {
    ++i;
    while (i < n && is_digit((unsigned char)s[i])) ++i;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    int32_t j = i + 1;
    if (j < n && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < n && is_digit((unsigned char)s[j])) {
      while (j < n && is_digit((unsigned char)s[j])) ++j;
      i = j;
    } else {
      ok = 0;
      i = j;
    }
  }
  /* A number glued to letters, digits or a single '.' is one malformed token ("2x", "1.2.3"). */
  while (i < n &&
         (is_ident_char((unsigned char)s[i]) || (s[i] == '.' && !(i + 1 < n && s[i + 1] == '.')))) {
    ok = 0;
    ++i;
  }
  int st = push(lx, ok ? TK_NUM : TK_ERROR, start, i);
  if (st) return st;
  lang_token *t = &lx->out->tok[lx->out->count - 1];
  if (!ok) {
    t->err = LEX_BAD_NUMBER;
  } else {
    double v = 0.0;
    if (!number_value(s + start, i - start, &v)) return DUAL_ERR_NO_MEMORY;
    if (!isfinite(v)) {
      t->kind = TK_ERROR;
      t->err = LEX_NUMBER_RANGE;
    } else {
      t->num = v;
    }
  }
  lx->pos = i;
  return DUAL_SUCCESS;
}

/* Operators of one or two characters; returns the token kind and sets *len, or -1. */
static int lex_operator(const char *s, int32_t avail, int32_t *len) {
  char c = s[0], d = avail > 1 ? s[1] : '\0';
  *len = 2;
  switch (c) {
  case '.':
    if (d == '.') return TK_DOTDOT;
    break;
  case '+':
    if (d == '=') return TK_PLUSEQ;
    break;
  case '-':
    if (d == '=') return TK_MINUSEQ;
    break;
  case '*':
    if (d == '=') return TK_STAREQ;
    break;
  case '/':
    if (d == '=') return TK_SLASHEQ;
    break;
  case '<':
    if (d == '=') return TK_LE;
    break;
  case '>':
    if (d == '=') return TK_GE;
    break;
  case '=':
    if (d == '=') return TK_EQ;
    break;
  case '!':
    if (d == '=') return TK_NE;
    break;
  case '&':
    if (d == '&') return TK_ANDAND;
    break;
  case '|':
    if (d == '|') return TK_OROR;
    break;
  default: break;
  }
  *len = 1;
  switch (c) {
  case ';': return TK_SEMI;
  case '(': return TK_LPAREN;
  case ')': return TK_RPAREN;
  case '[': return TK_LBRACK;
  case ']': return TK_RBRACK;
  case '{': return TK_LBRACE;
  case '}': return TK_RBRACE;
  case ',': return TK_COMMA;
  case '=': return TK_ASSIGN;
  case '+': return TK_PLUS;
  case '-': return TK_MINUS;
  case '*': return TK_STAR;
  case '/': return TK_SLASH;
  case '%': return TK_PERCENT;
  case '^': return TK_CARET;
  case '<': return TK_LT;
  case '>': return TK_GT;
  case '!': return TK_BANG;
  case '?': return TK_QUESTION;
  case ':': return TK_COLON;
  default: return -1;
  }
}

static int lex_all(lexer *lx) {
  const char *s = lx->src->text;
  int32_t n = lx->src->len;
  while (lx->pos < n) {
    unsigned char c = (unsigned char)s[lx->pos];
    int32_t start = lx->pos;
    int st = DUAL_SUCCESS;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++lx->pos;
    } else if (c == '#') {
      while (lx->pos < n && s[lx->pos] != '\n') ++lx->pos;
    } else if (c == '\n') {
      st = push(lx, TK_NEWLINE, start, start + 1);
      ++lx->pos;
      ++lx->line;
      lx->line_start = lx->pos;
      lx->bol = 1;
    } else if (is_ident_start(c)) {
      while (lx->pos < n && is_ident_char((unsigned char)s[lx->pos])) ++lx->pos;
      st = push(lx, keyword_kind(s + start, lx->pos - start), start, lx->pos);
    } else if (is_digit(c) ||
               (c == '.' && start + 1 < n && is_digit((unsigned char)s[start + 1]))) {
      st = lex_number(lx);
    } else {
      int32_t len = 1;
      int kind = lex_operator(s + start, n - start, &len);
      st = push(lx, kind >= 0 ? kind : TK_ERROR, start, start + len);
      if (kind < 0) lx->out->tok[lx->out->count - 1].err = LEX_BAD_CHAR;
      lx->pos += len;
    }
    if (st) return st;
  }
  return push(lx, TK_EOF, n, n);
}

int lang_lex(const lang_source *src, lang_tokens *out) {
  out->tok = NULL;
  out->count = 0;
  lexer lx;
  memset(&lx, 0, sizeof lx);
  lx.src = src;
  lx.out = out;
  lx.line = 1;
  lx.bol = 1;
  int st = src->len > LANG_MAX_SOURCE ? DUAL_ERR_LIMIT : lex_all(&lx);
  if (st) lang_tokens_free(out);
  return st;
}

void lang_tokens_free(lang_tokens *t) {
  free(t->tok);
  t->tok = NULL;
  t->count = 0;
}

void lang_lex_error_message(const lang_source *src, const lang_token *t, char *buf, int cap) {
  size_t ucap = cap > 0 ? (size_t)cap : 0;
  if (ucap == 0) return;
  const char *s = src->text + t->off;
  int shown = t->len > 40 ? 40 : t->len;
  const char *more = t->len > 40 ? "..." : "";
  switch (t->err) {
  case LEX_BAD_NUMBER: snprintf(buf, ucap, "malformed number '%.*s%s'", shown, s, more); break;
  case LEX_NUMBER_RANGE:
    snprintf(buf, ucap, "number '%.*s%s' is too large (not a finite double)", shown, s, more);
    break;
  default: {
    unsigned char c = (unsigned char)s[0];
    if (c == '&' || c == '|')
      snprintf(buf, ucap, "unexpected character '%c' (did you mean '%c%c'?)", c, c, c);
    else if (c >= 0x21 && c < 0x7f)
      snprintf(buf, ucap, "unexpected character '%c'", c);
    else
      snprintf(buf, ucap, "unexpected character '\\x%02X'", (unsigned)c);
    break;
  }
  }
}
