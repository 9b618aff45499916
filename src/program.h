/*
 * program.h — the internal layout of a dual_program (opaque to users) and the helpers that
 * create, validate and free one.  Included by the compiler, serializer, disassembler, engines.
 */
#ifndef DUAL_PROGRAM_H
#define DUAL_PROGRAM_H

#include <stdint.h>

#include "bytecode.h"
#include "dualbatch.h"

struct dual_program {
  int32_t n_in, n_par, n_out; /* scalar counts of f: R^n x R^p -> R^m */
  int32_t n_regs, n_active;   /* register file: all / tangent-carrying */
  int32_t n_const;
  int64_t n_instr;
  uint32_t *code;   /* [n_instr][DUAL_INSTR_WORDS] */
  double *consts;   /* [n_const], finite */
  char **in_names;  /* [n_in]  scalar names, e.g. "cam[3]" */
  char **par_names; /* [n_par] */
  char **out_names; /* [n_out] */
  /* A Jacobian's seeding in first-order forward mode.  seed_lane NULL: input i is direction i.
   * In a colored view (dual_program_colored): input i seeds direction seed_lane[i] of n_seed, so
   * a Jacobian job computes J S (m x n_seed), S's column c the sum of the unit vectors of the
   * inputs of color c; seed_key is a digest of the map for the engines' plan caches. */
  int32_t *seed_lane;
  int32_t n_seed;
  uint64_t seed_key;
  int view; /* 1: code, consts and names belong to the program the view was made from */
  uint64_t uid; /* unique in the process (programs never change): the GPU's memo of its kernel */
};

/* Columns of a Jacobian job's output: n_in, or a colored view's n_seed. */
static inline int32_t dual_program_jacobian_columns(const dual_program *p) {
  return p->seed_lane != NULL ? p->n_seed : p->n_in;
}

/* A view of prog whose Jacobian is compressed by a column coloring: input i seeds direction
 * color[i] (0 <= color[i] < ncolors, in passes of the engine's width like any Jacobian's columns;
 * inputs of one color must share no output, or the columns would add up).  It shares prog's bytecode and must not outlive it; forward mode and
 * DUAL_MODE_EVAL / DUAL_MODE_JACOBIAN only.  NULL when out of memory. */
dual_program *dual_program_colored(const dual_program *prog, const int32_t *color, int32_t ncolors);

/* Allocate an empty program with arrays of the given sizes (names NULL-filled).  NULL on OOM. */
dual_program *dual_program_alloc(int32_t n_in, int32_t n_par, int32_t n_out, int32_t n_const,
                                 int64_t n_instr);

/* Check every invariant of bytecode.h.  On failure writes a message (instruction index, what is
 * wrong) into msg (cap bytes) and returns DUAL_ERR_INVALID_PROGRAM. */
int dual_program_validate(const dual_program *prog, char *msg, int64_t cap);

#endif /* DUAL_PROGRAM_H */
