/*
 * dl_load.h — opening an optional shared library at run time (NVRTC, cuBLAS): the file an
 * environment variable names, or else the first of a list of names that loads.
 */
#ifndef DUAL_DL_LOAD_H
#define DUAL_DL_LOAD_H

#include <stddef.h>

/* dlopen (RTLD_NOW | RTLD_LOCAL) the file getenv(env_var) names when it is set and not empty
 * (that file only), else the first of names[0 .. count) that loads.  Returns the handle, or NULL
 * with the loader's messages for each try, separated by "; ", in why[0 .. cap). */
void *dual_dl_load(const char *env_var, const char *const *names, int count, char *why, size_t cap);

#endif /* DUAL_DL_LOAD_H */
