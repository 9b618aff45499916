/*
 * test_cc_compile.c — the CPU compiled tier's compiler driver and loader (jit/cc_compile.h):
 * generated C that includes the library's own headers compiles, loads from memory and gives the
 * library's bits; a missing or failing compiler, a compile error and bytes that are not code
 * each come back as a clear failure; nothing is left in the temporary directory.
 */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dual/fn.h"
#include "jit/cc_compile.h"

/* TMPDIR as a fresh directory of its own (its path in dir), so that leftovers can be counted. */
static void private_tmpdir(char *dir, size_t cap) {
  snprintf(dir, cap, "/tmp/dualbatch-test-cc-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  setenv("TMPDIR", dir, 1);
}

static int entries(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

static void find_cc(dual_cc *cc) {
  char *why = NULL;
  unsetenv("DUALBATCH_CC");
  cr_assert_eq(dual_cc_find(cc, &why), 0, "%s", why ? why : "");
  cr_assert(strstr(cc->identity, DUAL_CC_FLAGS) != NULL && strstr(cc->identity, cc->flags) != NULL, "identity: %s",
            cc->identity);
}

Test(cc_compile, generated_code_with_the_librarys_headers_gives_its_bits) {
  char tmp[64];
  private_tmpdir(tmp, sizeof tmp);
  dual_cc cc;
  find_cc(&cc);
  /* the library's exp and sin from its own headers, inlined into a SIMD point loop (as the
   * tier's generated code will have them): the same bits as the library's out-of-line ones (the
   * same source, no contraction; the flags that let the loop vectorize change no result) */
  const char *src = "#include \"dual/fn_bits.h\"\n#undef DUAL_FN\n"
                    "#define DUAL_FN static inline __attribute__((always_inline))\n"
                    "#include \"dual/fn_exp.h\"\n#include \"dual/fn_trig.h\"\n"
                    "void many_exp(const double *restrict x, double *restrict y, int n);\n"
                    "void many_exp(const double *restrict x, double *restrict y, int n) {\n"
                    "#pragma omp simd\n"
                    "  for (int i = 0; i < n; ++i) y[i] = dual_exp(x[i]) + dual_sin(x[i]);\n}\n";
  void *image = NULL, *handle = NULL;
  size_t size = 0;
  char *log = NULL, *why = NULL;
  cr_assert_eq(dual_cc_compile(&cc, src, &image, &size, &log), 0, "%s", log ? log : "");
  free(log);
  cr_assert(size > 1000 && memcmp(image, "\x7f" "ELF", 4) == 0, "%zu bytes, not an ELF object", size);
  int fd = -1;
  cr_assert_eq(dual_cc_load(image, size, &handle, &fd, &why), 0, "%s", why ? why : "");
  free(image);
  void (*many_exp)(const double *, double *, int) = (void (*)(const double *, double *, int))dlsym(handle, "many_exp");
  cr_assert_not_null(many_exp);
  enum { N = 2000 };
  static double x[N], y[N];
  for (int i = 0; i < N; ++i) x[i] = -700.0 + 1400.0 * i / (N - 1) + 1e-3 * (i % 7);
  x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = 1e-310, x[4] = -0.0, x[5] = 709.5, x[6] = -745.5;
  many_exp(x, y, N);
  for (int i = 0; i < N; ++i) {
    const double want = dual_exp(x[i]) + dual_sin(x[i]);
    cr_assert(memcmp(&want, &y[i], sizeof want) == 0, "x = %.17g: %.17g, the library's %.17g", x[i], y[i], want);
  }
  dual_cc_unload(handle, fd);
  cr_assert_eq(entries(tmp), 0, "%d files left in the temporary directory", entries(tmp));
  rmdir(tmp);
}

Test(cc_compile, a_compile_error_comes_back_in_the_log) {
  char tmp[64];
  private_tmpdir(tmp, sizeof tmp);
  dual_cc cc;
  find_cc(&cc);
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  cr_assert_eq(dual_cc_compile(&cc, "int broken( {\n", &image, &size, &log), -1);
  cr_assert_null(image);
  cr_assert(log != NULL && strstr(log, "error") != NULL, "log: %s", log ? log : "(none)");
  free(log);
  cr_assert_eq(entries(tmp), 0);
  rmdir(tmp);
}

Test(cc_compile, a_missing_or_failing_compiler_is_named) {
  dual_cc cc;
  char *why = NULL;
  setenv("DUALBATCH_CC", "/nonexistent/dir/cc", 1);
  cr_assert_eq(dual_cc_find(&cc, &why), -1);
  cr_assert(why != NULL && strstr(why, "DUALBATCH_CC=/nonexistent/dir/cc") != NULL, "%s", why ? why : "");
  free(why);
  setenv("DUALBATCH_CC", "no-such-compiler-dualbatch", 1);
  cr_assert_eq(dual_cc_find(&cc, &why), -1);
  cr_assert(why != NULL && strstr(why, "not an executable") != NULL, "%s", why ? why : "");
  free(why);
  /* a program that runs but is no compiler: no identity, refused */
  setenv("DUALBATCH_CC", "false", 1);
  cr_assert_eq(dual_cc_find(&cc, &why), -1);
  cr_assert(why != NULL && strstr(why, "--version") != NULL, "%s", why ? why : "");
  free(why);
  unsetenv("DUALBATCH_CC");
}

Test(cc_compile, bytes_that_are_not_code_do_not_load) {
  void *handle = (void *)1;
  char *why = NULL;
  const char junk[] = "\x7f" "ELF but not really an object";
  int fd = 7;
  cr_assert_eq(dual_cc_load(junk, sizeof junk, &handle, &fd, &why), -1);
  cr_assert_null(handle);
  cr_assert_eq(fd, -1);
  cr_assert(why != NULL && strstr(why, "did not load") != NULL, "%s", why ? why : "");
  free(why);
}

/* Objects loaded one after another are each their own, the first unloaded or not: the loader
 * knows an object by its path, and a memory file's /proc/self/fd/N names the next one too once
 * N is closed (the CPU tier's second module ran the first's code before the memory file was kept
 * open). */
Test(cc_compile, objects_loaded_one_after_another_are_each_their_own) {
  dual_cc cc;
  find_cc(&cc);
  void *h[3];
  int fd[3];
  for (int k = 0; k < 3; ++k) {
    char src[128];
    snprintf(src, sizeof src, "int which(void);\nint which(void) { return %d; }\n", 100 + k);
    void *image = NULL;
    size_t size = 0;
    char *log = NULL, *why = NULL;
    cr_assert_eq(dual_cc_compile(&cc, src, &image, &size, &log), 0, "%s", log ? log : "");
    free(log);
    cr_assert_eq(dual_cc_load(image, size, &h[k], &fd[k], &why), 0, "%s", why ? why : "");
    free(image);
    if (k == 1) dual_cc_unload(h[0], fd[0]), h[0] = NULL, fd[0] = -1; /* a number closed, reused next */
  }
  for (int k = 1; k < 3; ++k) {
    int (*which)(void) = (int (*)(void))dlsym(h[k], "which");
    cr_assert_not_null(which);
    cr_assert_eq(which(), 100 + k, "object %d ran object %d's code", k, which() - 100);
  }
  dual_cc_unload(h[1], fd[1]);
  dual_cc_unload(h[2], fd[2]);
}
