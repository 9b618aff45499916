/*
 * lower.h — semantic analysis and lowering: walks the syntax tree, unrolls loops and reductions,
 * checks names, indices and assignments, and emits builder calls.  Included by compile.c.
 */
#ifndef DUAL_LANG_LOWER_H
#define DUAL_LANG_LOWER_H

#include "dualbatch.h"
#include "lang/ast.h"
#include "lang/diag.h"
#include "lang/lexer.h"

/* Lower `prog` into the builder `b`.  `syntax_errors` > 0 quiets the errors that a statement
 * dropped by the parser could cause (reads of unassigned values, unassigned outputs).  Returns
 * DUAL_SUCCESS only when there was no error at all and every output has been declared to the
 * builder (ready for dual_builder_finish); otherwise the errors are in `diag` (or, for
 * DUAL_ERR_NO_MEMORY, maybe not). */
int lang_lower(const lang_source *src, const lang_tokens *toks, const lang_stmt *prog,
               int32_t syntax_errors, dual_builder *b, lang_diags *diag);

#endif /* DUAL_LANG_LOWER_H */
