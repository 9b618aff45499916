/*
 * stress.h — the debug stress build (preset `stress`, -DDUAL_STRESS=ON): assertions on internal
 * invariants, the CPU interpreters checking every instruction's operands as they run (as
 * SQLite's debug VDBE does), and limits shrunk so that the paths for large inputs — reverse-mode
 * checkpointing, the compiled CPU tier's segmented and looped modules, one block of points per
 * take — run on the test suite's small ones.  In every other build the checks compile to nothing
 * and the sizes are the release sizes.  A failed check prints where and traps: only this build
 * can stop the process, which is what a stress run wants.
 */
#ifndef DUAL_STRESS_H
#define DUAL_STRESS_H

#include <stdint.h>

#ifndef DUAL_STRESS
#define DUAL_STRESS 0
#endif

#if DUAL_STRESS
void dual_stress_fail(const char *what, const char *file, int line);
#define DUAL_ASSERT(cond) ((cond) ? (void)0 : dual_stress_fail(#cond, __FILE__, __LINE__))
/* A size: the release value, or the stress build's small one. */
#define DUAL_STRESS_SIZE(release, stress) (stress)
#else
#define DUAL_ASSERT(cond) ((void)0)
#define DUAL_STRESS_SIZE(release, stress) (release)
#endif

struct dual_program;
/* The stress build's check of instruction t before the interpreter runs it: opcode in the table,
 * registers below the program's count, load indices below their array's size (the validator's
 * rules, checked again where they are relied on). */
#if DUAL_STRESS
void dual_stress_check_instr(const struct dual_program *prog, int op, int64_t dst, int64_t a,
                             int64_t b, int64_t c);
#define DUAL_STRESS_CHECK_INSTR(prog, op, dst, a, b, c) dual_stress_check_instr(prog, op, dst, a, b, c)
#else
#define DUAL_STRESS_CHECK_INSTR(prog, op, dst, a, b, c) ((void)0)
#endif

#endif /* DUAL_STRESS_H */
