/*
 * fuzz_differential.c — libFuzzer target: what the library promises to be bitwise equal is.
 * The input builds a program through the builder API (every op of the table, constants and
 * random draws, from its bytes) and hostile points; the Jacobian (and, for one input in four,
 * the Hessian) is then computed in forward mode at width 1 on one thread (the reference) and
 * compared bit for bit with another width on two threads with the batch cut in two (dual_run's
 * point0 keeps the draws), and reverse mode against itself the same way; forward and reverse
 * must give the same values and the same primal flags (derivatives: see agree()).  Equal
 * means bit for bit, except that NaNs of any sign and payload are equal (README).  One input in
 * 4096 (env DUALBATCH_FUZZ_TIER_EVERY; 0 = never) also runs the CPU's compiled tier, which must
 * equal the interpreter: such an input compiles up to four modules (scripts/fuzz.sh sets
 * DUALBATCH_CC=tcc when it exists: gcc takes seconds a module under the sanitizers).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dual/ops.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern const dual_op_info dual_op_table[DUAL_OP_COUNT];

enum { MAXN = 5, MAXM = 3, MAXB = 9, MAXV = 96 };

static dual_program *build(fuzz_bytes *b, dual_context *ctx) {
  dual_builder *bld = NULL;
  FUZZ_CHECK(dual_builder_create(ctx, &bld) == DUAL_SUCCESS, "builder");
  int32_t v[MAXV], nv = 0;
  const int n = 1 + fuzz_u8(b) % MAXN, np = fuzz_u8(b) % 3, m = 1 + fuzz_u8(b) % MAXM;
  char name[16];
  int ok = 1;
  for (int i = 0; i < n && ok; ++i) {
    snprintf(name, sizeof name, "x%d", i);
    ok = dual_builder_input(bld, name, &v[nv++]) == DUAL_SUCCESS;
  }
  for (int i = 0; i < np && ok; ++i) {
    snprintf(name, sizeof name, "p%d", i);
    ok = dual_builder_param(bld, name, &v[nv++]) == DUAL_SUCCESS;
  }
  const int nops = 1 + fuzz_u8(b) % 48;
  for (int k = 0; k < nops && ok && nv < MAXV; ++k) {
    const uint8_t c = fuzz_u8(b);
    int32_t id = -1;
    if (c < 8) {
      const double k = fuzz_value(b);
      ok = dual_builder_constant(bld, isfinite(k) ? k : 1.5, &id) == DUAL_SUCCESS;
    } else if (c < 10) ok = (c == 8 ? dual_builder_normal(bld, &id) : dual_builder_uniform(bld, &id)) == DUAL_SUCCESS;
    else {
      const dual_op_info *op = &dual_op_table[c % DUAL_OP_COUNT];
      if (op->spelling == NULL || op->spelling[0] == '\0') continue; /* internal ops */
      int32_t args[3];
      for (int a = 0; a < op->arity; ++a) args[a] = v[nv - 1 - fuzz_u8(b) % nv];
      ok = dual_builder_apply(bld, op->spelling, op->arity, args, &id) == DUAL_SUCCESS;
    }
    if (ok) v[nv++] = id;
  }
  for (int j = 0; j < m && ok; ++j) {
    snprintf(name, sizeof name, "f%d", j);
    ok = dual_builder_output(bld, name, v[nv - 1 - j % nv]) == DUAL_SUCCESS;
  }
  dual_program *prog = NULL;
  if (ok && dual_builder_finish(bld, &prog) != DUAL_SUCCESS) prog = NULL;
  dual_builder_destroy(&bld);
  return prog; /* NULL: the bytes made a builder error (a constant folding to NaN, ...) */
}

typedef struct result {
  double y[MAXB * MAXM], J[MAXB * MAXM * MAXN], H[MAXB * MAXM * MAXN * MAXN];
  int32_t st[MAXB], st2[MAXB];
} result;

typedef struct setup {
  const dual_program *prog;
  int64_t B, n, np, m;
  const double *x, *p;
} setup;

static dual_context *contexts[2][2][2]; /* [reverse][two threads][compiled] */

static dual_context *context(int reverse, int threads, int compiled) {
  dual_context **c = &contexts[reverse][threads - 1][compiled];
  if (*c == NULL) {
    *c = fuzz_context(compiled ? DUAL_TIER_COMPILE : DUAL_TIER_INTERPRET);
    FUZZ_CHECK(dual_context_set_threads(*c, threads) == DUAL_SUCCESS, "threads");
    FUZZ_CHECK(dual_context_set_ad_mode(*c, reverse ? DUAL_AD_REVERSE : DUAL_AD_FORWARD) == DUAL_SUCCESS, "mode");
    if (compiled) FUZZ_CHECK(dual_context_set_cache_dir(*c, "/proc/dualbatch-fuzz-no-cache") == DUAL_SUCCESS, "dir");
  }
  return *c;
}

/* Jacobian and Hessian of the whole batch, or of two parts [0, cut) and [cut, B) with point0. */
static int hessians; /* this input also compares Hessians */

static void run(dual_context *ctx, const setup *s, int width, int64_t cut, result *r) {
  FUZZ_CHECK(dual_context_set_width(ctx, width) == DUAL_SUCCESS, "width");
  const int64_t n = s->n, m = s->m, np = s->np;
  for (int part = 0; part < 2; ++part) {
    const int64_t b0 = part == 0 ? 0 : cut, b1 = part == 0 ? cut : s->B;
    if (b1 <= b0) continue;
    for (int mode = 0; mode < 1 + hessians; ++mode) {
      dual_batch bt;
      dual_batch_init(&bt);
      bt.count = b1 - b0, bt.point0 = b0;
      bt.x = s->x + b0 * n, bt.x_ps = n, bt.x_es = 1;
      if (np > 0) bt.p = s->p + b0 * np, bt.p_ps = np, bt.p_es = 1;
      bt.y = r->y + b0 * m, bt.y_ps = m, bt.y_es = 1;
      bt.d = r->J + b0 * m * n, bt.d_ps = m * n, bt.d_rs = n, bt.d_cs = 1;
      bt.status = (mode == 0 ? r->st : r->st2) + b0;
      if (mode == 1) {
        bt.h = r->H + b0 * m * n * n, bt.h_ps = m * n * n, bt.h_rs = n * n, bt.h_es = 1;
        bt.h_layout = DUAL_HESSIAN_FULL;
      }
      const int rc = dual_run(ctx, s->prog, mode == 0 ? DUAL_MODE_JACOBIAN : DUAL_MODE_HESSIAN, &bt);
      FUZZ_CHECK(rc == DUAL_SUCCESS, "%s: %s", mode == 0 ? "jacobian" : "hessian", dual_context_last_error(ctx));
    }
  }
  fuzz_flags_known(r->st, s->B, "jacobian");
  if (!hessians) memset(r->H, 0, sizeof r->H), memset(r->st2, 0, sizeof r->st2);
  fuzz_flags_known(r->st2, s->B, "hessian");
}

/* Bit for bit, except that any two NaNs are equal: the library promises NaNs in the same places,
 * not their sign and payload bits (README; x86 propagates the first operand's NaN, and a compiler
 * may order a commutative op's operands either way).  The first difference is printed. */
static int same_doubles(const double *a, const double *b, int64_t count, const char *what) {
  for (int64_t i = 0; i < count; ++i)
    if (memcmp(&a[i], &b[i], sizeof(double)) != 0 && !(isnan(a[i]) && isnan(b[i]))) {
      fprintf(stderr, "%s: element %lld: %.17g against %.17g\n", what, (long long)i, a[i], b[i]);
      return 0;
    }
  return 1;
}

static void same(const result *a, const result *b, const setup *s, const char *what) {
  const int64_t B = s->B, m = s->m, n = s->n;
  FUZZ_CHECK(same_doubles(a->y, b->y, B * m, "values"), "%s: values differ", what);
  FUZZ_CHECK(same_doubles(a->J, b->J, B * m * n, "Jacobian"), "%s: Jacobians differ", what);
  FUZZ_CHECK(same_doubles(a->H, b->H, B * m * n * n, "Hessian"), "%s: Hessians differ", what);
  FUZZ_CHECK(memcmp(a->st, b->st, sizeof(int32_t) * (size_t)B) == 0, "%s: flags differ", what);
  FUZZ_CHECK(memcmp(a->st2, b->st2, sizeof(int32_t) * (size_t)B) == 0, "%s: Hessian flags differ", what);
}

/* Forward against reverse: the values bitwise and the flags of the primal (domain, singular,
 * bad input) equal — what the library promises.  Derivatives are not compared: the two modes sum
 * a derivative's terms in different orders, and where terms cancel only their rounding is left,
 * at the terms' scale.  The fuzzer finds such programs within minutes: x - x feeding a product
 * of 3.6e18 gives adjoints of +-1.5e20 that cancel in reverse mode after swallowing a term of
 * 132 (reverse 0, forward 132.07, whose tangent 1 - 1 is exactly 0 first), and
 * d/dx atan2(e^x, hypot(e^x, e^x))^2 = 0 comes out -1.4e-16 forward and -1.0e-16 reverse.
 * test_reverse checks the agreement on random programs (1.2e-14 row-scaled). */
static void agree(const result *f, const result *r, const setup *s) {
  const int64_t B = s->B, m = s->m;
  const int32_t primal = DUAL_PT_DOMAIN | DUAL_PT_SINGULAR | DUAL_PT_BAD_INPUT;
  FUZZ_CHECK(same_doubles(f->y, r->y, B * m, "values"), "forward and reverse values differ");
  for (int64_t b = 0; b < B; ++b)
    FUZZ_CHECK((f->st[b] & primal) == (r->st[b] & primal), "point %lld: flags %#x forward, %#x reverse",
               (long long)b, (unsigned)f->st[b], (unsigned)r->st[b]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static long tier_every = -1;
  if (tier_every < 0) {
    const char *e = getenv("DUALBATCH_FUZZ_TIER_EVERY");
    tier_every = e != NULL ? strtol(e, NULL, 10) : 4096;
  }
  fuzz_bytes b = {data, size, 0};
  dual_context *ref = context(0, 1, 0);
  dual_program *prog = build(&b, ref);
  if (prog == NULL) return 0;
  if (getenv("DUALBATCH_FUZZ_SHOW") != NULL) { /* reproducing a finding: the program */
    char text[65536];
    if (dual_program_disassemble(prog, text, sizeof text) >= 0) fprintf(stderr, "%s\n", text);
  }
  setup s = {prog, 1 + fuzz_u8(&b) % MAXB, dual_program_num_inputs(prog), dual_program_num_params(prog),
             dual_program_num_outputs(prog), NULL, NULL};
  double x[MAXB * MAXN], p[MAXB * 2 + 1];
  for (int64_t i = 0; i < s.B * s.n; ++i) x[i] = fuzz_value(&b);
  for (int64_t i = 0; i < s.B * s.np; ++i) p[i] = fuzz_value(&b);
  s.x = x, s.p = p;
  const int64_t cut = fuzz_u8(&b) % (s.B + 1);
  static const int widths[] = {2, 4, 8, 16, 32};
  const int w = widths[fuzz_u8(&b) % 5];
  hessians = (fuzz_u8(&b) & 3) == 0;
  static result r0, r1, r2;
  run(ref, &s, 1, s.B, &r0);
  run(context(0, 2, 0), &s, w, cut, &r1);
  same(&r0, &r1, &s, "forward: width 1 on one thread against another width on two, the batch in two calls");
  run(context(1, 1, 0), &s, 1, s.B, &r1);
  run(context(1, 2, 0), &s, w, cut, &r2);
  same(&r1, &r2, &s, "reverse: one thread against two, the batch in two calls");
  agree(&r0, &r1, &s);
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  if (tier_every > 0 && h % (uint32_t)tier_every == 0) {
    run(context(0, 1, 1), &s, 1, s.B, &r2);
    same(&r0, &r2, &s, "forward: compiled tier against the interpreter");
    run(context(1, 1, 1), &s, 1, s.B, &r2);
    same(&r1, &r2, &s, "reverse: compiled tier against the interpreter");
  }
  dual_program_destroy(&prog);
  return 0;
}
