/*
 * bytecode_emit.h — from the builder's DAG to validated bytecode: dead-code elimination, lazy leaf
 * scheduling, liveness-based register allocation in two classes (active / passive), emission.
 */
#ifndef DUAL_BYTECODE_EMIT_H
#define DUAL_BYTECODE_EMIT_H

#include "ir.h"

/* Produce *prog from the builder's DAG (validated).  Errors are reported on b->ctx. */
int dual_bytecode_emit(dual_builder *b, dual_program **prog);

#endif /* DUAL_BYTECODE_EMIT_H */
