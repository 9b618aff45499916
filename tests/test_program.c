/*
 * test_program.c — programs as data: the builder's passes (folding, CSE, DCE, register reuse),
 * its errors, save/load round trips, the validator's rejection of every malformed construct,
 * fuzzing of the loader with random bytes and corrupted files (never a crash), and programs'
 * uids (never reused).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "builder.h"
#include "dualbatch.h"
#include "program.h"

static dual_context *ctx;
static void setup(void) { cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0); }
static void teardown(void) { dual_context_destroy(&ctx); }
TestSuite(program, .init = setup, .fini = teardown);

static int32_t apply(dual_builder *b, const char *op, int32_t a, int32_t c) {
  int32_t args[2] = {a, c}, id = -1;
  cr_assert_eq(dual_builder_apply(b, op, dual_op_table[dual_op_by_spelling(op)].arity, args, &id), 0,
               "%s", dual_context_last_error(ctx));
  return id;
}

/* f = (x*y + x*y) * (2 + 3), g = y - 0: CSE merges x*y, 2+3 folds to 5, y-0 is y, the dead
 * sin(x) disappears. */
static dual_program *small_program(void) {
  dual_builder *b = NULL;
  int32_t x, y, k2, k3;
  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  cr_assert_eq(dual_builder_input(b, "x", &x), 0);
  cr_assert_eq(dual_builder_input(b, "y", &y), 0);
  cr_assert_eq(dual_builder_constant(b, 2.0, &k2), 0);
  cr_assert_eq(dual_builder_constant(b, 3.0, &k3), 0);
  int32_t xy1 = apply(b, "*", x, y), xy2 = apply(b, "*", y, x);
  cr_assert_eq(xy1, xy2, "CSE must merge x*y and y*x");
  int32_t five = apply(b, "+", k2, k3);
  double v = 0;
  cr_assert(dual_builder_const_value(b, five, &v) && v == 5.0, "2+3 must fold to 5");
  int32_t zero;
  cr_assert_eq(dual_builder_constant(b, 0.0, &zero), 0);
  cr_assert_eq(apply(b, "-", y, zero), y, "y - 0 is y");
  (void)apply(b, "sin", x, 0); /* dead */
  int32_t f = apply(b, "*", apply(b, "+", xy1, xy2), five);
  cr_assert_eq(dual_builder_output(b, "f", f), 0);
  cr_assert_eq(dual_builder_output(b, "g", y), 0);
  dual_program *prog = NULL;
  cr_assert_eq(dual_builder_finish(b, &prog), 0, "%s", dual_context_last_error(ctx));
  dual_builder_destroy(&b);
  return prog;
}

Test(program, passes_fold_cse_dce_and_evaluate) {
  dual_program *prog = small_program();
  /* LDX x, LDX y, MUL, ADD, LDK 5, MUL, OUT f, OUT g: no SIN survives */
  cr_assert_eq(dual_program_num_instructions(prog), 8);
  char text[2048];
  dual_program_disassemble(prog, text, sizeof text);
  cr_assert_null(strstr(text, "SIN"), "dead code kept:\n%s", text);
  cr_assert_not_null(strstr(text, "r=a*b"), "synopsis missing:\n%s", text);
  double x[2] = {1.5, -2.0}, y[2], J[4];
  cr_assert_eq(dual_jacobian(ctx, prog, 1, x, 2, NULL, 0, y, 2, J, 4, NULL), 0);
  cr_assert_eq(y[0], 10.0 * 1.5 * -2.0);
  cr_assert_eq(J[0], 10.0 * -2.0); /* df/dx = 10 y */
  cr_assert_eq(J[1], 10.0 * 1.5);  /* df/dy = 10 x */
  cr_assert_eq(J[2], 0.0);
  cr_assert_eq(J[3], 1.0);
  dual_program_destroy(&prog);
  cr_assert_null(prog);
}

Test(program, registers_are_reused) {
  /* a chain of 1000 ops needs a handful of registers, not 1000 */
  dual_builder *b = NULL;
  int32_t x, v;
  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  cr_assert_eq(dual_builder_input(b, "x", &x), 0);
  v = x;
  for (int i = 0; i < 1000; ++i) v = apply(b, i % 2 ? "sin" : "*", v, x);
  cr_assert_eq(dual_builder_output(b, "y", v), 0);
  dual_program *prog = NULL;
  cr_assert_eq(dual_builder_finish(b, &prog), 0);
  dual_builder_destroy(&b);
  cr_assert_leq(dual_program_num_registers(prog), 3);
  dual_program_destroy(&prog);
}

Test(program, builder_errors_are_clear_and_sticky) {
  dual_builder *b = NULL;
  int32_t x, id, args[3] = {0, 0, 0};
  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  cr_assert_eq(dual_builder_input(b, "x", &x), 0);
  cr_assert_eq(dual_builder_apply(b, "sine", 1, &x, &id), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "unknown operation 'sine'"));
  cr_assert_eq(dual_builder_apply(b, "sin", 1, &x, &id), DUAL_ERR_ARGUMENT, "errors are sticky");
  dual_program *prog = NULL;
  cr_assert_eq(dual_builder_finish(b, &prog), DUAL_ERR_ARGUMENT);
  cr_assert_null(prog);
  dual_builder_destroy(&b);

  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  cr_assert_eq(dual_builder_input(b, "x", &x), 0);
  args[0] = x;
  cr_assert_eq(dual_builder_apply(b, "atan2", 1, args, &id), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "takes 2 arguments, got 1"));
  dual_builder_destroy(&b);

  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  args[0] = 99;
  cr_assert_eq(dual_builder_apply(b, "sin", 1, args, &id), DUAL_ERR_ARGUMENT);
  dual_builder_destroy(&b);

  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  cr_assert_eq(dual_builder_constant(b, NAN, &id), DUAL_ERR_ARGUMENT);
  dual_builder_destroy(&b);

  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  int32_t m1;
  cr_assert_eq(dual_builder_constant(b, -1.0, &m1), 0);
  cr_assert_eq(dual_builder_apply(b, "log", 1, &m1, &id), DUAL_ERR_ARGUMENT, "log(-1) folded");
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "not finite"));
  dual_builder_destroy(&b);

  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  cr_assert_eq(dual_builder_input(b, "x", &x), 0);
  cr_assert_eq(dual_builder_finish(b, &prog), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "no output"));
  dual_builder_destroy(&b);
  dual_builder_destroy(&b); /* NULL-safe */
}

Test(program, save_load_round_trip) {
  dual_program *prog = small_program();
  int64_t size = 0;
  cr_assert_eq(dual_program_save(ctx, prog, NULL, 0, &size), 0);
  unsigned char *buf = malloc((size_t)size);
  cr_assert_eq(dual_program_save(ctx, prog, buf, size - 1, &size), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_program_save(ctx, prog, buf, size, &size), 0);
  dual_program *back = NULL;
  cr_assert_eq(dual_program_load(ctx, buf, size, &back), 0, "%s", dual_context_last_error(ctx));
  cr_assert_eq(back->n_instr, prog->n_instr);
  cr_assert(memcmp(back->code, prog->code, (size_t)prog->n_instr * 16) == 0);
  cr_assert_str_eq(dual_program_output_name(back, 1), "g");
  cr_assert_str_eq(dual_program_input_name(back, 0), "x");
  cr_assert_null(dual_program_input_name(back, 2));
  char path[] = "/tmp/dualbatch_test_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  cr_assert_eq(dual_program_save_file(ctx, prog, path), 0);
  dual_program *fromfile = NULL;
  cr_assert_eq(dual_program_load_file(ctx, path, &fromfile), 0, "%s", dual_context_last_error(ctx));
  cr_assert_eq(fromfile->n_regs, prog->n_regs);
  remove(path);
  cr_assert_eq(dual_program_load_file(ctx, "/nonexistent/prog.dbc", &fromfile), DUAL_ERR_IO);
  cr_assert_null(fromfile);
  dual_program_destroy(&back);
  dual_program_destroy(&prog);
  free(buf);
}

/* Build a program by hand, word by word. */
static dual_program *hand(int32_t n_in, int32_t n_regs, int32_t n_active, int64_t n, const uint32_t *code) {
  dual_program *p = dual_program_alloc(n_in, 0, 1, 1, n);
  p->n_regs = n_regs;
  p->n_active = n_active;
  p->consts[0] = 2.0;
  memcpy(p->code, code, (size_t)n * 16);
  for (int i = 0; i < n_in; ++i) p->in_names[i] = strdup("x");
  p->out_names[0] = strdup("y");
  return p;
}
#define W0(op, dst) (((uint32_t)(op) << 24) | (uint32_t)(dst))

static void expect_invalid(int32_t n_in, int32_t regs, int32_t act, int64_t n, const uint32_t *code,
                           const char *why) {
  dual_program *p = hand(n_in, regs, act, n, code);
  char msg[256];
  cr_assert_eq(dual_program_validate(p, msg, sizeof msg), DUAL_ERR_INVALID_PROGRAM, "accepted: %s", why);
  cr_assert_not_null(strstr(msg, why), "message '%s' lacks '%s'", msg, why);
  dual_program_destroy(&p);
}

Test(program, validator_accepts_valid_and_rejects_each_violation) {
  const uint32_t ok[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_SIN, 1), 0, 0, 0,
                         W0(DUAL_OP_OUT, 0), 1, 0, 0};
  dual_program *p = hand(1, 2, 2, 3, ok);
  char msg[256];
  cr_assert_eq(dual_program_validate(p, msg, sizeof msg), 0, "%s", msg);
  dual_program_destroy(&p);

  /* in-place accumulation: ADD/SUB may write their first operand's register */
  const uint32_t acc[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_SIN, 1), 0, 0, 0,
                          W0(DUAL_OP_SUB, 0), 0, 1, 0, W0(DUAL_OP_OUT, 0), 0, 0, 0};
  p = hand(1, 2, 2, 4, acc);
  cr_assert_eq(dual_program_validate(p, msg, sizeof msg), 0, "%s", msg);
  dual_program_destroy(&p);
  const uint32_t acc_b[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_SIN, 1), 0, 0, 0,
                            W0(DUAL_OP_SUB, 1), 0, 1, 0, W0(DUAL_OP_OUT, 0), 1, 0, 0};
  expect_invalid(1, 2, 2, 4, acc_b, "destination equals an operand");
  const uint32_t acc_mul[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_SIN, 1), 0, 0, 0,
                              W0(DUAL_OP_MUL, 0), 0, 1, 0, W0(DUAL_OP_OUT, 0), 0, 0, 0};
  expect_invalid(1, 2, 2, 4, acc_mul, "destination equals an operand");

  const uint32_t bad_op[] = {W0(200, 0), 0, 0, 0, W0(DUAL_OP_OUT, 0), 0, 0, 0};
  expect_invalid(1, 1, 1, 2, bad_op, "opcode");
  const uint32_t bad_dst[] = {W0(DUAL_OP_LDX, 5), 0, 0, 0, W0(DUAL_OP_OUT, 0), 0, 0, 0};
  expect_invalid(1, 2, 2, 2, bad_dst, "destination register");
  const uint32_t bad_in[] = {W0(DUAL_OP_LDX, 0), 3, 0, 0, W0(DUAL_OP_OUT, 0), 0, 0, 0};
  expect_invalid(1, 1, 1, 2, bad_in, "LDX index");
  const uint32_t bad_k[] = {W0(DUAL_OP_LDK, 0), 1, 0, 0, W0(DUAL_OP_OUT, 0), 0, 0, 0};
  expect_invalid(1, 1, 0, 2, bad_k, "LDK index");
  const uint32_t undef[] = {W0(DUAL_OP_SIN, 1), 0, 0, 0, W0(DUAL_OP_OUT, 0), 1, 0, 0};
  expect_invalid(1, 2, 2, 2, undef, "undefined");
  const uint32_t alias[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_SIN, 0), 0, 0, 0,
                            W0(DUAL_OP_OUT, 0), 0, 0, 0};
  expect_invalid(1, 1, 1, 3, alias, "destination equals an operand");
  const uint32_t unused[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_SIN, 1), 0, 7, 0,
                             W0(DUAL_OP_OUT, 0), 1, 0, 0};
  expect_invalid(1, 2, 2, 3, unused, "nonzero unused operand");
  const uint32_t cls[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_SIN, 1), 0, 0, 0,
                          W0(DUAL_OP_OUT, 0), 1, 0, 0};
  expect_invalid(1, 2, 1, 3, cls, "passive but its value is active");
  const uint32_t noout[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0};
  expect_invalid(1, 1, 1, 1, noout, "never written");
  const uint32_t twice[] = {W0(DUAL_OP_LDX, 0), 0, 0, 0, W0(DUAL_OP_OUT, 0), 0, 0, 0,
                            W0(DUAL_OP_OUT, 0), 0, 0, 0};
  expect_invalid(1, 1, 1, 3, twice, "written twice");
  /* issue 22: the header's register counts must be what the code writes (they size scratch) */
  expect_invalid(1, 5, 2, 3, ok, "claims 5 registers (2 active) but the code writes 2 (2 active)");
  expect_invalid(1, 3, 3, 3, ok, "register 2 is never written");
}

/* Issue 22: a 3.5 KB program file whose header claimed 16,777,215 registers while its code used
 * 22 validated, and a 3-point evaluation then asked for ~32 GiB.  The header is outside the
 * checksum, so the loader's validator is what must refuse it. */
Test(program, loader_rejects_a_header_claiming_more_registers_than_the_code_writes) {
  dual_program *prog = small_program();
  int32_t regs = dual_program_num_registers(prog);
  int64_t size = 0;
  cr_assert_eq(dual_program_save(ctx, prog, NULL, 0, &size), 0);
  unsigned char *buf = malloc((size_t)size);
  cr_assert_eq(dual_program_save(ctx, prog, buf, size, &size), 0);
  const int32_t claims[] = {16777215, 1 << 20, regs + 1};
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 4; ++i) buf[24 + i] = (unsigned char)((uint32_t)claims[k] >> (8 * i));
    dual_program *p = NULL;
    cr_assert_eq(dual_program_load(ctx, buf, size, &p), DUAL_ERR_INVALID_PROGRAM, "claim %d", claims[k]);
    cr_assert_null(p);
    char want[64];
    snprintf(want, sizeof want, "the header claims %d registers", claims[k]);
    cr_assert_not_null(strstr(dual_context_last_error(ctx), want), "%s", dual_context_last_error(ctx));
  }
  /* the true count still loads */
  for (int i = 0; i < 4; ++i) buf[24 + i] = (unsigned char)((uint32_t)regs >> (8 * i));
  dual_program *p = NULL;
  cr_assert_eq(dual_program_load(ctx, buf, size, &p), 0, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_program_num_registers(p), regs);
  dual_program_destroy(&p);
  free(buf);
  dual_program_destroy(&prog);
}

static uint64_t seed = 99;
static uint64_t rnd(void) {
  seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
  return seed;
}

Test(program, fuzz_loader_random_bytes_and_corruptions) {
  dual_program *prog = small_program();
  int64_t size = 0;
  cr_assert_eq(dual_program_save(ctx, prog, NULL, 0, &size), 0);
  unsigned char *good = malloc((size_t)size), *buf = malloc((size_t)size + 64);
  cr_assert_eq(dual_program_save(ctx, prog, good, size, &size), 0);
  int rejected = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    int64_t n = size;
    memcpy(buf, good, (size_t)size);
    switch (trial % 4) {
    case 0: /* random bytes after a valid magic */
      n = (int64_t)(rnd() % (uint64_t)(size + 60));
      for (int64_t i = 8; i < n; ++i) buf[i] = (unsigned char)rnd();
      break;
    case 1: /* flip bits */
      for (int k = 0; k < 1 + trial % 5; ++k) buf[rnd() % (uint64_t)size] ^= (unsigned char)(1u << (rnd() % 8));
      break;
    case 2: /* truncate */
      n = (int64_t)(rnd() % (uint64_t)size);
      break;
    default: { /* corrupt the payload, then fix the checksum so the validator must catch it */
      buf[52 + rnd() % (uint64_t)(size - 52)] = (unsigned char)rnd();
      uint64_t h = 14695981039346656037ull;
      for (int64_t i = 52; i < size; ++i) h = (h ^ buf[i]) * 1099511628211ull;
      for (int i = 0; i < 8; ++i) buf[44 + i] = (unsigned char)(h >> (8 * i));
    }
    }
    dual_program *p = NULL;
    int st = dual_program_load(ctx, buf, n, &p);
    if (st == DUAL_SUCCESS) {
      /* a corruption that still validates must be safe to run */
      double x[2] = {0.5, 0.25}, y[64], J[256];
      int32_t nin = dual_program_num_inputs(p), nout = dual_program_num_outputs(p);
      if (nin <= 2 && nout <= 8 && dual_program_num_params(p) == 0)
        cr_assert_eq(dual_jacobian(ctx, p, 1, x, 2, NULL, 0, y, 8, J, 64, NULL), 0);
      dual_program_destroy(&p);
    } else {
      cr_assert(st == DUAL_ERR_FORMAT || st == DUAL_ERR_INVALID_PROGRAM, "status %d", st);
      cr_assert_null(p);
      rejected++;
    }
  }
  cr_assert_gt(rejected, 15000);
  free(good), free(buf);
  dual_program_destroy(&prog);
}

/* Every program and every colored view gets its own uid, also a program allocated where a
 * destroyed one was (the GPU's memo of a program's kernel is keyed by it, not by the address). */
Test(program, uids_are_never_reused) {
  dual_program *a = NULL, *b = NULL;
  cr_assert_eq(dual_program_compile(ctx, "input x[2]\noutput f = x[0] * x[1]\n", "a", &a), 0);
  const uint64_t ua = a->uid;
  const void *where = a;
  dual_program_destroy(&a);
  cr_assert_eq(dual_program_compile(ctx, "input x[2]\noutput f = x[0] + x[1]\n", "b", &b), 0);
  cr_assert(b->uid != ua, "uid %llu reused (same address: %d)", (unsigned long long)ua, (const void *)b == where);
  const int32_t color[2] = {0, 0};
  dual_program *v = dual_program_colored(b, color, 1);
  cr_assert_not_null(v);
  cr_assert(v->uid != b->uid && v->uid != ua);
  dual_program_destroy(&v);
  dual_program_destroy(&b);
}
