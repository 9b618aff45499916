/*
 * builder.h — internal additions to the public builder API, for the language front end:
 * constant queries (compile-time indices and loop bounds) and access to the sticky error.
 */
#ifndef DUAL_BUILDER_H
#define DUAL_BUILDER_H

#include <stdint.h>

#include "dualbatch.h"

/* 1 and *value set if value id `id` is a compile-time constant (after folding), else 0. */
int dual_builder_const_value(const dual_builder *b, int32_t id, double *value);

/* Number of value nodes created so far (the front end bounds program size with it). */
int64_t dual_builder_node_count(const dual_builder *b);

/* The context the builder reports errors to. */
dual_context *dual_builder_context(const dual_builder *b);

#endif /* DUAL_BUILDER_H */
