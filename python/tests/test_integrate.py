"""numpy batch integrands: coverage against exact values over many seeds,
vector integrands with their covariance, progress and stopping, and bad
input as StrataError."""
import math
import os
import pickle
import traceback

import numpy as np
import pytest

import strata_mc as strata
from strata_mc import StrataError

A, DIM = 50.0, 4
EXACT = (math.sqrt(math.pi / A) * math.erf(math.sqrt(A) / 2)) ** DIM
SEEDS = 100


def gauss(x):
    return np.exp(-A * ((x - 0.5) ** 2).sum(axis=1))


def moments(x):
    """x0, x0 + x1 / 100, x0^2 on the unit square: 1/2, 1/2 + 1/200, 1/3,
    the first two nearly the same, so their difference checks the
    covariance."""
    return np.stack([x[:, 0], x[:, 0] + x[:, 1] / 100, x[:, 0] ** 2], axis=1)


MOMENTS = np.array([0.5, 0.505, 1.0 / 3.0])


def band(z):
    """The checks of standardized deviations z of independent runs: within
    2 sigma 95.4% of the time (binomial, n = len(z): 3.5 standard
    deviations below), within 3 sigma 99.7% (at most 3 of 100 outside),
    mean z^2 1 (chi2 of one degree of freedom: 3.5 standard deviations,
    sqrt(2/n) each)."""
    n = len(z)
    p2 = np.mean(np.abs(z) < 2)
    assert p2 >= 0.954 - 3.5 * math.sqrt(0.954 * 0.046 / n), "within 2 sigma: %g" % p2
    assert np.sum(np.abs(z) >= 3) <= 3, "beyond 3 sigma: %d of %d" % (np.sum(np.abs(z) >= 3), n)
    m2 = np.mean(z ** 2)
    assert abs(m2 - 1) <= 3.5 * math.sqrt(2.0 / n), "mean z^2 %g" % m2


def test_coverage_over_seeds():
    z = []
    for seed in range(1, SEEDS + 1):
        r = strata.Integrator(gauss, [[0, 1]] * DIM, neval=2e4, maxiter=8, epsrel=0,
                              seed=seed).integrate()
        assert r.nitn == 8 and r.neval == 8 * 20000 + r.search_evals
        z.append((r.mean - EXACT) / r.sdev)
    band(np.array(z))


def test_vector_covariance_over_seeds():
    z_comp, z_diff = [], []
    a = np.array([1.0, -1.0, 0.0])  # component 0 - component 1: x1 / 100
    for seed in range(1, 51):
        r = strata.Integrator(moments, [[0, 1]] * 2, neval=4000, maxiter=6, epsrel=0,
                              seed=seed).integrate()
        assert r.ncomp == 3 and r.mean.shape == (3,) and r.cov.shape == (3, 3)
        assert np.allclose(r.cov, r.cov.T, rtol=0, atol=0)
        assert np.allclose(np.sqrt(np.diag(r.cov)), r.sdev, rtol=1e-12)
        assert np.all(np.linalg.eigvalsh(r.cov) > -1e-12 * np.max(np.diag(r.cov)))
        z_comp.extend((r.mean - MOMENTS) / r.sdev)
        # The difference's error from the covariance: far below what
        # independent components would give, and right.
        var = a @ r.cov @ a
        assert var < 0.01 * (r.sdev[0] ** 2 + r.sdev[1] ** 2)
        z_diff.append((a @ r.mean - a @ MOMENTS) / math.sqrt(var))
    band(np.array(z_comp))
    band(np.array(z_diff))


def test_vector_iterations_and_table():
    s = strata.Integrator(moments, [[0, 1]] * 2, neval=4000, maxiter=5, skip=2, epsrel=0,
                          seed=3)
    r = s.integrate()
    assert [it.itn for it in r.iterations] == [1, 2, 3, 4, 5]
    for it in r.iterations:
        assert it.comp.shape == (3, 12)
        assert it.comp[0, 0] == it.integral and it.comp[0, 1] == it.sigma
        assert np.isnan(it.chi2_dof) == (not it.kept)
    last = r.iterations[-1]
    cols = strata.result.comp_columns(3)
    assert cols[6:9] == ["cov_0", "cov_1", "cov_2"]
    assert np.array_equal(last.comp[:, cols.index("average")], r.mean)
    assert np.allclose(last.comp[:, 9:12], r.cov, rtol=1e-12, atol=0)
    df = r.table()
    # itn is the index, not also a column (pandas calls a name that is both ambiguous).
    assert df.index.name == "itn" and df.index.tolist() == [1, 2, 3, 4, 5]
    assert list(df.columns) == list(strata.result.COLUMNS[1:])
    assert df.sort_values("itn").index.tolist() == [1, 2, 3, 4, 5]
    assert df["chi2_dof"].isna().tolist() == [True, True, False, False, False]


def test_scalar_and_one_column_agree():
    """Values of shape (n,) and (n, 1) are the same integrand."""
    r1 = strata.Integrator(gauss, [[0, 1]] * DIM, neval=5000, maxiter=4, skip=1, seed=9).integrate()
    r2 = strata.Integrator(lambda x: gauss(x)[:, None], [[0, 1]] * DIM, neval=5000,
                           maxiter=4, skip=1, seed=9).integrate()
    assert r1.mean == r2.mean and r1.sdev == r2.sdev


def test_box_and_batches():
    """A box other than the unit cube reaches the integrand as such, in
    batches of at most `batch` points."""
    seen = []

    def f(x):
        seen.append(x.shape[0])
        assert np.all((x[:, 0] >= -1) & (x[:, 0] <= 3) & (x[:, 1] >= 2) & (x[:, 1] <= 2.5))
        assert not x.flags.writeable
        return x[:, 0] * x[:, 1]

    r = strata.Integrator(f, [[-1, 3], [2, 2.5]], neval=20000, maxiter=4, skip=1, batch=1000,
                          seed=2, epsrel=0).integrate()
    # int_{-1}^{3} x dx * int_2^2.5 y dy = 4 * 1.125
    assert abs(r.mean - 4.5) < 5 * r.sdev
    # seen[0]: the probe; the peak search's evaluations come in batches too.
    assert max(seen[1:]) <= 1000 and sum(seen[1:]) == 80000 + r.search_evals


def test_progress_stops_the_run():
    seen = []

    def progress(it):
        seen.append(it.itn)
        return it.itn == 3

    s = strata.Integrator(gauss, [[0, 1]] * DIM, neval=5000, maxiter=10, seed=1, epsrel=0)
    r = s.integrate(progress)
    assert seen == [1, 2, 3] and r.stopped and r.nitn == 3 and not s.finished
    # Going on from there ends where an uninterrupted run ends.
    r2 = s.integrate()
    full = strata.Integrator(gauss, [[0, 1]] * DIM, neval=5000, maxiter=10, seed=1,
                             epsrel=0).integrate()
    assert not r2.stopped and r2.nitn == 10
    assert r2.mean == full.mean and r2.sdev == full.sdev


def test_stop_request():
    s = strata.Integrator(gauss, [[0, 1]] * DIM, neval=5000, maxiter=10, seed=1, epsrel=0)

    def progress(it):
        if it.itn == 2:
            s.stop()

    r = s.integrate(progress)
    assert r.stopped and r.nitn == 2


def test_step_by_step_equals_integrate():
    s = strata.Integrator(gauss, [[0, 1]] * DIM, neval=5000, maxiter=6, seed=4, epsrel=0)
    rows = []
    while not s.finished:
        rows.append(s.step())
    r = strata.Integrator(gauss, [[0, 1]] * DIM, neval=5000, maxiter=6, seed=4,
                          epsrel=0).integrate()
    assert [x.integral for x in rows] == [x.integral for x in r.iterations]
    assert s.result.mean == r.mean


def test_summary_format():
    r = strata.Integrator(gauss, [[0, 1]] * DIM, neval=5000, maxiter=6, seed=4,
                          epsrel=0).integrate()
    text = r.summary(exact=EXACT)
    lines = text.splitlines()
    assert lines[0].startswith("itn   integral")
    assert "(warm-up)" in lines[2]
    assert "result     = %s" % strata.result.format_value_error(r.mean, r.sdev) in text
    assert "no target (epsrel = epsabs = 0) after 6 iterations" in text
    assert "exact      = %.17g" % EXACT in text


def test_threads_give_the_same_bits():
    """Several OpenMP threads call a Python integrand (taking turns at the
    GIL) and give what one thread gives."""
    kw = dict(neval=40000, maxiter=4, skip=1, seed=8, epsrel=0)
    r1 = strata.Integrator(gauss, [[0, 1]] * DIM, threads=1, **kw).integrate()
    r4 = strata.Integrator(gauss, [[0, 1]] * DIM, threads=4, batch=2000, **kw).integrate()
    assert r1.mean == r4.mean and r1.sdev == r4.sdev


def test_gvar():
    gvar = pytest.importorskip("gvar")
    r = strata.Integrator(moments, [[0, 1]] * 2, neval=4000, maxiter=4, skip=1, seed=1).integrate()
    g = r.gvar
    assert np.allclose(gvar.mean(g), r.mean) and np.allclose(gvar.evalcov(g), r.cov)


# ---- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize("kw, message", [
    (dict(neval=-5), "neval"),
    (dict(mode="bogus"), "mode = 'bogus': must be vegas+, vegas, vegas1d, plain or qmc"),
    (dict(neval=1.5), "neval = 1.5: must be a whole number"),
    (dict(qmc="halton"), "qmc = 'halton'"),
    (dict(backend="gpu"), "backend = 'gpu': must be auto, cpu or cuda"),
    (dict(alpha=-1), "alpha"),
    (dict(threads=100000), "threads = 100000: must be in 0..4096"),
    (dict(adapt_comp=5), "adapt_comp = 5"),
    (dict(log=""), "log = '': must be a path"),
    (dict(checkpoint=""), "checkpoint = '': must be a path"),
])
def test_bad_parameters(kw, message):
    with pytest.raises(StrataError) as e:
        strata.Integrator(gauss, [[0, 1]] * DIM, **kw)
    assert message in str(e.value) and e.value.code == 1 and e.value.name == "EINVAL"
    assert "\n" not in str(e.value)


def test_save_and_load_need_a_path(tmp_path, monkeypatch):
    s = strata.Integrator(gauss, [[0, 1]] * DIM, neval=1000)
    monkeypatch.chdir(tmp_path)
    for bad in (None, 3):
        with pytest.raises(TypeError):
            s.save(bad)
        with pytest.raises(TypeError):
            s.load(bad)
    with pytest.raises(StrataError, match="no path"):
        s.save("")
    assert os.listdir(tmp_path) == []


def test_bad_box_and_keyword():
    with pytest.raises(StrataError, match="box"):
        strata.Integrator(gauss, [0, 1])
    with pytest.raises(StrataError, match="at most 32"):
        strata.Integrator(gauss, [[0, 1]] * 40)
    with pytest.raises(TypeError, match="unknown keyword 'nevals'"):
        strata.Integrator(gauss, [[0, 1]], nevals=10)


def test_bad_values_from_the_integrand():
    with pytest.raises(StrataError) as e:
        strata.Integrator(lambda x: np.full(len(x), np.nan), [[0, 1]] * 2, neval=1000).step()
    assert e.value.code == 3 and "NaN" in str(e.value)
    with pytest.raises(StrataError, match="a single number for a batch"):
        strata.Integrator(lambda x: 0.5, [[0, 1]] * 2)


def test_integrand_exception_propagates():
    calls = []

    def f(x):
        calls.append(len(x))
        if len(calls) == 3:
            raise ZeroDivisionError("boom")
        return x[:, 0]

    s = strata.Integrator(f, [[0, 1]] * 2, neval=20000, batch=1000)
    with pytest.raises(ZeroDivisionError, match="boom") as e:
        s.integrate()
    # The integrand's exception as it raised it: not chained to the NaN
    # that stopped the library.
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert "NaN" not in "".join(traceback.format_exception(e.value))
    assert len(calls) == 3  # no call after the failure


def test_wrong_shape_in_a_batch():
    n = []

    def f(x):
        n.append(1)
        return x[:, 0] if len(n) < 3 else x[:5, 0]

    with pytest.raises(StrataError, match=r"returned shape \(5,\)"):
        strata.Integrator(f, [[0, 1]] * 2, neval=20000, batch=1000).integrate()


def test_cuda_without_cuda():
    src = strata.Source("double f(const double *x, int dim, const double *p)"
                        "{ return x[0]; }", "f")
    try:
        s = strata.Integrator(src, [[0, 1]], backend="cuda")
    except StrataError as e:
        assert e.code == 4 and e.name == "EBACKEND" and "cuda" in str(e)
    else:  # a libstrata built with CUDA, on a machine with a GPU
        assert s.backend == "cuda"


def test_closed_integrator():
    s = strata.Integrator(gauss, [[0, 1]] * 2, neval=1000)
    s.close()
    with pytest.raises(StrataError, match="closed"):
        s.step()


def test_lambda_does_not_pickle():
    s = strata.Integrator(lambda x: x[:, 0], [[0, 1]], neval=1000)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(s)
