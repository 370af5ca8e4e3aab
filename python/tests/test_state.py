"""State: pickling through the library's save buffer and HDF5 checkpoints
continue exactly where they were; a checkpoint of another run is refused;
maps move between runs."""
import pickle

import numpy as np
import pytest

import strata_mc as strata
from strata_mc import StrataError

KW = dict(neval=10000, maxiter=9, skip=2, seed=21, epsrel=0)


def peak(x):
    return np.exp(-80 * ((x - 0.3) ** 2).sum(axis=1))


def moments(x):
    return np.stack([x[:, 0], x[:, 0] * x[:, 1]], axis=1)


def same_run(a, b):
    """Two results equal bit for bit, iteration by iteration."""
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.sdev, b.sdev)
    assert np.array_equal(a.cov, b.cov) and a.nitn == b.nitn and a.neval == b.neval
    assert [(i.itn, i.integral, i.sigma) for i in a.iterations] == \
        [(i.itn, i.integral, i.sigma) for i in b.iterations]


@pytest.mark.parametrize("f", [peak, moments])
def test_pickle_round_trip_continues_exactly(f):
    full = strata.Integrator(f, [[0, 1]] * 3, **KW).integrate()
    s = strata.Integrator(f, [[0, 1]] * 3, **KW)
    for _ in range(4):
        s.step()
    data = pickle.dumps(s)
    s.close()
    again = pickle.loads(data)
    assert [i.itn for i in again.iterations] == [1, 2, 3, 4]
    same_run(again.integrate(), full)


def test_checkpoint_resume_equals_the_uninterrupted_run(tmp_path):
    full = strata.Integrator(peak, [[0, 1]] * 3, **KW).integrate()
    s = strata.Integrator(peak, [[0, 1]] * 3, **KW)
    for _ in range(5):
        s.step()
        s.save(tmp_path / "run.h5")
    s.close()  # as if killed after the checkpoint
    t = strata.Integrator(peak, [[0, 1]] * 3, **KW)
    t.load(tmp_path / "run.h5")
    assert len(t.iterations) == 5
    same_run(t.integrate(), full)


def test_checkpoint_of_another_run_is_refused(tmp_path):
    s = strata.Integrator(peak, [[0, 1]] * 3, **KW)
    s.step()
    s.save(tmp_path / "run.h5")
    other = strata.Integrator(peak, [[0, 1]] * 3, **dict(KW, seed=22))
    other.step()
    before = other.result.mean
    with pytest.raises(StrataError) as e:
        other.load(tmp_path / "run.h5")
    assert "seed" in str(e.value) and "run.h5" in str(e.value)
    assert other.result.mean == before and len(other.iterations) == 1  # left as it was
    with pytest.raises(StrataError) as e:
        other.load(tmp_path / "missing.h5")
    assert e.value.code == 5 and "missing.h5" in str(e.value)
    with pytest.raises(StrataError):
        other.load_state(b"not a state")


def test_map_moves_between_runs():
    train = strata.Integrator(peak, [[0, 1]] * 3, **dict(KW, maxiter=5, adapt_iters=5))
    train.integrate()
    edges = train.map
    assert edges.shape[0] == 3 and np.all(np.diff(edges, axis=1) > 0)
    assert np.allclose(edges[:, [0, -1]], [0, 1])
    s = strata.Integrator(peak, [[0, 1]] * 3, **dict(KW, adapt_iters=0, skip=0))
    s.set_map(edges)
    assert np.array_equal(s.map, edges)
    r = s.integrate()
    fresh = strata.Integrator(peak, [[0, 1]] * 3, **dict(KW, adapt_iters=0, skip=0)).integrate()
    # The trained map gives a smaller error than the uniform one.
    assert r.sdev < fresh.sdev
    with pytest.raises(StrataError, match="the map given"):
        strata.Integrator(peak, [[0, 1]] * 3, **KW).set_map(edges[:2])
