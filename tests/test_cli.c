/*
 * test_cli.c — end-to-end tests of the `dualbatch` command-line tool: runs the built binary on
 * small temporary files and checks outputs against hand-derived values (f = x*y + c*sin(x):
 * df/dx = y + c*cos(x), df/dy = x), the f64 and bytecode round trips, flagged points, and every
 * error message of the contract (exit status and stderr text).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dualbatch.h" /* DUAL_VERSION_*: what --version must print */

#define CLI DUAL_BINARY_DIR "/tools/dualbatch"

static const char *const PROG_F = "input x; input y; param c; output f = x*y + c*sin(x)\n";
static const char *const PROG_R2 = "input x[2]\noutput r[2]\nr[0] = x[0]*x[1]\n"
                                   "r[1] = x[0] + x[1]^2\n";

/* Points (x, y, c) used throughout. */
static const double PTS[3][3] = {{1.0, 2.0, 3.0}, {0.5, -1.0, 2.0}, {-2.0, 0.25, -1.5}};
static const char *const PTS_CSV = "1,2,3\n0.5,-1,2\n-2,0.25,-1.5\n";

typedef struct run_result {
  int status; /* exit status, or -1 when the process did not exit normally */
  char *out;
  size_t out_len;
  char *err;
} run_result;

/* ------------------------------------------------------------------------------------------- */

static char *temp_path(void) {
  char *path = strdup("/tmp/dualbatch-cli-XXXXXX");
  cr_assert_not_null(path);
  int fd = mkstemp(path);
  cr_assert(fd >= 0, "mkstemp failed");
  close(fd);
  return path;
}

static char *temp_file(const void *data, size_t len) {
  char *path = temp_path();
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(data, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
  return path;
}

static char *temp_text(const char *text) { return temp_file(text, strlen(text)); }

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
  }
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

static void remove_file(char *path) {
  if (path) unlink(path);
  free(path);
}

/* Run `dualbatch ARGS` with stdin from `in_path` (NULL = /dev/null). */
static run_result run_cli(const char *args, const char *in_path) {
  char *out = temp_path(), *err = temp_path();
  size_t cap = strlen(args) + 1024;
  char *cmd = malloc(cap);
  snprintf(cmd, cap, "%s %s < %s > %s 2> %s", CLI, args, in_path ? in_path : "/dev/null", out, err);
  int w = system(cmd);
  run_result r;
  r.status = (w != -1 && WIFEXITED(w)) ? WEXITSTATUS(w) : -1;
  r.out = read_all(out, &r.out_len);
  r.err = read_all(err, NULL);
  free(cmd);
  remove_file(out);
  remove_file(err);
  return r;
}

static void free_result(run_result *r) {
  free(r->out);
  free(r->err);
}

/* Parse CSV output into rows[maxrows][maxcols]; returns rows, sets *cols to the first row's. */
static int parse_csv(const char *text, double *vals, int maxrows, int maxcols, int *cols) {
  int rows = 0;
  *cols = 0;
  const char *s = text;
  while (*s && rows < maxrows) {
    int k = 0;
    char *end;
    for (;;) {
      vals[rows * maxcols + k++] = strtod(s, &end);
      cr_assert(end != s, "not a number at: %.20s", s);
      s = end;
      if (*s != ',') break;
      s++;
    }
    cr_assert(*s == '\n', "expected end of line");
    s++;
    if (rows == 0) *cols = k;
    cr_assert_eq(k, *cols, "row %d has %d numbers, row 0 has %d", rows, k, *cols);
    rows++;
  }
  return rows;
}

static int count_lines(const char *text) {
  int n = 0;
  for (; *text; text++) n += *text == '\n';
  return n;
}

static void assert_close(double got, double want, const char *what) {
  double tol = 4e-15 * fmax(1.0, fabs(want));
  cr_assert(fabs(got - want) <= tol, "%s: got %.17g, want %.17g", what, got, want);
}

static void assert_err_contains(const run_result *r, const char *text) {
  cr_assert(strstr(r->err, text) != NULL, "stderr lacks \"%s\":\n%s", text, r->err);
}

/* A run that must fail: exit status, "dualbatch: " prefix, and the message. */
static void assert_fails(const run_result *r, int status, const char *text) {
  cr_assert_eq(r->status, status, "exit status %d, want %d; stderr:\n%s", r->status, status,
               r->err);
  cr_assert(strncmp(r->err, "dualbatch: ", 11) == 0, "stderr must start with 'dualbatch: ':\n%s",
            r->err);
  assert_err_contains(r, text);
}

static double f_val(const double *p) { return p[0] * p[1] + p[2] * sin(p[0]); }
static double f_dx(const double *p) { return p[1] + p[2] * cos(p[0]); }
static double f_dy(const double *p) { return p[0]; }

/* Run `verb PROG [extra]` on PTS_CSV; returns the result (checked for exit 0). */
static run_result run_verb(const char *verb, const char *prog, const char *input,
                           const char *extra) {
  char *pp = temp_text(prog), *in = temp_text(input);
  char args[512];
  snprintf(args, sizeof args, "%s %s %s", verb, pp, extra ? extra : "");
  run_result r = run_cli(args, in);
  cr_assert_eq(r.status, 0, "%s failed (%d):\n%s", verb, r.status, r.err);
  remove_file(pp);
  remove_file(in);
  return r;
}

/* ------------------------------------------------------------------------------------------- */

Test(cli, eval_matches_hand_values) {
  run_result r = run_verb("eval", PROG_F, PTS_CSV, NULL);
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 1);
  for (int b = 0; b < 3; b++) assert_close(v[b * 8], f_val(PTS[b]), "f");
  cr_assert_str_empty(r.err);
  free_result(&r);
}

Test(cli, jacobian_columns) {
  run_result r = run_verb("jacobian", PROG_F, PTS_CSV, NULL);
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 3); /* f, df/dx, df/dy */
  for (int b = 0; b < 3; b++) {
    assert_close(v[b * 8 + 0], f_val(PTS[b]), "f");
    assert_close(v[b * 8 + 1], f_dx(PTS[b]), "df/dx");
    assert_close(v[b * 8 + 2], f_dy(PTS[b]), "df/dy");
  }
  free_result(&r);
}

Test(cli, jacobian_row_major_two_outputs) {
  /* r0 = x0*x1, r1 = x0 + x1^2: J = [[x1, x0], [1, 2*x1]] */
  run_result r = run_verb("jacobian", PROG_R2, "3,5\n-1,0.5\n", NULL);
  double v[2 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 2, 8, &cols), 2);
  cr_assert_eq(cols, 6);
  const double x[2][2] = {{3, 5}, {-1, 0.5}};
  for (int b = 0; b < 2; b++) {
    const double *o = v + b * 8, *p = x[b];
    const double want[6] = {p[0] * p[1], p[0] + p[1] * p[1], p[1], p[0], 1.0, 2.0 * p[1]};
    for (int k = 0; k < 6; k++) assert_close(o[k], want[k], "r2 jacobian");
  }
  free_result(&r);
}

Test(cli, gradient) {
  run_result r = run_verb("gradient", PROG_F, PTS_CSV, NULL);
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 3);
  for (int b = 0; b < 3; b++) {
    assert_close(v[b * 8 + 0], f_val(PTS[b]), "f");
    assert_close(v[b * 8 + 1], f_dx(PTS[b]), "g0");
    assert_close(v[b * 8 + 2], f_dy(PTS[b]), "g1");
  }
  free_result(&r);
}

/* sgrad of E[x exp(normal(y, c))] = x e^{y + c^2/2}: gradient (e^{y + c^2/2}, x e^{y + c^2/2}),
 * each within 4 standard errors; records are keyed by their number, so the same records give the
 * same numbers read in one chunk or as a prefix; the option checks. */
Test(cli, sgrad) {
  static const char *prog = "input x; input y; param c; output f = x * exp(normal(y, c))\n";
  run_result r = run_verb("sgrad", prog, PTS_CSV, "--samples 20000 --seed 5");
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 5);
  for (int b = 0; b < 3; b++) {
    const double *q = PTS[b], e = exp(q[1] + q[2] * q[2] / 2), want[2] = {e, q[0] * e};
    for (int j = 0; j < 2; j++)
      cr_assert(fabs(v[b * 8 + 1 + j] - want[j]) <= 4 * v[b * 8 + 3 + j], "record %d g%d %.8g want %.8g SE %.3g", b,
                j, v[b * 8 + 1 + j], want[j], v[b * 8 + 3 + j]);
  }
  run_result one = run_verb("sgrad", prog, "1,2,3\n", "--samples 20000 --seed 5");
  cr_assert(strncmp(one.out, r.out, one.out_len) == 0, "first record differs:\n%s\n%s", one.out, r.out);
  run_result anti = run_verb("sgrad", prog, PTS_CSV, "--samples 100 --seed 5 --antithetic");
  cr_assert_eq(parse_csv(anti.out, v, 3, 8, &cols), 3);
  char *pp = temp_text(prog), *in = temp_text(PTS_CSV), args[512];
  snprintf(args, sizeof args, "sgrad %s --samples 100", pp);
  run_result bad = run_cli(args, in);
  assert_fails(&bad, 2, "sgrad needs --samples S and --seed K");
  snprintf(args, sizeof args, "sgrad %s --samples 1 --seed 3", pp);
  run_result few = run_cli(args, in);
  assert_fails(&few, 2, "--samples: '1'");
  snprintf(args, sizeof args, "gradient %s --seed 3", pp);
  run_result wrong = run_cli(args, in);
  assert_fails(&wrong, 2, "option --seed does not apply to 'gradient'");
  remove_file(pp), remove_file(in);
  free_result(&r), free_result(&one), free_result(&anti), free_result(&bad), free_result(&few), free_result(&wrong);
}

/* Directions of the jvp and hvp tests, and the records x, y, c, v0, v1 that carry them. */
static const double VDIR[3][2] = {{1, 0}, {0.5, 2}, {-3, 0.25}};
static void records_with_directions(char *input, size_t cap) {
  size_t k = 0;
  for (int b = 0; b < 3; b++)
    k += (size_t)snprintf(input + k, cap - k, "%.17g,%.17g,%.17g,%.17g,%.17g\n", PTS[b][0],
                          PTS[b][1], PTS[b][2], VDIR[b][0], VDIR[b][1]);
}

Test(cli, jvp) {
  const double(*vdir)[2] = VDIR;
  char input[512];
  records_with_directions(input, sizeof input);
  run_result r = run_verb("jvp", PROG_F, input, NULL);
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 2);
  for (int b = 0; b < 3; b++) {
    assert_close(v[b * 8], f_val(PTS[b]), "f");
    assert_close(v[b * 8 + 1], f_dx(PTS[b]) * vdir[b][0] + f_dy(PTS[b]) * vdir[b][1], "Jv");
  }
  free_result(&r);
}

/* f = x*y + c*sin(x): H = [[-c sin x, 1], [1, 0]] by hand. */
Test(cli, hessian) {
  run_result r = run_verb("hessian", PROG_F, PTS_CSV, NULL);
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 7); /* f, g0, g1, H00, H01, H10, H11 */
  for (int b = 0; b < 3; b++) {
    const double *o = v + b * 8, *p = PTS[b];
    const double want[7] = {f_val(p), f_dx(p), f_dy(p), -p[2] * sin(p[0]), 1.0, 1.0, 0.0};
    for (int k = 0; k < 7; k++) assert_close(o[k], want[k], "hessian record");
  }
  free_result(&r);
}

Test(cli, hvp) {
  /* output f, g0, g1, (H v)0, (H v)1 */
  const double(*vdir)[2] = VDIR;
  char input[512];
  records_with_directions(input, sizeof input);
  run_result r = run_verb("hvp", PROG_F, input, NULL);
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 5);
  for (int b = 0; b < 3; b++) {
    const double *o = v + b * 8, *p = PTS[b];
    const double want[5] = {f_val(p), f_dx(p), f_dy(p),
                            -p[2] * sin(p[0]) * vdir[b][0] + vdir[b][1], vdir[b][0]};
    for (int j = 0; j < 5; j++) assert_close(o[j], want[j], "hvp record");
  }
  free_result(&r);
}

Test(cli, comments_blank_lines_spaces_crlf) {
  run_result a = run_verb("jacobian", PROG_F, PTS_CSV, NULL);
  run_result b = run_verb("jacobian", PROG_F,
                          "# x, y, c\n\n  1 , 2,3\r\n   \n\t# another comment\n0.5,\t-1 , 2\n"
                          "-2,0.25,-1.5",
                          NULL);
  cr_assert_str_eq(a.out, b.out);
  free_result(&a);
  free_result(&b);
}

/* Separators (',' or ';' or spaces and tabs, decided per line) and a header row (skipped when it
 * has no number, or when --header says so) read as the same three points. */
Test(cli, separators_and_header_rows) {
  run_result a = run_verb("jacobian", PROG_F, PTS_CSV, NULL);
  static const char *const same[] = {
      "x;y;c\n1;2;3\n0.5;-1;2\n-2;0.25;-1.5\n",
      "x y c\n1 2 3\n 0.5\t-1   2 \n-2 0.25 -1.5\n",
      "# comment first\n\"x\", \"y\", \"c\"\n1,2,3\n0.5 -1 2\n-2;0.25;-1.5\n",
  };
  for (int k = 0; k < 3; ++k) {
    run_result b = run_verb("jacobian", PROG_F, same[k], NULL);
    cr_assert_str_eq(a.out, b.out, "input %d", k);
    free_result(&b);
  }
  run_result h = run_verb("jacobian", PROG_F, "7,7,7\n1,2,3\n0.5,-1,2\n-2,0.25,-1.5\n", "--header");
  cr_assert_str_eq(a.out, h.out, "--header skips a numeric first line");
  free_result(&h);
  /* a first line with a number is data: a bad field there is an error, not a header */
  char *pp = temp_text(PROG_F), *in = temp_text("x,2,3\n1,2,3\n"), args[512];
  snprintf(args, sizeof args, "eval %s", pp);
  run_result e = run_cli(args, in);
  assert_fails(&e, 1, "'x' is not a number");
  free_result(&e);
  remove_file(pp), remove_file(in);
  free_result(&a);
}

Test(cli, f64_round_trip_equals_csv) {
  char *pp = temp_text(PROG_F);
  char *in = temp_file(PTS, sizeof PTS);
  char *csv_in = temp_text(PTS_CSV);
  char args[512];
  snprintf(args, sizeof args, "jacobian %s --format f64 --in %s", pp, in);
  run_result rb = run_cli(args, NULL);
  cr_assert_eq(rb.status, 0, "%s", rb.err);
  cr_assert_eq(rb.out_len, 3 * 3 * sizeof(double));
  snprintf(args, sizeof args, "jacobian %s --in=%s", pp, csv_in);
  run_result rc = run_cli(args, NULL);
  cr_assert_eq(rc.status, 0, "%s", rc.err);
  double v[3 * 8], raw[9];
  int cols;
  cr_assert_eq(parse_csv(rc.out, v, 3, 8, &cols), 3);
  memcpy(raw, rb.out, sizeof raw);
  for (int b = 0; b < 3; b++)
    for (int k = 0; k < 3; k++)
      cr_assert(memcmp(&raw[b * 3 + k], &v[b * 8 + k], sizeof(double)) == 0,
                "f64 and csv differ at point %d, %d: %.17g vs %.17g", b, k, raw[b * 3 + k],
                v[b * 8 + k]);
  free_result(&rb);
  free_result(&rc);
  remove_file(pp);
  remove_file(in);
  remove_file(csv_in);
}

Test(cli, options_before_or_after_program_and_out_file) {
  char *pp = temp_text(PROG_F), *in = temp_text(PTS_CSV), *out = temp_path();
  char args[512];
  snprintf(args, sizeof args, "--threads 1 --width 2 eval --out %s %s --in %s", out, pp, in);
  run_result r = run_cli(args, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_eq(r.out_len, 0);
  char *text = read_all(out, NULL);
  run_result ref = run_verb("eval", PROG_F, PTS_CSV, "--device cpu --threads=2 --width=1");
  cr_assert_str_eq(text, ref.out);
  cr_assert_eq(count_lines(text), 3);
  free(text);
  free_result(&r);
  free_result(&ref);
  remove_file(pp);
  remove_file(in);
  remove_file(out);
}

Test(cli, compiled_bytecode_round_trip) {
  char *pp = temp_text(PROG_F), *bc = temp_path(), *in = temp_text(PTS_CSV);
  char args[512];
  snprintf(args, sizeof args, "compile %s -o %s", pp, bc);
  run_result c = run_cli(args, NULL);
  cr_assert_eq(c.status, 0, "%s", c.err);
  size_t len;
  free(read_all(bc, &len));
  cr_assert_gt(len, 0);
  snprintf(args, sizeof args, "jacobian %s --in %s", pp, in);
  run_result a = run_cli(args, NULL);
  snprintf(args, sizeof args, "jacobian %s --in %s", bc, in);
  run_result b = run_cli(args, NULL);
  cr_assert_eq(a.status, 0, "%s", a.err);
  cr_assert_eq(b.status, 0, "%s", b.err);
  cr_assert_str_eq(a.out, b.out);
  free_result(&a);
  free_result(&b);
  free_result(&c);
  remove_file(pp);
  remove_file(bc);
  remove_file(in);
}

Test(cli, disasm_info_help) {
  char *pp = temp_text(PROG_F);
  char args[512];
  snprintf(args, sizeof args, "disasm %s", pp);
  run_result d = run_cli(args, NULL);
  cr_assert_eq(d.status, 0, "%s", d.err);
  cr_assert(strstr(d.out, "sin") != NULL, "%s", d.out);
  cr_assert_gt(count_lines(d.out), 3);
  run_result i = run_cli("info", NULL);
  cr_assert_eq(i.status, 0, "%s", i.err);
  cr_assert(strstr(i.out, "CUDA") != NULL, "%s", i.out);
  run_result h = run_cli("--help", NULL);
  cr_assert_eq(h.status, 0);
  cr_assert(strstr(h.out, "jacobian") != NULL);
  run_result ver = run_cli("--version", NULL); /* the header's version, as the library reports it */
  char want[64];
  snprintf(want, sizeof want, "dualbatch %d.%d.%d (header %d.%d.%d)\n", DUAL_VERSION_MAJOR, DUAL_VERSION_MINOR,
           DUAL_VERSION_PATCH, DUAL_VERSION_MAJOR, DUAL_VERSION_MINOR, DUAL_VERSION_PATCH);
  cr_assert_eq(ver.status, 0, "%s", ver.err);
  cr_assert(strncmp(ver.out, want, strlen(want)) == 0 && strstr(ver.out, "OpenMP") != NULL, "%s", ver.out);
  free_result(&ver);
  run_result hv = run_cli("help jvp", NULL);
  cr_assert_eq(hv.status, 0);
  cr_assert(strstr(hv.out, "usage: dualbatch jvp PROGRAM") != NULL, "%s", hv.out);
  free_result(&d);
  free_result(&i);
  free_result(&h);
  free_result(&hv);
  remove_file(pp);
}

/* The compiled tier's cache verbs, on a private directory, and --verbose / --tier on the CPU. */
Test(cli, cache_verbs_verbose_and_tier) {
  char dir[] = "/tmp/dual_cli_cache_XXXXXX";
  cr_assert(mkdtemp(dir) != NULL);
  char args[512];
  snprintf(args, sizeof args, "cache show"), setenv("DUALBATCH_CACHE_DIR", dir, 1);
  run_result s = run_cli(args, NULL);
  cr_assert_eq(s.status, 0, "%s", s.err);
  cr_assert(strstr(s.out, dir) != NULL && strstr(s.out, "0 entries") != NULL, "%s", s.out);
  char entry[256];
  snprintf(entry, sizeof entry, "%s/%064d.cubin", dir, 0);
  FILE *fp = fopen(entry, "w");
  cr_assert(fp != NULL);
  fputs("not a real entry", fp);
  fclose(fp);
  run_result i = run_cli("info", NULL);
  cr_assert(strstr(i.out, "kernel cache:") != NULL && strstr(i.out, "1 entry") != NULL, "%s", i.out);
  run_result c = run_cli("cache clear", NULL);
  cr_assert_eq(c.status, 0, "%s", c.err);
  cr_assert(strstr(c.out, "removed 1 entry") != NULL, "%s", c.out);
  cr_assert(access(entry, F_OK) != 0, "cache clear left the entry");
  run_result bad = run_cli("cache wipe", NULL);
  assert_fails(&bad, 2, "not one of show, clear");
  unsetenv("DUALBATCH_CACHE_DIR");
  rmdir(dir);
  run_result v = run_verb("eval", PROG_F, PTS_CSV, "--device cpu --tier compile --verbose");
  cr_assert(strstr(v.err, "ran on cpu") != NULL, "%s", v.err);
  char *pp = temp_text(PROG_F);
  snprintf(args, sizeof args, "eval %s --tier fast", pp);
  run_result t = run_cli(args, NULL);
  assert_fails(&t, 2, "--tier");
  remove_file(pp);
  free_result(&s), free_result(&i), free_result(&c), free_result(&bad), free_result(&v), free_result(&t);
}

Test(cli, empty_input_gives_empty_output) {
  run_result r = run_verb("eval", PROG_F, "# nothing here\n\n", NULL);
  cr_assert_eq(r.out_len, 0);
  free_result(&r);
}

Test(cli, flagged_points_are_written_and_warned) {
  char input[4096] = "1\n-1\n";
  for (int i = 0; i < 12; i++) strcat(input, "-2\n");
  run_result r = run_verb("eval", "input x; output f = log(x)\n", input, NULL);
  cr_assert_eq(count_lines(r.out), 14);
  cr_assert(strncmp(r.out, "0\n", 2) == 0, "%s", r.out);
  assert_err_contains(&r, "dualbatch: warning: record 2 (line 2): ");
  assert_err_contains(&r, "NaN");
  cr_assert(strstr(r.err, "record 11 ") != NULL);
  cr_assert(strstr(r.err, "record 12 ") == NULL, "only the first 10 are listed:\n%s", r.err);
  assert_err_contains(&r, "13 of 14 records flagged");
  free_result(&r);
}

/* ----------------------------------------------------------------------------- error cases */

static run_result run_fail(const char *verb, const char *prog, const char *input,
                           const char *extra) {
  char *pp = temp_text(prog), *in = temp_text(input);
  char args[512];
  snprintf(args, sizeof args, "%s %s %s", verb, pp, extra ? extra : "");
  run_result r = run_cli(args, in);
  remove_file(pp);
  remove_file(in);
  return r;
}

Test(cli_errors, wrong_field_count) {
  run_result r = run_fail("eval", PROG_F, "# header\n1,2,3\n\n4,5\n", NULL);
  assert_fails(&r, 1, "record 2 (line 4): expected 3 numbers (2 inputs, 1 param), found 2");
  assert_err_contains(&r, "0 records were written");
  cr_assert_eq(r.out_len, 0, "no partial output");
  free_result(&r);
  r = run_fail("jvp", PROG_F, "1,2,3,4\n", NULL);
  assert_fails(&r, 1, "record 1 (line 1): expected 5 numbers (2 inputs, 1 param, 2 directions)");
  free_result(&r);
}

Test(cli_errors, bad_number) {
  run_result r = run_fail("eval", PROG_F, "1,2,3\n1, abc ,3\n", NULL);
  assert_fails(&r, 1, "line 2, field 2: 'abc' is not a number");
  free_result(&r);
  r = run_fail("eval", PROG_F, "1,,3\n", NULL);
  assert_fails(&r, 1, "line 1, field 2: empty");
  free_result(&r);
}

Test(cli_errors, f64_size_not_multiple) {
  char *pp = temp_text(PROG_F);
  char *in = temp_file(PTS, sizeof PTS - 8);
  char args[512];
  snprintf(args, sizeof args, "eval %s --format f64 --in %s", pp, in);
  run_result r = run_cli(args, NULL);
  assert_fails(&r, 1, "not a multiple of the record size, 24 bytes");
  cr_assert_eq(r.out_len, 0);
  free_result(&r);
  /* the same through a pipe (size unknown up front) */
  snprintf(args, sizeof args, "eval %s --format f64", pp);
  r = run_cli(args, in);
  assert_fails(&r, 1, "64 bytes is not a multiple of the record size");
  free_result(&r);
  remove_file(pp);
  remove_file(in);
}

Test(cli_errors, incomplete_output_is_reported) {
  /* more than one chunk (65536 points), then a bad record */
  size_t n = 70000, cap = n * 8 + 64, k = 0;
  char *input = malloc(cap);
  for (size_t i = 0; i < n; i++) k += (size_t)snprintf(input + k, cap - k, "%zu,1,0\n", i % 7);
  snprintf(input + k, cap - k, "1,2\n");
  char *pp = temp_text(PROG_F), *in = temp_text(input), *out = temp_path();
  char args[512];
  snprintf(args, sizeof args, "eval %s --in %s --out %s", pp, in, out);
  run_result r = run_cli(args, NULL);
  assert_fails(&r, 1, "record 70001 (line 70001): expected 3 numbers");
  assert_err_contains(&r, "65536 records were written to ");
  char *text = read_all(out, NULL);
  cr_assert_eq(count_lines(text), 65536);
  free(text);
  free(input);
  free_result(&r);
  remove_file(pp);
  remove_file(in);
  remove_file(out);
}

Test(cli_errors, unknown_verb_and_option_suggest) {
  run_result r = run_cli("jacobain prog", NULL);
  assert_fails(&r, 2, "unknown command 'jacobain'; did you mean 'jacobian'?");
  free_result(&r);
  r = run_cli("eval prog --widht 4", NULL);
  assert_fails(&r, 2, "unknown option '--widht'; did you mean '--width'?");
  free_result(&r);
  r = run_cli("eval prog --format cvs", NULL);
  assert_fails(&r, 2, "did you mean 'csv'?");
  free_result(&r);
  r = run_cli("", NULL);
  assert_fails(&r, 2, "missing command");
  free_result(&r);
  r = run_cli("info --in x", NULL);
  assert_fails(&r, 2, "option --in does not apply to 'info'");
  free_result(&r);
  static const char *bad_gpu[] = {"eval prog --device gpu:", "eval prog --device gpu:x", "eval prog --device gpu:-1",
                                  "eval prog --device gpu:5000"};
  for (int i = 0; i < 4; ++i) {
    r = run_cli(bad_gpu[i], NULL);
    assert_fails(&r, 2, "is not gpu:N with N a device number");
    free_result(&r);
  }
}

Test(cli_errors, bad_width_and_threads) {
  const char *bad[] = {"--width 3", "--width 64", "--width x", "--width -1"};
  for (int i = 0; i < 4; i++) {
    run_result r = run_fail("eval", PROG_F, PTS_CSV, bad[i]);
    assert_fails(&r, 2, "--width: ");
    free_result(&r);
  }
  const char *badt[] = {"--threads -2", "--threads two", "--threads 1.5", "--threads"};
  for (int i = 0; i < 4; i++) {
    run_result r = run_fail("eval", PROG_F, PTS_CSV, badt[i]);
    assert_fails(&r, 2, "--threads");
    free_result(&r);
  }
}

Test(cli_errors, unreadable_files) {
  char *pp = temp_text(PROG_F);
  char args[512];
  snprintf(args, sizeof args, "eval %s --in /nonexistent/points.csv", pp);
  run_result r = run_cli(args, NULL);
  assert_fails(&r, 1, "cannot open input '/nonexistent/points.csv': No such file");
  free_result(&r);
  r = run_cli("eval /nonexistent/prog.dual", NULL);
  assert_fails(&r, 1, "cannot open program '/nonexistent/prog.dual'");
  free_result(&r);
  snprintf(args, sizeof args, "eval %s --out /nonexistent/out.csv", pp);
  r = run_cli(args, NULL);
  assert_fails(&r, 1, "cannot open output '/nonexistent/out.csv'");
  free_result(&r);
  remove_file(pp);
}

Test(cli_errors, out_equals_in_is_refused) {
  char *pp = temp_text(PROG_F), *in = temp_text(PTS_CSV);
  char args[512];
  snprintf(args, sizeof args, "eval %s --in %s --out %s", pp, in, in);
  run_result r = run_cli(args, NULL);
  assert_fails(&r, 1, "is the input file");
  char *text = read_all(in, NULL);
  cr_assert_str_eq(text, PTS_CSV);
  free(text);
  free_result(&r);
  remove_file(pp);
  remove_file(in);
}

Test(cli_errors, compile_error_is_printed_as_is) {
  char *pp = temp_text("input x\noutput f = x * sinn(x)\n");
  char args[512];
  snprintf(args, sizeof args, "eval %s", pp);
  run_result r = run_cli(args, NULL);
  assert_fails(&r, 1, "has errors:");
  char where[600];
  snprintf(where, sizeof where, "%s:2:", pp);
  assert_err_contains(&r, where);
  assert_err_contains(&r, "^");
  assert_err_contains(&r, "sin");
  cr_assert_eq(r.out_len, 0);
  free_result(&r);
  remove_file(pp);
}

Test(cli_errors, gpu_in_cpu_build) {
  for (int k = 0; k < 2; ++k) {
    run_result r = run_fail("eval", PROG_F, PTS_CSV, k == 0 ? "--device gpu" : "--device gpu:0");
    if (r.status == 0) { /* a CUDA build on a GPU machine: fine */
      free_result(&r);
      continue;
    }
    assert_fails(&r, 1, "dualbatch: ");
    cr_assert_eq(r.out_len, 0);
    free_result(&r);
  }
}

Test(cli, vjp_and_reverse_mode) {
  /* PROG_R2: r0 = x0*x1, r1 = x0 + x1^2; records x0, x1, u0, u1; output r0, r1, u^T J */
  run_result r = run_verb("vjp", PROG_R2, "3,5,1,0.5\n-1,0.5,2,-1\n", NULL);
  double v[2 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 2, 8, &cols), 2);
  cr_assert_eq(cols, 4);
  const double in[2][4] = {{3, 5, 1, 0.5}, {-1, 0.5, 2, -1}};
  for (int b = 0; b < 2; b++) {
    const double *x = in[b], *u = in[b] + 2, *o = v + b * 8;
    const double want[4] = {x[0] * x[1], x[0] + x[1] * x[1], u[0] * x[1] + u[1],
                            u[0] * x[0] + u[1] * 2 * x[1]};
    for (int k = 0; k < 4; k++) assert_close(o[k], want[k], "vjp record");
  }
  free_result(&r);
  run_result a = run_verb("jacobian", PROG_F, PTS_CSV, NULL);
  run_result b = run_verb("jacobian", PROG_F, PTS_CSV, "--mode reverse");
  double va[3 * 8], vb[3 * 8];
  cr_assert_eq(parse_csv(a.out, va, 3, 8, &cols), 3);
  cr_assert_eq(parse_csv(b.out, vb, 3, 8, &cols), 3);
  for (int k = 0; k < 3 * 8; k += 8)
    for (int j = 0; j < 3; j++) assert_close(vb[k + j], va[k + j], "reverse jacobian");
  free_result(&a), free_result(&b);
  /* hessian records (f, 2 gradient entries, 4 Hessian entries) by forward-over-reverse */
  a = run_verb("hessian", PROG_F, PTS_CSV, "--mode forward");
  b = run_verb("hessian", PROG_F, PTS_CSV, "--mode reverse");
  cr_assert_eq(parse_csv(a.out, va, 3, 8, &cols), 3);
  cr_assert_eq(cols, 7);
  cr_assert_eq(parse_csv(b.out, vb, 3, 8, &cols), 3);
  for (int k = 0; k < 3 * 8; k += 8)
    for (int j = 0; j < 7; j++) assert_close(vb[k + j], va[k + j], "reverse hessian");
  free_result(&a), free_result(&b);
  run_result e = run_fail("gradient", PROG_F, PTS_CSV, "--mode sideways");
  assert_fails(&e, 2, "--mode");
  free_result(&e);
}

Test(cli_errors, unsupported_verbs_and_shapes) {
  run_result r = run_fail("hessian", PROG_R2, "1,2\n", NULL);
  assert_fails(&r, 1, "hessian needs a scalar program (m = 1)");
  free_result(&r);
  r = run_fail("gradient", PROG_R2, "1,2\n", NULL);
  assert_fails(&r, 1, "gradient needs a scalar program (m = 1)");
  free_result(&r);
  r = run_cli("compile prog", NULL);
  assert_fails(&r, 2, "-o FILE");
  free_result(&r);
}

Test(cli, solve_and_lsq) {
  /* solve: x^2 = a per record from the start given: 2 and 3; a = -1 has no real root */
  run_result r = run_verb("solve", "input x; param a\noutput f = x^2 - a\n", "1,4\n3,9\n1,-1\n", NULL);
  double v[3 * 8];
  int cols;
  cr_assert_eq(parse_csv(r.out, v, 3, 8, &cols), 3);
  cr_assert_eq(cols, 4);
  assert_close(v[0], 2.0, "root of 4");
  assert_close(v[8], 3.0, "root of 9");
  cr_assert(v[1] == 0 && v[9] == 0, "status words %g %g", v[1], v[9]);
  cr_assert(v[2] >= 1 && v[3] <= 1e-15 && v[11] <= 1e-14, "steps %g, ||F|| %g %g", v[2], v[3], v[11]);
  cr_assert(v[17] != 0 && v[19] >= 1 - 1e-12, "no root: status %g, ||F|| %g", v[17], v[19]);
  assert_err_contains(&r, "2 of 3 records converged");
  free_result(&r);
  /* lsq: a + b t through (1, 1), (2, 3), (3, 4): b = 1.5, a = -1/3 */
  r = run_verb("lsq", "input a; input b\noutput r[3]\nr[0] = a + b - 1; r[1] = a + 2 * b - 3; r[2] = a + 3 * b - 4\n",
               "0,0\n", NULL);
  cr_assert_eq(parse_csv(r.out, v, 1, 8, &cols), 1);
  cr_assert_eq(cols, 5);
  cr_assert(fabs(v[0] + 1.0 / 3) <= 1e-12 && fabs(v[1] - 1.5) <= 1e-12, "(%.17g, %.17g)", v[0], v[1]);
  cr_assert(v[2] == 0 && fabs(v[4] - sqrt(1.0 / 6)) <= 1e-12, "status %g, ||F|| %.17g", v[2], v[4]);
  cr_assert_str_empty(r.err);
  free_result(&r);
  /* the shapes */
  char *pp = temp_text("input x; input y\noutput f = x + y\n"), *in = temp_text("1,2\n"), args[512];
  snprintf(args, sizeof args, "solve %s", pp);
  run_result bad = run_cli(args, in);
  assert_fails(&bad, 1, "solve needs a square system");
  snprintf(args, sizeof args, "lsq %s", pp);
  run_result bad2 = run_cli(args, in);
  assert_fails(&bad2, 1, "lsq needs at least as many outputs as inputs");
  remove_file(pp), remove_file(in);
  free_result(&bad), free_result(&bad2);
}

Test(cli, calibrate_measures_and_stores_the_dispatch_figures) {
  char dir[] = "/tmp/dual_cli_calib_XXXXXX";
  cr_assert(mkdtemp(dir) != NULL);
  setenv("DUALBATCH_CACHE_DIR", dir, 1);
  run_result r = run_cli("calibrate --device cpu --threads 1", NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "dualbatch calibration 2\nthreads 1\ngpu 0\n") == r.out, "%s", r.out);
  cr_assert(strstr(r.out, "cpu_arith_s ") != NULL && strstr(r.out, "cpu_special_s ") != NULL, "%s", r.out);
  run_result i = run_cli("cache show", NULL); /* the figures are an entry of the cache */
  cr_assert(strstr(i.out, "1 entry") != NULL, "%s", i.out);
  run_result bad = run_cli("calibrate --threads 0x", NULL);
  cr_assert_neq(bad.status, 0);
  free_result(&r), free_result(&i), free_result(&bad);
  unsetenv("DUALBATCH_CACHE_DIR");
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}
