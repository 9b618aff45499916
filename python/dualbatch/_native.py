"""The loaded library: LIB (a ctypes.CDLL with every prototype declared and its ABI checked),
the file it came from and how it was found.  Importing this module loads it (_library.py)."""
from ._library import load

LIB, LIBRARY_PATH, FOUND_BY = load()


def text(ptr):
    """A C string returned by the library as str (None stays None)."""
    return None if ptr is None else ptr.decode("utf-8", "replace")
