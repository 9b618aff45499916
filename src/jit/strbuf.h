/*
 * strbuf.h — a growable heap string for the source generators (jit/jit_source*.c): append with
 * printf formats; an allocation failure is remembered and reported once at the end.
 */
#ifndef DUAL_STRBUF_H
#define DUAL_STRBUF_H

#include <stddef.h>

#include "context.h" /* DUAL_PRINTF */

typedef struct dual_strbuf {
  char *s;
  size_t len, cap;
  int failed; /* an allocation failed: the text is incomplete */
} dual_strbuf;

/* Append printf(fmt, ...) to b. */
void dual_strbuf_printf(dual_strbuf *b, const char *fmt, ...) DUAL_PRINTF(2, 3);

/* The text (ownership passes to the caller), or NULL if any append failed (then freed). */
char *dual_strbuf_take(dual_strbuf *b);

/* Append the exact text of d for generated CUDA: a hex float, or its bits when d is NaN or
 * infinite (__longlong_as_double). */
void dual_strbuf_double(dual_strbuf *b, double d);

#endif /* DUAL_STRBUF_H */
