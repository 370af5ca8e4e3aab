#!/usr/bin/env python3
"""Does the gate withhold claims where there is nothing to find?  Runs
proto.py, or with --strata the program (STRATA, default ./strata, on the
CPU, one thread), on one-peak integrands (the first peak of each tuning
instance, exact value its weight) and counts claims, claims within 3 sigma,
and the runs whose claim the k-hat gate withheld.

    one_peak.py [--strata] [INSTANCES [SEEDS [GATE]]]
        (default 10 instances, 3 seeds, proto.py's GATE; neval 1e3, 1e4,
         1e5; epsrel 1e-2, 1e-3)
"""
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import family  # noqa: E402
import proto  # noqa: E402


def run_strata(inst, neval, epsrels, seed, tmp):
    """The program on one instance, once per epsrel, in proto.integrate's form."""
    base = os.path.join(tmp, f"one-{inst['seed']}")
    if not os.path.exists(base + ".ini"):
        with open(base + ".c", "w") as fh:
            fh.write(family.c_source(inst))
        with open(base + ".ini", "w") as fh:
            fh.write(family.job_file(inst, base + ".c"))
    out = []
    for e in epsrels:
        cmd = [os.environ.get("STRATA", "./strata"), "run", "-q", "--json", base + ".ini",
               "--set", "run.backend=cpu", "-t", "1", "--set", f"vegas.neval={neval:g}",
               "--set", f"vegas.epsrel={e:g}", "--set", f"vegas.seed={seed}"]
        r = json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[-1])
        reason = r.get("peaks_reason") if r.get("peaks_held") else None
        out.append(dict(converged=bool(r["converged"]), integral=r["integral"],
                        sigma=r["sigma"], reason=reason))
    return out


def main(argv):
    strata = bool(argv) and argv[0] == "--strata"
    argv = argv[1:] if strata else argv
    tmp = tempfile.mkdtemp() if strata else None
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
                rs = (run_strata(inst, neval, tuple(rows), s, tmp) if strata
                      else proto.integrate(inst, neval, tuple(rows), seed=s))
                for e, r in zip(rows, rs):
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
