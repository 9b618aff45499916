/*
 * parser.h — recursive-descent parser from tokens to the syntax tree (ast.h).  Reports syntax
 * errors (the first of each statement), resynchronizes at the next statement, and keeps
 * declarations cut short by an error (flagged `bad`) so their names stay known to the lowering.
 * Included by compile.c.
 */
#ifndef DUAL_LANG_PARSER_H
#define DUAL_LANG_PARSER_H

#include "lang/ast.h"
#include "lang/diag.h"
#include "lang/lexer.h"

typedef struct lang_parse_result {
  lang_stmt *first; /* the top-level statements */
  int32_t errors;   /* syntax errors found (reported or not) */
} lang_parse_result;

/* Parse all tokens.  Returns DUAL_SUCCESS (syntax errors are in `diag`) or DUAL_ERR_NO_MEMORY. */
int lang_parse(const lang_source *src, const lang_tokens *toks, lang_arena *arena, lang_diags *diag,
               lang_parse_result *out);

#endif /* DUAL_LANG_PARSER_H */
