/*
 * rtc_std.h — what the shared headers take from the C standard library, for NVRTC, which has no
 * standard headers of its own.  The compiled tier (jit/rtc_compile.c) hands this text to NVRTC
 * under each of the names <stdint.h>, <stddef.h>, <math.h>, <float.h>, <string.h>; the device
 * math functions themselves (fabs, sqrt, fma, copysign, round, remainder, ...) and memcpy are
 * NVRTC built-ins.  Never included by a host or nvcc build.
 */
#ifndef DUAL_RTC_STD_H
#define DUAL_RTC_STD_H
#if !defined(__CUDACC_RTC__)
#error "rtc_std.h is for NVRTC only"
#endif

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define UINT32_MAX 4294967295u

#ifndef NULL
#define NULL 0
#endif

#define DBL_MAX 1.79769313486231570815e+308
#define DBL_MIN 2.22507385850720138309e-308
#define DBL_EPSILON 2.22044604925031308085e-16
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)

#endif /* DUAL_RTC_STD_H */
