"""strata_mc.log on logs written by the program (this version's and the
previous format's), and strata_mc.plot on them."""
import csv as csvmod
import io
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import strata_mc as strata
from strata_mc import StrataError
from strata_mc.log import read_log

from conftest import HERE, ROOT, run_job

pd = pytest.importorskip("pandas")
h5py = pytest.importorskip("h5py")

SCALAR = """[integral]
integrand = f4
dim = 3
params = 50
[vegas]
neval = 5000
maxiter = 8
skip = 3
seed = 5
epsrel = 0
[run]
backend = cpu
log = s.h5
log_map = 2
checkpoint = s.ck.h5
"""

VECTOR = """[integral]
integrand = file:three.c
function = three
ncomp = 3
dim = 3
params = 50
[vegas]
neval = 5000
maxiter = 6
skip = 2
seed = 6
epsrel = 0
[run]
backend = cpu
log = v.h5
"""


def csv(strata_bin, path):
    out = subprocess.run([strata_bin, "log", "--csv", str(path)], capture_output=True,
                         text=True, check=True).stdout
    # Python's float() reads the 17 digits back exactly.
    rows = list(csvmod.reader(io.StringIO(out)))
    cols = {k: [float(r[j]) for r in rows[1:]] for j, k in enumerate(rows[0])}
    df = pd.DataFrame(cols).astype({"itn": "int32", "neval": "int64"})
    return df.set_index("itn")


def printed_dashes(strata_bin, path):
    """Per iteration, whether `strata log` prints '-' for chi2/dof and Q."""
    out = subprocess.run([strata_bin, "log", str(path)], capture_output=True, text=True,
                         check=True).stdout
    rows = [l for l in out.splitlines()[2:] if l[:3].strip().isdigit()]
    return [l.split()[-2:] == ["-", "-"] for l in rows]


@pytest.fixture(scope="module")
def logs(strata_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    (d / "s.ini").write_text(SCALAR)
    run_job(strata_bin, d / "s.ini", d)
    # A resume adds a session.
    run_job(strata_bin, d / "s.ini", d, "--resume", "--force", "--set", "vegas.maxiter=10")
    shutil.copy(os.path.join(ROOT, "tests", "integrands", "three.c"), d)
    (d / "v.ini").write_text(VECTOR)
    js, _ = run_job(strata_bin, d / "v.ini", d)
    return d, js


def test_program_log_scalar(strata_bin, logs):
    d, _ = logs
    log = read_log(d / "s.h5")
    assert log.format_version == 3 and log.status == "finished" and log.ncomp == 1
    df = log.iterations
    assert df.index.name == "itn"
    assert list(df.columns) == ["integral", "sigma", "average", "average_sigma",
                                "chi2_dof", "Q", "neval", "wall_s", "elapsed_s", "kept",
                                "restarted", "adapting"]
    assert df.index.tolist() == list(range(1, 11))
    # NaN exactly where the table prints "-"; the CSV says the same.
    dashes = printed_dashes(strata_bin, d / "s.h5")
    assert df["chi2_dof"].isna().tolist() == dashes == df["Q"].isna().tolist()
    assert dashes == [True] * 3 + [False] * 7
    c = csv(strata_bin, d / "s.h5")
    pd.testing.assert_frame_equal(df.drop(columns=["kept", "restarted", "adapting"]),
                                  c[df.columns].drop(columns=["kept", "restarted", "adapting"]),
                                  check_dtype=False, check_index_type=False)
    # The peak search's columns, where the run searched, are the log's /iterations_peaks.
    if log.peaks is not None:
        pd.testing.assert_frame_equal(log.peaks, c[log.peaks.columns], check_dtype=False,
                                      check_index_type=False)
    assert list(c.columns) == list(df.columns) + (
        [] if log.peaks is None else list(log.peaks.columns))
    assert log.result["integral"] == df["average"].iloc[-1]
    assert log.definition["vegas.seed"] == "5" and log.definition["integral.dim"] == "3"
    # Snapshots every 2 iterations (and at each session's end, here the same).
    assert log.map_itn.tolist() == [2, 4, 6, 8, 10]
    assert log.maps.shape[:2] == (5, 3) and np.allclose(log.maps[:, :, [0, -1]], [0, 1])
    s = log.sessions
    assert s["first_itn"].tolist() == [0, 8] and s["backend"].tolist() == ["cpu", "cpu"]
    assert all(isinstance(v, str) for v in s["host"]) and all(
        isinstance(v, str) for v in s["start_time"])
    with h5py.File(d / "s.h5", "r") as f:  # plain h5py reads the strings as str
        assert isinstance(f["sessions"].attrs["backend"][0], str)
        assert isinstance(f.attrs["status"], str)


def test_program_log_vector(strata_bin, logs):
    d, js = logs
    log = read_log(d / "v.h5")
    assert log.ncomp == 3 and log.comp.shape == (6, 3, 12)
    assert log.comp_columns == strata.result.comp_columns(3)
    c = csv(strata_bin, d / "v.h5")
    for k in range(3):
        comp = log.component(k)
        for name in log.comp_columns:
            assert np.array_equal(comp[name].to_numpy(), c["c%d_%s" % (k, name)].to_numpy(),
                                  equal_nan=True), (k, name)
        assert comp["chi2_dof"].isna().tolist() == [True, True, False, False, False, False]
    frame = log.comp_frame()
    assert frame[(1, "integral")].tolist() == log.comp[:, 1, 0].tolist()
    rc = log.result_comp
    assert rc["integral"].tolist() == [x["integral"] for x in js["components"]]
    assert log.result_cov.tolist() == js["covariance"]
    with h5py.File(d / "v.h5", "r") as f:
        assert list(f["iterations_comp"].attrs["columns"]) == log.comp_columns
        assert list(f["result_comp"].attrs["columns"]) == ["integral", "sigma", "chi2_dof", "Q"]
    with pytest.raises(IndexError):
        log.component(3)


@pytest.mark.parametrize("name, ncomp", [("v2-scalar.h5", 1), ("v2-vector.h5", 3)])
def test_previous_format(strata_bin, name, ncomp):
    """Logs of format version 2 (chi2 0 and Q 1 in the warm-up, the
    sessions' strings in the compound) read as the newest layout."""
    log = read_log(os.path.join(HERE, "data", name))
    assert log.format_version == 2 and log.ncomp == ncomp
    df = log.iterations
    assert df["chi2_dof"].isna().tolist() == printed_dashes(
        strata_bin, os.path.join(HERE, "data", name))
    assert df["Q"].isna().sum() == 2 and not df["Q"].iloc[2:].isna().any()
    assert isinstance(log.sessions["host"][0], str)
    if ncomp > 1:
        assert np.isnan(log.component(2)["average_cov_1"].iloc[0])
        assert not np.isnan(log.component(2)["average_cov_1"].iloc[-1])


def test_refused(tmp_path, logs):
    d, _ = logs
    shutil.copy(d / "s.h5", tmp_path / "new.h5")
    with h5py.File(tmp_path / "new.h5", "r+") as f:
        f.attrs["format_version"] = np.int64(9)
    with pytest.raises(StrataError, match="new.h5: log format version 9"):
        read_log(tmp_path / "new.h5")
    with pytest.raises(StrataError, match="s.ck.h5: not a strata log"):
        read_log(d / "s.ck.h5")


def moments(x):
    return np.stack([x[:, 0], x[:, 0] * x[:, 1], np.exp(-20 * ((x - 0.5) ** 2).sum(axis=1))],
                    axis=1)


def test_library_log(strata_bin, tmp_path):
    """A log the library writes for Python (Integrator(log=...)) is the
    program's log: `strata log` prints it, read_log reads it as the run
    reported it, and strata_mc.plot draws it."""
    path = tmp_path / "lib.h5"
    r = strata.Integrator(moments, [[0, 1]] * 2, neval=4000, maxiter=6, skip=2, seed=1,
                          epsrel=0, log=path, log_map=2, identity="three moments",
                          name="moments").integrate()
    log = read_log(path)
    assert log.status == "finished" and log.ncomp == 3
    df = log.iterations
    assert df["integral"].tolist() == [it.integral for it in r.iterations]
    assert df["sigma"].tolist() == [it.sigma for it in r.iterations]
    assert df["chi2_dof"].isna().tolist() == [True, True] + [False] * 4
    assert log.result_comp["integral"].tolist() == r.mean.tolist()
    assert log.result_cov.tolist() == r.cov.tolist()
    for k in range(3):
        assert log.component(k)["integral"].tolist() == [it.comp[k, 0] for it in r.iterations]
    assert log.definition["integral.identity"] == "three moments"
    assert log.map_itn.tolist() == [2, 4, 6]
    # The program's reader: the same rows, and the table's dashes where
    # read_log has NaN.
    c = csv(strata_bin, path)
    assert c["integral"].tolist() == df["integral"].tolist()
    assert c["c2_average_cov_1"].tolist()[2:] == log.component(2)["average_cov_1"].tolist()[2:]
    assert printed_dashes(strata_bin, path) == df["chi2_dof"].isna().tolist()
    pytest.importorskip("matplotlib")
    out = subprocess.run([sys.executable, "-m", "strata_mc.plot", str(path), "-o",
                          str(tmp_path / "lib")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for k in ("estimate", "error", "map"):
        assert (tmp_path / ("lib-%s.png" % k)).stat().st_size > 10000


def test_plot_every_snapshot(logs, tmp_path):
    pytest.importorskip("matplotlib")
    d, _ = logs
    out = subprocess.run([sys.executable, "-m", "strata_mc.plot", str(d / "s.h5"), "-o",
                          str(tmp_path / "s")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    import matplotlib.image as im
    for k in ("estimate", "error", "map"):
        assert (tmp_path / ("s-%s.png" % k)).stat().st_size > 10000
    # Five snapshots: two rows of panels, taller than one row.
    one = tmp_path / "one.h5"
    shutil.copy(d / "v.h5", one)
    subprocess.run([sys.executable, "-m", "strata_mc.plot", str(one), "-o",
                    str(tmp_path / "one")], check=True, capture_output=True)
    assert im.imread(tmp_path / "s-map.png").shape[0] > 1.5 * im.imread(
        tmp_path / "one-map.png").shape[0]
