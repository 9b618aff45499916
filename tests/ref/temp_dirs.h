/*
 * temp_dirs.h — scratch directories for tests that write files (cache entries, calibrations):
 * made fresh under /tmp and removed afterwards.
 */
#ifndef DUAL_TEST_TEMP_DIRS_H
#define DUAL_TEST_TEMP_DIRS_H

#include <stddef.h>

/* A new empty directory /tmp/dualbatch-<name>-XXXXXX in dir (cap bytes); 0, or -1. */
int dual_test_temp_dir(char *dir, size_t cap, const char *name);

/* Remove dir and everything in it (made writable first); 0, or -1. */
int dual_test_remove_dir(const char *dir);

#endif /* DUAL_TEST_TEMP_DIRS_H */
