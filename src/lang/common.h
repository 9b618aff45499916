/*
 * common.h — what every part of the language front end shares: the source text being compiled,
 * the front end's limits, and the value-id conventions of the lowering.  Included by every file
 * under src/lang.
 */
#ifndef DUAL_LANG_COMMON_H
#define DUAL_LANG_COMMON_H

#include <stdint.h>

/* The text being compiled.  `text` need not be NUL-terminated and may contain NUL bytes. */
typedef struct lang_source {
  const char *name; /* for diagnostics: file name or "<input>" */
  const char *text;
  int32_t len;
} lang_source;

/* Limits.  Each one is reported as an error, never a crash or a hang. */
#define LANG_MAX_SOURCE    ((int32_t)1 << 28)   /* bytes of program text */
#define LANG_MAX_DEPTH     256                  /* nesting of ( [ calls, unary ops, ?:, for */
#define LANG_MAX_VECTOR    ((int64_t)1 << 24)   /* elements of one vector declaration */
#define LANG_MAX_NODES     ((int64_t)4000000)   /* builder value nodes (DUAL_ERR_LIMIT) */
#define LANG_MAX_WORK      ((int64_t)100000000) /* unrolling steps: iterations + visits */
/* Work is also bounded per byte of source, so that a short text cannot make the compiler run for
 * seconds (`for i in 0..1000000000 { ... }` is 40 bytes): a source of B bytes may unroll to at
 * most LANG_NODES_BASE + B * LANG_NODES_PER_BYTE nodes and take LANG_WORK_BASE +
 * B * LANG_WORK_PER_BYTE steps (each capped by the limit above). */
#define LANG_NODES_BASE     ((int64_t)65536)
#define LANG_NODES_PER_BYTE ((int64_t)4096)
#define LANG_WORK_BASE      ((int64_t)1048576)
#define LANG_WORK_PER_BYTE  ((int64_t)65536)
#define LANG_MAX_ERRORS    20                   /* diagnostics collected before stopping */
#define LANG_MAX_EXACT_INT 9007199254740992.0   /* 2^53: compile-time integers are exact */

/* Names quoted in messages are cut to LANG_NAME_SHOW bytes.  printf arguments for "%.*s%s". */
#define LANG_NAME_SHOW 48
#define LANG_SHOW(s, len)                                                                          \
  (int)((len) > LANG_NAME_SHOW ? LANG_NAME_SHOW : (len)), (s), ((len) > LANG_NAME_SHOW ? "..." : "")

#endif /* DUAL_LANG_COMMON_H */
