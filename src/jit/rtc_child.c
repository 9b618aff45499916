/*
 * rtc_child.c — a compile in a fork()ed child (rtc_child.h).  The child compiles, stores the
 * CUBIN in the disk cache, writes {status, image size, log size, image, log} to a pipe and ends
 * with _exit (no exit handlers of the parent's run in it); the parent reads the pipe to its end
 * and reaps the child.
 */
#define _GNU_SOURCE /* pipe2 */
#include "jit/rtc_child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "context.h"
#include "dualbatch.h"
#include "jit/jit_cache.h"

typedef struct {
  int32_t status, reserved;
  uint64_t image_size, log_size;
} answer_head;

/* Largest image or log taken from a child (a CUBIN of the size rules is a few MB). */
#define MAX_PART ((uint64_t)1 << 30)

static void write_all(int fd, const void *buf, size_t n) {
  const char *p = (const char *)buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return; /* the parent has gone: its result is in the disk cache */
    p += w, n -= (size_t)w;
  }
}

/* 1 when all n bytes were read, 0 at an early end of the pipe. */
static int read_all(int fd, void *buf, size_t n) {
  char *p = (char *)buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    p += r, n -= (size_t)r;
  }
  return 1;
}

static void run_child(int fd, dual_rtc_compile_fn compile, const char *src, int cc,
                      const char *cache_dir, const uint8_t disk_key[32]) {
  signal(SIGPIPE, SIG_IGN);
  alarm(DUAL_RTC_CHILD_LIMIT_S);
  void *image = NULL;
  size_t size = 0;
  char *log = NULL;
  const int st = compile(src, cc, &image, &size, &log);
  if (st == DUAL_SUCCESS && cache_dir != NULL)
    dual_jit_cache_store(cache_dir, disk_key, image, size, NULL);
  answer_head h = {st, 0, st == DUAL_SUCCESS ? size : 0, log != NULL ? strlen(log) : 0};
  write_all(fd, &h, sizeof h);
  if (h.image_size > 0) write_all(fd, image, size);
  if (h.log_size > 0) write_all(fd, log, h.log_size);
  _exit(0);
}

/* How a child that sent no whole answer ended, as the log. */
static char *ended_early(pid_t pid) {
  int ws = 0;
  pid_t r;
  while ((r = waitpid(pid, &ws, 0)) < 0 && errno == EINTR) {
  }
  if (r == pid && WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
    return dual_strdup_printf("the compile took over %d s and was stopped", DUAL_RTC_CHILD_LIMIT_S);
  if (r == pid && WIFSIGNALED(ws))
    return dual_strdup_printf("the compile process was ended by signal %d (%s)", WTERMSIG(ws),
                              strsignal(WTERMSIG(ws)));
  return dual_strdup("the compile process ended without an answer");
}

int dual_rtc_compile_in_child(dual_rtc_compile_fn compile, const char *src, int cc,
                              const char *cache_dir, const uint8_t disk_key[32], void **image,
                              size_t *size, char **log) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1; /* no exec'd process of another thread keeps it */
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(fds[1], compile, src, cc, cache_dir, disk_key);
  }
  close(fds[1]);
  *image = NULL, *size = 0, *log = NULL;
  answer_head h;
  int whole = read_all(fds[0], &h, sizeof h) && h.image_size <= MAX_PART && h.log_size <= MAX_PART;
  char *img = NULL, *text = NULL;
  if (whole && h.image_size > 0)
    whole = (img = (char *)malloc((size_t)h.image_size)) != NULL && read_all(fds[0], img, (size_t)h.image_size);
  if (whole && h.log_size > 0)
    whole = (text = (char *)malloc((size_t)h.log_size + 1)) != NULL && read_all(fds[0], text, (size_t)h.log_size);
  close(fds[0]);
  if (!whole) {
    free(img), free(text);
    *log = ended_early(pid);
    return DUAL_ERR_INTERNAL;
  }
  int ws;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) { /* reap it (ECHILD: SIGCHLD ignored) */
  }
  if (text != NULL) text[h.log_size] = '\0';
  *image = img, *size = (size_t)h.image_size, *log = text;
  return h.status;
}
