"""What a run keeps (Integrator's settings, the library's strata_settings):
a resume with new stopping keys equals the uninterrupted run, another
identity is refused, checkpoints are written at their cadence while the
run goes, and a stop (progress, stop(), an exception) leaves a checkpoint
that a resume continues."""
import os
import signal

import numpy as np
import pytest

import strata_mc as strata
from strata_mc import StrataError

h5py = pytest.importorskip("h5py")

BOX = [[0, 1]] * 3


def gauss(x):
    return np.exp(-50.0 * ((x - 0.5) ** 2).sum(axis=1))


def same(a, b):
    """Two results of the same run, bit for bit."""
    assert a.nitn == b.nitn and a.neval == b.neval
    assert (a.mean, a.sdev, a.chi2_dof, a.Q) == (b.mean, b.sdev, b.chi2_dof, b.Q)
    assert [it.integral for it in a.iterations] == [it.integral for it in b.iterations]
    assert [it.itn for it in a.iterations] == list(range(1, a.nitn + 1))


def held(path):
    """The iterations the checkpoint at path holds, or None where there is none."""
    if not os.path.exists(path):
        return None
    with h5py.File(path, "r") as f:
        return int(f.attrs["iterations"])


def test_resume_with_new_stop_keys(tmp_path):
    ck = tmp_path / "run.ck.h5"
    kw = dict(neval=4000, skip=1, seed=21)
    whole = strata.Integrator(gauss, BOX, maxiter=20, epsrel=2e-3, **kw).integrate()
    # The tolerance, not maxiter, ends it: the new epsrel matters.
    assert whole.converged and 4 < whole.nitn < 20
    first = strata.Integrator(gauss, BOX, maxiter=3, epsrel=0, checkpoint=ck, **kw).integrate()
    assert first.nitn == 3 and not first.stopped and held(ck) == 3
    # Other stopping keys are refused unless asked for, and the checkpoint stays.
    before = ck.read_bytes()
    with pytest.raises(StrataError, match="maxiter") as e:
        strata.Integrator(gauss, BOX, maxiter=20, epsrel=2e-3, checkpoint=ck, resume="yes",
                          **kw).integrate()
    assert e.value.name == "EINVAL" and ck.read_bytes() == before
    seen = []
    again = strata.Integrator(gauss, BOX, maxiter=20, epsrel=2e-3, checkpoint=ck, resume="yes",
                              new_stop_keys=True, **kw)
    r = again.integrate(lambda it: seen.append(it.itn))
    same(r, whole)
    assert r.converged and seen == list(range(1, whole.nitn + 1))  # restored ones first
    assert held(ck) == whole.nitn


def test_identity_refused(tmp_path):
    ck = tmp_path / "id.ck.h5"
    kw = dict(neval=4000, maxiter=8, skip=1, epsrel=0, seed=22, checkpoint=ck)
    r = strata.Integrator(gauss, BOX, identity="width=0.1", **kw).integrate(
        lambda it: it.itn == 3)
    assert r.stopped and r.nitn == 3 and held(ck) == 3
    before = ck.read_bytes()
    with pytest.raises(StrataError) as e:
        strata.Integrator(gauss, BOX, identity="width=0.2", resume="yes", **kw).integrate()
    assert "the identity of the caller's data is 'width=0.1' in the checkpoint, " \
           "'width=0.2'" in str(e.value)
    assert e.value.name == "EINVAL" and ck.read_bytes() == before
    with pytest.raises(StrataError, match="identity"):
        strata.Integrator(gauss, BOX, resume="yes", **kw).integrate()
    # One that differs only after a NUL is another identity, not the same one cut short.
    with pytest.raises(StrataError, match="NUL"):
        strata.Integrator(gauss, BOX, identity="width=0.1\0width=0.2", resume="yes",
                          **kw).integrate()
    assert ck.read_bytes() == before
    # The same identity continues it, to the uninterrupted run.
    r = strata.Integrator(gauss, BOX, identity="width=0.1", resume="yes", **kw).integrate()
    whole = strata.Integrator(gauss, BOX, **dict(kw, checkpoint=None)).integrate()
    same(r, whole)
    with pytest.raises(StrataError, match="identity"):
        strata.Integrator(gauss, BOX, identity="two\nlines", **kw)


@pytest.mark.parametrize("cadence", [dict(checkpoint_every=2), dict(checkpoint_every_s=1e-9),
                                     dict()])
def test_checkpoint_cadence(tmp_path, cadence):
    """Once iteration n is reported, the checkpoint due after n-1 is on
    disk and n's on its way: every 2 iterations, every iteration (a
    tiny period), or none before the end; the last iteration's is on disk
    when it is reported."""
    ck = tmp_path / "c.ck.h5"
    seen = {}
    r = strata.Integrator(gauss, BOX, neval=2000, maxiter=9, skip=1, epsrel=0, seed=23,
                          checkpoint=ck, **cadence).integrate(
        lambda it: seen.__setitem__(it.itn, held(ck)))
    assert r.nitn == 9 and held(ck) == 9
    every = 2 if "checkpoint_every" in cadence else 1 if cadence else None
    assert seen.pop(9) == 9 and sorted(seen) == list(range(1, 9))
    for n, k in seen.items():
        if every is None:
            assert k is None, (n, k)
            continue
        due = (n - 1) // every * every or None  # the last one due before n
        assert k == due or (n % every == 0 and k == n), (n, k, cadence)


def test_stop_and_resume(tmp_path):
    """stop() from a signal handler, and an exception in the progress
    function, stop the run with a checkpoint of that iteration; resumes
    continue it to the uninterrupted result."""
    ck = tmp_path / "s.ck.h5"
    kw = dict(neval=4000, maxiter=10, skip=1, epsrel=0, seed=24, checkpoint=ck,
              resume="auto")
    whole = strata.Integrator(gauss, BOX, **dict(kw, checkpoint=None, resume="no")).integrate()
    integ = strata.Integrator(gauss, BOX, **kw)
    old = signal.signal(signal.SIGUSR1, lambda *_: integ.stop())
    try:
        r = integ.integrate(lambda it: it.itn == 3 and os.kill(os.getpid(), signal.SIGUSR1))
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert r.stopped and r.nitn == 3 and held(ck) == 3

    def boom(it):
        if it.itn == 6:
            raise KeyError("at 6")

    with pytest.raises(KeyError, match="at 6"):
        strata.Integrator(gauss, BOX, **kw).integrate(boom)
    assert held(ck) == 6
    # The same Integrator goes on after a stop: resume="auto" takes its checkpoint.
    r = integ.integrate()
    assert not r.stopped
    same(r, whole)
    # A request made while nothing runs stops the next run after one iteration.
    integ2 = strata.Integrator(gauss, BOX, **dict(kw, checkpoint=None, resume="no"))
    integ2.stop()
    assert integ2.integrate().nitn == 1


def test_bad_settings():
    for k, v, msg in [("resume", "maybe", "resume = 'maybe'"),
                      ("checkpoint_every", -1, "checkpoint_every = -1"),
                      ("checkpoint_every_s", float("nan"), "checkpoint_every_s = nan"),
                      ("log_map", 1.5, "log_map = 1.5")]:
        with pytest.raises(StrataError, match=msg):
            strata.Integrator(gauss, BOX, **{k: v})
    with pytest.raises(StrataError, match="needs"):
        strata.Integrator(gauss, BOX, resume="auto").integrate()


def test_ctrl_c_stops_with_checkpoint(tmp_path):
    """SIGINT during a C-source run: KeyboardInterrupt from integrate(),
    the run stopped with a checkpoint of the iteration it raised in, and
    the iterations list ending there too."""
    ck = tmp_path / "i.ck.h5"
    src = strata.Source("#include <math.h>\ndouble g(const double *x, int dim, const double *p)"
                        "\n{ return exp(-50.0 * ((x[0] - 0.5) * (x[0] - 0.5)"
                        " + (x[1] - 0.5) * (x[1] - 0.5))); }\n", "g")
    integ = strata.Integrator(src, BOX, neval=4000, maxiter=10, epsrel=0, seed=25,
                              backend="cpu", checkpoint=ck)
    # Python's handler, also where the tests started with SIGINT ignored (a
    # background job of a shell without job control), which Python keeps.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            integ.integrate(lambda it: it.itn == 3 and os.kill(os.getpid(), signal.SIGINT))
    finally:
        signal.signal(signal.SIGINT, old)
    assert held(ck) == 3 and [it.itn for it in integ.iterations] == [1, 2, 3]
