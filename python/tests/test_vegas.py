"""strata for vegas users: Integrator(limits) called as integ(f, nitn=,
neval=), vegas's integrand forms and keywords, its result's names, and
messages that name the Python keywords."""
import math
import os
import pickle
import sys
import traceback

import numpy as np
import pytest

import strata_mc as strata
from strata_mc import StrataError
from strata_mc._lib import lib


def gauss(x):
    """A batch gaussian of width 0.1 in 3-D, normalised to 1 (to 2e-6)."""
    return np.exp(-50.0 * ((x - 0.5) ** 2).sum(axis=1)) * (50.0 / np.pi) ** 1.5


EXACT = math.erf(0.5 * math.sqrt(50.0)) ** 3
BOX = [[0, 1]] * 3


def batch_gauss(x):
    return gauss(x)


batch_gauss.fcntype = "lbatch"  # what strata.lbatchintegrand sets, and vegas's


def point_gauss(x):
    """gauss one point at a time, as vegas's plain integrands are."""
    return gauss(np.asarray(x)[None, :])[0]


# ---- the run goes on across calls ------------------------------------------------------
def test_calls_go_on_from_the_trained_map():
    integ = strata.Integrator(BOX, seed=11)
    warm = integ(batch_gauss, nitn=8, neval=4000)
    r = integ(batch_gauss, nitn=5, neval=4000)
    fresh = strata.Integrator(BOX, seed=11)(batch_gauss, nitn=1, neval=4000)
    # The second call's first iteration samples with the trained map: far
    # better than a first iteration on the uniform map.
    assert r.iterations[0].sigma < 0.2 * fresh.iterations[0].sigma
    assert warm.nitn == 8 and r.nitn == 5
    # Each call's result is its own iterations only, numbered from 1.
    assert [it.itn for it in r.iterations] == [1, 2, 3, 4, 5]
    # The peak search's evaluations count in the run's, in no iteration's.
    assert r.sum_neval == sum(it.neval for it in r.iterations) + r.search_evals
    assert len(r.itn_results) == 5
    assert abs(r.mean - EXACT) < 5 * r.sdev


def test_each_call_draws_other_points():
    integ = strata.Integrator(BOX, seed=12, adapt=False)
    a = integ(batch_gauss, nitn=2, neval=2000)
    b = integ(batch_gauss, nitn=2, neval=2000)
    assert a.seed != b.seed and a.iterations[0].integral != b.iterations[0].integral
    # The same calls from the same seed are the same run, bit for bit.
    again = strata.Integrator(BOX, seed=12, adapt=False)
    again(batch_gauss, nitn=2, neval=2000)
    assert again(batch_gauss, nitn=2, neval=2000).mean == b.mean


def test_vegas_semantics_run_and_average_every_iteration():
    integ = strata.Integrator(BOX, seed=13)
    integ(batch_gauss, nitn=6, neval=4000)
    # Defaults of strata's own form (epsrel 1e-3, skip 5) would end this
    # early and drop five iterations; vegas runs all nitn and averages them.
    r = integ(batch_gauss, nitn=7, neval=20000)
    assert r.nitn == 7 and all(it.kept for it in r.iterations)
    assert r.dof + 1 == sum(1 for it in r.iterations if it.kept) or any(
        it.restarted for it in r.iterations)
    assert r.converged is None  # no tolerance asked for
    # Keywords stay for the calls after, as vegas's do.
    assert integ(batch_gauss).nitn == 7


def test_adapt_false_keeps_the_map():
    integ = strata.Integrator(BOX, seed=14)
    integ(batch_gauss, nitn=5, neval=4000)
    before = integ.map
    r = integ(batch_gauss, nitn=4, neval=4000, adapt=False)
    assert np.array_equal(integ.map, before)
    assert not any(it.adapting for it in r.iterations) and r.dof == 3
    assert abs(r.mean - EXACT) < 5 * r.sdev


def test_rtol_ends_the_call_early():
    integ = strata.Integrator(BOX, seed=15)
    integ(batch_gauss, nitn=6, neval=4000)
    r = integ(batch_gauss, nitn=50, neval=4000, rtol=2e-3)
    assert r.nitn < 50 and r.converged and r.sdev <= 2e-3 * abs(r.mean)


def test_coverage_of_calls_over_seeds():
    """Warm-up and real calls give honest errors: over 40 seeds about 68%
    within 1 sigma, none beyond 4."""
    pulls = []
    for seed in range(40):
        integ = strata.Integrator(BOX, seed=1000 + seed)
        integ(batch_gauss, nitn=4, neval=2000)
        r = integ(batch_gauss, nitn=4, neval=4000)
        pulls.append((r.mean - EXACT) / r.sdev)
    pulls = np.abs(pulls)
    assert 0.5 <= np.mean(pulls < 1) <= 0.9 and pulls.max() < 4, pulls


def test_native_integrator_calls_too():
    """Integrator(f, box) keeps its batch integrand, and its calls go on
    from its run's map."""
    integ = strata.Integrator(gauss, BOX, neval=4000, maxiter=5, epsrel=0, skip=0, seed=16)
    first = integ.integrate()
    with pytest.raises(StrataError, match=r"the run is finished .*integ\(f, nitn="):
        integ.integrate()  # no longer the old result again, silently
    r = integ(nitn=3)
    assert r.nitn == 3 and first.nitn == 5 and abs(r.mean - EXACT) < 5 * r.sdev


# ---- integrand forms -------------------------------------------------------------------
def test_per_point_and_batch_forms_draw_the_same_points():
    def run(f):
        integ = strata.Integrator(BOX, seed=17)
        integ(f, nitn=2, neval=1000)
        return integ(f, nitn=2, neval=1000)

    @strata.rbatchintegrand
    def rgauss(x):
        return gauss(x.T)

    a, b, c = run(point_gauss), run(batch_gauss), run(rgauss)
    assert a.mean == b.mean == c.mean and a.sdev == b.sdev == c.sdev


def test_batch_class_and_native_box_of_any_shape():
    class F(strata.LBatchIntegrand):
        def __call__(self, x):
            return gauss(x)

    r = strata.Integrator(BOX, seed=18)(F(), nitn=3, neval=2000)
    assert abs(r.mean - EXACT) < 5 * r.sdev


def test_dict_limits_per_point_and_batch():
    """vegas's dict limits: the volume of the unit ball in spherical
    coordinates."""
    limits = dict(r=(0, 1), angles=[(0, np.pi), (0, 2 * np.pi)])

    def f(xd):
        return xd["r"] ** 2 * np.sin(xd["angles"][0])

    @strata.lbatchintegrand
    def fb(xd):
        assert xd["r"].shape == (len(xd["angles"]),) and xd["angles"].shape[1] == 2
        return xd["r"] ** 2 * np.sin(xd["angles"][:, 0])

    @strata.rbatchintegrand
    def fr(xd):
        return xd["r"] ** 2 * np.sin(xd["angles"][0])

    rs = []
    for g in (f, fb, fr):
        integ = strata.Integrator(limits, seed=19)
        integ(g, nitn=5, neval=2000)
        rs.append(integ(g, nitn=5, neval=4000))
    assert rs[0].mean == rs[1].mean == rs[2].mean
    assert abs(rs[0].mean - 4 * np.pi / 3) < 5 * rs[0].sdev


def test_array_and_dict_values():
    @strata.lbatchintegrand
    def f(x):
        g = gauss(x)
        return dict(I=g, moments=np.stack([x[:, 0] * g, x[:, 0] ** 2 * g], axis=1),
                    box=np.ones((len(x), 2, 2)))

    integ = strata.Integrator(BOX, seed=20)
    integ(f, nitn=5, neval=4000)
    r = integ(f, nitn=5, neval=8000)
    assert r.ncomp == 7 and r.cov.shape == (7, 7)
    assert set(r.mean) == {"I", "moments", "box"} and r.mean["moments"].shape == (2,)
    assert r.sdev["box"].shape == (2, 2) and np.all(abs(r.mean["box"] - 1) < 5 * r.sdev["box"])
    assert abs(r.mean["I"] - EXACT) < 5 * r.sdev["I"]
    assert "'moments': [" in str(r)
    assert "\nresult['moments'][1] = " in r.summary() and "result[6]" not in r.summary()
    gv = pytest.importorskip("gvar")
    x = r["moments"][0] / r["I"]  # correlated: far more precise than either
    assert abs(x.mean - 0.5) < 5 * x.sdev and x.sdev < 0.5 * r["moments"][0].sdev
    assert list(r.keys()) == ["I", "moments", "box"]
    assert np.allclose(gv.evalcov(r.gvar["moments"]), r.cov[1:3, 1:3])
    assert isinstance(r.itn_results[0], gv.BufferDict)


def test_values_without_gvar(monkeypatch):
    monkeypatch.setitem(sys.modules, "gvar", None)

    @strata.lbatchintegrand
    def f(x):
        return dict(a=gauss(x), b=np.stack([gauss(x)] * 2, axis=1))

    r = strata.Integrator(BOX, seed=21)(f, nitn=3, neval=2000)
    assert r["a"].mean == r.mean["a"] and r["a"].sdev == r.sdev["a"]
    assert r["b"].mean.shape == (2,) and "(" in str(r["b"])
    with pytest.raises(ImportError, match="gvar"):
        r.gvar


def test_scalar_result_is_gvar_like():
    gv = pytest.importorskip("gvar")
    r = strata.Integrator(BOX, seed=22)(batch_gauss, nitn=3, neval=2000)
    assert (r / r).sdev == 0 and (r - r).mean == 0
    assert isinstance(2 * r + 1, gv.GVar) and abs((2 * r).sdev - 2 * r.sdev) < 1e-15
    assert r.chi2 == pytest.approx(r.chi2_dof * r.dof) and r.dof == 2
    assert isinstance(r.itn_results[0], gv.GVar)


def test_many_components_up_to_the_librarys_limit():
    most = lib.STRATA_MAX_NCOMP
    n = min(most, 64)  # the library's limit, or enough to show no limit of 8 here

    @strata.lbatchintegrand
    def f(x):
        return x[:, :1] * np.arange(1, n + 1)

    r = strata.Integrator([[0, 1]], seed=23)(f, nitn=2, neval=1000)
    assert r.ncomp == n and np.allclose(r.mean, 0.5 * np.arange(1, n + 1), rtol=0.05)

    @strata.lbatchintegrand
    def g(x):
        return np.zeros((len(x), most + 1))

    with pytest.raises(StrataError, match="at most %d components" % most):
        strata.Integrator([[0, 1]])(g)


def test_seed_none_draws_a_seed_and_reports_it():
    a = strata.Integrator(gauss, BOX, neval=2000, maxiter=2, skip=0, seed=None).integrate()
    b = strata.Integrator(gauss, BOX, neval=2000, maxiter=2, skip=0, seed=None).integrate()
    assert isinstance(a.seed, int) and a.seed != b.seed
    again = strata.Integrator(gauss, BOX, neval=2000, maxiter=2, skip=0, seed=a.seed).integrate()
    assert again.mean == a.mean
    # vegas's form draws one unless told, as vegas does.
    integ = strata.Integrator(BOX)
    c = integ(batch_gauss, nitn=1, neval=1000)
    d = strata.Integrator(BOX)(batch_gauss, nitn=1, neval=1000)
    assert c.seed == integ.seed and c.seed != d.seed
    later = integ(batch_gauss)
    again = strata.Integrator(BOX, seed=integ.seed)
    again(batch_gauss, nitn=1, neval=1000)
    assert again(batch_gauss).mean == later.mean
    assert strata.Integrator(gauss, BOX, neval=2000, maxiter=2, skip=0).integrate().seed == 1


# ---- keywords ----------------------------------------------------------------------------
def test_vegas_keywords():
    # Keywords of vegas's work arrays are taken and have no effect.
    strata.Integrator(BOX, max_neval_hcube=1000, neval_frac=0.5, seed=24)(
        batch_gauss, nitn=1, neval=1000, gpu_pad=True)
    with pytest.raises(TypeError, match="'uses_jac' has no equivalent.*Jacobian"):
        strata.Integrator(BOX, uses_jac=True)
    with pytest.raises(TypeError, match="'nstrat'"):
        strata.Integrator(BOX)(batch_gauss, nstrat=[2, 2, 2])
    with pytest.raises(TypeError, match="unknown keyword 'nitns'"):
        strata.Integrator(BOX)(batch_gauss, nitns=3)
    with pytest.raises(StrataError, match="nitn = 0: must be a whole number, 1 or more"):
        strata.Integrator(BOX)(batch_gauss, nitn=0)
    with pytest.raises(TypeError, match="Integrator\\(f, box\\): no box"):
        strata.Integrator(gauss)
    # vegas's names in strata's own form bring vegas's meaning: every
    # iteration adapts and is averaged, no early end.
    r = strata.Integrator(gauss, BOX, neval=2000, nitn=3, seed=25).integrate()
    assert r.nitn == 3 and all(it.kept and it.adapting for it in r.iterations)


def test_save_and_saveall(tmp_path):
    integ = strata.Integrator(BOX, seed=26)
    integ(batch_gauss, nitn=4, neval=2000)
    seen = []
    r = integ(batch_gauss, nitn=3, neval=2000, save=str(tmp_path / "r.pkl"),
              saveall=str(tmp_path / "all.pkl"), progress=lambda it: seen.append(it.itn))
    assert seen == [1, 2, 3]
    with open(tmp_path / "r.pkl", "rb") as f:
        saved = pickle.load(f)
    with open(tmp_path / "all.pkl", "rb") as f:
        saved2, integ2 = pickle.load(f)
    assert saved.mean == saved2.mean == r.mean and saved.nitn == 3
    assert np.array_equal(integ2.map, integ.map)
    more = integ2(batch_gauss, nitn=2, neval=2000)
    assert more.nitn == 2 and abs(more.mean - EXACT) < 5 * more.sdev
    # An Integrator that has not run pickles too, as its limits and keywords.
    fresh = pickle.loads(pickle.dumps(strata.Integrator({"a": (0, 1)}, nitn=2)))
    assert fresh(lambda x: x["a"], neval=1000).nitn == 2


# ---- messages ----------------------------------------------------------------------------
def test_keyboard_interrupt_in_the_integrand_keeps_the_checkpoint(tmp_path):
    calls = []

    def f(x):
        calls.append(1)
        if len(calls) == 7:  # in the fourth iteration (two batches each)
            raise KeyboardInterrupt
        return gauss(x)

    cp = str(tmp_path / "run.ck.h5")
    # peaks=False: the calls counted are the iterations' alone.
    kw = dict(neval=4000, batch=2000, maxiter=6, epsrel=0, seed=27, checkpoint=cp, name="g",
              checkpoint_every=1, peaks=False)
    with pytest.raises(KeyboardInterrupt) as e:
        strata.Integrator(f, BOX, **kw).integrate()
    assert e.value.__cause__ is None and e.value.__suppress_context__
    assert "NaN" not in "".join(traceback.format_exception(e.value))
    assert os.path.exists(cp)
    r = strata.Integrator(gauss, BOX, resume="yes", **kw).integrate()
    whole = strata.Integrator(gauss, BOX, **dict(kw, checkpoint=None)).integrate()
    assert r.mean == whole.mean and r.nitn == 6


def test_messages_name_the_python_keywords(tmp_path):
    cp = str(tmp_path / "run.ck.h5")
    kw = dict(neval=2000, maxiter=2, skip=0, epsrel=0, seed=28, checkpoint=cp)
    strata.Integrator(gauss, BOX, **kw).integrate()
    with pytest.raises(StrataError) as e:
        strata.Integrator(gauss, BOX, **kw).integrate()
    assert 'resume="yes"' in str(e.value) and 'resume="auto"' in str(e.value)
    assert "STRATA_" not in str(e.value) and "strata_settings" not in str(e.value)
    with pytest.raises(StrataError) as e:
        strata.Integrator(gauss, BOX, **dict(kw, maxiter=4, resume="yes")).integrate()
    assert "new_stop_keys=True" in str(e.value) and "strata_settings" not in str(e.value)
    with pytest.raises(StrataError) as e:
        strata.Integrator(gauss, BOX, neval=2000, resume="yes").integrate()
    assert "resume needs checkpoint" in str(e.value)


def test_analyzer_and_set(capsys):
    integ = strata.Integrator(BOX, seed=29, analyzer=strata.reporter())
    old = integ.set(nitn=3, neval=2000)
    assert old == {"nitn": 10, "neval": None}
    r = integ(batch_gauss)
    out = capsys.readouterr().out
    assert out.count("itn ") == 3 and "all itn's: %s" % r in out
    integ.set(old)
    integ.set(analyzer=None)
    r = integ(batch_gauss, neval=1000)
    assert r.nitn == 10 and capsys.readouterr().out == ""


def test_per_point_value_that_is_no_number():
    def f(x):
        return [1.0, 2.0] if x[0] > 0.9 else 1.0

    with pytest.raises(StrataError, match=r"returned shape \(2,\) at x = \[0\.9.*must be a "
                                          r"number, as at its first call"):
        strata.Integrator([[0, 1]], seed=30)(f, nitn=1, neval=1000)


def test_integrator_from_another():
    """vegas's Integrator(other): the other's limits, keywords and map."""
    integ = strata.Integrator(BOX, seed=31, neval=4000)
    integ(batch_gauss, nitn=8)
    copy = strata.Integrator(integ)
    r = copy(batch_gauss, nitn=1)
    fresh = strata.Integrator(BOX, seed=31)(batch_gauss, nitn=1, neval=4000)
    assert r.iterations[0].neval == fresh.iterations[0].neval
    assert r.iterations[0].sigma < 0.2 * fresh.iterations[0].sigma
    assert strata.Integrator(strata.Integrator(BOX, nitn=2))(batch_gauss, neval=1000).nitn == 2


def test_gvar_functions_take_a_dict_result():
    gv = pytest.importorskip("gvar")

    @strata.lbatchintegrand
    def f(x):
        return dict(a=x[:, 0], b=x[:, 0] ** 2)

    r = strata.Integrator([[0, 1]], seed=32)(f, nitn=3, neval=1000)
    assert gv.mean(r)["a"] == r.mean["a"] and gv.evalcorr(r)["a", "b"][0, 0] > 0.5
    scalar = strata.Integrator([[0, 1]], seed=32)(lambda x: x[0], nitn=3, neval=1000)
    assert scalar and not hasattr(scalar, "keys")  # not taken for a dict by gvar


def test_c_source_in_calls():
    src = strata.Source("#include <math.h>\n"
                        "double g(const double *x, int dim, const double *p)\n"
                        "{ double s = 0;\n"
                        "  for (int i = 0; i < dim; i++) s += (x[i] - 0.5) * (x[i] - 0.5);\n"
                        "  return exp(-50.0 * s) * pow(50.0 / M_PI, 1.5); }", "g")
    integ = strata.Integrator(BOX, seed=33, backend="cpu")
    integ(src, nitn=4, neval=4000)
    r = integ(src, nitn=4, neval=4000)
    # The same integrand in Python, the same calls: the same points.
    again = strata.Integrator(BOX, seed=33)
    again(batch_gauss, nitn=4, neval=4000)
    assert abs(r.mean - again(batch_gauss, nitn=4, neval=4000).mean) < 1e-12
    assert abs(r.mean - EXACT) < 5 * r.sdev
