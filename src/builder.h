/*
 * builder.h — internal additions to the public builder API, for the language front end:
 * constant queries (compile-time indices and loop bounds) and access to the sticky error; replay
 * helpers for program transforms (engine/sgrad_score.c).
 */
#ifndef DUAL_BUILDER_H
#define DUAL_BUILDER_H

#include <stdint.h>

#include "dualbatch.h"

/* 1 and *value set if value id `id` is a compile-time constant (after folding), else 0. */
int dual_builder_const_value(const dual_builder *b, int32_t id, double *value);

/* Number of value nodes created so far (the front end bounds program size with it). */
int64_t dual_builder_node_count(const dual_builder *b);

/* dual_builder_apply by opcode (any computing op, spelled or internal). */
int dual_builder_apply_op(dual_builder *b, int op, int32_t nargs, const int32_t *args, int32_t *id);

/* A random draw (op DUAL_OP_RNORM or DUAL_OP_RUNIF) with a given draw index (replaying a
 * program keeps its draws' numbers). */
int dual_builder_draw(dual_builder *b, int op, int32_t index, int32_t *id);

/* The builder's sticky status (the first error, DUAL_SUCCESS if none). */
int dual_builder_status(const dual_builder *b);

/* The context the builder reports errors to. */
dual_context *dual_builder_context(const dual_builder *b);

#endif /* DUAL_BUILDER_H */
