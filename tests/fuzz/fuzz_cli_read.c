/*
 * fuzz_cli_read.c — libFuzzer target: the command-line tool's record readers (tools/cli_io.c).
 * The first bytes choose the format (CSV or raw f64), the layout (inputs, parameters,
 * directions, header row) and the chunk size; the rest is the file, read through a memfd.
 * Reading must end at the end of the input or with an error message, never return more records
 * than asked, and number lines increasingly; records that read are written back (CSV, f64) and
 * read again with the same bits.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli_io.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_RECORDS = 512 };

static int file_of(const void *bytes, size_t n, char *path, size_t cap) {
  int fd = memfd_create("fuzz", 0);
  if (fd < 0) return -1;
  if (n > 0 && write(fd, bytes, n) != (ssize_t)n) {
    close(fd);
    return -1;
  }
  snprintf(path, cap, "/proc/self/fd/%d", fd);
  return fd;
}

/* All records of the file (at most MAX_RECORDS): their count, or -1 on a read error. */
static int64_t read_all(const char *path, cli_format fmt, const cli_layout *lay, int64_t chunk,
                        double *out) {
  cli_reader *r = NULL;
  char err[512];
  if (cli_reader_open(&r, path, fmt, lay, err, sizeof err) != 0) {
    FUZZ_CHECK(r == NULL && err[0] != '\0', "open failed without a message");
    return -1;
  }
  const int64_t fields = cli_layout_fields(lay);
  int64_t total = 0, last_line = 0;
  double *buf = malloc(sizeof(double) * (size_t)(chunk * (fields > 0 ? fields : 1)));
  int64_t *lines = malloc(sizeof(int64_t) * (size_t)chunk);
  FUZZ_CHECK(buf != NULL && lines != NULL, "memory");
  for (;;) {
    int64_t count = -1;
    if (cli_reader_read(r, buf, chunk, &count, lines) != 0) {
      FUZZ_CHECK(cli_reader_error(r)[0] != '\0', "read failed without a message");
      total = -1;
      break;
    }
    FUZZ_CHECK(count >= 0 && count <= chunk, "count %lld for a chunk of %lld", (long long)count, (long long)chunk);
    if (count == 0) break;
    for (int64_t i = 0; i < count; ++i) {
      if (fmt == CLI_FORMAT_CSV) FUZZ_CHECK(lines[i] > last_line, "line numbers not increasing");
      last_line = lines[i];
    }
    if (total + count > MAX_RECORDS) break;
    memcpy(out + total * fields, buf, sizeof(double) * (size_t)(count * fields));
    total += count;
  }
  free(buf), free(lines);
  cli_reader_close(&r);
  return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_bytes b = {data, size, 0};
  const cli_format fmt = (fuzz_u8(&b) & 1) ? CLI_FORMAT_F64 : CLI_FORMAT_CSV;
  cli_layout lay;
  lay.inputs = fuzz_u8(&b) % 6;
  lay.params = fuzz_u8(&b) % 3;
  lay.directions = fuzz_u8(&b) % 4;
  lay.header = fuzz_u8(&b) & 1;
  const int64_t chunk = 1 + fuzz_u8(&b) % 7;
  const int64_t fields = cli_layout_fields(&lay);
  if (fields < 1) return 0;
  char path[64];
  const int fd = file_of(data + b.at, size - b.at, path, sizeof path);
  if (fd < 0) return 0;
  static double recs[MAX_RECORDS * 16], again[MAX_RECORDS * 16];
  const int64_t n = read_all(path, fmt, &lay, chunk, recs);
  close(fd);
  if (n <= 0) return 0;
  /* write what was read, read it back: the same bits (CSV writes 17 significant digits) */
  for (int f = 0; f < 2; ++f) {
    const cli_format wf = f == 0 ? CLI_FORMAT_CSV : CLI_FORMAT_F64;
    int wfd = memfd_create("fuzz-out", 0);
    if (wfd < 0) return 0;
    char wpath[64], err[512];
    snprintf(wpath, sizeof wpath, "/proc/self/fd/%d", wfd);
    cli_writer *w = NULL;
    FUZZ_CHECK(cli_writer_open(&w, wpath, wf, err, sizeof err) == 0, "writer: %s", err);
    FUZZ_CHECK(cli_writer_write(w, recs, n, fields) == 0, "write: %s", cli_writer_error(w));
    FUZZ_CHECK(cli_writer_close(&w, err, sizeof err) == 0, "close: %s", err);
    cli_layout plain = lay;
    plain.header = 0;
    const int64_t n2 = read_all(wpath, wf, &plain, chunk, again);
    close(wfd);
    FUZZ_CHECK(n2 == n, "read back %lld records of %lld (format %d)", (long long)n2, (long long)n, (int)wf);
    for (int64_t i = 0; i < n * fields; ++i)
      FUZZ_CHECK(memcmp(&recs[i], &again[i], sizeof(double)) == 0 || (recs[i] != recs[i] && again[i] != again[i]),
                 "value %lld: %.17g read back as %.17g (format %d)", (long long)i, recs[i], again[i], (int)wf);
  }
  return 0;
}
