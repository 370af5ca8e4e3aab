"""A run's iterations and result as Python objects: what `strata run`
prints, as values."""
import math

import numpy as np

#: The columns of an iteration table, the order of the log's /iterations.
COLUMNS = ("itn", "integral", "sigma", "average", "average_sigma", "chi2_dof", "Q", "neval",
           "wall_s", "kept", "restarted", "adapting")


def comp_columns(ncomp):
    """The names of a row of a vector integrand's per-component table
    (strata_iteration.comp, the log's /iterations_comp): six statistics,
    then this iteration's covariance with each component, then the
    averages' covariance with each."""
    return (["integral", "sigma", "average", "average_sigma", "chi2_dof", "Q"]
            + ["cov_%d" % b for b in range(ncomp)]
            + ["average_cov_%d" % b for b in range(ncomp)])


def format_value_error(value, err):
    """``value(err)`` with two digits of the error, as the program's table
    prints it (src/stats.c, strata_format_value_error)."""
    unknown = math.isnan(err) or (err == 0.0 and value != 0.0
                                  and abs(value) < math.sqrt(2.2250738585072014e-308))
    if not math.isfinite(value) or (not math.isfinite(err) and not unknown) or err < 0.0:
        return "%.6g +- %.2g" % (value, err)
    if err == 0.0 or unknown:
        e0 = "?" if unknown else "0"
        if value == 0.0 or 1e-5 <= abs(value) < 1e9:
            return "%.15g(%s)" % (value, e0)
        ev = math.floor(math.log10(abs(value)))
        m = value / 10.0 ** ev
        if abs(m) >= 10.0:
            m /= 10.0
            ev += 1
        return "%.15g(%s)e%+03d" % (m, e0, ev)
    e = math.floor(math.log10(err))
    decimals = 1 - e
    mag = max(abs(value), err)
    if decimals < 0 or decimals > 15 or mag >= 1e9 or mag < 1e-5:
        ev = math.floor(math.log10(abs(value))) if value != 0.0 else e
        ev = max(ev, e)
        scale = 10.0 ** ev
        dec = min(ev - e + 1, 15)
        digits = _llround(err / scale * 10.0 ** dec)
        if digits >= 100 and dec > 0:
            dec -= 1
            digits = _llround(err / scale * 10.0 ** dec)
        digits = max(digits, 1)
        if abs(value / scale) + 0.5 * 10.0 ** -dec >= 10.0:
            ev += 1
            scale *= 10.0
            dec = min(ev - e + 1, 15)
            digits = _llround(err / scale * 10.0 ** dec)
        return "%.*f(%d)e%+03d" % (dec, value / scale, digits, ev)
    digits = _llround(err * 10.0 ** decimals)
    if digits >= 100 and decimals > 0:
        decimals -= 1
        digits = _llround(err * 10.0 ** decimals)
    return "%.*f(%d)" % (decimals, value, digits)


def _llround(v):
    """C's llround: halves away from zero (Python's round goes to even)."""
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def _stat2(v):
    return "-" if math.isnan(v) else "%.2f" % v


class Iteration:
    """One iteration, as the library reports it after combining it:
    ``itn`` (from 1), this iteration's ``integral`` and ``sigma``,
    ``neval``, the weighted ``average`` of the kept iterations so far with
    ``average_sigma``, ``chi2_dof`` and ``Q`` (NaN while no iteration is
    kept, where the table prints ``-``), ``kept``, ``restarted``,
    ``adapting``, ``wall_s``; for a vector integrand ``comp``, an
    (ncomp, 6 + 2 ncomp) array whose columns are :func:`comp_columns`.
    The scalar fields are component 0's."""

    __slots__ = COLUMNS + ("comp",)

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    @classmethod
    def _from_c(cls, ffi, it):
        kept = bool(it.kept)
        nan = float("nan")
        comp = None
        if it.ncomp > 1 and it.comp != ffi.NULL:
            w = 6 + 2 * it.ncomp
            comp = np.frombuffer(ffi.buffer(it.comp, 8 * it.ncomp * w),
                                 dtype=np.float64).reshape(it.ncomp, w).copy()
            if not kept:
                comp[:, 2:6] = nan
        return cls(itn=it.itn, integral=it.integral, sigma=it.sigma,
                   average=it.avg if kept else nan, average_sigma=it.avg_sigma if kept else nan,
                   chi2_dof=it.chi2_dof if kept else nan, Q=it.q if kept else nan,
                   neval=it.neval, wall_s=it.time_s, kept=kept, restarted=bool(it.restarted),
                   adapting=bool(it.adapting), comp=comp)

    def __repr__(self):
        return "Iteration(itn=%d, integral=%r, sigma=%r, average=%r, kept=%s)" % (
            self.itn, self.integral, self.sigma, self.average, self.kept)

    def lines(self):
        """The iteration's lines of the program's table."""
        if self.comp is None:
            return [_table_line("%3d   " % self.itn, self.kept, self.itn, self.integral,
                                self.sigma, self.average, self.average_sigma, self.chi2_dof,
                                self.Q, self.restarted)]
        out = []
        for c, row in enumerate(self.comp):
            lead = "%3d:%-2d" % (self.itn, c) if c == 0 else "   :%-2d" % c
            out.append(_table_line(lead, self.kept, self.itn, *row[:6],
                                   restarted=c == 0 and self.restarted))
        return out


def _table_line(lead, kept, itn, integral, sigma, avg, avg_sigma, chi2_dof, q, restarted):
    a = format_value_error(integral, sigma)
    if kept:
        return "%s%-20s  %-20s  %8s  %6s%s" % (lead, a, format_value_error(avg, avg_sigma),
                                             _stat2(chi2_dof), _stat2(q),
                                             "  restart" if restarted else "")
    return "%s%-20s  %-20s  %8s  %6s" % (
        lead, a, "(no information)" if itn > 0 and sigma == 0.0 else "(warm-up)", "-", "-")


def table_frame(iterations):
    """A list of Iterations as a pandas DataFrame: one row per iteration,
    the columns of :data:`COLUMNS`, indexed by ``itn``; a vector
    integrand's per-component values as columns ``(name, c)`` of a second
    frame, ``frame.attrs["comp"]`` (see :func:`strata.log.comp_frame`)."""
    import pandas as pd
    df = pd.DataFrame({k: [getattr(it, k) for it in iterations] for k in COLUMNS})
    df = df.astype({"itn": "int32", "neval": "int64", "kept": bool, "restarted": bool,
                    "adapting": bool})
    return df.set_index("itn", drop=False)


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
    table and summary), ``gvar`` (with the gvar package)."""

    def __init__(self, res, iterations, backend, stopped):
        self.ncomp = max(1, res.ncomp)
        n = self.ncomp
        if n == 1:
            self.mean, self.sdev = res.integral, res.sigma
            self.chi2_dof, self.Q = res.chi2_dof, res.q
            self.cov = np.array([[res.sigma ** 2]])
        else:
            self.mean = np.array(list(res.comp_integral[0:n]))
            self.sdev = np.array(list(res.comp_sigma[0:n]))
            self.chi2_dof = np.array(list(res.comp_chi2_dof[0:n]))
            self.Q = np.array(list(res.comp_q[0:n]))
            self.cov = np.array(list(res.comp_cov[0:n * n])).reshape(n, n)
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
        self.nhcube = int(res.nhcube)
        self.time_s = res.time_s
        self.comm_time_s = res.comm_time_s
        self.backend = backend
        self.stopped = stopped
        self.iterations = list(iterations)

    @property
    def gvar(self):
        """The result as a gvar.GVar (an array of them, correlated, for a
        vector integrand); needs the gvar package."""
        try:
            import gvar
        except ImportError as e:
            raise ImportError("Result.gvar needs the gvar package (pip install gvar)") from e
        if self.ncomp == 1:
            return gvar.gvar(self.mean, self.sdev)
        return gvar.gvar(self.mean, self.cov)

    def table(self):
        """The iterations as a pandas DataFrame (columns :data:`COLUMNS`)."""
        return table_frame(self.iterations)

    def __str__(self):
        if self.ncomp == 1:
            return format_value_error(self.mean, self.sdev)
        return "[" + ", ".join(format_value_error(m, s)
                               for m, s in zip(self.mean, self.sdev)) + "]"

    def __repr__(self):
        return "Result(%s, chi2_dof=%s, Q=%s, nitn=%d, neval=%d)" % (
            self, np.round(self.chi2_dof, 3), np.round(self.Q, 3), self.nitn, self.neval)

    def summary(self, exact=None):
        """The iteration table and the summary, as `strata run` prints
        them (with ``exact``, the deviation from it)."""
        lines = ["itn   integral              wgt average           chi2/dof       Q",
                 "-" * 69]
        for it in self.iterations:
            lines += it.lines()
        lines.append("")
        if self.ncomp == 1:
            lines.append("result     = %s   (%.17g +- %.3g)" % (
                format_value_error(self.mean, self.sdev), self.mean, self.sdev))
            lines.append("chi2/dof   = %s   Q = %s" % (_stat2(self.chi2_dof), _stat2(self.Q)))
        else:
            for c in range(self.ncomp):
                lines.append("result[%d]  = %s   (%.17g +- %.3g)   chi2/dof = %s   Q = %s" % (
                    c, format_value_error(self.mean[c], self.sdev[c]), self.mean[c],
                    self.sdev[c], _stat2(self.chi2_dof[c]), _stat2(self.Q[c])))
            d = np.sqrt(np.diag(self.cov))
            with np.errstate(divide="ignore", invalid="ignore"):
                corr = self.cov / np.outer(d, d)
            rows = [" ".join("%7.4f" % v for v in r) for r in corr]
            lines.append("correlation =  " + ("\n" + " " * 15).join(rows))
        verdict = ("no target (epsrel = epsabs = 0)" if self.no_target
                   else "yes" if self.converged else "NO")
        lines.append("converged  = %s after %d iterations, %d evaluations, %.3f s" % (
            verdict, self.nitn, self.neval, self.time_s))
        if self.lost:
            lines.append("lost peak  = the iterations left out of the average read %.1f sigma "
                         "above it (iteration %d: %s): part of the integrand was likely "
                         "missed; not converged" % (self.lost_z, self.lost_itn, format_value_error(
                             self.lost_integral, self.lost_sigma)))
        if self.neval_needed and self.nitn > 0:
            lines.append("target     = needs about %.2g evaluations at the rate seen "
                         "(neval %.2g, %d iterations)" % (
                             self.neval_needed, self.neval_needed / self.nitn, self.nitn))
        if exact is not None and self.ncomp == 1:
            dev = (self.mean - exact) / self.sdev if self.sdev > 0 else float("nan")
            lines.append(("exact      = %.17g   (deviation %+.2f sigma)" if abs(dev) < 1e6
                          else "exact      = %.17g   (deviation %+.3g sigma)") % (exact, dev))
        return "\n".join(lines)
