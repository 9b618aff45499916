"""Finding and checking the library: DUALBATCH_LIBRARY, a bundled copy, the loader path, the
ImportError that says how to point at it, and the checks of the major version and of
sizeof(dual_batch) (each made to fail on purpose).  Loading runs in fresh interpreters."""
import ctypes
import os
import re
import shutil
import subprocess
import sys

import pytest

import dualbatch as db
from dualbatch import _library
from dualbatch._batch import DualBatch
from dualbatch._native import LIB

from conftest import HEADER

PACKAGE_DIR = os.path.dirname(os.path.abspath(db.__file__))
PROBE = "import dualbatch as db; print(db.library_found_by); print(db.library_path)"


def run_python(tmp_path, env_changes, package_parent=None):
    """Run PROBE in a new interpreter with the package from `package_parent` (a copy without a
    bundled library by default) and the environment changed by `env_changes` (None = unset)."""
    if package_parent is None:
        package_parent = tmp_path / "plain"
        shutil.copytree(PACKAGE_DIR, package_parent / "dualbatch",
                        ignore=shutil.ignore_patterns("lib", "__pycache__"))
    env = dict(os.environ)
    env.pop("DUALBATCH_LIBRARY", None)
    env.pop("LD_LIBRARY_PATH", None)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    env["PYTHONPATH"] = str(package_parent)
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          cwd=str(tmp_path))


def test_version_is_the_binding_major():
    v = db.library_version()
    assert v // 10000 == db.EXPECTED_MAJOR == 0
    assert db.library_version_string() == "%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100)
    if HEADER.exists():
        text = HEADER.read_text()
        parts = [int(re.search(r"#define DUAL_VERSION_%s (\d+)" % k, text).group(1))
                 for k in ("MAJOR", "MINOR", "PATCH")]
        assert v == parts[0] * 10000 + parts[1] * 100 + parts[2]


def test_batch_size_is_checked():
    assert _library.library_batch_size(LIB) == ctypes.sizeof(DualBatch) == 256

    class Longer(ctypes.Structure):
        _fields_ = DualBatch._fields_ + [("extra", ctypes.c_int64)]
    with pytest.raises(ImportError, match=r"sizeof\(dual_batch\) = 256 .* 264 bytes"):
        _library.check_abi(LIB, "this library", batch_struct=Longer)


def test_major_version_is_checked():
    said = r"version %s \(major 0\) but this binding needs major version 1" % re.escape(
        db.library_version_string())
    with pytest.raises(ImportError, match=said):
        _library.check_abi(LIB, "this library", expected_major=1)
    _library.check_abi(LIB, "this library")  # the real expectation passes


def test_a_missing_library_says_how_to_point_at_it(tmp_path):
    r = run_python(tmp_path, {"DUALBATCH_LIBRARY": str(tmp_path / "nowhere.so")})
    assert r.returncode != 0
    assert "ImportError" in r.stderr
    assert "DUALBATCH_LIBRARY=%s" % (tmp_path / "nowhere.so") in r.stderr
    assert "LD_LIBRARY_PATH" in r.stderr


def test_nothing_found(tmp_path):
    r = run_python(tmp_path, {})
    if r.returncode == 0:
        pytest.skip("a libdualbatch is on the loader path: %s" % r.stdout.splitlines()[-1])
    assert "the shared library libdualbatch was not found" in r.stderr
    assert "DUALBATCH_LIBRARY" in r.stderr


def test_environment_variable(tmp_path):
    r = run_python(tmp_path, {"DUALBATCH_LIBRARY": db.library_path})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["DUALBATCH_LIBRARY", db.library_path]


def test_bundled_copy(tmp_path):
    parent = tmp_path / "bundled"
    shutil.copytree(PACKAGE_DIR, parent / "dualbatch", ignore=shutil.ignore_patterns("__pycache__"))
    os.makedirs(parent / "dualbatch" / "lib", exist_ok=True)
    shutil.copy(db.library_path, parent / "dualbatch" / "lib" / _library.soname())
    r = run_python(tmp_path, {}, package_parent=parent)
    assert r.returncode == 0, r.stderr
    how, path = r.stdout.splitlines()
    assert how == "bundled copy" and path == str(parent / "dualbatch" / "lib" / _library.soname())


def test_loader_path(tmp_path):
    libdir = tmp_path / "libdir"
    libdir.mkdir()
    shutil.copy(db.library_path, libdir / _library.soname())
    r = run_python(tmp_path, {"LD_LIBRARY_PATH": str(libdir)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["loader path", str(libdir / _library.soname())]
