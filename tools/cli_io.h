/*
 * cli_io.h — record readers and writers of the `dualbatch` command-line tool: CSV text (one point
 * per line; fields separated by ',', or ';', or spaces and tabs; `#` comments and blank lines
 * skipped; a header row skipped) and f64 (raw little-endian doubles, records
 * back to back).  Readers fill point-major arrays chunk by chunk so memory stays bounded; writers
 * emit one completed chunk at a time.  Included by cli_run.c and cli_main.c.
 */
#ifndef DUAL_CLI_IO_H
#define DUAL_CLI_IO_H

#include <stdint.h>
#include <stdio.h>

typedef enum cli_format { CLI_FORMAT_CSV = 0, CLI_FORMAT_F64 = 1 } cli_format;

/* What one input record holds, for counting and for error messages. */
typedef struct cli_layout {
  int32_t inputs;     /* n */
  int32_t params;     /* p */
  int32_t directions; /* extra values per record: n for jvp and hvp, m for vjp, else 0 */
  int32_t header;     /* CSV: 1 = the first data line is a header (--header); 0 = it is skipped
                         only when none of its fields reads as a number */
} cli_layout;

int64_t cli_layout_fields(const cli_layout *lay);

typedef struct cli_reader cli_reader;

/* Open `path` ("-" = stdin) for reading records of `lay`.  Returns 0, or -1 with a message
 * (naming the file) written into err[errcap]. */
int cli_reader_open(cli_reader **r, const char *path, cli_format fmt, const cli_layout *lay,
                    char *err, size_t errcap);
/* Read up to `cap` records into buf[cap][fields].  *count receives the number read (0 at end of
 * input).  lines (may be NULL) receives each record's 1-based line number (CSV; 0 for f64).
 * Returns 0, or -1 with cli_reader_error() set. */
int cli_reader_read(cli_reader *r, double *buf, int64_t cap, int64_t *count, int64_t *lines);
const char *cli_reader_error(const cli_reader *r);
const char *cli_reader_name(const cli_reader *r);
/* True when the reader and `path` name the same existing file (so --out would clobber --in). */
int cli_reader_same_file(const cli_reader *r, const char *path);
void cli_reader_close(cli_reader **r);

typedef struct cli_writer cli_writer;

/* Open `path` ("-" = stdout) for writing (truncating).  Returns 0 or -1 with err set. */
int cli_writer_open(cli_writer **w, const char *path, cli_format fmt, char *err, size_t errcap);
/* Write `count` records of `fields` numbers from data[count][fields] and flush.  Nothing of the
 * chunk reaches the destination before it is fully formatted.  Returns 0 or -1 (error set). */
int cli_writer_write(cli_writer *w, const double *data, int64_t count, int64_t fields);
/* Write raw bytes (used by disasm/compile for "-" destinations). */
int cli_writer_write_bytes(cli_writer *w, const void *bytes, size_t size);
const char *cli_writer_error(const cli_writer *w);
const char *cli_writer_name(const cli_writer *w);
/* Flush and close; returns 0 or -1 with err set (a failed close loses data: it is an error). */
int cli_writer_close(cli_writer **w, char *err, size_t errcap);

#endif /* DUAL_CLI_IO_H */
