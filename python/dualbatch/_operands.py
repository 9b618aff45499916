"""Operands: an array as dual_run sees it (address of element 0, strides in elements, memory
kind), made from a NumPy array or any host array-like, or from a device array (_device.py).

Host inputs are used in place whatever their strides (Fortran order, slices, negative steps,
broadcast views with stride 0): a copy is made only when the dtype is not float64, or when the
data is misaligned or its strides are not whole elements.  Outputs are never copied: an out=
array must be float64 (int32 for status) with the exact shape, writable, and element-strided.
"""
import numpy as np

from .constants import Memory
from .errors import DimensionError


class Operand:
    """One array of a call: `ptr` (int, element 0), `shape`, `strides` (elements), `memory`
    (Memory.HOST or DEVICE), `array`, the object the caller gets back, `keep`, anything else
    that must live as long as the call (a DLPack capsule), and whether the memory is read-only."""
    __slots__ = ("ptr", "shape", "strides", "memory", "array", "keep", "readonly")

    def __init__(self, ptr, shape, strides, memory, array, keep=None, readonly=False):
        self.ptr = int(ptr)
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.memory = memory
        self.array = array
        self.keep = keep
        self.readonly = bool(readonly)


def _shape_text(shape):
    return "(" + ", ".join(str(s) for s in shape) + ")"


def host_array(obj, dtype=np.float64):
    """`obj` as a NumPy array of `dtype` usable in place: the same array when it already is one
    (any strides), else a copy (another dtype, misaligned data, strides not whole elements)."""
    a = np.asarray(obj)
    if a.dtype != dtype:
        a = a.astype(dtype)
    itemsize = a.itemsize
    if not a.flags.aligned or any(s % itemsize for s in a.strides):
        a = np.array(a, dtype=dtype, order="C", copy=True)  # a new, aligned buffer
    return a


def host_operand(a):
    """Operand of a NumPy array `a` (aligned, element strides)."""
    itemsize = a.itemsize
    return Operand(a.__array_interface__["data"][0], a.shape, [s // itemsize for s in a.strides],
                   Memory.HOST, a)


def check_points(op, name, width, what):
    """`op` must be (B, width): x, which gives B.  Returns B."""
    if len(op.shape) != 2 or op.shape[1] != width:
        raise DimensionError("%s has shape %s; the program takes (B, %d): one row of %d %s per "
                             "point" % (name, _shape_text(op.shape), width, width, what))
    return op.shape[0]


def broadcast_rows(op, name, B, width, what):
    """`op` seen as (B, width): (B, width) as it is, or one row for every point — shape
    (width,) or (1, width) — through point stride 0 (no copy)."""
    shape, strides = op.shape, op.strides
    if len(shape) == 1 and shape[0] == width:
        op.shape, op.strides = (B, width), (0, strides[0])
    elif len(shape) == 2 and shape[1] == width and shape[0] in (1, B):
        op.shape = (B, width)
        op.strides = (0 if shape[0] == 1 and B != 1 else strides[0], strides[1])
    else:
        raise DimensionError("%s has shape %s; the program takes (B, %d) = %s or one row "
                             "(%d,) for every point (%s)" % (name, _shape_text(shape), width,
                                                            _shape_text((B, width)), width, what))
    return op


def check_output(op, name, shape):
    """An out= operand must have exactly `shape` and be writable."""
    if op.shape != tuple(shape):
        raise DimensionError("%s has shape %s; this call writes %s" % (name, _shape_text(op.shape),
                                                                       _shape_text(shape)))
    if op.readonly:
        raise ValueError("%s is read-only" % name)
    return op


def host_output(out, name, shape, dtype=np.float64):
    """Operand of an output: a new C-ordered array, or `out` used in place (checked)."""
    if out is None:
        return host_operand(np.empty(shape, dtype=dtype))
    if not isinstance(out, np.ndarray):
        raise ValueError("%s must be a NumPy array (or a device array for device inputs), not %s"
                         % (name, type(out).__name__))
    if out.dtype != dtype:
        raise ValueError("%s has dtype %s; outputs are written in place and must be %s"
                         % (name, out.dtype, np.dtype(dtype).name))
    if not out.flags.aligned or any(s % out.itemsize for s in out.strides):
        raise ValueError("%s is misaligned or its strides are not whole elements" % name)
    op = host_operand(out)
    op.readonly = not out.flags.writeable
    return check_output(op, name, shape)
