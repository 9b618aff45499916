/*
 * compile.c — dual_program_compile and dual_program_compile_file (include/dualbatch.h): text to
 * tokens (lexer.c), tokens to a syntax tree (parser.c), the tree to builder calls (lower_*.c),
 * then dual_builder_finish.  A program with any error is never built; every diagnostic goes
 * into the context as one message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "lang/ast.h"
#include "lang/diag.h"
#include "lang/lexer.h"
#include "lang/lower.h"
#include "lang/parser.h"

static int compile_text(dual_context *ctx, const char *text, size_t len, const char *name,
                        dual_program **prog) {
  if (len > (size_t)LANG_MAX_SOURCE)
    return dual_fail(ctx, DUAL_ERR_LIMIT,
                     "%s: error: the program text has %zu bytes, more than "
                     "the limit of %d",
                     name, len, (int)LANG_MAX_SOURCE);
  lang_source src = {name, text, (int32_t)len};
  lang_tokens toks = {NULL, 0};
  int st = lang_lex(&src, &toks);
  if (st != DUAL_SUCCESS)
    return dual_fail(ctx, st, "%s: error: %s while reading the program", name,
                     dual_status_string(st));
  lang_diags diag;
  lang_diags_init(&diag, &src);
  lang_arena arena;
  lang_arena_init(&arena);
  lang_parse_result pr = {NULL, 0};
  dual_builder *b = NULL;
  st = lang_parse(&src, &toks, &arena, &diag, &pr);
  if (st == DUAL_SUCCESS) st = dual_builder_create(ctx, &b);
  if (st == DUAL_SUCCESS) st = lang_lower(&src, &toks, pr.first, pr.errors, b, &diag);
  if (diag.count > 0) {
    int status = lang_diag_status(&diag);
    if (st == DUAL_ERR_NO_MEMORY) status = st;
    char *msg = lang_diag_render(&diag);
    st = msg ? dual_fail_owned(ctx, status, msg)
             : dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                         "%s: error: out of memory while reporting "
                         "errors",
                         name);
  } else if (st != DUAL_SUCCESS) {
    st = dual_fail(ctx, st, "%s: error: %s while compiling", name, dual_status_string(st));
  } else {
    st = dual_builder_finish(b, prog);
    if (st != DUAL_SUCCESS) {
      char *m = dual_strdup_printf("%s: error: %s", name, dual_context_last_error(ctx));
      st = m ? dual_fail_owned(ctx, st, m) : st;
    }
  }
  dual_builder_destroy(&b);
  lang_arena_free(&arena);
  lang_diags_free(&diag);
  lang_tokens_free(&toks);
  if (st != DUAL_SUCCESS)
    dual_program_destroy(prog);
  else
    dual_clear_error(ctx);
  return st;
}

int dual_program_compile(dual_context *ctx, const char *source, const char *name,
                         dual_program **prog) {
  if (prog == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_compile: prog is NULL");
  *prog = NULL;
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (source == NULL)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_compile: source is NULL");
  return compile_text(ctx, source, strlen(source), name ? name : "<input>", prog);
}

/* Read a whole file (binary-safe: NUL bytes are kept and reported by the lexer). */
static int read_file(dual_context *ctx, const char *path, char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return dual_fail(ctx, DUAL_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = 0, n = 0;
  char *buf = NULL;
  int st = DUAL_SUCCESS;
  for (;;) {
    if (n == cap) {
      if (cap > (size_t)LANG_MAX_SOURCE) {
        st = dual_fail(ctx, DUAL_ERR_LIMIT,
                       "%s: error: the program text is larger than the "
                       "limit of %d bytes",
                       path, (int)LANG_MAX_SOURCE);
        break;
      }
      size_t ncap = cap ? cap * 2 : 4096;
      char *p = (char *)realloc(buf, ncap + 1);
      if (p == NULL) {
        st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory reading '%s'", path);
        break;
      }
      buf = p;
      cap = ncap;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) st = dual_fail(ctx, DUAL_ERR_IO, "error reading '%s'", path);
      break;
    }
  }
  fclose(f);
  if (st != DUAL_SUCCESS) {
    free(buf);
    return st;
  }
  if (buf == NULL) buf = (char *)malloc(1);
  if (buf == NULL) return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory reading '%s'", path);
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return DUAL_SUCCESS;
}

int dual_program_compile_file(dual_context *ctx, const char *path, dual_program **prog) {
  if (prog == NULL)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_compile_file: prog is NULL");
  *prog = NULL;
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (path == NULL)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_compile_file: path is NULL");
  char *text;
  size_t len;
  int st = read_file(ctx, path, &text, &len);
  if (st != DUAL_SUCCESS) return st;
  st = compile_text(ctx, text, len, path, prog);
  free(text);
  return st;
}
