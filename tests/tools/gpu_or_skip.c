/* gpu_or_skip.c — runs a GPU test only where a CUDA device exists.  CTest starts every `gpu`
 * test through it: with no device (or a build without CUDA) it prints why and exits 77, which
 * CTest reports as *skipped*; otherwise it replaces itself with the test (execv), so CUDA is
 * initialized afresh in the test's own process, after Criterion forks its workers.
 * Usage: gpu_or_skip TEST [ARGS...] */
#include <stdio.h>
#include <unistd.h>

#include "dualbatch.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gpu_or_skip TEST [ARGS...]\n");
    return 2;
  }
  if (dual_device_count() == 0) {
    printf("skipped: no CUDA device (or a build without CUDA); %s runs on a machine with a GPU\n",
           argv[1]);
    return 77;
  }
  execv(argv[1], argv + 1);
  perror(argv[1]);
  return 2;
}
