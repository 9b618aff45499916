"""Every product of the binding against hand-derived derivatives evaluated with NumPy:
f = x0*x1 + c*sin(x0), g = log(x1) (README's first program) and the Rosenbrock function
(gradient, Hessian, HVP), in forward and reverse mode."""
import numpy as np
import pytest

import dualbatch as db

SRC = """input x[2]
param c
output f = x[0]*x[1] + c*sin(x[0])
output g = log(x[1])
"""
RTOL, ATOL = 1e-13, 1e-14


def first_ref(x, c):
    """y (B, 2), J (B, 2, 2), H (B, 2, 2, 2) of (f, g) by hand."""
    x0, x1 = x[:, 0], x[:, 1]
    B = len(x)
    y = np.stack([x0 * x1 + c * np.sin(x0), np.log(x1)], axis=1)
    J = np.zeros((B, 2, 2))
    J[:, 0, 0] = x1 + c * np.cos(x0)
    J[:, 0, 1] = x0
    J[:, 1, 1] = 1 / x1
    H = np.zeros((B, 2, 2, 2))
    H[:, 0, 0, 0] = -c * np.sin(x0)
    H[:, 0, 0, 1] = H[:, 0, 1, 0] = 1
    H[:, 1, 1, 1] = -1 / x1 ** 2
    return y, J, H


@pytest.fixture
def first(ctx, rng):
    prog = ctx.compile(SRC, name="first")
    x = rng.uniform(0.2, 3.0, size=(37, 2))
    c = rng.uniform(-2, 2, size=(37, 1))
    return prog, x, c, first_ref(x, c[:, 0])


def test_shape_and_names(first):
    prog = first[0]
    assert (prog.n_inputs, prog.n_params, prog.n_outputs) == (2, 1, 2)
    assert prog.input_names == ["x[0]", "x[1]"]
    assert prog.param_names == ["c"]
    assert prog.output_names == ["f", "g"]
    assert prog.n_draws == 0


def test_eval(first):
    prog, x, c, (y, _, _) = first
    r = prog.eval(x, c)
    np.testing.assert_allclose(r.y, y, rtol=RTOL, atol=ATOL)
    assert r.status.dtype == np.int32 and r.status.shape == (37,) and not r.status.any()


def test_last_device_and_split_on_the_cpu(ctx, first):
    prog, x, c, _ = first
    prog.jacobian(x, c)
    assert ctx.last_device == "cpu"
    assert ctx.last_split == (0, 37)


def test_calibrate_a_cpu_context(ctx, tmp_path):
    ctx.set_cache_dir(str(tmp_path))
    figures = ctx.calibrate()
    assert figures["gpu"] == 0 and figures["threads"] >= 1
    assert 0 < figures["cpu_arith_s"] <= figures["cpu_special_s"] < 1e-5


def test_jacobian(first):
    prog, x, c, (y, J, _) = first
    r = prog.jacobian(x, c)
    assert r.J.shape == (37, 2, 2)
    np.testing.assert_allclose(r.y, y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(r.J, J, rtol=RTOL, atol=ATOL)


def test_jvp(first, rng):
    prog, x, c, (y, J, _) = first
    v = rng.normal(size=x.shape)
    r = prog.jvp(x, v, c)
    np.testing.assert_allclose(r.y, y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(r.jv, np.einsum("bij,bj->bi", J, v), rtol=RTOL, atol=ATOL)


def test_vjp(first, rng):
    prog, x, c, (y, J, _) = first
    u = rng.normal(size=(37, 2))
    r = prog.vjp(x, u, c)
    np.testing.assert_allclose(r.y, y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(r.g, np.einsum("bi,bij->bj", u, J), rtol=RTOL, atol=ATOL)


def test_gradient_of_one_output(ctx, first):
    _, x, c, (y, J, _) = first
    prog = ctx.compile("input x[2]\nparam c\noutput f = x[0]*x[1] + c*sin(x[0])\n")
    r = prog.gradient(x, c)
    assert r.f.shape == (37,) and r.g.shape == (37, 2)
    np.testing.assert_allclose(r.f, y[:, 0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(r.g, J[:, 0, :], rtol=RTOL, atol=ATOL)


def test_hessian_full_and_packed(first):
    prog, x, c, (y, J, H) = first
    r = prog.hessian(x, c)
    assert r.H.shape == (37, 2, 2, 2)
    np.testing.assert_allclose(r.y, y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(r.J, J, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(r.H, H, rtol=RTOL, atol=ATOL)
    p = prog.hessian(x, c, packed=True)
    assert p.H.shape == (37, 2, 3)
    rows, cols = np.triu_indices(2)  # the packed order: the upper triangle row by row
    np.testing.assert_allclose(p.H, H[:, :, rows, cols], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(db.unpack_hessian(p.H, 2), r.H)


def test_hvp(first, rng):
    prog, x, c, (y, J, H) = first
    v = rng.normal(size=x.shape)
    r = prog.hvp(x, v, c)
    np.testing.assert_allclose(r.J, J, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(r.hv, np.einsum("bijk,bk->bij", H, v), rtol=RTOL, atol=ATOL)


N_ROS = 6
ROSENBROCK = ("input x[%d]\noutput f = sum(i in 0..%d, 100*(x[i+1] - x[i]^2)^2 + (1 - x[i])^2)\n"
              % (N_ROS, N_ROS - 1))


def rosenbrock_ref(x):
    """f, gradient and Hessian of sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 by hand."""
    a, b = x[:, :-1], x[:, 1:]
    f = np.sum(100 * (b - a ** 2) ** 2 + (1 - a) ** 2, axis=1)
    g = np.zeros_like(x)
    g[:, :-1] += -400 * a * (b - a ** 2) - 2 * (1 - a)
    g[:, 1:] += 200 * (b - a ** 2)
    B, n = x.shape
    H = np.zeros((B, n, n))
    i = np.arange(n - 1)
    H[:, i, i] += 1200 * a ** 2 - 400 * b + 2
    H[:, i + 1, i + 1] += 200
    H[:, i, i + 1] = H[:, i + 1, i] = -400 * a
    return f, g, H


@pytest.mark.parametrize("ad_mode", ["forward", "reverse"])
def test_rosenbrock(rng, ad_mode):
    with db.Context(device="cpu", ad_mode=ad_mode) as ctx:
        prog = ctx.compile(ROSENBROCK, name="rosenbrock")
        x = rng.uniform(-2, 2, size=(50, N_ROS))
        f, g, H = rosenbrock_ref(x)
        tol = dict(rtol=1e-13, atol=1e-13 * np.abs(H).max())
        r = prog.gradient(x)
        assert ctx.last_ad_mode == ad_mode
        np.testing.assert_allclose(r.f, f, rtol=1e-13)
        np.testing.assert_allclose(r.g, g, **tol)
        h = prog.hessian(x)
        assert ctx.last_ad_mode == ad_mode
        np.testing.assert_allclose(h.H[:, 0], H, **tol)
        v = rng.normal(size=x.shape)
        hv = prog.hvp(x, v)
        np.testing.assert_allclose(hv.hv[:, 0], np.einsum("bjk,bk->bj", H, v), **tol)
        u = rng.normal(size=(50, 1))
        np.testing.assert_allclose(prog.vjp(x, u).g, u * g, **tol)
