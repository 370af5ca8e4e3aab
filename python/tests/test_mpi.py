"""Two MPI ranks through an mpi4py communicator equal one rank to 1e-12
(mpirun --oversubscribe -n 2 python mpi_ranks.py); a stop or a failure on
one rank ends every rank, and nothing hangs."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import HERE

pytest.importorskip("mpi4py")
pytest.importorskip("strata_mc._mpi", reason="this binding was built without MPI")
MPIRUN = shutil.which("mpirun")


def ranks(n, tmp_path):
    out = tmp_path / ("ranks%d.json" % n)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    r = subprocess.run([MPIRUN, "--oversubscribe", "-n", str(n), sys.executable,
                        os.path.join(HERE, "mpi_ranks.py"), str(out)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(out.read_text())


@pytest.mark.skipif(MPIRUN is None, reason="no mpirun")
def test_two_ranks_equal_one(tmp_path):
    one, two = ranks(1, tmp_path), ranks(2, tmp_path)
    for k in ("batch", "vector", "source"):
        a, b = one[k], two[k]
        assert a["nitn"] == b["nitn"] == 7 and a["neval"] == b["neval"]
        for q in ("mean", "sdev", "cov"):
            assert np.allclose(b[q], a[q], rtol=1e-12, atol=0), (k, q, a[q], b[q])
    assert one["stopped"] == two["stopped"] == [True, 3]
    assert one["failed"] == ["ZeroDivisionError"]
    assert two["failed"][1] == "ZeroDivisionError"
    assert two["failed"][0] == ("rank 0: the progress function raised on rank 1, which "
                                "stopped the run after iteration 4")
    # Resumed with check_ranks on: every rank lists all 7 iterations and
    # has rank 0's result, equal to one rank's.
    for n, got in ((1, one["resumed"]), (2, two["resumed"])):
        assert len(got) == n
        for itns, mean, sdev in got:
            assert itns == list(range(1, 8)), (n, itns)
            assert (mean, sdev) == (got[0][1], got[0][2])
    assert np.allclose(two["resumed"][0][1], one["resumed"][0][1], rtol=1e-12, atol=0)
    assert one["resumed"][0][1] == one["batch"]["mean"][0]
    # One rank through MPI is the run without MPI.
    import strata_mc as strata
    r = strata.Integrator(lambda x: np.exp(-50 * ((x - 0.5) ** 2).sum(axis=1)), [[0, 1]] * 3,
                          neval=20000, maxiter=7, skip=2, seed=13, epsrel=0).integrate()
    assert one["batch"]["mean"] == [r.mean] and one["batch"]["sdev"] == [r.sdev]


@pytest.mark.skipif(MPIRUN is None, reason="no mpirun")
def test_failure_on_one_rank_ends_every_rank():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run([MPIRUN, "--oversubscribe", "-n", "2", sys.executable,
                        os.path.join(HERE, "mpi_fail.py")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and "no error" not in r.stdout
    assert "strata: rank 1: ValueError: bad on rank 1 (the integrand raised; integrand 'f' " \
           "returned NaN" in r.stderr, r.stderr


@pytest.mark.skipif(MPIRUN is None, reason="no mpirun")
def test_vegas_form_on_two_ranks():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run([MPIRUN, "--oversubscribe", "-n", "2", sys.executable,
                        os.path.join(HERE, "mpi_vegas.py")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("[")]
    assert len(lines) == 1, r.stdout
    a, b = sorted(json.loads(lines[0]), key=lambda d: d["rank"])
    # One seed drawn for both, and the same results on both.
    assert a["seed"] == b["seed"] and (a["warm"], a["mean"], a["sdev"]) == (
        b["warm"], b["mean"], b["sdev"])
    # The integrand failing on rank 1 alone: every rank raises, none waits.
    assert b["failed"] == "ValueError: bad on rank 1"
    assert a["failed"] == "StrataError: rank 0: the integrand's first call failed on rank 1"
