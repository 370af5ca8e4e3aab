"""strata_mc: adaptive Monte Carlo integration (VEGAS+, VEGAS, VEGAS-1D,
plain Monte Carlo, randomized QMC) on CPUs, MPI ranks and GPUs, from
Python.  The binding of libstrata (doc/python.md), distributed as strata-mc.

    import numpy as np, strata_mc as strata
    def f(x):                       # points (n, dim) -> values (n,)
        return np.exp(-100 * ((x - 0.5) ** 2).sum(axis=1))
    r = strata.Integrator(f, [[0, 1]] * 4, neval=1e5, seed=1).integrate()
    print(r.mean, r.sdev, r.chi2_dof, r.Q)

or as Lepage's vegas: integ = strata.Integrator([[0, 1]] * 4), then
integ(f, nitn=10, neval=1e4) (doc/python.md, "From vegas").

strata_mc.log reads convergence logs and needs only h5py and numpy (pandas
for tables), not the compiled library."""
from .errors import StrataError
from .source import Source

# vegas's integrand decorators and classes, under vegas's names.
_FORMS = ("lbatchintegrand", "rbatchintegrand", "batchintegrand", "LBatchIntegrand",
          "RBatchIntegrand", "BatchIntegrand")

__all__ = ["Integrator", "Iteration", "Mode", "Result", "Source", "StrataError", "integrate",
           "read_log", "reporter", "version"] + list(_FORMS)

_LAZY = {"Integrator": "integrator", "integrate": "integrator", "Iteration": "result", "Mode": "result",
         "Result": "result", "reporter": "result", "read_log": "log"}
_LAZY.update((k, "forms") for k in _FORMS)


def __getattr__(name):
    """The compiled part loads on first use, so that strata_mc.log and
    strata_mc.plot work where only the pure-Python files are present."""
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module("." + _LAZY[name], __name__), name)
    if name == "version":
        from ._lib import ffi, lib
        return ffi.string(lib.strata_version()).decode()
    raise AttributeError("module 'strata_mc' has no attribute %r" % name)
