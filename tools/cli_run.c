/*
 * cli_run.c — the streaming verbs of the `dualbatch` tool (eval, jacobian, gradient, jvp, vjp,
 * hessian, hvp, sgrad, solve, lsq): read a chunk of records, evaluate it with one library call, write it, report flagged points,
 * repeat.  Memory is bounded by the chunk size whatever the input size.  Also loads programs
 * (text or bytecode) for every verb.  Uses only the public API of dualbatch.h.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_progress.h"

#define CLI_CHUNK_POINTS 65536              /* points per chunk at most */
#define CLI_CHUNK_BYTES ((int64_t)64 << 20) /* ...and about this much buffer memory */
#define CLI_MAX_WARNINGS 10                 /* flagged points listed one by one */
#define CLI_ERR_CAP 1024

/* The per-point flag table of the header, with the short name ("nan") derived from DUAL_PT_NAN. */
static const struct {
  int32_t bit;
  const char *name;
  const char *message;
} flag_table[] = {
#define CLI_X_FLAG(name, value, msg) {value, #name, msg},
    DUAL_POINT_FLAG_LIST(CLI_X_FLAG)
#undef CLI_X_FLAG
};
enum { CLI_NUM_FLAGS = (int)(sizeof flag_table / sizeof flag_table[0]) };

typedef struct cli_flag_report {
  int64_t flagged;              /* points with a nonzero flag word */
  int64_t count[CLI_NUM_FLAGS]; /* points with each flag */
  int64_t unknown;              /* points with bits outside the table */
} cli_flag_report;

/* Everything one streaming run owns; released by stream_free. */
typedef struct cli_stream {
  dual_context *ctx;
  dual_program *prog;
  cli_reader *reader;
  cli_writer *writer;
  cli_layout lay;
  int32_t m;
  int64_t in_fields, out_fields, chunk;
  double *in, *out, *f;
  int32_t *status;
  int64_t *lines;
  int64_t written; /* records completed and written */
  cli_progress progress;
  cli_flag_report flags;
  int noted_fallback; /* the AUTO device's CPU fallback was reported */
  char last_where[64], last_note[512]; /* --verbose: what was reported last */
  int32_t *iters;     /* solve, lsq */
  int64_t solved[8];  /* solve, lsq: points per dual_solve_status (the last: any other) */
  int64_t samples;    /* sgrad */
  uint64_t seed;
  int sgrad_flags;
} cli_stream;

static void vmessage(const char *prefix, const char *fmt, va_list ap) {
  fputs(prefix, stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmessage("dualbatch: ", fmt, ap);
  va_end(ap);
}

void cli_warning(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmessage("dualbatch: warning: ", fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------------------------------------
 * Context and program
 * ------------------------------------------------------------------------------------------- */

static int make_context(const cli_options *o, int strict_device, dual_context **ctx) {
  int st = dual_context_create(ctx, o->device);
  if (st == DUAL_ERR_NO_DEVICE && *ctx && !strict_device) return 0;
  if (st != DUAL_SUCCESS) {
    cli_error("%s", *ctx ? dual_context_last_error(*ctx) : dual_status_string(st));
    dual_context_destroy(ctx);
    return CLI_EXIT_FAIL;
  }
  if ((cli_gpu(o) >= 0 && (st = dual_context_set_gpu(*ctx, cli_gpu(o))) != DUAL_SUCCESS) ||
      (st = dual_context_set_threads(*ctx, o->threads)) != DUAL_SUCCESS ||
      (st = dual_context_set_width(*ctx, o->width)) != DUAL_SUCCESS ||
      (st = dual_context_set_ad_mode(*ctx, o->ad_mode)) != DUAL_SUCCESS ||
      (o->tier >= 0 && (st = dual_context_set_tier(*ctx, o->tier)) != DUAL_SUCCESS)) {
    cli_error("%s", dual_context_last_error(*ctx));
    dual_context_destroy(ctx);
    return CLI_EXIT_FAIL;
  }
  return 0;
}

/* Print a load failure: compile diagnostics as they are (file:line:col and caret). */
static void report_load_error(const char *path, int st, const char *msg) {
  if (st == DUAL_ERR_SYNTAX) {
    size_t len = strlen(msg);
    fprintf(stderr, "dualbatch: %s has errors:\n%s%s", path, msg,
            len > 0 && msg[len - 1] == '\n' ? "" : "\n");
  } else {
    cli_error("cannot load program '%s': %s", path, msg);
  }
}

int cli_load(const cli_options *o, int strict_device, dual_context **ctx, dual_program **prog) {
  *ctx = NULL;
  *prog = NULL;
  FILE *probe = fopen(o->arg, "rb");
  if (!probe) {
    cli_error("cannot open program '%s': %s", o->arg, strerror(errno));
    return CLI_EXIT_FAIL;
  }
  fclose(probe);
  if (make_context(o, strict_device, ctx) != 0) return CLI_EXIT_FAIL;
  int st = dual_program_load_file(*ctx, o->arg, prog);
  if (st != DUAL_SUCCESS) {
    report_load_error(o->arg, st, dual_context_last_error(*ctx));
    dual_program_destroy(prog);
    dual_context_destroy(ctx);
    return CLI_EXIT_FAIL;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Flagged points
 * ------------------------------------------------------------------------------------------- */

/* "an output value or derivative is NaN; ..." for one flag word. */
static void describe_flags(int32_t word, char *dst, size_t cap) {
  size_t k = 0;
  dst[0] = '\0';
  for (int i = 0; i < CLI_NUM_FLAGS && k < cap; i++)
    if (word & flag_table[i].bit) {
      int w = snprintf(dst + k, cap - k, "%s%s", k ? "; " : "", flag_table[i].message);
      k += w > 0 ? (size_t)w : 0;
      word &= ~flag_table[i].bit;
    }
  if (word != 0 && k < cap)
    snprintf(dst + k, cap - k, "%sunknown flags 0x%x", k ? "; " : "", (unsigned)word);
}

static void note_flags(cli_stream *s, int64_t count) {
  for (int64_t b = 0; b < count; b++) {
    int32_t word = s->status[b];
    if (word == 0) continue;
    int32_t rest = word;
    for (int i = 0; i < CLI_NUM_FLAGS; i++) {
      s->flags.count[i] += (word & flag_table[i].bit) != 0;
      rest &= ~flag_table[i].bit;
    }
    s->flags.unknown += rest != 0;
    if (++s->flags.flagged > CLI_MAX_WARNINGS) continue;
    char what[512];
    describe_flags(word, what, sizeof what);
    cli_progress_end(&s->progress);
    if (s->lines[b] > 0)
      cli_warning("record %lld (line %lld): %s", (long long)(s->written + b + 1),
                  (long long)s->lines[b], what);
    else
      cli_warning("record %lld: %s", (long long)(s->written + b + 1), what);
  }
}

/* "12 of 1000 records flagged (nan 12, domain 3)". */
static void summarize_flags(const cli_stream *s) {
  if (s->flags.flagged == 0) return;
  char list[256];
  size_t k = 0;
  list[0] = '\0';
  for (int i = 0; i < CLI_NUM_FLAGS; i++) {
    if (s->flags.count[i] == 0) continue;
    char name[32];
    const char *src = flag_table[i].name + strlen("DUAL_PT_");
    size_t j = 0;
    for (; src[j] && j + 1 < sizeof name; j++)
      name[j] = (char)(src[j] >= 'A' && src[j] <= 'Z' ? src[j] - 'A' + 'a' : src[j]);
    name[j] = '\0';
    int w = snprintf(list + k, sizeof list - k, "%s%s %lld", k ? ", " : "", name,
                     (long long)s->flags.count[i]);
    k += w > 0 && (size_t)w < sizeof list - k ? (size_t)w : 0;
  }
  if (s->flags.unknown > 0)
    snprintf(list + k, sizeof list - k, "%sunknown %lld", k ? ", " : "",
             (long long)s->flags.unknown);
  cli_warning("%lld of %lld records flagged (%s)%s", (long long)s->flags.flagged,
              (long long)s->written, list,
              s->flags.flagged > CLI_MAX_WARNINGS ? "; the first 10 are listed above" : "");
}

/* ---------------------------------------------------------------------------------------------
 * Streaming
 * ------------------------------------------------------------------------------------------- */

static int64_t output_fields(cli_verb verb, int64_t n, int64_t m) {
  switch (verb) {
  case CLI_VERB_JACOBIAN: return m + m * n;
  case CLI_VERB_GRADIENT: return 1 + n;
  case CLI_VERB_JVP: return 2 * m;
  case CLI_VERB_VJP: return m + n;
  case CLI_VERB_HESSIAN: return 1 + n + n * n;
  case CLI_VERB_HVP: return 1 + 2 * n;
  case CLI_VERB_SGRAD: return 1 + 2 * n;
  case CLI_VERB_SOLVE: case CLI_VERB_LSQ: return n + 3;
  default: return m;
  }
}

static int64_t chunk_points(int64_t in_fields, int64_t out_fields, cli_format fmt) {
  int64_t text = fmt == CLI_FORMAT_CSV ? 26 : 8; /* formatted bytes per output number */
  int64_t per = 8 * (2 * in_fields + out_fields) + text * out_fields + 4 + 8 + 8;
  int64_t c = CLI_CHUNK_BYTES / per;
  return c < 1 ? 1 : c > CLI_CHUNK_POINTS ? CLI_CHUNK_POINTS : c;
}

/* Checks of the program's shape against the verb; prints the error. */
static int check_shape(const cli_options *o, const dual_program *prog, const cli_layout *lay) {
  int32_t m = dual_program_num_outputs(prog);
  const int scalar = o->verb == CLI_VERB_GRADIENT || o->verb == CLI_VERB_HESSIAN ||
                     o->verb == CLI_VERB_HVP || o->verb == CLI_VERB_SGRAD;
  if (scalar && m != 1) {
    cli_error("%s needs a scalar program (m = 1), but '%s' has %d outputs%s",
              o->verb == CLI_VERB_GRADIENT ? "gradient"
              : o->verb == CLI_VERB_HESSIAN ? "hessian"
              : o->verb == CLI_VERB_HVP     ? "hvp"
                                            : "sgrad",
              o->arg, (int)m,
              o->verb == CLI_VERB_GRADIENT  ? "; use jacobian"
              : o->verb == CLI_VERB_SGRAD   ? ""
                                            : " (the C API serves m > 1)");
    return CLI_EXIT_FAIL;
  }
  const int32_t n = dual_program_num_inputs(prog);
  if (o->verb == CLI_VERB_SOLVE && m != n) {
    cli_error("solve needs a square system (m = n), but '%s' has %d outputs and %d inputs; use lsq",
              o->arg, (int)m, (int)n);
    return CLI_EXIT_FAIL;
  }
  if (o->verb == CLI_VERB_LSQ && (m < n || n < 1)) {
    cli_error("lsq needs at least as many outputs as inputs (m >= n >= 1), but '%s' has %d and %d",
              o->arg, (int)m, (int)n);
    return CLI_EXIT_FAIL;
  }
  if (cli_layout_fields(lay) == 0) {
    cli_error("'%s' has no inputs or parameters: there is nothing to read per point", o->arg);
    return CLI_EXIT_FAIL;
  }
  return 0;
}

static int alloc_buffers(cli_stream *s) {
  size_t c = (size_t)s->chunk;
  s->in = malloc(c * (size_t)s->in_fields * sizeof(double));
  s->out = malloc(c * (size_t)(s->out_fields > 0 ? s->out_fields : 1) * sizeof(double));
  s->f = malloc(c * sizeof(double));
  s->status = malloc(c * sizeof(int32_t));
  s->iters = malloc(c * sizeof(int32_t));
  s->lines = malloc(c * sizeof(int64_t));
  if (!s->in || !s->out || !s->f || !s->status || !s->iters || !s->lines) {
    cli_error("out of memory allocating %lld-point buffers", (long long)s->chunk);
    return CLI_EXIT_FAIL;
  }
  return 0;
}

static int open_streams(cli_stream *s, const cli_options *o) {
  char err[CLI_ERR_CAP];
  if (cli_reader_open(&s->reader, o->in, o->format, &s->lay, err, sizeof err) != 0) {
    cli_error("%s", err);
    return CLI_EXIT_FAIL;
  }
  if (strcmp(o->in, "-") == 0 && isatty(STDIN_FILENO))
    fputs("dualbatch: reading points from the terminal (end with Ctrl-D)\n", stderr);
  const char *out = o->out ? o->out : "-";
  if (cli_reader_same_file(s->reader, out)) {
    cli_error("--out '%s' is the input file: it would be overwritten", out);
    return CLI_EXIT_FAIL;
  }
  if (cli_writer_open(&s->writer, out, o->format, err, sizeof err) != 0) {
    cli_error("%s", err);
    return CLI_EXIT_FAIL;
  }
  return 0;
}

static int stream_setup(cli_stream *s, const cli_options *o) {
  if (cli_load(o, 1, &s->ctx, &s->prog) != 0) return CLI_EXIT_FAIL;
  int32_t n = dual_program_num_inputs(s->prog);
  s->lay.inputs = n;
  s->lay.params = dual_program_num_params(s->prog);
  s->lay.header = o->header;
  s->m = dual_program_num_outputs(s->prog);
  s->lay.directions = o->verb == CLI_VERB_JVP || o->verb == CLI_VERB_HVP ? n
                      : o->verb == CLI_VERB_VJP                    ? s->m
                                                                   : 0;
  if (check_shape(o, s->prog, &s->lay) != 0) return CLI_EXIT_FAIL;
  s->samples = o->samples, s->seed = o->seed, s->sgrad_flags = o->sgrad_flags;
  s->in_fields = cli_layout_fields(&s->lay);
  s->out_fields = output_fields(o->verb, n, s->m);
  s->chunk = chunk_points(s->in_fields, s->out_fields, o->format);
  if (alloc_buffers(s) != 0) return CLI_EXIT_FAIL;
  return open_streams(s, o);
}

/* One library call for the chunk; results point-major in s->out[count][out_fields]. */
static int eval_chunk(cli_stream *s, cli_verb verb, int64_t count) {
  const int64_t ld = s->in_fields, lo = s->out_fields, n = s->lay.inputs;
  const double *x = s->in;
  const double *p = s->lay.params > 0 ? s->in + n : NULL;
  switch (verb) {
  case CLI_VERB_JACOBIAN:
    return dual_jacobian(s->ctx, s->prog, count, x, ld, p, ld, s->out, lo, s->out + s->m, lo,
                         s->status);
  case CLI_VERB_GRADIENT: {
    int st = dual_gradient(s->ctx, s->prog, count, x, ld, p, ld, s->f, s->out + 1, lo, s->status);
    for (int64_t b = 0; st == DUAL_SUCCESS && b < count; b++) s->out[b * lo] = s->f[b];
    return st;
  }
  case CLI_VERB_JVP:
    return dual_jvp(s->ctx, s->prog, count, x, ld, p, ld, s->in + n + s->lay.params, ld, s->out, lo,
                    s->out + s->m, lo, s->status);
  case CLI_VERB_VJP:
    return dual_vjp(s->ctx, s->prog, count, x, ld, p, ld, s->in + n + s->lay.params, ld, s->out, lo,
                    s->out + s->m, lo, s->status);
  case CLI_VERB_HESSIAN:
    return dual_hessian(s->ctx, s->prog, count, x, ld, p, ld, s->out, lo, s->out + 1, lo,
                        s->out + 1 + n, lo, DUAL_HESSIAN_FULL, s->status);
  case CLI_VERB_HVP:
    return dual_hvp(s->ctx, s->prog, count, x, ld, p, ld, s->in + n + s->lay.params, ld, s->out, lo,
                    s->out + 1, lo, s->out + 1 + n, lo, s->status);
  case CLI_VERB_SGRAD: { /* draws keyed by the record number, so chunking changes nothing */
    dual_batch b;
    dual_batch_init(&b);
    b.count = count;
    b.x = x, b.x_ps = ld, b.x_es = 1;
    b.p = p, b.p_ps = ld, b.p_es = 1;
    b.y = s->out, b.y_ps = lo, b.y_es = 1;
    b.d = s->out + 1, b.d_ps = lo, b.d_cs = 1;
    b.h = s->out + 1 + n, b.h_ps = lo, b.h_es = 1;
    b.status = s->status;
    b.samples = s->samples, b.seed = (int64_t)s->seed, b.sgrad_flags = s->sgrad_flags;
    b.point0 = s->written;
    return dual_run(s->ctx, s->prog, DUAL_MODE_SGRAD, &b);
  }
  case CLI_VERB_SOLVE:
  case CLI_VERB_LSQ: { /* solved in place in the output records: x, then status, steps, ||F|| */
    for (int64_t b = 0; b < count; b++) memcpy(s->out + b * lo, x + b * ld, sizeof(double) * (size_t)n);
    int st = verb == CLI_VERB_SOLVE
                 ? dual_newton(s->ctx, s->prog, NULL, count, s->out, lo, p, ld, s->status, s->iters, s->f)
                 : dual_lsq(s->ctx, s->prog, NULL, count, s->out, lo, p, ld, s->status, s->iters, s->f);
    for (int64_t b = 0; st == DUAL_SUCCESS && b < count; b++) {
      const int32_t info = s->status[b];
      s->out[b * lo + n] = info, s->out[b * lo + n + 1] = s->iters[b], s->out[b * lo + n + 2] = s->f[b];
      s->solved[info >= 0 && info < 7 ? info : 7]++;
      s->status[b] = 0; /* the point flags' table does not apply */
    }
    return st;
  }
  default: return dual_eval(s->ctx, s->prog, count, x, ld, p, ld, s->out, lo, s->status);
  }
}

/* solve, lsq: "998 of 1000 records converged (singular Jacobian 2)" when some did not. */
static void summarize_solves(const cli_stream *s) {
  const int64_t done = s->solved[DUAL_SOLVE_CONVERGED];
  if (done == s->written) return;
  char list[256];
  size_t k = 0;
  list[0] = '\0';
  for (int i = 1; i < 8; i++) {
    if (s->solved[i] == 0) continue;
    int w = snprintf(list + k, sizeof list - k, "%s%s %lld", k ? ", " : "",
                     i < 7 ? dual_solve_status_string(i) : "other", (long long)s->solved[i]);
    k += w > 0 && (size_t)w < sizeof list - k ? (size_t)w : 0;
  }
  cli_warning("%lld of %lld records converged (%s)", (long long)done, (long long)s->written, list);
}

/* After a failure mid-stream: say how much of the output exists. */
static void report_written(const cli_stream *s) {
  if (!s->writer) return;
  cli_error("output is incomplete: %lld record%s written to %s before the error",
            (long long)s->written, s->written == 1 ? " was" : "s were", cli_writer_name(s->writer));
}

/* After a chunk: a note (a fallback to the CPU, checkpointed segments) once per run; with
 * --verbose also where each chunk ran and the compiled tier's notes, when they change. */
static void report_run(cli_stream *s, int st, int verbose) {
  if (st != DUAL_SUCCESS) return;
  const char *note = dual_context_last_note(s->ctx);
  const int tier_note = strncmp(note, "interpreted:", 12) == 0;
  if (note[0] != '\0' && !tier_note && !s->noted_fallback) {
    cli_warning("%s", note);
    s->noted_fallback = 1; /* once per run */
  }
  if (!verbose) return;
  char where[64], split[48] = "";
  const int dev = dual_context_last_device(s->ctx), gpu = dev == DUAL_DEVICE_GPU || dev == DUAL_DEVICE_HYBRID;
  if (dev == DUAL_DEVICE_HYBRID) { /* AUTO split the chunk */
    int64_t g = 0, c = 0;
    dual_context_last_split(s->ctx, &g, &c);
    snprintf(split, sizeof split, " (%lld on the gpu, %lld on the cpu)", (long long)g, (long long)c);
  }
  snprintf(where, sizeof where, "%s%s", dev == DUAL_DEVICE_HYBRID ? "gpu and cpu" : gpu ? "gpu" : "cpu",
           !gpu ? "" : dual_context_last_tier(s->ctx) == DUAL_TIER_COMPILE ? ", compiled tier"
                                                                             : ", interpreter");
  if (strcmp(where, s->last_where) != 0 || (tier_note && strcmp(note, s->last_note) != 0)) {
    const size_t len = strlen(note);
    fprintf(stderr, "dualbatch: records %lld..: ran on %s%s%s%.*s\n", (long long)s->written + 1,
            where, split, tier_note ? ": " : "", tier_note ? (int)(len > 0 && note[len - 1] == '\n' ? len - 1 : len) : 0,
            note);
    snprintf(s->last_where, sizeof s->last_where, "%s", where);
    snprintf(s->last_note, sizeof s->last_note, "%s", note);
  }
}

static int stream_loop(cli_stream *s, cli_verb verb, int verbose) {
  for (;;) {
    int64_t count = 0;
    if (cli_reader_read(s->reader, s->in, s->chunk, &count, s->lines) != 0) {
      cli_progress_end(&s->progress);
      cli_error("%s", cli_reader_error(s->reader));
      return CLI_EXIT_FAIL;
    }
    if (count == 0) return 0;
    int st = eval_chunk(s, verb, count);
    report_run(s, st, verbose);
    if (st != DUAL_SUCCESS) {
      cli_progress_end(&s->progress);
      cli_error("evaluation of records %lld..%lld failed: %s", (long long)s->written + 1,
                (long long)(s->written + count), dual_context_last_error(s->ctx));
      return CLI_EXIT_FAIL;
    }
    if (cli_writer_write(s->writer, s->out, count, s->out_fields) != 0) {
      cli_progress_end(&s->progress);
      cli_error("%s", cli_writer_error(s->writer));
      return CLI_EXIT_FAIL;
    }
    note_flags(s, count);
    s->written += count;
    cli_progress_update(&s->progress, s->written);
  }
}

static void stream_free(cli_stream *s) {
  char err[CLI_ERR_CAP];
  cli_reader_close(&s->reader);
  if (cli_writer_close(&s->writer, err, sizeof err) != 0) cli_error("%s", err);
  free(s->in);
  free(s->out);
  free(s->f);
  free(s->status);
  free(s->iters);
  free(s->lines);
  dual_program_destroy(&s->prog);
  dual_context_destroy(&s->ctx);
}

int cli_run_stream(const cli_options *o) {
  cli_stream s;
  memset(&s, 0, sizeof s);
  cli_progress_start(&s.progress);
  int rc = stream_setup(&s, o);
  if (rc == 0) rc = stream_loop(&s, o->verb, o->verbose);
  if (rc != 0) {
    report_written(&s);
  } else {
    char err[CLI_ERR_CAP];
    cli_progress_done(&s.progress, s.written);
    if (cli_writer_close(&s.writer, err, sizeof err) != 0) {
      cli_error("%s", err);
      rc = CLI_EXIT_FAIL;
    }
    summarize_flags(&s);
    if (o->verb == CLI_VERB_SOLVE || o->verb == CLI_VERB_LSQ) summarize_solves(&s);
  }
  stream_free(&s);
  return rc;
}
