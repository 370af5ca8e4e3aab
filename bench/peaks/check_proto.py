#!/usr/bin/env python3
"""Checks the prototype's parts against known answers:

- khat() on 20 samples of 1e4 draws from generalized Pareto tails of shape
  0.2, 0.5, 0.8 and 1.2 (numpy's Lomax with index 1/k) recovers k within
  0.1 on average, gives about 0 for exponential draws and below -0.5 for
  uniform ones;
- the mixture estimator is unbiased with honest errors: with the modes
  given as known points (so every run has its channels), 100 seeds of one
  tuning instance at neval 1e3, each iteration's pull, put 99% within 3
  sigma and the mean pull within 0.2 of 0.

    check_proto.py        exits 1 on a failed check
"""
import sys

import numpy as np

import family
import proto


def check_khat():
    rng = np.random.default_rng(7)
    bad = []
    for k in (0.2, 0.5, 0.8, 1.2):
        est = np.mean([proto.khat(rng.pareto(1 / k, 10000) + 1) for _ in range(20)])
        if abs(est - k) > 0.1:
            bad.append(f"k-hat {est:.3f} for shape {k}")
    e = np.mean([proto.khat(rng.exponential(size=10000)) for _ in range(20)])
    u = np.mean([proto.khat(rng.random(10000)) for _ in range(20)])
    if abs(e) > 0.1:
        bad.append(f"k-hat {e:.3f} for exponential draws")
    if u > -0.5:
        bad.append(f"k-hat {u:.3f} for uniform draws")
    return bad


def check_estimator(seed=2, runs=100):
    inst = family.instance(seed)
    known = [p["centre"] for p in inst["peaks"]]
    pulls = []
    for s in range(1, runs + 1):
        r = proto.integrate(inst, 1000, (0.0,), seed=s, maxiter=7, known=known, with_trace=True)
        pulls += [(t["i"] - inst["exact"]) / t["s"] for t in r[0]["trace"][proto.SKIP:]]
    pulls = np.array(pulls)
    bad = []
    if np.mean(np.abs(pulls) <= 3) < 0.99:
        bad.append(f"{np.mean(np.abs(pulls) <= 3):.3f} of iterations within 3 sigma")
    if abs(pulls.mean()) > 0.2:
        bad.append(f"mean pull {pulls.mean():+.3f}")
    print(f"estimator: {len(pulls)} iterations, within 1 sigma {np.mean(np.abs(pulls) <= 1):.3f}, "
          f"3 sigma {np.mean(np.abs(pulls) <= 3):.3f}, mean pull {pulls.mean():+.3f}")
    return bad


def main():
    bad = check_khat() + check_estimator()
    for b in bad:
        print("FAILED: " + b)
    print("all checks pass" if not bad else f"{len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
