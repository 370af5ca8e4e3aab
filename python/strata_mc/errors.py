"""The library's errors as one Python exception, and check(), which raises
the library's last error; every module that calls the library takes it
from here."""

#: The library's error codes (strata/strata.h) by value.
CODES = {1: "EINVAL", 2: "ENOMEM", 3: "ENOTFINITE", 4: "EBACKEND", 5: "EIO", 6: "ECOMM",
         7: "EPEER"}


class StrataError(Exception):
    """An error of libstrata or of a strata file: ``str(e)`` is the
    library's one-line message, naming the value, key or file at fault;
    ``e.code`` its error code (1 EINVAL bad input, 2 ENOMEM, 3 ENOTFINITE
    the integrand returned NaN or Inf, 4 EBACKEND, 5 EIO, 6 ECOMM, 7 EPEER
    another MPI rank failed and its message says why; 0 for a file the
    Python reader refuses)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def name(self):
        """The code's name, e.g. ``"EINVAL"``."""
        return CODES.get(self.code, "E%d" % self.code)


def check(rc):
    """Raises the library's last error where rc is not STRATA_OK."""
    # The compiled part loads on first use: strata_mc.log reads logs
    # without it.
    from ._lib import ffi, lib
    if rc != lib.STRATA_OK:
        raise StrataError(rc, ffi.string(lib.strata_last_error()).decode(errors="replace"))
