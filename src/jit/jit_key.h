/*
 * jit_key.h — the compiled tier's cache keys.  The disk key names a CUBIN by everything that
 * decides its bits: the generated source, the embedded header texts, the compile options, the
 * NVRTC version, the GPU architecture and the library and generator versions.  The memory key
 * names a module in a process by what the source is generated from (the program's bytes and the
 * job shape), so a call that finds its module loaded never regenerates the source.
 */
#ifndef DUAL_JIT_KEY_H
#define DUAL_JIT_KEY_H

#include <stdint.h>

#include "program.h"

void dual_jit_disk_key(const char *source, int cc, int nvrtc_version, uint8_t key[32]);

/* The CPU compiled tier's disk key (jit/cpu_jit.h): the generated C, the embedded headers, the
 * compiler's identity (jit/cc_compile.h: its version, target, flags and this machine's CPU) and
 * the library and generator versions. */
void dual_jit_cpu_disk_key(const char *source, const char *identity, uint8_t key[32]);

void dual_jit_memory_key(const dual_program *prog, int mode, int width, int npass, int min_blocks,
                         int cc, uint8_t key[32]);

#endif /* DUAL_JIT_KEY_H */
