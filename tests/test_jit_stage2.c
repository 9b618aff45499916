/*
 * test_jit_stage2.c — the second-order generators' stager (src/jit/jit_stage2.c) on its own:
 * the code it writes is replayed against a model of the warp's staging row, so every flush is
 * checked to read, for each element it writes, the slot that holds that element's value, every
 * element put is written exactly once, no slot is overwritten while an unflushed element still
 * needs it, and the row never exceeds DUAL_JIT_STAGE_SLOTS — also when more chunks are open than
 * there are slots (the partial flushes).  Running the staged kernels bitwise against the CPU
 * engine is test_jit_host's.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "jit/jit_stage2.h"
#include "random_program.h" /* rp_next */

enum { M = 2, ND = 10, NH = 150, PUTS = 110 };

typedef struct put {
  int array;
  int64_t b, e0, e1;
} put;

/* The element a value name "v<i>" was put at, per array and output: -1 where none. */
typedef struct model {
  int slot[DUAL_JIT_STAGE_SLOTS];       /* which put a slot holds (-1: none) */
  int written[2][M][NH];                /* how often each element was flushed */
  int pending[DUAL_JIT_STAGE_SLOTS];    /* elements staged in a slot and not yet flushed */
} model;

static int element_of(const put *p, int64_t e) { return p->e0 == e || p->e1 == e; }

/* Replay the stager's text against the model: STAGE lines fill slots, FLUSH lines read them. */
static void replay(const char *text, const put *puts, model *md) {
  for (int k = 0; k < DUAL_JIT_STAGE_SLOTS; ++k) md->slot[k] = -1, md->pending[k] = 0;
  memset(md->written, 0, sizeof md->written);
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    cr_assert_not_null(end);
    char a;
    int k, v;
    int64_t b, e_base;
    unsigned mask;
    int ks[4];
    if (sscanf(line, " DUAL_JIT2_STAGE_%c(%d, v%d)", &a, &k, &v) == 3) {
      cr_assert(k >= 0 && k < DUAL_JIT_STAGE_SLOTS, "slot %d", k);
      cr_assert_eq(md->pending[k], 0, "slot %d overwritten while put %d still waits in it", k, md->slot[k]);
      cr_assert_eq(a, puts[v].array == DUAL_JIT_STAGE_H ? 'H' : 'D');
      md->slot[k] = v;
      md->pending[k] = 1 + (puts[v].e1 >= 0);
    } else if (sscanf(line, " DUAL_JIT2_FLUSH_%c(%" SCNd64 ", %" SCNd64 ", %xu, %d, %d, %d, %d)", &a,
                      &b, &e_base, &mask, &ks[0], &ks[1], &ks[2], &ks[3]) == 8) {
      const int array = a == 'H' ? DUAL_JIT_STAGE_H : DUAL_JIT_STAGE_D;
      cr_assert(mask != 0u && mask < 16u && e_base % DUAL_JIT_CHUNK == 0);
      for (int i = 0; i < 4; ++i) {
        if (!((mask >> i) & 1u)) continue;
        const int64_t e = e_base + i;
        const int who = md->slot[ks[i]];
        cr_assert(who >= 0, "flush of %c %" PRId64 " reads the empty slot %d", a, e, ks[i]);
        cr_assert(puts[who].array == array && puts[who].b == b && element_of(&puts[who], e),
                  "flush of %c[%" PRId64 "] element %" PRId64 " reads slot %d, which holds put %d", a,
                  b, e, ks[i], who);
        cr_assert_gt(md->pending[ks[i]], 0);
        --md->pending[ks[i]];
        ++md->written[array][b][e];
      }
    } else {
      cr_assert_fail("unexpected line: %.*s", (int)(end - line), line);
    }
    line = end + 1;
  }
}

/* Random puts over two outputs of d and h, half of the h ones mirrored, each element once; the
 * chunks fill in random order, so more are open at once than there are slots. */
static int make_puts(uint64_t *rng, put *puts) {
  static int used[2][M][NH];
  memset(used, 0, sizeof used);
  int n = 0;
  while (n < PUTS) {
    put p;
    p.array = rp_next(rng) % 4 == 0 ? DUAL_JIT_STAGE_D : DUAL_JIT_STAGE_H;
    p.b = (int64_t)(rp_next(rng) % M);
    const int64_t len = p.array == DUAL_JIT_STAGE_H ? NH : ND;
    p.e0 = (int64_t)(rp_next(rng) % (uint64_t)len);
    p.e1 = p.array == DUAL_JIT_STAGE_H && rp_next(rng) % 2 ? (int64_t)(rp_next(rng) % (uint64_t)len) : -1;
    if (used[p.array][p.b][p.e0] || (p.e1 >= 0 && (p.e1 == p.e0 || used[p.array][p.b][p.e1]))) continue;
    used[p.array][p.b][p.e0] = 1;
    if (p.e1 >= 0) used[p.array][p.b][p.e1] = 1;
    puts[n++] = p;
  }
  return n;
}

Test(jit_stage2, every_element_leaves_once_from_its_own_slot) {
  uint64_t rng = 2026;
  int full = 0; /* rounds whose row ran full, so open chunks were flushed as far as staged */
  for (int round = 0; round < 20; ++round) {
    put puts[PUTS];
    const int n = make_puts(&rng, puts);
    dual_strbuf out;
    memset(&out, 0, sizeof out);
    dual_jit_stager st;
    cr_assert_eq(dual_jit_stager_init(&st, &out, M, ND, NH), DUAL_SUCCESS);
    for (int i = 0; i < n; ++i) { /* the pass says what it will store, then stores it */
      dual_jit_stager_expect(&st, puts[i].array, puts[i].b, puts[i].e0);
      if (puts[i].e1 >= 0) dual_jit_stager_expect(&st, puts[i].array, puts[i].b, puts[i].e1);
    }
    for (int i = 0; i < n; ++i) {
      char name[16];
      snprintf(name, sizeof name, "v%d", i);
      dual_jit_stager_put(&st, puts[i].array, puts[i].b, name, puts[i].e0, puts[i].e1);
    }
    const int open_before_finish = (int)st.nopen;
    dual_jit_stager_finish(&st);
    cr_assert_eq(open_before_finish, 0, "every chunk was expected in full, so none stays open");
    cr_assert(dual_jit_stager_row(&st) <= DUAL_JIT_STAGE_SLOTS && dual_jit_stager_row(&st) % 2 == 1);
    char *text = dual_strbuf_take(&out);
    cr_assert_not_null(text);
    model md;
    replay(text, puts, &md);
    for (int i = 0; i < n; ++i) {
      cr_assert_eq(md.written[puts[i].array][puts[i].b][puts[i].e0], 1, "put %d, e0", i);
      if (puts[i].e1 >= 0) cr_assert_eq(md.written[puts[i].array][puts[i].b][puts[i].e1], 1, "put %d, e1", i);
    }
    int total = 0, expected = 0;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < M; ++b)
        for (int e = 0; e < NH; ++e) total += md.written[a][b][e];
    for (int i = 0; i < n; ++i) expected += 1 + (puts[i].e1 >= 0);
    cr_assert_eq(total, expected, "an element nobody put was written");
    full += st.peak == DUAL_JIT_STAGE_SLOTS;
    free(text);
    dual_jit_stager_free(&st);
  }
  /* 110 puts over 2 x (3 + 38) chunks in random order keep more chunks open than there are slots */
  cr_assert_gt(full, 0, "no round ran the staging row full");
}
