/*
 * program.c — dual_program allocation, destruction, shape queries and the bytecode validator.
 * The validator is the single gate every program passes (after bytecode emission and after loading):
 * a program it accepts cannot make an engine read or write out of bounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

#include <stdatomic.h>

static atomic_uint_fast64_t next_uid = 1;

static uint64_t new_uid(void) { return (uint64_t)atomic_fetch_add(&next_uid, 1); }

dual_program *dual_program_alloc(int32_t n_in, int32_t n_par, int32_t n_out, int32_t n_const,
                                 int64_t n_instr) {
  dual_program *p = (dual_program *)calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  p->n_in = n_in;
  p->n_par = n_par;
  p->n_out = n_out;
  p->n_const = n_const;
  p->n_instr = n_instr;
  p->uid = new_uid();
  p->code = (uint32_t *)calloc((size_t)n_instr * DUAL_INSTR_WORDS + 1, sizeof(uint32_t));
  p->consts = (double *)calloc((size_t)n_const + 1, sizeof(double));
  p->in_names = (char **)calloc((size_t)n_in + 1, sizeof(char *));
  p->par_names = (char **)calloc((size_t)n_par + 1, sizeof(char *));
  p->out_names = (char **)calloc((size_t)n_out + 1, sizeof(char *));
  if (!p->code || !p->consts || !p->in_names || !p->par_names || !p->out_names)
    dual_program_destroy(&p);
  return p;
}

static void free_names(char **names, int32_t n) {
  if (names == NULL) return;
  for (int32_t i = 0; i < n; ++i) free(names[i]);
  free(names);
}

dual_program *dual_program_colored(const dual_program *prog, const int32_t *color, int32_t ncolors) {
  dual_program *v = (dual_program *)malloc(sizeof *v);
  int32_t *lane = (int32_t *)malloc(sizeof *lane * (size_t)(prog->n_in > 0 ? prog->n_in : 1));
  if (v == NULL || lane == NULL) {
    free(v);
    free(lane);
    return NULL;
  }
  *v = *prog;
  uint64_t h = 1469598103934665603u; /* FNV-1a over the map */
  for (int32_t i = 0; i < prog->n_in; ++i) {
    lane[i] = color[i];
    h = (h ^ (uint64_t)(uint32_t)color[i]) * 1099511628211u;
  }
  v->seed_lane = lane, v->n_seed = ncolors, v->seed_key = h | 1u, v->view = 1, v->uid = new_uid();
  return v;
}

void dual_program_destroy(dual_program **pp) {
  if (pp == NULL || *pp == NULL) return;
  dual_program *p = *pp;
  free(p->seed_lane);
  if (p->view) {
    free(p);
    *pp = NULL;
    return;
  }
  free(p->code);
  free(p->consts);
  free_names(p->in_names, p->n_in);
  free_names(p->par_names, p->n_par);
  free_names(p->out_names, p->n_out);
  free(p);
  *pp = NULL;
}

int32_t dual_program_num_inputs(const dual_program *p) { return p ? p->n_in : 0; }
int32_t dual_program_num_params(const dual_program *p) { return p ? p->n_par : 0; }
int32_t dual_program_num_outputs(const dual_program *p) { return p ? p->n_out : 0; }
int64_t dual_program_num_instructions(const dual_program *p) { return p ? p->n_instr : 0; }
int32_t dual_program_num_registers(const dual_program *p) { return p ? p->n_regs : 0; }
int32_t dual_program_num_active_registers(const dual_program *p) { return p ? p->n_active : 0; }

int32_t dual_program_num_draws(const dual_program *p) {
  int32_t n = 0;
  for (int64_t t = 0; p != NULL && t < p->n_instr; ++t) {
    const uint32_t *w = p->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    if ((op == DUAL_OP_RNORM || op == DUAL_OP_RUNIF) && (int32_t)w[1] >= n) n = (int32_t)w[1] + 1;
  }
  return n;
}

const char *dual_program_input_name(const dual_program *p, int32_t i) {
  return (p && i >= 0 && i < p->n_in) ? p->in_names[i] : NULL;
}
const char *dual_program_param_name(const dual_program *p, int32_t i) {
  return (p && i >= 0 && i < p->n_par) ? p->par_names[i] : NULL;
}
const char *dual_program_output_name(const dual_program *p, int32_t i) {
  return (p && i >= 0 && i < p->n_out) ? p->out_names[i] : NULL;
}

/* ---- validator ---------------------------------------------------------------------------------- */
#define INVALID(...)                                                                             \
  do {                                                                                           \
    snprintf(msg, (size_t)cap, __VA_ARGS__);                                                     \
    status = DUAL_ERR_INVALID_PROGRAM;                                                           \
    goto done;                                                                                   \
  } while (0)

int dual_program_validate(const dual_program *p, char *msg, int64_t cap) {
  int status = DUAL_SUCCESS;
  uint8_t *defined = NULL, *written = NULL;
  if (cap > 0) msg[0] = '\0';
  if (p->n_in < 0 || p->n_par < 0 || p->n_out < 1 || p->n_const < 0 || p->n_in > DUAL_MAX_SCALARS ||
      p->n_par > DUAL_MAX_SCALARS || p->n_out > DUAL_MAX_SCALARS || p->n_const > DUAL_MAX_SCALARS)
    INVALID("bad counts: %d inputs, %d params, %d outputs, %d constants", (int)p->n_in,
            (int)p->n_par, (int)p->n_out, (int)p->n_const);
  if (p->n_regs < 1 || p->n_regs > DUAL_MAX_REGS || p->n_active < 0 || p->n_active > p->n_regs)
    INVALID("bad register counts: %d registers, %d active", (int)p->n_regs, (int)p->n_active);
  if (p->n_instr < 1 || p->n_instr > DUAL_MAX_INSTRS)
    INVALID("bad instruction count %lld", (long long)p->n_instr);
  for (int32_t k = 0; k < p->n_const; ++k)
    if (!isfinite(p->consts[k])) INVALID("constant %d is not finite", (int)k);
  for (int32_t i = 0; i < p->n_in; ++i)
    if (!p->in_names[i]) INVALID("input %d has no name", (int)i);
  for (int32_t i = 0; i < p->n_par; ++i)
    if (!p->par_names[i]) INVALID("parameter %d has no name", (int)i);
  for (int32_t i = 0; i < p->n_out; ++i)
    if (!p->out_names[i]) INVALID("output %d has no name", (int)i);

  defined = (uint8_t *)calloc((size_t)p->n_regs, 1);
  written = (uint8_t *)calloc((size_t)p->n_out, 1);
  if (!defined || !written) {
    snprintf(msg, (size_t)cap, "out of memory validating the program");
    status = DUAL_ERR_NO_MEMORY;
    goto done;
  }
  const uint32_t nregs = (uint32_t)p->n_regs, nact = (uint32_t)p->n_active;
  for (int64_t t = 0; t < p->n_instr; ++t) {
    const uint32_t *w = p->code + t * DUAL_INSTR_WORDS;
    uint32_t op = w[0] >> DUAL_DST_BITS, dst = w[0] & ((1u << DUAL_DST_BITS) - 1u);
    if (op >= DUAL_OP_COUNT) INVALID("instruction %lld: opcode %u out of range", (long long)t, op);
    const dual_op_info *info = &dual_op_table[op];
    if (info->prop == DUAL_PROP_OUT) {
      if (dst != 0 || w[3] != 0) INVALID("instruction %lld: OUT has nonzero unused fields", (long long)t);
      if (w[1] >= nregs || !defined[w[1]])
        INVALID("instruction %lld: OUT reads register %u, undefined or out of range", (long long)t, w[1]);
      if (w[2] >= (uint32_t)p->n_out || written[w[2]])
        INVALID("instruction %lld: OUT to output %u, out of range or written twice", (long long)t, w[2]);
      written[w[2]] = 1;
      continue;
    }
    if (dst >= nregs) INVALID("instruction %lld: destination register %u out of range", (long long)t, dst);
    int expect_active;
    if (info->prop == DUAL_PROP_LOAD) {
      uint32_t limit = op == DUAL_OP_LDX   ? (uint32_t)p->n_in
                       : op == DUAL_OP_LDP ? (uint32_t)p->n_par
                       : op == DUAL_OP_LDK ? (uint32_t)p->n_const
                                           : (uint32_t)DUAL_MAX_DRAWS; /* a random draw's index */
      if (w[1] >= limit) INVALID("instruction %lld: %s index %u out of range", (long long)t, info->name, w[1]);
      if (w[2] != 0 || w[3] != 0) INVALID("instruction %lld: nonzero unused operand", (long long)t);
      expect_active = dual_result_active((int)op, info->prop, 0, 0, 0);
    } else {
      int act[3] = {0, 0, 0};
      for (int k = 0; k < 3; ++k) {
        uint32_t r = w[1 + k];
        if (k >= info->arity) {
          if (r != 0) INVALID("instruction %lld: nonzero unused operand", (long long)t);
          continue;
        }
        if (r >= nregs || !defined[r])
          INVALID("instruction %lld: operand register %u undefined or out of range", (long long)t, r);
        int inplace_ok = k == 0 && (op == DUAL_OP_ADD || op == DUAL_OP_SUB) && w[2] != dst;
        if (r == dst && !inplace_ok)
          INVALID("instruction %lld: destination equals an operand", (long long)t);
        act[k] = r < nact;
      }
      expect_active = dual_result_active((int)op, info->prop, act[0], act[1], act[2]);
    }
    if ((dst < nact) != expect_active)
      INVALID("instruction %lld: register %u is %s but its value is %s", (long long)t, dst,
              dst < nact ? "active" : "passive", expect_active ? "active" : "passive");
    defined[dst] = 1;
  }
  for (int32_t j = 0; j < p->n_out; ++j)
    if (!written[j]) INVALID("output %d is never written", (int)j);
  /* The header's register counts size every evaluation's scratch (registers x width x rows), so
   * they must be what the code needs: each register, active and passive, written by some
   * instruction.  Otherwise a small file could claim 2^24 registers and reserve gigabytes. */
  for (uint32_t r = 0; r < nregs; ++r)
    if (!defined[r]) {
      uint32_t used_act = 0, used = 0;
      for (uint32_t q = 0; q < nregs; ++q) {
        used_act += q < nact && defined[q];
        used += defined[q];
      }
      INVALID("the header claims %d registers (%d active) but the code writes %u (%u active); "
              "register %u is never written",
              (int)p->n_regs, (int)p->n_active, used, used_act, r);
    }
done:
  free(defined);
  free(written);
  return status;
}
