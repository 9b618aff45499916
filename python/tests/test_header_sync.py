"""The binding mirrors include/dualbatch.h (read here, not from the binding): every constant
with its value, struct dual_batch field by field with the C layout's offsets, every function with
its argument count and kinds, and the versions of pyproject.toml, the package and CMake."""
import ctypes
import re

import pytest

import dualbatch as db
from dualbatch._batch import DualBatch
from dualbatch._library import PROTOTYPES

from conftest import HEADER, REPO

pytestmark = pytest.mark.skipif(not HEADER.exists(), reason="not run from the repository")

ENUMS = [("DUAL_SUCCESS", db.Status), ("DUAL_ERR_", db.Status), ("DUAL_PT_", db.PointFlag),
         ("DUAL_DEVICE_", db.Device), ("DUAL_AD_", db.ADMode), ("DUAL_TIER_", db.Tier),
         ("DUAL_KNOB_", db.Knob), ("DUAL_HESSIAN_", db.HessianLayout), ("DUAL_MODE_", db.Mode),
         ("DUAL_MEMORY_", db.Memory), ("DUAL_SGRAD_", db.SgradFlag),
         ("DUAL_SOLVE_", db.SolveStatus)]


def header_code():
    """The header without comments."""
    text = HEADER.read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_constants():
    code = header_code()
    found = dict((n, int(v)) for n, v in re.findall(r"X\((DUAL_[A-Z0-9_]+),\s*(\d+),", code))
    for body in re.findall(r"enum\s+\w+\s*\{(.*?)\}", code, flags=re.S):
        found.update((n, int(v)) for n, v in re.findall(r"(DUAL_[A-Z0-9_]+)\s*=\s*(\d+)", body))
    return found


def test_every_constant_has_the_header_value():
    constants = header_constants()
    assert len(constants) >= 55
    mirrored = set()
    for name, value in constants.items():
        prefix, enum_cls = next((p, e) for p, e in ENUMS if name.startswith(p))
        member = name[len("DUAL_"):] if enum_cls is db.Status else name[len(prefix):]
        assert int(enum_cls[member]) == value, name
        mirrored.add((enum_cls, member))
    for _, enum_cls in ENUMS:  # and nothing the header lacks
        for member in enum_cls:
            assert (enum_cls, member.name) in mirrored, (enum_cls, member.name)


def c_size(ctype):
    return 8 if ctype.endswith("*") or ctype == "int64_t" else 4


def header_batch_fields():
    """[(name, C type)] of struct dual_batch in order."""
    body = re.search(r"typedef struct dual_batch \{(.*?)\} dual_batch;", header_code(),
                     re.S).group(1)
    fields = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        m = re.match(r"((?:const )?\w+)\s*(\*?)\s*(.*)", decl)
        ctype = m.group(1).replace("const ", "") + ("*" if m.group(2) else "")
        for name in m.group(3).split(","):
            fields.append((name.strip(), ctype))
    return fields


def test_dual_batch_layout():
    fields = header_batch_fields()
    assert [n for n, _ in fields] == [n for n, _ in DualBatch._fields_]
    offset = 0
    for name, ctype in fields:  # the C layout: natural alignment of 4 and 8 byte fields
        size = c_size(ctype)
        offset = (offset + size - 1) // size * size
        assert getattr(DualBatch, name).offset == offset, name
        assert getattr(DualBatch, name).size == size, name
        offset += size
    assert ctypes.sizeof(DualBatch) == (offset + 7) // 8 * 8


def kind(ctype_or_text):
    """'ptr', 'double', or the integer's size, of a header type (text) or a ctypes type."""
    if isinstance(ctype_or_text, str):
        t = ctype_or_text
        if "*" in t:
            return "ptr"
        if "double" in t:
            return "double"
        return 8 if "int64_t" in t else 4
    if ctype_or_text is None:
        return "void"
    if ctype_or_text is ctypes.c_double:
        return "double"
    if ctype_or_text in (ctypes.c_void_p, ctypes.c_char_p) or hasattr(ctype_or_text, "_type_") \
            and not isinstance(ctype_or_text._type_, str):
        return "ptr"
    return ctypes.sizeof(ctype_or_text)


def header_functions():
    code = re.sub(r"#[^\n]*", " ", header_code())
    code = " ".join(code.split())
    out = {}
    for ret, name, args in re.findall(r"([\w ]+?\**)\s*\b(dual_[a-z0-9_]+)\s*\(([^;{}]*?)\)\s*;",
                                      code):
        args = [a.strip() for a in args.split(",")] if args.strip() != "void" else []
        ret = ret.split()[-1] if ret.strip() else ret
        out[name] = (ret, [re.sub(r"\w+$", "", a) if not a.endswith("*") else a for a in args])
    return out


def test_every_function_is_bound_with_its_arguments():
    functions = header_functions()
    assert len(functions) == 75
    assert set(functions) == set(PROTOTYPES)
    for name, (ret, args) in functions.items():
        restype, argtypes = PROTOTYPES[name]
        assert len(argtypes) == len(args), name
        for a, t in zip(args, argtypes):
            assert kind(a) == kind(t), (name, a, t)
        expected_ret = "void" if ret == "void" else kind(ret)
        assert kind(restype) == expected_ret, (name, ret, restype)


def test_versions_agree():
    cmake = (REPO / "CMakeLists.txt").read_text()
    project = re.search(r"project\(dualbatch VERSION ([0-9.]+)", cmake).group(1)
    pyproject = (REPO / "python" / "pyproject.toml").read_text()
    package = re.search(r'^version = "([0-9.]+)"', pyproject, re.M).group(1)
    assert project == package == db.__version__


def header_solve_options_fields():
    body = re.search(r"typedef struct dual_solve_options \{(.*?)\} dual_solve_options;",
                     header_code(), re.S).group(1)
    return [d.split()[-1] for d in body.split(";") if d.strip()]


def test_solve_options_layout():
    from dualbatch.solve import SolveOptions
    assert header_solve_options_fields() == [n for n, _ in SolveOptions._fields_]
    o = db.solve.options()
    assert o.size == ctypes.sizeof(SolveOptions)  # as the library's sizeof
