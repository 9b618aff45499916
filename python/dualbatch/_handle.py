"""The lifetime of an object that owns a library handle (Context, Program): `with` closes it,
and so does garbage collection; the class defines close()."""


class OwnsHandle:
    """Mixin: context-manager protocol and close-on-collection around the subclass's close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass
