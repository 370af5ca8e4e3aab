# The same work on MPI ranks: run it with  mpirun -n 4 python3 mpi.py.
# Every rank runs the script; the ranks share each iteration's points, and
# every rank holds the same result.
import numpy as np
import strata_mc as vegas


@vegas.lbatchintegrand
def f(x):
    dx2 = np.sum((x - 0.5) ** 2, axis=1)
    return np.exp(-dx2 * 100.) * 1013.2118364296088


integ = vegas.Integrator(4 * [[0, 1]], mpi=True)
integ(f, nitn=10, neval=2e4)              # warm-up
result = integ(f, nitn=10, neval=2e5)
if integ.mpi_rank == 0:
    print(result.summary())
    print('result = %s    Q = %.2f' % (result, result.Q))
