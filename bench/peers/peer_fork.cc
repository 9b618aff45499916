// peer_fork.cc — a batch split over forked processes (peer_fork.h), for the peers whose library
// cannot run on two threads at once (ADOL-C without OpenMP: adolc_hess.cc, adolc_grad.cc).
#include "peer_fork.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace {

// The mapping the forked children write into, grown as needed and kept for the life of the
// process (shared by every peer of the process: calls do not overlap).
void* g_shared = nullptr;
size_t g_shared_bytes = 0;

bool EnsureShared(size_t bytes) {
  if (bytes <= g_shared_bytes) return true;
  if (g_shared) munmap(g_shared, g_shared_bytes);
  g_shared_bytes = 0;
  g_shared = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (g_shared == MAP_FAILED) {
    g_shared = nullptr;
    return false;
  }
  g_shared_bytes = bytes;
  return true;
}

}  // namespace

extern "C" int peer_fork_run(int64_t B, int parts, const peer_fork_output* outs, int nouts,
                             peer_fork_part part, void* arg) {
  if (B < 0 || nouts < 0 || nouts > PEER_FORK_MAX_OUTPUTS) return -1;
  if (B == 0) return 0;
  if (parts > B) parts = static_cast<int>(B);
  if (parts > PEER_FORK_MAX_PARTS) parts = PEER_FORK_MAX_PARTS;
  double* here[PEER_FORK_MAX_OUTPUTS];
  for (int k = 0; k < nouts; ++k) here[k] = outs[k].data;
  if (parts <= 1) return part(0, B, here, arg);

  // Part t = [start[t], start[t+1]); part 0 here, parts 1.. in forked children writing into the
  // shared mapping laid out as output 0 [rest][per_point 0], output 1 [rest][...], ...,
  // rest = B - start[1].
  int64_t start[PEER_FORK_MAX_PARTS + 1];
  for (int t = 0; t <= parts; ++t) start[t] = B * t / parts;
  const int64_t rest = B - start[1];
  int64_t doubles_per_point = 0;
  for (int k = 0; k < nouts; ++k) doubles_per_point += outs[k].per_point;
  if (!EnsureShared(sizeof(double) * static_cast<size_t>(rest * doubles_per_point))) return -1;
  double* shared[PEER_FORK_MAX_OUTPUTS];
  double* next = static_cast<double*>(g_shared);
  for (int k = 0; k < nouts; ++k) {
    shared[k] = next;
    next += rest * outs[k].per_point;
  }
  pid_t pid[PEER_FORK_MAX_PARTS];
  int status = 0, started = 0;
  for (int t = 1; t < parts; ++t) {
    const int64_t o = start[t] - start[1];
    pid[t] = fork();
    if (pid[t] == 0) {
      double* mine[PEER_FORK_MAX_OUTPUTS];
      for (int k = 0; k < nouts; ++k) mine[k] = shared[k] + o * outs[k].per_point;
      _exit(part(start[t], start[t + 1] - start[t], mine, arg) == 0 ? 0 : 1);
    }
    if (pid[t] < 0) {
      status = -1;
      break;
    }
    started = t;
  }
  if (status == 0 && part(0, start[1], here, arg) != 0) status = -1;
  for (int t = 1; t <= started; ++t) {
    int ws = 0;
    if (waitpid(pid[t], &ws, 0) != pid[t] || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) status = -1;
  }
  if (status == 0)
    for (int k = 0; k < nouts; ++k)
      std::memcpy(outs[k].data + start[1] * outs[k].per_point, shared[k],
                  sizeof(double) * static_cast<size_t>(rest * outs[k].per_point));
  return status;
}
