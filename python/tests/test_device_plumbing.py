"""The device-array path checked without a GPU: __cuda_array_interface__ and DLPack objects are
recognized, their addresses and element strides reach dual_batch unchanged with
DUAL_MEMORY_DEVICE (and the stream chosen for the call), a CPU context refuses them with
DUAL_ERR_NO_DEVICE, outputs of an unknown producer need out=, host and device arrays do not mix."""
import numpy as np
import pytest

import dualbatch as db
from dualbatch import _call, _device

from fake_device import FakeCAI, FakeDLPack

SRC = "input x[3]\nparam c\noutput a = c*x[0]*x[1]\noutput b = x[2]^2\n"


class Recorder:
    """Stands in for the library in _call: records each dual_run's batch, then calls it."""

    def __init__(self, lib):
        self.lib, self.batches = lib, []

    def __getattr__(self, name):
        return getattr(self.lib, name)

    def dual_run(self, ctx, prog, mode, batch_ref):
        b = batch_ref._obj
        self.batches.append({name: getattr(b, name) for name, _ in b._fields_})
        return self.lib.dual_run(ctx, prog, mode, batch_ref)


@pytest.fixture
def recorder(monkeypatch):
    rec = Recorder(_call.LIB)
    monkeypatch.setattr(_call, "LIB", rec)
    return rec


def test_recognition():
    a = np.zeros((4, 3))
    assert _device.is_device_array(FakeCAI(a)) and _device.is_device_array(FakeDLPack(a))
    assert not _device.is_device_array(a)  # NumPy's own __dlpack_device__ says CPU
    assert not _device.is_device_array([[1.0, 2.0, 3.0]])


def test_device_batch_reaches_the_library(ctx, recorder, rng):
    prog = ctx.compile(SRC)
    x = np.asfortranarray(rng.normal(size=(5, 3)))
    c = rng.normal(size=(5, 1))
    y = np.empty((2, 5)).T           # strides (1, 5) in elements
    J = np.empty((5, 2, 3))
    st = np.empty(5, dtype=np.int32)
    with pytest.raises(db.DualbatchError) as e:
        prog.jacobian(FakeCAI(x), FakeCAI(c[0]), out=(FakeCAI(y), FakeCAI(J)),
                      status=FakeCAI(st))
    assert e.value.status == db.Status.ERR_NO_DEVICE
    assert "device memory" in e.value.message and "CPU" in e.value.message
    (b,) = recorder.batches
    assert b["memory"] == db.Memory.DEVICE and b["count"] == 5
    assert (b["x"], b["x_ps"], b["x_es"]) == (x.ctypes.data, 1, 5)
    assert (b["p"], b["p_ps"], b["p_es"]) == (c.ctypes.data, 0, 1)  # one row for every point
    assert (b["y"], b["y_ps"], b["y_es"]) == (y.ctypes.data, 1, 5)
    assert (b["d"], b["d_ps"], b["d_rs"], b["d_cs"]) == (J.ctypes.data, 6, 3, 1)
    assert b["status"] == st.ctypes.data


def test_host_batch_fields(ctx, recorder, rng):
    prog = ctx.compile(SRC)
    x = rng.normal(size=(6, 7))[:, 1:7:2]
    r = prog.hessian(x, [2.0], packed=True)
    (b,) = recorder.batches
    assert b["memory"] == db.Memory.HOST and (b["x_ps"], b["x_es"]) == (7, 2)
    assert b["h_layout"] == db.HessianLayout.PACKED
    assert (b["h_ps"], b["h_rs"], b["h_es"]) == (12, 6, 1)
    # packed (0,0) (0,1) (0,2) (1,1) (1,2) (2,2): a = 2 x0 x1 has 2 at (0,1), b = x2^2 2 at (2,2)
    np.testing.assert_array_equal(r.H, np.broadcast_to([[0, 2, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2]],
                                                       (6, 2, 6)))


def test_unknown_producer_needs_out(ctx):
    prog = ctx.compile(SRC)
    x = FakeCAI(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="pass out="):
        prog.eval(x, FakeCAI(np.ones(1)))
    with pytest.raises(TypeError, match="convert it first"):
        prog.eval(FakeCAI(np.zeros((2, 3), dtype=np.float32)), FakeCAI(np.ones(1)),
                  out=FakeCAI(np.zeros((2, 2))), status=FakeCAI(np.zeros(2, dtype=np.int32)))
    ro = FakeCAI(np.zeros((2, 2)), readonly=True)
    with pytest.raises(ValueError, match="read-only"):
        prog.eval(x, FakeCAI(np.ones(1)), out=ro, status=FakeCAI(np.zeros(2, dtype=np.int32)))


def test_memories_do_not_mix(ctx):
    prog = ctx.compile(SRC)
    with pytest.raises(ValueError, match="same memory"):
        prog.eval(FakeCAI(np.zeros((2, 3))), np.ones(1))
    with pytest.raises(ValueError, match="same memory"):
        prog.eval(np.zeros((2, 3)), FakeCAI(np.ones(1)))
    with pytest.raises(ValueError, match="device array"):
        prog.eval(np.zeros((2, 3)), np.ones(1), out=FakeCAI(np.zeros((2, 2))))


def test_dlpack_parsing():
    a = np.arange(24.0).reshape(4, 6)[:, ::2]
    fake = FakeDLPack(a)
    op = _device._dlpack_operand(fake, "x", "float64", 7, devices=(_device.KDL_CPU,))
    assert (op.ptr, op.shape, op.strides) == (a.ctypes.data, (4, 3), (6, 2))
    assert fake.streams == [7]  # the call's stream reaches the producer
    with pytest.raises(ValueError, match="not CUDA memory"):
        _device._dlpack_operand(fake, "x", "float64", 7)
    with pytest.raises(TypeError, match="type code"):
        _device._dlpack_operand(FakeDLPack(a.astype(np.float32)), "x", "float64", 7,
                                devices=(_device.KDL_CPU,))


def test_call_stream():
    a = np.zeros((2, 3))
    assert _device.call_stream(FakeCAI(a, stream=None), None) == _device.LEGACY_STREAM == 1
    assert _device.call_stream(FakeCAI(a, stream=5), None) == 5
    assert _device.call_stream(FakeCAI(a, stream=5), 9) == 9
