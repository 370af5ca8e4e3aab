#!/usr/bin/env python3
"""k-hat of strata (src/khat.c) against arviz-stats' PSIS on the same weights.

    khat_reference.py DRIVER

DRIVER is a program that reads weights (one a line) on standard input and
prints strata_khat of them (khat_reference.sh builds it).  Cases: weights
drawn from generalized Pareto, half-Cauchy, log-normal and exponential
laws, S = 100 .. 1e5; prints both k-hats and their difference.  arviz-stats
takes M = floor(3 sqrt S) where strata (and the original PSIS code) takes
the ceiling: where they differ (S = 1000, 1e5) the fits see one weight more
or less."""
import subprocess
import sys

import numpy as np
from arviz_stats.base import array_stats


def cases():
    rng = np.random.default_rng(2009)
    for s in (100, 900, 1000, 10000, 40000, 100000):
        for k in (0.2, 0.5, 0.9):
            u = rng.random(s)
            yield f"GPD k={k} S={s}", ((1 - u) ** -k - 1) / k
        yield f"half-Cauchy S={s}", np.abs(rng.standard_cauchy(s))
        yield f"log-normal sd 2 S={s}", np.exp(2 * rng.standard_normal(s))
        yield f"exponential S={s}", rng.exponential(size=s)


def main(driver):
    worst = 0.0
    for name, w in cases():
        # arviz's PSIS takes minus the log weights (log-likelihoods).
        _, ref = array_stats.psislw(-np.log(w))
        out = subprocess.run([driver], input="\n".join(repr(float(v)) for v in w),
                             capture_output=True, text=True, check=True).stdout
        ours = float(out)
        worst = max(worst, abs(ours - float(ref)))
        print(f"{name:26s} arviz {float(ref): .15f}  strata {ours: .15f}  diff {ours - float(ref): .2e}")
    print(f"largest difference {worst:.2e}")


if __name__ == "__main__":
    main(sys.argv[1])
