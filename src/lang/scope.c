/*
 * scope.c — symbol stack and hash index.  Symbols are popped in reverse order of their pushes,
 * so each popped symbol is the head of its bucket chain and popping restores the chain exactly.
 */
#include "lang/scope.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_name(const char *s, int32_t len) {
  uint32_t h = 2166136261u;
  for (int32_t i = 0; i < len; ++i) {
    h ^= (unsigned char)s[i];
    h *= 16777619u;
  }
  return h & (LANG_SCOPE_BUCKETS - 1);
}

void lang_scope_init(lang_scope *s) {
  s->sym = NULL;
  s->count = s->cap = 0;
  s->depth = 0;
  for (int i = 0; i < LANG_SCOPE_BUCKETS; ++i) s->bucket[i] = -1;
}

void lang_scope_free(lang_scope *s) {
  lang_scope_truncate(s, 0);
  free(s->sym);
  s->sym = NULL;
  s->cap = 0;
}

lang_sym *lang_scope_find(lang_scope *s, const char *name, int32_t len) {
  for (int32_t i = s->bucket[hash_name(name, len)]; i >= 0; i = s->sym[i].hash_next)
    if (s->sym[i].len == len && memcmp(s->sym[i].name, name, (size_t)len) == 0) return &s->sym[i];
  return NULL;
}

int32_t lang_scope_push(lang_scope *s, const lang_sym *proto) {
  if (s->count == s->cap) {
    int32_t ncap = s->cap ? (s->cap > INT32_MAX / 2 ? -1 : s->cap * 2) : 64;
    lang_sym *p = ncap > 0 ? (lang_sym *)realloc(s->sym, (size_t)ncap * sizeof *p) : NULL;
    if (p == NULL) {
      free(proto->elem);
      return -1;
    }
    s->sym = p;
    s->cap = ncap;
  }
  int32_t i = s->count++;
  s->sym[i] = *proto;
  uint32_t h = hash_name(proto->name, proto->len);
  s->sym[i].depth = s->depth;
  s->sym[i].hash_next = s->bucket[h];
  s->bucket[h] = i;
  return i;
}

void lang_scope_truncate(lang_scope *s, int32_t mark) {
  while (s->count > mark) {
    lang_sym *y = &s->sym[--s->count];
    s->bucket[hash_name(y->name, y->len)] = y->hash_next;
    free(y->elem);
    y->elem = NULL;
  }
}

void lang_scope_enter(lang_scope *s) { ++s->depth; }

void lang_scope_leave(lang_scope *s, int32_t mark) {
  lang_scope_truncate(s, mark);
  --s->depth;
}

const char *lang_sym_kind_text(int kind) {
  switch (kind) {
  case SYM_INPUT: return "an input";
  case SYM_PARAM: return "a param";
  case SYM_CONST: return "a const";
  case SYM_LET: return "a let variable";
  case SYM_OUTPUT: return "an output";
  default: return "a loop variable";
  }
}
