/*
 * rtc_files.h — the header texts that generated kernels include, embedded in the library at
 * build time (cmake/embed_files.cmake, listed in src/CMakeLists.txt).  NVRTC receives them as
 * in-memory headers under these names; no file is read at run time.
 */
#ifndef DUAL_RTC_FILES_H
#define DUAL_RTC_FILES_H

#include <stdint.h>

typedef struct dual_embedded_file {
  const char *name; /* the name an #include uses: "dual/rules.h", "math.h", ... */
  const char *text; /* NUL-terminated */
  int64_t size;     /* bytes, without the NUL */
} dual_embedded_file;

extern const dual_embedded_file dual_rtc_files[];
extern const int dual_rtc_file_count;

#endif /* DUAL_RTC_FILES_H */
