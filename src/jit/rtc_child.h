/*
 * rtc_child.h — a compile in a child process, for the AUTO tier's background compiles.
 *
 * NVRTC registers some of its own teardown (C++ statics first used during a compile) with the
 * C library's exit handlers, after any handler the library could register.  A process that
 * returned from main while a compile ran in one of its threads therefore tore NVRTC down under
 * that compile: a crash, or a compile that never ended while exit waited for it (H200, about 3
 * CLI runs in 16 with 16 at once and a cold NVRTC; tests/test_gpu_jit.c).  A compile in a
 * fork()ed child is out of reach of its parent's exit: the parent may end at any time, and the
 * child finishes the compile, stores the CUBIN in the disk cache, and ends.
 */
#ifndef DUAL_RTC_CHILD_H
#define DUAL_RTC_CHILD_H

#include <stddef.h>
#include <stdint.h>

/* How to compile (dual_rtc_compile, or a test's stand-in): source and compute capability in;
 * on success DUAL_SUCCESS with *image and *size (heap), else a DUAL_ERR_* status, and in both
 * cases *log (heap, may be NULL). */
typedef int (*dual_rtc_compile_fn)(const char *src, int cc, void **image, size_t *size, char **log);

/* The child's time limit in seconds: a compile past it is killed (alarm) and reported failed. */
#define DUAL_RTC_CHILD_LIMIT_S 600

/* Run `compile` in a child process; the child stores a successful CUBIN in the disk cache
 * directory `cache_dir` under `disk_key` (dual_jit_cache_store; no store when cache_dir is NULL)
 * before it hands the result back.  Returns what `compile` returned, with *image, *size and *log
 * as it set them; a child that ended without a whole answer (killed, out of memory) gives
 * DUAL_ERR_INTERNAL and a log that says how it ended.  Returns -1 with nothing set when no child
 * could be started (pipe or fork failed): the caller then compiles in its own thread. */
int dual_rtc_compile_in_child(dual_rtc_compile_fn compile, const char *src, int cc,
                              const char *cache_dir, const uint8_t disk_key[32], void **image,
                              size_t *size, char **log);

#endif /* DUAL_RTC_CHILD_H */
