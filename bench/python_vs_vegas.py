#!/usr/bin/env python3
"""strata's Python binding against Lepage's vegas on one integrand, side by
side: the 6-D gaussian exp(-625 sum (x_i - 1/2)^2) on the unit cube (f4 of
the m-CUBES suite), 10 iterations of 1e6 evaluations, the same numpy batch
integrand, one thread (OMP_NUM_THREADS=1).

    python bench/python_vs_vegas.py [--repeat N] [--neval N] [--nitn N] [--seed S]
    python bench/python_vs_vegas.py --short [--repeat N] [--nitn N] [--seed S]
                                    [--only NAME] [--set KEYWORD=VALUE]...

Needs the strata_mc package (pip install ./python) and vegas (pip install
vegas).  Prints each run's time, estimate, sigma and deviation from the
exact value, then the ratio of the median times (wall and CPU: on a shared
machine the CPU time is the steadier) and of the sigmas, and the ratio at
vegas's sigma (time grows as 1/sigma^2): the target is strata at most
0.5 x vegas's time at equal or smaller sigma.  The runs alternate, so that
a load on the machine meets both alike.

--short runs short runs (--nitn, 10 by default: all of them adapting and
all averaged, as vegas does) of long_runs.py's three integrands at neval
2e4 and 2e5 and of the 6-D gaussian at 1e5 and 1e6, each as a vegas
user's script runs them: Integrator(limits)(f, nitn=, neval=) with
vegas.batchintegrand, the same lines under `import vegas` and `import
strata_mc as vegas`.  It prints a row per integrand and neval with the
medians over seeds (--repeat, 5 by default) of sigma and CPU time and the
ratio of the medians of sigma^2 x CPU time, strata's over vegas's (target
<= 0.5).  --set gives strata's Integrator a keyword (a Python literal:
--set peaks=False)."""
import argparse
import ast
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


def vegas_script(module, f, dim, neval, nitn, seed, strata_kw):
    """vegas's calling pattern, the same lines for vegas and for strata_mc
    (imported as vegas): CPU seconds, mean, sdev."""
    if module.__name__ == "vegas":
        np.random.seed(seed)
        integ = module.Integrator([[0, 1]] * dim)
    else:
        integ = module.Integrator([[0, 1]] * dim, seed=seed, **strata_kw)
    c = time.process_time()
    r = integ(module.batchintegrand(f), nitn=nitn, neval=neval)
    return time.process_time() - c, r.mean, r.sdev


def short_runs(a, modules):
    """The --short table: a row per integrand and neval."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import long_runs as lr
    rows = [("gaussian, d = 4, width 0.1", lr.gauss4, 4, 1.0, (2e4, 2e5)),
            ("Lorentzians, d = 6, width 0.02", lr.lorentz6, 6, 1.0, (2e4, 2e5)),
            ("two peaks, d = 8, width 0.1", lr.peaks8, 8, 1.0, (2e4, 2e5)),
            ("gaussian, d = 6, a = 625 (f4)", gauss, DIM, EXACT, (1e5, 1e6))]
    strata_kw = {}
    for kv in a.set:
        k, _, v = kv.partition("=")
        strata_kw[k] = ast.literal_eval(v)
    print("# short runs: vegas's call integ(f, nitn=%d, neval=N), seeds %d to %d, 1 thread; "
          "strata %s%s, vegas %s, numpy %s" % (a.nitn, a.seed, a.seed + a.repeat - 1,
                                              modules["strata"].version,
                                              "".join(" " + kv for kv in a.set),
                                              modules["vegas"].__version__, np.__version__))
    print("| integrand | neval | strata sigma | vegas sigma | strata CPU s | vegas CPU s | "
          "sigma^2 t / vegas | strata pulls within 2 sigma |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for name, f, dim, exact, nevals in rows:
        if a.only and a.only not in name:
            continue
        for neval in nevals:
            runs = {"strata": [], "vegas": []}
            for k in range(a.repeat):
                for who in ("strata", "vegas"):
                    runs[who].append(vegas_script(modules[who], f, dim, int(neval), a.nitn,
                                                  a.seed + k, strata_kw))
            med = {w: (statistics.median(x[2] for x in v), statistics.median(x[0] for x in v),
                       statistics.median(x[2] ** 2 * x[0] for x in v)) for w, v in runs.items()}
            ratio = med["strata"][2] / med["vegas"][2]
            worst = max(worst, ratio)
            within = sum(abs(m - exact) <= 2 * s for _, m, s in runs["strata"])
            print("| %s | %.0e | %.3g | %.3g | %.3f | %.3f | %.2f | %d of %d |"
                  % (name, neval, med["strata"][0], med["vegas"][0], med["strata"][1],
                     med["vegas"][1], ratio, within, a.repeat))
            sys.stdout.flush()
    print("largest ratio %.2f (target <= 0.5)" % worst)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=None)
    p.add_argument("--neval", type=float, default=1e6)
    p.add_argument("--nitn", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--short", action="store_true", help="the short runs' table")
    p.add_argument("--only", default="", help="--short: the rows whose name has this")
    p.add_argument("--set", action="append", default=[], metavar="KEYWORD=VALUE",
                   help="--short: a keyword of strata's Integrator")
    a = p.parse_args()
    try:
        import strata_mc as strata
        import vegas
    except ImportError as e:
        sys.exit("python_vs_vegas: needs %s (pip install ./python vegas)" % e.name)
    if a.short:
        a.repeat = a.repeat or 5
        return short_runs(a, {"strata": strata, "vegas": vegas})
    a.repeat = a.repeat or 3
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
