"""Context: where and how to evaluate (CPU or GPU, threads, AD mode, GPU tier, knobs), and the
factory of Programs.  One context per thread is the library's rule; the binding also serializes
the calls made on one Context with a lock, so sharing one is safe (but not parallel)."""
import ctypes
import os
import threading

import numpy as np

from ._handle import OwnsHandle
from ._native import LIB, text
from .constants import ADMode, Device, Knob, Tier
from .errors import error_for


def _enum(value, enum_cls, what):
    """An enum member from its lowercase name ("cpu") or its value."""
    if isinstance(value, str):
        try:
            return enum_cls[value.upper()]
        except KeyError:
            raise ValueError("%s must be one of %s, not %r" % (
                what, ", ".join(m.name.lower() for m in enum_cls), value)) from None
    return enum_cls(value)


def _seed64(seed):
    """Any integer in [-2**63, 2**64) as the int64_t with the same 64 bits."""
    seed = int(seed)
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError("seed %d does not fit in 64 bits" % seed)
    return seed - 2 ** 64 if seed >= 2 ** 63 else seed


def _memory(array, what):
    """The address and size of an ndarray's own memory (never of a copy, which pin would lock
    and lose)."""
    if not isinstance(array, np.ndarray):
        raise TypeError("%s takes a numpy.ndarray, not %s" % (what, type(array).__name__))
    return array.ctypes.data, array.nbytes


def _stream_handle(stream):
    """A CUDA stream as an int handle: an int, or a CuPy (.ptr) or PyTorch (.cuda_stream)
    stream; None or 0 = the context's own stream."""
    if stream is None:
        return None
    for attr in ("ptr", "cuda_stream"):
        if hasattr(stream, attr):
            stream = getattr(stream, attr)
            break
    return int(stream) or None


class Context(OwnsHandle):
    """A dualbatch context.

    Context(device="auto", threads=None, ad_mode=None, tier=None, width=None, seed=None)
      device   "auto" (the GPU when the library has CUDA and one is present, else the CPU),
               "cpu" or "gpu" ("gpu" without one raises DualbatchError DUAL_ERR_NO_DEVICE);
               the environment variable DUALBATCH_DEVICE overrides it
      threads  CPU threads (None or 0 = all cores)
      ad_mode  "auto", "forward" or "reverse" (None = the library's default, auto)
      tier     GPU tier: "auto", "interpret" or "compile"
      width    multi-dual width: 1, 2, 4, 8, 16 or 32 (None = automatic)
      seed     the draws' seed for every call but sgrad (default 0)
    Use it as a context manager, or call close().
    """

    def __init__(self, device="auto", threads=None, ad_mode=None, tier=None, width=None,
                 seed=None):
        self._lock = threading.RLock()
        self._stream = None
        self._handle = ctypes.c_void_p()
        st = LIB.dual_context_create(ctypes.byref(self._handle),
                                     int(_enum(device, Device, "device")))
        if st:
            if self._handle:
                message = text(LIB.dual_context_last_error(self._handle))
                LIB.dual_context_destroy(ctypes.byref(self._handle))
            else:
                message = text(LIB.dual_status_string(st))
            raise error_for(st, "creating a context: " + message)
        try:
            if threads is not None:
                self.set_threads(threads)
            if ad_mode is not None:
                self.set_ad_mode(ad_mode)
            if tier is not None:
                self.set_tier(tier)
            if width is not None:
                self.set_width(width)
            if seed is not None:
                self.set_seed(seed)
        except BaseException:
            self.close()
            raise

    # -- life --------------------------------------------------------------------------------
    def close(self):
        """Destroy the library context (Programs made by it can no longer evaluate)."""
        with self._lock:
            if self._handle:
                LIB.dual_context_destroy(ctypes.byref(self._handle))

    @property
    def closed(self):
        return not self._handle

    def __repr__(self):
        if self.closed:
            return "<dualbatch.Context closed>"
        return "<dualbatch.Context device=%s>" % self.device

    def _check_open(self):
        if not self._handle:
            raise ValueError("the dualbatch Context is closed")

    def _call(self, fn, *args):
        """Call a library function returning a status; raise with the context's message."""
        with self._lock:
            self._check_open()
            st = fn(*args)
            if st:
                raise error_for(st, text(LIB.dual_context_last_error(self._handle)))

    # -- settings ----------------------------------------------------------------------------
    def set_threads(self, threads):
        self._call(LIB.dual_context_set_threads, self._handle, int(threads or 0))

    def set_gpu(self, ordinal):
        """Run on CUDA device `ordinal` (0 .. device_count() - 1); see dual_context_set_gpu."""
        self._call(LIB.dual_context_set_gpu, self._handle, int(ordinal))

    @property
    def gpu(self):
        """The CUDA device this context runs on (its first), or -1 on the CPU."""
        with self._lock:
            self._check_open()
            return int(LIB.dual_context_gpu(self._handle))

    def set_gpus(self, ordinals):
        """Run on several CUDA devices at once: each call's points shared among them (see
        dual_context_set_gpus)."""
        ords = [int(o) for o in ordinals]
        arr = (ctypes.c_int32 * max(len(ords), 1))(*ords)
        self._call(LIB.dual_context_set_gpus, self._handle, len(ords), arr)

    @property
    def gpus(self):
        """The CUDA devices this context runs on ([] on the CPU)."""
        with self._lock:
            self._check_open()
            arr = (ctypes.c_int32 * 16)()
            n = int(LIB.dual_context_gpus(self._handle, arr, 16))
            return [int(arr[i]) for i in range(min(n, 16))]

    def set_width(self, width):
        self._call(LIB.dual_context_set_width, self._handle, int(width or 0))

    def set_ad_mode(self, mode):
        self._call(LIB.dual_context_set_ad_mode, self._handle, int(_enum(mode, ADMode, "ad_mode")))

    def set_tier(self, tier):
        self._call(LIB.dual_context_set_tier, self._handle, int(_enum(tier, Tier, "tier")))

    def set_seed(self, seed):
        self._call(LIB.dual_context_set_seed, self._handle, _seed64(seed))

    def set_memory_limit(self, nbytes):
        self._call(LIB.dual_context_set_memory_limit, self._handle, int(nbytes))

    def set_cache_dir(self, path):
        self._call(LIB.dual_context_set_cache_dir, self._handle,
                   None if path is None else os.fsencode(path))

    def set_stream(self, stream):
        """GPU contexts: the CUDA stream of every call (an int handle, a CuPy or PyTorch stream;
        None = the context's own, or for device arrays the producer's current stream)."""
        handle = _stream_handle(stream)
        self._call(LIB.dual_context_set_stream, self._handle, handle)
        self._stream = handle

    def pin(self, array):
        """Page-lock a NumPy array's memory (dual_host_pin) so that GPU calls on it (packed,
        C-contiguous) copy straight to and from the device, skipping the staging copy.  Keep the
        array alive and call unpin(array) before dropping it.  On the CPU: nothing happens."""
        self._call(LIB.dual_host_pin, self._handle, *_memory(array, "pin"))

    def unpin(self, array):
        """Release an array locked with pin()."""
        self._call(LIB.dual_host_unpin, self._handle, _memory(array, "unpin")[0])

    def set_knob(self, knob, value):
        self._call(LIB.dual_context_set_knob, self._handle, int(_enum(knob, Knob, "knob")),
                   int(value))

    def knob(self, knob):
        self._check_open()
        return int(LIB.dual_context_knob(self._handle, int(_enum(knob, Knob, "knob"))))

    # -- state -------------------------------------------------------------------------------
    def _name(self, fn, enum_cls):
        self._check_open()
        return enum_cls(fn(self._handle)).name.lower()

    @property
    def device(self):
        """"cpu" or "gpu": where this context evaluates."""
        return self._name(LIB.dual_context_device, Device)

    @property
    def last_device(self):
        """Where the last successful evaluation ran ("cpu", "gpu", or "hybrid": its points were
        split between the two)."""
        return self._name(LIB.dual_context_last_device, Device)

    @property
    def last_split(self):
        """(gpu_points, cpu_points): the points the last successful evaluation ran on the GPU and
        on the CPU; both nonzero where AUTO split the call (last_device "hybrid")."""
        self._check_open()
        g, c = ctypes.c_int64(0), ctypes.c_int64(0)
        LIB.dual_context_last_split(self._handle, ctypes.byref(g), ctypes.byref(c))
        return g.value, c.value

    def calibrate(self):
        """Measure again the figures AUTO's adaptive dispatch uses on this machine (stored in the
        kernel cache's directory) and return them as a dict of name -> value."""
        buf = ctypes.create_string_buffer(4096)
        self._call(LIB.dual_context_calibrate, self._handle, buf, len(buf))
        out = {}
        for line in buf.value.decode("utf-8", "replace").splitlines()[1:]:
            name, _, value = line.partition(" ")
            out[name] = float(value)
        return out

    @property
    def last_ad_mode(self):
        """"forward" or "reverse": the mode the last successful evaluation used."""
        return self._name(LIB.dual_context_last_ad_mode, ADMode)

    @property
    def last_tier(self):
        """"interpret" or "compile": the tier of the last successful evaluation."""
        return self._name(LIB.dual_context_last_tier, Tier)

    @property
    def last_note(self):
        """Why the last evaluation did not run on the context's device, or ran checkpointed
        ("" when neither)."""
        self._check_open()
        return text(LIB.dual_context_last_note(self._handle))

    @property
    def last_error(self):
        """The message of the last failure on this context."""
        self._check_open()
        return text(LIB.dual_context_last_error(self._handle))

    def cache_usage(self):
        """The compiled tier's disk cache: (directory, entries, bytes)."""
        entries, nbytes = ctypes.c_int64(), ctypes.c_int64()
        buf = ctypes.create_string_buffer(4096)
        self._call(LIB.dual_context_cache_usage, self._handle, buf, len(buf), ctypes.byref(entries),
                   ctypes.byref(nbytes))
        return os.fsdecode(buf.value), entries.value, nbytes.value

    def cache_clear(self):
        """Remove every entry of the disk cache; returns how many were removed."""
        removed = ctypes.c_int64()
        self._call(LIB.dual_context_cache_clear, self._handle, ctypes.byref(removed))
        return removed.value

    # -- programs ----------------------------------------------------------------------------
    def _program(self, fn, *args):
        from .program import Program
        handle = ctypes.c_void_p()
        self._call(fn, self._handle, *args, ctypes.byref(handle))
        return Program(self, handle)

    def compile(self, source, name=None):
        """A Program from source text (README "The language"); `name` prefixes diagnostics
        ("name:line:col: error: ...").  A syntax error raises DualbatchError DUAL_ERR_SYNTAX."""
        return self._program(LIB.dual_program_compile, source.encode("utf-8"),
                             None if name is None else name.encode("utf-8"))

    def load(self, path):
        """A Program from a file: the binary format (Program.save) or program text."""
        return self._program(LIB.dual_program_load_file, os.fsencode(path))

    def load_bytes(self, data):
        """A Program from the binary format (Program.to_bytes), validated again."""
        data = bytes(data)
        return self._program(LIB.dual_program_load, data, len(data))
