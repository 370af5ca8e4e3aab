#!/usr/bin/env python3
"""strata's Python binding against Lepage's vegas on one integrand, side by
side: the 6-D gaussian exp(-625 sum (x_i - 1/2)^2) on the unit cube (f4 of
the m-CUBES suite), 10 iterations of 1e6 evaluations, the same numpy batch
integrand, one thread (OMP_NUM_THREADS=1).

    python bench/python_vs_vegas.py [--repeat N] [--neval N] [--nitn N] [--seed S]

Needs the strata_mc package (pip install ./python) and vegas (pip install
vegas).  Prints each run's time, estimate, sigma and deviation from the
exact value, then the ratio of the median times (wall and CPU: on a shared
machine the CPU time is the steadier) and of the sigmas, and the ratio at
vegas's sigma (time grows as 1/sigma^2): the target is strata at most
0.5 x vegas's time at equal or smaller sigma.  The runs alternate, so that
a load on the machine meets both alike."""
import argparse
import math
import os
import statistics
import sys
import time

os.environ["OMP_NUM_THREADS"] = "1"  # before numpy and libgomp start threads
for v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"

import numpy as np  # noqa: E402

DIM, A = 6, 625.0
EXACT = (math.sqrt(math.pi / A) * math.erf(math.sqrt(A) / 2)) ** DIM


def gauss(x):
    """points (n, 6) -> values (n,)"""
    d = x - 0.5
    return np.exp(-A * np.einsum("ij,ij->i", d, d))


def run_strata(neval, nitn, seed):
    import strata_mc as strata
    t, c = time.perf_counter(), time.process_time()
    r = strata.Integrator(gauss, [[0, 1]] * DIM, neval=neval, maxiter=nitn, epsrel=0,
                          seed=seed, threads=1).integrate()
    return time.perf_counter() - t, time.process_time() - c, r.mean, r.sdev


def run_vegas(neval, nitn, seed):
    import vegas
    np.random.seed(seed)
    f = vegas.batchintegrand(gauss)
    t, c = time.perf_counter(), time.process_time()
    integ = vegas.Integrator([[0, 1]] * DIM)
    r = integ(f, nitn=nitn, neval=neval)
    return time.perf_counter() - t, time.process_time() - c, r.mean, r.sdev


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--neval", type=float, default=1e6)
    p.add_argument("--nitn", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    try:
        import strata_mc as strata
        import vegas
    except ImportError as e:
        sys.exit("python_vs_vegas: needs %s (pip install ./python vegas)" % e.name)
    print("# 6-D gaussian a=%g, exact %.10g; %d x %.0e evaluations, 1 thread; strata %s, "
          "vegas %s, numpy %s" % (A, EXACT, a.nitn, a.neval, strata.version,
                                  vegas.__version__, np.__version__))
    print("%-7s %4s %9s %9s %22s %11s %9s" % ("who", "rep", "wall_s", "cpu_s", "estimate",
                                             "sigma", "dev/sigma"))
    runs = {"strata": [], "vegas": []}
    for k in range(a.repeat):
        for who, fn in (("strata", run_strata), ("vegas", run_vegas)):
            t, c, m, s = fn(int(a.neval), a.nitn, a.seed + k)
            runs[who].append((t, c, s))
            print("%-7s %4d %9.3f %9.3f %22.15g %11.3g %+9.2f" % (who, k, t, c, m, s,
                                                                 (m - EXACT) / s))
            sys.stdout.flush()
    med = {w: [statistics.median(x[i] for x in v) for i in range(3)] for w, v in runs.items()}
    ss, sv = med["strata"][2], med["vegas"][2]
    print("median sigma: strata %.3g, vegas %.3g, ratio %.3f (target <= 1)" % (ss, sv, ss / sv))
    for i, name in ((0, "wall"), (1, "cpu")):
        ts, tv = med["strata"][i], med["vegas"][i]
        # Monte Carlo time grows as 1/sigma^2: strata's time at vegas's sigma too.
        print("median %s time: strata %.3f s, vegas %.3f s, ratio %.3f; at vegas's sigma "
              "%.3f (target <= 0.5)" % (name, ts, tv, ts / tv, ts * (ss / sv) ** 2 / tv))


if __name__ == "__main__":
    main()
