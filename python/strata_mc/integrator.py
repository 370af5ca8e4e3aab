"""The integrator: libstrata's strata_integrator over a box, with numpy
batch integrands or C source, stepping, progress, checkpoints, pickling
and MPI peers.

Threads and the GIL.  Every call into the library releases the GIL.  A
numpy batch integrand is Python: the library calls it under the GIL, by
default (threads=1) on the thread that called step() or integrate(), in
batches of up to ``batch`` points.  threads=k > 1 lets k OpenMP threads
sample at once; they take turns at the GIL, so this helps only where the
integrand releases it (numpy does inside large array operations).  A C
source integrand runs in C on every OpenMP thread (threads=0: all) or on
the GPU, without the GIL, so other Python threads run meanwhile."""
import atexit
import math
import numbers
import os
import threading
import weakref

import numpy as np

from . import forms
from ._lib import ffi, lib
from .errors import StrataError, check
from .result import Iteration, Result
from .source import Source

_BACKENDS = {"auto": lib.STRATA_BACKEND_AUTO, "cpu": lib.STRATA_BACKEND_CPU,
             "cuda": lib.STRATA_BACKEND_CUDA}


def _keys(setting):
    """The keywords of strata/keys.h's list of strata_settings (setting)
    or strata_params, in its order: keyword -> (field, kind, choices)."""
    out = {}
    for i in range(lib.strata_py_nkeys()):
        k = lib.strata_py_key_at(i)
        keyword = ffi.string(k.keyword).decode()
        if keyword and k.setting == setting:
            out[keyword] = (ffi.string(k.field).decode(), k.kind,
                            ffi.string(k.choices).decode().split())
    return out


_PARAM_KEYS = _keys(0)
_SETTING_KEYS = _keys(1)
# The peak search's keywords -> strata_params.peaks fields (doc/peaks.md, "Settings").
_PEAK_FIELDS = {"peak_starts": "starts", "peak_ascents": "ascents", "peak_uniform": "uniform"}
_PEAKS = {True: lib.STRATA_PEAKS_ON, False: lib.STRATA_PEAKS_OFF, "on": lib.STRATA_PEAKS_ON,
          "off": lib.STRATA_PEAKS_OFF, "auto": lib.STRATA_PEAKS_AUTO}
#: Keywords of Integrator that set strata_params (strata(1), [vegas] and [peaks], has
#: their meaning).
PARAMS = tuple(_PARAM_KEYS) + ("peaks", "known_peaks") + tuple(_PEAK_FIELDS)
#: Keywords of Integrator that set strata_settings: what a run keeps.
SETTINGS = tuple(_SETTING_KEYS)
# Other words for a choice: vegas's name of vegas+; a truth value for no or yes.
_CHOICE_ALIASES = {"vegasplus": "vegas+", False: "no", True: "yes"}
# Files a pickled copy does not share with its original.
_FILE_SETTINGS = ("log", "log_map", "checkpoint", "checkpoint_every", "checkpoint_every_s",
                  "resume", "new_stop_keys")
#: vegas's keywords (of its Integrator and its calls) that strata takes:
#: nitn (maxiter), rtol (epsrel), atol (epsabs), adapt, maxinc_axis (ninc),
#: min_neval_batch (batch), nproc (threads), mpi (comm=MPI.COMM_WORLD) and
#: analyzer (begin and end of each iteration, as strata_mc.reporter).
VEGAS = ("nitn", "rtol", "atol", "adapt", "maxinc_axis", "min_neval_batch", "nproc", "mpi",
         "analyzer")
# vegas's keywords for its own work arrays and layout, which strata sizes
# itself: taken and left unused, so that a vegas script runs unchanged.
_VEGAS_UNUSED = ("max_neval_hcube", "neval_frac", "max_mem", "minimize_mem", "gpu_pad",
                 "sync_ran", "uniform_nstrat", "correlate_integrals")
# vegas's keywords strata has nothing like: what to do instead.
_VEGAS_REFUSED = {
    "uses_jac": "strata does not pass the map's Jacobian to the integrand",
    "nstrat": "strata chooses the hypercubes from neval and max_nhcube",
    "adapt_to_errors": "strata adapts the map to |f|",
    "ran_array_generator": "strata draws its points from Philox with seed=",
    "map": "give the limits as the first argument, or start from another run with "
           "set_map(other.map)",
}
# The default batch of a Python integrand, and of many components the
# values a batch holds (16 MB, twice: the integrand's array and the library's).
_BATCH = 65536
_BATCH_VALUES = 2 ** 21
# vegas's defaults where they differ from strata's [vegas] defaults.
_VEGAS_DEFAULTS = dict(nitn=10, neval=1000, rtol=0.0, atol=0.0, adapt=True)
# Messages name the Python keywords, not the library's fields.
_NAMES = dict(resume='resume="yes"', resume_key="resume", resume_auto='resume="auto"',
              new_stop_keys="new_stop_keys=True", checkpoint="checkpoint", log="log",
              map="map", backend="backend")

# Set by stop() beside the library's request: a signal's Python handler runs
# in the progress callback, after the library has looked for a request in
# that iteration, and the callback passes it on at once.
_stop_asked = False

# Integrators with MPI peers, freed before MPI_Finalize (mpi4py finalizes
# after Python's atexit handlers).
_live = weakref.WeakSet()


@atexit.register
def _free_all():
    for s in list(_live):
        s.close()


def _choice(k, v, words):
    """The index of v among a CHOICE key's words (any case)."""
    w = v if isinstance(v, bool) else str(v).lower()
    w = _CHOICE_ALIASES.get(w, w)
    if w not in words:
        raise StrataError(lib.STRATA_EINVAL, "%s = %r: must be %s or %s"
                          % (k, v, ", ".join(words[:-1]), words[-1]))
    return words.index(w)


def _whole(k, v, lo=None):
    """v as a whole number (not a bool), at least lo where lo is given."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (
            math.isfinite(v) and v == int(v)) or (lo is not None and v < lo):
        raise StrataError(lib.STRATA_EINVAL, "%s = %r: must be a whole number%s"
                          % (k, v, "" if lo is None else ", %d or more" % lo))
    return int(v)


def _params_from(kw, python_integrand):
    p = ffi.new("strata_params *")
    lib.strata_params_default(p)
    if python_integrand:
        p.nthreads = 1
    for k, v in kw.items():
        if k == "peaks":
            s = _PEAKS.get(v.lower() if isinstance(v, str) else v) if isinstance(
                v, (bool, str)) else None
            if s is None:
                raise StrataError(lib.STRATA_EINVAL, "peaks = %r: must be True, False or "
                                  "\"auto\"" % (v,))
            p.peaks.search = s
            continue
        if k == "known_peaks":
            _known_into(p, v)
            continue
        if k in _PEAK_FIELDS:
            try:
                setattr(p.peaks, _PEAK_FIELDS[k],
                        float(v) if k == "peak_uniform" else _whole(k, v))
            except OverflowError:
                raise StrataError(lib.STRATA_EINVAL, "%s = %r: out of range" % (k, v)) from None
            continue
        if k not in _PARAM_KEYS:
            raise TypeError("Integrator: unknown keyword %r (parameters: %s; settings: %s)"
                            % (k, ", ".join(PARAMS), ", ".join(SETTINGS)))
        field, kind, words = _PARAM_KEYS[k]
        if kind == lib.STRATA_KEY_CHOICE:
            setattr(p, field, _choice(k, v, words))
        elif kind == lib.STRATA_KEY_SWITCH:
            setattr(p, field, int(bool(v)))
        elif kind == lib.STRATA_KEY_REAL:
            setattr(p, field, float(v))
        else:
            n = _whole(k, v)
            if kind == lib.STRATA_KEY_WHOLE and not 0 <= n < 2 ** 64:
                raise StrataError(lib.STRATA_EINVAL, "%s = %r: must be in 0..2^64-1" % (k, v))
            try:
                setattr(p, field, n)
            except OverflowError:
                raise StrataError(lib.STRATA_EINVAL, "%s = %r: out of range" % (k, v)) from None
    check(lib.strata_params_check(p))
    return p


def _known_into(p, points):
    """known_peaks: a list of points (each a sequence of dim numbers, in
    the integrand's own coordinates) into strata_params.peaks."""
    try:
        pts = [np.asarray(x, dtype=float).reshape(-1) for x in (() if points is None else points)]
    except (TypeError, ValueError):
        raise StrataError(lib.STRATA_EINVAL, "known_peaks = %r: must be a list of points, each "
                          "a list of numbers" % (points,)) from None
    if len(pts) > lib.STRATA_MAX_KNOWN:
        raise StrataError(lib.STRATA_EINVAL, "known_peaks: %d points, at most %d"
                          % (len(pts), lib.STRATA_MAX_KNOWN))
    for i, x in enumerate(pts):
        if not 1 <= x.size <= lib.STRATA_MAX_DIM or not np.all(np.isfinite(x)):
            raise StrataError(lib.STRATA_EINVAL, "known_peaks: point %d, %r: must be dim finite "
                              "numbers" % (i + 1, points[i]))
        for d, v in enumerate(x):
            p.peaks.known[i][d] = v
    p.peaks.nknown = len(pts)
    return pts


def _check_known(points, box):
    """Each known peak has the box's dimension and lies inside it."""
    for i, x in enumerate(() if points is None else points):
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.size != box.shape[0]:
            raise StrataError(lib.STRATA_EINVAL, "known_peaks: point %d has %d coordinate%s for "
                              "dim %d" % (i + 1, x.size, "" if x.size == 1 else "s",
                                          box.shape[0]))
        for d in range(x.size):
            if not box[d, 0] <= x[d] <= box[d, 1]:
                raise StrataError(lib.STRATA_EINVAL, "known_peaks: point %d, axis %d: %g is "
                                  "outside the limits [%g, %g]" % (i + 1, d + 1, x[d],
                                                                   box[d, 0], box[d, 1]))


def _settings_from(kw, name, keep):
    """strata_settings from the keywords of SETTINGS; keep holds the
    strings' memory until the library has copied them."""
    st = ffi.new("strata_settings *")
    lib.strata_py_settings_init(st)

    def text(k, v, path):
        b = os.fsencode(v) if path else str(v).encode()
        # C reads up to the first NUL: the rest would be dropped unseen, and two
        # identities that differ after it would compare equal.
        if b"\0" in b:
            raise StrataError(lib.STRATA_EINVAL, "%s = %r: contains a NUL character" % (k, v))
        keep.append(ffi.new("char[]", b))
        return keep[-1]

    for k, v in kw.items():
        if v is None:
            continue
        field, kind, words = _SETTING_KEYS[k]
        if kind == lib.STRATA_KEY_PATH:
            if not os.fspath(v):
                raise StrataError(lib.STRATA_EINVAL, "%s = %r: must be a path (None: no %s)"
                                  % (k, v, k))
            setattr(st, field, text(k, v, True))
        elif kind == lib.STRATA_KEY_TEXT:
            setattr(st, field, text(k, v, False))
        elif kind == lib.STRATA_KEY_COUNT:
            setattr(st, field, _whole(k, v, 0))
        elif kind == lib.STRATA_KEY_REAL:
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (
                    math.isfinite(v) and v >= 0):
                raise StrataError(lib.STRATA_EINVAL, "%s = %r: must be a number, 0 or more"
                                  % (k, v))
            setattr(st, field, float(v))
        elif kind == lib.STRATA_KEY_CHOICE:
            setattr(st, field, _choice(k, v, words))
        else:  # SWITCH
            setattr(st, field, int(bool(v)))
    # The run's name in the library's messages and the log's job name.
    st.name = text("name", name or "strata_mc.Integrator", False)
    st.names = _names()
    return st


_names_c = []


def _names():
    """The library keeps these names' pointers, not copies: they live as
    long as the module."""
    if not _names_c:
        names = ffi.new("strata_settings_names *")
        for k, v in _NAMES.items():
            _names_c.append(ffi.new("char[]", v.encode()))
            setattr(names, k, _names_c[-1])
        _names_c.append(names)
    return _names_c[-1]


def _box(box):
    try:
        b = np.array(box, dtype=float)
    except (TypeError, ValueError):
        b = None
    if b is None or b.ndim < 2 or b.shape[-1] != 2 or b.size < 2:
        raise StrataError(lib.STRATA_EINVAL, "box = %r: must be a list of (lower, upper) pairs, "
                          "one per dimension" % (box,))
    if b.size // 2 > lib.STRATA_MAX_DIM:
        raise StrataError(lib.STRATA_EINVAL, "box: %d dimensions, at most %d"
                          % (b.size // 2, lib.STRATA_MAX_DIM))
    return b


def _limits(box):
    """forms.Limits of a box (an array of pairs, of any shape) or a dict."""
    if not hasattr(box, "keys"):
        _box(box)
    return forms.Limits(box)


def _fresh_seed(comm):
    """A seed nobody chose (seed=None): the same on every rank."""
    seed = int.from_bytes(os.urandom(8), "little")
    return comm.bcast(seed, root=0) if comm is not None else seed


def _call_seed(seed, k):
    """The seed of call k: the first the Integrator's own, the later ones
    mixed from it (splitmix64), so that each call draws other points."""
    if k == 0:
        return seed
    z = (seed + k * 0x9E3779B97F4A7C15) % 2 ** 64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2 ** 64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2 ** 64
    return z ^ (z >> 31)


class Integrator:
    """A run of ``f`` over ``box`` (a list of ``(lower, upper)`` pairs, one
    per dimension).  Made as vegas's, ``Integrator(limits, **kw)``, it is
    called as ``integ(f, nitn=..., neval=...)`` (see :meth:`__call__`),
    and ``kw`` may be vegas's keywords (:data:`VEGAS`).

    ``f`` is a numpy batch function, points (n, dim) -> values (n,) or
    (n, ncomp), or a :class:`Source`.  Parameters (strata(1), [vegas]):
    ``neval``, ``mode`` (vegas+, vegas, vegas1d, plain, qmc), ``seed``,
    ``maxiter``, ``maxeval``, ``adapt_iters``, ``skip``, ``epsrel``,
    ``epsabs``, ``ninc``, ``alpha``, ``beta``, ``max_nhcube``, ``min_q``,
    ``threads`` (OpenMP threads, 0: all; a Python integrand defaults to 1),
    ``qmc``, ``nrand``, ``qmc_map``, ``neval_frozen``; the peak search's
    (doc/peaks.md, [peaks]): ``peaks`` (True, False or "auto": on in the
    vegas modes on the CPU for a scalar integrand; True searches on the
    GPU too), ``known_peaks``
    (points where peaks are, each a list of dim numbers inside the box,
    whose ascents run first),
    ``peak_starts`` (the Sobol' points before the warm-up, or half of
    neval where that is more, at most 16384; 0: none), ``peak_ascents``,
    ``peak_uniform``; unset ones take the library's defaults.  ``backend``: "auto" (the GPU where one is visible
    and ``f`` is a Source, else the CPU), "cpu" or "cuda".  ``comm``: an
    mpi4py communicator whose ranks share the run (every rank makes the
    same calls).  ``ncomp``: components of a Python integrand (found by
    calling it at two points of the box when not given); ``adapt_comp``:
    the component that trains the map (-1: the sum of their magnitudes);
    ``batch``: the most points per call of a Python integrand (by
    default 65536, and at most 2^21 values: 2097 points of 1000
    components); ``name``:
    the integrand's and the run's name in messages and in the log.

    What integrate() keeps besides its result (doc/api.md,
    strata_settings): ``log`` (a convergence log, HDF5, written as the run
    goes; never overwritten unless resumed), ``log_map`` (a map snapshot
    every this many iterations), ``checkpoint`` (a path) written every
    ``checkpoint_every`` iterations and/or ``checkpoint_every_s`` seconds,
    at the end and on a stop; ``resume`` ("no": an existing checkpoint is
    an error; "yes": continue from it; "auto": continue where there is
    one); ``new_stop_keys`` (a resume takes this Integrator's maxiter,
    maxeval, skip, epsrel, epsabs and min_q); ``identity`` (a string that
    says what the integrand's data is, kept in the checkpoint and the log:
    a resume with another one is refused); ``check_ranks`` (compare the
    ranks' states after every iteration); ``verbose`` (resumes and
    checkpoints on stderr).

    Bad input raises :class:`StrataError` with the library's message."""

    def __init__(self, f, box=None, *, backend="auto", comm=None, ncomp=None, adapt_comp=0,
                 batch=None, name=None, **params):
        self._c = None
        self._peers = None
        self._exc = None
        self._rows = []
        self._layout = None
        self._start = None       # a map (edges) the next call starts from
        self._calls = 0          # the calls integ(f, ...) made so far
        if isinstance(f, Integrator):
            # vegas's Integrator(other): its limits, keywords, peers and map.
            other, f = f, None
            box = other._limits
            if other._c is not None or other._start is not None:
                self._start = other.map
            params = dict({k: v for k, v in other._options.items() if k in PARAMS},
                          **other._vegas, **params)
            comm = other._comm if comm is None else comm
        elif box is None:
            if callable(f) or isinstance(f, Source):
                raise TypeError("Integrator(f, box): no box; or Integrator(limits), then "
                                "integ(f, nitn=..., neval=...) as vegas")
            box, f = f, None
        self._limits = box if isinstance(box, forms.Limits) else _limits(box)
        self._box = self._limits.box
        self._vegas = {}
        for k in list(params):
            if k in VEGAS or k in _VEGAS_UNUSED:
                self._vegas[k] = params.pop(k)
            elif k in _VEGAS_REFUSED:
                raise TypeError("Integrator: vegas's keyword %r has no equivalent in strata: %s"
                                % (k, _VEGAS_REFUSED[k]))
        if self._vegas.pop("mpi", False) and comm is None:
            from mpi4py import MPI
            comm = MPI.COMM_WORLD
        self._comm = comm
        if "seed" in params and params["seed"] is None or f is None and "seed" not in params:
            params["seed"] = _fresh_seed(comm)
        self._options = dict(params, backend=backend, ncomp=ncomp, adapt_comp=adapt_comp,
                             batch=batch, name=name)
        if backend not in _BACKENDS:
            raise StrataError(lib.STRATA_EINVAL, "backend = %r: must be auto, cpu or cuda"
                              % (backend,))
        self._f = f
        if f is not None:
            self._open(f, self._native_params(params), "lbatch")

    def _native_params(self, params):
        """The keywords of the native form, vegas's names among them
        translated."""
        out = dict(params)
        v = self._vegas
        if not v:
            return out
        for vk, k in (("nitn", "maxiter"), ("rtol", "epsrel"), ("atol", "epsabs"),
                      ("maxinc_axis", "ninc"), ("nproc", "threads")):
            if vk in v:
                out[k] = 0 if v[vk] is None else v[vk]  # vegas's nproc=None: every core
        # vegas's meaning where strata's own keywords do not say otherwise.
        out.setdefault("skip", 0)
        out.setdefault("epsrel", 0.0)
        if v.get("adapt") is False:
            out["adapt_iters"] = 0
        elif "maxiter" in out:
            out.setdefault("adapt_iters", out["maxiter"])
        return out

    def _open(self, f, params, kind):
        """The library's integrator of f with params (keywords of PARAMS
        and SETTINGS), replacing this one's."""
        o = self._options
        backend, ncomp, adapt_comp, name = o["backend"], o["ncomp"], o["adapt_comp"], o["name"]
        batch = self._vegas.get("min_neval_batch", o["batch"])
        dim = self._box.shape[0]
        python_integrand = not isinstance(f, Source)
        if python_integrand and not callable(f):
            raise TypeError("Integrator: f must be a function of points (n, dim) or a Source")
        settings = {k: params.pop(k) for k in SETTINGS if k in params}
        self._params = _params_from(params, python_integrand)
        _check_known(params.get("known_peaks"), self._box)
        self._keep = []
        self._settings = _settings_from(settings, name, self._keep)
        pr = self._problem = ffi.new("strata_problem *")
        pr.dim = dim
        for d in range(dim):
            pr.lower[d], pr.upper[d] = self._box[d]
        self._name = ffi.new("char[]", (name or getattr(f, "function", None)
                                        or getattr(f, "__name__", "python")).encode())
        pr.name = self._name
        pr.adapt_comp = adapt_comp
        if python_integrand:
            self._form = forms.Batch(f, self._limits, forms.kind_of(f, kind))
            self._layout = self._agreed(self._probe, ncomp)
            self._ncomp = self._layout.size
            pr.ncomp = self._ncomp
            pr.fb = lib.strata_py_batch
            # A weak reference: the handle must not keep self alive (a cycle
            # would hold the library's state until the collector runs).
            self._handle = ffi.new_handle(weakref.ref(self))
            pr.user = self._handle
            pr.batch = int(batch) if batch is not None else min(
                _BATCH, max(1, _BATCH_VALUES // self._ncomp))
        else:
            if len(f.params) > lib.STRATA_MAX_PARAMS:
                raise StrataError(lib.STRATA_EINVAL, "Source: %d params, at most %d"
                                  % (len(f.params), lib.STRATA_MAX_PARAMS))
            pr.nparams = len(f.params)
            for i, v in enumerate(f.params):
                pr.params[i] = v
            check(lib.strata_problem_set_source(pr, f._handle()))
            self._ncomp = f.ncomp
            self._layout = None
        peers = ffi.NULL
        if self._comm is not None:
            if self._peers is None:
                self._peers = _peers_of(self._comm)
            peers = self._peers
        out = ffi.new("strata_integrator **")
        check(lib.strata_integrator_alloc(pr, self._params, _BACKENDS[backend], peers, out))
        try:
            check(lib.strata_integrator_settings(out[0], self._settings))
        except BaseException:
            lib.strata_integrator_free(out[0])
            raise
        self._c = out[0]
        if self._comm is not None:
            _live.add(self)
        self._keep = None

    def _agreed(self, call, *args):
        """call(*args) on every rank, which all raise where one does (the
        others with the rank's number) rather than wait for it in the
        library's next collective."""
        try:
            out, err = call(*args), None
        except BaseException as e:  # noqa: B036 - raised below, on every rank
            out, err = None, e
        comm = self._comm
        if comm is not None and comm.Get_size() > 1:
            from mpi4py import MPI
            size = comm.Get_size()
            first = comm.allreduce(comm.Get_rank() if err is not None else size, op=MPI.MIN)
            if first < size and err is None:
                raise StrataError(lib.STRATA_ECOMM, "rank %d: the integrand's first call failed "
                                  "on rank %d" % (comm.Get_rank(), first))
        if err is not None:
            raise err
        return out

    # ---- the integrand's calls ------------------------------------------------------
    def _probe(self, ncomp):
        """The layout of a Python integrand's values, from its values at
        two points of the box (or from ncomp where given)."""
        if ncomp is not None and self._form.kind == "lbatch" and self._limits.keys is None:
            self._form.layout = forms.Layout(np.zeros(ncomp) if ncomp > 1 else 0.0)
            self._form._check_size()
            return self._form.layout
        lo, hi = self._box[:, 0], self._box[:, 1]
        x = lo + np.outer([0.2113248654051871, 0.7886751345948129], hi - lo)
        x.flags.writeable = False
        return self._form.probe(x)

    def _batch(self, n, x, dim, out):
        if n <= 0:  # no points: nothing for the integrand to see
            return
        nc = self._ncomp
        res = np.frombuffer(ffi.buffer(out, 8 * n * nc), dtype=np.float64)
        if self._exc is not None:
            res[:] = np.nan
            return
        try:
            pts = np.frombuffer(ffi.buffer(x, 8 * n * dim), dtype=np.float64).reshape(n, dim)
            pts.flags.writeable = False
            res[:] = self._form.evaluate(pts).reshape(-1)
        except BaseException as e:  # noqa: B036 - re-raised after the library returns
            self._exc = e
            res[:] = np.nan  # the library stops at the first NaN

    # ---- stepping --------------------------------------------------------------------
    def _alive(self):
        if self._c is None:
            if getattr(self, "_closed", False):
                raise StrataError(lib.STRATA_EINVAL, "the integrator is closed")
            raise StrataError(lib.STRATA_EINVAL, "nothing has run yet: call integ(f, nitn=..., "
                              "neval=...) first")
        return self._c

    @property
    def seed(self):
        """The Integrator's seed (drawn where seed=None); its later calls
        draw with seeds mixed from it."""
        return int(self._options.get("seed", 1))

    @property
    def mpi_rank(self):
        """This process's MPI rank (0 without MPI), as vegas's."""
        return self._comm.Get_rank() if self._comm is not None else 0

    @property
    def finished(self):
        """True once converged or out of iterations or evaluations."""
        return bool(lib.strata_integrator_finished(self._alive()))

    @property
    def backend(self):
        """"cpu" or "cuda": what the backend asked for became."""
        return ffi.string(lib.strata_integrator_backend(self._alive())).decode()

    @property
    def ncomp(self):
        return self._ncomp

    def step(self):
        """Runs one iteration; returns its :class:`Iteration`."""
        it = ffi.new("strata_iteration *")
        c = self._alive()
        # A finished run is refused on every rank alike: no abort for that.
        sampled = not lib.strata_integrator_finished(c)
        rc = lib.strata_integrator_step(c, it)
        if (rc != lib.STRATA_OK and sampled and self._comm is not None
                and self._comm.Get_size() > 1):
            self._abort(rc)
        if self._exc is not None:
            # The integrand raised: the library stopped at the NaN left for
            # it, which is no news to the caller.
            e, self._exc = self._exc, None
            raise e from None
        check(rc)
        row = Iteration._from_c(ffi, it)
        self._rows.append(row)
        return row

    def _abort(self, rc):
        """An iteration failed on this rank (the integrand raised or gave NaN
        here) while the other ranks wait for its sums inside the library:
        raising here would leave them waiting.  Every rank ends, with one
        line naming this one."""
        import sys
        msg = ffi.string(lib.strata_last_error()).decode(errors="replace")
        if self._exc is not None:
            msg = "%s: %s (the integrand raised; %s)" % (type(self._exc).__name__, self._exc,
                                                         msg)
        sys.stderr.write("strata: rank %d: %s; ending every rank\n" % (self._comm.Get_rank(),
                                                                       msg))
        sys.stderr.flush()
        self._comm.Abort(rc)

    def stop(self):
        """Asks the run in progress in this process, whichever Integrator's
        it is, to stop after its current iteration (the library's
        strata_request_stop): with a checkpoint where the run has one, and
        on MPI ranks every rank stops.  Safe from a signal handler and from
        another thread.  A request made while no run is in progress stops
        the next one after its first iteration."""
        global _stop_asked
        _stop_asked = True
        lib.strata_request_stop()

    def integrate(self, progress=None):
        """Runs to the end (strata_integrator_run): resumes, logs and
        checkpoints as the settings say, calling ``progress(iteration)``
        after each iteration (a resumed run's restored iterations first).
        A true return value, or stop(), ends the run there; on MPI ranks any
        rank's ends every rank's.  An exception in ``progress`` ends the run
        too (with its checkpoint) and is raised when the run has returned;
        the other ranks raise StrataError naming the rank.  Returns the
        :class:`Result`, whose ``stopped`` says whether the run was ended
        early."""
        global _stop_asked
        c = self._alive()
        if lib.strata_integrator_finished(c):
            raise StrataError(lib.STRATA_EINVAL, "the run is finished (after %d iterations): "
                              "integ(f, nitn=..., neval=...) goes on from its map, and r.summary() "
                              "shows its result" % len(self._rows))
        run = _Run(self, progress)
        res = ffi.new("strata_result *")
        _escaped.exc = None
        rc = lib.strata_integrator_run(c, lib.strata_py_progress, ffi.new_handle(run), res)
        _stop_asked = False
        run.exc = run.exc or _escaped.exc
        _escaped.exc = None
        peers = self._comm is not None and self._comm.Get_size() > 1
        if rc != lib.STRATA_OK:
            # Errors of files, settings and the state are every rank's; one
            # rank's iteration or memory failing is that rank's alone, and
            # the others wait for it: the library says which.
            if peers and not lib.strata_integrator_error_shared(c):
                self._abort(rc)
            cause = StrataError(rc, ffi.string(lib.strata_last_error()).decode(
                errors="replace"))
            e, self._exc = self._exc, None
            if e is not None:  # the integrand's, as in step()
                raise e from None
            if run.exc is not None:
                raise run.exc from cause
            raise cause
        if peers:
            from mpi4py import MPI
            size = self._comm.Get_size()
            first = self._comm.allreduce(self._comm.Get_rank() if run.exc else size,
                                         op=MPI.MIN)
            if first < size and run.exc is None:
                raise StrataError(lib.STRATA_ECOMM, "rank %d: the progress function raised on "
                                  "rank %d, which stopped the run after iteration %d"
                                  % (self._comm.Get_rank(), first, res.iterations))
        e = self._exc or run.exc
        self._exc = None
        if e is not None:
            raise e
        return self._make_result(res, bool(lib.strata_integrator_stopped(c)))

    def _make_result(self, res, stopped):
        return Result(res, self._rows, self.backend, stopped, self._layout, self._params.seed,
                      self._components() if res.ncomp > 1 else None)

    def _components(self):
        """Every component's mean, sdev, chi2_dof, Q and the covariance
        (strata_integrator_components)."""
        n = self._ncomp
        out = [np.empty(n) for _ in range(4)] + [np.empty((n, n))]
        check(lib.strata_integrator_components(
            self._c, *(ffi.cast("double *", ffi.from_buffer(a)) for a in out)))
        return out

    def __call__(self, f=None, *, save=None, saveall=None, progress=None, **kw):
        """Integrates ``f`` as vegas's Integrator does: ``nitn`` iterations
        of ``neval`` evaluations each, all adapting (``adapt=False``: the
        map as it is), all averaged, ending early only where ``rtol`` or
        ``atol`` is met.  Each call goes on from the map and allocation the
        calls before it trained (warm-up calls, then the real ones), and its
        result averages its own iterations only.  Keywords given here stay
        for later calls, as vegas's do; strata's own (``neval``, ``alpha``,
        ``mode``, ...) are taken too.  A plain function is called with one
        point at a time (``x[d]``) when the Integrator was made from limits,
        as vegas's are; one marked by :func:`strata_mc.lbatchintegrand` or
        :func:`strata_mc.rbatchintegrand` with a batch.  ``save`` (a path or a
        file) receives the result pickled after each iteration,
        ``saveall`` the pair (result, integrator); ``analyzer`` (a keyword
        that stays, such as :class:`strata_mc.reporter`) has ``begin(itn,
        integrator)`` called before each iteration and ``end(itn_result,
        result)`` after it, as vegas's; ``progress`` is integrate()'s.
        Returns the :class:`Result`."""
        self.set(**kw)
        kept = [k for k in ("log", "checkpoint") if self._options.get(k)]
        if kept:
            raise TypeError("integ(f, ...) runs a new part of the work each call: %s= keeps "
                            "one run (call integrate()); save= and saveall= keep a call's "
                            "results" % kept[0])
        if f is None:
            f = self._f
        if f is None:
            raise TypeError("integ(f, ...): no integrand")
        params = self._call_params()
        saved = dict(self.__dict__)
        prev = self._c
        try:
            self._rows = []
            self._open(f, params, "lbatch" if self._f is not None else "scalar")
            if prev is not None:
                check(lib.strata_integrator_start_from(self._c, prev))
            elif self._start is not None:
                check(lib.strata_integrator_set_map(
                    self._c, self._start.shape[0], self._start.shape[1] - 1,
                    ffi.cast("double *", ffi.from_buffer(self._start))))
        except BaseException:
            if self._c is not prev:
                lib.strata_integrator_free(self._c)
            self.__dict__.update(saved)
            raise
        if prev is not None:
            lib.strata_integrator_free(prev)
        self._start = None
        del saved
        self._calls += 1
        analyzer = self._vegas.get("analyzer")
        if save is None and saveall is None and analyzer is None:
            return self.integrate(progress)

        def keep(it):
            stop = progress is not None and progress(it)
            r = self._result()
            _pickle_to(save, r)
            _pickle_to(saveall, (r, self))
            if analyzer is not None:
                analyzer.end(r.itn_results[-1], r)
                if not stop and not lib.strata_integrator_finished(self._c):
                    analyzer.begin(it.itn, self)
            return stop
        if analyzer is not None:
            analyzer.begin(0, self)
        return self.integrate(keep)

    def set(self, ka=None, **kw):
        """Sets keywords for the calls to come, as vegas's set() does
        (vegas's and strata's parameters, as keywords or a dict); returns
        the old values, which set() takes back."""
        old = {}
        for k, v in dict(ka or {}, **kw).items():
            if k in VEGAS or k in _VEGAS_UNUSED:
                if k != "mpi":  # the peers are the Integrator's
                    old[k] = self._vegas.get(k, _VEGAS_DEFAULTS.get(k))
                    self._vegas[k] = v
            elif k in _VEGAS_REFUSED:
                raise TypeError("integ(f, ...): vegas's keyword %r has no equivalent in strata: "
                                "%s" % (k, _VEGAS_REFUSED[k]))
            elif k in SETTINGS:
                raise TypeError("integ(f, ...): %s= belongs to one run: give it to the "
                                "Integrator and call integrate()" % k)
            elif k in PARAMS:
                old[k] = self._options.get(k)
                if k == "seed" and v is None:
                    v = _fresh_seed(self._comm)
                if v is None:  # back to the default
                    self._options.pop(k, None)
                else:
                    self._options[k] = v
            else:
                raise TypeError("integ(f, ...): unknown keyword %r (vegas's: %s; strata's: %s)"
                                % (k, ", ".join(VEGAS + ("neval", "alpha", "beta")),
                                   ", ".join(PARAMS)))
        return old

    def _call_params(self):
        """The parameters of the next call's part: vegas's meaning of its
        keywords, and vegas's defaults where neither it nor strata's
        keywords say otherwise."""
        v = dict(_VEGAS_DEFAULTS, **self._vegas)
        p = {k: val for k, val in self._options.items() if k in PARAMS or k in SETTINGS}
        nitn = v["nitn"]
        if isinstance(nitn, bool) or not isinstance(nitn, numbers.Real) or not (
                math.isfinite(nitn) and nitn == int(nitn) and nitn >= 1):
            raise StrataError(lib.STRATA_EINVAL, "nitn = %r: must be a whole number, 1 or more"
                              % (nitn,))
        if "nitn" in self._vegas or "maxiter" not in p:
            p["maxiter"] = int(nitn)
        p.setdefault("neval", v["neval"])
        p.setdefault("skip", 0)
        p.setdefault("maxeval", 2 ** 62)
        for vk, k in (("rtol", "epsrel"), ("atol", "epsabs")):
            if vk in self._vegas or k not in p:
                p[k] = v[vk]
        if not v["adapt"]:
            p["adapt_iters"] = 0
        elif "adapt_iters" not in p or "adapt" in self._vegas:
            p["adapt_iters"] = p["maxiter"]
        for vk, k in (("maxinc_axis", "ninc"), ("nproc", "threads")):
            if vk in self._vegas:
                p[k] = 0 if self._vegas[vk] is None else self._vegas[vk]
        p["seed"] = _call_seed(int(p.get("seed", 1)), self._calls)
        return p

    def _result(self, stopped=False):
        res = ffi.new("strata_result *")
        check(lib.strata_integrator_result(self._alive(), res))
        return self._make_result(res, stopped)

    @property
    def result(self):
        """The :class:`Result` so far."""
        return self._result()

    @property
    def iterations(self):
        """The iterations so far (restored ones included), as a list."""
        return list(self._rows)

    # ---- the map ---------------------------------------------------------------------
    @property
    def map(self):
        """The trained map: an array (naxes, ninc + 1) of edges in the unit
        cube, axis by axis (naxes is dim, or 1 for vegas1d)."""
        if self._c is None and self._start is not None:
            return self._start.copy()
        naxes, ninc = ffi.new("int *"), ffi.new("int *")
        check(lib.strata_integrator_map(self._alive(), naxes, ninc, ffi.NULL))
        edges = np.empty((naxes[0], ninc[0] + 1))
        check(lib.strata_integrator_map(self._c, naxes, ninc,
                                        ffi.cast("double *", ffi.from_buffer(edges))))
        return edges

    def set_map(self, edges):
        """Starts this run (before its first iteration) from a map, such as
        another run's ``map``; one of another ninc is rebinned."""
        e = np.ascontiguousarray(edges, dtype=np.float64)
        if e.ndim != 2:
            raise StrataError(lib.STRATA_EINVAL, "set_map: edges must be (naxes, ninc + 1)")
        if self._c is None and not getattr(self, "_closed", False):
            self._start = e.copy()  # the first call starts from it
            return
        check(lib.strata_integrator_set_map(self._alive(), e.shape[0], e.shape[1] - 1,
                                            ffi.cast("double *", ffi.from_buffer(e))))

    # ---- state: checkpoints and pickling ---------------------------------------------
    def save(self, path):
        """Writes the whole state to an HDF5 checkpoint at ``path``,
        atomically (doc/file-formats.md); with MPI peers rank 0 writes."""
        check(lib.strata_integrator_save(self._alive(), os.fsencode(path)))

    def load(self, path):
        """Continues from the checkpoint at ``path``, written by save() or by
        `strata run` of the same integral and parameters: the continued run
        equals the uninterrupted one bit for bit.  A checkpoint of another
        problem is refused (StrataError naming the first key that differs)
        and the integrator left as it was."""
        restored = []
        h = ffi.new_handle(restored)
        check(lib.strata_integrator_load(self._alive(), os.fsencode(path),
                                         lib.strata_py_restored, h))
        self._rows = restored

    def state(self):
        """The whole state as bytes (the checkpoint's file image)."""
        buf, n = ffi.new("void **"), ffi.new("size_t *")
        check(lib.strata_integrator_save_buffer(self._alive(), buf, n))
        try:
            return bytes(ffi.buffer(buf[0], n[0]))
        finally:
            lib.free(buf[0])

    def load_state(self, data):
        """Continues from bytes of state()."""
        restored = []
        h = ffi.new_handle(restored)
        b = ffi.from_buffer(data)
        check(lib.strata_integrator_load_buffer(self._alive(), b, len(b),
                                                lib.strata_py_restored, h))
        self._rows = restored

    def __reduce__(self):
        if self._comm is not None:
            raise TypeError("an Integrator with MPI peers does not pickle: save() a "
                            "checkpoint and load() it on every rank")
        if self._calls == 0 and self._f is not None:
            return (_restore, (self._f, self._limits, self._options, self.state()))
        # After calls integ(f, ...), as vegas: the limits, the keywords and the map.
        edges = self.map if self._c is not None or self._start is not None else None
        return (_restore_calls, (self._f, self._limits, dict(self._options, **self._vegas),
                                 self._calls, edges))

    # ---- life ------------------------------------------------------------------------
    def close(self):
        """Frees the library's state now (the garbage collector does it
        otherwise); with MPI peers, collectively on every rank."""
        if getattr(self, "_c", None) is not None:
            lib.strata_integrator_free(self._c)
            self._c = None
        self._closed = True
        if getattr(self, "_peers", None) is not None:
            if not _mpi_finalized():
                lib.strata_comm_free(self._peers)
            self._peers = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _pickle_to(where, obj):
    """vegas's save= and saveall=: a path, replaced atomically, or a file."""
    import pickle
    if where is None:
        return
    if hasattr(where, "write"):
        pickle.dump(obj, where)
        return
    tmp = "%s.tmp%d" % (where, os.getpid())
    with open(tmp, "wb") as out:
        pickle.dump(obj, out)
    os.replace(tmp, where)


def _restore(f, box, options, state):
    opts = {k: v for k, v in options.items() if k not in _FILE_SETTINGS}
    s = Integrator(f, box, **opts)
    s.load_state(state)
    return s


def _restore_calls(f, limits, options, calls, edges):
    opts = {k: v for k, v in options.items() if k not in _FILE_SETTINGS}
    s = Integrator(limits, **opts) if f is None else Integrator(f, limits, **opts)
    if edges is not None:
        s.set_map(edges)
    s._calls = calls
    return s


@ffi.def_extern()
def strata_py_batch(n, x, dim, user, out):
    ffi.from_handle(user)()._batch(n, x, dim, out)


@ffi.def_extern()
def strata_py_restored(it, ctx):
    ffi.from_handle(ctx).append(Iteration._from_c(ffi, it))


# An exception of the progress callback that cffi's onerror could not give
# to its run: integrate() of this thread raises it.
_escaped = threading.local()


class _Run:
    """One integrate() call, for its progress callback from C."""

    def __init__(self, integ, progress):
        self.integ = integ
        self.progress = progress
        self.exc = None

    def record(self, it):
        row = Iteration._from_c(ffi, it)
        rows = self.integ._rows
        while rows and rows[-1].itn >= row.itn:  # a resume's restored rows come first
            rows.pop()
        rows.append(row)
        return row

    def iteration(self, it):
        # Nothing may cross back into C: an exception stops the run, and
        # integrate() raises it once the library has returned.
        global _stop_asked
        try:
            row = self.record(it)
            if self.exc is not None:
                return 1
            stop = self.progress is not None and bool(self.progress(row))
            if _stop_asked:
                _stop_asked, stop = False, True
            return int(stop)
        except BaseException as e:  # noqa: B036 - raised by integrate()
            self.failed(it, e)
            return 1

    def failed(self, it, e):
        if self.exc is None:
            self.exc = e
        rows = self.integ._rows
        if not rows or rows[-1].itn != it.itn:  # the row the checkpoint holds is kept
            try:
                self.record(it)
            except BaseException:  # noqa: B036 - a second signal: the first one wins
                pass


def _progress_failed(exc_type, exc, tb):
    """cffi's onerror: an exception before iteration()'s try (a signal's
    KeyboardInterrupt as the callback begins) stops the run as well."""
    try:
        loc = tb.tb_frame.f_locals
        ffi.from_handle(loc["ctx"]).failed(loc["it"], exc)
    except BaseException:  # noqa: B036 - no frame: integrate() finds it here
        if getattr(_escaped, "exc", None) is None:
            _escaped.exc = exc
    return 1


@ffi.def_extern(onerror=_progress_failed)
def strata_py_progress(it, ctx):
    return ffi.from_handle(ctx).iteration(it)


# ---- MPI ----------------------------------------------------------------------------
def _peers_of(comm):
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("comm= needs mpi4py (pip install mpi4py, or Debian's "
                          "python3-mpi4py)") from e
    try:
        from . import _mpi
    except ImportError as e:
        raise StrataError(lib.STRATA_ECOMM, "this strata binding was built without MPI (no "
                          "strata/strata_mpi.h or no MPI compiler when it was installed)") from e
    out = ffi.new("strata_comm **")
    check(_mpi.lib.strata_py_comm_mpi(MPI._addressof(comm), out))
    return out[0]


def _mpi_finalized():
    try:
        from mpi4py import MPI
    except ImportError:
        return False
    return MPI.Is_finalized()


def integrate(f, box, progress=None, **kw):
    """One call: ``Integrator(f, box, **kw).integrate(progress)``."""
    with Integrator(f, box, **kw) as s:
        return s.integrate(progress)
