"""DualBatch: the ctypes mirror of the header's struct dual_batch, field by field in order.

The library refuses a batch whose `size` is not its own sizeof(dual_batch); the loader
(_library.py) compares ctypes.sizeof(DualBatch) with the size dual_batch_init writes, and
tests/test_header_sync.py compares the fields with the header.  Array fields are void * here
(the header's const double *, double *, int32_t *: the same size and alignment), so that an
address from NumPy, __cuda_array_interface__ or DLPack is stored as it is."""
import ctypes

_dp = ctypes.c_void_p
_i64 = ctypes.c_int64
_i32 = ctypes.c_int32


class DualBatch(ctypes.Structure):
    """struct dual_batch: element (point b, component i) of array A is A[b*A_ps + i*A_es];
    derivative (b, output i, input j) is d[b*d_ps + i*d_rs + j*d_cs]; strides in elements."""
    _fields_ = [
        ("size", _i64), ("count", _i64),
        ("x", _dp), ("x_ps", _i64), ("x_es", _i64),
        ("p", _dp), ("p_ps", _i64), ("p_es", _i64),
        ("v", _dp), ("v_ps", _i64), ("v_es", _i64),
        ("y", _dp), ("y_ps", _i64), ("y_es", _i64),
        ("d", _dp), ("d_ps", _i64), ("d_rs", _i64), ("d_cs", _i64),
        ("status", _dp),
        ("memory", _i32),
        ("h", _dp), ("h_ps", _i64), ("h_rs", _i64), ("h_es", _i64),
        ("h_layout", _i32),
        ("u", _dp), ("u_ps", _i64), ("u_es", _i64),
        ("samples", _i64),
        ("seed", _i64),
        ("sgrad_flags", _i32),
        ("point0", _i64),
    ]
