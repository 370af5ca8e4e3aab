#!/usr/bin/env python3
"""How reachable each peak of an instance is: the share of the unit cube where
it is more than half of f (where a sample shows it), the largest share of a
Student-t channel (nu = 5, strata's) on any other peak that lands there, and
its Mahalanobis distance (in the sum of the covariances) to the nearest
other peak; with --neval, whether a strata run of the instance found it (a
mode within 0.02).  Shares are importance-sampled from the peak itself.

    reach.py SEED[,SEED...] [--neval 3e4 --seed 1 --epsrel 1e-2]

Needs the instances' files (family.py write) in PEAKS_DIR for --neval, and
STRATA (default ./strata)."""
import argparse
import json
import os
import subprocess

import numpy as np
from scipy.stats import multivariate_t

import family

NU = 5


def log_gauss(x, p, d):
    L = np.linalg.cholesky(p["cov"])
    z = np.linalg.solve(L, (x - p["centre"]).T).T
    return -0.5 * (z * z).sum(1) - np.log(np.diag(L)).sum() - 0.5 * d * np.log(2 * np.pi)


def modes_found(seed, args):
    base = os.path.join(os.environ.get("PEAKS_DIR", "/tmp/peaks-family"), f"report-{seed}.ini")
    if family.set_of(seed) != "report":
        base = base.replace("report-", "tuning-")
    cmd = [os.environ.get("STRATA", "./strata"), "run", "-q", "--json", base, "--set",
           "run.backend=cpu", "-t", "1", "--set", f"vegas.neval={args.neval}", "--set",
           f"vegas.epsrel={args.epsrel}", "--set", f"vegas.seed={args.seed}", "--set",
           "vegas.maxiter=30", "--set", "peaks.search=on"]
    r = json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[-1])
    return r, [np.array(m["x"]) for m in r.get("modes") or []]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seeds")
    ap.add_argument("--neval")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epsrel", default="1e-2")
    ap.add_argument("--samples", type=int, default=100000)
    args = ap.parse_args()
    rng = np.random.default_rng(2)
    for seed in (int(s) for s in args.seeds.split(",")):
        inst = family.instance(seed)
        P, d = inst["peaks"], inst["d"]
        head = f"seed {seed}: d={d} K={inst['K']} {inst['kind']}, exact {inst['exact']:.4f}"
        modes = None
        if args.neval:
            r, modes = modes_found(seed, args)
            head += (f"; strata at {args.neval}: {len(modes)} modes, {r['integral']:.4f} +- "
                     f"{r['sigma']:.2g}, converged {r['converged']}")
        print(head)
        for j, p in enumerate(P):
            x = rng.multivariate_normal(p["centre"], p["cov"], args.samples)
            own = log_gauss(x, p, d)
            rest = np.logaddexp.reduce(
                np.array([log_gauss(x, q, d) + np.log(q["weight"]) for k, q in enumerate(P) if k != j]), axis=0)
            shows = (own + np.log(p["weight"]) > rest) & ((x > 0) & (x < 1)).all(1)
            volume = np.mean(np.where(shows, np.exp(-own), 0.0))
            reach = max(np.mean(np.where(shows, np.exp(
                multivariate_t(loc=q["centre"], shape=q["cov"] * (NU - 2) / NU, df=NU).logpdf(x) - own), 0.0))
                for k, q in enumerate(P) if k != j)
            apart = min(np.linalg.norm(np.linalg.solve(np.linalg.cholesky(p["cov"] + q["cov"]),
                                                       p["centre"] - q["centre"]))
                        for k, q in enumerate(P) if k != j)
            found = ""
            if modes is not None:
                near = min((np.linalg.norm(m - p["centre"]) for m in modes), default=np.inf)
                found = "  found" if near < 0.02 else "  MISSED"
            print(f"  peak {j}: sds {p['sd'].min():.3f}-{p['sd'].max():.3f}, weight {p['weight']:.2f}, "
                  f"shows in {volume:.1e} of the cube, a t channel elsewhere puts {reach:.1e} there, "
                  f"{apart:.1f} Mahalanobis units from the nearest{found}")


if __name__ == "__main__":
    main()
