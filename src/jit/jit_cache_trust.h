/*
 * jit_cache_trust.h — the disk cache treated as untrusted input: the checks made before a file
 * of the cache directory is read as code (jit_cache.c).  A directory is trusted when it and every
 * directory above it belong to this user or root and nobody else can write them (sticky
 * directories like /tmp excepted above it); an entry when it is a regular file of this user,
 * written by nobody else, with a single link, opened without following a symbolic link; its
 * contents when its tag — HMAC-SHA-256 of key and payload under a random per-directory secret
 * (file ".secret", 0600) — verifies.  An entry copied from another directory, written by another
 * user or edited by hand therefore fails, and is compiled again, never loaded.
 */
#ifndef DUAL_JIT_CACHE_TRUST_H
#define DUAL_JIT_CACHE_TRUST_H

#include <stddef.h>
#include <stdint.h>

/* The directory's secret: a file of this name in it (jit_cache.c's clear removes it too). */
#define DUAL_CACHE_SECRET ".secret"

/* *why = text, when why is not NULL: the cache functions' reasons are static texts. */
static inline void dual_cache_set_why(const char **why, const char *text) {
  if (why != NULL) *why = text;
}

/* 0: `dir` exists and is trusted; 1: it does not exist (yet); -1: it exists and is not trusted,
 * *why (a static text) says why. */
int dual_cache_dir_trust(const char *dir, const char **why);

/* Open an entry for reading: a descriptor, or -1 with *why ("no entry", "a symbolic link", ...). */
int dual_cache_open_entry(const char *path, const char **why);

/* The directory's secret: 0 and secret[32], or -1 with *why.  With `create` a missing secret is
 * made (atomically: concurrent processes agree on one); without it a missing secret fails. */
int dual_cache_secret(const char *dir, int create, uint8_t secret[32], const char **why);

/* HMAC-SHA-256 under `secret` of the 32-byte key followed by the payload. */
void dual_cache_tag(const uint8_t secret[32], const uint8_t key[32], const void *payload,
                    size_t size, uint8_t tag[32]);

#endif /* DUAL_JIT_CACHE_TRUST_H */
