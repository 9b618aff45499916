"""The solvers from Python against NumPy: Newton's roots of x^2 = a, y^3 = x b per point (closed
form), a straight-line least-squares fit per point (numpy.linalg.lstsq), statuses, options and
argument errors."""
import numpy as np
import pytest

import dualbatch as db


def test_newton_roots_against_closed_form(ctx, rng):
    prog = ctx.compile("input x; input y; param a; param b\n"
                       "output f = x^2 - a; output g = y^3 - x * b\n")
    B = 500
    a = rng.uniform(0.5, 4.0, B)
    b = rng.uniform(-3.0, 3.0, B)
    x0 = np.column_stack([np.full(B, 1.5), np.ones(B)])
    r = prog.newton(x0, np.column_stack([a, b]), f_abs=1e-13)
    assert (r.info == db.SolveStatus.CONVERGED).all()
    np.testing.assert_allclose(r.x[:, 0], np.sqrt(a), rtol=1e-13)
    np.testing.assert_allclose(r.x[:, 1], np.cbrt(np.sqrt(a) * b), rtol=1e-12, atol=1e-14)
    assert (r.iters >= 1).all() and (r.fnorm <= 1e-13).all()
    np.testing.assert_array_equal(x0[:, 0], 1.5)  # the starts are not overwritten


def test_lsq_line_fit_against_lstsq(ctx, rng):
    prog = ctx.compile("input a; input b; param y[7]\noutput r[7]\n"
                       "for i in 0..7 { r[i] = a + b * (i + 1) - y[i] }\n")
    B = 100
    y = rng.normal(size=(B, 7)) + np.arange(1, 8) * rng.uniform(-2, 2, (B, 1))
    r = prog.lsq(np.zeros((B, 2)), y)
    A = np.column_stack([np.ones(7), np.arange(1, 8)])
    ref = np.linalg.lstsq(A, y.T, rcond=None)[0].T
    assert (r.info == db.SolveStatus.CONVERGED).all()
    np.testing.assert_allclose(r.x, ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(r.fnorm, np.linalg.norm(y - ref @ A.T, axis=1), rtol=1e-9)


def test_statuses_options_and_errors(ctx):
    prog = ctx.compile("input x; param a\noutput f = x^2 - a\n")
    r = prog.newton([[3.0], [0.7], [1.0]], [[4.0], [-1.0], [np.nan]])
    assert r.info[0] == db.SolveStatus.CONVERGED and abs(r.x[0, 0] - 2.0) <= 4.5e-16
    assert r.info[1] != db.SolveStatus.CONVERGED and r.fnorm[1] >= 1.0 - 1e-12  # no real root
    assert r.info[2] == db.SolveStatus.NONFINITE
    r = prog.newton([[1e6]], [4.0], max_iter=8)
    assert r.info[0] == db.SolveStatus.MAX_ITER and r.iters[0] == 8
    with pytest.raises(db.DualbatchError, match="max_iter"):
        prog.newton([[1.0]], [4.0], max_iter=-1)
    with pytest.raises(TypeError, match="unknown solver option"):
        prog.newton([[1.0]], [4.0], tolerance=1e-3)
    rect = ctx.compile("input x; input y\noutput f = x + y\n")
    with pytest.raises(db.DimensionError, match="square system"):
        rect.newton([[1.0, 2.0]])
    with pytest.raises(db.DimensionError):
        prog.newton([[1.0, 2.0]], [1.0])
    assert db.status_string  # the binding's other helpers are untouched
