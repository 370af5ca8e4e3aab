#!/usr/bin/env python3
"""Does the prototype's gate withhold claims where there is nothing to find?
Runs proto.py on one-peak integrands (the first peak of each tuning
instance, exact value its weight) and counts claims, claims within 3 sigma,
and the runs whose claim the k-hat gate withheld.

    one_peak.py [INSTANCES [SEEDS [GATE]]]  (default 10 instances, 3 seeds,
                                             proto.py's GATE; neval 1e3, 1e4,
                                             1e5; epsrel 1e-2, 1e-3)
"""
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import family  # noqa: E402
import proto  # noqa: E402


def main(argv):
    count = int(argv[0]) if argv else 10
    seeds = int(argv[1]) if len(argv) > 1 else 3
    if len(argv) > 2:
        proto.GATE = argv[2]
    print("| neval | epsrel | runs | claims | within 3σ | withheld by k-hat | maxiter |")
    print("|---|---|---|---|---|---|---|")
    for neval in (1000, 10000, 100000):
        rows = {e: [0, 0, 0, 0, 0] for e in (1e-2, 1e-3)}
        for i in range(count):
            inst = family.instance(family.seed_of("tuning", i))
            inst["peaks"] = inst["peaks"][:1]
            inst["K"], inst["exact"] = 1, inst["peaks"][0]["weight"]
            for s in range(1, seeds + 1):
                for e, r in zip(rows, proto.integrate(inst, neval, tuple(rows), seed=s)):
                    row = rows[e]
                    row[0] += 1
                    if r["converged"]:
                        row[1] += 1
                        row[2] += abs(r["integral"] - inst["exact"]) <= 3 * r["sigma"]
                    elif (r["reason"] or "").startswith("k-hat"):
                        row[3] += 1
                    else:
                        row[4] += 1
        for e, row in rows.items():
            print(f"| {neval:g} | {e:g} | " + " | ".join(str(v) for v in row) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
