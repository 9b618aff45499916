"""The batched solvers (dual_newton, dual_lsq): their options as the C struct
dual_solve_options, and one call on host arrays.  x is copied (C order, float64) and returned
solved; params as for the evaluation methods but host arrays only."""
import ctypes

import numpy as np

from ._native import LIB
from .errors import DimensionError
from . import results


class SolveOptions(ctypes.Structure):
    """dual_solve_options, field by field (include/dualbatch.h documents each)."""
    _fields_ = [("size", ctypes.c_int64), ("max_iter", ctypes.c_int32),
                ("max_evals", ctypes.c_int32), ("line_search", ctypes.c_int32),
                ("reserved", ctypes.c_int32), ("f_abs", ctypes.c_double),
                ("f_rel", ctypes.c_double), ("x_abs", ctypes.c_double),
                ("x_rel", ctypes.c_double), ("f_red", ctypes.c_double),
                ("g_tol", ctypes.c_double), ("step_bound", ctypes.c_double)]


def options(**fields):
    """The library's defaults (dual_solve_options_init), then the fields given."""
    o = SolveOptions()
    LIB.dual_solve_options_init(ctypes.addressof(o))
    for name, value in fields.items():
        if value is None:
            continue
        if name not in dict(SolveOptions._fields_) or name in ("size", "reserved"):
            raise TypeError("unknown solver option %r" % name)
        setattr(o, name, value)
    return o


def solve(program, fn, x, params, opts):
    """Run dual_newton or dual_lsq (fn) on copies of the host arrays; a Solve result."""
    ctx = program.context
    x = np.array(x, dtype=np.float64, order="C", copy=True)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    n, npar = program.n_inputs, program.n_params
    if x.ndim != 2 or x.shape[1] != n:
        raise DimensionError("x must be (B, %d), not %s" % (n, x.shape))
    B = x.shape[0]
    p_ptr, ldp = None, 0
    if npar > 0:
        if params is None:
            raise DimensionError("the program has %d parameters: params is required" % npar)
        p = np.ascontiguousarray(params, dtype=np.float64)
        if p.ndim == 1:
            p = np.broadcast_to(p, (B, npar)).copy()
        if p.shape != (B, npar):
            raise DimensionError("params must be (B, %d) or (%d,), not %s" % (npar, npar, p.shape))
        p_ptr, ldp = p.ctypes.data, npar
    info = np.empty(B, dtype=np.int32)
    iters = np.empty(B, dtype=np.int32)
    fnorm = np.empty(B, dtype=np.float64)
    program._live()
    ctx._call(fn, ctx._handle, program._handle, ctypes.addressof(opts), B, x.ctypes.data, n, p_ptr,
              ldp, info.ctypes.data, iters.ctypes.data, fnorm.ctypes.data)
    return results.Solve(x, info, iters, fnorm)
