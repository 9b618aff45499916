/*
 * lexer.h — splits program text into an array of tokens (with line/column) in one pass.
 * Bad bytes and malformed numbers become TK_ERROR tokens that the parser reports, so every
 * diagnostic follows the parser's one-error-per-statement rule.  Included by parser.c and
 * compile.c.
 */
#ifndef DUAL_LANG_LEXER_H
#define DUAL_LANG_LEXER_H

#include <stdint.h>

#include "lang/common.h"

/* X(kind, text shown in diagnostics) */
#define LANG_TOKEN_LIST(X)                                                                         \
  X(TK_EOF, "end of input")                                                                        \
  X(TK_NEWLINE, "end of line")                                                                     \
  X(TK_SEMI, "';'")                                                                                \
  X(TK_IDENT, "a name")                                                                            \
  X(TK_NUM, "a number")                                                                            \
  X(TK_ERROR, "an invalid character")                                                              \
  X(TK_INPUT, "'input'")                                                                           \
  X(TK_PARAM, "'param'")                                                                           \
  X(TK_CONST, "'const'")                                                                           \
  X(TK_LET, "'let'")                                                                               \
  X(TK_OUTPUT, "'output'")                                                                         \
  X(TK_FOR, "'for'")                                                                               \
  X(TK_IN, "'in'")                                                                                 \
  X(TK_SUM, "'sum'")                                                                               \
  X(TK_PROD, "'prod'")                                                                             \
  X(TK_LPAREN, "'('")                                                                              \
  X(TK_RPAREN, "')'")                                                                              \
  X(TK_LBRACK, "'['")                                                                              \
  X(TK_RBRACK, "']'")                                                                              \
  X(TK_LBRACE, "'{'")                                                                              \
  X(TK_RBRACE, "'}'")                                                                              \
  X(TK_COMMA, "','")                                                                               \
  X(TK_DOTDOT, "'..'")                                                                             \
  X(TK_ASSIGN, "'='")                                                                              \
  X(TK_PLUSEQ, "'+='")                                                                             \
  X(TK_MINUSEQ, "'-='")                                                                            \
  X(TK_STAREQ, "'*='")                                                                             \
  X(TK_SLASHEQ, "'/='")                                                                            \
  X(TK_PLUS, "'+'")                                                                                \
  X(TK_MINUS, "'-'")                                                                               \
  X(TK_STAR, "'*'")                                                                                \
  X(TK_SLASH, "'/'")                                                                               \
  X(TK_PERCENT, "'%'")                                                                             \
  X(TK_CARET, "'^'")                                                                               \
  X(TK_LT, "'<'")                                                                                  \
  X(TK_LE, "'<='")                                                                                 \
  X(TK_GT, "'>'")                                                                                  \
  X(TK_GE, "'>='")                                                                                 \
  X(TK_EQ, "'=='")                                                                                 \
  X(TK_NE, "'!='")                                                                                 \
  X(TK_ANDAND, "'&&'")                                                                             \
  X(TK_OROR, "'||'")                                                                               \
  X(TK_BANG, "'!'")                                                                                \
  X(TK_QUESTION, "'?'")                                                                            \
  X(TK_COLON, "':'")

typedef enum lang_token_kind {
#define LANG_X_ENUM(kind, text) kind,
  LANG_TOKEN_LIST(LANG_X_ENUM)
#undef LANG_X_ENUM
  TK_COUNT
} lang_token_kind;

/* Why a TK_ERROR token is bad. */
typedef enum lang_lex_error {
  LEX_BAD_CHAR,    /* a byte that starts no token */
  LEX_BAD_NUMBER,  /* "1e", "1.2.3", "2x" */
  LEX_NUMBER_RANGE /* "1e999": not representable as a finite double */
} lang_lex_error;

typedef struct lang_token {
  int32_t kind; /* lang_token_kind */
  int32_t off;  /* byte offset in the source */
  int32_t len;  /* bytes */
  int32_t line; /* 1-based */
  int32_t col;  /* 1-based, in bytes */
  int32_t bol;  /* 1 if the first token on its line */
  int32_t err;  /* TK_ERROR: lang_lex_error */
  double num;   /* TK_NUM: the value (finite) */
} lang_token;

typedef struct lang_tokens {
  lang_token *tok; /* [count], the last one is TK_EOF */
  int32_t count;
} lang_tokens;

/* Tokenize src.  Returns 0, or DUAL_ERR_NO_MEMORY / DUAL_ERR_LIMIT (tokens left empty). */
int lang_lex(const lang_source *src, lang_tokens *out);
void lang_tokens_free(lang_tokens *t);

/* The diagnostic text for a token kind ("'+='", "end of line"). */
const char *lang_token_kind_text(int kind);

/* The message for a TK_ERROR token, written into buf (always NUL-terminated). */
void lang_lex_error_message(const lang_source *src, const lang_token *t, char *buf, int cap);

#endif /* DUAL_LANG_LEXER_H */
