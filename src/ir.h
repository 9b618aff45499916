/*
 * ir.h — the builder's intermediate representation: a DAG of value nodes in creation order
 * (operands always precede their users, so the order is topological).  Shared by builder.c
 * (construction, folding, CSE) and bytecode_emit.c (DCE, scheduling, register allocation,
 * emission).
 */
#ifndef DUAL_IR_H
#define DUAL_IR_H

#include <stdint.h>

#include "dualbatch.h"

#define DUAL_MAX_NODES ((int32_t)1 << 30)

typedef struct dual_ir_node {
  int32_t op;     /* dual_op */
  int32_t arg[3]; /* operand node ids (unused = 0) */
  int32_t idx;    /* LDX / LDP: input / parameter index; RNORM / RUNIF: draw index */
  double k;       /* LDK: the constant */
  uint8_t active; /* depends on an input: carries tangents */
} dual_ir_node;

struct dual_builder {
  dual_context *ctx;
  int status; /* first error, sticky */
  dual_ir_node *nodes;
  int32_t n_nodes;
  int64_t nodes_cap;
  int32_t *table; /* open-addressing hash of node ids, -1 = empty */
  int64_t table_cap;
  char **in_names, **par_names, **out_names;
  int32_t n_in, n_par, n_out;
  int32_t n_draws; /* random draws so far (RNORM / RUNIF leaves, idx 0 .. n_draws - 1) */
  int64_t in_cap, par_cap, out_cap;
  int32_t *out_node; /* [n_out] node id of each output */
  int64_t out_node_cap;
};

#endif /* DUAL_IR_H */
