/*
 * rtc_compile.h — NVRTC, loaded at run time (dlopen), so that a machine without libnvrtc still
 * runs everything on the interpreter.  Compiles generated source with the embedded headers
 * (jit/rtc_files.h) and the library's fixed floating-point options to a CUBIN.  Host code,
 * independent of the CUDA runtime and of a GPU: tests compile generated kernels on the CPU.
 */
#ifndef DUAL_RTC_COMPILE_H
#define DUAL_RTC_COMPILE_H

#include <stddef.h>
#include <stdint.h>

/* NVRTC's version (major * 1000 + minor * 10, as CUDA numbers it), or 0 when NVRTC cannot be
 * loaded; `why` (may be NULL) then says what was tried.  Loads NVRTC once per process
 * (DUALBATCH_NVRTC, if set, names the only library file tried). */
int dual_rtc_version(char *why, size_t why_cap);

/* The options every compile uses, as one string (part of the cache key): the architecture
 * sm_<cc>, then the floating-point options shared with the interpreter's nvcc build. */
void dual_rtc_options(int cc, char *buf, size_t cap);

/* SHA-256 of the embedded header texts and their names (part of the cache key). */
void dual_rtc_headers_digest(uint8_t digest[32]);

/* Compile `src` for compute capability cc (e.g. 90) to a CUBIN.  On success *image (heap) and
 * *size; on failure a DUAL_ERR_* status and *log (heap, may be NULL) with NVRTC's log or the
 * reason.  Thread-safe. */
int dual_rtc_compile(const char *src, int cc, void **image, size_t *size, char **log);

#endif /* DUAL_RTC_COMPILE_H */
