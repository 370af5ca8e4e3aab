#!/usr/bin/env python3
"""Checks the family against independent code: the numpy density and the
emitted C source (compiled with cc, called through ctypes) agree with
scipy's multivariate normal pdf, the mass outside the cube is bounded, and
a Monte Carlo draw from the mixture itself finds that mass below the bound.

    check_family.py [SEEDS...]      (default: tuning seeds 1-40 and report 100001-100040)
Exits 1 on any disagreement.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.stats import multivariate_normal

import family


def compiled(src, d):
    tmp = tempfile.mkdtemp(prefix="peaks-check.")
    c, so = os.path.join(tmp, "f.c"), os.path.join(tmp, "f.so")
    with open(c, "w") as fh:
        fh.write("#include <math.h>\n" + src)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so, c, "-lm"], check=True)
    fn = ctypes.CDLL(so).peaks
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_int, ctypes.c_void_p]
    return lambda x: fn(np.ascontiguousarray(x).ctypes.data_as(ctypes.POINTER(ctypes.c_double)), d, None)


def check(seed, rng):
    inst = family.instance(seed)
    d = inst["d"]
    peaks = inst["peaks"]
    f = family.Density(inst)
    cf = compiled(family.c_source(inst), d)
    # points near each peak and uniform ones
    x = np.concatenate([rng.multivariate_normal(p["centre"], p["cov"], 20) for p in peaks]
                       + [rng.uniform(0, 1, (20, d))])
    ref = sum(p["weight"] * multivariate_normal(p["centre"], p["cov"]).pdf(x) for p in peaks)
    mine = f(x)
    cvals = np.array([cf(xi) for xi in x])
    bad = []
    big = ref > 1e-300
    if not np.allclose(mine[big], ref[big], rtol=1e-10, atol=0):
        bad.append("numpy density differs from scipy")
    if not np.allclose(cvals[big], ref[big], rtol=1e-10, atol=0):
        bad.append("C source differs from scipy")
    # mass outside the cube, by sampling the mixture: must not exceed the bound by much
    w = np.array([p["weight"] for p in peaks])
    n = 200000
    counts = rng.multinomial(n, w / w.sum())
    out = 0
    for p, m in zip(peaks, counts):
        y = rng.multivariate_normal(p["centre"], p["cov"], m)
        out += int(np.sum(np.any((y < 0) | (y > 1), axis=1)))
    if inst["outside_bound"] >= family.OUTSIDE_MAX or out > 0:
        bad.append(f"outside: bound {inst['outside_bound']:.3g}, {out} of {n} draws outside")
    return inst, bad


def main(argv):
    seeds = [int(s) for s in argv] or list(range(1, 41)) + list(range(100001, 100041))
    rng = np.random.default_rng(12345)
    fail = 0
    for s in seeds:
        inst, bad = check(s, rng)
        if bad:
            fail = 1
            print(f"seed {s}: " + "; ".join(bad))
    print(f"{len(seeds)} instances checked, {'FAILED' if fail else 'all agree'}")
    return fail


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
