/*
 * codegen.h — from the builder's DAG to validated bytecode: dead-code elimination, lazy leaf
 * scheduling, liveness-based register allocation in two classes (active / passive), emission.
 */
#ifndef DUAL_CODEGEN_H
#define DUAL_CODEGEN_H

#include "ir.h"

/* Produce *prog from the builder's DAG (validated).  Errors are reported on b->ctx. */
int dual_codegen(dual_builder *b, dual_program **prog);

#endif /* DUAL_CODEGEN_H */
