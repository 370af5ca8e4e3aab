"""Run by test_mpi.py under mpirun -n 2: vegas's form on two ranks.  Rank
0 gathers each rank's seed drawn for it (seed=None), the two calls'
results and what the rank raised when the integrand's first call failed on
rank 1 alone, and prints them as one JSON line (the ranks' own prints
could interleave on mpirun's shared stdout)."""
import json

import numpy as np
from mpi4py import MPI

import strata_mc as strata

comm = MPI.COMM_WORLD
rank = comm.Get_rank()


@strata.lbatchintegrand
def f(x):
    return np.exp(-50.0 * ((x - 0.5) ** 2).sum(axis=1)) * (50.0 / np.pi) ** 1.5


integ = strata.Integrator(3 * [[0, 1]], mpi=True)
warm = integ(f, nitn=4, neval=4000)
r = integ(f, nitn=4, neval=8000)


def g(x):
    if rank == 1:
        raise ValueError("bad on rank 1")
    return x[0]


try:
    integ(g, nitn=1, neval=1000)
    failed = "no error"
except (ValueError, strata.StrataError) as e:
    failed = "%s: %s" % (type(e).__name__, e)
ranks = comm.gather(dict(rank=rank, seed=r.seed, warm=warm.mean, mean=r.mean, sdev=r.sdev,
                         failed=failed), root=0)
if rank == 0:
    print(json.dumps(ranks), flush=True)
