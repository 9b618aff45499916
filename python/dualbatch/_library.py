"""Finding, loading and checking the shared library libdualbatch.so.<major>, and the ctypes
prototypes of every function of include/dualbatch.h.

Search order: the environment variable DUALBATCH_LIBRARY (a path; nothing else is tried when it
is set), a copy bundled in the package (dualbatch/lib/), the loader path (libdualbatch.so.0:
LD_LIBRARY_PATH, the ld.so cache, an rpath), then ctypes.util.find_library("dualbatch").  The
library found must have the binding's major version and the binding's sizeof(dual_batch);
anything else is an ImportError that says what was found and how to point at another library.
"""
import ctypes
import ctypes.util
import glob
import os
import sys

from ._batch import DualBatch
from .constants import EXPECTED_MAJOR

ENV_VAR = "DUALBATCH_LIBRARY"

_vp = ctypes.c_void_p
_cp = ctypes.c_char_p
_int = ctypes.c_int
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_h = ctypes.POINTER(ctypes.c_void_p)  # address of a handle (dual_context **, dual_program **)
_pi32 = ctypes.POINTER(ctypes.c_int32)
_pi64 = ctypes.POINTER(ctypes.c_int64)

# name: (restype, argtypes).  Data pointers are void * so that addresses (ints) pass as they are.
PROTOTYPES = {
    "dual_version": (_int, []),
    "dual_version_string": (_cp, []),
    "dual_status_string": (_cp, [_int]),
    "dual_context_create": (_int, [_h, _int]),
    "dual_context_destroy": (None, [_h]),
    "dual_context_device": (_int, [_vp]),
    "dual_context_last_device": (_int, [_vp]),
    "dual_context_last_split": (_int, [_vp, _pi64, _pi64]),
    "dual_context_calibrate": (_int, [_vp, _cp, _i64]),
    "dual_context_last_note": (_cp, [_vp]),
    "dual_device_count": (_int, []),
    "dual_context_set_stream": (_int, [_vp, _vp]),
    "dual_host_pin": (_int, [_vp, _vp, _i64]),
    "dual_host_unpin": (_int, [_vp, _vp]),
    "dual_context_set_memory_limit": (_int, [_vp, _i64]),
    "dual_context_set_threads": (_int, [_vp, _int]),
    "dual_context_set_gpu": (_int, [_vp, _int]),
    "dual_context_gpu": (_int, [_vp]),
    "dual_context_set_gpus": (_int, [_vp, _int, _pi32]),
    "dual_context_gpus": (_int, [_vp, _pi32, _int]),
    "dual_context_set_width": (_int, [_vp, _int]),
    "dual_context_set_ad_mode": (_int, [_vp, _int]),
    "dual_context_last_ad_mode": (_int, [_vp]),
    "dual_context_set_tier": (_int, [_vp, _int]),
    "dual_context_last_tier": (_int, [_vp]),
    "dual_context_set_cache_dir": (_int, [_vp, _cp]),
    "dual_context_cache_usage": (_int, [_vp, _cp, _i64, _pi64, _pi64]),
    "dual_context_cache_clear": (_int, [_vp, _pi64]),
    "dual_context_set_knob": (_int, [_vp, _int, _i64]),
    "dual_context_knob": (_i64, [_vp, _int]),
    "dual_context_set_seed": (_int, [_vp, _i64]),
    "dual_context_last_error": (_cp, [_vp]),
    "dual_build_info": (_i64, [_cp, _i64]),
    "dual_program_compile": (_int, [_vp, _cp, _cp, _h]),
    "dual_program_compile_file": (_int, [_vp, _cp, _h]),
    "dual_program_save": (_int, [_vp, _vp, _vp, _i64, _pi64]),
    "dual_program_save_file": (_int, [_vp, _vp, _cp]),
    "dual_program_load": (_int, [_vp, _vp, _i64, _h]),
    "dual_program_load_file": (_int, [_vp, _cp, _h]),
    "dual_program_destroy": (None, [_h]),
    "dual_program_num_inputs": (_i32, [_vp]),
    "dual_program_num_params": (_i32, [_vp]),
    "dual_program_num_outputs": (_i32, [_vp]),
    "dual_program_num_instructions": (_i64, [_vp]),
    "dual_program_num_registers": (_i32, [_vp]),
    "dual_program_num_active_registers": (_i32, [_vp]),
    "dual_program_num_draws": (_i32, [_vp]),
    "dual_program_input_name": (_cp, [_vp, _i32]),
    "dual_program_param_name": (_cp, [_vp, _i32]),
    "dual_program_output_name": (_cp, [_vp, _i32]),
    "dual_program_disassemble": (_i64, [_vp, _cp, _i64]),
    "dual_builder_create": (_int, [_vp, _h]),
    "dual_builder_destroy": (None, [_h]),
    "dual_builder_input": (_int, [_vp, _cp, _pi32]),
    "dual_builder_param": (_int, [_vp, _cp, _pi32]),
    "dual_builder_constant": (_int, [_vp, ctypes.c_double, _pi32]),
    "dual_builder_normal": (_int, [_vp, _pi32]),
    "dual_builder_uniform": (_int, [_vp, _pi32]),
    "dual_builder_apply": (_int, [_vp, _cp, _i32, _pi32, _pi32]),
    "dual_builder_output": (_int, [_vp, _cp, _i32]),
    "dual_builder_finish": (_int, [_vp, _h]),
    # the simple calls: (ctx, prog, B, x, ldx, p, ldp, ...)
    "dual_eval": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp]),
    "dual_jvp": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64,
                        _vp]),
    "dual_jacobian": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp]),
    "dual_gradient": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _vp, _i64, _vp]),
    "dual_hessian": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp,
                            _i64, _int, _vp]),
    "dual_hvp": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64,
                        _vp, _i64, _vp]),
    "dual_vjp": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _i64,
                        _vp]),
    "dual_batch_init": (None, [_vp]),
    "dual_run": (_int, [_vp, _vp, _int, ctypes.POINTER(DualBatch)]),
    "dual_sgrad": (_int, [_vp, _vp, _i64, _vp, _i64, _vp, _i64, _i64, _i64, _int, _vp, _vp,
                          _i64, _vp, _i64, _vp]),
    # the solvers: (ctx, prog, opt, B, x, ldx, p, ldp, info, iters, fnorm)
    "dual_solve_options_init": (None, [_vp]),
    "dual_newton": (_int, [_vp, _vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _vp, _vp]),
    "dual_lsq": (_int, [_vp, _vp, _vp, _i64, _vp, _i64, _vp, _i64, _vp, _vp, _vp]),
    "dual_solve_status_string": (_cp, [_int]),
}


def soname(major=EXPECTED_MAJOR):
    """The file name the loader knows the library by (the SONAME)."""
    if sys.platform == "darwin":
        return "libdualbatch.%d.dylib" % major
    return "libdualbatch.so.%d" % major


def bundled_candidates():
    """Copies of the library inside the package (dualbatch/lib/), the SONAME first."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
    exact = os.path.join(here, soname())
    found = sorted(glob.glob(os.path.join(here, "libdualbatch*")))
    return ([exact] if os.path.exists(exact) else []) + [f for f in found if f != exact]


def _how_to_point():
    return ("set %s to the path of libdualbatch.so.%d (e.g. <build>/src/libdualbatch.so.%d or "
            "<prefix>/lib/libdualbatch.so.%d), add its directory to LD_LIBRARY_PATH, or copy it "
            "into the package's lib/ folder before `pip install` (README \"Python\")"
            % (ENV_VAR, EXPECTED_MAJOR, EXPECTED_MAJOR, EXPECTED_MAJOR))


def _open():
    """(CDLL, path or name it was opened by, how it was found)."""
    path = os.environ.get(ENV_VAR)
    if path:
        try:
            return ctypes.CDLL(path), path, ENV_VAR
        except OSError as e:
            raise ImportError("dualbatch: %s=%s cannot be loaded: %s; %s"
                              % (ENV_VAR, path, e, _how_to_point())) from e
    tried = []
    candidates = [(c, "bundled copy") for c in bundled_candidates()]
    candidates.append((soname(), "loader path"))
    found = ctypes.util.find_library("dualbatch")
    if found:
        candidates.append((found, "ctypes.util.find_library"))
    for name, how in candidates:
        try:
            return ctypes.CDLL(name), name, how
        except OSError as e:
            tried.append("%s (%s): %s" % (name, how, e))
    raise ImportError("dualbatch: the shared library libdualbatch was not found (tried %s); %s"
                      % ("; ".join(tried), _how_to_point()))


def declare(lib):
    """Set restype and argtypes of every function of PROTOTYPES on `lib`."""
    for name, (restype, argtypes) in PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError as e:
            raise ImportError("dualbatch: the library has no %s: it is not a libdualbatch of "
                              "major version %d; %s"
                              % (name, EXPECTED_MAJOR, _how_to_point())) from e
        fn.restype = restype
        fn.argtypes = argtypes


def library_batch_size(lib):
    """sizeof(dual_batch) as the library knows it: the size field dual_batch_init writes (into a
    scratch buffer far larger than any dual_batch)."""
    scratch = (ctypes.c_int64 * 512)()
    lib.dual_batch_init(ctypes.addressof(scratch))
    return int(scratch[0])


def check_abi(lib, where, expected_major=EXPECTED_MAJOR, batch_struct=DualBatch):
    """Raise ImportError unless the library's major version and sizeof(dual_batch) are the
    binding's."""
    version = int(lib.dual_version())
    if version // 10000 != expected_major:
        raise ImportError("dualbatch: %s is version %s (major %d) but this binding needs major "
                          "version %d; %s" % (where, lib.dual_version_string().decode(),
                                              version // 10000, expected_major, _how_to_point()))
    size = library_batch_size(lib)
    if size != ctypes.sizeof(batch_struct):
        raise ImportError("dualbatch: %s has sizeof(dual_batch) = %d but the binding's struct has "
                          "%d bytes: the binding and the library come from different versions of "
                          "dualbatch.h; %s" % (where, size, ctypes.sizeof(batch_struct),
                                               _how_to_point()))


def load():
    """Find, load, declare and check the library: (CDLL, its path, how it was found)."""
    lib, name, how = _open()
    declare(lib)
    check_abi(lib, name)
    return lib, _resolved_path(lib, name), how


def _resolved_path(lib, name):
    """The file the dynamic loader actually mapped for `lib` (dladdr on one of its symbols), or
    `name` when that cannot be told."""
    try:
        class _DlInfo(ctypes.Structure):
            _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                        ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]
        libdl = ctypes.CDLL(None)
        dladdr = libdl.dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        dladdr.restype = ctypes.c_int
        info = _DlInfo()
        addr = ctypes.cast(lib.dual_version, ctypes.c_void_p).value
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(info.dli_fname.decode())
    except (OSError, AttributeError):
        pass
    return name
