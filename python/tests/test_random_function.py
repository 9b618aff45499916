"""A random smooth function of 4 inputs and 1 parameter with 2 outputs, written both as program
text and as a NumPy expression: the binding's Jacobian, JVP, VJP and gradient against the
complex step (exact to rounding), its Hessians and HVPs against central differences of
complex-step Jacobians, in forward and reverse mode."""
import numpy as np
import pytest

import dualbatch as db

# (program text, NumPy text) of term templates; a, b are coefficients, i, j, k input indices
TERMS = [
    ("{a}*sin(x[{i}]*x[{j}])", "{a}*np.sin(x[{i}]*x[{j}])"),
    ("{a}*exp({b}*x[{i}])", "{a}*np.exp({b}*x[{i}])"),
    ("{a}*log(1 + x[{i}]^2)", "{a}*np.log(1 + x[{i}]**2)"),
    ("{a}*x[{i}]*x[{j}]*x[{k}]", "{a}*x[{i}]*x[{j}]*x[{k}]"),
    ("{a}*tanh(x[{i}] - c)", "{a}*np.tanh(x[{i}] - c)"),
    ("{a}*sqrt(1 + x[{i}]^2 + x[{j}]^2)", "{a}*np.sqrt(1 + x[{i}]**2 + x[{j}]**2)"),
    ("{a}*cos(x[{i}])/(2 + x[{j}]^2)", "{a}*np.cos(x[{i}])/(2 + x[{j}]**2)"),
    ("{a}*atan(c*x[{i}])", "{a}*np.arctan(c*x[{i}])"),
]
N, M = 4, 2


def random_function(rng, terms_per_output=6):
    """(program text, [NumPy expression per output])."""
    lines, exprs = ["input x[%d]" % N, "param c"], []
    for out in range(M):
        dsl, npy = [], []
        for _ in range(terms_per_output):
            t_dsl, t_np = TERMS[rng.integers(len(TERMS))]
            args = dict(a=repr(round(float(rng.uniform(-2, 2)), 4)),
                        b=repr(round(float(rng.uniform(-1, 1)), 4)),
                        i=rng.integers(N), j=rng.integers(N), k=rng.integers(N))
            dsl.append("(" + t_dsl.format(**args) + ")")
            npy.append("(" + t_np.format(**args) + ")")
        lines.append("output f%d = %s" % (out, " + ".join(dsl)))
        exprs.append(" + ".join(npy))
    return "\n".join(lines) + "\n", exprs


def numpy_f(exprs, x, c):
    """The outputs (B, M) by NumPy (x may be complex)."""
    cols = [x[:, i] for i in range(N)]
    return np.stack([eval(e, {"np": np, "x": cols, "c": c}) for e in exprs], axis=1)


def complex_step_jacobian(exprs, x, c, h=1e-30):
    J = np.empty((len(x), M, N))
    for j in range(N):
        xc = x.astype(complex)
        xc[:, j] += 1j * h
        J[:, :, j] = numpy_f(exprs, xc, c).imag / h
    return J


def fd_hessian(exprs, x, c, delta=1e-5):
    """Central differences of the complex-step Jacobian: (B, M, N, N)."""
    H = np.empty((len(x), M, N, N))
    for k in range(N):
        e = np.zeros(N)
        e[k] = delta
        H[:, :, :, k] = (complex_step_jacobian(exprs, x + e, c)
                         - complex_step_jacobian(exprs, x - e, c)) / (2 * delta)
    return H


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("ad_mode", ["forward", "reverse"])
def test_against_complex_step(seed, ad_mode):
    rng = np.random.default_rng(seed)
    src, exprs = random_function(rng)
    B = 40
    x = rng.uniform(-1.5, 1.5, size=(B, N))
    c = rng.uniform(0.5, 1.5, size=(B, 1))
    y_ref = numpy_f(exprs, x, c[:, 0])
    J_ref = complex_step_jacobian(exprs, x, c[:, 0])
    H_ref = fd_hessian(exprs, x, c[:, 0])
    scale1 = np.abs(J_ref).max()
    scale2 = np.abs(H_ref).max()
    with db.Context(device="cpu", ad_mode=ad_mode) as ctx:
        prog = ctx.compile(src, name="random%d" % seed)
        r = prog.jacobian(x, c)
        assert not r.status.any()
        np.testing.assert_allclose(r.y, y_ref, rtol=1e-13, atol=1e-13 * np.abs(y_ref).max())
        np.testing.assert_allclose(r.J, J_ref, rtol=1e-12, atol=1e-13 * scale1)
        v = rng.normal(size=(B, N))
        u = rng.normal(size=(B, M))
        np.testing.assert_allclose(prog.jvp(x, v, c).jv, np.einsum("bij,bj->bi", J_ref, v),
                                   rtol=1e-12, atol=1e-12 * scale1)
        np.testing.assert_allclose(prog.vjp(x, u, c).g, np.einsum("bi,bij->bj", u, J_ref),
                                   rtol=1e-12, atol=1e-12 * scale1)
        h = prog.hessian(x, c)
        np.testing.assert_allclose(h.H, H_ref, rtol=1e-7, atol=1e-8 * scale2)
        np.testing.assert_array_equal(h.H, np.swapaxes(h.H, 2, 3))  # exactly symmetric
        hv = prog.hvp(x, v, c)
        np.testing.assert_allclose(hv.hv, np.einsum("bijk,bk->bij", H_ref, v), rtol=1e-7,
                                   atol=1e-8 * scale2 * np.abs(v).max())
        # the gradient of one output (a program of f0 alone)
        f0 = ctx.compile(src.split("output f1")[0], name="f0")
        g = f0.gradient(x, c)
        np.testing.assert_allclose(g.g, J_ref[:, 0], rtol=1e-12, atol=1e-13 * scale1)
