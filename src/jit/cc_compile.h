/*
 * cc_compile.h — the CPU compiled tier's compiler and loader (issue 21): C source to a shared
 * object with the system's C compiler, and a shared object's bytes to loaded code.
 *
 * The compiler is $DUALBATCH_CC (a path, or a name looked up on PATH) or else `cc` on PATH; its
 * identity (what `--version` and `-dumpmachine` print, the flags, and this machine's CPU model and
 * feature flags from /proc/cpuinfo) goes into the cache key, so a cached object is never used
 * with another compiler's or on another kind of CPU (where /proc/cpuinfo is missing the CPU part
 * is "cpu unknown": a cache directory shared by different machines should then not be).  A compile runs in a
 * private temporary directory (0700, under $TMPDIR or /tmp) that holds the source and the
 * headers it includes (jit/rtc_files.h's texts, the same the GPU tier's kernels include), is
 * stopped past DUAL_CC_LIMIT_S, and leaves nothing behind.  The flags keep the interpreter's
 * rounding: no contraction into fused multiply-adds, no fast-math (so the C library's vector
 * math, which rounds differently, is never substituted); each op's rule is the same inline
 * function from src/dual either way.
 *
 * Loading never reads a file the library did not just check: the caller verifies the bytes
 * (the disk cache's SHA-256, jit_cache.h), and dual_cc_load hands those bytes to the dynamic
 * loader through an anonymous memory file (memfd_create), or, where there is none, a private
 * temporary file removed once loaded.
 */
#ifndef DUAL_CC_COMPILE_H
#define DUAL_CC_COMPILE_H

#include <stddef.h>

/* The compiler's flags (part of the cache key).  -O1: the generated loops carry `omp simd`, which
 * -fopenmp-simd vectorizes at any level, and on the 2-core development machine (gcc 12,
 * 2026-11-29, bench/results/cpu-compiled-o1-o2-2026-11-29.txt, the same hour) -O1 ran ba, kin
 * and hess 1.0-1.24x as fast as -O2 and compiled in less than half the time (ba 1.6 s against
 * 3.7, kin 7.6 s against 15.1).  -march=native: the vector instructions of the
 * machine that compiles, which is the machine that runs (the key names its CPU).
 * -fno-trapping-math and -fopenmp-simd let point loops over the library's elementary functions
 * (dual/fn_*.h, inlined) vectorize where their control flow allows: with FP traps assumed, gcc 12
 * will not if-convert their range checks (dual_exp's loop vectorizes so; dual_sin's, with its
 * large-argument reduction, not yet); neither flag changes a result.  gcc also gets DUAL_CC_FLAGS_GCC: gcc 12
 * turns gathers (the functions' table loads) off by tuning on some CPUs (Intel's, after
 * Downfall), which leaves those loops scalar.  bench/probe_vector_exp.c: dual_exp in such a loop,
 * bitwise the library's, 2.1-2.8x its out-of-line call. */
#define DUAL_CC_FLAGS                                                                              \
  "-std=c11 -O1 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp-simd " \
  "-fno-strict-aliasing -fPIC -shared"
#define DUAL_CC_FLAGS_GCC "-mtune-ctrl=use_gather"

/* A compile past this many seconds is stopped and reported failed. */
#define DUAL_CC_LIMIT_S 300

typedef struct dual_cc {
  char path[4096];     /* the compiler's file */
  char flags[512];     /* DUAL_CC_FLAGS, and DUAL_CC_FLAGS_GCC for gcc */
  char identity[1024]; /* its --version's first line and -dumpmachine's, the flags, the CPU */
} dual_cc;

/* Find the compiler and its identity: 0, or -1 with *why (heap) saying what is missing. */
int dual_cc_find(dual_cc *cc, char **why);

/* Compile `src` (a C translation unit that may include the embedded headers by their names) to a
 * shared object: 0 with *image and *size (heap), or -1; *log (heap, or NULL) gets the compiler's
 * messages either way, or what stopped it. */
int dual_cc_compile(const dual_cc *cc, const char *src, void **image, size_t *size, char **log);

/* Load a shared object's bytes: 0 with *handle (for dlsym) and *keep_fd (the memory file, kept
 * open while the object is loaded, or -1), or -1 with *why (heap).  dual_cc_unload undoes it. */
int dual_cc_load(const void *image, size_t size, void **handle, int *keep_fd, char **why);
void dual_cc_unload(void *handle, int fd);

#endif /* DUAL_CC_COMPILE_H */
