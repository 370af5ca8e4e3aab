#!/usr/bin/env python3
"""A histogram as a vector integrand: are its bins' errors and covariance
honest, and what does each component cost?

    python3 bench/histogram.py coverage [--seeds 50] [--neval 1e5] [--bins 1000]
    python3 bench/histogram.py cost [--neval 1e5] [--ncomp 8,10,100,300,1000] [--maxiter 4]

Both run ./strata (STRATA overrides) on tests/integrands/histogram.c: the
gaussian peak exp(-a |x - 1/2|^2) in d = 4 (a = 16), histogrammed in x_1,
whose bins have exact values; adapt = sum, 10 iterations, 3 skipped.

coverage: over the seeds, the fraction of bins within 1, 2 sigma of their
exact value (68.3%, 95.4% for honest errors), the spread of the pulls
(1 for honest errors), and the pull of the sum of all bins, whose error
comes from the whole covariance (sum of cov[a][b]): its spread over the
seeds is 1 when the covariance is right; the diagonal alone gives another
error, printed beside it.

cost: per ncomp, the run's wall time per iteration, the whole process's
CPU time (the steadier on a shared machine) and its peak memory
(--maxiter 4 makes it quicker)
(GNU time's maximum resident set), for the histogram (one nonzero
component per sample) and a dense integrand (every component nonzero:
the histogram's peak times 1 + sin(b x_1)/2 in component b), one thread."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "tests", "integrands", "histogram.c")
STRATA = os.environ.get("STRATA", "./strata")
DIM, A, MAXITER, SKIP, ADAPT = 4, 16.0, 10, 3, 10


def exact_bins(bins):
    g = math.sqrt(math.pi / A) * math.erf(math.sqrt(A) / 2)
    r = math.sqrt(A)
    return [g ** (DIM - 1) * math.sqrt(math.pi / A) / 2 *
            (math.erf(r * ((b + 1) / bins - 0.5)) - math.erf(r * (b / bins - 0.5)))
            for b in range(bins)]


def run(function, ncomp, neval, seed, threads, extra=(), timed=False):
    cmd = [STRATA, "run", "-q", "--json",
           "--set", "integral.integrand=file:" + SOURCE,
           "--set", "integral.function=" + function,
           "--set", "integral.form=extended",
           "--set", "integral.ncomp=%d" % ncomp,
           "--set", "integral.params=%g,%d" % (A, ncomp),
           "--set", "integral.dim=%d" % DIM,
           "--set", "integral.adapt=sum",
           "--set", "vegas.neval=%g" % neval,
           "--set", "vegas.maxiter=%d" % MAXITER,
           "--set", "vegas.skip=%d" % SKIP,
           "--set", "vegas.adapt_iters=%d" % ADAPT,
           "--set", "vegas.seed=%d" % seed,
           "--set", "run.threads=%d" % threads] + list(extra)
    rss = None
    with tempfile.NamedTemporaryFile() as t:
        if timed:
            cmd = ["/usr/bin/time", "-f", "%M %U %S", "-o", t.name] + cmd
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        if timed:
            m, u, s = open(t.name).read().split()[-3:]
            rss = (int(m), float(u) + float(s))
    return json.loads(out.strip().splitlines()[-1]), rss


def coverage(args):
    exact = exact_bins(args.bins)
    pulls, sum_pulls, diag_pulls = [], [], []
    total = sum(exact)
    for seed in range(1, args.seeds + 1):
        r, _ = run("histogram", args.bins, args.neval, seed, args.threads)
        comps, cov = r["components"], r["covariance"]
        for b, c in enumerate(comps):
            if c["sigma"] > 0:
                pulls.append((c["integral"] - exact[b]) / c["sigma"])
        s = sum(c["integral"] for c in comps)
        var_full = sum(sum(row) for row in cov)
        var_diag = sum(cov[b][b] for b in range(args.bins))
        sum_pulls.append((s - total) / math.sqrt(var_full))
        diag_pulls.append((s - total) / math.sqrt(var_diag))
        print("seed %d: sum of bins %.6g +- %.3g (diagonal alone: +- %.3g), exact %.6g"
              % (seed, s, math.sqrt(var_full), math.sqrt(var_diag), total), flush=True)
    n = len(pulls)
    in1 = sum(abs(p) < 1 for p in pulls) / n
    in2 = sum(abs(p) < 2 for p in pulls) / n
    print("bins: %d pulls over %d seeds: within 1 sigma %.4f (68.27%%), within 2 sigma %.4f "
          "(95.45%%), spread %.4f (1), mean %+.4f (0)"
          % (n, args.seeds, in1, in2, statistics.pstdev(pulls), statistics.fmean(pulls)))
    print("sum of bins: spread of its pull %.3f with the covariance, %.3f with the diagonal "
          "alone (1 for the right error; %d seeds)"
          % (statistics.pstdev(sum_pulls), statistics.pstdev(diag_pulls), args.seeds))


def cost(args):
    print("%-9s %6s %14s %14s %10s" % ("integrand", "ncomp", "wall s/itn", "CPU s (all)",
                                         "peak MB"))
    for function in ("histogram", "dense"):
        for nc in [int(v) for v in args.ncomp.split(",")]:
            r, (rss, cpu) = run(function, nc, args.neval, 1, 1, timed=True)
            print("%-9s %6d %14.3f %14.2f %10.1f" % (function, nc, r["time_s"] / r["iterations"],
                                                     cpu, rss / 1024.0), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["coverage", "cost"])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--neval", type=float, default=1e5)
    ap.add_argument("--bins", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ncomp", default="8,10,100,300,1000")
    ap.add_argument("--adapt-iters", type=int, default=ADAPT,
                    help="iterations that adapt the map (default %d: all)" % ADAPT)
    ap.add_argument("--maxiter", type=int, default=MAXITER)
    args = ap.parse_args()
    globals()["ADAPT"] = args.adapt_iters
    globals()["MAXITER"] = args.maxiter
    globals()["SKIP"] = min(SKIP, args.maxiter - 1)
    coverage(args) if args.what == "coverage" else cost(args)


if __name__ == "__main__":
    sys.exit(main())
