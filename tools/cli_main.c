/*
 * cli_main.c — entry point of the `dualbatch` command-line tool: argv parsing (options before or
 * after PROGRAM, "--opt VALUE" and "--opt=VALUE"), usage and per-verb help, "did you mean"
 * suggestions, and the small verbs (info, cache, disasm, compile).  The streaming verbs are in
 * cli_run.c; record I/O in cli_io.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The options, once: X(bit, long name, short name or NULL, value name or NULL, help). */
#define CLI_OPTION_LIST(X)                                                                         \
  X(CLI_OPT_IN, "--in", NULL, "FILE|-", "read points from FILE ('-' = stdin, the default)")        \
  X(CLI_OPT_OUT, "--out", "-o", "FILE|-", "write results to FILE ('-' = stdout, the default)")     \
  X(CLI_OPT_FORMAT, "--format", NULL, "csv|f64",                                                   \
    "record format of input and output (default csv)")                                             \
  X(CLI_OPT_DEVICE, "--device", NULL, "auto|cpu|gpu|gpu:N",                                        \
    "where to evaluate (default auto; gpu:N: CUDA device N; DUALBATCH_DEVICE overrides)")          \
  X(CLI_OPT_THREADS, "--threads", NULL, "T", "CPU threads (default 0 = all cores)")                \
  X(CLI_OPT_WIDTH, "--width", NULL, "N",                                                           \
    "tangent directions per pass: 1, 2, 4, 8, 16 or 32 (default 0 = automatic)")                   \
  X(CLI_OPT_MODE, "--mode", NULL, "auto|forward|reverse",                                          \
    "forward or reverse mode (hessian/hvp: forward-over-reverse); default auto: a cost model")           \
  X(CLI_OPT_SAMPLES, "--samples", NULL, "S", "sgrad: samples per point (>= 2)")                   \
  X(CLI_OPT_SEED, "--seed", NULL, "K", "sgrad: seed of the random draws (an integer >= 0)")        \
  X(CLI_OPT_ANTITHETIC, "--antithetic", NULL, NULL, "sgrad: antithetic pairs (S even, >= 4)")      \
  X(CLI_OPT_SCORE, "--score", NULL, NULL,                                                          \
    "sgrad: score-function estimator for normal(mu, sigma) draws")                                 \
  X(CLI_OPT_TIER, "--tier", NULL, "auto|interpret|compile",                                       \
    "interpreter or compiled code: GPU kernels; on the CPU, compile runs first-order products "      \
    "compiled (default auto; DUALBATCH_TIER, DUALBATCH_CPU_TIER set the default)")                  \
  X(CLI_OPT_VERBOSE, "--verbose", "-v", NULL, "report the device and GPU tier that ran, and why")   \
  X(CLI_OPT_HEADER, "--header", NULL, NULL,                                                        \
    "csv: the first line (after comments) is a header row (default: skipped when it has no number)") \
  X(CLI_OPT_HELP, "--help", "-h", NULL, "show help (for the verb, when one is given)")          \
  X(CLI_OPT_VERSION, "--version", NULL, NULL, "print the library's version and build, then exit")

static const struct cli_option_def {
  int bit;
  const char *name, *short_name, *value, *help;
} options[] = {
#define CLI_X_OPT(bit, name, sname, value, help) {bit, name, sname, value, help},
    CLI_OPTION_LIST(CLI_X_OPT)
#undef CLI_X_OPT
};
enum { CLI_NUM_OPTIONS = (int)(sizeof options / sizeof options[0]) };

static const struct cli_verb_def {
  const char *name;
  int opts, min_args, max_args;
  const char *synopsis, *help;
} verbs[] = {
#define CLI_X_VERB(id, name, opts, amin, amax, syn, help) {name, opts, amin, amax, syn, help},
    CLI_VERB_LIST(CLI_X_VERB)
#undef CLI_X_VERB
};

static const char *const format_names[] = {"csv", "f64"};
static const char *const device_names[] = {"auto", "cpu", "gpu"}; /* = dual_device values */
static const char *const mode_names[] = {"auto", "forward", "reverse"}; /* = dual_ad_mode values */
static const char *const tier_names[] = {"auto", "interpret", "compile"}; /* = dual_tier values */

/* ---------------------------------------------------------------------------------------------
 * Suggestions
 * ------------------------------------------------------------------------------------------- */

/* Optimal-string-alignment distance (edits and adjacent swaps), capped at 9. */
static int edit_distance(const char *a, const char *b) {
  enum { W = 40 };
  size_t la = strlen(a), lb = strlen(b);
  if (la >= W || lb >= W) return 9;
  int d[W][W];
  for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int cost = a[i - 1] != b[j - 1];
      int best = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      int swapped = i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1];
      if (swapped && d[i - 2][j - 2] + 1 < best) best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb] > 9 ? 9 : d[la][lb];
}

/* The closest of names[count] to word when close enough, else NULL. */
static const char *nearest(const char *word, const char *const *names, int count) {
  const char *best = NULL;
  int best_d = 1 + (int)strlen(word) / 3;
  if (best_d < 2) best_d = 2;
  for (int i = 0; i < count; i++) {
    int d = edit_distance(word, names[i]);
    if (d < best_d) {
      best_d = d;
      best = names[i];
    }
  }
  return best;
}

static const char *nearest_verb(const char *word) {
  const char *names[CLI_VERB_COUNT];
  for (int i = 0; i < CLI_VERB_COUNT; i++) names[i] = verbs[i].name;
  return nearest(word, names, CLI_VERB_COUNT);
}

static const char *nearest_option(const char *word) {
  const char *names[2 * CLI_NUM_OPTIONS];
  int k = 0;
  for (int i = 0; i < CLI_NUM_OPTIONS; i++) {
    names[k++] = options[i].name;
    if (options[i].short_name) names[k++] = options[i].short_name;
  }
  return nearest(word, names, k);
}

/* ---------------------------------------------------------------------------------------------
 * Usage and help
 * ------------------------------------------------------------------------------------------- */

static void print_option_help(FILE *f, int mask) {
  for (int i = 0; i < CLI_NUM_OPTIONS; i++) {
    if (!(options[i].bit & mask)) continue;
    char left[48];
    snprintf(left, sizeof left, "%s%s%s%s%s", options[i].short_name ? options[i].short_name : "",
             options[i].short_name ? ", " : "", options[i].name, options[i].value ? " " : "",
             options[i].value ? options[i].value : "");
    fprintf(f, "  %-24s %s\n", left, options[i].help);
  }
}

static void print_usage(FILE *f) {
  fputs("usage: dualbatch VERB PROGRAM [options]\n"
        "\n"
        "Evaluate a dualbatch program f: R^n x R^p -> R^m and its derivatives (first and second\n"
        "order, forward or reverse mode; Monte-Carlo gradients) over many points.  PROGRAM is\n"
        "program text or compiled bytecode (see `dualbatch compile`).  `dualbatch --version`\n"
        "prints the library's version and build.\n"
        "\nverbs:\n",
        f);
  for (int i = 0; i < CLI_VERB_COUNT; i++)
    fprintf(f, "  %-9s %-16s %s\n", verbs[i].name, verbs[i].synopsis, verbs[i].help);
  fputs("\noptions (eval, jacobian, gradient, jvp, vjp, hessian, hvp, sgrad, solve, lsq; before or after\nPROGRAM):\n", f);
  print_option_help(f, CLI_OPTS_STREAM);
  fputs("\nInput: one record per point: the n inputs, then the p params (jvp, hvp: then the n\n"
        "direction values).  csv: numbers separated by ',' (or ';', or spaces and tabs), one point\n"
        "per line; '#' comment lines and blank lines are skipped, and a first line with no number\n"
        "(a header row: --header forces it).  f64: raw little-endian doubles, records back to back.\n"
        "Output: one record per point, numbers printed with %.17g (f64: raw doubles).\n"
        "Points whose values are NaN/Inf or hit a domain error are still written, and listed on\n"
        "stderr.  Exit status: 0 success, 1 error, 2 usage error.\n"
        "`dualbatch help VERB` for more.\n",
        f);
}

static void print_verb_help(FILE *f, cli_verb v) {
  const struct cli_verb_def *d = &verbs[v];
  fprintf(f, "usage: dualbatch %s%s%s", d->name, *d->synopsis ? " " : "", d->synopsis);
  for (int i = 0; i < CLI_NUM_OPTIONS; i++)
    if ((options[i].bit & d->opts) && options[i].bit != CLI_OPT_HELP &&
        !(v == CLI_VERB_COMPILE && options[i].bit == CLI_OPT_OUT))
      fprintf(f, " [%s%s%s]", options[i].name, options[i].value ? " " : "",
              options[i].value ? options[i].value : "");
  fprintf(f, "\n\n%s: %s.\n", d->name, d->help);
  if ((d->opts & CLI_OPTS_STREAM) == CLI_OPTS_STREAM)
    fprintf(f, "Each input record holds the n inputs, then the p params%s.\n",
            v == CLI_VERB_JVP || v == CLI_VERB_HVP ? ", then the n direction values v"
            : v == CLI_VERB_VJP                    ? ", then the m cotangent values u"
                                                   : "");
  fputs("\noptions:\n", f);
  print_option_help(f, d->opts);
}

static int usage_error(void) {
  fputs("Run 'dualbatch --help' for usage.\n", stderr);
  return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------------------------------------
 * Parsing
 * ------------------------------------------------------------------------------------------- */

typedef struct cli_parse {
  cli_options o;
  const char *positional[3]; /* verb, then up to two arguments (more are only counted) */
  int npos;
  int seen; /* option bits given */
  const char *threads, *width, *format, *device, *mode, *samples, *seed, *tier;
} cli_parse;

static const struct cli_option_def *find_option(const char *name, size_t len) {
  for (int i = 0; i < CLI_NUM_OPTIONS; i++) {
    const char *s = options[i].short_name;
    if ((strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0) ||
        (s && strlen(s) == len && strncmp(s, name, len) == 0))
      return &options[i];
  }
  return NULL;
}

static void store_option(cli_parse *ps, int bit, const char *value) {
  ps->seen |= bit;
  switch (bit) {
  case CLI_OPT_IN: ps->o.in = value; break;
  case CLI_OPT_OUT: ps->o.out = value; break;
  case CLI_OPT_FORMAT: ps->format = value; break;
  case CLI_OPT_DEVICE: ps->device = value; break;
  case CLI_OPT_THREADS: ps->threads = value; break;
  case CLI_OPT_WIDTH: ps->width = value; break;
  case CLI_OPT_MODE: ps->mode = value; break;
  case CLI_OPT_TIER: ps->tier = value; break;
  case CLI_OPT_VERBOSE: ps->o.verbose = 1; break;
  case CLI_OPT_HEADER: ps->o.header = 1; break;
  case CLI_OPT_SAMPLES: ps->samples = value; break;
  case CLI_OPT_SEED: ps->seed = value; break;
  case CLI_OPT_ANTITHETIC: ps->o.sgrad_flags |= DUAL_SGRAD_ANTITHETIC; break;
  case CLI_OPT_SCORE: ps->o.sgrad_flags |= DUAL_SGRAD_SCORE; break;
  default: break;
  }
}

/* One "-x", "--opt", "--opt=value" or "--opt value" argument at argv[*i]. */
static int parse_option(cli_parse *ps, int argc, char **argv, int *i) {
  const char *arg = argv[*i];
  const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
  size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
  const struct cli_option_def *d = find_option(arg, len);
  if (!d) {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), arg);
    const char *near = nearest_option(name);
    if (near)
      cli_error("unknown option '%s'; did you mean '%s'?", name, near);
    else
      cli_error("unknown option '%s'", name);
    return usage_error();
  }
  const char *value = NULL;
  if (d->value) {
    if (eq) {
      value = eq + 1;
    } else if (*i + 1 < argc) {
      value = argv[++*i];
    } else {
      cli_error("option %s needs a value (%s)", d->name, d->value);
      return usage_error();
    }
  } else if (eq) {
    cli_error("option %s takes no value", d->name);
    return usage_error();
  }
  store_option(ps, d->bit, value);
  return 0;
}

static int parse_argv(cli_parse *ps, int argc, char **argv) {
  int only_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!only_positional && strcmp(a, "--") == 0) {
      only_positional = 1;
    } else if (!only_positional && a[0] == '-' && a[1] != '\0') {
      int rc = parse_option(ps, argc, argv, &i);
      if (rc != 0) return rc;
    } else {
      if (ps->npos < 3) ps->positional[ps->npos] = a;
      ps->npos++; /* extras are reported by check_verb */
    }
  }
  return 0;
}

/* A name from `names` (its index), or a usage error naming the option. */
static int parse_choice(const char *opt, const char *value, const char *const *names, int count,
                        int *out) {
  for (int i = 0; i < count; i++)
    if (strcmp(value, names[i]) == 0) {
      *out = i;
      return 0;
    }
  const char *near = nearest(value, names, count);
  char list[64] = "";
  for (int i = 0; i < count; i++) {
    const char *sep = i == 0 ? "" : i + 1 < count ? ", " : " or ";
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", sep, names[i]);
  }
  if (near)
    cli_error("%s: unknown value '%s'; did you mean '%s'? (expected %s)", opt, value, near, list);
  else
    cli_error("%s: unknown value '%s' (expected %s)", opt, value, list);
  return usage_error();
}

/* A whole decimal integer in [lo, hi]. */
static int parse_int(const char *s, long lo, long hi, int *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

/* sgrad's --samples and --seed: both required, whole numbers. */
static int parse_sgrad(cli_parse *ps) {
  if (ps->o.verb != CLI_VERB_SGRAD) return 0;
  if (!ps->samples || !ps->seed) {
    cli_error("sgrad needs --samples S and --seed K");
    return usage_error();
  }
  char *end = NULL;
  errno = 0;
  long long S = strtoll(ps->samples, &end, 10);
  if (errno != 0 || end == ps->samples || *end != '\0' || S < 2) {
    cli_error("--samples: '%s' is not a valid sample count (an integer >= 2)", ps->samples);
    return usage_error();
  }
  end = NULL;
  errno = 0;
  unsigned long long K = strtoull(ps->seed, &end, 10);
  if (errno != 0 || end == ps->seed || *end != '\0' || ps->seed[0] == '-') {
    cli_error("--seed: '%s' is not a valid seed (an integer from 0 to 2^64 - 1)", ps->seed);
    return usage_error();
  }
  ps->o.samples = (int64_t)S;
  ps->o.seed = (uint64_t)K;
  return 0;
}

static int parse_values(cli_parse *ps) {
  int fmt = 0;
  if (ps->format && parse_choice("--format", ps->format, format_names, 2, &fmt) != 0)
    return CLI_EXIT_USAGE;
  ps->o.format = (cli_format)fmt;
  ps->o.gpu = -1;
  if (ps->device && strncmp(ps->device, "gpu:", 4) == 0) { /* gpu:N: a GPU by its ordinal */
    ps->o.device = DUAL_DEVICE_GPU;
    if (parse_int(ps->device + 4, 0, 4095, &ps->o.gpu) != 0) {
      cli_error("--device: '%s' is not gpu:N with N a device number", ps->device);
      return CLI_EXIT_USAGE;
    }
  } else if (ps->device && parse_choice("--device", ps->device, device_names, 3, &ps->o.device) != 0)
    return CLI_EXIT_USAGE;
  if (ps->mode && parse_choice("--mode", ps->mode, mode_names, 3, &ps->o.ad_mode) != 0)
    return CLI_EXIT_USAGE;
  ps->o.tier = -1;
  if (ps->tier && parse_choice("--tier", ps->tier, tier_names, 3, &ps->o.tier) != 0)
    return CLI_EXIT_USAGE;
  if (ps->threads && parse_int(ps->threads, 0, 1 << 16, &ps->o.threads) != 0) {
    cli_error("--threads: '%s' is not a valid thread count (an integer >= 0; 0 = all cores)",
              ps->threads);
    return usage_error();
  }
  int w = 0;
  if (ps->width && (parse_int(ps->width, 0, 32, &w) != 0 || (w & (w - 1)) != 0)) {
    cli_error("--width: '%s' is not a valid width (1, 2, 4, 8, 16 or 32; 0 = automatic)",
              ps->width);
    return usage_error();
  }
  ps->o.width = w;
  return parse_sgrad(ps);
}

static int find_verb(const char *name, cli_verb *v) {
  for (int i = 0; i < CLI_VERB_COUNT; i++)
    if (strcmp(name, verbs[i].name) == 0) {
      *v = (cli_verb)i;
      return 0;
    }
  const char *near = nearest_verb(name);
  if (near)
    cli_error("unknown command '%s'; did you mean '%s'?", name, near);
  else
    cli_error("unknown command '%s'", name);
  return usage_error();
}

/* The verb accepts every option given and the right number of arguments. */
static int check_verb(const cli_parse *ps) {
  const struct cli_verb_def *d = &verbs[ps->o.verb];
  for (int i = 0; i < CLI_NUM_OPTIONS; i++)
    if ((ps->seen & options[i].bit) && !(d->opts & options[i].bit)) {
      cli_error("option %s does not apply to '%s'", options[i].name, d->name);
      return usage_error();
    }
  int nargs = ps->npos - 1;
  if (nargs < d->min_args || nargs > d->max_args) {
    if (nargs < d->min_args)
      cli_error("'%s' needs %s", d->name, d->synopsis);
    else
      cli_error("unexpected argument '%s'", ps->positional[1 + d->max_args]);
    fprintf(stderr, "usage: dualbatch %s%s%s\n", d->name, *d->synopsis ? " " : "", d->synopsis);
    return CLI_EXIT_USAGE;
  }
  if (ps->o.verb == CLI_VERB_COMPILE && !ps->o.out) {
    cli_error("'compile' needs an output file: dualbatch compile PROGRAM -o FILE");
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Small verbs
 * ------------------------------------------------------------------------------------------- */

static int verb_help(const cli_options *o) {
  if (!o->arg) {
    print_usage(stdout);
    return CLI_EXIT_OK;
  }
  cli_verb v;
  if (find_verb(o->arg, &v) != 0) return CLI_EXIT_USAGE;
  print_verb_help(stdout, v);
  return CLI_EXIT_OK;
}

/* The kernel cache line of `info` and `cache show`. */
static int print_cache(void) {
  dual_context *ctx = NULL;
  if (dual_context_create(&ctx, DUAL_DEVICE_CPU) != DUAL_SUCCESS) {
    cli_error("%s", ctx ? dual_context_last_error(ctx) : "cannot create a context");
    dual_context_destroy(&ctx);
    return CLI_EXIT_FAIL;
  }
  char dir[4096];
  int64_t entries = 0, bytes = 0;
  int rc = CLI_EXIT_OK;
  if (dual_context_cache_usage(ctx, dir, sizeof dir, &entries, &bytes) == DUAL_SUCCESS)
    printf("kernel cache: %s (%lld entr%s, %.1f MiB)\n", dir, (long long)entries,
           entries == 1 ? "y" : "ies", (double)bytes / (1 << 20));
  else
    printf("kernel cache: unusable (%s)\n", dual_context_last_error(ctx));
  dual_context_destroy(&ctx);
  return rc;
}

static int verb_cache(const cli_options *o) {
  if (strcmp(o->arg, "show") == 0) return print_cache() == 0 && fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  if (strcmp(o->arg, "clear") != 0) {
    cli_error("cache: '%s' is not one of show, clear", o->arg);
    return usage_error();
  }
  dual_context *ctx = NULL;
  int64_t removed = 0;
  int rc = CLI_EXIT_FAIL;
  if (dual_context_create(&ctx, DUAL_DEVICE_CPU) == DUAL_SUCCESS) {
    char dir[4096];
    dual_context_cache_usage(ctx, dir, sizeof dir, NULL, NULL);
    if (dual_context_cache_clear(ctx, &removed) == DUAL_SUCCESS) {
      printf("removed %lld entr%s from %s\n", (long long)removed, removed == 1 ? "y" : "ies", dir);
      rc = CLI_EXIT_OK;
    } else {
      cli_error("%s", dual_context_last_error(ctx));
    }
  } else {
    cli_error("%s", ctx ? dual_context_last_error(ctx) : "cannot create a context");
  }
  dual_context_destroy(&ctx);
  return rc;
}

static int verb_calibrate(const cli_options *o) {
  dual_context *ctx = NULL;
  int rc = CLI_EXIT_FAIL;
  char report[2048];
  if (dual_context_create(&ctx, o->device) != DUAL_SUCCESS)
    cli_error("%s", ctx ? dual_context_last_error(ctx) : "cannot create a context");
  else if (cli_gpu(o) >= 0 && dual_context_set_gpu(ctx, cli_gpu(o)) != DUAL_SUCCESS)
    cli_error("%s", dual_context_last_error(ctx));
  else if (o->threads > 0 && dual_context_set_threads(ctx, o->threads) != DUAL_SUCCESS)
    cli_error("%s", dual_context_last_error(ctx));
  else if (dual_context_calibrate(ctx, report, sizeof report) != DUAL_SUCCESS)
    cli_error("calibrate: %s", dual_context_last_error(ctx));
  else {
    printf("%s", report);
    rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  }
  dual_context_destroy(&ctx);
  return rc;
}

static int verb_info(void) {
  char probe[1];
  int64_t need = dual_build_info(probe, 1);
  char *text = need >= 0 ? malloc((size_t)need + 1) : NULL;
  if (!text) {
    cli_error("cannot get the build information");
    return CLI_EXIT_FAIL;
  }
  dual_build_info(text, need + 1);
  printf("%s%s", text, need > 0 && text[need - 1] == '\n' ? "" : "\n");
  free(text);
  if (print_cache() != CLI_EXIT_OK) return CLI_EXIT_FAIL;
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* Write bytes to o->out (or stdout), reporting errors. */
static int emit(const cli_options *o, const void *bytes, size_t size) {
  cli_writer *w = NULL;
  char err[512];
  if (cli_writer_open(&w, o->out ? o->out : "-", CLI_FORMAT_F64, err, sizeof err) != 0) {
    cli_error("%s", err);
    return CLI_EXIT_FAIL;
  }
  int rc = CLI_EXIT_OK;
  if (cli_writer_write_bytes(w, bytes, size) != 0) {
    cli_error("%s", cli_writer_error(w));
    rc = CLI_EXIT_FAIL;
  }
  if (cli_writer_close(&w, err, sizeof err) != 0) {
    if (rc == CLI_EXIT_OK) cli_error("%s", err);
    rc = CLI_EXIT_FAIL;
  }
  return rc;
}

static int verb_disasm(const cli_options *o) {
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  if (cli_load(o, 0, &ctx, &prog) != 0) return CLI_EXIT_FAIL;
  char probe[1];
  int64_t need = dual_program_disassemble(prog, probe, 1);
  char *text = need >= 0 ? malloc((size_t)need + 1) : NULL;
  int rc = CLI_EXIT_FAIL;
  if (!text) {
    cli_error("cannot disassemble '%s'", o->arg);
  } else {
    dual_program_disassemble(prog, text, need + 1);
    rc = emit(o, text, (size_t)need);
  }
  free(text);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return rc;
}

static int save_to_stdout(const cli_options *o, dual_context *ctx, const dual_program *prog) {
  int64_t size = 0;
  if (dual_program_save(ctx, prog, NULL, 0, &size) != DUAL_SUCCESS) {
    cli_error("cannot serialize '%s': %s", o->arg, dual_context_last_error(ctx));
    return CLI_EXIT_FAIL;
  }
  void *buf = malloc(size > 0 ? (size_t)size : 1);
  int rc = CLI_EXIT_FAIL;
  if (!buf)
    cli_error("out of memory");
  else if (dual_program_save(ctx, prog, buf, size, &size) != DUAL_SUCCESS)
    cli_error("cannot serialize '%s': %s", o->arg, dual_context_last_error(ctx));
  else
    rc = emit(o, buf, (size_t)size);
  free(buf);
  return rc;
}

static int verb_compile(const cli_options *o) {
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  if (cli_load(o, 0, &ctx, &prog) != 0) return CLI_EXIT_FAIL;
  int rc = CLI_EXIT_OK;
  if (strcmp(o->out, "-") == 0) {
    rc = save_to_stdout(o, ctx, prog);
  } else if (dual_program_save_file(ctx, prog, o->out) != DUAL_SUCCESS) {
    cli_error("cannot save '%s': %s", o->out, dual_context_last_error(ctx));
    rc = CLI_EXIT_FAIL;
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return rc;
}

/* ---------------------------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------------------------- */

static int dispatch(const cli_options *o) {
  switch (o->verb) {
  case CLI_VERB_HELP: return verb_help(o);
  case CLI_VERB_INFO: return verb_info();
  case CLI_VERB_CACHE: return verb_cache(o);
  case CLI_VERB_CALIBRATE: return verb_calibrate(o);
  case CLI_VERB_DISASM: return verb_disasm(o);
  case CLI_VERB_COMPILE: return verb_compile(o);
  default: return cli_run_stream(o);
  }
}

int main(int argc, char **argv) {
  cli_parse ps;
  memset(&ps, 0, sizeof ps);
  ps.o.in = "-";
  ps.o.device = DUAL_DEVICE_AUTO;
  ps.o.gpu = -1;
  int rc = parse_argv(&ps, argc, argv);
  if (rc != 0) return rc;
  if (ps.npos == 0) {
    if (ps.seen & CLI_OPT_VERSION) { /* the library's version, and the header's it was built with */
      char info[1024];
      dual_build_info(info, sizeof info);
      printf("dualbatch %s (header %d.%d.%d)\n%s", dual_version_string(), DUAL_VERSION_MAJOR,
             DUAL_VERSION_MINOR, DUAL_VERSION_PATCH, strchr(info, '\n') ? strchr(info, '\n') + 1 : "");
      return CLI_EXIT_OK;
    }
    if (ps.seen & CLI_OPT_HELP) {
      print_usage(stdout);
      return CLI_EXIT_OK;
    }
    cli_error("missing command");
    print_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  if (find_verb(ps.positional[0], &ps.o.verb) != 0) return CLI_EXIT_USAGE;
  if (ps.seen & CLI_OPT_HELP) {
    print_verb_help(stdout, ps.o.verb);
    return CLI_EXIT_OK;
  }
  if ((rc = check_verb(&ps)) != 0 || (rc = parse_values(&ps)) != 0) return rc;
  ps.o.arg = ps.npos > 1 ? ps.positional[1] : NULL;
  return dispatch(&ps.o);
}
