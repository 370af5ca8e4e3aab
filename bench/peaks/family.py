#!/usr/bin/env python3
"""A seeded family of integrands with several narrow peaks off the diagonal.

Each instance is a mixture of K = 2..5 normalised gaussians in d = 4..10
dimensions on the unit cube,

    f(x) = sum_k w_k N(x; c_k, S_k),

so its integral over R^d is sum_k w_k exactly, and over the cube it differs
from that by the mass outside, which is bounded below 1e-8 of the total
(computed per instance and asserted).  One seed gives one instance:

- kind `axis`: covariances diagonal, a different sd along each axis;
- kind `rotated`: full covariances S = Q diag(s^2) Q^T with Q a random
  rotation;
- kind `narrow-broad`: a narrow peak (sd 0.01-0.02) on the flank of a broad
  one (sd 0.04-0.08), 1 to 2.5 broad sds from its centre, beside K - 2
  others (rotated or not, at random).

Principal sds lie in 0.01-0.08 and weights in 0.05-0.6; every centre is at
least 6 largest principal sds inside the cube on every axis, which caps the
sd at 1/12 (0.08 here): a centre 6 sds of 0.1 inside would need 0.6 <= c <= 0.4.
Peaks other than the narrow-broad pair are at least 3 Mahalanobis units
apart (in the sum of their covariances), so each is a mode of its own.

The instances split into two sets that never share a seed: TUNING (seeds
1..999, for developing methods) and REPORT (seeds 100001.., for reported
figures only).

    family.py write DIR [--set tuning|report] [--count N] [--first I]

writes, for instance i of the set, DIR/<set>-<seed>.c (strata user source,
function `peaks`, the simple form), DIR/<set>-<seed>.ini (a job file for it)
and DIR/<set>-<seed>.json (seed, d, K, kind, exact value, the bound on the
mass outside the cube, and the peaks: weight, centre, covariance, principal
sds).  `family.py show SEED` prints one instance's JSON.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
from scipy.special import ndtr

SETS = {"tuning": 1, "report": 100001}
SET_SIZE = {"tuning": 999, "report": 10**9}
SD_MIN, SD_MAX = 0.01, 0.08
INSIDE = 6.0          # centres this many largest principal sds inside the cube
SEPARATION = 3.0      # Mahalanobis distance between distinct peaks
OUTSIDE_MAX = 1e-8    # bound on the mass outside the cube, relative to the total


def seed_of(which, i):
    """The seed of instance i (0-based) of a set."""
    if not 0 <= i < SET_SIZE[which]:
        raise ValueError(f"instance {i}: the {which} set has {SET_SIZE[which]}")
    return SETS[which] + i


def set_of(seed):
    return "tuning" if seed < SETS["report"] else "report"


def _rotation(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _peak(rng, d, rotated, lo=SD_MIN, hi=SD_MAX):
    """Covariance of one peak: principal sds log-uniform in [lo, hi]."""
    s = np.exp(rng.uniform(math.log(lo), math.log(hi), d))
    if rotated:
        q = _rotation(rng, d)
        cov = (q * s**2) @ q.T
    else:
        cov = np.diag(s**2)
    return cov, s


def _centre(rng, d, smax):
    return rng.uniform(INSIDE * smax, 1 - INSIDE * smax, d)


def _inside(c, smax):
    return bool(np.all(c >= INSIDE * smax) and np.all(c <= 1 - INSIDE * smax))


def _apart(c, cov, peaks):
    for p in peaks:
        dc = c - p["centre"]
        if dc @ np.linalg.solve(cov + p["cov"], dc) < SEPARATION**2:
            return False
    return True


def outside_mass(peaks):
    """A bound on the mass outside the unit cube, relative to sum w: the
    union bound over the axes of each peak's marginal tails below 0 and
    above 1."""
    total = sum(p["weight"] for p in peaks)
    out = 0.0
    for p in peaks:
        sd = np.sqrt(np.diag(p["cov"]))
        c = p["centre"]
        out += p["weight"] * float(np.sum(ndtr(-c / sd) + ndtr(-(1 - c) / sd)))
    return out / total


def instance(seed):
    """The instance of a seed, as a dict (numpy arrays inside)."""
    rng = np.random.default_rng([0x9EA5, seed])
    d = int(rng.integers(4, 11))
    k = int(rng.integers(2, 6))
    kind = ["axis", "rotated", "narrow-broad"][int(rng.integers(0, 3))]
    peaks = []
    for _ in range(10000):
        peaks = []
        if kind == "narrow-broad":
            cb, sb = _peak(rng, d, bool(rng.integers(0, 2)), 0.04, SD_MAX)
            mb = _centre(rng, d, sb.max())
            cn, sn = _peak(rng, d, bool(rng.integers(0, 2)), SD_MIN, 0.02)
            u = rng.standard_normal(d)
            u /= np.linalg.norm(u)
            mn = mb + u * rng.uniform(1.0, 2.5) * sb.max()
            if not _inside(mn, sn.max()):
                continue
            peaks += [dict(centre=mb, cov=cb, sd=sb), dict(centre=mn, cov=cn, sd=sn)]
        tries = 0
        while len(peaks) < k and tries < 1000:
            tries += 1
            rot = kind == "rotated" or (kind == "narrow-broad" and bool(rng.integers(0, 2)))
            cov, s = _peak(rng, d, rot)
            c = _centre(rng, d, s.max())
            if _apart(c, cov, peaks):
                peaks.append(dict(centre=c, cov=cov, sd=s))
        if len(peaks) == k:
            break
    else:
        raise RuntimeError(f"seed {seed}: no placement of {k} peaks in d = {d}")
    for p in peaks:
        p["weight"] = float(rng.uniform(0.05, 0.6))
    bound = outside_mass(peaks)
    assert bound < OUTSIDE_MAX, f"seed {seed}: mass outside the cube {bound:.3g}"
    return dict(seed=seed, set=set_of(seed), d=d, K=k, kind=kind,
                exact=float(sum(p["weight"] for p in peaks)),
                outside_bound=bound, peaks=peaks)


def as_json(inst):
    out = {k: v for k, v in inst.items() if k != "peaks"}
    out["peaks"] = [dict(weight=p["weight"], centre=p["centre"].tolist(),
                         cov=p["cov"].tolist(), sd=sorted(p["sd"].tolist()))
                    for p in inst["peaks"]]
    return out


def from_json(obj):
    """The instance of a JSON object (arrays as numpy)."""
    inst = dict(obj)
    inst["peaks"] = [dict(weight=p["weight"], centre=np.array(p["centre"]),
                          cov=np.array(p["cov"]), sd=np.array(p["sd"]))
                     for p in obj["peaks"]]
    return inst


def _factors(p):
    """U = L^-1 (S = L L^T) and log(w / ((2 pi)^(d/2) det L))."""
    L = np.linalg.cholesky(p["cov"])
    u = np.linalg.inv(L)
    d = len(p["centre"])
    lognorm = math.log(p["weight"]) - 0.5 * d * math.log(2 * math.pi) - float(np.sum(np.log(np.diag(L))))
    return u, lognorm


def c_source(inst):
    """strata user source: double peaks(const double *x, int dim, const double *params)."""
    d = inst["d"]
    lines = [f"/* strata peaks family, seed {inst['seed']}: {inst['kind']}, d = {d}, "
             f"K = {inst['K']}, exact {inst['exact']!r} */",
             "double peaks(const double *x, int dim, const double *params)",
             "{",
             "  double f = 0.0, z[%d];" % d,
             "  (void)dim; (void)params;"]
    for p in inst["peaks"]:
        u, lognorm = _factors(p)
        c = ", ".join(repr(float(v)) for v in p["centre"])
        tri = ", ".join(repr(float(u[i, j])) for i in range(d) for j in range(i + 1))
        lines += ["  {",
                  f"    const double c[{d}] = {{{c}}};",
                  f"    const double u[{d * (d + 1) // 2}] = {{{tri}}};",
                  "    double q = 0.0;",
                  f"    for (int i = 0; i < {d}; i++) z[i] = x[i] - c[i];",
                  f"    for (int i = 0, t = 0; i < {d}; i++) {{",
                  "      double s = 0.0;",
                  "      for (int j = 0; j <= i; j++, t++) s += u[t] * z[j];",
                  "      q += s * s;",
                  "    }",
                  f"    f += exp({lognorm!r} - 0.5 * q);",
                  "  }"]
    lines += ["  return f;", "}", ""]
    return "\n".join(lines)


def job_file(inst, cname):
    return (f"[integral]\nintegrand = file:{cname}\nfunction = peaks\ndim = {inst['d']}\n")


class Density:
    """numpy evaluation of an instance, f(x) for x of shape (n, d)."""

    def __init__(self, inst):
        self.d = inst["d"]
        self.parts = []
        for p in inst["peaks"]:
            u, lognorm = _factors(p)
            self.parts.append((p["centre"], u, lognorm))

    def log(self, x):
        x = np.atleast_2d(x)
        terms = []
        for c, u, lognorm in self.parts:
            z = (x - c) @ u.T
            terms.append(lognorm - 0.5 * np.einsum("ij,ij->i", z, z))
        return np.logaddexp.reduce(np.array(terms), axis=0)

    def __call__(self, x):
        return np.exp(self.log(x))


def _put(path, text):
    """Write whole or not at all: drivers running side by side write the
    same instance, and a reader must never see half a file."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def write(dirname, which, count, first):
    os.makedirs(dirname, exist_ok=True)
    names = []
    for i in range(first, first + count):
        inst = instance(seed_of(which, i))
        base = os.path.join(dirname, f"{which}-{inst['seed']}")
        _put(base + ".c", c_source(inst))
        _put(base + ".ini", job_file(inst, os.path.basename(base) + ".c"))
        _put(base + ".json", json.dumps(as_json(inst)))
        names.append(os.path.basename(base))
    return names


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("dir")
    w.add_argument("--set", dest="which", choices=sorted(SETS), default="tuning")
    w.add_argument("--count", type=int, default=10)
    w.add_argument("--first", type=int, default=0)
    s = sub.add_parser("show")
    s.add_argument("seed", type=int)
    a = ap.parse_args(argv)
    if a.cmd == "write":
        for n in write(a.dir, a.which, a.count, a.first):
            print(n)
    else:
        print(json.dumps(as_json(instance(a.seed)), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
