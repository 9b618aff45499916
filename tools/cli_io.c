/*
 * cli_io.c — CSV and f64 record readers and writers for the `dualbatch` tool (see cli_io.h).
 * CSV numbers are parsed with strtod and printed with %.17g (round-trip exact); f64 records are
 * little-endian on every host.  Errors carry the record, line and field they concern.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli_io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define CLI_ERR_CAP 512
#define CLI_NUM_CHARS 26 /* "%.17g" of a double needs at most 24 characters, plus a separator */

struct cli_reader {
  FILE *f;
  int owned; /* 1 when we opened f (and must close it) */
  char *name;
  cli_format fmt;
  cli_layout lay;
  int64_t fields;  /* numbers per record */
  int64_t line;    /* CSV: lines consumed so far */
  int64_t seen_data; /* CSV: lines that were neither blank nor comments */
  int64_t records; /* records consumed so far */
  int64_t bytes;   /* f64: bytes consumed so far */
  char *linebuf;   /* CSV: getline buffer */
  size_t linecap;
  unsigned char *raw; /* f64: staging bytes */
  size_t rawcap;
  char error[CLI_ERR_CAP];
};

struct cli_writer {
  FILE *f;
  int owned;
  char *name;
  cli_format fmt;
  char *text; /* formatted chunk */
  size_t cap;
  char error[CLI_ERR_CAP];
};

int64_t cli_layout_fields(const cli_layout *lay) {
  return (int64_t)lay->inputs + lay->params + lay->directions;
}

static void set_error(char *dst, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, cap, fmt, ap);
  va_end(ap);
}

static char *copy_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *r = malloc(n);
  if (r) memcpy(r, s, n);
  return r;
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

static uint64_t swap64(uint64_t u) {
  uint64_t r = 0;
  for (int i = 0; i < 8; i++) r = (r << 8) | ((u >> (8 * i)) & 0xffu);
  return r;
}

/* "15 inputs, 2 params" (plus ", 15 directions" for jvp). */
static void describe_layout(const cli_layout *lay, char *dst, size_t cap) {
  int k = snprintf(dst, cap, "%d input%s, %d param%s", (int)lay->inputs,
                   lay->inputs == 1 ? "" : "s", (int)lay->params, lay->params == 1 ? "" : "s");
  if (lay->directions > 0 && k > 0 && (size_t)k < cap)
    snprintf(dst + k, cap - (size_t)k, ", %d direction%s", (int)lay->directions,
             lay->directions == 1 ? "" : "s");
}

/* ---------------------------------------------------------------------------------------------
 * Readers
 * ------------------------------------------------------------------------------------------- */

/* f64 from a regular file: reject a size that is not a whole number of records up front. */
static int check_f64_size(cli_reader *r, char *err, size_t errcap) {
  struct stat st;
  if (fstat(fileno(r->f), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  int64_t rec = r->fields * 8;
  if (rec > 0 && (int64_t)st.st_size % rec != 0) {
    char what[128];
    describe_layout(&r->lay, what, sizeof what);
    set_error(err, errcap,
              "%s: f64 input of %lld bytes is not a multiple of the record size, %lld bytes "
              "(%lld doubles: %s)",
              r->name, (long long)st.st_size, (long long)rec, (long long)r->fields, what);
    return -1;
  }
  return 0;
}

int cli_reader_open(cli_reader **out, const char *path, cli_format fmt, const cli_layout *lay,
                    char *err, size_t errcap) {
  *out = NULL;
  cli_reader *r = calloc(1, sizeof *r);
  int is_std = strcmp(path, "-") == 0;
  if (!r || !(r->name = copy_string(is_std ? "<stdin>" : path))) {
    set_error(err, errcap, "out of memory");
    cli_reader_close(&r);
    return -1;
  }
  r->fmt = fmt;
  r->lay = *lay;
  r->fields = cli_layout_fields(lay);
  r->f = is_std ? stdin : fopen(path, fmt == CLI_FORMAT_F64 ? "rb" : "r");
  r->owned = !is_std;
  if (!r->f) {
    set_error(err, errcap, "cannot open input '%s': %s", path, strerror(errno));
    cli_reader_close(&r);
    return -1;
  }
  if (fmt == CLI_FORMAT_F64 && check_f64_size(r, err, errcap) != 0) {
    cli_reader_close(&r);
    return -1;
  }
  *out = r;
  return 0;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

/* Parse one trimmed field [s, e) as a double; field is 1-based for messages. */
static int parse_field(cli_reader *r, char *s, char *e, int64_t field, double *value) {
  while (s < e && is_space(*s)) s++;
  while (e > s && is_space(e[-1])) e--;
  char saved = *e;
  *e = '\0';
  char *end = NULL;
  double v = s < e ? strtod(s, &end) : 0.0;
  int ok = s < e && end == e;
  if (!ok) {
    if (s == e)
      set_error(r->error, sizeof r->error, "%s: line %lld, field %lld: empty, expected a number",
                r->name, (long long)r->line, (long long)field);
    else
      set_error(r->error, sizeof r->error, "%s: line %lld, field %lld: '%.40s%s' is not a number",
                r->name, (long long)r->line, (long long)field, s, e - s > 40 ? "..." : "");
  }
  *e = saved;
  *value = v;
  return ok ? 0 : -1;
}

/* A line's separator: ',' when it has one, else ';' when it has one, else runs of spaces and
 * tabs (' '). */
static char line_separator(const char *s) { return strchr(s, ',') ? ',' : strchr(s, ';') ? ';' : ' '; }

/* The next field of a line from *s: [*fs, *fe); advances *s past its separator.  Returns 0 at the
 * end of the line. */
static int next_field(char **s, char sep, char **fs, char **fe) {
  char *p = *s;
  if (p == NULL) return 0;
  if (sep == ' ') {
    while (is_space(*p)) p++;
    if (*p == '\0') return 0;
    *fs = p;
    while (*p != '\0' && !is_space(*p)) p++;
    *fe = p;
    *s = p;
    return 1;
  }
  *fs = p;
  char *e = strchr(p, sep);
  *fe = e ? e : p + strlen(p);
  *s = e ? e + 1 : NULL;
  return 1;
}

static int64_t count_fields(char *s, char sep) {
  int64_t k = 0;
  char *fs, *fe;
  while (next_field(&s, sep, &fs, &fe)) k++;
  return k;
}

/* A header line: no field of it reads as a number. */
static int is_header(char *s) {
  const char sep = line_separator(s);
  char *fs, *fe;
  while (next_field(&s, sep, &fs, &fe)) {
    while (fs < fe && is_space(*fs)) fs++;
    char *end = NULL;
    if (fs < fe) strtod(fs, &end);
    if (fs < fe && end != fs) return 0;
  }
  return 1;
}

/* Parse one data line (NUL-terminated, newline stripped) into rec[fields]. */
static int parse_line(cli_reader *r, char *s, double *rec) {
  const char sep = line_separator(s);
  int64_t found = count_fields(s, sep);
  if (found != r->fields) {
    char what[128];
    describe_layout(&r->lay, what, sizeof what);
    set_error(r->error, sizeof r->error,
              "%s: record %lld (line %lld): expected %lld numbers (%s), found %lld", r->name,
              (long long)r->records, (long long)r->line, (long long)r->fields, what,
              (long long)found);
    return -1;
  }
  char *fs, *fe;
  for (int64_t k = 0; k < r->fields && next_field(&s, sep, &fs, &fe); k++) {
    if (parse_field(r, fs, fe, k + 1, &rec[k]) != 0) return -1;
  }
  return 0;
}

/* Blank (spaces only) or a `#` comment. */
static int skip_line(const char *s) {
  while (is_space(*s)) s++;
  return *s == '\0' || *s == '#';
}

static int csv_read(cli_reader *r, double *buf, int64_t cap, int64_t *count, int64_t *lines) {
  int64_t got = 0;
  while (got < cap) {
    errno = 0;
    ssize_t len = getline(&r->linebuf, &r->linecap, r->f);
    if (len < 0) {
      if (ferror(r->f)) {
        set_error(r->error, sizeof r->error, "%s: read error: %s", r->name, strerror(errno));
        return -1;
      }
      break;
    }
    r->line++;
    char *s = r->linebuf;
    if (memchr(s, '\0', (size_t)len)) {
      set_error(r->error, sizeof r->error,
                "%s: line %lld: contains a NUL byte (binary data? use --format f64)", r->name,
                (long long)r->line);
      return -1;
    }
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r')) s[--len] = '\0';
    if (skip_line(s)) continue;
    if (!r->seen_data++ && (r->lay.header || is_header(s))) continue; /* a header row */
    r->records++;
    if (parse_line(r, s, buf + got * r->fields) != 0) return -1;
    if (lines) lines[got] = r->line;
    got++;
  }
  *count = got;
  return 0;
}

static int f64_read(cli_reader *r, double *buf, int64_t cap, int64_t *count, int64_t *lines) {
  size_t rec = (size_t)r->fields * 8;
  size_t want = (size_t)cap * rec;
  if (want > r->rawcap) {
    unsigned char *p = realloc(r->raw, want);
    if (!p) {
      set_error(r->error, sizeof r->error, "out of memory");
      return -1;
    }
    r->raw = p;
    r->rawcap = want;
  }
  size_t got = fread(r->raw, 1, want, r->f);
  if (got < want && ferror(r->f)) {
    set_error(r->error, sizeof r->error, "%s: read error: %s", r->name, strerror(errno));
    return -1;
  }
  r->bytes += (int64_t)got;
  if (got % rec != 0) {
    char what[128];
    describe_layout(&r->lay, what, sizeof what);
    set_error(r->error, sizeof r->error,
              "%s: f64 input of %lld bytes is not a multiple of the record size, %lld bytes "
              "(%lld doubles: %s)",
              r->name, (long long)r->bytes, (long long)rec, (long long)r->fields, what);
    return -1;
  }
  int swap = !host_is_little_endian();
  size_t nd = got / 8;
  for (size_t i = 0; i < nd; i++) {
    uint64_t u;
    memcpy(&u, r->raw + 8 * i, 8);
    if (swap) u = swap64(u);
    memcpy(&buf[i], &u, 8);
  }
  *count = (int64_t)(got / rec);
  r->records += *count;
  if (lines)
    for (int64_t i = 0; i < *count; i++) lines[i] = 0;
  return 0;
}

int cli_reader_read(cli_reader *r, double *buf, int64_t cap, int64_t *count, int64_t *lines) {
  *count = 0;
  if (r->fields <= 0 || cap <= 0) return 0;
  return r->fmt == CLI_FORMAT_F64 ? f64_read(r, buf, cap, count, lines)
                                  : csv_read(r, buf, cap, count, lines);
}

const char *cli_reader_error(const cli_reader *r) { return r->error; }
const char *cli_reader_name(const cli_reader *r) { return r->name; }

int cli_reader_same_file(const cli_reader *r, const char *path) {
  struct stat a, b;
  if (strcmp(path, "-") == 0 || !r->owned) return 0;
  if (fstat(fileno(r->f), &a) != 0 || stat(path, &b) != 0) return 0;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void cli_reader_close(cli_reader **pr) {
  cli_reader *r = *pr;
  if (!r) return;
  if (r->f && r->owned) fclose(r->f); /* read-only: nothing to lose on close */
  free(r->name);
  free(r->linebuf);
  free(r->raw);
  free(r);
  *pr = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Writers
 * ------------------------------------------------------------------------------------------- */

int cli_writer_open(cli_writer **out, const char *path, cli_format fmt, char *err, size_t errcap) {
  *out = NULL;
  cli_writer *w = calloc(1, sizeof *w);
  int is_std = strcmp(path, "-") == 0;
  if (!w || !(w->name = copy_string(is_std ? "<stdout>" : path))) {
    set_error(err, errcap, "out of memory");
    free(w);
    return -1;
  }
  w->fmt = fmt;
  w->f = is_std ? stdout : fopen(path, "wb");
  w->owned = !is_std;
  if (!w->f) {
    set_error(err, errcap, "cannot open output '%s': %s", path, strerror(errno));
    free(w->name);
    free(w);
    return -1;
  }
  *out = w;
  return 0;
}

static int reserve(cli_writer *w, size_t need) {
  if (need <= w->cap) return 0;
  char *p = realloc(w->text, need);
  if (!p) {
    set_error(w->error, sizeof w->error, "out of memory formatting output");
    return -1;
  }
  w->text = p;
  w->cap = need;
  return 0;
}

/* Format the chunk as CSV into w->text; returns the byte count or -1. */
static int64_t format_csv(cli_writer *w, const double *data, int64_t count, int64_t fields) {
  size_t need = (size_t)(count * fields) * CLI_NUM_CHARS + (size_t)count + 1;
  if (reserve(w, need) != 0) return -1;
  char *p = w->text;
  for (int64_t b = 0; b < count; b++) {
    for (int64_t k = 0; k < fields; k++) {
      double v = data[b * fields + k];
      int len = isnan(v) ? snprintf(p, CLI_NUM_CHARS, "nan") /* never "-nan" */
                         : snprintf(p, CLI_NUM_CHARS, "%.17g", v);
      p += len;
      *p++ = k + 1 < fields ? ',' : '\n';
    }
    if (fields == 0) *p++ = '\n';
  }
  return (int64_t)(p - w->text);
}

static int64_t format_f64(cli_writer *w, const double *data, int64_t count, int64_t fields) {
  size_t nd = (size_t)(count * fields);
  if (reserve(w, nd * 8 + 1) != 0) return -1;
  int swap = !host_is_little_endian();
  for (size_t i = 0; i < nd; i++) {
    uint64_t u;
    memcpy(&u, &data[i], 8);
    if (swap) u = swap64(u);
    memcpy(w->text + 8 * i, &u, 8);
  }
  return (int64_t)(nd * 8);
}

int cli_writer_write_bytes(cli_writer *w, const void *bytes, size_t size) {
  errno = 0;
  if ((size > 0 && fwrite(bytes, 1, size, w->f) != size) || fflush(w->f) != 0) {
    set_error(w->error, sizeof w->error, "%s: write error: %s", w->name,
              errno ? strerror(errno) : "short write");
    return -1;
  }
  return 0;
}

int cli_writer_write(cli_writer *w, const double *data, int64_t count, int64_t fields) {
  if (count <= 0) return 0;
  int64_t len = w->fmt == CLI_FORMAT_F64 ? format_f64(w, data, count, fields)
                                         : format_csv(w, data, count, fields);
  if (len < 0) return -1;
  return cli_writer_write_bytes(w, w->text, (size_t)len);
}

const char *cli_writer_error(const cli_writer *w) { return w->error; }
const char *cli_writer_name(const cli_writer *w) { return w->name; }

int cli_writer_close(cli_writer **pw, char *err, size_t errcap) {
  cli_writer *w = *pw;
  if (!w) return 0;
  int rc = 0;
  errno = 0;
  if (w->owned ? fclose(w->f) != 0 : (fflush(w->f) != 0 || ferror(w->f))) {
    set_error(err, errcap, "%s: write error: %s", w->name,
              errno ? strerror(errno) : "stream error");
    rc = -1;
  }
  free(w->name);
  free(w->text);
  free(w);
  *pw = NULL;
  return rc;
}
