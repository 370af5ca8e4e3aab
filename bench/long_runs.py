#!/usr/bin/env python3
"""Long runs against Lepage's vegas: does the error per iteration keep
falling?  Three integrands (a 4-D gaussian of width 0.1 at (0.3, 0.4, 0.5,
0.6); a 6-D product of Lorentzians of half-width 0.02 at 0.5 + 0.03 k; two
gaussians of width 0.1 at 1/3 and 2/3 on the diagonal of the 8-D cube),
each normalised to 1 on the unit cube, 5 + 25 iterations (vegas: nitn=30,
the first 5 dropped from its weighted average as strata's skip=5 drops
them), one thread.  strata runs the program with the integrand as inline C
(compiled once, then cached: a first run per integrand is not timed);
vegas the same integrand as a numpy batch function.  CPU times: strata's
process (start-up included), vegas's integrator call (its map made and its
iterations run).  Beside them, the integration alone on either side:
strata's iterations (the run's time_s, wall clock on one thread, the
program's start-up and the job's set-up left out) against the same vegas
call.

    python bench/long_runs.py [--neval 2e4,2e5] [--seeds 3] [--only NAME]
    python bench/long_runs.py --check     # strata alone: exits 1 if the
                                          # gaussian's error per iteration at
                                          # 2e4 falls less than 2x from
                                          # iteration 10 to 30

STRATA (default ./strata) names the program, STRATA_OPTS adds options
(e.g. "--set vegas.adapt_iters=30").  Prints per integrand and
neval the median over seeds of: the final sigma, the CPU time, the error
per iteration at iterations 10 and 30, and the ratio
(sigma^2 x CPU time) strata / vegas (target <= 0.5), the ratio of the
errors per iteration at iteration 30 (target <= 1), and strata's fall of
the error per iteration from iteration 10 to 30 (the gaussian at 2e4:
target >= 2)."""
import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

os.environ["OMP_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402

NITN, SKIP = 30, 5
W = 0.02
SG = 0.1


def _gnorm(c, s):
    return s * math.sqrt(math.pi / 2) * (math.erf((1 - c) / (s * math.sqrt(2)))
                                         + math.erf(c / (s * math.sqrt(2))))


def _lnorm(c, w):
    return (math.atan((1 - c) / w) + math.atan(c / w)) / math.pi


G_C = [0.3, 0.4, 0.5, 0.6]
L_C = [0.5 + 0.03 * k for k in range(6)]
P_C = [1 / 3, 2 / 3]


def gauss4(x):
    d = x - np.array(G_C)
    return np.exp(-np.einsum("ij,ij->i", d, d) / (2 * SG * SG)) / math.prod(_gnorm(c, SG) for c in G_C)


def lorentz6(x):
    d = x - np.array(L_C)
    return np.prod((W / math.pi) / (d * d + W * W), axis=1) / math.prod(_lnorm(c, W) for c in L_C)


def peaks8(x):
    f = 0.0
    for c in P_C:
        d = x - c
        f = f + np.exp(-np.einsum("ij,ij->i", d, d) / (2 * SG * SG)) / _gnorm(c, SG) ** 8
    return f / 2


def _c_gauss():
    z = math.prod(_gnorm(c, SG) for c in G_C)
    return ("double s = 0; for (int i = 0; i < 4; i++) { double d = x[i] - (0.3 + 0.1 * i); "
            "s += d * d; } return exp(-s / (2 * %r)) / %r;" % (SG * SG, z))


def _c_lorentz():
    z = math.prod(_lnorm(c, W) for c in L_C)
    return ("double f = 1; for (int i = 0; i < 6; i++) { double d = x[i] - (0.5 + 0.03 * i); "
            "f *= (%r / M_PI) / (d * d + %r); } return f / %r;" % (W, W * W, z))


def _c_peaks():
    b = "double f = 0, s;"
    for c in P_C:
        b += (" s = 0; for (int i = 0; i < 8; i++) { double d = x[i] - %r; s += d * d; }"
              " f += exp(-s / (2 * %r)) / %r;" % (c, SG * SG, _gnorm(c, SG) ** 8))
    return b + " return f / 2;"


INTEGRANDS = {
    "gauss4": (4, gauss4, _c_gauss),
    "lorentz6": (6, lorentz6, _c_lorentz),
    "peaks8": (8, peaks8, _c_peaks),
}


def run_strata(name, neval, seed):
    """The CPU time of a run without a log (writing the log costs more than
    the integration at 2e4), and the errors per iteration from a second
    run of the same seed with one: the same bits."""
    dim, _, body = INTEGRANDS[name]
    prog = os.environ.get("STRATA", "./strata")
    cmd = [prog, "run", "--json", "-q", "-t", "1",
           "--set", "integral.integrand=inline", "--set", "integral.body=" + body(),
           "--set", "integral.dim=%d" % dim, "--set", "vegas.neval=%d" % neval,
           "--set", "vegas.maxiter=%d" % NITN, "--set", "vegas.epsrel=0",
           "--set", "vegas.skip=%d" % SKIP, "--set", "vegas.seed=%d" % seed]
    cmd += os.environ.get("STRATA_OPTS", "").split()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    j = json.loads(out.splitlines()[-1])
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "run.h5")
        again = subprocess.run(cmd + ["--set", "run.log=" + log], check=True,
                               capture_output=True, text=True).stdout
        rows = subprocess.run([prog, "log", "--csv", log], check=True, capture_output=True,
                              text=True).stdout.splitlines()
    if json.loads(again.splitlines()[-1])["integral"] != j["integral"]:
        sys.exit("long_runs: %s seed %d: the logged run differs" % (name, seed))
    col = rows[0].split(",").index("sigma")
    its = [float(r.split(",")[col]) for r in rows[1:]]
    return cpu, j["integral"], j["sigma"], its, j["time_s"]


def run_vegas(name, neval, seed):
    import vegas
    dim, fn, _ = INTEGRANDS[name]
    np.random.seed(seed)
    f = vegas.batchintegrand(fn)
    c = time.process_time()
    integ = vegas.Integrator([[0, 1]] * dim)
    r = integ(f, nitn=NITN, neval=neval)
    cpu = time.process_time() - c
    kept = r.itn_results[SKIP:]
    wsum = sum(1 / x.sdev ** 2 for x in kept)
    mean = sum(x.mean / x.sdev ** 2 for x in kept) / wsum
    return cpu, mean, 1 / math.sqrt(wsum), [x.sdev for x in r.itn_results], cpu


def check(seeds):
    """The map keeps improving on a long run: the 4-D gaussian's error per
    iteration at neval 2e4 (median over seeds) falls at least 2x from
    iteration 10 to iteration 30; a map held at 100 increments lets it rise."""
    run_strata("gauss4", 1000, 1)
    rows = [run_strata("gauss4", 20000, s) for s in range(1, seeds + 1)]
    e10 = statistics.median(r[3][9] for r in rows)
    e30 = statistics.median(r[3][29] for r in rows)
    ok = e10 >= 2 * e30
    print("long_runs --check: gauss4 at 2e4, error per iteration %.3g at 10, %.3g at 30: "
          "falls %.2fx (at least 2x wanted): %s" % (e10, e30, e10 / e30, "ok" if ok else "FAIL"))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--neval", default="2e4,2e5")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--only", default="")
    p.add_argument("--no-vegas", action="store_true")
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    if a.check:
        sys.exit(check(a.seeds))
    names = [n for n in INTEGRANDS if not a.only or n in a.only.split(",")]
    print("| integrand | neval | who | sigma | cpu_s | run_s | err it10 | err it30 | pull | "
          "s2t/vegas | s2t/vegas, runs | it30/vegas | it10/it30 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        run_strata(name, 1000, 1)  # compile and cache the integrand
        for ne in (int(float(v)) for v in a.neval.split(",")):
            med = {}
            for who, fn in (("strata", run_strata), ("vegas", run_vegas)):
                if who == "vegas" and a.no_vegas:
                    continue
                rows = [fn(name, ne, s) for s in range(1, a.seeds + 1)]
                m = {"sig": statistics.median(r[2] for r in rows),
                     "cpu": statistics.median(r[0] for r in rows),
                     "run": statistics.median(r[4] for r in rows),
                     "e10": statistics.median(r[3][9] for r in rows),
                     "e30": statistics.median(r[3][29] for r in rows),
                     "pull": statistics.median((r[1] - 1) / r[2] for r in rows)}
                med[who] = m
                extra = "| | | |"
                if who == "vegas" or a.no_vegas:
                    s = med["strata"]
                    v = med.get("vegas")
                    extra = "| %s | %s | %s | %.2f |" % (
                        "%.3f" % (s["sig"] ** 2 * s["cpu"] / (v["sig"] ** 2 * v["cpu"])) if v else "-",
                        "%.3f" % (s["sig"] ** 2 * s["run"] / (v["sig"] ** 2 * v["run"])) if v else "-",
                        "%.2f" % (s["e30"] / v["e30"]) if v else "-", s["e10"] / s["e30"])
                print("| %s | %.0e | %s | %.3g | %.3f | %.3f | %.3g | %.3g | %+.2f %s" % (
                    name, ne, who, m["sig"], m["cpu"], m["run"], m["e10"], m["e30"], m["pull"],
                    extra))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
