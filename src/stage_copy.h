/*
 * stage_copy.h — the host copies of the GPU's staging path (kernels/gpu_stage.c): a chunk of a
 * caller's strided array gathered into packed staging, and packed results scattered back.  Plain
 * C (built without CUDA too, so that tests/test_stage_copy.c checks them on any machine).  Where
 * the caller's layout is contiguous — the usual point-major arrays — each copy is memcpy of whole
 * rows or of the whole chunk, shared among the threads; elsewhere entry by entry.  Bits are
 * copied, never computed, so either way the results are the same.
 */
#ifndef DUAL_STAGE_COPY_H
#define DUAL_STAGE_COPY_H

#include <stdint.h>

/* Points [p0, p0 + c) of src (entry j of point pt at src[pt * ps + j * es]) into dst[c][len]. */
void dual_stage_gather(const double *src, int64_t ps, int64_t es, int64_t p0, int64_t c, int64_t len, double *dst,
                       int threads);

/* Packed results src[c][len] (rows of `cols`) into points [p0, p0 + c) of dst, entry (r, k) of
 * point pt at dst[pt * ps + r * rs + k * cs]: every column of each row, or only the npick columns
 * listed in pick (pick not NULL). */
void dual_stage_scatter(const double *src, int64_t len, int64_t cols, const int32_t *pick, int32_t npick,
                        double *dst, int64_t ps, int64_t rs, int64_t cs, int64_t p0, int64_t c, int threads);

#endif /* DUAL_STAGE_COPY_H */
