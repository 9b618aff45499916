/*
 * diag.c — collecting and rendering the front end's diagnostics.  The echoed source line is
 * sanitized (control and non-ASCII bytes shown as '?', so columns stay byte-exact) and, when
 * long, cut to a window around the column, so a message never grows with the line length.
 */
#include "lang/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIAG_WINDOW 120 /* widest echoed source excerpt, bytes */

void lang_diags_init(lang_diags *d, const lang_source *src) {
  memset(d, 0, sizeof *d);
  d->src = src;
}

void lang_diags_free(lang_diags *d) {
  for (int32_t i = 0; i < d->count; ++i) free(d->item[i].msg);
  d->count = 0;
}

int lang_diag_full(const lang_diags *d) { return d->count >= LANG_MAX_ERRORS; }

int lang_diag_wanted(const lang_diags *d, lang_pos pos) {
  if (lang_diag_full(d)) return 0;
  if (pos.line > 0)
    for (int32_t i = 0; i < d->count; ++i)
      if (d->item[i].pos.line > 0 && d->item[i].pos.off == pos.off) return 0;
  return 1;
}

int lang_diag_add(lang_diags *d, int status, lang_pos pos, const char *fmt, ...) {
  if (!lang_diag_wanted(d, pos)) return 0;
  char *msg = NULL;
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n >= 0) {
    msg = (char *)malloc((size_t)n + 1);
    if (msg) vsnprintf(msg, (size_t)n + 1, fmt, ap2);
  }
  va_end(ap2);
  va_end(ap);
  lang_diag *it = &d->item[d->count++];
  it->pos = pos;
  it->status = msg ? status : DUAL_ERR_NO_MEMORY;
  it->msg = msg;
  return 1;
}

int lang_diag_status(const lang_diags *d) {
  if (d->count == 0) return DUAL_SUCCESS;
  static const int order[] = {DUAL_ERR_NO_MEMORY, DUAL_ERR_LIMIT, DUAL_ERR_INTERNAL};
  for (size_t k = 0; k < sizeof order / sizeof order[0]; ++k)
    for (int32_t i = 0; i < d->count; ++i)
      if (d->item[i].status == order[k]) return order[k];
  return DUAL_ERR_SYNTAX;
}

/* ---- a growable string; on OOM it stops growing and remembers it ------------------------------
 */
typedef struct strbuf {
  char *s;
  size_t len, cap;
  int oom;
} strbuf;

static void sb_put(strbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + n + 1) nc *= 2;
    char *p = (char *)realloc(b->s, nc);
    if (p == NULL) {
      b->oom = 1;
      return;
    }
    b->s = p;
    b->cap = nc;
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void sb_str(strbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_char(strbuf *b, char c) { sb_put(b, &c, 1); }

/* The source line holding `off`, a window of it around the column, and the caret line. */
static void render_excerpt(strbuf *b, const lang_source *src, int32_t off) {
  const char *t = src->text;
  if (off < 0) off = 0;
  if (off > src->len) off = src->len;
  int32_t ls = off, le = off;
  while (ls > 0 && t[ls - 1] != '\n') --ls;
  while (le < src->len && t[le] != '\n') ++le;
  if (le > ls && t[le - 1] == '\r') --le;
  int32_t caret = off - ls, len = le - ls;
  if (caret > len) caret = len;
  int32_t ws = 0, we = len;
  if (len > DIAG_WINDOW) {
    ws = caret > DIAG_WINDOW / 2 ? caret - DIAG_WINDOW / 2 : 0;
    we = ws + DIAG_WINDOW < len ? ws + DIAG_WINDOW : len;
    if (we - ws < DIAG_WINDOW) ws = we - DIAG_WINDOW;
  }
  if (ws > 0) sb_str(b, "...");
  for (int32_t i = ws; i < we; ++i) {
    unsigned char c = (unsigned char)t[ls + i];
    sb_char(b, (c == '\t' || (c >= 0x20 && c < 0x7f)) ? (char)c : '?');
  }
  if (we < len) sb_str(b, "...");
  sb_char(b, '\n');
  if (ws > 0) sb_str(b, "   ");
  for (int32_t i = ws; i < caret; ++i) sb_char(b, t[ls + i] == '\t' ? '\t' : ' ');
  sb_char(b, '^');
}

char *lang_diag_render(const lang_diags *d) {
  /* Source order; insertion sort is stable and the list is short. */
  const lang_diag *sorted[LANG_MAX_ERRORS];
  int32_t n = d->count;
  for (int32_t i = 0; i < n; ++i) {
    const lang_diag *x = &d->item[i];
    int64_t kx = x->pos.line > 0 ? x->pos.off : INT64_MAX;
    int32_t j = i;
    while (j > 0) {
      const lang_diag *y = sorted[j - 1];
      int64_t ky = y->pos.line > 0 ? y->pos.off : INT64_MAX;
      if (ky <= kx) break;
      sorted[j] = y;
      --j;
    }
    sorted[j] = x;
  }
  strbuf b = {NULL, 0, 0, 0};
  char head[64];
  for (int32_t i = 0; i < n; ++i) {
    const lang_diag *x = sorted[i];
    if (i > 0) sb_char(&b, '\n');
    sb_str(&b, d->src->name);
    if (x->pos.line > 0)
      snprintf(head, sizeof head, ":%d:%d: error: ", (int)x->pos.line, (int)x->pos.col);
    else
      snprintf(head, sizeof head, ": error: ");
    sb_str(&b, head);
    sb_str(&b, x->msg ? x->msg : "out of memory while reporting an error");
    if (x->pos.line > 0) {
      sb_char(&b, '\n');
      render_excerpt(&b, d->src, x->pos.off);
    }
  }
  if (lang_diag_full(d)) {
    snprintf(head, sizeof head, ": note: too many errors; stopped after %d", LANG_MAX_ERRORS);
    sb_char(&b, '\n');
    sb_str(&b, d->src->name);
    sb_str(&b, head);
  }
  if (b.oom || b.s == NULL) {
    free(b.s);
    return NULL;
  }
  return b.s;
}
