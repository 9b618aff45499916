/*
 * rtc_compile.c — the compiled tier's compiler (rtc_compile.h): NVRTC through dlopen, its entry
 * points declared here (no nvrtc.h needed to build), one load per process: the library file
 * DUALBATCH_NVRTC names if it is set (so "none" runs without NVRTC), else libnvrtc.so.13, .12,
 * .so from the loader's path.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "jit/rtc_compile.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dl_load.h"
#include "dualbatch.h"
#include "jit/rtc_files.h"
#include "jit/sha256.h"

#ifndef DUAL_RTC_FP_OPTIONS /* set by src/CMakeLists.txt from the interpreter's nvcc options */
#define DUAL_RTC_FP_OPTIONS "--fmad=false"
#endif

typedef struct _nvrtcProgram *nvrtc_prog;
typedef int (*nvrtc_version_fn)(int *, int *);
typedef int (*nvrtc_create_fn)(nvrtc_prog *, const char *, const char *, int, const char *const *,
                               const char *const *);
typedef int (*nvrtc_compile_fn)(nvrtc_prog, int, const char *const *);
typedef int (*nvrtc_size_fn)(nvrtc_prog, size_t *);
typedef int (*nvrtc_get_fn)(nvrtc_prog, char *);
typedef int (*nvrtc_destroy_fn)(nvrtc_prog *);
typedef const char *(*nvrtc_error_fn)(int);

static struct {
  pthread_once_t once;
  void *lib;
  int version;
  char why[512];
  nvrtc_create_fn create;
  nvrtc_compile_fn compile;
  nvrtc_size_fn log_size, cubin_size;
  nvrtc_get_fn log, cubin;
  nvrtc_destroy_fn destroy;
  nvrtc_error_fn error;
} rtc = {PTHREAD_ONCE_INIT, NULL, 0, "", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

static void load_nvrtc(void) {
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  /* DUALBATCH_NVRTC: that file, or none */
  rtc.lib = dual_dl_load("DUALBATCH_NVRTC", names, 3, rtc.why, sizeof rtc.why);
  if (rtc.lib == NULL) return;
  nvrtc_version_fn version = (nvrtc_version_fn)dlsym(rtc.lib, "nvrtcVersion");
  rtc.create = (nvrtc_create_fn)dlsym(rtc.lib, "nvrtcCreateProgram");
  rtc.compile = (nvrtc_compile_fn)dlsym(rtc.lib, "nvrtcCompileProgram");
  rtc.log_size = (nvrtc_size_fn)dlsym(rtc.lib, "nvrtcGetProgramLogSize");
  rtc.log = (nvrtc_get_fn)dlsym(rtc.lib, "nvrtcGetProgramLog");
  rtc.cubin_size = (nvrtc_size_fn)dlsym(rtc.lib, "nvrtcGetCUBINSize");
  rtc.cubin = (nvrtc_get_fn)dlsym(rtc.lib, "nvrtcGetCUBIN");
  rtc.destroy = (nvrtc_destroy_fn)dlsym(rtc.lib, "nvrtcDestroyProgram");
  rtc.error = (nvrtc_error_fn)dlsym(rtc.lib, "nvrtcGetErrorString");
  int major = 0, minor = 0;
  if (!version || !rtc.create || !rtc.compile || !rtc.log_size || !rtc.log || !rtc.cubin_size ||
      !rtc.cubin || !rtc.destroy || !rtc.error || version(&major, &minor) != 0) {
    snprintf(rtc.why, sizeof rtc.why, "the NVRTC library found lacks an entry point or its version");
    dlclose(rtc.lib);
    rtc.lib = NULL;
    return;
  }
  rtc.version = major * 1000 + minor * 10;
}

int dual_rtc_version(char *why, size_t why_cap) {
  pthread_once(&rtc.once, load_nvrtc);
  if (rtc.version == 0 && why != NULL && why_cap > 0)
    snprintf(why, why_cap, "NVRTC is not available (%s)", rtc.why[0] ? rtc.why : "not found");
  return rtc.version;
}

void dual_rtc_options(int cc, char *buf, size_t cap) {
  snprintf(buf, cap, "--gpu-architecture=sm_%d %s -default-device -std=c++17", cc,
           DUAL_RTC_FP_OPTIONS);
}

void dual_rtc_headers_digest(uint8_t digest[32]) {
  dual_sha256 s;
  dual_sha256_init(&s);
  for (int i = 0; i < dual_rtc_file_count; ++i) {
    dual_sha256_update(&s, dual_rtc_files[i].name, strlen(dual_rtc_files[i].name) + 1);
    dual_sha256_update(&s, dual_rtc_files[i].text, (size_t)dual_rtc_files[i].size);
  }
  dual_sha256_final(&s, digest);
}

/* Split the option string at blanks into argv (pointers into buf). */
static int split_options(char *buf, const char **argv, int max) {
  int n = 0;
  char *save = NULL; /* strtok_r: compiles run on the caller's thread and the AUTO worker at once */
  for (char *tok = strtok_r(buf, " ", &save); tok != NULL && n < max; tok = strtok_r(NULL, " ", &save))
    argv[n++] = tok;
  return n;
}

int dual_rtc_compile(const char *src, int cc, void **image, size_t *size, char **log) {
  *image = NULL, *size = 0, *log = NULL;
  char why[600];
  if (dual_rtc_version(why, sizeof why) == 0) {
    *log = dual_strdup(why);
    return DUAL_ERR_UNSUPPORTED;
  }
  const char **names = (const char **)malloc(sizeof(char *) * (size_t)dual_rtc_file_count);
  const char **texts = (const char **)malloc(sizeof(char *) * (size_t)dual_rtc_file_count);
  if (names == NULL || texts == NULL) {
    free(names);
    free(texts);
    return DUAL_ERR_NO_MEMORY;
  }
  for (int i = 0; i < dual_rtc_file_count; ++i)
    names[i] = dual_rtc_files[i].name, texts[i] = dual_rtc_files[i].text;
  nvrtc_prog prog = NULL;
  int e = rtc.create(&prog, src, "dualbatch_jit.cu", dual_rtc_file_count, texts, names);
  free(names);
  free(texts);
  if (e != 0) {
    *log = dual_strdup_printf("nvrtcCreateProgram: %s", rtc.error(e));
    return e == 1 ? DUAL_ERR_NO_MEMORY : DUAL_ERR_INTERNAL;
  }
  char opts[512];
  const char *argv[16];
  dual_rtc_options(cc, opts, sizeof opts);
  const int argc = split_options(opts, argv, 16);
  e = rtc.compile(prog, argc, argv);
  size_t log_size = 0;
  if (rtc.log_size(prog, &log_size) == 0 && log_size > 1) {
    char *text = (char *)malloc(log_size);
    if (text != NULL && rtc.log(prog, text) == 0) *log = text;
    else free(text);
  }
  int st = DUAL_SUCCESS;
  if (e != 0) {
    if (*log == NULL) *log = dual_strdup_printf("nvrtcCompileProgram: %s", rtc.error(e));
    st = DUAL_ERR_INTERNAL;
  } else if (rtc.cubin_size(prog, size) != 0 || *size == 0 ||
             (*image = malloc(*size)) == NULL || rtc.cubin(prog, (char *)*image) != 0) {
    free(*image);
    *image = NULL, *size = 0;
    st = DUAL_ERR_NO_MEMORY;
  }
  rtc.destroy(&prog);
  return st;
}
