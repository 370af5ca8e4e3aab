"""Run by test_mpi.py under mpirun: the same runs on every rank, through
an mpi4py communicator; rank 0 writes the results (as exact float reprs)
to the JSON file named by argv[1].  Also a stop asked on one rank only,
and a progress function that fails on one rank only: every rank must
stop, and none hang."""
import json
import os
import sys

import numpy as np
from mpi4py import MPI

import strata_mc as strata

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
KW = dict(neval=20000, maxiter=7, skip=2, seed=13, epsrel=0, backend="cpu")
CODE = """#include <math.h>
double g(const double *x, int dim, const double *params)
{
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += (x[i] - 0.5) * (x[i] - 0.5);
  return exp(-params[0] * s);
}
"""


def gauss(x):
    return np.exp(-50 * ((x - 0.5) ** 2).sum(axis=1))


def moments(x):
    return np.stack([x[:, 0], x[:, 0] * x[:, 1]], axis=1)


def run(f, **kw):
    with strata.Integrator(f, [[0, 1]] * 3, comm=comm, **dict(KW, **kw)) as s:
        r = s.integrate()
        return {"mean": np.atleast_1d(r.mean).tolist(), "sdev": np.atleast_1d(r.sdev).tolist(),
                "cov": r.cov.tolist(), "nitn": r.nitn, "neval": r.neval}


out = {"batch": run(gauss), "vector": run(moments),
       "source": run(strata.Source(CODE, "g", params=[50]), threads=0)}

# A stop asked on the last rank only stops every rank after iteration 3.
s = strata.Integrator(gauss, [[0, 1]] * 3, comm=comm, **KW)
r = s.integrate(lambda it: rank == comm.Get_size() - 1 and it.itn == 3)
out["stopped"] = [r.stopped, r.nitn]
# A progress function failing on the last rank: it stops every rank, the
# exception is raised there, and the others raise StrataError naming it.
try:
    s.integrate(lambda it: 1 / 0 if rank == comm.Get_size() - 1 else None)
    out["failed"] = "no error"
except ZeroDivisionError:
    out["failed"] = "ZeroDivisionError"
except strata.StrataError as e:
    out["failed"] = str(e)
s.close()
fails = comm.gather(out["failed"], root=0)

# A checkpointed run, its ranks' states compared after every iteration,
# stopped after iteration 3 and resumed to the end: every rank's result
# lists all the iterations, the restored ones first.
ck = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "ranks%d.ckpt.h5"
                  % comm.Get_size())
s = strata.Integrator(gauss, [[0, 1]] * 3, comm=comm, checkpoint=ck, check_ranks=True, **KW)
s.integrate(lambda it: it.itn == 3)
s.close()
s = strata.Integrator(gauss, [[0, 1]] * 3, comm=comm, checkpoint=ck, resume="yes",
                      check_ranks=True, **KW)
r = s.integrate()
s.close()
resumed = comm.gather([[it.itn for it in r.iterations], r.mean, r.sdev], root=0)
if rank == 0:
    out["failed"] = fails
    out["resumed"] = resumed
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
