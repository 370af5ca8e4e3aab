#!/usr/bin/env python3
"""Runs an integrator over instances of the peaks family and writes one JSON
line per run (instance, settings, result, claim, pull).

    baseline.py strata|strata-off|vegas|proto OUT.jsonl [--set report] [--count N]
        [--first I] [--neval 1e3,3e3,...] [--epsrel 5e-2,1e-2,1e-3]
        [--seeds R] [--jobs J] [--maxiter 30] [--rerun-budget [MIN_NEVAL]]

- strata: the program (STRATA, default ./strata) with its defaults (the
  peak search on) and `--json`: `converged` is its claim; strata-off the
  same with peaks.search = off (strata without the search).  Both run on
  the CPU backend with one thread, or on the backend STRATA_BACKEND names
  (cuda: the run's GPU, the search asked for with peaks.search = on).
- vegas: Lepage's vegas (the `vegas` package), one call of `neval`
  evaluations per iteration with its default adaptation (alpha 0.5, beta
  0.75: vegas+), seeded with gvar.ranseed.  It makes no claim of its own;
  the claim here mirrors strata's stopping rule (doc/algorithm.md,
  "Stopping"): the first `skip` = 5 iterations are warm-up, the rest are
  averaged with inverse-variance weights (vegas's own RAverage), and the run
  claims convergence after the first iteration at which at least two are
  kept, Q >= min_q = 0.01 and sdev <= epsrel |mean|; otherwise it ends
  unclaimed at `maxiter` (30).  strata's refinements (neighbours' errors as
  weights, restarts, the lost-peak and thin rules) are not mirrored.
- proto: bench/peaks/proto.py's multichannel prototype (its claim rule is
  described there; PEAKS_GATE sets its GATE).

vegas and proto make one run per instance, neval and seed, to the smallest
epsrel, and read the other epsrels' verdicts from its trace of iterations
(their sampling does not depend on epsrel); strata runs once per epsrel.
Runs are appended as they finish; a run already in OUT (same instance,
neval, epsrel, seed, method) is not redone, so an interrupted sweep resumes.

--rerun-budget (strata and strata-off) then takes every run in OUT at
neval >= MIN_NEVAL (default 3e4) that ended without a claim but named a
budget -- the thin rule's `thin_neval` or the gate's `peaks_neval`, the
"neval N per iteration gives ..." of the program's summary -- and runs the
same instance, seed and epsrel again with vegas.neval raised to it (the
larger where both are named), as the program tells its user to.  Each rerun
is one more line with `rerun_of` (the first run's key) and `rerun_neval`;
summary.py counts a first run whose rerun claims within 3 sigma towards the
issue's (B).  A run of an older OUT without the budgets in its line is made
again first to read them (the same seed gives the same run).
"""
import os

# one BLAS thread per worker: on a small shared machine, idle BLAS threads
# spinning beside the workers slowed the prototype threefold
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, ProcessPoolExecutor

import numpy as np
from scipy.special import gammaincc

import family

SKIP, MIN_Q = 5, 0.01


def instances_dir():
    d = os.environ.get("PEAKS_DIR", "/tmp/peaks-family")
    os.makedirs(d, exist_ok=True)
    return d


def ensure_files(which, i):
    """The instance's files, written on first use."""
    seed = family.seed_of(which, i)
    base = os.path.join(instances_dir(), f"{which}-{seed}")
    if not os.path.exists(base + ".json"):
        family.write(instances_dir(), which, 1, i)
    with open(base + ".json") as fh:
        return base, json.load(fh)


def run_strata(base, inst, neval, epsrels, seed, maxiter):
    return [_strata(base, neval, e, seed, maxiter, "on") for e in epsrels]


def run_strata_off(base, inst, neval, epsrels, seed, maxiter):
    return [_strata(base, neval, e, seed, maxiter, "off") for e in epsrels]


def _strata(base, neval, epsrel, seed, maxiter, search):
    strata = os.environ.get("STRATA", "./strata")
    backend = os.environ.get("STRATA_BACKEND", "cpu")
    cmd = [strata, "run", "-q", "--json", base + ".ini", "--set", f"run.backend={backend}", "-t", "1",
           "--set", f"vegas.neval={neval:g}", "--set", f"vegas.epsrel={epsrel:g}",
           "--set", f"vegas.seed={seed}", "--set", f"vegas.maxiter={maxiter}",
           "--set", f"peaks.search={search}"]
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1) or not p.stdout.strip():
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return dict(integral=r["integral"], sigma=r["sigma"], converged=bool(r["converged"]),
                neval_total=r.get("neval"), iterations=r.get("iterations"),
                seconds=time.time() - t, search_evals=r.get("search_evals"),
                modes=len(r.get("modes") or []), khat=r.get("khat"),
                extra={k: r[k] for k in ("lost", "thin", "thin_neval", "peaks_held", "peaks_reason",
                                         "peaks_neval") if k in r})


def named_budget(r):
    """The evaluations per iteration at which a run without a claim says a
    rerun can make one (the larger of the thin rule's and the gate's), or
    None; "unknown" for a line written before the budgets were recorded."""
    x = r.get("extra") or {}
    if r.get("converged") or r.get("integral") is None:
        return None
    if "thin_neval" not in x and (x.get("thin") or x.get("peaks_held")):
        return "unknown"
    named = [v for v in (x.get("thin_neval"), x.get("peaks_neval")) if v]
    return max(named) if named else None


def running_average(its):
    """Inverse-variance average of (I, sigma) pairs: mean, sdev, Q."""
    i = np.array([a for a, _ in its])
    s = np.array([b for _, b in its])
    w = 1 / s**2
    mean = float(np.sum(w * i) / np.sum(w))
    sdev = float(np.sum(w) ** -0.5)
    chi2 = float(np.sum((i - mean) ** 2 * w))
    q = float(gammaincc((len(its) - 1) / 2, chi2 / 2)) if len(its) > 1 else float("nan")
    return mean, sdev, q


def claims(its, epsrel):
    """strata's stopping rule on kept iterations."""
    if len(its) < 2:
        return False
    mean, sdev, q = running_average(its)
    return q >= MIN_Q and sdev <= epsrel * abs(mean)


def verdicts(trace, epsrels, skip=SKIP, gate=None):
    """The run each epsrel would have made from one run's trace of
    iterations (I, sigma, evaluations so far): the map's path does not
    depend on epsrel, so a run to the smallest epsrel holds the others.
    gate(k), when given, must also hold for a claim after iteration k."""
    out = []
    for e in epsrels:
        kept, conv = [], False
        for k, (i, s, _) in enumerate(trace):
            if k >= skip and s > 0:
                kept.append((i, s))
            if claims(kept, e) and (gate is None or gate(k)):
                conv = True
                break
        if kept:
            mean, sdev, _ = running_average(kept)
        else:
            mean, sdev = trace[k][0], trace[k][1]
        out.append(dict(integral=mean, sigma=sdev, converged=conv, neval_total=trace[k][2],
                        iterations=k + 1))
    return out


def run_vegas(base, inst, neval, epsrels, seed, maxiter):
    import gvar
    import vegas
    f = family.Density(family.from_json(inst))

    @vegas.lbatchintegrand
    def fb(x):
        return f(x)

    gvar.ranseed(seed)
    integ = vegas.Integrator(inst["d"] * [[0.0, 1.0]])
    t = time.time()
    trace, kept, total = [], [], 0
    for k in range(maxiter):
        r = integ(fb, nitn=1, neval=int(neval))
        total += int(r.sum_neval)
        trace.append((r.mean, r.sdev, total))
        if k >= SKIP and r.sdev > 0:
            kept.append((r.mean, r.sdev))
        if claims(kept, min(epsrels)):
            break
    out = verdicts(trace, epsrels)
    for o in out:
        o["seconds"] = (time.time() - t) * o["iterations"] / len(trace)
    return out


def run_proto(base, inst, neval, epsrels, seed, maxiter):
    import proto
    proto.GATE = os.environ.get("PEAKS_GATE", proto.GATE)
    return proto.integrate(family.from_json(inst), neval=int(neval), epsrels=epsrels, seed=seed,
                           maxiter=maxiter)


RUNNERS = {"strata": run_strata, "strata-off": run_strata_off, "vegas": run_vegas,
           "proto": run_proto}


def one(args):
    """The runs of one instance, neval and seed, one per epsrel."""
    method, which, i, neval, epsrels, seed, maxiter = args
    base, inst = ensure_files(which, i)
    try:
        rs = RUNNERS[method](base, inst, neval, epsrels, seed, maxiter)
    except Exception as e:  # a failed run is recorded, not dropped
        rs = [dict(integral=None, sigma=None, converged=False, error=str(e))] * len(epsrels)
    out = []
    for e, r in zip(epsrels, rs):
        pull = None
        if r.get("integral") is not None and r.get("sigma") and r["sigma"] > 0:
            pull = (r["integral"] - inst["exact"]) / r["sigma"]
        out.append(dict(method=method, set=which, seed=inst["seed"], d=inst["d"], K=inst["K"],
                        kind=inst["kind"], exact=inst["exact"], neval=neval, epsrel=e,
                        run_seed=seed, pull=pull, **r))
    return out


def key(r):
    return (r["method"], r["seed"], float(r["neval"]), float(r["epsrel"]), r["run_seed"])


def rerun(args):
    """A run without a claim made again at the budget it named: the rerun's
    line, or None where it named none."""
    r, maxiter = args
    base, inst = ensure_files(r["set"], r["seed"] - family.SETS[r["set"]])
    search = "off" if r["method"] == "strata-off" else "on"
    budget = named_budget(r)
    if budget == "unknown":
        first = _strata(base, r["neval"], r["epsrel"], r["run_seed"], maxiter, search)
        budget = named_budget(first)
    if budget is None:
        return None
    try:
        out = _strata(base, budget, r["epsrel"], r["run_seed"], maxiter, search)
    except Exception as e:
        out = dict(integral=None, sigma=None, converged=False, error=str(e))
    pull = None
    if out.get("integral") is not None and out.get("sigma") and out["sigma"] > 0:
        pull = (out["integral"] - inst["exact"]) / out["sigma"]
    return dict(rerun_of=list(key(r)), rerun_neval=budget, **{k: r[k] for k in (
        "method", "set", "seed", "d", "K", "kind", "exact", "neval", "epsrel", "run_seed")},
        pull=pull, **out)


def rerun_budgets(out, method, min_neval, jobs, maxiter):
    """The second pass of --rerun-budget over OUT (its docstring above)."""
    with open(out) as fh:
        lines = [json.loads(line) for line in fh if line.strip()]
    done = {tuple(r["rerun_of"]) for r in lines if "rerun_of" in r}
    todo = [(r, maxiter) for r in lines if "rerun_of" not in r and r["method"] == method
            and r["neval"] >= min_neval and key(r) not in done and named_budget(r) is not None]
    with ThreadPoolExecutor(max_workers=jobs) as ex, open(out, "a") as fh:
        for r in ex.map(rerun, todo):
            if r is not None:
                fh.write(json.dumps(r) + "\n")
                fh.flush()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("method", choices=sorted(RUNNERS))
    ap.add_argument("out")
    ap.add_argument("--set", dest="which", default="report", choices=sorted(family.SETS))
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--neval", default="1e3,3e3,1e4,3e4,1e5")
    ap.add_argument("--epsrel", default="5e-2,1e-2,1e-3")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--maxiter", type=int, default=30)
    ap.add_argument("--rerun-budget", nargs="?", type=float, const=3e4, default=None,
                    metavar="MIN_NEVAL")
    a = ap.parse_args(argv)
    if a.rerun_budget is not None and not a.method.startswith("strata"):
        ap.error("--rerun-budget: only strata and strata-off name budgets")
    done = set()
    if os.path.exists(a.out):
        with open(a.out) as fh:
            done = {key(r) for r in map(json.loads, filter(str.strip, fh)) if "rerun_of" not in r}
    todo = []
    epsrels = [float(v) for v in a.epsrel.split(",")]
    for i in range(a.first, a.first + a.count):
        for ne in (float(v) for v in a.neval.split(",")):
            for s in range(1, a.seeds + 1):
                if any((a.method, family.seed_of(a.which, i), ne, e, s) not in done for e in epsrels):
                    todo.append((a.method, a.which, i, ne, epsrels, s, a.maxiter))
    for i in range(a.first, a.first + a.count):   # files before the workers race for them
        ensure_files(a.which, i)
    pool = ThreadPoolExecutor if a.method.startswith("strata") else ProcessPoolExecutor
    with pool(max_workers=a.jobs) as ex, open(a.out, "a") as fh:
        for rs in ex.map(one, todo):
            for r in rs:
                fh.write(json.dumps(r) + "\n")
            fh.flush()
    if a.rerun_budget is not None:
        rerun_budgets(a.out, a.method, a.rerun_budget, a.jobs, a.maxiter)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
