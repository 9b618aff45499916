/*
 * cli.h — shared declarations of the `dualbatch` command-line tool: the verb table, the parsed
 * options, exit codes and the message helpers.  cli_main.c parses argv and dispatches; cli_run.c
 * loads programs and streams records through the library.  Uses only the public dualbatch.h.
 */
#ifndef DUAL_CLI_H
#define DUAL_CLI_H

#include <stdint.h>
#include <stdlib.h>

#include "cli_io.h"
#include "dualbatch.h"

/* Exit codes: 0 success (flagged points are warnings, not errors), 1 failure, 2 usage error. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* Option bits, used to say which options a verb accepts. */
enum {
  CLI_OPT_IN = 1 << 0,
  CLI_OPT_OUT = 1 << 1,
  CLI_OPT_FORMAT = 1 << 2,
  CLI_OPT_DEVICE = 1 << 3,
  CLI_OPT_THREADS = 1 << 4,
  CLI_OPT_WIDTH = 1 << 5,
  CLI_OPT_HELP = 1 << 6,
  CLI_OPT_MODE = 1 << 7,
  CLI_OPT_SAMPLES = 1 << 8,
  CLI_OPT_SEED = 1 << 9,
  CLI_OPT_ANTITHETIC = 1 << 10,
  CLI_OPT_SCORE = 1 << 11,
  CLI_OPT_TIER = 1 << 12,
  CLI_OPT_VERBOSE = 1 << 13,
  CLI_OPT_VERSION = 1 << 14, /* alone, without a verb */
  CLI_OPT_HEADER = 1 << 15
};
#define CLI_OPTS_SGRAD (CLI_OPTS_STREAM | CLI_OPT_SAMPLES | CLI_OPT_SEED | CLI_OPT_ANTITHETIC | CLI_OPT_SCORE)
#define CLI_OPTS_STREAM                                                                            \
  (CLI_OPT_IN | CLI_OPT_OUT | CLI_OPT_FORMAT | CLI_OPT_DEVICE | CLI_OPT_THREADS | CLI_OPT_WIDTH |  \
   CLI_OPT_MODE | CLI_OPT_TIER | CLI_OPT_VERBOSE | CLI_OPT_HELP | CLI_OPT_HEADER)

/* The verbs, once: X(id, name, options accepted, positional args (min, max), synopsis, help). */
#define CLI_VERB_LIST(X)                                                                           \
  X(EVAL, "eval", CLI_OPTS_STREAM, 1, 1, "PROGRAM", "the m outputs per point")                     \
  X(JACOBIAN, "jacobian", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                        \
    "the m outputs, then J row-major (m x n, J[i][j] = df_i/dx_j)")                                \
  X(GRADIENT, "gradient", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                        \
    "f, then the n gradient entries (scalar programs, m = 1)")                                     \
  X(JVP, "jvp", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                                  \
    "the m outputs, then the m entries of J v (records end with n direction values)")              \
  X(VJP, "vjp", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                                  \
    "the m outputs, then the n entries of u^T J (records end with m cotangent values u)")        \
  X(HESSIAN, "hessian", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                          \
    "f, the n gradient entries, then H row-major (n x n; scalar programs, m = 1)")                 \
  X(HVP, "hvp", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                                  \
    "f, the n gradient entries, then the n entries of H v (records end with n direction values)") \
  X(SGRAD, "sgrad", CLI_OPTS_SGRAD, 1, 1, "PROGRAM --samples S --seed K",                          \
    "Monte-Carlo: E f, the n gradient estimates, then their n standard errors (m = 1)")             \
  X(SOLVE, "solve", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                              \
    "Newton per record (m = n; records: the n starting values, then the parameters): the n "      \
    "solution values, then the status (0 converged), the steps taken and ||F||")                   \
  X(LSQ, "lsq", CLI_OPTS_STREAM, 1, 1, "PROGRAM",                                                  \
    "least squares per record (m >= n; Levenberg-Marquardt): the n values, then the status, the " \
    "Jacobians taken and ||F||")                                                                  \
  X(COMPILE, "compile", CLI_OPT_OUT | CLI_OPT_HELP, 1, 1, "PROGRAM -o FILE",                       \
    "compile (or re-validate) PROGRAM and save its bytecode to FILE")                              \
  X(DISASM, "disasm", CLI_OPT_OUT | CLI_OPT_HELP, 1, 1, "PROGRAM", "print the program's bytecode") \
  X(INFO, "info", CLI_OPT_HELP, 0, 0, "",                                                          \
    "print the build (CUDA, devices, OpenMP threads) and the compiled tier's kernel cache")        \
  X(CACHE, "cache", CLI_OPT_HELP, 1, 1, "show|clear",                                              \
    "the compiled GPU tier's kernel cache: show its directory and size, or remove its entries")    \
  X(CALIBRATE, "calibrate", CLI_OPT_DEVICE | CLI_OPT_THREADS | CLI_OPT_HELP, 0, 0, "",               \
    "measure again the figures AUTO's dispatch model uses on this machine, store and print them")  \
  X(HELP, "help", CLI_OPT_HELP, 0, 1, "[VERB]", "print help, or a verb's help")

typedef enum cli_verb {
#define CLI_X_ENUM(id, name, opts, amin, amax, syn, help) CLI_VERB_##id,
  CLI_VERB_LIST(CLI_X_ENUM)
#undef CLI_X_ENUM
      CLI_VERB_COUNT
} cli_verb;

typedef struct cli_options {
  cli_verb verb;
  const char *arg;   /* PROGRAM (or VERB for help); NULL when absent */
  const char *in;    /* "-" = stdin */
  const char *out;   /* "-" = stdout; NULL when not given */
  cli_format format; /* csv (default) or f64 */
  int device;        /* dual_device */
  int gpu;           /* --device gpu:N: the CUDA device N (-1: the context's default) */
  int threads;       /* 0 = all cores */
  int width;         /* 0 = automatic */
  int ad_mode;       /* dual_ad_mode (--mode) */
  int tier;          /* dual_tier (--tier; -1 = the context's default) */
  int verbose;       /* --verbose: report where each run went (device, tier) and every note */
  int header;        /* --header: the CSV input's first data line is a header row */
  int64_t samples;   /* sgrad: --samples (required) */
  uint64_t seed;     /* sgrad: --seed (required) */
  int sgrad_flags;   /* sgrad: DUAL_SGRAD_ANTITHETIC (--antithetic), DUAL_SGRAD_SCORE (--score) */
} cli_options;

/* The GPU --device gpu:N names, or -1: none named, or DUALBATCH_DEVICE set (it overrides
 * --device, its own gpu:N included). */
static inline int cli_gpu(const cli_options *o) {
  const char *env = getenv("DUALBATCH_DEVICE");
  return env != NULL && env[0] != '\0' ? -1 : o->gpu;
}

#if defined(__GNUC__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

/* "dualbatch: <message>\n" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
/* "dualbatch: warning: <message>\n" on stderr. */
void cli_warning(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Create the context for o->device (with threads and width) and load o->arg.  For verbs that do
 * not evaluate (`strict_device` = 0) a failed device request still yields the CPU context.
 * Returns 0, or CLI_EXIT_FAIL after printing the error (both outputs NULL then). */
int cli_load(const cli_options *o, int strict_device, dual_context **ctx, dual_program **prog);

/* eval, jacobian, gradient, jvp, vjp, hessian, hvp, sgrad, solve, lsq: stream o->in through the program into o->out. */
int cli_run_stream(const cli_options *o);

#endif /* DUAL_CLI_H */
