/*
 * serialize.c — the versioned binary program format (save/load) and file loading.
 *
 * Layout, all little-endian:
 *   0  magic "DUALBC\0\x1a"          8 bytes
 *   8  format version (1)            u32
 *  12  n_in n_par n_out n_regs n_active n_const   6 x i32
 *  36  n_instr                       i64
 *  44  FNV-1a 64 checksum of the payload (bytes 52..end)  u64
 *  52  payload: constants (f64 x n_const), code (u32 x 4 n_instr),
 *      names of inputs, params, outputs (each u32 length + bytes, no NUL)
 * Loading checks every length against the bytes present before allocating, the checksum, then
 * runs the validator: corrupt or hostile files fail cleanly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "program.h"

#define DUAL_MAGIC "DUALBC\0\x1a"
#define DUAL_FORMAT_VERSION 1u
#define DUAL_HEADER_BYTES 52
#define DUAL_MAX_NAME 4096

static uint64_t fnv1a(const unsigned char *p, int64_t n) {
  uint64_t h = 14695981039346656037ull;
  for (int64_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* ---- writer ---------------------------------------------------------------------------------- */
typedef struct wbuf {
  unsigned char *p; /* NULL: only count */
  int64_t n;
} wbuf;

static void put_bytes(wbuf *w, const void *src, int64_t n) {
  if (w->p) memcpy(w->p + w->n, src, (size_t)n);
  w->n += n;
}
static void put_u32(wbuf *w, uint32_t v) {
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  put_bytes(w, b, 4);
}
static void put_u64(wbuf *w, uint64_t v) {
  put_u32(w, (uint32_t)v);
  put_u32(w, (uint32_t)(v >> 32));
}
static void put_f64(wbuf *w, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  put_u64(w, v);
}
static void put_names(wbuf *w, char *const *names, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    size_t len = strlen(names[i]);
    if (len > DUAL_MAX_NAME) len = DUAL_MAX_NAME;
    put_u32(w, (uint32_t)len);
    put_bytes(w, names[i], (int64_t)len);
  }
}

static void write_program(wbuf *w, const dual_program *p) {
  put_bytes(w, DUAL_MAGIC, 8);
  put_u32(w, DUAL_FORMAT_VERSION);
  const int32_t counts[6] = {p->n_in, p->n_par, p->n_out, p->n_regs, p->n_active, p->n_const};
  for (int i = 0; i < 6; ++i) put_u32(w, (uint32_t)counts[i]);
  put_u64(w, (uint64_t)p->n_instr);
  put_u64(w, 0); /* checksum, patched below */
  for (int32_t k = 0; k < p->n_const; ++k) put_f64(w, p->consts[k]);
  for (int64_t t = 0; t < p->n_instr * DUAL_INSTR_WORDS; ++t) put_u32(w, p->code[t]);
  put_names(w, p->in_names, p->n_in);
  put_names(w, p->par_names, p->n_par);
  put_names(w, p->out_names, p->n_out);
  if (w->p) {
    uint64_t h = fnv1a(w->p + DUAL_HEADER_BYTES, w->n - DUAL_HEADER_BYTES);
    wbuf at = {w->p, 44};
    put_u64(&at, h);
  }
}

int dual_program_save(dual_context *ctx, const dual_program *prog, void *buf, int64_t cap,
                      int64_t *size) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (prog == NULL || size == NULL)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_save: program or size is NULL");
  wbuf count = {NULL, 0};
  write_program(&count, prog);
  *size = count.n;
  if (buf == NULL) return DUAL_SUCCESS;
  if (cap < count.n)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_save: buffer of %lld bytes, need %lld",
                     (long long)cap, (long long)count.n);
  wbuf w = {(unsigned char *)buf, 0};
  write_program(&w, prog);
  return DUAL_SUCCESS;
}

int dual_program_save_file(dual_context *ctx, const dual_program *prog, const char *path) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (path == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_save_file: path is NULL");
  int64_t size = 0;
  int st = dual_program_save(ctx, prog, NULL, 0, &size);
  if (st) return st;
  unsigned char *buf = (unsigned char *)malloc((size_t)size);
  if (buf == NULL) return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory saving the program");
  st = dual_program_save(ctx, prog, buf, size, &size);
  if (st == DUAL_SUCCESS) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
      st = dual_fail(ctx, DUAL_ERR_IO, "cannot open '%s' for writing", path);
    } else {
      size_t wr = fwrite(buf, 1, (size_t)size, f);
      if (fclose(f) != 0 || wr != (size_t)size)
        st = dual_fail(ctx, DUAL_ERR_IO, "error writing '%s'", path);
    }
  }
  free(buf);
  return st;
}

/* ---- reader ---------------------------------------------------------------------------------- */
typedef struct rbuf {
  const unsigned char *p;
  int64_t n, at;
} rbuf;

static int have(const rbuf *r, int64_t n) { return n >= 0 && r->n - r->at >= n; }
static uint32_t get_u32(rbuf *r) {
  const unsigned char *b = r->p + r->at;
  r->at += 4;
  return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}
static uint64_t get_u64(rbuf *r) {
  uint64_t lo = get_u32(r);
  return lo | ((uint64_t)get_u32(r) << 32);
}
static int get_names(rbuf *r, char **names, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    if (!have(r, 4)) return DUAL_ERR_FORMAT;
    uint32_t len = get_u32(r);
    if (len > DUAL_MAX_NAME || !have(r, len)) return DUAL_ERR_FORMAT;
    names[i] = (char *)malloc((size_t)len + 1);
    if (names[i] == NULL) return DUAL_ERR_NO_MEMORY;
    memcpy(names[i], r->p + r->at, len);
    names[i][len] = '\0';
    if (strlen(names[i]) != len) return DUAL_ERR_FORMAT; /* embedded NUL */
    r->at += len;
  }
  return DUAL_SUCCESS;
}

int dual_program_load(dual_context *ctx, const void *buf, int64_t size, dual_program **out) {
  if (out == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_load: out is NULL");
  *out = NULL;
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (buf == NULL || size < 0) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_load: no data");
  rbuf r = {(const unsigned char *)buf, size, 0};
  if (size < DUAL_HEADER_BYTES || memcmp(buf, DUAL_MAGIC, 8) != 0)
    return dual_fail(ctx, DUAL_ERR_FORMAT, "not a dualbatch program (bad magic or truncated header)");
  r.at = 8;
  uint32_t version = get_u32(&r);
  if (version != DUAL_FORMAT_VERSION)
    return dual_fail(ctx, DUAL_ERR_FORMAT, "program format version %u is not supported (this build reads %u)",
                     version, DUAL_FORMAT_VERSION);
  int32_t c[6];
  for (int i = 0; i < 6; ++i) c[i] = (int32_t)get_u32(&r);
  int64_t n_instr = (int64_t)get_u64(&r);
  uint64_t sum = get_u64(&r);
  for (int i = 0; i < 6; ++i)
    if (c[i] < 0 || c[i] > DUAL_MAX_SCALARS)
      return dual_fail(ctx, DUAL_ERR_FORMAT, "program header holds an impossible count (%d)", (int)c[i]);
  if (n_instr < 1 || n_instr > DUAL_MAX_INSTRS)
    return dual_fail(ctx, DUAL_ERR_FORMAT, "program header holds an impossible instruction count");
  /* the fixed-size arrays must be present before anything is allocated */
  if (!have(&r, (int64_t)c[5] * 8 + n_instr * 16 + ((int64_t)c[0] + c[1] + c[2]) * 4))
    return dual_fail(ctx, DUAL_ERR_FORMAT, "program file is truncated");
  if (fnv1a(r.p + DUAL_HEADER_BYTES, size - DUAL_HEADER_BYTES) != sum)
    return dual_fail(ctx, DUAL_ERR_FORMAT, "program file checksum mismatch (corrupted file)");

  dual_program *p = dual_program_alloc(c[0], c[1], c[2], c[5], n_instr);
  if (p == NULL) return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory loading the program");
  p->n_regs = c[3];
  p->n_active = c[4];
  for (int32_t k = 0; k < p->n_const; ++k) {
    uint64_t v = get_u64(&r);
    memcpy(&p->consts[k], &v, sizeof v);
  }
  for (int64_t t = 0; t < n_instr * DUAL_INSTR_WORDS; ++t) p->code[t] = get_u32(&r);
  int st = get_names(&r, p->in_names, p->n_in);
  if (!st) st = get_names(&r, p->par_names, p->n_par);
  if (!st) st = get_names(&r, p->out_names, p->n_out);
  if (!st && r.at != r.n) st = DUAL_ERR_FORMAT;
  if (st) {
    dual_program_destroy(&p);
    return st == DUAL_ERR_NO_MEMORY ? dual_fail(ctx, st, "out of memory loading the program")
                                    : dual_fail(ctx, st, "program file has malformed names or trailing bytes");
  }
  char msg[256];
  int vst = dual_program_validate(p, msg, sizeof msg);
  if (vst != DUAL_SUCCESS) {
    dual_program_destroy(&p);
    if (vst == DUAL_ERR_NO_MEMORY) return dual_fail(ctx, vst, "out of memory validating the program");
    return dual_fail(ctx, DUAL_ERR_INVALID_PROGRAM, "program failed validation: %s", msg);
  }
  *out = p;
  return DUAL_SUCCESS;
}

/* Read a whole file (at most 1 GiB).  Caller frees *data. */
static int read_file(dual_context *ctx, const char *path, unsigned char **data, int64_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return dual_fail(ctx, DUAL_ERR_IO, "cannot open '%s'", path);
  int64_t cap = 4096, n = 0;
  unsigned char *buf = (unsigned char *)malloc((size_t)cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, (size_t)(cap - n), f);
    n += (int64_t)got;
    if (n < cap) break;
    if (cap >= ((int64_t)1 << 30)) {
      free(buf);
      fclose(f);
      return dual_fail(ctx, DUAL_ERR_IO, "'%s' is larger than 1 GiB", path);
    }
    unsigned char *nb = (unsigned char *)realloc(buf, (size_t)cap * 2 + 1);
    if (nb == NULL) free(buf);
    buf = nb;
    cap *= 2;
  }
  int err = ferror(f);
  fclose(f);
  if (buf == NULL) return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory reading '%s'", path);
  if (err) {
    free(buf);
    return dual_fail(ctx, DUAL_ERR_IO, "error reading '%s'", path);
  }
  buf[n] = '\0';
  *data = buf;
  *size = n;
  return DUAL_SUCCESS;
}

int dual_program_load_file(dual_context *ctx, const char *path, dual_program **out) {
  if (out) *out = NULL;
  if (ctx == NULL || path == NULL || out == NULL)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_program_load_file: NULL argument");
  unsigned char *data = NULL;
  int64_t size = 0;
  int st = read_file(ctx, path, &data, &size);
  if (st) return st;
  if (size >= 8 && memcmp(data, DUAL_MAGIC, 8) == 0) {
    st = dual_program_load(ctx, data, size, out);
  } else if ((int64_t)strlen((const char *)data) != size) {
    st = dual_fail(ctx, DUAL_ERR_FORMAT, "'%s' is neither program text nor a compiled program", path);
  } else {
    st = dual_program_compile(ctx, (const char *)data, path, out);
  }
  free(data);
  return st;
}
