/*
 * jit_stage2.c — the second-order generators' stager (jit_stage2.h): the bookkeeping of slots
 * and chunks at generation time, and the staging and flush calls it writes into a kernel.
 */
#include "jit/jit_stage2.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "jit/jit_source2.h" /* DUAL_JIT2_KERNEL_NAME */

int dual_jit_stager_init(dual_jit_stager *s, dual_strbuf *out, int64_t m, int64_t nd, int64_t nh) {
  memset(s, 0, sizeof *s);
  s->out = out, s->m = m;
  s->nc[DUAL_JIT_STAGE_D] = (nd + DUAL_JIT_CHUNK - 1) / DUAL_JIT_CHUNK;
  s->nc[DUAL_JIT_STAGE_H] = (nh + DUAL_JIT_CHUNK - 1) / DUAL_JIT_CHUNK;
  const int64_t total = m * (s->nc[0] + s->nc[1]);
  s->chunk = (dual_jit_chunk *)malloc(sizeof(dual_jit_chunk) * (size_t)(total > 0 ? total : 1));
  s->open = (int64_t *)malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
  if (s->chunk == NULL || s->open == NULL) {
    dual_jit_stager_free(s);
    return DUAL_ERR_NO_MEMORY;
  }
  dual_jit_stager_reset(s);
  return DUAL_SUCCESS;
}

void dual_jit_stager_free(dual_jit_stager *s) {
  free(s->chunk), free(s->open);
  s->chunk = NULL, s->open = NULL;
}

void dual_jit_stager_reset(dual_jit_stager *s) {
  const int64_t total = s->m * (s->nc[0] + s->nc[1]);
  for (int64_t c = 0; c < total; ++c) {
    memset(&s->chunk[c], 0, sizeof s->chunk[c]);
    s->chunk[c].open_at = -1;
  }
  s->nopen = 0;
  memset(s->refs, 0, sizeof s->refs);
  s->peak = 0;
}

static int64_t chunk_id(const dual_jit_stager *s, int array, int64_t b, int64_t e) {
  const int64_t first = array == DUAL_JIT_STAGE_D ? 0 : s->m * s->nc[DUAL_JIT_STAGE_D];
  return first + b * s->nc[array] + e / DUAL_JIT_CHUNK;
}

void dual_jit_stager_expect(dual_jit_stager *s, int array, int64_t b, int64_t e) {
  s->chunk[chunk_id(s, array, b, e)].want |= (uint8_t)(1u << (e % DUAL_JIT_CHUNK));
}

/* Write the flush of chunk id (of `array`, output b, elements from e_base) for what it has
 * staged, release those slots and close it. */
static void flush(dual_jit_stager *s, int64_t id) {
  dual_jit_chunk *c = &s->chunk[id];
  const int64_t first_h = s->m * s->nc[DUAL_JIT_STAGE_D];
  const int array = id >= first_h ? DUAL_JIT_STAGE_H : DUAL_JIT_STAGE_D;
  const int64_t local = array == DUAL_JIT_STAGE_H ? id - first_h : id;
  const int64_t b = local / s->nc[array], e_base = (local % s->nc[array]) * DUAL_JIT_CHUNK;
  int sl[DUAL_JIT_CHUNK];
  for (int i = 0; i < DUAL_JIT_CHUNK; ++i) sl[i] = (c->have >> i) & 1u ? c->slot[i] : 0;
  dual_strbuf_printf(s->out, "    DUAL_JIT2_FLUSH_%c(%" PRId64 ", %" PRId64 ", %#xu, %d, %d, %d, %d)\n",
                     array == DUAL_JIT_STAGE_H ? 'H' : 'D', b, e_base, (unsigned)c->have, sl[0], sl[1],
                     sl[2], sl[3]);
  for (int i = 0; i < DUAL_JIT_CHUNK; ++i)
    if ((c->have >> i) & 1u) --s->refs[c->slot[i]];
  c->want &= (uint8_t)~c->have;
  c->have = 0;
  const int64_t last = s->open[--s->nopen]; /* remove from the open list */
  s->open[c->open_at] = last;
  s->chunk[last].open_at = c->open_at;
  c->open_at = -1;
}

void dual_jit_stager_finish(dual_jit_stager *s) {
  while (s->nopen > 0) flush(s, s->open[s->nopen - 1]);
}

static int free_slot(const dual_jit_stager *s) {
  for (int k = 0; k < DUAL_JIT_STAGE_SLOTS; ++k)
    if (s->refs[k] == 0) return k;
  return -1;
}

void dual_jit_stager_put(dual_jit_stager *s, int array, int64_t b, const char *value, int64_t e0,
                         int64_t e1) {
  int k = free_slot(s);
  if (k < 0) { /* every slot waits for a chunk: write out what the open chunks have */
    dual_jit_stager_finish(s);
    k = free_slot(s);
  }
  dual_strbuf_printf(s->out, "    DUAL_JIT2_STAGE_%s(%d, %s)\n",
                     array == DUAL_JIT_STAGE_H ? "H" : s->d_flags_always ? "DF" : "D", k, value);
  const int64_t es[2] = {e0, e1};
  int64_t ids[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    if (es[i] < 0) continue;
    const int64_t id = chunk_id(s, array, b, es[i]);
    dual_jit_chunk *c = &s->chunk[id];
    const int bit = (int)(es[i] % DUAL_JIT_CHUNK);
    c->want |= (uint8_t)(1u << bit); /* (expected already, when the caller said so) */
    c->have |= (uint8_t)(1u << bit);
    c->slot[bit] = (int16_t)k;
    ++s->refs[k];
    if (c->open_at < 0) {
      c->open_at = (int32_t)s->nopen;
      s->open[s->nopen++] = id;
    }
    ids[i] = id;
  }
  int used = 0;
  for (int j = 0; j < DUAL_JIT_STAGE_SLOTS; ++j) used += s->refs[j] > 0;
  if (used > s->peak) s->peak = used;
  for (int i = 0; i < 2; ++i) {
    if (ids[i] < 0 || (i == 1 && ids[1] == ids[0])) continue;
    const dual_jit_chunk *c = &s->chunk[ids[i]];
    if (c->open_at >= 0 && c->have == c->want) flush(s, ids[i]);
  }
}

int dual_jit_stager_row(const dual_jit_stager *s) { return s->peak | 1; }

/* The kernel's opening, shared by both wrappers: its name and launch bounds, the warps' staging
 * rows, the tile loop, and the thread's row s2_ in its warp's sw2_. */
static void kernel_open(const dual_jit_stager *s, int pass, int min_blocks) {
  const int row = dual_jit_stager_row(s);
  dual_strbuf_printf(s->out, "\nextern \"C\" __global__ void __launch_bounds__(DUAL_JIT_THREADS");
  if (min_blocks > 0) dual_strbuf_printf(s->out, ", %d", min_blocks);
  dual_strbuf_printf(s->out,
                     ") " DUAL_JIT2_KERNEL_NAME "(const dual_jit_args A) {\n"
                     "  __shared__ double stage2_[DUAL_JIT_WARPS][32 * %d];\n  const int sp_ = %d;\n"
                     "  DUAL_JIT_TILE_BEGIN\n"
                     "    double *const sw2_ = stage2_[warp_], *const s2_ = sw2_ + lane_ * sp_;\n"
                     "    (void)sw2_, (void)s2_;\n    DUAL_JIT2_FLUSH_BEGIN\n",
                     pass, row, row);
}

void dual_jit_stager_kernel(const dual_jit_stager *s, int pass, const char *body) {
  kernel_open(s, pass, 0);
  dual_strbuf_printf(s->out, "%s  DUAL_JIT_TILE_END(%d, -1)\n}\n", body, pass == 0);
}

void dual_jit_stager_kernel_fast(const dual_jit_stager *s, int pass, const char *body, int min_blocks) {
  dual_strbuf *out = s->out;
  dual_strbuf_printf(out,
                     "\nstatic __device__ __noinline__ int dual_jit2_guarded_p%d(const dual_jit_args A, "
                     "int64_t base_, int lane_, int live_, int64_t pt, double *const sw2_, double *const s2_, "
                     "const int sp_) {\n  int st = 0;\n  (void)base_, (void)lane_, (void)live_, (void)sw2_, "
                     "(void)s2_, (void)sp_;\n  DUAL_JIT2_FLUSH_BEGIN\n%s  return st;\n}\n",
                     pass, body);
  dual_strbuf_printf(out, "#undef DUAL_RTM\n#undef DUAL_RTT\n#undef DUAL_JIT2_NOTE\n#define DUAL_RTM DUAL_TF\n"
                          "#define DUAL_RTT DUAL_TT_PLAIN\n#define DUAL_JIT2_NOTE(x) nf_ = fma((x), 0.0, nf_);\n");
  kernel_open(s, pass, min_blocks);
  dual_strbuf_printf(out,
                     "    double nf_ = 0.0;\n    (void)nf_;\n%s"
                     "    if (__any_sync(0xffffffffu, nf_ != 0.0))\n"
                     "      st = dual_jit2_guarded_p%d(A, base_, lane_, live_, pt, sw2_, s2_, sp_);\n"
                     "  DUAL_JIT_TILE_END(%d, -1)\n}\n",
                     body, pass, pass == 0);
  dual_strbuf_printf(out, "#undef DUAL_RTM\n#undef DUAL_RTT\n#undef DUAL_JIT2_NOTE\n#define DUAL_RTM DUAL_TM\n"
                          "#define DUAL_RTT DUAL_TT\n#define DUAL_JIT2_NOTE(x) st |= DUAL_PT_FLAGS(x);\n");
}
