"""Program: a compiled function f: R^n x R^p -> R^m, its shape and names, and the evaluation
methods, each one dual_run call over a batch of B points.

Arrays (README "Python"):
  x       (B, n) float64, any strides (C or Fortran order, slices, negative steps): used in
          place; another dtype (or misaligned data) is copied to float64 first
  params  (B, p), or (p,) / (1, p) for the same parameters at every point (point stride 0, no
          copy); may be None when p == 0.  v (B, n) and u (B, m) likewise
  out=    a tuple of arrays in the order of the result's fields (None entries are allocated; a
          lone array for eval), written in place: float64, exact shapes, any element strides
  status= an int32 (B,) contiguous array for the flag words (else one is allocated)
Results are named tuples (results.py) ending with `status`.  Device arrays (CuPy, PyTorch,
__cuda_array_interface__ or DLPack) are used in place on a GPU context, with device outputs.
"""
import ctypes
import os

import numpy as np

from ._call import Call
from ._handle import OwnsHandle
from ._native import LIB, text
from .constants import HessianLayout, Mode, SgradFlag
from .context import _seed64
from .errors import DimensionError
from . import results
from . import solve as _solve


def packed_size(n):
    """Entries of a packed Hessian of n inputs: n(n+1)/2."""
    return n * (n + 1) // 2


def unpack_hessian(H, n):
    """Full symmetric Hessians (..., n, n) from packed ones (..., n(n+1)/2), NumPy arrays."""
    H = np.asarray(H)
    if H.shape[-1] != packed_size(n):
        raise DimensionError("packed Hessians of %d inputs have %d entries, not %d"
                             % (n, packed_size(n), H.shape[-1]))
    full = np.empty(H.shape[:-1] + (n, n), dtype=H.dtype)
    rows, cols = np.triu_indices(n)  # row by row: (0,0) (0,1) .. (0,n-1) (1,1) ..
    full[..., rows, cols] = H
    full[..., cols, rows] = H
    return full


class Program(OwnsHandle):
    """A compiled program (Context.compile / Context.load); evaluates on its Context."""

    def __init__(self, context, handle):
        self.context = context
        self._handle = handle
        h = handle
        self.n_inputs = int(LIB.dual_program_num_inputs(h))
        self.n_params = int(LIB.dual_program_num_params(h))
        self.n_outputs = int(LIB.dual_program_num_outputs(h))
        self.n_instructions = int(LIB.dual_program_num_instructions(h))
        self.n_registers = int(LIB.dual_program_num_registers(h))
        self.n_active_registers = int(LIB.dual_program_num_active_registers(h))
        self.n_draws = int(LIB.dual_program_num_draws(h))
        self.input_names = [text(LIB.dual_program_input_name(h, i)) for i in range(self.n_inputs)]
        self.param_names = [text(LIB.dual_program_param_name(h, i)) for i in range(self.n_params)]
        self.output_names = [text(LIB.dual_program_output_name(h, i))
                             for i in range(self.n_outputs)]

    def close(self):
        """Destroy the library program."""
        if self._handle:
            LIB.dual_program_destroy(ctypes.byref(self._handle))

    def __repr__(self):
        return "<dualbatch.Program n=%d p=%d m=%d inputs=%s outputs=%s>" % (
            self.n_inputs, self.n_params, self.n_outputs, self.input_names, self.output_names)

    def _live(self):
        if not self._handle:
            raise ValueError("the dualbatch Program is closed")
        return self._handle

    def disassemble(self):
        """The bytecode, one instruction per line, then the register counts."""
        h = self._live()
        need = int(LIB.dual_program_disassemble(h, None, 0))
        buf = ctypes.create_string_buffer(need + 1)
        LIB.dual_program_disassemble(h, buf, need + 1)
        return buf.value.decode("utf-8", "replace")

    def to_bytes(self):
        """The versioned binary format (Context.load_bytes reads it back)."""
        h, ctx = self._live(), self.context
        size = ctypes.c_int64()
        ctx._call(LIB.dual_program_save, ctx._handle, h, None, 0, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        ctx._call(LIB.dual_program_save, ctx._handle, h, buf, size.value, ctypes.byref(size))
        return buf.raw[:size.value]

    def save(self, path):
        """Write the binary format to a file (Context.load reads it back)."""
        ctx = self.context
        ctx._call(LIB.dual_program_save_file, ctx._handle, self._live(), os.fsencode(path))

    # -- evaluation --------------------------------------------------------------------------
    def _begin(self, x, params):
        self._live()
        return Call(self, x, params)

    def eval(self, x, params=None, *, out=None, status=None):
        """Values: Eval(y (B, m), status)."""
        c = self._begin(x, params)
        (y,) = c.outputs(out, ["y"], [(c.B, self.n_outputs)])
        st = c.status(status)
        c.run(Mode.EVAL, y=y, status=st)
        return results.Eval(y.array, st.array)

    def jvp(self, x, v, params=None, *, out=None, status=None):
        """Jacobian-vector products, one direction v (B, n) per point: JVP(y (B, m), jv (B, m),
        status)."""
        c = self._begin(x, params)
        v_op = c.rows(v, "v", self.n_inputs, "direction components")
        y, jv = c.outputs(out, ["y", "jv"], [(c.B, self.n_outputs)] * 2)
        st = c.status(status)
        c.run(Mode.JVP, v=v_op, y=y, d=(jv, (jv.strides[0], jv.strides[1], 0)), status=st)
        return results.JVP(y.array, jv.array, st.array)

    def jacobian(self, x, params=None, *, out=None, status=None):
        """Full Jacobians: Jacobian(y (B, m), J (B, m, n), status), J[b, i, j] = d f_i/d x_j."""
        c = self._begin(x, params)
        m, n = self.n_outputs, self.n_inputs
        y, J = c.outputs(out, ["y", "J"], [(c.B, m), (c.B, m, n)])
        st = c.status(status)
        c.run(Mode.JACOBIAN, y=y, d=(J, J.strides), status=st)
        return results.Jacobian(y.array, J.array, st.array)

    def gradient(self, x, params=None, *, out=None, status=None):
        """Gradients of a scalar program (m == 1, else DimensionError): Gradient(f (B,),
        g (B, n), status)."""
        c = self._begin(x, params)
        f, g = c.outputs(out, ["f", "g"], [(c.B,), (c.B, self.n_inputs)])
        st = c.status(status)
        c.run(Mode.GRADIENT, y=f, d=(g, (g.strides[0], 0, g.strides[1])), status=st)
        return results.Gradient(f.array, g.array, st.array)

    def hessian(self, x, params=None, *, packed=False, out=None, status=None):
        """Hessians of every output: Hessian(y (B, m), J (B, m, n), H, status) with H (B, m, n, n)
        (H[b, i, j, k] = d2 f_i / dx_j dx_k, exactly symmetric) or, packed=True, (B, m,
        n(n+1)/2): the upper triangle row by row ((0,0) (0,1) .. (0,n-1) (1,1) ..;
        unpack_hessian expands it)."""
        c = self._begin(x, params)
        m, n = self.n_outputs, self.n_inputs
        h_shape = (c.B, m, packed_size(n)) if packed else (c.B, m, n, n)
        y, J, H = c.outputs(out, ["y", "J", "H"], [(c.B, m), (c.B, m, n), h_shape])
        if packed:
            h_strides = H.strides
        else:
            if n > 1 and H.strides[2] != n * H.strides[3]:
                raise ValueError("H's last two axes must be one axis of n*n entries for the library"
                                 " (stride of axis 2 = n * stride of axis 3)")
            h_strides = (H.strides[0], H.strides[1], H.strides[3] if n else 1)
        st = c.status(status)
        layout = HessianLayout.PACKED if packed else HessianLayout.FULL
        c.run(Mode.HESSIAN, y=y, d=(J, J.strides), h=(H, h_strides), h_layout=int(layout),
              status=st)
        return results.Hessian(y.array, J.array, H.array, st.array)

    def hvp(self, x, v, params=None, *, out=None, status=None):
        """Hessian-vector products without forming H, one direction v (B, n) per point:
        HVP(y (B, m), J (B, m, n), hv (B, m, n), status), hv[b, i] = H_i(x_b) v_b."""
        c = self._begin(x, params)
        m, n = self.n_outputs, self.n_inputs
        v_op = c.rows(v, "v", n, "direction components")
        y, J, hv = c.outputs(out, ["y", "J", "hv"], [(c.B, m), (c.B, m, n), (c.B, m, n)])
        st = c.status(status)
        c.run(Mode.HVP, v=v_op, y=y, d=(J, J.strides), h=(hv, hv.strides), status=st)
        return results.HVP(y.array, J.array, hv.array, st.array)

    def vjp(self, x, u, params=None, *, out=None, status=None):
        """Vector-Jacobian products by reverse mode, one cotangent u (B, m) per point:
        VJP(y (B, m), g (B, n), status), g[b] = u_b^T J(x_b)."""
        c = self._begin(x, params)
        u_op = c.rows(u, "u", self.n_outputs, "cotangent components")
        y, g = c.outputs(out, ["y", "g"], [(c.B, self.n_outputs), (c.B, self.n_inputs)])
        st = c.status(status)
        c.run(Mode.VJP, u=u_op, y=y, d=(g, (g.strides[0], 0, g.strides[1])), status=st)
        return results.VJP(y.array, g.array, st.array)

    def sgrad(self, x, params=None, *, samples, seed=0, antithetic=False, score=False, point0=0,
              out=None, status=None):
        """Monte-Carlo gradients of E f(x, p, xi) for a scalar program with random draws
        (normal(), uniform()): Sgrad(f (B,), g (B, n), se (B, n), status) — the sample mean of
        f, of the per-sample gradients, and the standard errors of g.  samples >= 2 (even and
        >= 4 with antithetic); seed: any 64-bit integer; score: the score-function estimator for
        normal(mu, sigma) draws; point0: the draw index of the first point (for a batch cut
        into calls).  The same arguments give the same bits on every run and device."""
        c = self._begin(x, params)
        n = self.n_inputs
        f, g, se = c.outputs(out, ["f", "g", "se"], [(c.B,), (c.B, n), (c.B, n)])
        st = c.status(status)
        flags = (SgradFlag.ANTITHETIC if antithetic else 0) | (SgradFlag.SCORE if score else 0)
        c.run(Mode.SGRAD, y=f, d=(g, (g.strides[0], 0, g.strides[1])),
              h=(se, (se.strides[0], 0, se.strides[1])), samples=int(samples), seed=_seed64(seed),
              sgrad_flags=int(flags), point0=int(point0), status=st)
        return results.Sgrad(f.array, g.array, se.array, st.array)

    def newton(self, x, params=None, **opts):
        """Solve F(x; p) = 0 per point (m == n) from the starts x (B, n): Solve(x, info, iters,
        fnorm), host arrays.  Keyword options are dual_solve_options' fields (max_iter,
        line_search, f_abs, f_rel, x_abs, x_rel, ...); the rest keep the library's defaults."""
        return _solve.solve(self, LIB.dual_newton, x, params, _solve.options(**opts))

    def lsq(self, x, params=None, **opts):
        """Minimize ||F(x; p)||^2 / 2 per point (m >= n) by Levenberg-Marquardt from the starts
        x (B, n): Solve(x, info, iters, fnorm), host arrays; options as for newton (max_evals,
        f_red, x_rel, g_tol, step_bound, f_abs, max_iter)."""
        return _solve.solve(self, LIB.dual_lsq, x, params, _solve.options(**opts))
