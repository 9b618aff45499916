/*
 * mpi_cells.c — dualbatch under MPI: the cells of a grid are split in blocks over the ranks; each
 * rank, with its own context (on a machine with GPUs, its own GPU: the rank's index on its node
 * modulo the device count), computes the Jacobians of its cells and solves F(u) = 0 in each with
 * dual_newton.  Every cell holds the equilibrium A + B <-> C with its own constant K and totals
 * A0, B0, in log-concentrations u = (ln a, ln b, ln c):
 *   F0 = ln K + u0 + u1 - u2        (mass action: K a b = c)
 *   F1 = exp(u0) + exp(u2) - A0     (A is conserved)
 *   F2 = exp(u1) + exp(u2) - B0     (B is conserved)
 * Rank 0 gathers the results and checks them two ways: against the closed form (c is the smaller
 * root of K c^2 - (K (A0 + B0) + 1) c + K A0 B0 = 0, and J against its hand-derived entries), and
 * bit for bit against the same cells computed in this one process, which is what the library
 * promises whatever the split (ranks, threads, devices).  Prints one line per rank and a verdict;
 * exits 0 only when both checks hold on every cell.
 *   mpirun -np 2 ./build/examples/mpi/mpi_cells [CELLS]        (default 200000 cells)
 * The library is not MPI-aware: nothing in it is shared between processes (or between contexts,
 * but the compiled kernels and the disk cache), so one context per rank is all it takes.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dualbatch.h"

enum { N = 3, NP = 3 };

static const char *source = "input u[3]; param q[3]   # ln a, ln b, ln c; ln K, A0, B0\n"
                            "output F[3]\n"
                            "F[0] = q[0] + u[0] + u[1] - u[2]\n"
                            "F[1] = exp(u[0]) + exp(u[2]) - q[1]\n"
                            "F[2] = exp(u[1]) + exp(u[2]) - q[2]\n";

/* A cell's parameters and starting point from its global index alone, so every split of the
 * cells gives each the same data (a low-discrepancy sequence: no random state to share). */
static void cell_data(int64_t cell, double *q, double *u0) {
  const double r1 = fmod(0.6180339887498949 * (double)(cell + 1), 1.0);
  const double r2 = fmod(0.4142135623730950 * (double)(cell + 1), 1.0);
  const double r3 = fmod(0.7320508075688772 * (double)(cell + 1), 1.0);
  q[0] = -3.0 + 6.0 * r1;                        /* ln K in [-3, 3] */
  q[1] = 0.2 + 1.8 * r2, q[2] = 0.2 + 1.8 * r3; /* A0, B0 in [0.2, 2] */
  const double c0 = 0.25 * fmin(q[1], q[2]);
  u0[0] = log(q[1] - c0), u0[1] = log(q[2] - c0), u0[2] = log(c0);
}

/* The results of a block of cells. */
typedef struct block {
  int64_t count;
  double *q, *u, *y, *J, *fnorm;
  int32_t *status, *info, *iters;
} block;

static int block_alloc(block *b, int64_t count) {
  memset(b, 0, sizeof *b);
  b->count = count;
  const size_t c = (size_t)(count > 0 ? count : 1);
  b->q = malloc(sizeof(double) * c * NP), b->u = malloc(sizeof(double) * c * N);
  b->y = malloc(sizeof(double) * c * N), b->J = malloc(sizeof(double) * c * N * N);
  b->fnorm = malloc(sizeof(double) * c);
  b->status = malloc(sizeof(int32_t) * c), b->info = malloc(sizeof(int32_t) * c);
  b->iters = malloc(sizeof(int32_t) * c);
  return b->q && b->u && b->y && b->J && b->fnorm && b->status && b->info && b->iters;
}

static void block_free(block *b) {
  free(b->q), free(b->u), free(b->y), free(b->J), free(b->fnorm);
  free(b->status), free(b->info), free(b->iters);
}

/* Cells [first, first + b->count): their Jacobians at the starting points, then their solves. */
static int compute(dual_context *ctx, const dual_program *prog, int64_t first, block *b) {
  for (int64_t i = 0; i < b->count; ++i) cell_data(first + i, b->q + i * NP, b->u + i * N);
  int st = dual_jacobian(ctx, prog, b->count, b->u, N, b->q, NP, b->y, N, b->J, N * N, b->status);
  if (st == DUAL_SUCCESS) st = dual_newton(ctx, prog, NULL, b->count, b->u, N, b->q, NP, b->info, b->iters, b->fnorm);
  if (st != DUAL_SUCCESS) fprintf(stderr, "mpi_cells: %s\n", dual_context_last_error(ctx));
  return st;
}

/* This rank's context: the CPU with this node's cores shared among its ranks, or a GPU of the
 * node (local rank modulo the devices). */
static int rank_context(int local_rank, int local_size, dual_context **ctx, char *where, size_t cap) {
  const int gpus = dual_device_count();
  int st = dual_context_create(ctx, gpus > 0 ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU);
  if (st == DUAL_SUCCESS && gpus > 0 && dual_context_device(*ctx) == DUAL_DEVICE_GPU)
    st = dual_context_set_gpu(*ctx, local_rank % gpus);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int threads = cores > local_size ? (int)(cores / local_size) : 1;
  if (st == DUAL_SUCCESS) st = dual_context_set_threads(*ctx, threads);
  if (st != DUAL_SUCCESS) {
    fprintf(stderr, "mpi_cells: %s\n", dual_context_last_error(*ctx));
    return st;
  }
  if (dual_context_gpu(*ctx) >= 0)
    snprintf(where, cap, "gpu %d", dual_context_gpu(*ctx));
  else
    snprintf(where, cap, "cpu, %d threads", threads);
  return DUAL_SUCCESS;
}

/* The largest error of the gathered results against the closed forms: the converged c, and J at
 * the starting point (rows: d F_i / d u_j). */
static double closed_form_error(const block *all, int64_t *unconverged) {
  double worst = 0.0;
  *unconverged = 0;
  for (int64_t i = 0; i < all->count; ++i) {
    double q[NP], u0[N];
    cell_data(i, q, u0);
    const double K = exp(q[0]), A0 = q[1], B0 = q[2];
    const double bq = K * (A0 + B0) + 1.0; /* the smaller root, in the form without cancellation */
    const double c = 2.0 * K * A0 * B0 / (bq + sqrt(bq * bq - 4.0 * K * K * A0 * B0));
    if (all->info[i] != DUAL_SOLVE_CONVERGED) {
      ++*unconverged;
      continue;
    }
    worst = fmax(worst, fabs(exp(all->u[i * N + 2]) - c) / c);
    const double want[N * N] = {1.0, 1.0, -1.0, exp(u0[0]), 0.0, exp(u0[2]), 0.0, exp(u0[1]), exp(u0[2])};
    for (int k = 0; k < N * N; ++k)
      worst = fmax(worst, fabs(all->J[i * N * N + k] - want[k]) / fmax(fabs(want[k]), 1.0));
  }
  return worst;
}

static int same_bits(const block *a, const block *b) {
  const size_t c = (size_t)a->count;
  return memcmp(a->y, b->y, sizeof(double) * c * N) == 0 && memcmp(a->J, b->J, sizeof(double) * c * N * N) == 0 &&
         memcmp(a->u, b->u, sizeof(double) * c * N) == 0 && memcmp(a->fnorm, b->fnorm, sizeof(double) * c) == 0 &&
         memcmp(a->status, b->status, sizeof(int32_t) * c) == 0 && memcmp(a->info, b->info, sizeof(int32_t) * c) == 0 &&
         memcmp(a->iters, b->iters, sizeof(int32_t) * c) == 0;
}

/* Gather each rank's `per_cell` entries per cell of `mine` into `all` on rank 0. */
static void gather(const void *mine, void *all, int per_cell, MPI_Datatype type, const int64_t *counts,
                   const int64_t *firsts, int64_t my_count, int size, int rank) {
  int *rc = NULL, *rd = NULL;
  if (rank == 0) {
    rc = malloc(sizeof(int) * (size_t)size), rd = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r) rc[r] = (int)(counts[r] * per_cell), rd[r] = (int)(firsts[r] * per_cell);
  }
  MPI_Gatherv(mine, (int)(my_count * per_cell), type, all, rc, rd, type, 0, MPI_COMM_WORLD);
  free(rc), free(rd);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
  const int64_t cells = argc > 1 ? atoll(argv[1]) : 200000;
  if (cells < size || cells > ((int64_t)1 << 26)) {
    if (rank == 0) fprintf(stderr, "mpi_cells: CELLS must be between the rank count and 2^26\n");
    MPI_Finalize();
    return 2;
  }

  /* block distribution: the first cells % size ranks hold one cell more */
  int64_t *counts = malloc(sizeof(int64_t) * (size_t)size), *firsts = malloc(sizeof(int64_t) * (size_t)size);
  for (int64_t r = 0, f = 0; r < size; ++r) {
    counts[r] = cells / size + (r < cells % size);
    firsts[r] = f, f += counts[r];
  }
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  char where[64] = "";
  block mine;
  int ok = block_alloc(&mine, counts[rank]) && rank_context(local_rank, local_size, &ctx, where, sizeof where) == DUAL_SUCCESS;
  if (ok && dual_program_compile(ctx, source, "equilibrium", &prog) != DUAL_SUCCESS) {
    fprintf(stderr, "mpi_cells: %s\n", dual_context_last_error(ctx));
    ok = 0;
  }
  const double t0 = MPI_Wtime();
  if (ok) ok = compute(ctx, prog, firsts[rank], &mine) == DUAL_SUCCESS;
  const double seconds = MPI_Wtime() - t0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  char line[160];
  snprintf(line, sizeof line, "rank %d: cells %lld .. %lld on %s: %.3f s%s", rank, (long long)firsts[rank],
           (long long)(firsts[rank] + counts[rank] - 1), where, seconds, ok ? "" : " (failed)");
  char *lines = rank == 0 ? malloc(sizeof line * (size_t)size) : NULL;
  MPI_Gather(line, sizeof line, MPI_CHAR, lines, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  int verdict = 1;
  block all, one;
  memset(&all, 0, sizeof all), memset(&one, 0, sizeof one);
  int have = all_ok && (rank != 0 || (block_alloc(&all, cells) & block_alloc(&one, cells)));
  MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0's room for the gathered cells */
  if (have) {
    gather(mine.y, rank == 0 ? all.y : NULL, N, MPI_DOUBLE, counts, firsts, mine.count, size, rank);
    gather(mine.J, rank == 0 ? all.J : NULL, N * N, MPI_DOUBLE, counts, firsts, mine.count, size, rank);
    gather(mine.u, rank == 0 ? all.u : NULL, N, MPI_DOUBLE, counts, firsts, mine.count, size, rank);
    gather(mine.fnorm, rank == 0 ? all.fnorm : NULL, 1, MPI_DOUBLE, counts, firsts, mine.count, size, rank);
    gather(mine.status, rank == 0 ? all.status : NULL, 1, MPI_INT32_T, counts, firsts, mine.count, size, rank);
    gather(mine.info, rank == 0 ? all.info : NULL, 1, MPI_INT32_T, counts, firsts, mine.count, size, rank);
    gather(mine.iters, rank == 0 ? all.iters : NULL, 1, MPI_INT32_T, counts, firsts, mine.count, size, rank);
    if (rank == 0) {
      for (int r = 0; r < size; ++r) printf("%s\n", lines + (size_t)r * sizeof line);
      int64_t unconverged = 0;
      const double err = closed_form_error(&all, &unconverged);
      const int bitwise = compute(ctx, prog, 0, &one) == DUAL_SUCCESS && same_bits(&all, &one);
      printf("%d ranks, %lld cells: %lld not converged; largest relative error against the closed forms "
             "(c, J) %.2e; bitwise equal to one process: %s\n",
             size, (long long)cells, (long long)unconverged, err, bitwise ? "yes" : "NO");
      verdict = unconverged == 0 && err <= 1e-10 && bitwise ? 0 : 1;
    }
  } else if (rank == 0) {
    for (int r = 0; r < size; ++r) printf("%s\n", lines + (size_t)r * sizeof line);
    if (all_ok) printf("mpi_cells: out of memory gathering %lld cells\n", (long long)cells);
  }
  if (rank == 0) block_free(&all), block_free(&one);
  MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(lines), free(counts), free(firsts);
  block_free(&mine);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  MPI_Finalize();
  return verdict;
}
