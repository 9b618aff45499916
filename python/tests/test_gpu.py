"""Device arrays on a GPU: CuPy arrays, PyTorch CUDA tensors, a DLPack-only wrapper and raw CUDA
memory (the CUDA runtime through ctypes) go to the library in place, outputs come back on the
device, and every result equals the CPU context's bit for bit (the library's promise).  Each
test is skipped when the library has no GPU or its array library is absent."""
import numpy as np
import pytest

import dualbatch as db

from fake_device import DeviceBuffer, cudart

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(db.device_count() == 0,
                                 reason="no GPU (or a library built without CUDA)")]

SRC = """input x[3]
param s[2]
output a = s[0]*exp(x[0]*x[1]) - x[2]
output b = sin(x[2]) * s[1] + x[0]^3
"""
SGRAD = "input x[2]\noutput f = (x[0] + 0.5*normal())^2 * x[1]\n"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    return rng.uniform(-1, 1, size=(300, 3)), rng.uniform(-1, 1, size=(300, 2))


@pytest.fixture(scope="module")
def reference(data):
    x, s = data
    with db.Context(device="cpu") as cpu:
        prog = cpu.compile(SRC)
        sg = cpu.compile(SGRAD)
        return {"jacobian": prog.jacobian(x, s), "hessian": prog.hessian(x, s),
                "packed": prog.hessian(x, s, packed=True),
                "vjp": prog.vjp(x, np.ones(2), s),
                "sgrad": sg.sgrad(x[:, :2], samples=64, seed=9)}


@pytest.fixture(scope="module")
def gpu():
    with db.Context(device="gpu") as ctx:
        yield ctx


def check_all(gpu, reference, data, to_device, to_host, is_device):
    x, s = data
    prog = gpu.compile(SRC)
    sg = gpu.compile(SGRAD)
    xd = to_device(np.asfortranarray(x))
    sd = to_device(s)
    got = {"jacobian": prog.jacobian(xd, sd), "hessian": prog.hessian(xd, sd),
           "packed": prog.hessian(xd, sd, packed=True),
           "vjp": prog.vjp(xd, to_device(np.ones(2)), sd),
           "sgrad": sg.sgrad(to_device(x[:, :2]), samples=64, seed=9)}
    assert gpu.last_device == "gpu"
    for key, result in got.items():
        for field, value in zip(result._fields, result):
            assert is_device(value), (key, field)
            np.testing.assert_array_equal(to_host(value), getattr(reference[key], field),
                                          err_msg="%s.%s" % (key, field))


def test_cupy(gpu, reference, data):
    cupy = pytest.importorskip("cupy")
    check_all(gpu, reference, data, cupy.asarray, cupy.asnumpy,
              lambda a: isinstance(a, cupy.ndarray))
    x, s = data
    prog = gpu.compile(SRC)
    wide = cupy.asarray(np.concatenate([x, x], axis=1))
    r = prog.jacobian(wide[:, 3:], cupy.asarray(s[0]))  # a strided view; one row of params
    x32 = x.astype(np.float32)                           # converted by CuPy
    e = prog.eval(cupy.asarray(x32), cupy.asarray(s))
    with db.Context(device="cpu") as cpu:
        on_cpu = cpu.compile(SRC)
        np.testing.assert_array_equal(cupy.asnumpy(r.J), on_cpu.jacobian(x, s[0]).J)
        np.testing.assert_array_equal(cupy.asnumpy(e.y), on_cpu.eval(x32, s).y)


def test_torch(gpu, reference, data):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    check_all(gpu, reference, data, lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(),
              lambda t: t.cpu().numpy(), lambda t: isinstance(t, torch.Tensor) and t.is_cuda)


class DLPackOnly:
    """Hides every interface of a device array but DLPack."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_only_with_out(gpu, reference, data):
    cupy = pytest.importorskip("cupy")
    x, s = data
    prog = gpu.compile(SRC)
    y, J = cupy.empty((300, 2)), cupy.empty((300, 2, 3))
    st = cupy.empty(300, dtype=cupy.int32)
    with pytest.raises(ValueError, match="pass out="):
        prog.jacobian(DLPackOnly(cupy.asarray(x)), DLPackOnly(cupy.asarray(s)))
    r = prog.jacobian(DLPackOnly(cupy.asarray(x)), DLPackOnly(cupy.asarray(s)), out=(y, J),
                      status=st)
    assert r.J is J
    np.testing.assert_array_equal(cupy.asnumpy(J), reference["jacobian"].J)


def test_cuda_runtime_buffers(gpu, reference, data):
    rt = cudart()
    if rt is None:
        pytest.skip("no CUDA runtime library (libcudart) to allocate with")
    x, s = data
    prog = gpu.compile(SRC)
    xd = DeviceBuffer(rt, np.asfortranarray(x))
    sd = DeviceBuffer(rt, s)
    y = DeviceBuffer(rt, np.zeros((300, 2), order="F"))
    J = DeviceBuffer(rt, np.zeros((300, 2, 3)))
    H = DeviceBuffer(rt, np.zeros((300, 2, 3, 3)))
    st = DeviceBuffer(rt, np.full(300, -1, dtype=np.int32))
    prog.hessian(xd, sd, out=(y, J, H), status=st)
    ref = reference["hessian"]
    np.testing.assert_array_equal(y.to_host(), ref.y)
    np.testing.assert_array_equal(J.to_host(), ref.J)
    np.testing.assert_array_equal(H.to_host(), ref.H)
    np.testing.assert_array_equal(st.to_host(), ref.status)


def test_device_choice(reference, data):
    """Each CUDA device by its ordinal gives the CPU's bits; a device past the last is refused."""
    x, s = data
    with db.Context(device="gpu") as ctx:
        assert ctx.gpu == 0
        with pytest.raises(db.DualbatchError) as e:
            ctx.set_gpu(db.device_count())
        assert e.value.status == db.Status.ERR_ARGUMENT
        prog = ctx.compile(SRC)
        for d in range(db.device_count()):
            ctx.set_gpu(d)
            assert ctx.gpu == d
            got = prog.jacobian(x, s)
            assert ctx.last_device == "gpu"
            for field, value in zip(got._fields, got):
                np.testing.assert_array_equal(value, getattr(reference["jacobian"], field),
                                              err_msg="device %d: %s" % (d, field))


@pytest.mark.skipif(db.device_count() < 2, reason="needs two GPUs")
def test_several_devices(reference, data):
    """A context over every device shares each call's points among them: the CPU's bits."""
    x, s = data
    with db.Context(device="gpu") as ctx:
        ctx.set_gpus(range(db.device_count()))
        assert ctx.gpus == list(range(db.device_count()))
        got = ctx.compile(SRC).jacobian(x, s)
        for field, value in zip(got._fields, got):
            np.testing.assert_array_equal(value, getattr(reference["jacobian"], field), err_msg=field)


def test_pinned_numpy_arrays_equal_the_cpu(gpu, reference, data):
    """Arrays page-locked with Context.pin are copied straight to and from the device: the same
    bits as the CPU; then unpin releases them (a second unpin is the library's argument error)."""
    x, s = data
    x = np.ascontiguousarray(x)
    s = np.ascontiguousarray(s)
    prog = gpu.compile(SRC)
    gpu.pin(x)
    gpu.pin(s)
    try:
        got = prog.jacobian(x, s)
    finally:
        gpu.unpin(x)
        gpu.unpin(s)
    for field, value in zip(got._fields, got):
        ref = getattr(reference["jacobian"], field)
        assert np.array_equal(np.asarray(value).view(np.uint8), np.asarray(ref).view(np.uint8)), field
    with pytest.raises(db.DualbatchError) as e:
        gpu.unpin(x)
    assert e.value.status == db.Status.ERR_ARGUMENT
