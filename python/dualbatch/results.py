"""The results of the evaluation methods: named tuples of arrays (NumPy, or device arrays for
device inputs), each ending with `status`, the per-point flag words (int32, shape (B,), 0 =
finite and regular; PointFlag bits).  B points, n inputs, m outputs."""
from typing import Any, NamedTuple


class Eval(NamedTuple):
    y: Any       #: (B, m) values
    status: Any  #: (B,) int32


class JVP(NamedTuple):
    y: Any       #: (B, m)
    jv: Any      #: (B, m) J(x) v
    status: Any


class Jacobian(NamedTuple):
    y: Any       #: (B, m)
    J: Any       #: (B, m, n), J[b, i, j] = d f_i / d x_j
    status: Any


class Gradient(NamedTuple):
    f: Any       #: (B,) value of the scalar program
    g: Any       #: (B, n) gradient
    status: Any


class Hessian(NamedTuple):
    y: Any       #: (B, m)
    J: Any       #: (B, m, n)
    H: Any       #: (B, m, n, n) full, or (B, m, n(n+1)/2) packed upper triangle row by row
    status: Any


class HVP(NamedTuple):
    y: Any       #: (B, m)
    J: Any       #: (B, m, n)
    hv: Any      #: (B, m, n), hv[b, i] = H_i(x_b) v_b
    status: Any


class VJP(NamedTuple):
    y: Any       #: (B, m)
    g: Any       #: (B, n), g[b] = u_b^T J(x_b)
    status: Any


class Sgrad(NamedTuple):
    f: Any       #: (B,) sample mean of f
    g: Any       #: (B, n) gradient estimate of E f
    se: Any      #: (B, n) standard errors of g
    status: Any


class Solve(NamedTuple):
    x: Any       #: (B, n) the last iterates (the solutions where info == CONVERGED)
    info: Any    #: (B,) int32 SolveStatus
    iters: Any   #: (B,) int32 steps (Newton) or Jacobians (least squares)
    fnorm: Any   #: (B,) ||F(x)||_2
