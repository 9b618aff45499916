/*
 * jit_runs.c — finds the periodic runs of a program's bytecode (jit_runs.h): for each start and
 * period, the template of the run is learned from its iterations 1 and 2 (iteration 0 may read a
 * carried value's start from before the run), then checked iteration by iteration.
 */
#include "jit/jit_runs.h"

#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"

typedef struct scan {
  const dual_program *prog;
  int64_t *opnd;    /* [n_instr][3] the definitions an instruction reads (-1: none) */
  int64_t *lastuse; /* [n_instr] the last instruction reading a definition (-1: none) */
} scan;

static const uint32_t *words(const dual_program *prog, int64_t t) {
  return prog->code + t * DUAL_INSTR_WORDS;
}
static int op_of(const scan *s, int64_t t) { return DUAL_INSTR_OP(words(s->prog, t)); }
static int active_of(const scan *s, int64_t t) {
  return DUAL_INSTR_DST(words(s->prog, t)) < s->prog->n_active;
}
/* Loads whose index may step from iteration to iteration. */
static int indexed_load(int op) {
  return op == DUAL_OP_LDX || op == DUAL_OP_LDP || op == DUAL_OP_RNORM || op == DUAL_OP_RUNIF;
}
static int reads(int op) {
  const dual_op_info *info = &dual_op_table[op];
  return info->prop == DUAL_PROP_LOAD ? 0 : info->arity;
}

/* The run being checked: start, period, and the template learned from iterations 1 and 2. */
typedef struct tmpl {
  int64_t s, P;
  uint8_t *kind;
  int64_t *off, *step, *init, *astep;
} tmpl;

/* Whether instruction t (iteration k of the template, position j) has the template's op,
 * activity and fields; for k = 0, also record each CARRY operand's start. */
static int same_instr(const scan *sc, tmpl *m, int64_t k, int64_t j) {
  const dual_program *prog = sc->prog;
  const int64_t t = m->s + k * m->P + j, t1 = m->s + m->P + j;
  const uint32_t *w = words(prog, t), *w1 = words(prog, t1);
  const int op = DUAL_INSTR_OP(w);
  if (op != DUAL_INSTR_OP(w1) || op == DUAL_OP_OUT || active_of(sc, t) != active_of(sc, t1))
    return 0;
  if (indexed_load(op))
    return (int64_t)DUAL_INSTR_A(w) == (int64_t)DUAL_INSTR_A(w1) + (k - 1) * m->astep[j];
  if (op == DUAL_OP_LDK)
    return memcmp(&prog->consts[DUAL_INSTR_A(w)], &prog->consts[DUAL_INSTR_A(w1)], sizeof(double)) == 0;
  const int ar = reads(op);
  for (int i = ar; i < 3; ++i) /* fields that are not register operands */
    if (w[1 + i] != w1[1 + i]) return 0;
  for (int i = 0; i < ar; ++i) {
    const int64_t d = sc->opnd[3 * t + i], x = 3 * j + i;
    switch (m->kind[x]) {
    case DUAL_RUN_SAME:
      if (d != t + m->off[x]) return 0;
      break;
    case DUAL_RUN_CARRY:
      if (k == 0 && (d < 0 || d >= m->s)) return 0;
      if (k == 0) m->init[x] = d;
      else if (d != t + m->off[x]) return 0;
      break;
    case DUAL_RUN_FIXED:
      if (d != m->off[x]) return 0;
      break;
    case DUAL_RUN_LOAD:
      if (d < 0 || op_of(sc, d) != DUAL_OP_LDX ||
          (int64_t)DUAL_INSTR_A(words(prog, d)) != m->off[x] + k * m->step[x])
        return 0;
      break;
    default: return 0;
    }
  }
  return 1;
}

/* Learn position j's template from iterations 1 and 2.  0 when they differ in a way no kind
 * describes. */
static int learn(const scan *sc, tmpl *m, int64_t j) {
  const dual_program *prog = sc->prog;
  const int64_t t1 = m->s + m->P + j, t2 = t1 + m->P;
  const int op = op_of(sc, t1);
  if (op != op_of(sc, t2) || op == DUAL_OP_OUT) return 0;
  m->astep[j] = indexed_load(op) ? (int64_t)DUAL_INSTR_A(words(prog, t2)) - DUAL_INSTR_A(words(prog, t1)) : 0;
  for (int i = 0; i < 3; ++i) {
    const int64_t x = 3 * j + i;
    m->kind[x] = DUAL_RUN_NONE, m->off[x] = m->step[x] = 0, m->init[x] = -1;
    if (i >= reads(op)) continue;
    const int64_t d1 = sc->opnd[3 * t1 + i], d2 = sc->opnd[3 * t2 + i];
    if (d1 < 0 || d2 < 0) return 0;
    if (d1 >= m->s) { /* this iteration (SAME) or the one before (CARRY) */
      m->kind[x] = d1 >= m->s + m->P ? DUAL_RUN_SAME : DUAL_RUN_CARRY;
      m->off[x] = d1 - t1;
    } else if (d1 == d2) {
      m->kind[x] = DUAL_RUN_FIXED, m->off[x] = d1;
    } else if (op_of(sc, d1) == DUAL_OP_LDX && op_of(sc, d2) == DUAL_OP_LDX) {
      m->kind[x] = DUAL_RUN_LOAD;
      m->step[x] = (int64_t)DUAL_INSTR_A(words(prog, d2)) - DUAL_INSTR_A(words(prog, d1));
      m->off[x] = (int64_t)DUAL_INSTR_A(words(prog, d1)) - m->step[x];
    } else {
      return 0;
    }
  }
  return 1;
}

/* The iterations of the run of period P from s (0 if none with three iterations). */
static int64_t run_length(const scan *sc, tmpl *m) {
  const int64_t n = sc->prog->n_instr, s = m->s, P = m->P;
  if (s + 3 * P > n) return 0;
  for (int64_t j = 0; j < P; ++j) /* cheap rejection first */
    if (op_of(sc, s + j) != op_of(sc, s + P + j) || op_of(sc, s + j) != op_of(sc, s + 2 * P + j)) return 0;
  for (int64_t j = 0; j < P; ++j)
    if (!learn(sc, m, j)) return 0;
  for (int64_t j = 0; j < P; ++j)
    if (!same_instr(sc, m, 0, j) || !same_instr(sc, m, 2, j)) return 0;
  int64_t k = 3;
  for (; s + (k + 1) * P <= n; ++k) {
    int64_t j = 0;
    while (j < P && same_instr(sc, m, k, j)) ++j;
    if (j < P) break;
  }
  /* a definition read after the run is a load or in the last iteration: cut the run before any
   * other, until none is left */
  for (int cut = 1; cut && k > 0;) {
    cut = 0;
    const int64_t end = s + k * P, last0 = end - P;
    for (int64_t t = s; t < last0; ++t)
      if (sc->lastuse[t] >= end && op_of(sc, t) != DUAL_OP_LDX) {
        k = (t - s) / P + 1;
        cut = 1;
        break;
      }
  }
  return k;
}

static int take_run(dual_jit_run *r, const tmpl *m, int64_t count) {
  const size_t P = (size_t)m->P;
  r->t0 = m->s, r->period = m->P, r->count = count;
  r->kind = (uint8_t *)malloc(3 * P);
  r->off = (int64_t *)malloc(sizeof(int64_t) * 3 * P);
  r->step = (int64_t *)malloc(sizeof(int64_t) * 3 * P);
  r->init = (int64_t *)malloc(sizeof(int64_t) * 3 * P);
  r->astep = (int64_t *)malloc(sizeof(int64_t) * P);
  if (!r->kind || !r->off || !r->step || !r->init || !r->astep) return DUAL_ERR_NO_MEMORY;
  memcpy(r->kind, m->kind, 3 * P);
  memcpy(r->off, m->off, sizeof(int64_t) * 3 * P);
  memcpy(r->step, m->step, sizeof(int64_t) * 3 * P);
  memcpy(r->init, m->init, sizeof(int64_t) * 3 * P);
  memcpy(r->astep, m->astep, sizeof(int64_t) * P);
  return DUAL_SUCCESS;
}

void dual_jit_runs_free(dual_jit_run *runs, int64_t nruns) {
  for (int64_t i = 0; runs != NULL && i < nruns; ++i)
    free(runs[i].kind), free(runs[i].off), free(runs[i].step), free(runs[i].init), free(runs[i].astep);
  free(runs);
}

int dual_jit_find_runs(const dual_program *prog, int max_period, int64_t min_count,
                       dual_jit_run **runs, int64_t *nruns) {
  *runs = NULL, *nruns = 0;
  const int64_t n = prog->n_instr;
  const size_t nn = (size_t)(n > 0 ? n : 1), mp = (size_t)(max_period > 0 ? max_period : 1);
  scan sc = {prog, (int64_t *)malloc(sizeof(int64_t) * 3 * nn), (int64_t *)malloc(sizeof(int64_t) * nn)};
  int64_t *def = (int64_t *)malloc(sizeof(int64_t) * (size_t)(prog->n_regs > 0 ? prog->n_regs : 1));
  tmpl m = {0, 0, (uint8_t *)malloc(3 * mp), (int64_t *)malloc(sizeof(int64_t) * 3 * mp),
            (int64_t *)malloc(sizeof(int64_t) * 3 * mp), (int64_t *)malloc(sizeof(int64_t) * 3 * mp),
            (int64_t *)malloc(sizeof(int64_t) * mp)};
  tmpl best = m;
  best.kind = (uint8_t *)malloc(3 * mp);
  best.off = (int64_t *)malloc(sizeof(int64_t) * 3 * mp);
  best.step = (int64_t *)malloc(sizeof(int64_t) * 3 * mp);
  best.init = (int64_t *)malloc(sizeof(int64_t) * 3 * mp);
  best.astep = (int64_t *)malloc(sizeof(int64_t) * mp);
  int rc = DUAL_SUCCESS;
  int64_t cap = 0;
  if (!sc.opnd || !sc.lastuse || !def || !m.kind || !m.off || !m.step || !m.init || !m.astep ||
      !best.kind || !best.off || !best.step || !best.init || !best.astep) {
    rc = DUAL_ERR_NO_MEMORY;
    goto done;
  }
  for (int32_t r = 0; r < prog->n_regs; ++r) def[r] = -1;
  for (int64_t t = 0; t < n; ++t) {
    const uint32_t *w = words(prog, t);
    const int op = DUAL_INSTR_OP(w);
    sc.lastuse[t] = -1;
    for (int i = 0; i < 3; ++i) {
      const int64_t d = i < reads(op) ? def[(int32_t)w[1 + i]] : -1;
      sc.opnd[3 * t + i] = d;
      if (d >= 0) sc.lastuse[d] = t;
    }
    if (dual_op_table[op].prop != DUAL_PROP_OUT) def[DUAL_INSTR_DST(w)] = t;
  }
  for (int64_t s = 0; s < n;) {
    int64_t got = 0;
    for (int64_t P = 1; P <= max_period; ++P) {
      m.s = s, m.P = P;
      const int64_t k = run_length(&sc, &m);
      if (k < min_count || k * P <= got * best.P) continue;
      got = k;
      best.s = s, best.P = P;
      memcpy(best.kind, m.kind, 3 * (size_t)P);
      memcpy(best.off, m.off, sizeof(int64_t) * 3 * (size_t)P);
      memcpy(best.step, m.step, sizeof(int64_t) * 3 * (size_t)P);
      memcpy(best.init, m.init, sizeof(int64_t) * 3 * (size_t)P);
      memcpy(best.astep, m.astep, sizeof(int64_t) * (size_t)P);
    }
    if (got == 0) {
      ++s;
      continue;
    }
    if (*nruns == cap) {
      cap = cap ? 2 * cap : 4;
      dual_jit_run *grown = (dual_jit_run *)realloc(*runs, sizeof(dual_jit_run) * (size_t)cap);
      if (grown == NULL) {
        rc = DUAL_ERR_NO_MEMORY;
        goto done;
      }
      *runs = grown;
    }
    dual_jit_run *r = &(*runs)[(*nruns)++];
    memset(r, 0, sizeof *r);
    if ((rc = take_run(r, &best, got)) != DUAL_SUCCESS) goto done;
    s += got * best.P;
  }
done:
  if (rc != DUAL_SUCCESS) dual_jit_runs_free(*runs, *nruns), *runs = NULL, *nruns = 0;
  free(sc.opnd), free(sc.lastuse), free(def);
  free(m.kind), free(m.off), free(m.step), free(m.init), free(m.astep);
  free(best.kind), free(best.off), free(best.step), free(best.init), free(best.astep);
  return rc;
}
