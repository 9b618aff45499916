"""Array layouts: Fortran-ordered, sliced, reversed and broadcast inputs give the bits of
contiguous ones and are used in place (no copy: the address passed is the view's own, and the
call allocates nothing of the input's size); out= arrays of any strides are written in place;
only another dtype is copied."""
import tracemalloc

import numpy as np
import pytest

from dualbatch._operands import host_array, host_operand

SRC = """input x[3]
param s[2]
output a = s[0]*exp(x[0]*x[1]) - x[2]
output b = sin(x[2]) * s[1] + x[0]^3
"""


@pytest.fixture
def prog(ctx):
    return ctx.compile(SRC, name="layouts")


@pytest.fixture
def data(rng):
    x = rng.uniform(-1, 1, size=(64, 3))
    s = rng.uniform(-1, 1, size=(64, 2))
    return x, s


def test_views_are_used_in_place():
    big = np.arange(60.0).reshape(10, 6)
    for view in (np.asfortranarray(big), big[:, ::2], big[::3], big[::-1, 1:4], big.T):
        assert host_array(view) is view
        op = host_operand(view)
        assert op.ptr == view.__array_interface__["data"][0]
        assert op.strides == tuple(s // 8 for s in view.strides)
    as32 = host_array(big.astype(np.float32))
    assert as32.dtype == np.float64 and np.array_equal(as32, big)
    raw = np.zeros(big.nbytes + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.float64).reshape(10, 6)
    misaligned[...] = big
    assert not misaligned.flags.aligned
    copied = host_array(misaligned)
    assert copied.flags.aligned and np.array_equal(copied, big)


@pytest.mark.parametrize("method", ["eval", "jacobian", "hessian"])
def test_fortran_and_strided_inputs_match_contiguous(prog, data, method):
    x, s = data
    ref = getattr(prog, method)(x, s)
    fx, fs = np.asfortranarray(x), np.asfortranarray(s)
    assert not fx.flags.c_contiguous
    for xv, sv, back in [(fx, fs, slice(None)),
                         (np.repeat(x, 3, axis=0)[::3], np.repeat(s, 2, axis=1)[:, ::2],
                          slice(None)),
                         (np.concatenate([x, x], axis=1)[:, 3:], s, slice(None)),
                         (x[::-1], s[::-1], slice(None, None, -1))]:
        r = getattr(prog, method)(xv, sv)
        for got, want in zip(r, ref):
            np.testing.assert_array_equal(got[back], want)


def test_broadcast_params_match_tiled(prog, data):
    x, s = data
    one = s[0]
    tiled = np.tile(one, (len(x), 1))
    for p in (one, one[None, :], np.broadcast_to(one, tiled.shape)):
        r = prog.jacobian(x, p)
        ref = prog.jacobian(x, tiled)
        np.testing.assert_array_equal(r.J, ref.J)
        np.testing.assert_array_equal(r.y, ref.y)


def test_out_arrays_written_in_place(prog, data):
    x, s = data
    ref = prog.hessian(x, s)
    y = np.empty((64, 2), order="F")
    J = np.empty((64, 2, 3), order="F")
    H = np.empty((2, 64, 3, 3)).transpose(1, 0, 2, 3)  # output-major storage
    status = np.full(64, -1, dtype=np.int32)
    r = prog.hessian(x, s, out=(y, J, H), status=status)
    assert r.y is y and r.J is J and r.H is H and r.status is status
    np.testing.assert_array_equal(y, ref.y)
    np.testing.assert_array_equal(J, ref.J)
    np.testing.assert_array_equal(H, ref.H)
    assert not status.any()
    # a packed Hessian into a strided view of a larger array
    store = np.zeros((64, 2, 12))
    p = prog.hessian(x, s, packed=True, out=(None, None, store[:, :, ::2]))
    rows, cols = np.triu_indices(3)
    np.testing.assert_array_equal(store[:, :, ::2], ref.H[:, :, rows, cols])
    assert not store[:, :, 1::2].any()
    assert p.H.base is store


def test_no_copy_of_a_large_fortran_input(prog, rng):
    B = 200_000
    x = np.asfortranarray(rng.uniform(-1, 1, size=(B, 3)))
    s = rng.uniform(-1, 1, size=2)
    y = np.empty((B, 2))
    status = np.empty(B, dtype=np.int32)

    def peak_of_call(xin):
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            prog.eval(xin, s, out=y, status=status)
            return tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()

    assert peak_of_call(x) < 64 * 1024           # x is 4.8 MB: nothing of that size
    assert peak_of_call(x[:, ::-1][:, ::-1]) < 64 * 1024
    assert peak_of_call(x.astype(np.float32)) >= x.nbytes  # the control: a copy is seen


def test_other_dtypes_and_lists_are_converted(prog, data):
    x, s = data
    x32 = x.astype(np.float32)
    ref = prog.eval(x32.astype(np.float64), s)
    np.testing.assert_array_equal(prog.eval(x32, s).y, ref.y)
    np.testing.assert_array_equal(prog.eval(x32.tolist(), s.tolist()).y, ref.y)
    xi = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(prog.eval(xi, s[:2]).y, prog.eval(xi.astype(float), s[:2]).y)


def test_empty_batch(prog):
    r = prog.jacobian(np.empty((0, 3)), np.empty((0, 2)))
    assert r.y.shape == (0, 2) and r.J.shape == (0, 2, 3) and r.status.shape == (0,)
