/*
 * functions.c — the language's function table, expanded from the op table (src/dual/ops.def)
 * with the OP X-macro.  Operators ("+", "<=", ...) and internal ops ("") are filtered out by
 * their spelling, so a new op with an identifier spelling becomes callable with no edit here.
 * A handle is the op's row in the table.
 */
#include "lang/functions.h"

#include <string.h>

static const struct {
  const char *spelling;
  int arity;
} op_spellings[] = {
#define OP(name, spelling, arity, prop, adj, flags, synopsis) {spelling, arity},
#include "dual/ops.def"
#undef OP
};

#define N_OPS ((int)(sizeof op_spellings / sizeof op_spellings[0]))

static int is_lower_ident(const char *s) {
  if (!((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_')) return 0;
  for (const char *p = s; *p; ++p)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return 0;
  return 1;
}

int lang_function_limit(void) { return N_OPS; }

const char *lang_function_name(int fn) {
  if (fn < 0 || fn >= N_OPS || !is_lower_ident(op_spellings[fn].spelling)) return NULL;
  return op_spellings[fn].spelling;
}

int lang_function_arity(int fn) { return lang_function_name(fn) ? op_spellings[fn].arity : -1; }

int lang_function_find(const char *name, int32_t len) {
  if (len <= 0) return -1;
  for (int k = 0; k < N_OPS; ++k) {
    const char *s = op_spellings[k].spelling;
    if (s[0] == name[0] && strlen(s) == (size_t)len && memcmp(s, name, (size_t)len) == 0)
      return is_lower_ident(s) ? k : -1;
  }
  return -1;
}
