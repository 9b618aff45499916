/*
 * jit_schedule.h — the order in which the source generator (jit/jit_source.c) writes a pass's
 * instructions.  Any order in which every operand comes before its use computes the same bits
 * (each value is the same rule on the same operands; no sum is reassociated), so the generator
 * is free to choose one that keeps few values and tangent lanes live at once, which is what
 * decides whether a straight-line kernel fits in registers.  Host code.
 */
#ifndef DUAL_JIT_SCHEDULE_H
#define DUAL_JIT_SCHEDULE_H

#include <stdint.h>

/* Programs above this many instructions keep the bytecode's order (the scheduler's work grows
 * faster than linearly). */
#define DUAL_JIT_SCHEDULE_MAX 4096

/* A pass's instructions 0 .. ni - 1 in emission order, into order[] (ni entries, every
 * instruction once).  operand[3 t + i]: the instruction whose result instruction t reads as its
 * operand i (-1: none; operands have smaller indices than their users).  cost[t]: the doubles
 * instruction t's result holds (its value and its lanes in this pass; 0 for an instruction
 * without a result, such as an OUT).  The order is a greedy one: from the instructions that
 * read a live result, it takes the one whose missing operands (its cone) free the most live
 * doubles per double they add, ties to the lowest index, and writes the cone in index order.
 * Deterministic.  Returns 0, or -1 when out of memory or over DUAL_JIT_SCHEDULE_MAX (order[] is
 * then the identity: the bytecode's order). */
int dual_jit_schedule(int64_t ni, const int64_t *operand, const int32_t *cost, int64_t *order);

#endif /* DUAL_JIT_SCHEDULE_H */
