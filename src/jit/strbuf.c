/* strbuf.c — the growable string of strbuf.h. */
#include "jit/strbuf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dual_strbuf_printf(dual_strbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const size_t room = b->cap - b->len;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) break;
    if ((size_t)n < room && b->s != NULL) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len <= (size_t)n) cap *= 2;
    char *s = (char *)realloc(b->s, cap);
    if (s == NULL) break;
    b->s = s, b->cap = cap;
  }
  b->failed = 1;
}

char *dual_strbuf_take(dual_strbuf *b) {
  char *s = b->failed ? NULL : b->s;
  if (b->failed) free(b->s);
  b->s = NULL, b->len = b->cap = 0, b->failed = 0;
  return s;
}

void dual_strbuf_double(dual_strbuf *b, double d) {
  if (d == d && d - d == 0.0) {
    dual_strbuf_printf(b, "%a", d);
  } else {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    dual_strbuf_printf(b, "__longlong_as_double(0x%016" PRIx64 "LL)", bits);
  }
}
