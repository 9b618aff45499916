"""Test helpers that look like device arrays: FakeCAI dresses a host NumPy array in
__cuda_array_interface__, FakeDLPack in a CUDA __dlpack_device__ (for the binding's device
plumbing, checked on the CPU), and DeviceBuffer is real CUDA memory through the CUDA runtime
(ctypes), for GPU tests on a machine without CuPy or PyTorch."""
import ctypes
import ctypes.util

import numpy as np


class FakeCAI:
    """A host array presented through __cuda_array_interface__ (version 3)."""

    def __init__(self, a, stream=None, readonly=False):
        self.a = a
        self.stream = stream
        self.readonly = readonly

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.a.shape, "typestr": self.a.dtype.str,
                "data": (self.a.__array_interface__["data"][0], self.readonly),
                "strides": None if self.a.flags.c_contiguous else self.a.strides,
                "version": 3, "stream": self.stream}


class FakeDLPack:
    """A host array whose __dlpack_device__ claims CUDA; __dlpack__ is NumPy's."""

    def __init__(self, a):
        self.a = a
        self.streams = []

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.a.__dlpack__()


def cudart():
    """The CUDA runtime library, or None."""
    names = ["libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
             "/usr/local/cuda/lib64/libcudart.so"]
    found = ctypes.util.find_library("cudart")
    for name in ([found] if found else []) + names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


class DeviceBuffer:
    """CUDA memory holding a copy of a C- or Fortran-ordered host array, exposed with that
    array's shape and strides through __cuda_array_interface__."""

    def __init__(self, rt, host):
        assert host.flags.c_contiguous or host.flags.f_contiguous
        self.rt, self.shape, self.dtype, self.strides = rt, host.shape, host.dtype, host.strides
        self.order = "C" if host.flags.c_contiguous else "F"
        self.nbytes = host.nbytes
        self.ptr = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(self.ptr), ctypes.c_size_t(max(self.nbytes, 8))) == 0
        assert rt.cudaMemcpy(self.ptr, ctypes.c_void_p(host.ctypes.data),
                             ctypes.c_size_t(self.nbytes), 1) == 0  # host to device

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr.value, False),
                "strides": self.strides, "version": 3, "stream": None}

    def to_host(self):
        out = np.empty(self.shape, dtype=self.dtype, order=self.order)
        assert self.rt.cudaMemcpy(ctypes.c_void_p(out.ctypes.data), self.ptr,
                                  ctypes.c_size_t(self.nbytes), 2) == 0  # device to host
        return out

    def __del__(self):
        if self.ptr:
            self.rt.cudaFree(self.ptr)
