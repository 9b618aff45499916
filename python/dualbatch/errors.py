"""Exceptions: a failed library call raises DualbatchError with its status and the context's
last error message; wrong array shapes raise DimensionError (also a ValueError), before any call
when the binding sees them itself."""
from .constants import Status


class DualbatchError(Exception):
    """A dualbatch call failed.  `status` is the library's dual_status (a Status when known),
    `message` the text of dual_context_last_error (e.g. "model:2:14: error: ...")."""

    def __init__(self, status, message):
        try:
            status = Status(status)
        except ValueError:
            status = int(status)
        self.status = status
        self.message = message
        name = status.name if isinstance(status, Status) else str(status)
        super().__init__("DUAL_%s: %s" % (name, message))


class DimensionError(DualbatchError, ValueError):
    """Array shapes do not match the program (status DUAL_ERR_DIMENSION)."""

    def __init__(self, message):
        super().__init__(Status.ERR_DIMENSION, message)


def error_for(status, message):
    """The exception for a failed call: DimensionError for DUAL_ERR_DIMENSION, else
    DualbatchError."""
    if status == Status.ERR_DIMENSION:
        return DimensionError(message)
    return DualbatchError(status, message)
