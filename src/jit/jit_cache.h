/*
 * jit_cache.h — the compiled tier's disk cache: one file per kernel module, named by its key
 * (64 hex digits + ".cubin").  Writes are atomic (a private temporary file in the same
 * directory, then rename), the directory is created private (0700), and every entry is checked
 * on load — magic, its own key, size, SHA-256 of the payload — so a corrupt, truncated or
 * foreign file is ignored (and replaced by the next store), never loaded.  Processes sharing the
 * directory never see a partial entry.  Host code, no CUDA.
 */
#ifndef DUAL_JIT_CACHE_H
#define DUAL_JIT_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The cache directory: `configured` if not NULL/empty, else $DUALBATCH_CACHE_DIR, else
 * $XDG_CACHE_HOME/dualbatch, else $HOME/.cache/dualbatch.  Returns 0, or -1 when none can be
 * named (no HOME) or it does not fit in cap. */
int dual_jit_cache_dir(const char *configured, char *buf, size_t cap);

/* The same, when that directory may be used: 0; -1 when none can be named (*why NULL); -2 when
 * it exists but fails the trust checks of jit_cache_trust.h (*why says why).  A missing
 * directory may be used: the first store creates it private. */
int dual_jit_cache_dir_trusted(const char *configured, char *buf, size_t cap, const char **why);

/* The entry for `key`, checked: 0 with *image (heap) and *size, or -1 (absent, unreadable or
 * invalid; *why, when not NULL, gets a static reason). */
int dual_jit_cache_load(const char *dir, const uint8_t key[32], void **image, size_t *size,
                        const char **why);

/* Store an entry atomically, creating the directory (0700) if needed.  0, or -1 with a static
 * reason in *why (read-only or missing parent, disk full, ...): the caller goes on without it. */
int dual_jit_cache_store(const char *dir, const uint8_t key[32], const void *image, size_t size,
                         const char **why);

/* Write all len bytes to fd (short writes and EINTR retried): 0, or -1. */
int dual_write_all(int fd, const void *data, size_t len);

/* Entries (files named like entries) and their bytes; 0, or -1 if the directory cannot be read
 * (a missing directory is an empty cache: 0). */
int dual_jit_cache_usage(const char *dir, int64_t *entries, int64_t *bytes);

/* Remove every entry (and stale temporary files, and the directory's secret: the next store
 * makes a new one); 0, or -1 if some could not be removed. */
int dual_jit_cache_clear(const char *dir, int64_t *removed);

#endif /* DUAL_JIT_CACHE_H */
