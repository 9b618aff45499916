"""The constants of include/dualbatch.h as Python enums, with the header's values.

Names drop the C prefix: DUAL_ERR_SYNTAX is Status.ERR_SYNTAX, DUAL_PT_BAD_INPUT is
PointFlag.BAD_INPUT, DUAL_MODE_JACOBIAN is Mode.JACOBIAN.  tests/test_header_sync.py checks every
value against the header.
"""
import enum


class Status(enum.IntEnum):
    """dual_status: what every library call returns (0 = success)."""
    SUCCESS = 0
    ERR_ARGUMENT = 1
    ERR_NO_MEMORY = 2
    ERR_SYNTAX = 3
    ERR_INVALID_PROGRAM = 4
    ERR_FORMAT = 5
    ERR_IO = 6
    ERR_DIMENSION = 7
    ERR_LIMIT = 8
    ERR_NO_DEVICE = 9
    ERR_UNSUPPORTED = 10
    ERR_INTERNAL = 11
    ERR_DEVICE = 12
    ERR_COMPILE = 13


class PointFlag(enum.IntFlag):
    """DUAL_PT_*: the per-point flag words (OR-ed; 0 = finite and regular)."""
    NAN = 1
    INF = 2
    DOMAIN = 4
    SINGULAR = 8
    BAD_INPUT = 16


class Device(enum.IntEnum):
    """dual_device: where a context evaluates."""
    AUTO = 0
    CPU = 1
    GPU = 2
    HYBRID = 3  # reported only (last_device): the last call split its points between GPU and CPU


class ADMode(enum.IntEnum):
    """dual_ad_mode: how derivatives are computed."""
    AUTO = 0
    FORWARD = 1
    REVERSE = 2


class Tier(enum.IntEnum):
    """dual_tier: the GPU's interpreter or compiled kernels."""
    AUTO = 0
    INTERPRET = 1
    COMPILE = 2


class Knob(enum.IntEnum):
    """dual_knob: tuning knobs (no knob changes a result)."""
    GPU_GROUP = 0
    GPU_REGFILE = 1
    GPU2_BLOCKS = 2
    HESSIAN_NESTED = 3
    JIT_WIDTH = 4
    JIT_MIN_BLOCKS = 5
    JIT_TRACE = 6
    JIT_SECOND = 7
    JIT_REVERSE = 8
    JIT_SGRAD = 9
    JIT_GROUPS = 10
    JIT_LOADS_AHEAD = 11
    SOLVE_LU = 12
    SOLVE_QR = 13
    DISPATCH = 14
    SPLIT_SHARE = 15
    SPLIT_THREADS = 16
    CPU_JIT_AFTER_MS = 17
    COUNT = 18


class HessianLayout(enum.IntEnum):
    """dual_hessian_layout: n*n row-major, or the upper triangle row by row."""
    FULL = 0
    PACKED = 1


class Mode(enum.IntEnum):
    """dual_mode: the product dual_run computes."""
    EVAL = 0
    JVP = 1
    JACOBIAN = 2
    GRADIENT = 3
    HESSIAN = 4
    HVP = 5
    VJP = 6
    SGRAD = 7


class Memory(enum.IntEnum):
    """dual_memory: where every array of a batch lives."""
    HOST = 0
    DEVICE = 1


class SgradFlag(enum.IntFlag):
    """dual_sgrad_flag: antithetic sampling, score-function estimator."""
    ANTITHETIC = 1
    SCORE = 2


class SolveStatus(enum.IntEnum):
    """dual_solve_status: how a point of dual_newton / dual_lsq ended."""
    CONVERGED = 0
    MAX_ITER = 1
    SINGULAR = 2
    NONFINITE = 3
    LINE_SEARCH = 4
    NO_PROGRESS = 5


#: the library major version this binding is written for (libdualbatch.so.<major>)
EXPECTED_MAJOR = 0
