"""A run's iterations and result as Python objects: what `strata run`
prints, as values."""
import math
import re
import time

import numpy as np

from .errors import check

#: The columns of an iteration table, the order of the log's /iterations.
COLUMNS = ("itn", "integral", "sigma", "average", "average_sigma", "chi2_dof", "Q", "neval",
           "wall_s", "kept", "restarted", "adapting")
#: The peak search's view of an iteration (the log's /iterations_peaks):
#: the Pareto k-hat of its weights (NaN where not judged) and the channels
#: it drew from (1: the map alone).
PEAK_COLUMNS = ("khat", "nchannels")
#: The most components whose iterations keep their covariances
#: (STRATA_MAX_COMP); beyond it a row holds the six statistics only.
MAX_COV_COMP = 8


def comp_columns(ncomp):
    """The names of a row of a vector integrand's per-component table
    (strata_iteration.comp, the log's /iterations_comp): six statistics,
    then, up to :data:`MAX_COV_COMP` components, this iteration's
    covariance with each component and the averages' covariance with each."""
    stats = ["integral", "sigma", "average", "average_sigma", "chi2_dof", "Q"]
    if ncomp > MAX_COV_COMP:
        return stats
    return (stats + ["cov_%d" % b for b in range(ncomp)]
            + ["average_cov_%d" % b for b in range(ncomp)])


def format_value_error(value, err):
    """``value(err)`` with two digits of the error, as the program's table
    prints it (strata_report_value_error)."""
    from ._lib import ffi, lib
    buf = ffi.new("char[]", 64)
    lib.strata_report_value_error(buf, len(buf), float(value), float(err))
    return ffi.string(buf).decode()


class Iteration:
    """One iteration, as the library reports it after combining it:
    ``itn`` (from 1), this iteration's ``integral`` and ``sigma``,
    ``neval``, the weighted ``average`` of the kept iterations so far with
    ``average_sigma``, ``chi2_dof`` and ``Q`` (NaN while no iteration is
    kept, where the table prints ``-``), ``kept``, ``restarted``,
    ``adapting``, ``wall_s``, the peak search's ``khat`` (NaN where not
    judged and in the warm-up) and ``nchannels``; for a vector integrand
    ``comp``, an array (ncomp, columns) whose columns are
    :func:`comp_columns` (beyond :data:`MAX_COV_COMP` components the six
    statistics, without the covariances, as the log keeps them: ncomp²
    doubles an iteration would be 8 MB at 1000).  The scalar fields are component 0's."""

    __slots__ = COLUMNS + PEAK_COLUMNS + ("comp",)

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    @classmethod
    def _from_c(cls, ffi, it):
        kept = bool(it.kept)
        nan = float("nan")
        comp = None
        if it.ncomp > 1 and it.comp != ffi.NULL:
            # Copied now: beyond STRATA_MAX_COMP components the library's
            # rows last only until its next iteration.
            w = 6 + 2 * it.ncomp
            comp = np.frombuffer(ffi.buffer(it.comp, 8 * it.ncomp * w),
                                 dtype=np.float64).reshape(it.ncomp, w)
            comp = comp[:, :len(comp_columns(it.ncomp))].copy()
            if not kept:
                comp[:, 2:6] = nan
        return cls(itn=it.itn, integral=it.integral, sigma=it.sigma,
                   average=it.avg if kept else nan, average_sigma=it.avg_sigma if kept else nan,
                   chi2_dof=it.chi2_dof if kept else nan, Q=it.q if kept else nan,
                   neval=it.neval, wall_s=it.time_s, kept=kept, restarted=bool(it.restarted),
                   adapting=bool(it.adapting), khat=it.khat, nchannels=int(it.nchannels),
                   comp=comp)

    def __repr__(self):
        return "Iteration(itn=%d, integral=%r, sigma=%r, average=%r, kept=%s)" % (
            self.itn, self.integral, self.sigma, self.average, self.kept)

    def _to_c(self, ffi, it, keep):
        """Fills the strata_iteration it; keep holds the comp rows' memory."""
        it.itn, it.integral, it.sigma, it.neval = self.itn, self.integral, self.sigma, self.neval
        it.kept, it.restarted, it.adapting = self.kept, self.restarted, self.adapting
        it.avg, it.avg_sigma, it.chi2_dof, it.q = (self.average, self.average_sigma,
                                                   self.chi2_dof, self.Q)
        it.time_s = self.wall_s
        khat = getattr(self, "khat", None)
        nchannels = getattr(self, "nchannels", None)
        it.khat = math.nan if khat is None else khat
        it.nchannels = 1 if nchannels is None else nchannels
        it.ncomp = 1
        if self.comp is not None:
            # The library's rows are 6 + 2 ncomp wide; its table reads the
            # first MAX_COV_COMP, so only those are laid out.
            n, have = self.comp.shape
            rows = np.zeros((min(n, MAX_COV_COMP), 6 + 2 * n))
            rows[:, :have] = self.comp[:len(rows)]
            keep.append(ffi.new("double[]", rows.size))
            ffi.memmove(keep[-1], rows.tobytes(), 8 * rows.size)
            it.ncomp, it.comp = n, keep[-1]


def table_frame(iterations):
    """A list of Iterations as a pandas DataFrame: one row per iteration,
    indexed by ``itn``, the other columns of :data:`COLUMNS`; a vector
    integrand's per-component values as columns ``(name, c)`` of a second
    frame, ``frame.attrs["comp"]`` (see :func:`strata_mc.log.comp_frame`)."""
    import pandas as pd
    df = pd.DataFrame({k: [getattr(it, k) for it in iterations] for k in COLUMNS})
    df = df.astype({"itn": "int32", "neval": "int64", "kept": bool, "restarted": bool,
                    "adapting": bool})
    return df.set_index("itn")


class Result:
    """What a run gives: the weighted average of its kept iterations.

    ``mean``, ``sdev``, ``chi2_dof``, ``Q``: floats for a scalar integrand,
    arrays of ``ncomp`` for a vector one, whose ``cov`` is the covariance
    of the components' averages.  ``neval`` (all iterations), ``nitn``,
    ``converged`` (None when no tolerance was set), ``lost`` with
    ``lost_z`` (doc/algorithm.md, "A lost peak"), ``neval_needed``,
    ``time_s``, ``backend``, ``stopped`` (a progress callback or a stop
    request ended the run), ``iterations`` (a list of :class:`Iteration`),
    ``table()`` (a pandas DataFrame of them), ``summary()`` (the program's
    table and summary), ``gvar`` (with the gvar package), ``seed``.

    The peak search (doc/peaks.md, "What is reported"): ``peaks_searched``;
    ``modes``, a list of :class:`Mode` (location ``x`` in the integrand's
    coordinates, ``logf``, its channel's balance-heuristic ``share`` of the
    integral, channel ``weight``, ``known``); ``nchannels`` and
    ``channel_weights`` (the map's, each mode channel's, the uniform
    part's, as the last adaptation set them: they add up to 1; ``[1.0]``
    for the map alone);
    ``khat`` (the largest of the kept iterations', None where not judged)
    with ``khat_itn`` and ``khat_limit``; ``search_evals``; the gate's
    ``peaks_held``, ``peaks_reason`` (one line, None where it has nothing
    to say) and ``peaks_neval`` (the evaluations per iteration that give
    every channel its points, None where that is not the matter).

    vegas's names too: ``itn_results``, ``sum_neval``, ``avg_neval``,
    ``chi2``, ``dof``; for an integrand whose values are an array or a
    dict, ``mean`` and ``sdev`` have its shape or keys and ``r[key]`` is a
    component (gvar values where gvar is installed, else
    :class:`Estimate`); a scalar result does gvar's arithmetic."""

    def __init__(self, res, iterations, backend, stopped, layout=None, seed=None, comps=None):
        from ._lib import ffi
        # The library's own result, as bytes (a Result pickles), for summary().
        self._c_result = bytes(ffi.buffer(res))
        self.ncomp = max(1, res.ncomp)
        if self.ncomp == 1:
            self.mean, self.sdev = res.integral, res.sigma
            self.chi2_dof, self.Q = res.chi2_dof, res.q
            self.cov = np.array([[res.sigma ** 2]])
        else:
            # Every component's (strata_integrator_components): the library's
            # result holds the first STRATA_MAX_COMP only.
            self.mean, self.sdev, self.chi2_dof, self.Q, self.cov = comps
        self.neval = int(res.neval)
        self.nitn = int(res.iterations)
        self.no_target = bool(res.no_target)
        self.converged = None if self.no_target else bool(res.converged)
        self.lost = bool(res.lost)
        self.lost_z = res.lost_z if self.lost else None
        self.lost_itn = res.lost_itn if self.lost else None
        self.lost_integral = res.lost_integral if self.lost else None
        self.lost_sigma = res.lost_sigma if self.lost else None
        self.neval_needed = res.neval_needed if res.neval_needed > 0 else None
        self._peaks_from(res)
        self.nhcube = int(res.nhcube)
        self.time_s = res.time_s
        self.comm_time_s = res.comm_time_s
        self.backend = backend
        self.stopped = stopped
        self.iterations = list(iterations)
        #: The seed the run drew its points with (seed=None: the one drawn for it).
        self.seed = seed
        # The integrand's structure (forms.Layout), None for the native (n,) or (n, ncomp).
        self._layout = layout
        if layout is not None and not (layout.shape is not None and len(layout.shape) <= 1):
            self.mean, self.sdev = layout.format(self.mean), layout.format(self.sdev)

    def _peaks_from(self, res):
        from ._lib import ffi
        searched = self.peaks_searched = bool(res.peaks_searched)
        held = min(max(res.nmodes, 0), len(res.modes))
        self.modes = [Mode(x=np.array([res.modes[j].x[d] for d in range(res.dim)]),
                           logf=res.modes[j].logf, share=res.modes[j].share,
                           weight=res.modes[j].weight, known=bool(res.modes[j].known))
                      for j in range(held)] if searched else []
        self.nchannels = int(res.nchannels)
        if searched and res.nchannels > 1:
            self.channel_weights = ([res.alpha_map] + [m.weight for m in self.modes if m.weight > 0]
                                    + [res.alpha_uniform])
        else:
            self.channel_weights = [1.0]
        judged = searched and math.isfinite(res.khat)
        self.khat = res.khat if judged else None
        self.khat_itn = int(res.khat_itn) if judged else None
        self.khat_limit = res.khat_limit if searched and math.isfinite(res.khat_limit) else None
        self.search_evals = int(res.search_evals)
        self.peaks_held = bool(res.peaks_held)
        reason = ffi.string(res.peaks_reason, len(res.peaks_reason)).decode(errors="replace")
        self.peaks_reason = reason or None
        self.peaks_neval = res.peaks_neval if res.peaks_neval > 0 else None

    @property
    def gvar(self):
        """The result as a gvar.GVar (an array of them, correlated, for a
        vector integrand; a gvar.BufferDict for a dict integrand); needs
        the gvar package."""
        g = self.__dict__.get("_gv")
        if g is None:  # made once, so that r / r is exactly 1 as with gvar's own values
            g = self._gv = _gvars(self._flat_mean(), self.cov, self._layout)
        return g

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_gv"}

    def _flat_mean(self):
        return np.array([self.mean]).ravel() if self._layout is None else np.concatenate(
            [np.ravel(v) for v in (self.mean.values() if isinstance(self.mean, dict)
                                   else [self.mean])])

    # ---- vegas's names (its RAvg, RAvgArray, RAvgDict) --------------------------------
    @property
    def itn_results(self):
        """Each iteration's estimate, as gvar values in the integrand's
        structure (without gvar: :class:`Estimate` objects)."""
        out = []
        for it in self.iterations:
            if it.comp is None:
                mean, cov = np.array([it.integral]), np.array([[it.sigma ** 2]])
            elif it.comp.shape[1] == 6:  # no covariances kept (MAX_COV_COMP)
                mean, cov = it.comp[:, 0], np.diag(it.comp[:, 1] ** 2)
            else:
                n = it.comp.shape[0]
                mean, cov = it.comp[:, 0], it.comp[:, 6:6 + n]
            out.append(_gvars(mean, cov, self._layout, need=False))
        return out

    @property
    def sum_neval(self):
        """The evaluations of all iterations (``neval``)."""
        return self.neval

    @property
    def avg_neval(self):
        return self.neval / self.nitn if self.nitn else 0

    @property
    def dof(self):
        """The degrees of freedom of chi2: the iterations in the average, less one."""
        n = 0
        for it in self.iterations:
            n = 1 if it.restarted else n + int(it.kept)
        return max(n - 1, 0)

    @property
    def chi2(self):
        """chi2 of the average (per component for a vector integrand)."""
        return np.nan_to_num(self.chi2_dof) * self.dof

    weighted = True

    def __getitem__(self, key):
        return self._values()[key]

    # keys(), items() and values() only where the values are a dict, so
    # that hasattr(r, "keys") tells a dict result, as gvar asks.
    @property
    def keys(self):
        return self._dict().keys

    @property
    def items(self):
        return self._dict().items

    @property
    def values(self):
        return self._dict().values

    def _dict(self):
        if not isinstance(self.mean, dict):
            raise AttributeError("the result is not a dict: the integrand's values are not")
        return self._values()

    def __len__(self):
        return len(self._values())

    def __bool__(self):
        return True

    def __iter__(self):
        v = self._values()
        return iter(v.keys() if isinstance(v, dict) else v)

    @property
    def shape(self):
        return np.shape(self.mean) if not isinstance(self.mean, dict) else None

    def _values(self):
        """The components in the integrand's structure, as gvar values
        where gvar is installed, else as Estimates."""
        if self.ncomp == 1 and (self._layout is None or self._layout.scalar):
            raise TypeError("a scalar result has no items")
        try:
            return self.gvar
        except ImportError:
            return _gvars(self._flat_mean(), self.cov, self._layout, need=False)

    # gvar's arithmetic on a scalar result: r / 2, r1 - r2, ...
    def _g(self):
        if self.ncomp != 1:
            raise TypeError("arithmetic on a vector result: take its components (r[key]) or "
                            "r.gvar")
        return self.gvar

    def __neg__(self):
        return -self._g()

    def __pos__(self):
        return self._g()

    def __abs__(self):
        return abs(self._g())

    def table(self):
        """The iterations as a pandas DataFrame indexed by ``itn`` (the
        other columns of :data:`COLUMNS`)."""
        return table_frame(self.iterations)

    def __str__(self):
        if isinstance(self.mean, dict):
            return "{" + ", ".join("%r: %s" % (k, _text(self.mean[k], self.sdev[k]))
                                   for k in self.mean) + "}"
        return _text(self.mean, self.sdev)

    def __repr__(self):
        return "Result(%s, chi2_dof=%s, Q=%s, nitn=%d, neval=%d)" % (
            self, np.round(self.chi2_dof, 3), np.round(self.Q, 3), self.nitn, self.neval)

    def summary(self, exact=None):
        """The iteration table and the summary, as `strata run` prints
        them (with ``exact``, the deviation from it): the library's own
        strata_report_text."""
        from ._lib import ffi, lib
        res = ffi.new("strata_result *")
        ffi.memmove(res, self._c_result, min(len(self._c_result), ffi.sizeof("strata_result")))
        its = ffi.new("strata_iteration[]", len(self.iterations))
        keep = []
        for k, it in enumerate(self.iterations):
            it._to_c(ffi, its[k], keep)
        text = ffi.new("char **")
        check(lib.strata_report_text(its, len(self.iterations), res,
                                     math.nan if exact is None else float(exact), text))
        try:
            out = ffi.string(text[0]).decode()
        finally:
            lib.free(text[0])
        out = out[:-1] if out.endswith("\n") else out
        return _named(out, self._layout)


class Mode:
    """A mode the peak search found: its location ``x`` (an array in the
    integrand's coordinates), ``logf`` (log |f| there), ``share`` (its
    channel's balance-heuristic share of the last iteration's estimate,
    doc/peaks.md; NaN with no channel, where its part is the map's),
    ``weight`` (its channel's weight; 0 with none), ``known`` (found from
    a point of known_peaks)."""

    __slots__ = ("x", "logf", "share", "weight", "known")

    def __init__(self, x, logf, share, weight, known):
        self.x, self.logf, self.share, self.weight, self.known = x, logf, share, weight, known

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)

    def __repr__(self):
        return "Mode(x=%s, logf=%.6g, share=%.3g, weight=%.3g%s)" % (
            np.array2string(self.x, precision=4), self.logf, self.share, self.weight,
            ", known=True" if self.known else "")


def _named(text, layout):
    """The summary's result[c] lines named as the integrand's values are:
    result['I'], result['x'][1], result[0, 1]."""
    if layout is None or (layout.keys is None and len(layout.shape) <= 1):
        return text
    if layout.keys is None:
        names = ["[%s]" % ", ".join(map(str, i)) for i in np.ndindex(layout.shape)]
    else:
        names = ["[%r]" % (k,) + ("[%s]" % ", ".join(map(str, i)) if s != () else "")
                 for k, s in layout.keys for i in np.ndindex(s)]
    width = max(len(n) for n in names) + len("result")

    def name(m):
        return ("result" + names[int(m.group(1))]).ljust(width) + " ="
    return re.sub(r"^result\[(\d+)\] *=", name, text, flags=re.M)


def _binary(name):
    def op(self, other):
        if isinstance(other, Result):
            other = other._g()
        return getattr(self._g(), name)(other)
    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "pow"):
    setattr(Result, "__%s__" % _name, _binary("__%s__" % _name))
    setattr(Result, "__r%s__" % _name, _binary("__r%s__" % _name))


def _text(mean, sdev):
    if np.ndim(mean) == 0:
        return format_value_error(mean, sdev)
    return "[" + ", ".join(format_value_error(m, s)
                           for m, s in zip(np.ravel(mean), np.ravel(sdev))) + "]"


class Estimate:
    """A value with its error where gvar is not installed: ``mean`` and
    ``sdev`` (arrays for an array of components, with their ``cov``)."""

    __slots__ = ("mean", "sdev", "cov")

    def __init__(self, mean, cov):
        self.mean = mean
        self.cov = cov
        self.sdev = np.sqrt(np.diagonal(cov)).reshape(np.shape(mean)) if np.ndim(cov) == 2 \
            else math.sqrt(cov)

    def __str__(self):
        return _text(self.mean, self.sdev)

    __repr__ = __str__


def _gvars(mean, cov, layout, need=True):
    """Components (mean, cov) in the layout's structure: correlated gvar
    values, or, without gvar and unless need, Estimates."""
    mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
    try:
        import gvar
    except ImportError as e:
        if need:
            raise ImportError("Result.gvar needs the gvar package (pip install gvar)") from e
        gvar = None
    if gvar is not None:
        g = gvar.gvar(mean, cov)
        if layout is None:
            return g[0] if g.size == 1 else g
        if layout.keys is None:
            return g.reshape(layout.shape) if layout.shape else g[0]
        out, at = gvar.BufferDict(), 0
        for k, s in layout.keys:
            n = int(np.prod(s, dtype=int))
            out[k] = g[at:at + n].reshape(s) if s != () else g[at]
            at += n
        return out
    if layout is None:
        if mean.size == 1:
            return Estimate(float(mean[0]), float(cov[0, 0]))
        return [Estimate(float(m), float(cov[i, i])) for i, m in enumerate(mean)]
    if layout.keys is None and layout.shape == ():
        return Estimate(float(mean[0]), float(cov[0, 0]))
    if layout.keys is None:
        return Estimate(mean.reshape(layout.shape), cov)
    out, at = {}, 0
    for k, s in layout.keys:
        n = int(np.prod(s, dtype=int))
        sl = slice(at, at + n)
        out[k] = (Estimate(float(mean[at]), float(cov[at, at])) if s == ()
                  else Estimate(mean[sl].reshape(s), cov[sl, sl]))
        at += n
    return out


class reporter:
    """vegas's analyzer that prints each iteration as it ends
    (``analyzer=strata_mc.reporter()``): its estimate, the average so far,
    chi2/dof, Q and its time."""

    def __init__(self, ngrid=0):
        self.ngrid = ngrid  # vegas's: map nodes to print; strata prints none

    def begin(self, itn, integrator):
        self.itn = itn
        self.t0 = time.perf_counter()

    def end(self, itn_result, result):
        it = result.iterations[-1]
        print("    itn %2d: %s\n all itn's: %s" % (self.itn + 1, itn_result, result))
        print("    neval = %d  chi2/dof = %.2f  Q = %.2f  time = %.2f\n"
              % (it.neval, np.ravel(np.nan_to_num(result.chi2_dof))[0],
                 np.ravel(np.nan_to_num(result.Q, nan=1.0))[0], time.perf_counter() - self.t0),
              flush=True)
