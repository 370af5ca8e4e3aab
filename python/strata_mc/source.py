"""An integrand as C source, compiled at run time by the library."""
import os

from .errors import check


class Source:
    """C source of an integrand in one of the program's integrand forms
    (doc/integrands.md), compiled by libstrata: with the system's C
    compiler for the CPU when an Integrator is made, and with NVRTC for
    the GPU when a cuda backend first samples.  Its calls run entirely in
    C, on every OpenMP thread or on the GPU, without the GIL.

    ``code`` defines ``function``: ``double f(const double *x, int dim,
    const double *params)`` or, with ``ncomp`` > 1 (or ``extended=True``),
    ``void f(const double *x, int dim, const double *params, const
    strata_table *tables, double *out)`` writing ``ncomp`` values.
    ``params`` (at most 16 numbers) reach the function as ``params``.
    Sources pickle as their text."""

    def __init__(self, code, function, params=(), ncomp=1, extended=None):
        if not isinstance(code, str) or not isinstance(function, str):
            raise TypeError("Source(code, function): code and function are strings")
        self.code = code
        self.function = function
        self.params = tuple(float(p) for p in params)
        self.ncomp = int(ncomp)
        self.extended = bool(self.ncomp > 1 if extended is None else extended)
        self._c = None

    @classmethod
    def from_file(cls, path, function, **kw):
        """The source in the file at ``path`` (a job file's ``integrand =
        file:PATH`` with ``function = NAME``)."""
        with open(os.fspath(path), encoding="utf-8") as f:
            return cls(f.read(), function, **kw)

    def __reduce__(self):
        return (Source, (self.code, self.function, self.params, self.ncomp, self.extended))

    def __repr__(self):
        return "Source(function=%r, params=%r, ncomp=%d)" % (self.function, self.params,
                                                              self.ncomp)

    def _handle(self):
        """The library's strata_source, made once and freed with self."""
        if self._c is None:
            from ._lib import ffi, lib
            out = ffi.new("strata_source **")
            check(lib.strata_source_from_string(self.code.encode(), self.function.encode(),
                                                int(self.extended), self.ncomp, out))
            self._c = ffi.gc(out[0], lib.strata_source_free)
        return self._c
