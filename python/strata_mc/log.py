"""Convergence logs (run.log = FILE.h5, doc/file-formats.md) as Python
objects: the iteration table as a labelled pandas DataFrame, a vector
integrand's per-component values with their names, the run's definition,
its sessions, result and map snapshots.

Needs h5py and numpy (pandas for the DataFrames), not the compiled
library.  Reads logs of format versions 1 to 3, the one being written
included; older ones are given the newest layout (NaN in the average's
columns of iterations left out of it, str for strings)."""
import ctypes
import math
import os
import time

import numpy as np

from .errors import StrataError
from .result import COLUMNS, comp_columns

#: The versions this reader knows.
FORMAT_VERSIONS = (1, 2, 3)
_AVG = ("average", "average_sigma", "chi2_dof", "Q")
_CLOSED = {"status": ("running", "finished", "stopped"), "backend": ("cpu", "cuda", ""),
           "mode": ("vegas+", "vegas", "vegas1d", "plain", "qmc", "")}
# The peak search's result, attributes of a finished log (doc/file-formats.md).
_PEAK_KEYS = ("peaks_searched", "nmodes", "nchannels", "alpha_map", "alpha_uniform", "khat",
              "khat_itn", "khat_limit", "search_evals", "peaks_held", "peaks_reason",
              "peaks_neval")


def _text(v):
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("utf-8", errors="replace")
    return str(v)


# A metadata block whose checksum fails is read again, as it may have met
# the writer's flush: HDF5's 100 tries with growing pauses make a damaged
# log take minutes; 12 take milliseconds, as `strata log` does, and Log
# tries again.
_METADATA_READ_ATTEMPTS = 12


def _hdf5_function(name, *argtypes):
    """A function of the libhdf5 that h5py uses (found among this process's
    mappings), for what h5py does not wrap; None where it cannot be found."""
    try:
        with open("/proc/self/maps") as m:
            paths = {f[5].strip() for f in (ln.split(None, 5) for ln in m) if len(f) == 6}
    except OSError:
        return None
    for p in sorted(paths):
        base = os.path.basename(p)
        if base.startswith("libhdf5") and ".so" in base and "_hl" not in base:
            try:
                fn = getattr(ctypes.CDLL(p), name)
            except (OSError, AttributeError):
                continue
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
            return fn
    return None


def _fapl(h5py):
    """A file access property list: no lock (the run writing the log takes
    none either), few metadata read attempts (True where set)."""
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_fclose_degree(h5py.h5f.CLOSE_STRONG)
    try:
        fapl.set_file_locking(False, True)
    except (AttributeError, RuntimeError):  # HDF5 before 1.10.7: no such setting
        pass
    # hid_t is 64 bits since HDF5 1.10, which brought SWMR and this setting.
    attempts = _hdf5_function("H5Pset_metadata_read_attempts", ctypes.c_int64, ctypes.c_uint)
    return fapl, attempts is not None and attempts(fapl.id, _METADATA_READ_ATTEMPTS) >= 0


def _open(path):
    import h5py
    # Format version 2 and later open in SWMR mode, so that a log being
    # written reads; version 1 (HDF5's original format) cannot, and opens
    # plainly.  Where HDF5's metadata read attempts cannot be bounded, a
    # log's damage could keep a SWMR open retrying for minutes: it opens
    # plainly first, which a log that no run has open does.
    fapl, bounded = _fapl(h5py)
    name = os.fsencode(path)
    swmr = h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ
    order = (swmr, h5py.h5f.ACC_RDONLY) if bounded else (h5py.h5f.ACC_RDONLY, swmr)
    try:
        fid = h5py.h5f.open(name, order[0], fapl=fapl)
    except OSError:
        fid = h5py.h5f.open(name, order[1], fapl=fapl)
    return h5py.File(fid)


# The keys a definition's hash leaves out (io/jobdef.c): a run continued
# with new values of them is the same run.
_STOP_KEYS = (b"vegas.maxiter", b"vegas.maxeval", b"vegas.skip", b"vegas.epsrel",
              b"vegas.epsabs", b"vegas.min_q")


def _definition_hash(text):
    """definition_hash of a definition (doc/file-formats.md): FNV-1a over
    its lines but those of the stop keys, as 16 hex digits."""
    h = 0xcbf29ce484222325
    lines = text.encode().split(b"\n")
    for i, line in enumerate(lines):
        if i == len(lines) - 1 and not line:
            break
        if line.partition(b" = ")[1] and line.partition(b" = ")[0] in _STOP_KEYS:
            continue
        for c in line + (b"\n" if i < len(lines) - 1 else b""):
            h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def _check_global_heaps(path):
    """HDF5 keeps the log's strings in global heap collections ("GCOL"),
    without checksums; an object size damaged there makes HDF5 read past
    the collection and crash.  Each collection's objects must add up to
    its size: walked here before HDF5 reads any string (ValueError if not;
    a log being written may be caught in the middle, and is read again).
    The writer of a log frees no string, so a collection's objects are
    numbered 1, 2, 3 ... in the order they lie: an index damaged there
    leaves an attribute pointing at no object, which HDF5 reads as an
    empty string without an error."""
    with open(path, "rb") as fh:
        data = fh.read()
    # "GCOL", version 1, three reserved zero bytes: not a chance pattern in data.
    at = data.find(b"GCOL\1\0\0\0")
    while at >= 0:
        size = int.from_bytes(data[at + 8:at + 16], "little")
        end, o, count = at + size, at + 16, 0
        while size and o + 16 <= end:
            index = int.from_bytes(data[o:o + 2], "little")
            n = int.from_bytes(data[o + 8:o + 16], "little")
            if index == 0:  # the free space: the rest of the collection
                break
            count += 1
            if index != count:
                raise ValueError("damaged: a global heap's object %d is numbered %d (byte %d)"
                                 % (count, index, o))
            o += 16 + (n + 7) // 8 * 8
        if size < 16 or end > len(data) or o > end:
            raise ValueError("damaged: a global heap's objects do not fit in it (byte %d)"
                             % at)
        at = data.find(b"GCOL\1\0\0\0", at + 4)


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
    ``rank_sample_time`` [iteration][rank].

    A run that searches for peaks (doc/peaks.md): ``peaks``, a DataFrame
    indexed by itn of each iteration's ``khat``, ``nchannels`` and the
    channels' weights (``alpha_map``, ``alpha_uniform``, ``alpha_mode_1``
    ...; NaN where a mode has no channel); once finished, ``modes`` (a
    DataFrame, a row per mode: ``x_0`` ... ``x_{dim-1}``, ``logf``,
    ``share``, ``weight``, ``known``) and the search's keys in ``result``
    (``peaks_searched``, ``nmodes``, ``nchannels``, ``alpha_map``,
    ``alpha_uniform``, ``khat``, ``khat_itn``, ``khat_limit``,
    ``search_evals``, ``peaks_held``, ``peaks_reason``, ``peaks_neval``);
    None where the run had no search."""

    def __init__(self, path):
        self.path = str(path)
        for k in range(3):
            try:
                with _open(self.path) as f:
                    self._read(f)
                return
            except StrataError:
                raise
            except Exception as e:  # noqa: BLE001 - h5py's errors of a damaged file vary
                # A read that meets the writer's flush succeeds a moment later.
                if k == 2:
                    raise StrataError(0, "%s: cannot read the log: %s" % (self.path, e)) from e
                time.sleep(0.02 * (2 * k + 1))

    def _read(self, f):
        _check_global_heaps(self.path)
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
        if "definition_hash" in attrs and (_definition_hash(attrs.get("definition", ""))
                                           != attrs["definition_hash"]):
            raise ValueError("damaged: its definition does not match its definition_hash")
        # Strings a run writes from a closed set: one outside it is damage
        # (a global heap's strings have no checksum), as `strata log` says.
        for k, allowed in _CLOSED.items():
            if k in attrs and attrs[k] not in allowed:
                raise ValueError("damaged: %s = %r is none a run writes" % (k, attrs[k]))
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
        self._peaks = None
        if "iterations_peaks" in f:
            d = f["iterations_peaks"]
            self._peaks = ([_text(c) for c in d.attrs["columns"]], d[:])
        self.maps = f["map"][:] if "map" in f else np.empty((0, 0, 0))
        self.map_itn = f["map_itn"][:] if "map_itn" in f else np.empty(0, dtype=np.int32)
        self.rank_sample_time = (f["rank_sample_time"][:] if "rank_sample_time" in f
                                 else np.empty((len(t), 0)))
        self._sessions = self._read_sessions(f)
        self.result = None
        self._result_comp = None
        self.result_cov = None
        self._modes = None
        if self.status == "finished":
            self.result = {k: attrs[k] for k in (
                "integral", "sigma", "chi2_dof", "Q", "converged", "iterations", "neval",
                "time_s", "no_target", "lost", "lost_itn", "lost_z", "lost_integral",
                "lost_sigma", "neval_needed") + _PEAK_KEYS if k in attrs}
            if "modes" in f:
                d = f["modes"]
                self._modes = ([_text(c) for c in d.attrs["columns"]], d[:])
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
    def peaks(self):
        """The peak search's view of each iteration: a DataFrame indexed by
        itn (khat, nchannels, the channels' weights); None for a run
        without the search."""
        if self._peaks is None:
            return None
        import pandas as pd
        cols, v = self._peaks
        df = pd.DataFrame(v, columns=cols)
        df.index = pd.Index(self.table["itn"][:len(df)], name="itn")
        return df

    @property
    def modes(self):
        """The modes a finished run's search found: a DataFrame, a row per
        mode; None where it found none or did not search."""
        if self._modes is None:
            return None
        import pandas as pd
        cols, v = self._modes
        df = pd.DataFrame(v, columns=cols, index=pd.RangeIndex(1, len(v) + 1, name="mode"))
        return df.astype({"known": bool})

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
