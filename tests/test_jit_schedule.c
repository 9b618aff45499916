/*
 * test_jit_schedule.c — the generator's emission order (src/jit/jit_schedule.h): every order is
 * a permutation in which operands come before their users; on the accumulator pattern that made
 * kin spill the order keeps fewer doubles live than the bytecode's (peaks derived by hand below);
 * programs over the size limit keep the bytecode's order.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jit/jit_schedule.h"

/* Checks order[] is a permutation with every operand before its user. */
static void assert_topological(int64_t ni, const int64_t *operand, const int64_t *order) {
  int64_t *pos = malloc(sizeof(int64_t) * (size_t)ni);
  for (int64_t t = 0; t < ni; ++t) pos[t] = -1;
  for (int64_t i = 0; i < ni; ++i) {
    cr_assert(order[i] >= 0 && order[i] < ni, "entry %lld out of range", (long long)i);
    cr_assert_eq(pos[order[i]], -1, "instruction %lld twice", (long long)order[i]);
    pos[order[i]] = i;
  }
  for (int64_t t = 0; t < ni; ++t)
    for (int k = 0; k < 3; ++k) {
      const int64_t d = operand[3 * t + k];
      if (d >= 0) cr_assert_lt(pos[d], pos[t], "operand %lld after its user %lld", (long long)d, (long long)t);
    }
  free(pos);
}

/* The most doubles live at once in `order`: a result is live from its instruction to its last
 * user. */
static int64_t peak_live(int64_t ni, const int64_t *operand, const int32_t *cost, const int64_t *order) {
  int64_t *last = malloc(sizeof(int64_t) * (size_t)ni), *pos = malloc(sizeof(int64_t) * (size_t)ni);
  for (int64_t i = 0; i < ni; ++i) pos[order[i]] = i;
  for (int64_t t = 0; t < ni; ++t) last[t] = pos[t];
  for (int64_t t = 0; t < ni; ++t)
    for (int k = 0; k < 3; ++k)
      if (operand[3 * t + k] >= 0 && last[operand[3 * t + k]] < pos[t]) last[operand[3 * t + k]] = pos[t];
  int64_t peak = 0;
  for (int64_t i = 0; i < ni; ++i) {
    int64_t live = 0;
    for (int64_t t = 0; t < ni; ++t)
      if (pos[t] <= i && last[t] >= i) live += cost[t];
    if (live > peak) peak = live;
  }
  free(last), free(pos);
  return peak;
}

/* K accumulators a_i = load_i, each updated once by a term r_i = load'_i * c, the terms all
 * computed after every accumulator is loaded (the bytecode's order of a kinetics program):
 *   t = 0..K-1: a_i = LD;  K: c = LD;  then per i: r_i = LD'; s_i = r_i * c; a_i' = a_i + s_i;
 *   OUT a_i'.  Costs: loads and results 2 doubles (value and one lane), OUTs 0.
 * In the bytecode's order all K accumulators are live while the terms are built: peak 2K + 2
 * (c) + 2 (r_i) + 2 (s_i) = 2K + 6.  Finishing each accumulator as soon as it is loaded needs
 * only c, a_i, r_i, s_i at once: 8 (c loaded first) or 10 at most. */
Test(jit_schedule, accumulators_finish_early) {
  enum { K = 24 };
  const int64_t ni = K + 1 + 4 * K;
  int64_t *operand = malloc(sizeof(int64_t) * 3 * (size_t)ni), *order = malloc(sizeof(int64_t) * (size_t)ni);
  int32_t *cost = malloc(sizeof(int32_t) * (size_t)ni);
  for (int64_t t = 0; t < 3 * ni; ++t) operand[t] = -1;
  for (int64_t t = 0; t < ni; ++t) cost[t] = 2;
  const int64_t c = K;
  for (int i = 0; i < K; ++i) {
    const int64_t r = K + 1 + 4 * i, s = r + 1, a = r + 2, out = r + 3;
    operand[3 * s] = r, operand[3 * s + 1] = c;
    operand[3 * a] = i, operand[3 * a + 1] = s;
    operand[3 * out] = a, cost[out] = 0;
  }
  for (int64_t t = 0; t < ni; ++t) order[t] = t;
  const int64_t bytecode = peak_live(ni, operand, cost, order);
  cr_assert_eq(bytecode, 2 * K + 6, "bytecode order peak %lld", (long long)bytecode);
  cr_assert_eq(dual_jit_schedule(ni, operand, cost, order), 0);
  assert_topological(ni, operand, order);
  const int64_t scheduled = peak_live(ni, operand, cost, order);
  cr_assert_leq(scheduled, 10, "scheduled peak %lld (bytecode %lld)", (long long)scheduled,
                (long long)bytecode);
  free(operand), free(order), free(cost);
}

/* Random dependence graphs (operands anywhere before the user, repeated operands, OUTs): the
 * order is always a topological permutation. */
Test(jit_schedule, random_graphs_are_ordered_topologically) {
  uint64_t s = 12345;
  for (int rep = 0; rep < 200; ++rep) {
    const int64_t ni = 1 + (int64_t)(rep * 7 % 300);
    int64_t *operand = malloc(sizeof(int64_t) * 3 * (size_t)ni), *order = malloc(sizeof(int64_t) * (size_t)ni);
    int32_t *cost = malloc(sizeof(int32_t) * (size_t)ni);
    for (int64_t t = 0; t < ni; ++t) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      const int arity = t == 0 ? 0 : (int)((s >> 33) % 4);
      for (int k = 0; k < 3; ++k) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        operand[3 * t + k] = k < arity ? (int64_t)((s >> 29) % (uint64_t)t) : -1;
      }
      cost[t] = arity == 1 && (s & 7) == 0 ? 0 : 1 + (int32_t)((s >> 40) % 9);
    }
    cr_assert_eq(dual_jit_schedule(ni, operand, cost, order), 0);
    assert_topological(ni, operand, order);
    free(operand), free(order), free(cost);
  }
}

/* Over DUAL_JIT_SCHEDULE_MAX instructions: the bytecode's order, reported. */
Test(jit_schedule, large_programs_keep_the_bytecode_order) {
  const int64_t ni = DUAL_JIT_SCHEDULE_MAX + 1;
  int64_t *operand = malloc(sizeof(int64_t) * 3 * (size_t)ni), *order = malloc(sizeof(int64_t) * (size_t)ni);
  int32_t *cost = malloc(sizeof(int32_t) * (size_t)ni);
  for (int64_t t = 0; t < ni; ++t) {
    operand[3 * t] = t > 0 ? t - 1 : -1, operand[3 * t + 1] = operand[3 * t + 2] = -1;
    cost[t] = 1;
  }
  cr_assert_eq(dual_jit_schedule(ni, operand, cost, order), -1);
  for (int64_t t = 0; t < ni; ++t) cr_assert_eq(order[t], t);
  free(operand), free(order), free(cost);
}
