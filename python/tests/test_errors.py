"""Failures: library errors raise DualbatchError with the status and the context's message
(a syntax error's name:line:col), wrong shapes raise DimensionError (a ValueError too) before any
call, bad points are flagged in status without failing the call, closed handles refuse."""
import numpy as np
import pytest

import dualbatch as db
from dualbatch import PointFlag, Status

SRC = "input x[2]\nparam c\noutput f = x[0]*x[1] + c*sin(x[0])\noutput g = log(x[1])\n"


@pytest.fixture
def prog(ctx):
    return ctx.compile(SRC, name="model")


def test_syntax_error_has_line_and_column(ctx):
    bad_line = "output f = x[0] +* 2"
    with pytest.raises(db.DualbatchError) as e:
        ctx.compile("input x[2]\n" + bad_line + "\n", name="model")
    assert e.value.status == Status.ERR_SYNTAX
    col = bad_line.index("*") + 1
    assert e.value.message.startswith("model:2:%d: error:" % col)
    assert bad_line in e.value.message  # the line, then a caret under the column
    caret = e.value.message.splitlines()[2]
    assert caret.index("^") == col - 1
    assert "DUAL_ERR_SYNTAX" in str(e.value)


def test_unknown_name_is_a_syntax_error(ctx):
    with pytest.raises(db.DualbatchError) as e:
        ctx.compile("input x\noutput f = x + zz\n", name="m2")
    assert e.value.status == Status.ERR_SYNTAX and "m2:2:" in e.value.message
    assert "zz" in e.value.message


def test_shapes_checked_before_the_call(prog):
    x = np.ones((5, 2))
    cases = [
        lambda: prog.eval(np.ones((5, 3)), [1.0]),          # n = 2 inputs
        lambda: prog.eval(np.ones(2), [1.0]),               # x must be (B, n)
        lambda: prog.eval(x),                                # the program has a parameter
        lambda: prog.eval(x, np.ones((5, 2))),               # one parameter, not 2
        lambda: prog.eval(x, np.ones((4, 1))),               # 4 rows for 5 points
        lambda: prog.jvp(x, np.ones((5, 3)), [1.0]),         # v has n columns
        lambda: prog.vjp(x, np.ones(3), [1.0]),              # u has m entries
        lambda: prog.jacobian(x, [1.0], out=(None, np.empty((5, 2, 3)))),
        lambda: prog.eval(x, [1.0], status=np.empty(4, dtype=np.int32)),
    ]
    for case in cases:
        with pytest.raises(db.DimensionError) as e:
            case()
        assert isinstance(e.value, ValueError) and isinstance(e.value, db.DualbatchError)
        assert e.value.status == Status.ERR_DIMENSION


def test_bad_out_arrays(prog):
    x = np.ones((5, 2))
    with pytest.raises(ValueError, match="dtype"):
        prog.eval(x, [1.0], out=np.empty((5, 2), dtype=np.float32))
    ro = np.empty((5, 2))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        prog.eval(x, [1.0], out=ro)
    with pytest.raises(ValueError, match="dtype"):
        prog.eval(x, [1.0], status=np.empty(5, dtype=np.int64))
    with pytest.raises(ValueError, match="contiguous"):
        prog.eval(x, [1.0], status=np.empty(10, dtype=np.int32)[::2])
    with pytest.raises(ValueError, match="writes 2: y, J"):
        prog.jacobian(x, [1.0], out=(np.empty((5, 2)),))
    with pytest.raises(ValueError, match="one axis"):
        prog.hessian(x, [1.0], out=(None, None, np.empty((5, 2, 2, 2)).transpose(0, 1, 3, 2)))


def test_library_dimension_error(prog):
    with pytest.raises(db.DimensionError) as e:
        prog.gradient(np.ones((3, 2)), [1.0])  # gradient needs m == 1: the library says so
    assert e.value.status == Status.ERR_DIMENSION
    assert "scalar program" in e.value.message and "2 outputs" in e.value.message


def test_sgrad_arguments(ctx):
    p = ctx.compile("input x\noutput f = (x + normal())^2\n")
    with pytest.raises(db.DualbatchError) as e:
        p.sgrad(np.ones((2, 1)), samples=1)
    assert e.value.status == Status.ERR_ARGUMENT and "samples" in e.value.message
    with pytest.raises(db.DualbatchError) as e:
        p.sgrad(np.ones((2, 1)), samples=7, antithetic=True)
    assert e.value.status == Status.ERR_ARGUMENT and "even" in e.value.message
    assert not p.sgrad(np.ones((2, 1)), samples=6, antithetic=True).status.any()
    q = ctx.compile("input x\noutput f = x^2\n")
    with pytest.raises(db.DualbatchError) as e:
        q.sgrad(np.ones((2, 1)), samples=8, score=True)
    assert e.value.status == Status.ERR_UNSUPPORTED


def test_nan_and_inf_inputs_are_flagged(prog):
    x = np.array([[1.0, 2.0], [np.nan, 2.0], [0.5, 1.5], [1.0, np.inf], [2.0, 3.0]])
    r = prog.jacobian(x, [0.3])
    bad = [1, 3]
    assert all(r.status[b] & PointFlag.BAD_INPUT for b in bad)
    good = [0, 2, 4]
    assert not r.status[good].any()
    alone = prog.jacobian(x[good], [0.3])
    np.testing.assert_array_equal(r.y[good], alone.y)
    np.testing.assert_array_equal(r.J[good], alone.J)
    v = np.ones((5, 2))
    v[2, 0] = np.nan
    st = prog.jvp(x[[0, 2]], v[[0, 2]], [0.3]).status
    assert st[0] == 0 and st[1] & PointFlag.BAD_INPUT


def test_domain_and_inf_flags(ctx):
    p = ctx.compile("input x\noutput f = log(x)\n")
    r = p.eval(np.array([[1.0], [-1.0], [0.0]]))
    assert r.status[0] == 0
    assert r.status[1] & PointFlag.DOMAIN and np.isnan(r.y[1, 0])
    assert r.status[2] & PointFlag.INF and r.y[2, 0] == -np.inf


def test_files_and_formats(ctx, prog, tmp_path):
    with pytest.raises(db.DualbatchError) as e:
        ctx.load(tmp_path / "missing.db")
    assert e.value.status == Status.ERR_IO and "missing.db" in e.value.message
    with pytest.raises(db.DualbatchError) as e:
        ctx.load_bytes(b"DUALBC\x00 this is not a program")
    assert e.value.status in (Status.ERR_FORMAT, Status.ERR_INVALID_PROGRAM)
    path = tmp_path / "model.db"
    prog.save(path)
    x = np.random.default_rng(3).uniform(1, 2, size=(7, 2))
    for again in (ctx.load(path), ctx.load_bytes(prog.to_bytes())):
        assert again.output_names == ["f", "g"]
        np.testing.assert_array_equal(again.jacobian(x, [0.7]).J, prog.jacobian(x, [0.7]).J)
    (tmp_path / "model.txt").write_text(SRC)
    np.testing.assert_array_equal(ctx.load(tmp_path / "model.txt").eval(x, [0.7]).y,
                                  prog.eval(x, [0.7]).y)


def test_closed_handles(prog):
    x = np.ones((2, 2))
    prog.context.close()
    with pytest.raises(ValueError, match="closed"):
        prog.eval(x, [1.0])
    prog.close()
    with pytest.raises(ValueError, match="closed"):
        prog.to_bytes()


def test_context_arguments():
    with pytest.raises(ValueError, match="device"):
        db.Context(device="tpu")
    with pytest.raises(db.DualbatchError) as e:
        db.Context(device="cpu", width=3)
    assert e.value.status == Status.ERR_ARGUMENT
    with db.Context(device="cpu", threads=1, ad_mode="reverse", width=4, seed=2 ** 64 - 1) as c:
        assert c.device == "cpu" and not c.closed
        assert c.gpu == -1  # a CPU context has no GPU to choose
        with pytest.raises(db.DualbatchError) as e:
            c.set_gpu(0)
        assert e.value.status == Status.ERR_NO_DEVICE and "runs on the CPU" in e.value.message
        assert c.gpus == []
        with pytest.raises(db.DualbatchError) as e:
            c.set_gpus([0, 0])
        assert e.value.status == Status.ERR_ARGUMENT and "listed twice" in e.value.message
    assert c.closed


@pytest.mark.skipif(db.device_count() > 0, reason="a GPU is present")
def test_gpu_context_without_gpu():
    with pytest.raises(db.DualbatchError) as e:
        db.Context(device="gpu")
    assert e.value.status == Status.ERR_NO_DEVICE and e.value.message


def test_pin_checks_its_argument(ctx):
    """Context.pin locks an ndarray's own memory (never a copy): anything else is a TypeError, an
    empty array the library's argument error; on a CPU context a real array is a no-op."""
    a = np.zeros(8)
    ctx.pin(a)
    ctx.unpin(a)
    with pytest.raises(TypeError):
        ctx.pin([0.0, 1.0])
    with pytest.raises(db.DualbatchError) as e:
        ctx.pin(np.zeros(0))
    assert e.value.status == Status.ERR_ARGUMENT
    assert "below 1 byte" in e.value.message
