/*
 * cc_compile.c — the system C compiler run on generated source, and shared objects loaded from
 * memory (cc_compile.h).
 */
#define _GNU_SOURCE /* memfd_create, mkdtemp */
#include "jit/cc_compile.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "jit/jit_cache.h" /* dual_write_all */
#include "jit/rtc_files.h"
#include "jit/sha256.h"

extern char **environ;

/* A work directory's path, and a file's in it (the embedded headers' names are short). */
enum { DIR_CAP = 4096, PATH_CAP = DIR_CAP + 512 };

/* ---- files ------------------------------------------------------------------------------- */

static int write_file(const char *path, const void *data, size_t n) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  const int st = dual_write_all(fd, data, n);
  return close(fd) == 0 ? st : -1;
}

/* A whole file (heap, NUL-terminated); NULL when it cannot be read or is over `cap` bytes. */
static char *read_file(const char *path, size_t cap, size_t *size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  char *buf = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= cap &&
      (buf = (char *)malloc((size_t)st.st_size + 1)) != NULL) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      const ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (got == (size_t)st.st_size) buf[got] = '\0', *size = got;
    else free(buf), buf = NULL;
  }
  close(fd);
  return buf;
}

/* A private directory for one compile (0700): 0 with its path in dir, or -1. */
static int make_work_dir(char *dir, size_t cap) {
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] != '/') tmp = "/tmp";
  if (snprintf(dir, cap, "%s/dualbatch-cc-XXXXXX", tmp) >= (int)cap) return -1;
  return mkdtemp(dir) != NULL ? 0 : -1;
}

/* Remove the work directory and everything in it (files and the embedded headers' folders). */
static void remove_tree(const char *dir) {
  char path[PATH_CAP];
  const char *files[] = {"src.c", "out.so", "log"};
  for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  for (int i = 0; i < dual_rtc_file_count; ++i) {
    snprintf(path, sizeof path, "%s/%s", dir, dual_rtc_files[i].name);
    unlink(path);
  }
  for (int i = 0; i < dual_rtc_file_count; ++i) { /* the folders the names had, deepest first */
    snprintf(path, sizeof path, "%s/%s", dir, dual_rtc_files[i].name);
    for (char *slash = strrchr(path, '/'); slash != NULL && slash > path + strlen(dir); slash = strrchr(path, '/')) {
      *slash = '\0';
      rmdir(path);
    }
  }
  rmdir(dir);
}

/* The embedded headers under dir, by the names the #includes use: 0, or -1. */
static int write_headers(const char *dir) {
  char path[PATH_CAP];
  for (int i = 0; i < dual_rtc_file_count; ++i) {
    const dual_embedded_file *f = &dual_rtc_files[i];
    if (snprintf(path, sizeof path, "%s/%s", dir, f->name) >= (int)sizeof path) return -1;
    for (char *s = strchr(path + strlen(dir) + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
      *s = '\0';
      const int made = mkdir(path, 0700) == 0 || errno == EEXIST;
      *s = '/';
      if (!made) return -1;
    }
    if (write_file(path, f->text, (size_t)f->size) != 0) return -1;
  }
  return 0;
}

/* ---- running the compiler ---------------------------------------------------------------- */

/* Run argv in `dir` with stdout and stderr into dir/log, for at most limit_s seconds: its exit
 * status (0 = success), or -1 when it could not start, -2 when it was stopped at the limit or by
 * a signal. */
static int run_in(const char *dir, char *const argv[], int limit_s) {
  char log[PATH_CAP];
  snprintf(log, sizeof log, "%s/log", dir);
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return -1;
  int ok = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0600) == 0 &&
           posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO) == 0 &&
           posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) == 0;
  pid_t pid = -1;
  if (ok) ok = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0;
  posix_spawn_file_actions_destroy(&fa);
  if (!ok) return -1;
  const struct timespec step = {0, 2000000}; /* 2 ms */
  const time_t end = time(NULL) + limit_s;
  for (;;) {
    int ws = 0;
    const pid_t r = waitpid(pid, &ws, WNOHANG);
    if (r == pid) return WIFEXITED(ws) ? WEXITSTATUS(ws) : -2;
    if (r < 0 && errno != EINTR) return -2;
    if (time(NULL) > end) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
      }
      return -2;
    }
    nanosleep(&step, NULL);
  }
}

/* The text of dir/log (heap), or NULL. */
static char *output_text(const char *dir) {
  char path[PATH_CAP];
  size_t n = 0;
  snprintf(path, sizeof path, "%s/log", dir);
  return read_file(path, 1 << 20, &n);
}

/* The first line of dir/log (heap), or NULL. */
static char *first_line(const char *dir) {
  char *text = output_text(dir);
  if (text != NULL) text[strcspn(text, "\r\n")] = '\0';
  return text;
}

/* ---- finding the compiler ---------------------------------------------------------------- */

static int executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* `name` as a file: itself when it has a '/', else the first executable on PATH; 0, or -1. */
static int locate(const char *name, char *out, size_t cap) {
  if (strchr(name, '/') != NULL) {
    if (!executable(name) || strlen(name) >= cap) return -1;
    strcpy(out, name);
    return 0;
  }
  const char *path = getenv("PATH");
  if (path == NULL || path[0] == '\0') path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path; *p != '\0';) {
    const size_t len = strcspn(p, ":");
    if (len > 0 && snprintf(out, cap, "%.*s/%s", (int)len, p, name) < (int)cap && executable(out)) return 0;
    p += len + (p[len] == ':');
  }
  return -1;
}

/* gcc by its whole --version text: the banner ("gcc (Debian 12.2.0-14) 12.2.0", "cc (GCC) ...", but
 * Debian's cc says only "cc (Debian 12.2.0-14+deb12u1) 12.2.0") or the copyright line that
 * follows ("Free Software Foundation"); clang's says "clang version" and takes no -mtune-ctrl. */
static int is_gcc(const char *version) {
  return strstr(version, "clang") == NULL && (strstr(version, "GCC") != NULL || strstr(version, "gcc") != NULL ||
                                              strstr(version, "Free Software Foundation") != NULL);
}

/* This machine's CPU for the identity (-march=native makes code for it): /proc/cpuinfo's first
 * "model name" and a digest of its first "flags" line, or "cpu unknown" (then a cache shared by
 * machines of one target could hold code another machine cannot run: documented in cc_compile.h). */
static void cpu_identity(char *out, size_t cap) {
  snprintf(out, cap, "cpu unknown");
  size_t n = 0;
  char *text = read_file("/proc/cpuinfo", 4 << 20, &n);
  if (text == NULL) return;
  const char *model = strstr(text, "model name"), *flags = strstr(text, "\nflags");
  if (model == NULL) model = strstr(text, "CPU part"); /* (Arm) */
  if (flags == NULL) flags = strstr(text, "\nFeatures");
  if (model != NULL && flags != NULL) {
    const char *mv = strchr(model, ':'), *fv = strchr(flags, ':');
    const size_t ml = mv ? strcspn(mv + 1, "\n") : 0, fl = fv ? strcspn(fv + 1, "\n") : 0;
    uint8_t d[32];
    dual_sha256 h;
    dual_sha256_init(&h);
    dual_sha256_update(&h, fv ? fv + 1 : "", fl);
    dual_sha256_final(&h, d);
    snprintf(out, cap, "cpu%.*s, flags %02x%02x%02x%02x%02x%02x%02x%02x", (int)(ml < 200 ? ml : 200), mv ? mv + 1 : "",
             d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]);
  }
  free(text);
}

int dual_cc_find(dual_cc *cc, char **why) {
  *why = NULL;
  const char *env = getenv("DUALBATCH_CC");
  const char *name = env != NULL && env[0] != '\0' ? env : "cc";
  if (locate(name, cc->path, sizeof cc->path) != 0) {
    *why = env != NULL && env[0] != '\0'
               ? dual_strdup_printf("DUALBATCH_CC=%s is not an executable file (nor one on PATH)", env)
               : dual_strdup("no C compiler: `cc` is not on PATH (set DUALBATCH_CC to one)");
    return -1;
  }
  char dir[DIR_CAP];
  if (make_work_dir(dir, sizeof dir) != 0) {
    *why = dual_strdup_printf("cannot make a private temporary directory: %s", strerror(errno));
    return -1;
  }
  char *version = NULL, *machine = NULL;
  char *argv_version[] = {cc->path, (char *)"--version", NULL};
  char *argv_machine[] = {cc->path, (char *)"-dumpmachine", NULL};
  int gcc = 0;
  if (run_in(dir, argv_version, 30) == 0 && (version = output_text(dir)) != NULL) {
    gcc = is_gcc(version);
    version[strcspn(version, "\r\n")] = '\0'; /* the banner */
  }
  if (version != NULL && run_in(dir, argv_machine, 30) == 0) machine = first_line(dir);
  struct utsname un; /* a compiler without -dumpmachine (tcc) builds for this machine */
  if (version != NULL && (machine == NULL || machine[0] == '\0') && uname(&un) == 0)
    free(machine), machine = dual_strdup_printf("%s-%s (uname)", un.machine, un.sysname);
  remove_tree(dir);
  int st = 0;
  if (version == NULL || machine == NULL || version[0] == '\0' || machine[0] == '\0') {
    *why = dual_strdup_printf("the C compiler %s did not say its --version and -dumpmachine", cc->path);
    st = -1;
  } else if (snprintf(cc->flags, sizeof cc->flags, "%s%s", DUAL_CC_FLAGS,
                      gcc ? " " DUAL_CC_FLAGS_GCC : "") >= (int)sizeof cc->flags) {
    *why = dual_strdup("the compiler's flags are too long"); /* (a fixed text: never) */
    st = -1;
  } else {
    char cpu[320];
    cpu_identity(cpu, sizeof cpu);
    if (snprintf(cc->identity, sizeof cc->identity, "%s | %s | %s | %s", version, machine, cc->flags, cpu) >=
        (int)sizeof cc->identity)
      cc->identity[sizeof cc->identity - 1] = '\0'; /* a long banner: its start names it */
  }
  free(version), free(machine);
  return st;
}

/* ---- compiling --------------------------------------------------------------------------- */

int dual_cc_compile(const dual_cc *cc, const char *src, void **image, size_t *size, char **log) {
  *image = NULL, *size = 0, *log = NULL;
  char dir[DIR_CAP], path[PATH_CAP];
  if (make_work_dir(dir, sizeof dir) != 0) {
    *log = dual_strdup_printf("cannot make a private temporary directory: %s", strerror(errno));
    return -1;
  }
  snprintf(path, sizeof path, "%s/src.c", dir);
  if (write_headers(dir) != 0 || write_file(path, src, strlen(src)) != 0) {
    *log = dual_strdup_printf("cannot write the source in %s: %s", dir, strerror(errno));
    remove_tree(dir);
    return -1;
  }
  /* the flags as separate arguments */
  char flags[sizeof cc->flags];
  memcpy(flags, cc->flags, sizeof flags);
  char include[PATH_CAP], out[PATH_CAP];
  snprintf(include, sizeof include, "-I%s", dir);
  snprintf(out, sizeof out, "%s/out.so", dir);
  char *argv[32];
  int argc = 0;
  argv[argc++] = (char *)cc->path;
  for (char *save = NULL, *f = strtok_r(flags, " ", &save); f != NULL && argc < 24; f = strtok_r(NULL, " ", &save))
    argv[argc++] = f;
  argv[argc++] = include, argv[argc++] = (char *)"-o", argv[argc++] = out, argv[argc++] = path;
  argv[argc++] = (char *)"-lm"; /* (gcc inlines what it calls of libm; tcc calls sqrt, fabs) */
  argv[argc] = NULL;
  const int st = run_in(dir, argv, DUAL_CC_LIMIT_S);
  char logpath[PATH_CAP];
  size_t n = 0;
  snprintf(logpath, sizeof logpath, "%s/log", dir);
  char *text = read_file(logpath, 1 << 24, &n);
  if (st == 0) *image = read_file(out, (size_t)1 << 30, size);
  if (st == -1) {
    free(text);
    text = dual_strdup_printf("could not start the C compiler %s", cc->path);
  } else if (st == -2) {
    free(text);
    text = dual_strdup_printf("the C compiler %s was stopped (over %d s, or a signal)", cc->path, DUAL_CC_LIMIT_S);
  } else if (st == 0 && *image == NULL) {
    free(text);
    text = dual_strdup("the C compiler succeeded but wrote no shared object");
  }
  if (text != NULL && text[0] == '\0') free(text), text = NULL;
  *log = text;
  remove_tree(dir);
  return st == 0 && *image != NULL ? 0 : -1;
}

/* ---- loading ----------------------------------------------------------------------------- */

int dual_cc_load(const void *image, size_t size, void **handle, int *keep_fd, char **why) {
  *handle = NULL, *why = NULL, *keep_fd = -1;
  char path[PATH_CAP];
  char dir[DIR_CAP] = "";
  int fd = memfd_create("dualbatch-cpu-kernels", MFD_CLOEXEC);
  if (fd >= 0) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  } else { /* no memory files: a private temporary one, removed once loaded */
    if (make_work_dir(dir, sizeof dir) != 0) {
      *why = dual_strdup_printf("cannot make a private temporary directory: %s", strerror(errno));
      return -1;
    }
    snprintf(path, sizeof path, "%s/out.so", dir);
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  }
  int ok = fd >= 0 && dual_write_all(fd, image, size) == 0;
  if (!ok) *why = dual_strdup_printf("cannot write the compiled code to load it: %s", strerror(errno));
  if (ok && (*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
    const char *e = dlerror();
    *why = dual_strdup_printf("the compiled code did not load: %s", e != NULL ? e : "(no reason given)");
    ok = 0;
  }
  /* a loaded memory file stays open while its object is loaded: the dynamic loader knows an
   * object by its path, and /proc/self/fd/N of a closed N names the next memory file too, which
   * it would take for the object already loaded */
  if (ok && dir[0] == '\0') *keep_fd = fd;
  else if (fd >= 0) close(fd);
  if (dir[0] != '\0') remove_tree(dir);
  return ok ? 0 : -1;
}

void dual_cc_unload(void *handle, int fd) {
  if (handle != NULL) dlclose(handle);
  if (fd >= 0) close(fd);
}
