/*
 * strbuf.h — a growable heap string for the source generator (jit/jit_source.c): append with
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

#endif /* DUAL_STRBUF_H */
