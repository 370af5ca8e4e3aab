#!/usr/bin/env python3
"""bench/histogram.py's histogram from Python: a numpy batch integrand of
1000 components through the binding (strata_mc), its bins' errors and
what it costs.

    python3 bench/python_histogram.py coverage [--seeds 50] [--neval 1e5] [--bins 1000]
    python3 bench/python_histogram.py cost [--neval 1e5] [--bins 1000] [--maxiter 4]

The integrand and the run are bench/histogram.py's: the gaussian peak
exp(-a |x - 1/2|^2) in d = 4 (a = 16) binned in x_1, each bin exact from
erf; adapt_comp=-1 (the sum), 10 iterations of neval, 3 skipped, all
adapting, one thread; here a numpy function returning (n, bins) with one
nonzero value per row.

coverage: over the seeds, the fraction of bins within 1, 2 sigma of their
exact values (68.27%, 95.45% for honest errors), the pulls' spread, and
the pull of the sum of all bins with its error from the whole covariance
(r.cov).  cost: one run's CPU time per iteration (the process's, the
library's sampling and the integrand's numpy together), its wall time, and
the process's peak memory (maximum resident set), beside the C program's
in bench/histogram.py cost."""
import argparse
import math
import os
import resource
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import histogram as c_histogram  # noqa: E402 - the C version's integrand and constants

import strata_mc as strata  # noqa: E402

DIM, A = c_histogram.DIM, c_histogram.A


def integrand(bins):
    @strata.lbatchintegrand
    def f(x):
        out = np.zeros((len(x), bins))
        k = np.minimum((x[:, 0] * bins).astype(np.intp), bins - 1)
        out[np.arange(len(x)), k] = np.exp(-A * ((x - 0.5) ** 2).sum(axis=1))
        return out
    return f


def run(bins, neval, seed, maxiter):
    skip = min(c_histogram.SKIP, maxiter - 1)
    with strata.Integrator(integrand(bins), DIM * [[0.0, 1.0]], neval=int(neval),
                           maxiter=maxiter, skip=skip, adapt_iters=maxiter, adapt_comp=-1,
                           seed=seed, threads=1) as s:
        return s.integrate()


def coverage(args):
    exact = np.array(c_histogram.exact_bins(args.bins))
    total = exact.sum()
    pulls, sum_pulls = [], []
    for seed in range(1, args.seeds + 1):
        r = run(args.bins, args.neval, seed, args.maxiter)
        ok = r.sdev > 0
        pulls.append((r.mean[ok] - exact[ok]) / r.sdev[ok])
        err = math.sqrt(r.cov.sum())
        sum_pulls.append((r.mean.sum() - total) / err)
        print("seed %d: sum of bins %.6g +- %.3g, exact %.6g" % (seed, r.mean.sum(), err, total),
              flush=True)
    p = np.concatenate(pulls)
    print("bins: %d pulls over %d seeds: within 1 sigma %.4f (68.27%%), within 2 sigma %.4f "
          "(95.45%%), spread %.4f (1), mean %+.4f (0)"
          % (len(p), args.seeds, np.mean(np.abs(p) < 1), np.mean(np.abs(p) < 2), np.std(p),
             np.mean(p)))
    print("sum of bins: pulls' mean %+.3f, spread %.3f (1 for the right error; %d seeds)"
          % (statistics.fmean(sum_pulls), statistics.pstdev(sum_pulls), args.seeds))


def cost(args):
    t0, c0 = time.perf_counter(), time.process_time()
    r = run(args.bins, args.neval, 1, args.maxiter)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("%d bins, %d iterations of %g: CPU %.3f s/iteration, wall %.3f s/iteration, "
          "library's time %.3f s/iteration, peak memory %.1f MB"
          % (args.bins, r.nitn, args.neval, cpu / r.nitn, wall / r.nitn, r.time_s / r.nitn,
             peak))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["coverage", "cost"])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--neval", type=float, default=1e5)
    ap.add_argument("--bins", type=int, default=1000)
    ap.add_argument("--maxiter", type=int, default=c_histogram.MAXITER)
    args = ap.parse_args()
    coverage(args) if args.what == "coverage" else cost(args)


if __name__ == "__main__":
    sys.exit(main())
