"""Convergence logs (run.log = FILE.h5, doc/file-formats.md) as Python
objects: the iteration table as a labelled pandas DataFrame, a vector
integrand's per-component values with their names, the run's definition,
its sessions, result and map snapshots.

Needs h5py and numpy (pandas for the DataFrames), not the compiled
library.  Reads logs of format versions 1 to 3, the one being written
included; older ones are given the newest layout (NaN in the average's
columns of iterations left out of it, str for strings)."""
import math
import time

import numpy as np

from .errors import StrataError
from .result import COLUMNS, comp_columns

#: The versions this reader knows.
FORMAT_VERSIONS = (1, 2, 3)
_AVG = ("average", "average_sigma", "chi2_dof", "Q")


def _text(v):
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("utf-8", errors="replace")
    return str(v)


def _open(path):
    import h5py
    # No lock: the run writing the log takes none either.  Format version 2
    # and later open in SWMR mode, so that a log being written reads; version
    # 1 (HDF5's original format) cannot, and opens plainly.
    lock = {"locking": False} if h5py.version.version_tuple >= (3, 5) else {}
    try:
        return h5py.File(path, "r", swmr=True, **lock)
    except OSError:
        return h5py.File(path, "r", **lock)


class Log:
    """A convergence log, read whole.

    ``iterations``: a pandas DataFrame, one row per iteration indexed by
    ``itn``, the columns of /iterations (``integral``, ``sigma``,
    ``average``, ``average_sigma``, ``chi2_dof``, ``Q``, ``neval``,
    ``wall_s``, ``elapsed_s``, ``kept``, ``restarted``, ``adapting``), NaN
    where `strata log` prints ``-``; ``table``, the same as a numpy
    structured array.  For a vector integrand (``ncomp`` > 1): ``comp``,
    an array [iteration][component][column] whose columns are
    ``comp_columns``; ``component(c)``, component c's as a DataFrame; and
    once finished, ``result_comp`` (a DataFrame, a row per component) and
    ``result_cov``.  ``definition``: the run's definition, a dict of
    ``section.key`` to its text; ``attrs``: the attributes of /, strings as
    str; ``status``; ``result`` (a dict, once finished); ``sessions`` (a
    DataFrame); ``maps`` [k][axes][ninc + 1] with ``map_itn`` [k];
    ``rank_sample_time`` [iteration][rank]."""

    def __init__(self, path):
        self.path = str(path)
        for k in range(3):
            try:
                with _open(self.path) as f:
                    self._read(f)
                return
            except StrataError:
                raise
            except (OSError, KeyError) as e:
                # A read that meets the writer's flush succeeds a moment later.
                if k == 2:
                    raise StrataError(0, "%s: cannot read the log: %s" % (self.path, e)) from e
                time.sleep(0.02 * (2 * k + 1))

    def _read(self, f):
        attrs = {k: (_text(v) if isinstance(v, (str, bytes, np.bytes_)) else
                     v.item() if isinstance(v, np.generic) else v) for k, v in f.attrs.items()}
        if attrs.get("format") != "strata log":
            raise StrataError(0, "%s: not a strata log (no format = \"strata log\" attribute)"
                              % self.path)
        v = int(attrs.get("format_version", 1))
        if v not in FORMAT_VERSIONS:
            raise StrataError(0, "%s: log format version %d: this reader knows versions %s "
                              "(a newer strata wrote it: update the strata package)"
                              % (self.path, v, ", ".join(map(str, FORMAT_VERSIONS))))
        self.format_version = v
        self.attrs = attrs
        self.status = attrs.get("status")
        self.definition_text = attrs.get("definition", "")
        self.definition = dict(line.split(" = ", 1) for line in
                               self.definition_text.splitlines() if " = " in line)
        self.ncomp = int(attrs.get("ncomp", 1))
        t = f["iterations"][:]
        kept = t["kept"] != 0
        if v < 3:  # warm-up rows held chi2 0 and Q 1 where the table prints "-"
            for c in _AVG:
                t[c][~kept] = np.nan
        self.table = t
        self.comp = None
        self.comp_columns = comp_columns(self.ncomp) if self.ncomp > 1 else None
        if self.ncomp > 1 and "iterations_comp" in f:
            d = f["iterations_comp"]
            self.comp = d[:]
            if "columns" in d.attrs:
                self.comp_columns = [_text(c) for c in d.attrs["columns"]]
            if v < 3:
                n = self.ncomp
                unkept = ~kept[:len(self.comp)]
                for j in list(range(2, 6)) + list(range(6 + n, 6 + 2 * n)):
                    self.comp[unkept, :, j] = np.nan
        self.maps = f["map"][:] if "map" in f else np.empty((0, 0, 0))
        self.map_itn = f["map_itn"][:] if "map_itn" in f else np.empty(0, dtype=np.int32)
        self.rank_sample_time = (f["rank_sample_time"][:] if "rank_sample_time" in f
                                 else np.empty((len(t), 0)))
        self._sessions = self._read_sessions(f)
        self.result = None
        self._result_comp = None
        self.result_cov = None
        if self.status == "finished":
            self.result = {k: attrs[k] for k in (
                "integral", "sigma", "chi2_dof", "Q", "converged", "iterations", "neval",
                "time_s", "no_target", "lost", "lost_itn", "lost_z", "lost_integral",
                "lost_sigma", "neval_needed") if k in attrs}
            if "result_comp" in f:
                d = f["result_comp"]
                cols = ([_text(c) for c in d.attrs["columns"]] if "columns" in d.attrs
                        else ["integral", "sigma", "chi2_dof", "Q"])
                self._result_comp = (cols, d[:])
                self.result_cov = f["result_cov"][:]

    def _read_sessions(self, f):
        if "sessions" not in f:
            return None
        d = f["sessions"]
        rows = d[:]
        out = {name: rows[name] for name in rows.dtype.names}
        for name in ("backend", "host", "start_time"):
            if name in out:  # format version 2 and earlier: bytes in the compound
                out[name] = np.array([_text(s) for s in out[name]], dtype=object)
            elif name in d.attrs:
                out[name] = np.array([_text(s) for s in d.attrs[name]], dtype=object)
        return out

    # ---- tables -------------------------------------------------------------------------
    @property
    def iterations(self):
        """The iteration table as a pandas DataFrame indexed by itn."""
        import pandas as pd
        df = pd.DataFrame({k: self.table[k] for k in self.table.dtype.names})
        df = df.astype({"kept": bool, "restarted": bool, "adapting": bool})
        return df.set_index("itn")

    def component(self, c):
        """Component c of a vector integrand: a DataFrame indexed by itn
        whose columns are ``comp_columns``."""
        import pandas as pd
        if self.comp is None:
            raise StrataError(0, "%s: a scalar integrand's log: no components" % self.path)
        if not 0 <= c < self.ncomp:
            raise IndexError("component %d: the log has %d (0..%d)" % (c, self.ncomp,
                                                                       self.ncomp - 1))
        df = pd.DataFrame(self.comp[:, c, :], columns=self.comp_columns)
        df.index = pd.Index(self.table["itn"][:len(df)], name="itn")
        return df

    def comp_frame(self):
        """Every component's table in one DataFrame, columns (component,
        name)."""
        import pandas as pd
        return pd.concat({c: self.component(c) for c in range(self.ncomp)}, axis=1,
                         names=["component", "column"])

    @property
    def result_comp(self):
        """A finished vector run's result: a DataFrame, a row per component,
        columns integral, sigma, chi2_dof, Q; None otherwise."""
        if self._result_comp is None:
            return None
        import pandas as pd
        cols, v = self._result_comp
        return pd.DataFrame(v, columns=cols, index=pd.RangeIndex(len(v), name="component"))

    @property
    def sessions(self):
        """The starts and resumes: a DataFrame of first_itn, ranks, gpus,
        threads, backend, host, start_time."""
        import pandas as pd
        return pd.DataFrame(self._sessions) if self._sessions is not None else None

    @property
    def exact(self):
        e = self.attrs.get("exact", math.nan)
        return e if math.isfinite(e) else None

    def __repr__(self):
        return "<strata log %s: %s, %d iterations, version %d>" % (
            self.path, self.status, len(self.table), self.format_version)


def read_log(path):
    """Reads the convergence log at path: a :class:`Log`.  A file that is
    not a strata log, or of an unknown format version, raises StrataError
    naming the file (and the version)."""
    return Log(path)


# The names the iteration table has, for readers that build their own.
__all__ = ["Log", "read_log", "COLUMNS", "FORMAT_VERSIONS"]
