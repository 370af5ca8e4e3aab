"""The peak search through Python (doc/peaks.md): its keywords reach the
library (the run's definition, as the log records it, holds them), bad
ones are refused naming the keyword and the point, and a run reports what
the search found in its Result, its summary and its log."""
import math
import pickle

import numpy as np
import pytest

import strata_mc as strata
from strata_mc import StrataError

pytest.importorskip("h5py")
from strata_mc.log import read_log  # noqa: E402

BOX = [[0, 1]] * 4
# Two narrow peaks off the diagonal (tests/integrands/two_peaks.c).
CENTRES = np.array([[0.3, 0.7, 0.3, 0.7], [0.7, 0.3, 0.7, 0.3]])
EXACT = (2 * math.pi) ** 2 * (0.03 ** 4 + 0.5 * 0.05 ** 4)


def two_peaks(x):
    a = ((x - CENTRES[0]) ** 2).sum(axis=1)
    b = ((x - CENTRES[1]) ** 2).sum(axis=1)
    return np.exp(-a / (2 * 0.03 ** 2)) + 0.5 * np.exp(-b / (2 * 0.05 ** 2))


def gauss(x):
    return np.exp(-50.0 * ((x - 0.5) ** 2).sum(axis=1))


@pytest.mark.parametrize("kw, message", [
    (dict(peaks="maybe"), "peaks = 'maybe'"),
    (dict(peaks=1), "peaks = 1"),
    (dict(known_peaks=[[0.5, 0.5, 0.5]]), "known_peaks: point 1 has 3 coordinates for dim 4"),
    (dict(known_peaks=[[0.5] * 4, [0.5, 0.5, 1.5, 0.5]]),
     r"known_peaks: point 2, axis 3: 1.5 is outside the limits \[0, 1\]"),
    (dict(known_peaks=[[0.5] * 4] * 9), "known_peaks: 9 points, at most 8"),
    (dict(known_peaks=[["a", 1, 2, 3]]), "known_peaks"),
    (dict(known_peaks=[[0.5, math.nan, 0.5, 0.5]]), "known_peaks: point 1"),
    (dict(peak_uniform=0.0), "peaks.uniform = 0"),
    (dict(peak_ascents=0), "peaks.ascents = 0"),
    (dict(peak_starts=2.5), "peak_starts = 2.5"),
    (dict(mode="plain", peaks=True), "peaks.search = on: mode plain"),
])
def test_bad_peak_keywords(kw, message):
    with pytest.raises(StrataError, match=message):
        strata.Integrator(gauss, BOX, neval=1000, **kw)


def test_keywords_reach_the_run(tmp_path):
    """The definition the log records (io/jobdef.c) is the library's view of
    the parameters: the search's keys where it runs, none where it is off."""
    log = tmp_path / "on.h5"
    strata.Integrator(gauss, BOX, neval=2000, maxiter=2, skip=0, seed=3, peaks=True,
                      known_peaks=[[0.5, 0.5, 0.5, 0.5], [0.25, 0.75, 0.5, 0.5]],
                      peak_starts=64, peak_ascents=3, peak_uniform=0.05, log=log).integrate()
    d = read_log(log).definition
    assert d["peaks.search"] == "on" and d["peaks.starts"] == "64"
    assert d["peaks.ascents"] == "3" and float(d["peaks.uniform"]) == 0.05
    assert [[float(v) for v in p.split()] for p in d["peaks.known"].split(";")] == [
        [0.5, 0.5, 0.5, 0.5], [0.25, 0.75, 0.5, 0.5]]
    off = tmp_path / "off.h5"
    r = strata.Integrator(gauss, BOX, neval=2000, maxiter=2, skip=0, seed=3, peaks=False,
                          log=off).integrate()
    lg = read_log(off)
    assert not any(k.startswith("peaks.") for k in lg.definition)
    # Off: nothing searched, nothing to report, and the log keeps no table for it.
    assert not r.peaks_searched and r.modes == [] and r.search_evals == 0
    assert r.khat is None and r.peaks_reason is None and r.channel_weights == [1.0]
    assert all(math.isnan(it.khat) and it.nchannels == 1 for it in r.iterations)
    assert lg.peaks is None and lg.modes is None
    assert "search     =" not in r.summary() and "peaks      =" not in r.summary()


def test_two_peaks_reported(tmp_path):
    """Two peaks off the diagonal: the search finds both, and the Result,
    its summary, its pickle and the log say where, with their shares."""
    log = tmp_path / "two.h5"
    r = strata.Integrator(two_peaks, BOX, neval=20000, maxiter=8, skip=2, seed=5, peaks=True,
                          log=log).integrate()
    assert r.peaks_searched and len(r.modes) >= 2 and r.search_evals > 0
    for c in CENTRES:
        d = min(np.abs(m.x - c).max() for m in r.modes)
        assert d < 0.01, "no mode near %s: %s" % (c, r.modes)
    assert r.nchannels == len(r.channel_weights) >= 3
    assert all(0 < w < 1 for w in r.channel_weights)
    # One kind of weight, adding up to 1; a mode with a channel has its
    # balance-heuristic share, one without none (its part is the map's).
    assert abs(sum(r.channel_weights) - 1) < 1e-12
    assert [m.weight for m in r.modes if m.weight > 0] == r.channel_weights[1:-1]
    assert all(0 < m.share < 1 if m.weight > 0 else math.isnan(m.share) for m in r.modes)
    assert abs(r.mean - EXACT) < 5 * r.sdev
    text = r.summary()
    assert "search     = %d modes in %d evaluations" % (len(r.modes), r.search_evals) in text
    assert "mode 1     =" in text and "channels   =" in text
    back = pickle.loads(pickle.dumps(r))
    assert back.summary() == text and np.array_equal(back.modes[0].x, r.modes[0].x)
    lg = read_log(log)
    assert len(lg.modes) == len(r.modes)
    assert np.array_equal(lg.modes[["x_0", "x_1", "x_2", "x_3"]].to_numpy()[0], r.modes[0].x)
    assert lg.result["search_evals"] == r.search_evals
    assert lg.result["alpha_map"] == r.channel_weights[0]
    assert lg.result["alpha_uniform"] == r.channel_weights[-1]
    np.testing.assert_array_equal(lg.modes["share"].to_numpy(), [m.share for m in r.modes])
    np.testing.assert_array_equal(lg.modes["weight"].to_numpy(), [m.weight for m in r.modes])
    last = lg.peaks.iloc[-1]
    assert last["alpha_map"] == r.channel_weights[0]
    assert abs(last[[c for c in lg.peaks.columns if c.startswith("alpha_")]].sum() - 1) < 1e-12
    assert list(lg.peaks["nchannels"]) == [it.nchannels for it in r.iterations]


def test_vegas_call_takes_peak_keywords():
    """vegas's form: the keywords go to a call and stay for the next."""
    integ = strata.Integrator(BOX)
    f = strata.lbatchintegrand(gauss)
    with pytest.raises(StrataError, match="known_peaks: point 1 has 2 coordinates for dim 4"):
        integ(f, nitn=2, neval=1000, known_peaks=[[0.5, 0.5]])
    r = integ(f, nitn=2, neval=1000, peaks=False, known_peaks=None)
    assert not r.peaks_searched and r.search_evals == 0
    assert not integ(f, nitn=2, neval=1000).peaks_searched  # peaks=False stays


def test_known_peaks_start_the_search():
    """With no Sobol' points, the peaks come from the points given, in the
    integrand's coordinates (a box other than the unit cube), and say so."""
    box = [[-1, 3]] * 4
    known = 4 * CENTRES - 1

    def shifted(x):
        return two_peaks((x + 1) / 4)
    r = strata.Integrator(shifted, box, neval=20000, maxiter=6, skip=2, seed=2, peaks=True,
                          peak_starts=0, known_peaks=known).integrate()
    assert len(r.modes) == 2 and all(m.known for m in r.modes)
    for c in known:
        assert min(np.abs(m.x - c).max() for m in r.modes) < 0.04
