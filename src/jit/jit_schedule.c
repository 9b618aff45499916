/*
 * jit_schedule.c — the generator's emission order (jit_schedule.h): a greedy list schedule of
 * a pass's dependence graph that keeps few doubles live.
 *
 * Why: kin's 32 accumulators are each updated by six reactions spread over the whole program,
 * so in the bytecode's order all of them stay live, with their growing lanes, to the end (up to
 * 299 doubles at 32 lanes, far over a thread's 255 registers: the kernel spilled 2.8 KB).  Taking
 * first the reactions that finish accumulators brings the peak to 133.
 */
#include "jit/jit_schedule.h"

#include <stdlib.h>
#include <string.h>

/* Work units (cone nodes visited) after which the scheduler gives up and keeps the bytecode's
 * order, so that no program makes the generator slow. */
#define WORK_LIMIT 40000000

typedef struct sched {
  int64_t ni;
  const int64_t *operand;
  const int32_t *cost;
  int64_t *user_start, *users;          /* distinct users of each instruction (CSR) */
  int64_t *remaining;                   /* users not yet emitted */
  int64_t *stamp, *count_stamp, *count; /* per-evaluation marks */
  int64_t *stack, *cone, *touched, *live, *seen;
  char *emitted;
  int64_t work;
} sched;

/* Operand i of t, or -1 when it repeats an earlier operand of t (distinct operands only). */
static int64_t distinct_operand(const sched *s, int64_t t, int i) {
  const int64_t d = s->operand[3 * t + i];
  for (int j = 0; j < i; ++j)
    if (s->operand[3 * t + j] == d) return -1;
  return d;
}

/* The instructions u needs that are not emitted yet, u included, into s->cone; returns their
 * number.  `mark` identifies this evaluation in s->stamp. */
static int64_t cone_of(sched *s, int64_t u, int64_t mark) {
  int64_t top = 0, n = 0;
  s->stack[top++] = u;
  while (top > 0) {
    const int64_t x = s->stack[--top];
    if (s->emitted[x] || s->stamp[x] == mark) continue;
    s->stamp[x] = mark;
    s->cone[n++] = x;
    for (int i = 0; i < 3; ++i) {
      const int64_t d = s->operand[3 * x + i];
      if (d >= 0 && !s->emitted[d] && s->stamp[d] != mark) s->stack[top++] = d;
    }
  }
  s->work += n;
  return n;
}

/* Doubles the cone adds (its results) and frees (operands whose last user it holds). */
static void cone_balance(sched *s, int64_t n, int64_t mark, int64_t *added, int64_t *freed) {
  int64_t add = 0, fr = 0, nt = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t x = s->cone[k];
    add += s->cost[x];
    for (int i = 0; i < 3; ++i) {
      const int64_t d = distinct_operand(s, x, i);
      if (d < 0) continue;
      if (s->count_stamp[d] != mark) s->count_stamp[d] = mark, s->count[d] = 0, s->touched[nt++] = d;
      ++s->count[d];
    }
  }
  for (int64_t k = 0; k < nt; ++k) {
    const int64_t d = s->touched[k];
    const int64_t left = s->emitted[d] ? s->remaining[d] : s->user_start[d + 1] - s->user_start[d];
    if (left == s->count[d]) fr += s->cost[d];
  }
  s->work += n + nt;
  *added = add, *freed = fr;
}

static int cmp_index(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void emit_one(sched *s, int64_t x, int64_t *order, int64_t *k) {
  s->emitted[x] = 1;
  order[(*k)++] = x;
  for (int i = 0; i < 3; ++i) {
    const int64_t d = distinct_operand(s, x, i);
    if (d >= 0) --s->remaining[d];
  }
}

/* Emit the cone in index order (a topological order: operands precede users), each result
 * followed by those of its users that have no result (OUTs) once their operands are out. */
static void emit_cone(sched *s, int64_t n, int64_t *order, int64_t *k) {
  qsort(s->cone, (size_t)n, sizeof *s->cone, cmp_index);
  for (int64_t c = 0; c < n; ++c) {
    const int64_t x = s->cone[c];
    emit_one(s, x, order, k);
    for (int64_t j = s->user_start[x]; j < s->user_start[x + 1]; ++j) {
      const int64_t u = s->users[j];
      if (s->cost[u] != 0 || s->emitted[u]) continue;
      int ready = 1;
      for (int i = 0; i < 3; ++i)
        if (s->operand[3 * u + i] >= 0 && !s->emitted[s->operand[3 * u + i]]) ready = 0;
      if (ready) emit_one(s, u, order, k);
    }
  }
}

static int run(sched *s, int64_t *order) {
  const int64_t ni = s->ni;
  int64_t k = 0, mark = 0, next = 0;
  int64_t *live = s->live, nlive = 0;
  while (k < ni) {
    if (s->work > WORK_LIMIT) return -1;
    /* candidates: the unemitted users of live results */
    int64_t best = -1, best_added = 0, best_freed = 0;
    const int64_t round = ++mark;
    int64_t w = 0;
    for (int64_t l = 0; l < nlive; ++l) {
      const int64_t d = live[l];
      if (s->remaining[d] == 0) continue;
      live[w++] = d;
      for (int64_t j = s->user_start[d]; j < s->user_start[d + 1]; ++j) {
        const int64_t u = s->users[j];
        if (s->emitted[u] || s->seen[u] == round) continue;
        s->seen[u] = round;
        const int64_t eval = ++mark;
        const int64_t n = cone_of(s, u, eval);
        int64_t added = 0, freed = 0;
        cone_balance(s, n, eval, &added, &freed);
        /* best: the most freed per added (+1), then the lowest index */
        const int64_t lhs = freed * (best_added + 1), rhs = best_freed * (added + 1);
        if (best < 0 || lhs > rhs || (lhs == rhs && u < best))
          best = u, best_added = added, best_freed = freed;
      }
    }
    nlive = w;
    if (best < 0) { /* nothing reads a live result: the first instruction not yet emitted */
      while (s->emitted[next]) ++next;
      best = next;
    }
    const int64_t n = cone_of(s, best, ++mark);
    const int64_t k0 = k;
    emit_cone(s, n, order, &k);
    for (int64_t c = k0; c < k; ++c)
      if (s->remaining[order[c]] > 0) live[nlive++] = order[c];
  }
  return 0;
}

int dual_jit_schedule(int64_t ni, const int64_t *operand, const int32_t *cost, int64_t *order) {
  for (int64_t t = 0; t < ni; ++t) order[t] = t;
  if (ni > DUAL_JIT_SCHEDULE_MAX) return -1;
  if (ni == 0) return 0;
  sched s;
  memset(&s, 0, sizeof s);
  s.ni = ni, s.operand = operand, s.cost = cost;
  const size_t n = (size_t)ni;
  s.user_start = (int64_t *)calloc(n + 1, sizeof(int64_t));
  s.users = (int64_t *)malloc(3 * n * sizeof(int64_t) + 1);
  s.remaining = (int64_t *)calloc(n, sizeof(int64_t));
  s.stamp = (int64_t *)calloc(n, sizeof(int64_t));
  s.count_stamp = (int64_t *)calloc(n, sizeof(int64_t));
  s.count = (int64_t *)calloc(n, sizeof(int64_t));
  s.stack = (int64_t *)malloc(3 * n * sizeof(int64_t) + 8);
  s.cone = (int64_t *)malloc(n * sizeof(int64_t));
  s.touched = (int64_t *)malloc(n * sizeof(int64_t));
  s.live = (int64_t *)malloc(n * sizeof(int64_t));
  s.seen = (int64_t *)calloc(n, sizeof(int64_t));
  s.emitted = (char *)calloc(n, 1);
  int st = -1;
  if (s.user_start && s.users && s.remaining && s.stamp && s.count_stamp && s.count && s.stack &&
      s.cone && s.touched && s.live && s.seen && s.emitted) {
    for (int64_t t = 0; t < ni; ++t)
      for (int i = 0; i < 3; ++i) {
        const int64_t d = distinct_operand(&s, t, i);
        if (d >= 0) ++s.user_start[d + 1];
      }
    for (int64_t t = 0; t < ni; ++t) s.user_start[t + 1] += s.user_start[t];
    int64_t *fill = s.remaining; /* fill positions, then reset to the user counts */
    for (int64_t t = 0; t < ni; ++t) fill[t] = s.user_start[t];
    for (int64_t t = 0; t < ni; ++t)
      for (int i = 0; i < 3; ++i) {
        const int64_t d = distinct_operand(&s, t, i);
        if (d >= 0) s.users[fill[d]++] = t;
      }
    for (int64_t t = 0; t < ni; ++t) s.remaining[t] = s.user_start[t + 1] - s.user_start[t];
    st = run(&s, order);
    if (st != 0)
      for (int64_t t = 0; t < ni; ++t) order[t] = t;
  }
  free(s.user_start);
  free(s.users);
  free(s.remaining);
  free(s.stamp);
  free(s.count_stamp);
  free(s.count);
  free(s.stack);
  free(s.cone);
  free(s.touched);
  free(s.live);
  free(s.seen);
  free(s.emitted);
  return st;
}
