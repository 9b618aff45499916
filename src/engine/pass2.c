/*
 * pass2.c — enumerates the passes of a second-order job (pass2.h).
 */
#include "pass2.h"

#include <stdlib.h>
#include <string.h>

int dual_pass2_block(const dual_job *job) {
  const int64_t n = job->prog->n_in;
  const int w = job->width > 0 ? job->width : 1;
  if (job->mode == DUAL_MODE_HVP) return w < DUAL_PASS2_MAX_LANES ? w : DUAL_PASS2_MAX_LANES - 1;
  if (n <= w) return n > 0 ? (int)n : 1; /* one diagonal pass of n <= 32 lanes */
  return w < DUAL_PASS2_MAX_LANES / 2 ? w : DUAL_PASS2_MAX_LANES / 2;
}

static int64_t blocks_of(const dual_job *job) {
  const int64_t n = job->prog->n_in, c = dual_pass2_block(job);
  return n == 0 ? 1 : (n + c - 1) / c;
}

int64_t dual_pass2_count(const dual_job *job) {
  const int64_t nb = blocks_of(job);
  return job->mode == DUAL_MODE_HVP ? nb : nb * (nb + 1) / 2;
}

int64_t dual_pass2_out_len(int mode, int64_t n, int layout) {
  if (mode == DUAL_MODE_HVP) return n;
  return layout == DUAL_HESSIAN_PACKED ? n * (n + 1) / 2 : n * n;
}

/* Element (j, k), j <= k, of one output's Hessian in the caller's layout; *mirror gets (k, j). */
static int64_t element(int64_t n, int layout, int64_t j, int64_t k, int64_t *mirror) {
  if (layout == DUAL_HESSIAN_PACKED) {
    *mirror = -1;
    return j * n - j * (j - 1) / 2 + (k - j);
  }
  *mirror = j == k ? -1 : k * n + j;
  return j * n + k;
}

/* Benchmark knob DUAL_KNOB_HESSIAN_NESTED (job->nested_hessian): diagonal blocks carry all N x N
 * pairs, as a dual-of-dual number would, instead of the upper triangle (the same bits, (k, l)
 * and (l, k) are the same sums; bench/NOTES.md compares the two). */

/* Seed the inputs [first, first + count) in lanes [lane0, lane0 + count). */
static void seed(dual_pass2 *ps, int lane0, int64_t first, int count) {
  for (int k = 0; k < count; ++k) ps->lane_input[lane0 + k] = (int32_t)(first + k);
}

void dual_pass2_make(const dual_job *job, int64_t index, dual_pass2 *ps) {
  const int64_t n = job->prog->n_in, c = dual_pass2_block(job), nb = blocks_of(job);
  ps->nlanes = ps->ngrad = ps->npairs = 0;
  ps->vlane = -1;
  if (n == 0) return;
  if (job->mode == DUAL_MODE_HVP) {
    const int64_t first = index * c;
    const int cnt = (int)(n - first < c ? n - first : c);
    ps->vlane = 0;
    ps->lane_input[0] = -1;
    seed(ps, 1, first, cnt);
    ps->nlanes = cnt + 1;
    for (int k = 0; k < cnt; ++k) {
      ps->grad_lane[k] = (uint8_t)(k + 1), ps->grad_col[k] = (int32_t)(first + k);
      ps->pk[k] = 0, ps->pl[k] = (uint8_t)(k + 1);
      ps->out0[k] = first + k, ps->out1[k] = -1;
    }
    ps->ngrad = ps->npairs = cnt;
    return;
  }
  int64_t a = 0, rest = index; /* pass index -> block pair (a, b), a <= b, row by row */
  while (rest >= nb - a) rest -= nb - a, ++a;
  const int64_t b = a + rest;
  const int64_t fa = a * c, fb = b * c;
  const int ca = (int)(n - fa < c ? n - fa : c), cb = (int)(n - fb < c ? n - fb : c);
  const int layout = job->b->h_layout;
  seed(ps, 0, fa, ca);
  if (a == b) {
    ps->nlanes = ca;
    for (int k = 0; k < ca; ++k) ps->grad_lane[k] = (uint8_t)k, ps->grad_col[k] = (int32_t)(fa + k);
    ps->ngrad = ca;
    const int nested = job->nested_hessian && ca * ca <= DUAL_PASS2_MAX_PAIRS;
    for (int k = 0; k < ca; ++k)
      for (int l = nested ? 0 : k; l < ca; ++l) {
        const int q = ps->npairs++;
        ps->pk[q] = (uint8_t)k, ps->pl[q] = (uint8_t)l;
        if (l >= k) {
          ps->out0[q] = element(n, layout, fa + k, fa + l, &ps->out1[q]);
          if (nested) ps->out1[q] = -1; /* (l, k) is computed too */
        } else {
          ps->out0[q] = layout == DUAL_HESSIAN_PACKED ? element(n, layout, fa + l, fa + k, &ps->out1[q])
                                                      : (fa + k) * n + (fa + l);
          ps->out1[q] = -1;
        }
      }
    return;
  }
  seed(ps, ca, fb, cb);
  ps->nlanes = ca + cb;
  for (int k = 0; k < ca; ++k)
    for (int l = 0; l < cb; ++l) {
      const int q = ps->npairs++;
      ps->pk[q] = (uint8_t)k, ps->pl[q] = (uint8_t)(ca + l);
      ps->out0[q] = element(n, layout, fa + k, fb + l, &ps->out1[q]);
    }
}
