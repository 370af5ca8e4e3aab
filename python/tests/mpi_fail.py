"""Run by test_mpi.py under mpirun -n 2: the integrand raises on rank 1
only, while rank 0 waits for its sums; every rank must end, with one line
naming rank 1."""
import numpy as np
from mpi4py import MPI

import strata_mc as strata

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
calls = [0]


def f(x):
    calls[0] += 1
    if rank == 1 and calls[0] == 4:
        raise ValueError("bad on rank 1")
    return np.asarray(x[:, 0])


strata.Integrator(f, [[0, 1]] * 2, comm=comm, neval=20000, batch=1000, maxiter=5,
                  skip=1).integrate()
print("rank %d: no error" % rank)
