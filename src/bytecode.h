/*
 * bytecode.h — the instruction encoding of dualbatch programs and its limits.
 * Included by the compiler, validator, serializer, disassembler and both engines.
 *
 * One instruction is four 32-bit little-endian words:
 *
 *    word 0                          word 1          word 2          word 3
 *   31      24 23                0   31          0   31          0   31          0
 *   +---------+-------------------+  +-----------+  +-----------+  +-----------+
 *   |   op    |       dst         |  |     a     |  |     b     |  |     c     |
 *   +---------+-------------------+  +-----------+  +-----------+  +-----------+
 *     8 bits      24 bits               32 bits        32 bits        32 bits
 *
 *   op    opcode (src/dual/ops.def), < DUAL_OP_COUNT <= 256
 *   dst   destination register
 *   a,b,c operand registers (first `arity` used, the rest must be 0), except:
 *           LDX dst, a   a = input index      LDP dst, a   a = parameter index
 *           LDK dst, a   a = constant index   OUT a, b     a = register, b = output index (dst 0)
 *
 * Registers [0, n_active) carry a value and N tangents ("active"); registers [n_active, n_regs)
 * carry a value only ("passive": constants, parameters, comparisons, anything that does not
 * depend on an input).  The validator checks that every register's class is what its operands
 * imply, that it is written before it is read, and that dst differs from every operand (so the
 * engines may treat operand and result storage as non-aliasing).
 */
#ifndef DUAL_BYTECODE_H
#define DUAL_BYTECODE_H

#include <stdint.h>

#include "dual/ops.h"

#define DUAL_INSTR_WORDS 4
#define DUAL_OP_BITS 8
#define DUAL_DST_BITS 24
#define DUAL_MAX_REGS ((int32_t)((1u << DUAL_DST_BITS) - 1u)) /* registers per program */
#define DUAL_MAX_SCALARS ((int32_t)((1u << 24) - 1u))         /* inputs, params, outputs, consts */
#define DUAL_MAX_DRAWS ((int32_t)((1u << 24) - 1u))           /* random draws (RNORM / RUNIF index) */
#define DUAL_MAX_INSTRS ((int64_t)1 << 30)

#ifdef __cplusplus
static_assert(DUAL_OP_COUNT <= (1 << DUAL_OP_BITS), "opcode count exceeds the op field");
#else
_Static_assert(DUAL_OP_COUNT <= (1 << DUAL_OP_BITS), "opcode count exceeds the op field");
#endif

#define DUAL_INSTR_OP(w) ((int)((w)[0] >> DUAL_DST_BITS))
#define DUAL_INSTR_DST(w) ((int32_t)((w)[0] & ((1u << DUAL_DST_BITS) - 1u)))
#define DUAL_INSTR_A(w) ((int32_t)(w)[1])
#define DUAL_INSTR_B(w) ((int32_t)(w)[2])
#define DUAL_INSTR_C(w) ((int32_t)(w)[3])

#endif /* DUAL_BYTECODE_H */
