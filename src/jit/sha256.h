/*
 * sha256.h — SHA-256 (FIPS 180-4), the compiled tier's cache key and entry checksum.
 */
#ifndef DUAL_SHA256_H
#define DUAL_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct dual_sha256 {
  uint32_t h[8];
  uint64_t bytes;
  uint8_t block[64];
  size_t fill;
} dual_sha256;

void dual_sha256_init(dual_sha256 *s);
void dual_sha256_update(dual_sha256 *s, const void *data, size_t len);
void dual_sha256_final(dual_sha256 *s, uint8_t digest[32]);

/* The digest as 64 lowercase hex digits and a NUL. */
void dual_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif /* DUAL_SHA256_H */
