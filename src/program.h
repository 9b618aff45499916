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
};

/* Allocate an empty program with arrays of the given sizes (names NULL-filled).  NULL on OOM. */
dual_program *dual_program_alloc(int32_t n_in, int32_t n_par, int32_t n_out, int32_t n_const,
                                 int64_t n_instr);

/* Check every invariant of bytecode.h.  On failure writes a message (instruction index, what is
 * wrong) into msg (cap bytes) and returns DUAL_ERR_INVALID_PROGRAM. */
int dual_program_validate(const dual_program *prog, char *msg, int64_t cap);

#endif /* DUAL_PROGRAM_H */
