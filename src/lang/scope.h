/*
 * scope.h — the symbol table of the lowering: a stack of symbols (inputs, params, consts, lets,
 * outputs, loop variables) with a hash index for lookup of the innermost one, and block scopes
 * popped by truncating the stack.  Included by the lowering.
 */
#ifndef DUAL_LANG_SCOPE_H
#define DUAL_LANG_SCOPE_H

#include <stdint.h>

/* Element states besides a builder value id (>= 0). */
#define LANG_UNSET  ((int32_t)-1) /* declared, never assigned */
#define LANG_POISON ((int32_t)-2) /* the result of an error already reported: used silently */

typedef enum lang_sym_kind {
  SYM_INPUT,
  SYM_PARAM,
  SYM_CONST,
  SYM_LET,
  SYM_OUTPUT,
  SYM_LOOP
} lang_sym_kind;

typedef struct lang_sym {
  const char *name; /* points into the source */
  int32_t len;
  int32_t kind;     /* lang_sym_kind */
  int32_t decl_tok; /* the name's token in the declaration */
  int32_t depth;    /* scope depth of the declaration */
  int32_t is_vec;
  int32_t poison; /* any use yields LANG_POISON without a new error */
  int64_t n;      /* vector length */
  int32_t *elem;  /* vector: [n] value ids or LANG_UNSET / LANG_POISON (heap, owned) */
  int32_t id;     /* scalar: value id or LANG_UNSET / LANG_POISON */
  int64_t loop_value;
  int32_t hash_next; /* older symbol in the same hash bucket, -1 = none */
} lang_sym;

#define LANG_SCOPE_BUCKETS 4096

typedef struct lang_scope {
  lang_sym *sym; /* the stack; pointers into it are invalidated by lang_scope_push */
  int32_t count, cap;
  int32_t depth;
  int32_t bucket[LANG_SCOPE_BUCKETS];
} lang_scope;

/* "an input", "a param", ... for diagnostics about a symbol of this kind. */
const char *lang_sym_kind_text(int kind);

void lang_scope_init(lang_scope *s);
void lang_scope_free(lang_scope *s);

/* The innermost symbol named name[0..len), or NULL. */
lang_sym *lang_scope_find(lang_scope *s, const char *name, int32_t len);

/* Push a copy of *proto (name, len, kind, ...; depth and hash_next are set here).  Takes
 * ownership of proto->elem even on failure.  Returns the index, or -1 on OOM. */
int32_t lang_scope_push(lang_scope *s, const lang_sym *proto);

/* Block scopes: enter, then leave with the mark (stack size) taken at entry. */
void lang_scope_enter(lang_scope *s);
void lang_scope_leave(lang_scope *s, int32_t mark);
/* Pop every symbol above `mark` (freeing their vectors). */
void lang_scope_truncate(lang_scope *s, int32_t mark);

#endif /* DUAL_LANG_SCOPE_H */
