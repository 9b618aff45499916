/*
 * functions.h — the functions callable from the language: exactly the ops of src/dual/ops.def
 * whose spelling is a lowercase identifier ("sin", "atan2", "fma", "select", ...), with their
 * arity from the same table.  Included by the lowering.
 */
#ifndef DUAL_LANG_FUNCTIONS_H
#define DUAL_LANG_FUNCTIONS_H

#include <stdint.h>

/* The function spelled name[0..len): its handle (>= 0), or -1. */
int lang_function_find(const char *name, int32_t len);

/* Handles are 0 .. lang_function_limit()-1; lang_function_name is NULL for a handle that is
 * not a function (an operator or internal op), so iterating over all handles lists them. */
int lang_function_limit(void);
const char *lang_function_name(int fn);
int lang_function_arity(int fn);

#endif /* DUAL_LANG_FUNCTIONS_H */
