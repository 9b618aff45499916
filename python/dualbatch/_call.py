"""One evaluation call: checks and converts the operands (host or device, _operands.py and
_device.py), allocates the outputs, fills a DualBatch and runs dual_run under the context's
lock, turning a failure into DualbatchError with the context's message."""
import ctypes

import numpy as np

from ._batch import DualBatch
from ._device import allocate, call_stream, device_operand, is_device_array
from ._native import LIB, text
from ._operands import (broadcast_rows, check_output, check_points, host_array, host_operand,
                        host_output)
from .constants import Device, Memory
from .errors import DimensionError, error_for

_DTYPES = {"float64": np.float64, "int32": np.int32}


class Call:
    """The operands of one dual_run call on `program` at points x (B, n) with params."""

    def __init__(self, program, x, params):
        self.program = program
        self.context = program.context
        self.context._check_open()
        self.device = is_device_array(x)
        self.stream = call_stream(x, self.context._stream) if self.device else None
        self.operands = []
        self.x_op = self._input(x, "x")
        self.B = check_points(self.x_op, "x", program.n_inputs, "inputs")
        self.p_op = self.rows(params, "params", program.n_params, "parameters")

    # -- inputs ------------------------------------------------------------------------------
    def _input(self, obj, name):
        if self.device:
            if not is_device_array(obj):
                raise ValueError("x is a device array but %s is not: the arrays of one call all "
                                 "live in the same memory" % name)
            op = device_operand(obj, name, self.stream)
        else:
            if is_device_array(obj):
                raise ValueError("x is in host memory but %s is a device array: the arrays of one "
                                 "call all live in the same memory" % name)
            op = host_operand(host_array(obj))
        self.operands.append(op)
        return op

    def rows(self, obj, name, width, what):
        """A per-point input of `width` values (params, v, u): (B, width) or one row for every
        point; None only when width is 0."""
        if obj is None:
            if width:
                raise DimensionError("the program has %d %s: pass %s of shape (B, %d) or (%d,)"
                                     % (width, what, name, width, width))
            return None
        op = broadcast_rows(self._input(obj, name), name, self.B, width, what)
        return op if width else None

    # -- outputs -----------------------------------------------------------------------------
    def output(self, out, name, shape, dtype="float64"):
        shape = tuple(int(s) for s in shape)
        if self.device:
            if out is None:
                out = allocate(self.x_op.array, shape, dtype, name)
            elif not is_device_array(out):
                raise ValueError("x is a device array but %s is not: the arrays of one call all "
                                 "live in the same memory" % name)
            op = check_output(device_operand(out, name, self.stream, dtype, convert=False), name,
                              shape)
        else:
            if out is not None and is_device_array(out):
                raise ValueError("x is in host memory but %s is a device array" % name)
            op = host_output(out, name, shape, _DTYPES[dtype])
        self.operands.append(op)
        return op

    def status(self, status):
        op = self.output(status, "status", (self.B,), "int32")
        if self.B > 1 and op.strides[0] != 1:
            raise ValueError("status must be contiguous (one int32 per point, stride 1)")
        return op

    def outputs(self, out, names, shapes):
        """Operands for the result fields `names` of `shapes`, from out= (a tuple in that order,
        None entries allocated; a lone array for a single field) or allocated."""
        if out is None:
            out = (None,) * len(names)
        elif not isinstance(out, (tuple, list)):
            out = (out,)
        if len(out) != len(names):
            raise ValueError("out= has %d arrays; this call writes %d: %s" % (len(out), len(names),
                                                                             ", ".join(names)))
        return [self.output(o, n, s) for o, n, s in zip(out, names, shapes)]

    # -- the call ----------------------------------------------------------------------------
    def run(self, mode, **fields):
        """dual_run with x, params and `fields`: name -> Operand (as rows: a_ps, a_es), or for
        d and h: (Operand, strides tuple), or a plain value."""
        batch = DualBatch()
        LIB.dual_batch_init(ctypes.addressof(batch))
        batch.count = self.B
        batch.memory = int(Memory.DEVICE if self.device else Memory.HOST)
        self._rows(batch, "x", self.x_op)
        self._rows(batch, "p", self.p_op)
        for name, value in fields.items():
            if name in ("v", "u", "y"):
                self._rows(batch, name, value)
            elif name in ("d", "h"):
                op, strides = value
                setattr(batch, name, op.ptr)
                suffixes = ("ps", "rs", "cs") if name == "d" else ("ps", "rs", "es")
                for suffix, s in zip(suffixes, strides):
                    setattr(batch, "%s_%s" % (name, suffix), s)
            elif name == "status":
                batch.status = value.ptr
            else:
                setattr(batch, name, value)
        ctx = self.context
        with ctx._lock:
            ctx._check_open()
            handle = ctx._handle
            # a CPU context takes no stream: dual_run itself refuses device memory there
            on_stream = self.device and LIB.dual_context_device(handle) == Device.GPU
            if on_stream:
                ctx._call(LIB.dual_context_set_stream, handle, self.stream)
            try:
                st = LIB.dual_run(handle, self.program._handle, int(mode), ctypes.byref(batch))
                message = text(LIB.dual_context_last_error(handle)) if st else None
            finally:
                if on_stream:
                    LIB.dual_context_set_stream(handle, ctx._stream)
        if st:
            raise error_for(st, message)

    @staticmethod
    def _rows(batch, name, op):
        if op is None:
            return
        setattr(batch, name, op.ptr)
        setattr(batch, name + "_ps", op.strides[0])
        setattr(batch, name + "_es", op.strides[1] if len(op.strides) > 1 else 1)
