/*
 * plan2.c — builds the second-order plan of plan2.h: one sweep for the lane masks (sizing every
 * register's lane block), the lane slot allocation of slots.h, and a second identical sweep that
 * gives each component a slot (reusing the slots of dying operands' components) and emits the
 * pair entries.
 */
#include "plan2.h"

#include <stdlib.h>
#include <string.h>

#include "dual/portable.h"

int dual_plan2_init(dual_plan2 *pl, const dual_program *prog) {
  memset(pl, 0, sizeof *pl);
  const size_t ni = (size_t)(prog->n_instr > 0 ? prog->n_instr : 1);
  const size_t nact = (size_t)prog->n_active + 1;
  pl->words = (DUAL_PASS2_MAX_PAIRS + 63) / 64;
  pl->recs = (dual_plan_instr *)malloc(ni * sizeof *pl->recs);
  pl->first = (uint32_t *)malloc((ni + 1) * sizeof *pl->first);
  pl->sets = (uint64_t *)malloc(nact * (size_t)pl->words * sizeof *pl->sets);
  pl->lanes = (uint32_t *)malloc((3 * nact + ni) * sizeof *pl->lanes);
  pl->dies = (uint8_t *)malloc(2 * ni + nact);
  pl->comp = (int64_t *)malloc(nact * sizeof *pl->comp);
  if (pl->recs == NULL || pl->first == NULL || pl->sets == NULL || pl->lanes == NULL ||
      pl->dies == NULL || pl->comp == NULL || !dual_slot_pool_init(&pl->sp)) {
    dual_plan2_free(pl);
    return DUAL_ERR_NO_MEMORY;
  }
  pl->off = pl->lanes + nact;
  pl->cnt = pl->off + nact;
  pl->need = pl->cnt + nact;
  pl->inplace = pl->dies + ni + nact;
  dual_slots_last_uses(prog, pl->dies + ni, pl->dies);
  return DUAL_SUCCESS;
}

void dual_plan2_free(dual_plan2 *pl) {
  free(pl->recs);
  free(pl->first);
  free(pl->ents);
  free(pl->sets);
  free(pl->lanes);
  free(pl->dies);
  free(pl->comp);
  free(pl->slots);
  free(pl->free_slots);
  dual_slot_pool_free(&pl->sp);
  memset(pl, 0, sizeof *pl);
}

/* ---- pair sets ---------------------------------------------------------------------------------- */
typedef struct pset {
  uint64_t w[(DUAL_PASS2_MAX_PAIRS + 63) / 64];
} pset;

static int popc64(uint64_t x) { return DUAL_POPC((uint32_t)x) + DUAL_POPC((uint32_t)(x >> 32)); }
static int has(const pset *s, int q) { return (int)((s->w[q >> 6] >> (q & 63)) & 1u); }
static int rank_of(const pset *s, int q) { /* members below q */
  int r = 0;
  for (int i = 0; i < (q >> 6); ++i) r += popc64(s->w[i]);
  if (q & 63) r += popc64(s->w[q >> 6] & ((UINT64_C(1) << (q & 63)) - 1u));
  return r;
}
static int count_of(const pset *s, int words) {
  int r = 0;
  for (int i = 0; i < words; ++i) r += popc64(s->w[i]);
  return r;
}
static int lane_in(uint32_t m, int k) { return (int)((m >> k) & 1u); }

/* The registers' current lane masks and pair sets during a sweep. */
typedef struct sweep {
  const dual_program *prog;
  const dual_pass2 *ps;
  dual_plan2 *pl;
} sweep;

static pset *set_of(const sweep *sw, int32_t r) { return (pset *)(sw->pl->sets + (size_t)r * (size_t)sw->pl->words); }

/* The instruction's lane masks (record) and its result's pair set; operand sets in *sa.. (empty
 * for operands without tangents).  Updates nothing. */
static void instr_sets(const sweep *sw, dual_plan_instr *q, int op, pset *sa, pset *sb, pset *sc,
                       pset *sd) {
  const dual_program *prog = sw->prog;
  const dual_pass2 *ps = sw->ps;
  const dual_op_info *info = &dual_op_table[op];
  const int32_t nact = prog->n_active, ra = (int32_t)q->a, rb = (int32_t)q->b, rc = (int32_t)q->c;
  const int words = sw->pl->words;
  memset(sa, 0, sizeof *sa), memset(sb, 0, sizeof *sb), memset(sc, 0, sizeof *sc);
  memset(sd, 0, sizeof *sd);
  q->ma = q->mb = q->mc = q->md = 0;
  if (op == DUAL_OP_LDX) {
    uint32_t m = 0;
    for (int k = 0; k < ps->nlanes; ++k)
      if (ps->lane_input[k] == ra || k == ps->vlane) m |= 1u << k;
    q->ma = q->md = m;
    return;
  }
  if (info->prop == DUAL_PROP_OUT) {
    if (ra < nact) q->ma = sw->pl->lanes[ra], *sa = *set_of(sw, ra);
    return;
  }
  if (info->prop == DUAL_PROP_LOAD || info->prop == DUAL_PROP_NONE) return;
  if (info->arity > 0 && ra < nact && op != DUAL_OP_SELECT) q->ma = sw->pl->lanes[ra], *sa = *set_of(sw, ra);
  if (info->arity > 1 && rb < nact) q->mb = sw->pl->lanes[rb], *sb = *set_of(sw, rb);
  if (info->arity > 2 && rc < nact) q->mc = sw->pl->lanes[rc], *sc = *set_of(sw, rc);
  q->md = q->ma | q->mb | q->mc;
  for (int i = 0; i < words; ++i) sd->w[i] = sa->w[i] | sb->w[i] | sc->w[i];
  const int fl = info->flags;
  if (!(fl & (F_D2AA | F_D2AB | F_D2BB))) return;
  for (int p = 0; p < ps->npairs; ++p) {
    const int k = ps->pk[p], l = ps->pl[p];
    int on = (fl & F_D2AA) && lane_in(q->ma, k) && lane_in(q->ma, l);
    on |= (fl & F_D2BB) && lane_in(q->mb, k) && lane_in(q->mb, l);
    on |= (fl & F_D2AB) && ((lane_in(q->ma, k) && lane_in(q->mb, l)) || (lane_in(q->mb, k) && lane_in(q->ma, l)));
    if (on) sd->w[p >> 6] |= UINT64_C(1) << (p & 63);
  }
}

/* Slot of lane k of a register whose lane block starts at o (lane mask m). */
static uint32_t lane_slot(uint32_t o, uint32_t m, int k) {
  return o + (uint32_t)DUAL_POPC(m & ((1u << k) - 1u));
}

/* Grow *buf (elements of `size` bytes) to hold `need`; returns 0 when out of memory. */
static int reserve(void **buf, int64_t *cap, int64_t need, size_t size) {
  if (need <= *cap) return 1;
  int64_t c = *cap ? 2 * *cap : 1024;
  while (c < need) c *= 2;
  void *n = realloc(*buf, (size_t)c * size);
  if (n == NULL) return 0;
  *buf = n;
  *cap = c;
  return 1;
}

static int push(dual_plan2 *pl, const dual_pair_entry *e) {
  if (!reserve((void **)&pl->ents, &pl->cap_ents, pl->n_ents + 1, sizeof *pl->ents)) return 0;
  pl->ents[pl->n_ents++] = *e;
  return 1;
}

/* The slot of component p of register r (set s), from its definition's list. */
static uint32_t comp_slot(const dual_plan2 *pl, int32_t r, const pset *s, int p) {
  return pl->slots[pl->comp[r] + rank_of(s, p)];
}

static uint32_t take_slot(dual_plan2 *pl) {
  if (pl->n_free > 0) return pl->free_slots[--pl->n_free];
  return (uint32_t)pl->comp_top++;
}

static int give_slots(dual_plan2 *pl, int32_t r, const pset *s, const uint32_t *kept, int nkept) {
  if (pl->comp[r] < 0) return 1;
  const int cnt = count_of(s, pl->words);
  if (!reserve((void **)&pl->free_slots, &pl->cap_free, pl->n_free + cnt, sizeof *pl->free_slots))
    return 0;
  for (int i = 0; i < cnt; ++i) {
    const uint32_t sl = pl->slots[pl->comp[r] + i];
    int taken = 0; /* taken over by the result: not free */
    for (int j = 0; j < nkept && !taken; ++j) taken = kept[j] == sl;
    if (!taken) pl->free_slots[pl->n_free++] = sl;
  }
  pl->comp[r] = -1;
  return 1;
}

/* Instruction t's components: a slot for each (an alias of a dying operand's for the copies of
 * ADD/SUB), its entries, then the dying operands' slots back to the free stack.  Component slots
 * are numbered from 0 here and offset by the lanes' space afterwards. */
static int place(const sweep *sw, int64_t t, const dual_plan_instr *q, int op, const pset *sa,
                 const pset *sb, const pset *sc, const pset *sd, uint32_t *kept) {
  const dual_pass2 *ps = sw->ps;
  dual_plan2 *pl = sw->pl;
  const dual_op_info *info = &dual_op_table[op];
  const int fl = info->flags;
  const int32_t nact = sw->prog->n_active;
  const int32_t ra = (int32_t)q->a, rb = (int32_t)q->b, rc = (int32_t)q->c;
  const int32_t dst = (int32_t)(q->op_dst & ((1u << DUAL_DST_BITS) - 1u));
  const uint8_t dies = pl->dies[t];
  if (info->prop == DUAL_PROP_OUT) {
    if (ra >= nact) return 1; /* passive output: no entries, zeros */
    for (int p = 0; p < ps->npairs; ++p) {
      dual_pair_entry e;
      memset(&e, 0, sizeof e);
      e.flags = (uint32_t)p << 16;
      if (has(sa, p)) e.flags |= DUAL_PE_HA, e.ha = comp_slot(pl, ra, sa, p);
      if (!push(pl, &e)) return 0;
    }
    if ((dies & DUAL_DIES_A) && !give_slots(pl, ra, sa, NULL, 0)) return 0;
    return 1;
  }
  const int cnt = count_of(sd, pl->words);
  const int is_def = dst < nact; /* an active result (LDX included) */
  const int reads = info->prop == DUAL_PROP_LOAD ? 0 : info->arity;
  const int is_operand = (reads > 0 && dst == ra) || (reads > 1 && dst == rb) || (reads > 2 && dst == rc);
  /* the old value of dst, when it is not an operand, is dead: free its components */
  if (is_def && !is_operand && !give_slots(pl, dst, set_of(sw, dst), NULL, 0)) return 0;
  int nk = 0;                 /* slots of dying operands the result took over */
  const int64_t base = pl->n_comp; /* the result's component slots: slots[base ...] */
  if (cnt == 0) goto release;
  if (!reserve((void **)&pl->slots, &pl->cap_comp, pl->n_comp + cnt, sizeof *pl->slots)) return 0;
  const int copy_a = (op == DUAL_OP_ADD || op == DUAL_OP_SUB) && (dies & DUAL_DIES_A) && ra < nact;
  const int copy_b = op == DUAL_OP_ADD && (dies & DUAL_DIES_B) && rb < nact && rb != ra;
  for (int p = 0, i = 0; p < ps->npairs; ++p) {
    if (!has(sd, p)) continue;
    const int k = ps->pk[p], l = ps->pl[p];
    const int in_a = has(sa, p), in_b = has(sb, p);
    uint32_t *slot = &pl->slots[base + i++];
    if (copy_a && in_a && !in_b) { /* h = 1 * h_a: the result takes a's slot */
      *slot = kept[nk++] = comp_slot(pl, ra, sa, p);
      continue;
    }
    if (copy_b && in_b && !in_a) { /* ADD: h = 1 * h_b */
      *slot = kept[nk++] = comp_slot(pl, rb, sb, p);
      continue;
    }
    *slot = take_slot(pl);
    dual_pair_entry e;
    memset(&e, 0, sizeof e);
    uint32_t f = (uint32_t)p << 16;
    e.hd = *slot;
    if (in_a) f |= DUAL_PE_HA, e.ha = comp_slot(pl, ra, sa, p);
    if (in_b) f |= DUAL_PE_HB, e.hb = comp_slot(pl, rb, sb, p);
    if (has(sc, p)) f |= DUAL_PE_HC, e.hc = comp_slot(pl, rc, sc, p);
    const int ak = lane_in(q->ma, k), al = lane_in(q->ma, l), bk = lane_in(q->mb, k),
              bl = lane_in(q->mb, l);
    if ((fl & F_D2AA) && ak && al) f |= DUAL_PE_AA;
    if ((fl & F_D2BB) && bk && bl) f |= DUAL_PE_BB;
    if ((fl & F_D2AB) && ak && bl) f |= DUAL_PE_ABKL;
    if ((fl & F_D2AB) && bk && al) f |= DUAL_PE_ABLK;
    if (ak) e.ak = lane_slot(q->oa, q->ma, k);
    if (al) e.al = lane_slot(q->oa, q->ma, l);
    if (bk) e.bk = lane_slot(q->ob, q->mb, k);
    if (bl) e.bl = lane_slot(q->ob, q->mb, l);
    e.flags = f;
    if (!push(pl, &e)) return 0;
  }
  pl->n_comp += cnt;
release: /* operands read for the last time give their slots back, after the result took its own */
  {
    const int32_t r[3] = {ra, rb, rc};
    const pset *sets[3] = {sa, sb, sc};
    for (int i = 0; i < 3; ++i) {
      if (!((dies >> i) & 1) || r[i] >= nact) continue;
      int dup = 0;
      for (int j = 0; j < i; ++j) dup |= ((dies >> j) & 1) && r[j] == r[i];
      if (!dup && !give_slots(pl, r[i], sets[i], kept, nk)) return 0;
    }
  }
  if (is_def) pl->comp[dst] = cnt > 0 ? base : -1;
  return 1;
}

/* One sweep: phase 0 sizes the lane blocks (need, inplace), phase 1 places the components and
 * emits the entries. */
static int run_sweep(const sweep *sw, int phase) {
  const dual_program *prog = sw->prog;
  dual_plan2 *pl = sw->pl;
  const int32_t nact = prog->n_active;
  uint32_t kept[DUAL_PASS2_MAX_PAIRS];
  memset(pl->lanes, 0, (size_t)(nact + 1) * sizeof *pl->lanes);
  memset(pl->sets, 0, (size_t)(nact + 1) * (size_t)pl->words * sizeof *pl->sets);
  for (int32_t r = 0; r <= nact; ++r) pl->comp[r] = -1;
  pl->n_comp = pl->n_free = pl->comp_top = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    dual_plan_instr *q = &pl->recs[t];
    const int op = (int)(q->op_dst >> DUAL_DST_BITS);
    const int32_t dst = (int32_t)(q->op_dst & ((1u << DUAL_DST_BITS) - 1u));
    pset sa, sb, sc, sd;
    const uint32_t oa = q->oa, ob = q->ob, oc = q->oc, od = q->od; /* phase 1: assigned slots */
    instr_sets(sw, q, op, &sa, &sb, &sc, &sd);
    q->oa = oa, q->ob = ob, q->oc = oc, q->od = od;
    const int is_def = dual_op_table[op].prop != DUAL_PROP_OUT && dst < nact;
    if (phase == 0) {
      pl->need[t] = is_def ? (uint32_t)DUAL_POPC(q->md) : 0;
      pl->inplace[t] = (uint8_t)(q->ma == q->md);
    } else {
      pl->first[t] = (uint32_t)pl->n_ents;
      if (!place(sw, t, q, op, &sa, &sb, &sc, &sd, kept)) return 0;
    }
    if (is_def) {
      pl->lanes[dst] = q->md;
      *set_of(sw, dst) = sd;
    }
  }
  if (phase == 1) pl->first[prog->n_instr] = (uint32_t)pl->n_ents;
  return 1;
}

int dual_plan2_build(dual_plan2 *pl, const dual_program *prog, const dual_pass2 *ps) {
  const int64_t ni = prog->n_instr;
  for (int64_t t = 0; t < ni; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    memset(&pl->recs[t], 0, sizeof pl->recs[t]);
    pl->recs[t].op_dst = w[0], pl->recs[t].a = w[1], pl->recs[t].b = w[2], pl->recs[t].c = w[3];
  }
  sweep sw = {prog, ps, pl};
  pl->n_ents = 0;
  pl->sp.peak = 0;
  if (!run_sweep(&sw, 0)) return DUAL_ERR_NO_MEMORY;
  if (!dual_slots_assign(prog, pl->dies, pl->recs, pl->need, pl->inplace, pl->off, pl->cnt, &pl->sp))
    return DUAL_ERR_NO_MEMORY;
  if (!run_sweep(&sw, 1)) return DUAL_ERR_NO_MEMORY;
  /* component slots live above the lanes' space */
  const uint32_t lanes = (uint32_t)pl->sp.peak;
  for (int64_t e = 0; e < pl->n_ents; ++e) {
    dual_pair_entry *E = &pl->ents[e];
    const uint32_t f = E->flags;
    E->hd += lanes;
    if (f & DUAL_PE_HA) E->ha += lanes;
    if (f & DUAL_PE_HB) E->hb += lanes;
    if (f & DUAL_PE_HC) E->hc += lanes;
  }
  pl->n_slots = (int64_t)lanes + pl->comp_top;
  for (int64_t t = 0; t < ni; ++t) /* constants travel in the record, as in plan.c */
    if ((int)(pl->recs[t].op_dst >> DUAL_DST_BITS) == DUAL_OP_LDK) {
      uint64_t bits;
      memcpy(&bits, &prog->consts[pl->recs[t].a], sizeof bits);
      pl->recs[t].oa = (uint32_t)bits, pl->recs[t].ob = (uint32_t)(bits >> 32);
    }
  return DUAL_SUCCESS;
}
