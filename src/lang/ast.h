/*
 * ast.h — the syntax tree the parser produces and the lowering walks (once per unrolled
 * iteration), allocated from one arena freed at once.  Left-associative operator runs are kept
 * flat (a first operand plus a list of (operator, operand) links), so the tree's depth is bounded
 * by the parser's nesting limit however long an expression is.  Included by parser.c, lower*.c.
 */
#ifndef DUAL_LANG_AST_H
#define DUAL_LANG_AST_H

#include <stddef.h>
#include <stdint.h>

typedef enum lang_expr_kind {
  EX_NUM,   /* num */
  EX_NAME,  /* tok: the name */
  EX_INDEX, /* tok: the name; a: the index */
  EX_CALL,  /* tok: the function name; args (linked by next), nargs */
  EX_UNARY, /* op: TK_MINUS or TK_BANG; tok: the operator; a */
  EX_POW,   /* a ^ b; tok: the '^' */
  EX_CHAIN, /* a op1 r1 op2 r2 ...: left-associative, one precedence level */
  EX_COND,  /* a ? b : c; tok: the '?' */
  EX_REDUCE /* op: TK_SUM or TK_PROD; var_tok; a..b the range; c the term */
} lang_expr_kind;

typedef struct lang_expr lang_expr;

typedef struct lang_link {
  int32_t op;  /* token kind of the operator */
  int32_t tok; /* the operator's token (for positions) */
  lang_expr *rhs;
  struct lang_link *next;
} lang_link;

struct lang_expr {
  int32_t kind;
  int32_t op;
  int32_t tok;     /* a token of this expression, for positions */
  int32_t var_tok; /* EX_REDUCE: the index variable */
  int32_t nargs;   /* EX_CALL */
  double num;      /* EX_NUM */
  lang_expr *a, *b, *c;
  lang_expr *args; /* EX_CALL: first argument */
  lang_expr *next; /* next argument of a call */
  lang_link *chain;
};

typedef enum lang_stmt_kind {
  ST_DECL,   /* decl: TK_INPUT/TK_PARAM/TK_CONST/TK_LET/TK_OUTPUT; name_tok; size (vectors);
                value (initializer, may be NULL) */
  ST_ASSIGN, /* name_tok; index (may be NULL); op: TK_ASSIGN or TK_PLUSEQ..TK_SLASHEQ; value */
  ST_FOR     /* name_tok: loop variable; lo..hi; body */
} lang_stmt_kind;

typedef struct lang_stmt lang_stmt;
struct lang_stmt {
  int32_t kind;
  int32_t decl;
  int32_t op;
  int32_t tok; /* first token of the statement */
  int32_t name_tok;
  int32_t op_tok;
  int32_t is_vec; /* ST_DECL: declared with [K] */
  int32_t bad;    /* a syntax error cut the statement short: only its name is known */
  lang_expr *size, *index, *value, *lo, *hi;
  lang_stmt *body; /* ST_FOR */
  lang_stmt *next;
};

/* A bump allocator: memory is zeroed, freed all at once. */
typedef struct lang_arena_block lang_arena_block;
typedef struct lang_arena {
  lang_arena_block *head;
  size_t used, cap;
} lang_arena;

void lang_arena_init(lang_arena *a);
void *lang_arena_alloc(lang_arena *a, size_t size); /* NULL on OOM */
void lang_arena_free(lang_arena *a);

#endif /* DUAL_LANG_AST_H */
