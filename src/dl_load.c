/*
 * dl_load.c — the first loadable of an optional library's file names (dl_load.h).
 */
#include "dl_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *dual_dl_load(const char *env_var, const char *const *names, int count, char *why, size_t cap) {
  const char *env = getenv(env_var);
  const int only_env = env != NULL && env[0] != '\0'; /* that file, or none */
  size_t used = 0;
  void *lib = NULL;
  if (cap > 0) why[0] = '\0';
  for (int i = -1; i < (only_env ? 0 : count) && lib == NULL; ++i) {
    const char *name = i < 0 ? env : names[i];
    if (name == NULL || name[0] == '\0') continue;
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL && used < cap) {
      const char *e = dlerror();
      const int k = snprintf(why + used, cap - used, "%s%s", used ? "; " : "", e ? e : name);
      if (k > 0) used += (size_t)k;
    }
  }
  return lib;
}
