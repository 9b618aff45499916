"""dualbatch: batched automatic differentiation — the Python binding of the C library.

Compile f: R^n x R^p -> R^m once, evaluate it over a batch of B points with values, JVPs,
Jacobians, gradients, Hessians (full or packed), HVPs, VJPs and Monte-Carlo gradients:

    import numpy as np, dualbatch as db
    with db.Context(device="cpu") as ctx:
        prog = ctx.compile("input x[2]\\nparam c\\noutput f = x[0]*x[1] + c*sin(x[0])\\n")
        y, J, status = prog.jacobian(np.random.rand(1000, 2), params=[0.5])

Pure Python over the shared library libdualbatch.so.0 through ctypes; importing loads it
(DUALBATCH_LIBRARY, a bundled copy, or the loader path: _library.py) and checks its major
version and sizeof(dual_batch).  README "Python" is the guide; include/dualbatch.h the manual.
"""
from ._native import FOUND_BY as library_found_by
from ._native import LIB as _LIB
from ._native import LIBRARY_PATH as library_path
from ._native import text as _text
from .constants import (ADMode, Device, EXPECTED_MAJOR, HessianLayout, Knob, Memory, Mode,
                        PointFlag, SgradFlag, SolveStatus, Status, Tier)
from .context import Context
from .errors import DimensionError, DualbatchError
from .program import Program, packed_size, unpack_hessian
from . import results

__version__ = "0.1.0"

__all__ = ["ADMode", "Context", "Device", "DimensionError", "DualbatchError", "HessianLayout",
           "Knob", "Memory", "Mode", "PointFlag", "Program", "SgradFlag", "SolveStatus", "Status",
           "Tier",
           "EXPECTED_MAJOR", "build_info", "device_count", "library_found_by", "library_path",
           "library_version", "library_version_string", "packed_size", "results",
           "status_string", "unpack_hessian"]


def library_version():
    """dual_version() of the loaded library: major*10000 + minor*100 + patch."""
    return int(_LIB.dual_version())


def library_version_string():
    """dual_version_string(): "major.minor.patch"."""
    return _text(_LIB.dual_version_string())


def status_string(status):
    """The library's English message for a status code."""
    return _text(_LIB.dual_status_string(int(status)))


def device_count():
    """CUDA devices the library can use (0 in a build without CUDA or without a GPU)."""
    return int(_LIB.dual_device_count())


def build_info():
    """The library's build and device description ("CUDA: off; OpenMP threads: 2")."""
    import ctypes
    need = int(_LIB.dual_build_info(None, 0))
    buf = ctypes.create_string_buffer(need + 1)
    _LIB.dual_build_info(buf, need + 1)
    return buf.value.decode("utf-8", "replace")
