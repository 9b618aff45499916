"""Device arrays without copies: objects exposing __cuda_array_interface__ (CuPy, PyTorch CUDA
tensors, Numba) or DLPack (__dlpack__ with a CUDA __dlpack_device__, e.g. JAX) become Operands
with DUAL_MEMORY_DEVICE, their strides passed as they are.

Outputs of a call with device inputs are allocated by the library x comes from (CuPy or PyTorch,
on x's device) unless out= gives them; inputs of another dtype are converted by that library.
Other producers need out= (and status=) device arrays and float64 inputs.

Ordering: a device call runs on one CUDA stream (the context's explicit stream, else the current
stream of CuPy / PyTorch, else the __cuda_array_interface__ "stream", else the legacy default
stream), which is given to the library for that call (dual_context_set_stream) and to
__dlpack__(stream=...), so the call sees the producer's pending work done; the library returns
after that stream has finished the call.
"""
import ctypes

from .constants import Memory
from ._operands import Operand

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
KDL_INT, KDL_FLOAT = 0, 2
LEGACY_STREAM = 1  # cudaStreamLegacy


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# (DLPack code, bits) and __cuda_array_interface__ typestr per NumPy dtype name
_DL_TYPES = {"float64": (KDL_FLOAT, 64), "int32": (KDL_INT, 32)}
_CAI_TYPES = {"float64": ("<f8",), "int32": ("<i4",)}


def _producer(obj):
    """'cupy', 'torch' or None: the library a device array comes from."""
    root = type(obj).__module__.split(".")[0]
    return root if root in ("cupy", "torch") else None


def is_device_array(obj):
    """True for CUDA device (or managed) memory exposed by __cuda_array_interface__ or DLPack."""
    if obj is None:
        return False
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None and hasattr(obj, "__dlpack__"):
        try:
            return int(dev()[0]) in (KDL_CUDA, KDL_CUDA_MANAGED)
        except Exception:  # pragma: no cover - a producer's own failure
            return False
    return False


def call_stream(template, explicit):
    """The CUDA stream (an int handle, never 0) a device call with first array `template` runs
    on."""
    if explicit:
        return int(explicit)
    producer = _producer(template)
    s = None
    if producer == "cupy":
        import cupy
        s = cupy.cuda.get_current_stream().ptr
    elif producer == "torch":
        import torch
        s = torch.cuda.current_stream(template.device).cuda_stream
    elif hasattr(template, "__cuda_array_interface__"):
        s = template.__cuda_array_interface__.get("stream")
    return int(s) if s else LEGACY_STREAM


def _cai_operand(obj, name, dtype_name):
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise ValueError("%s: masked device arrays are not supported" % name)
    if cai["typestr"] not in _CAI_TYPES[dtype_name]:
        raise TypeError("%s: device array of type %s; this needs %s" % (name, cai["typestr"],
                                                                        dtype_name))
    shape = tuple(int(s) for s in cai["shape"])
    itemsize = 8 if dtype_name == "float64" else 4
    if cai.get("strides") is None:
        strides, step = [], 1
        for s in reversed(shape):
            strides.append(step)
            step *= s
        strides = tuple(reversed(strides))
    else:
        if any(int(s) % itemsize for s in cai["strides"]):
            raise ValueError("%s: device array strides are not whole elements" % name)
        strides = tuple(int(s) // itemsize for s in cai["strides"])
    ptr, readonly = cai["data"]
    return Operand(ptr or 0, shape, strides, Memory.DEVICE, obj, readonly=readonly)


def _dlpack_operand(obj, name, dtype_name, stream, devices=(KDL_CUDA, KDL_CUDA_MANAGED)):
    try:
        capsule = obj.__dlpack__(stream=stream)
    except TypeError:  # a producer without the stream argument
        capsule = obj.__dlpack__()
    managed = _DLManagedTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    t = managed.dl_tensor
    code, bits = _DL_TYPES[dtype_name]
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (code, bits, 1):
        raise TypeError("%s: DLPack tensor of type code %d, %d bits, %d lanes; this needs %s"
                        % (name, t.dtype.code, t.dtype.bits, t.dtype.lanes, dtype_name))
    if t.device.device_type not in devices:
        raise ValueError("%s: DLPack device type %d is not CUDA memory"
                         % (name, t.device.device_type))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))  # DLPack strides are in elements
    else:
        strides, step = [], 1
        for s in reversed(shape):
            strides.append(step)
            step *= s
        strides = tuple(reversed(strides))
    ptr = (t.data or 0) + t.byte_offset
    # the capsule stays unconsumed: when it is freed its destructor calls the producer's deleter
    return Operand(ptr, shape, strides, Memory.DEVICE, obj, keep=capsule)


def device_operand(obj, name, stream, dtype_name="float64", convert=True):
    """Operand of a device array; an input of another dtype is converted by CuPy / PyTorch when
    `convert` (a new array), else TypeError."""
    try:
        if hasattr(obj, "__cuda_array_interface__"):
            return _cai_operand(obj, name, dtype_name)
        return _dlpack_operand(obj, name, dtype_name, stream)
    except TypeError:
        if not convert:
            raise
        converted = _convert(obj, name, dtype_name)
        return device_operand(converted, name, stream, dtype_name, convert=False)


def _convert(obj, name, dtype_name):
    producer = _producer(obj)
    if producer == "cupy":
        import cupy
        return obj.astype(getattr(cupy, dtype_name))
    if producer == "torch":
        import torch
        return obj.to(getattr(torch, dtype_name))
    raise TypeError("%s: a device array of another dtype than %s from %s: convert it first "
                    "(the binding converts only CuPy and PyTorch arrays)"
                    % (name, dtype_name, type(obj).__module__))


def allocate(template, shape, dtype_name, name):
    """A new device array of `shape` from the library `template` comes from, on its device."""
    producer = _producer(template)
    if producer == "cupy":
        import cupy
        with template.device:
            return cupy.empty(shape, dtype=getattr(cupy, dtype_name))
    if producer == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype_name), device=template.device)
    raise ValueError("%s: x is a device array from %s, which the binding cannot allocate: pass "
                     "out= (and status=) device arrays" % (name, type(template).__module__))
