/*
 * ast.c — the arena behind the syntax tree: 64 KiB blocks (or one exact block for a larger
 * request), zero-filled, released together by lang_arena_free.
 */
#include "lang/ast.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK ((size_t)64 * 1024)

struct lang_arena_block {
  lang_arena_block *prev;
  max_align_t data[]; /* aligned for any node */
};

void lang_arena_init(lang_arena *a) { memset(a, 0, sizeof *a); }

void *lang_arena_alloc(lang_arena *a, size_t size) {
  size_t align = sizeof(max_align_t);
  size = (size + align - 1) / align * align;
  if (a->head == NULL || a->cap - a->used < size) {
    size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
    lang_arena_block *blk = (lang_arena_block *)malloc(sizeof *blk + cap);
    if (blk == NULL) return NULL;
    blk->prev = a->head;
    a->head = blk;
    a->used = 0;
    a->cap = cap;
  }
  char *p = (char *)a->head->data + a->used;
  a->used += size;
  memset(p, 0, size);
  return p;
}

void lang_arena_free(lang_arena *a) {
  lang_arena_block *b = a->head;
  while (b) {
    lang_arena_block *prev = b->prev;
    free(b);
    b = prev;
  }
  memset(a, 0, sizeof *a);
}
