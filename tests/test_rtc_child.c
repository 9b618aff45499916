/*
 * test_rtc_child.c — the AUTO tier's compiles in a child process (jit/rtc_child.h), on the CPU:
 * stand-in compilers hand back an image larger than a pipe's buffer, a failure with its log, or
 * die by a signal; a process that exits while its compile child runs still gets the CUBIN into
 * the disk cache; and NVRTC itself compiles in a child where it can be loaded.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dualbatch.h"
#include "jit/jit_cache.h"
#include "jit/rtc_child.h"
#include "jit/rtc_compile.h"
#include "temp_dirs.h"

enum { IMAGE_BYTES = 300000 }; /* more than a pipe holds (64 KiB) */

static unsigned char pattern(size_t i) { return (unsigned char)(i * 131u + 7u); }

static int succeeds(const char *src, int cc, void **image, size_t *size, char **log) {
  unsigned char *b = malloc(IMAGE_BYTES);
  for (size_t i = 0; i < IMAGE_BYTES; ++i) b[i] = pattern(i + (size_t)cc + strlen(src));
  *image = b, *size = IMAGE_BYTES;
  *log = strdup("compiled with no warnings");
  return DUAL_SUCCESS;
}

static int fails(const char *src, int cc, void **image, size_t *size, char **log) {
  (void)src, (void)cc;
  *image = NULL, *size = 0;
  *log = strdup("kernel.cu(3): error: identifier \"y\" is undefined");
  return DUAL_ERR_INTERNAL;
}

static int dies(const char *src, int cc, void **image, size_t *size, char **log) {
  (void)src, (void)cc, (void)image, (void)size, (void)log;
  raise(SIGKILL);
  return DUAL_SUCCESS;
}

static int slow(const char *src, int cc, void **image, size_t *size, char **log) {
  usleep(800000);
  return succeeds(src, cc, image, size, log);
}

static void temp_dir(char *dir, size_t cap, const char *name) {
  char tag[64];
  snprintf(tag, sizeof tag, "rtc-child-%s", name);
  cr_assert_eq(dual_test_temp_dir(dir, cap, tag), 0);
}

static void assert_pattern(const void *image, size_t size, const char *src, int cc) {
  cr_assert_eq(size, IMAGE_BYTES);
  const unsigned char *b = image;
  for (size_t i = 0; i < size; ++i)
    if (b[i] != pattern(i + (size_t)cc + strlen(src))) cr_assert_fail("byte %zu differs", i);
}

Test(rtc_child, image_and_log_come_back_and_the_cache_gets_the_image) {
  char dir[1024];
  temp_dir(dir, sizeof dir, "ok");
  const uint8_t key[32] = {1, 2, 3};
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  int st = dual_rtc_compile_in_child(succeeds, "source text", 90, dir, key, &image, &size, &log);
  cr_assert_eq(st, DUAL_SUCCESS);
  assert_pattern(image, size, "source text", 90);
  cr_assert_str_eq(log, "compiled with no warnings");
  free(image), free(log);
  cr_assert_eq(dual_jit_cache_load(dir, key, &image, &size, NULL), 0, "no cache entry");
  assert_pattern(image, size, "source text", 90);
  free(image);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
  /* no cache directory: the image still comes back */
  st = dual_rtc_compile_in_child(succeeds, "other", 80, NULL, key, &image, &size, &log);
  cr_assert_eq(st, DUAL_SUCCESS);
  assert_pattern(image, size, "other", 80);
  free(image), free(log);
}

Test(rtc_child, a_failure_keeps_its_status_and_log_and_stores_nothing) {
  char dir[1024];
  temp_dir(dir, sizeof dir, "fail");
  const uint8_t key[32] = {9};
  void *image = (void *)1;
  size_t size = 5;
  char *log = NULL;
  int st = dual_rtc_compile_in_child(fails, "x", 90, dir, key, &image, &size, &log);
  cr_assert_eq(st, DUAL_ERR_INTERNAL);
  cr_assert_null(image);
  cr_assert_eq(size, 0);
  cr_assert_str_eq(log, "kernel.cu(3): error: identifier \"y\" is undefined");
  free(log);
  cr_assert_eq(dual_jit_cache_load(dir, key, &image, &size, NULL), -1);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

Test(rtc_child, a_child_killed_by_a_signal_is_reported) {
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  int st = dual_rtc_compile_in_child(dies, "x", 90, NULL, (const uint8_t[32]){0}, &image, &size, &log);
  cr_assert_eq(st, DUAL_ERR_INTERNAL);
  cr_assert_null(image);
  cr_assert(log != NULL && strstr(log, "ended by signal 9") != NULL, "log: %s", log ? log : "(none)");
  free(log);
}

/* The process that asked for the compile exits while its child compiles: the exit is immediate
 * and normal, and the child still stores the CUBIN. */
static const char *g_dir;
static void *compile_thread(void *arg) {
  (void)arg;
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  const uint8_t key[32] = {4, 4};
  dual_rtc_compile_in_child(slow, "late", 90, g_dir, key, &image, &size, &log);
  return NULL;
}

Test(rtc_child, the_compile_outlives_a_process_that_exits) {
  char dir[1024];
  temp_dir(dir, sizeof dir, "exit");
  g_dir = dir;
  const pid_t kid = fork();
  cr_assert(kid >= 0);
  if (kid == 0) {
    pthread_t t;
    if (pthread_create(&t, NULL, compile_thread, NULL) != 0) _exit(3);
    usleep(200000); /* the compile child has started */
    _exit(0);        /* (not exit: the test runner's own exit handlers belong to its process) */
  }
  int ws = 0;
  cr_assert_eq(waitpid(kid, &ws, 0), kid);
  cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the process ended with 0x%x", ws);
  const uint8_t key[32] = {4, 4};
  void *image = NULL;
  size_t size = 0;
  int found = -1;
  for (int t = 0; t < 100 && found != 0; ++t) {
    found = dual_jit_cache_load(dir, key, &image, &size, NULL);
    if (found != 0) usleep(100000);
  }
  cr_assert_eq(found, 0, "the compile child stored no entry within 10 s");
  assert_pattern(image, size, "late", 90);
  free(image);
  cr_assert_eq(dual_test_remove_dir(dir), 0);
}

Test(rtc_child, nvrtc_compiles_in_a_child) {
  char why[600];
  if (dual_rtc_version(why, sizeof why) == 0) cr_skip_test("%s", why);
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  const char *src = "extern \"C\" __global__ void twice(double *x) { x[threadIdx.x] *= 2.0; }\n";
  int st = dual_rtc_compile_in_child(dual_rtc_compile, src, 90, NULL, (const uint8_t[32]){0}, &image,
                                     &size, &log);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", log ? log : "(no log)");
  cr_assert(size > 4 && memcmp(image, "\177ELF", 4) == 0, "the CUBIN is not an ELF image");
  free(image), free(log);
}
