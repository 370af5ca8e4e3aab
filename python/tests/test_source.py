"""C source integrands, compiled by the library: the same bits as `strata
run` of the same job and seed, vector ones too, and summary() the very
table and summary the program printed; compile errors as
StrataError, and the GIL left free while they run."""
import os
import re
import shutil
import threading
import time

import pytest

import strata_mc as strata
from strata_mc import StrataError

from conftest import ROOT, run_job

GAUSS_C = os.path.join(ROOT, "examples", "integrands", "gauss.c")
THREE_C = os.path.join(ROOT, "tests", "integrands", "three.c")


def job(tmp_path, integrand, function, extra=""):
    shutil.copy(integrand, tmp_path)
    p = tmp_path / "job.ini"
    p.write_text("""[integral]
integrand = file:%s
function = %s
%s
[vegas]
neval = 20000
maxiter = 7
skip = 2
seed = 7
epsrel = 0
[run]
backend = cpu
""" % (os.path.basename(integrand), function, extra))
    return p


def report_of(text):
    """The table and summary of `strata run`'s output or of summary(): from
    the table's header to the JSON line, the run's time left out (the
    program and the binding each time their own run)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("itn   integral"))
    return [re.sub(r"evaluations, [0-9.]+ s$", "evaluations, T s", l)
            for l in lines[start:] if not l.startswith("{")]


def test_same_bits_as_strata_run(strata_bin, tmp_path):
    j = job(tmp_path, GAUSS_C, "gauss", "dim = 4\nparams = 100")
    js, out = run_job(strata_bin, j, tmp_path)
    src = strata.Source.from_file(tmp_path / "gauss.c", "gauss", params=[100])
    s = strata.Integrator(src, [[0, 1]] * 4, neval=20000, maxiter=7, skip=2, seed=7, epsrel=0,
                          backend="cpu")
    r = s.integrate()
    assert s.backend == "cpu" and r.backend == "cpu"
    # The JSON has 17 digits: it gives back the double exactly.
    assert r.mean == js["integral"] and r.sdev == js["sigma"]
    assert r.chi2_dof == js["chi2_dof"] and r.Q == js["Q"] and r.neval == js["neval"]
    assert report_of(r.summary()) == report_of(out)


def test_vector_source_same_bits_as_strata_run(strata_bin, tmp_path):
    j = job(tmp_path, THREE_C, "three", "dim = 3\nparams = 50\nncomp = 3")
    js, out = run_job(strata_bin, j, tmp_path)
    src = strata.Source.from_file(tmp_path / "three.c", "three", params=[50], ncomp=3)
    r = strata.Integrator(src, [[0, 1]] * 3, neval=20000, maxiter=7, skip=2, seed=7,
                          epsrel=0, backend="cpu").integrate()
    assert list(r.mean) == [c["integral"] for c in js["components"]]
    assert list(r.sdev) == [c["sigma"] for c in js["components"]]
    assert r.cov.tolist() == js["covariance"]
    assert report_of(r.summary()) == report_of(out)


def test_checkpoints_pass_between_strata_run_and_python(strata_bin, tmp_path):
    """The same code is the same integrand, whether a job's file: path or
    a Source's string: a checkpoint of either continues in the other, to
    the uninterrupted run's bits."""
    j = job(tmp_path, GAUSS_C, "gauss", "dim = 4\nparams = 100")
    whole, _ = run_job(strata_bin, j, tmp_path)
    src = strata.Source.from_file(tmp_path / "gauss.c", "gauss", params=[100])
    kw = dict(neval=20000, skip=2, seed=7, epsrel=0, backend="cpu")
    # strata run stops after 3 iterations; Python continues to 7.
    run_job(strata_bin, j, tmp_path, "-q", "--set", "vegas.maxiter=3", "--set",
            "run.checkpoint=a.ck.h5")
    r = strata.Integrator(src, [[0, 1]] * 4, maxiter=7, checkpoint=tmp_path / "a.ck.h5",
                          resume="yes", new_stop_keys=True, **kw).integrate()
    assert r.nitn == 7 and (r.mean, r.sdev) == (whole["integral"], whole["sigma"])
    # Python stops after 3; strata run continues to 7.
    strata.Integrator(src, [[0, 1]] * 4, maxiter=3, checkpoint=tmp_path / "b.ck.h5",
                      **kw).integrate()
    js, _ = run_job(strata_bin, j, tmp_path, "-q", "--set", "run.checkpoint=b.ck.h5",
                    "--resume", "--force")
    assert (js["integral"], js["sigma"], js["iterations"]) == (whole["integral"],
                                                                whole["sigma"], 7)


def test_source_pickles_and_threads_agree():
    src = strata.Source.from_file(GAUSS_C, "gauss", params=[100])
    again = __import__("pickle").loads(__import__("pickle").dumps(src))
    assert (again.code, again.function, again.params) == (src.code, src.function, src.params)
    kw = dict(neval=20000, maxiter=6, seed=3, epsrel=0, backend="cpu")
    r1 = strata.Integrator(src, [[0, 1]] * 4, threads=1, **kw).integrate()
    r2 = strata.Integrator(again, [[0, 1]] * 4, threads=2, **kw).integrate()
    assert r1.mean == r2.mean and r1.sdev == r2.sdev


def test_compile_error_names_the_line():
    bad = strata.Source("double f(const double *x, int dim, const double *p)\n"
                        "{\n  return x[0] +;\n}\n", "f")
    with pytest.raises(StrataError) as e:
        strata.Integrator(bad, [[0, 1]])
    assert e.value.code == 1 and ":3" in str(e.value) and "\n" not in str(e.value)


def test_missing_function():
    src = strata.Source("double g(const double *x, int dim, const double *p)"
                        "{ return x[0]; }", "f")
    with pytest.raises(StrataError, match="'f'"):
        strata.Integrator(src, [[0, 1]])


def test_source_runs_without_the_gil():
    """While a C integrand samples, other Python threads run: a ticking
    thread ticks inside the step's window."""
    code = """#include <math.h>
double slow(const double *x, int dim, const double *params)
{
  double s = 0.0;
  for (int k = 0; k < 2000; k++) s += sin(x[0] + k);
  return s;
}
"""
    s = strata.Integrator(strata.Source(code, "slow"), [[0, 1]], neval=100000, maxiter=2,
                          skip=0, threads=1, backend="cpu")
    ticks, window, stop = [], [], threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.002)

    t = threading.Thread(target=tick)
    t.start()
    try:
        t0 = time.perf_counter()
        s.step()
        window = (t0, time.perf_counter())
    finally:
        stop.set()
        t.join()
    span = window[1] - window[0]
    assert span > 0.05, "the step was too short to tell (%.3f s)" % span
    inside = [x for x in ticks if window[0] + 0.01 < x < window[1] - 0.01]
    # A thread shut out by the GIL would tick at most at the interpreter's
    # switch points, none of which lies inside the C call.
    assert len(inside) >= 5, "%d ticks in a %.3f s step" % (len(inside), span)
