#!/usr/bin/env python3
"""Instances of the family (family.py) as a C table, for C drivers and tests.

    family_table.py SEED [SEED ...] > table.h

Each row: seed, d, K, kind, and per peak the centre, the lower-triangular
factor U = L^-1 of its covariance (row by row, d(d+1)/2 entries; the
precision is U^T U) and log(w / ((2 pi)^(d/2) det L)), so that
f(x) = sum_k exp(lognorm_k - |U_k (x - c_k)|^2 / 2), exactly family.py's
integrand."""
import sys

import family


def row(seed):
    inst = family.instance(seed)
    d = inst["d"]
    cs, us, ls = [], [], []
    for p in inst["peaks"]:
        u, lognorm = family._factors(p)
        cs.append("{" + ", ".join(repr(float(v)) for v in p["centre"]) + "}")
        us.append("{" + ", ".join(repr(float(u[i, j])) for i in range(d) for j in range(i + 1)) + "}")
        ls.append(repr(float(lognorm)))
    return (f"  {{{seed}, {d}, {inst['K']}, \"{inst['kind']}\",\n"
            f"   {{{', '.join(cs)}}},\n"
            f"   {{{', '.join(us)}}},\n"
            f"   {{{', '.join(ls)}}}}},\n")


def main(seeds):
    if any(s >= family.SETS["report"] for s in seeds):
        sys.exit("family_table.py: report seeds are for reported figures only")
    sys.stdout.write("".join(row(s) for s in seeds))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]])
