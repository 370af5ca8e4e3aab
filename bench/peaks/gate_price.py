#!/usr/bin/env python3
"""The price of the peak search's gate where there is nothing to find:
bench/coverage.sh's rows (one-peak and smooth integrands, and dgauss's two
peaks on the diagonal), each over SEEDS seeds with the search on, counting
the claims, the claims the gate withheld (`peaks_held`: the rest of the
rule was met), and the false claims (|pull| > 3) with and without the
gate.  A run whose search found one mode samples the map alone, draw for
draw as with the search off, so its verdict without the gate is today's.

    gate_price.py [ROWS] [--seeds N] [--seed0 S] [--out FILE.jsonl]

ROWS is coverage.sh's small set by default, or name:dim:neval:maxiter ...
STRATA (default ./strata) is the program.  Prints a markdown table.
"""
import argparse
import json
import os
import subprocess
import sys

SMALL = """const:8:300:10 const:4:100:30 linear:4:100:10 linear:8:1000:10 f4:5:1000:10 f4:5:10000:5
f2:6:1000:10 f2:6:10000:10 dgauss:4:1000:10 dgauss:8:10000:10 linear:8:10000:30
f4:8:10000:30 fB:1:1000:10 fB:1:10000:10 fB:2:1000:10 fB:3:10000:30
f6:5:1000:10 f6:5:10000:10""".split()

BODIES = {
    "const": "return 1.0;",
    "linear": "double p = 1.0; for (int i = 0; i < dim; i++) p *= 2.0 * x[i]; return p;",
    "dgauss": """double s = 0.1, z1 = 1.0, z2 = 1.0, g1 = 1.0, g2 = 1.0;
  for (int i = 0; i < dim; i++) {
    z1 *= s * sqrt(M_PI / 2) * (erf((2.0 / 3) / (s * sqrt(2.0))) + erf((1.0 / 3) / (s * sqrt(2.0))));
    g1 *= exp(-(x[i] - 1.0 / 3) * (x[i] - 1.0 / 3) / (2 * s * s));
    g2 *= exp(-(x[i] - 2.0 / 3) * (x[i] - 2.0 / 3) / (2 * s * s));
  }
  z2 = z1;
  return 0.5 * (g1 / z1 + g2 / z2);""",
}


def exact_of(strata, name, dim):
    if name in BODIES or name == "fB":
        return 1.0
    out = subprocess.run([strata, "list"], capture_output=True, text=True).stdout.splitlines()
    inside = False
    for line in out:
        f = line.split()
        if f and f[0] == name:
            inside = True
            continue
        if inside and f and f[0] == f"d={dim}":
            return float(f[3])
        if inside and f and not f[0].startswith("d="):
            inside = False
    raise SystemExit(f"no exact value of {name} in d={dim}")


def run(strata, name, dim, neval, maxiter, seed):
    job = (["--set", "integral.integrand=inline", "--set", f"integral.body={BODIES[name]}"]
           if name in BODIES else ["--set", f"integral.integrand={name}"])
    skip = 5 if int(maxiter) >= 10 else int(maxiter) // 2
    cmd = [strata, "run", "-q", "--json", "-t", "1", *job, "--set", f"integral.dim={dim}",
           "--set", f"vegas.neval={neval}", "--set", f"vegas.maxiter={maxiter}",
           "--set", f"vegas.skip={skip}", "--set", f"vegas.seed={seed}",
           "--set", "vegas.maxeval=1e15", "--set", "run.backend=cpu"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", nargs="*", default=SMALL)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--seed0", type=int, default=1)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    strata = os.environ.get("STRATA", "./strata")
    log = open(a.out, "a") if a.out else None
    print("| integrand | d | neval | maxiter | runs | claims | withheld by the gate | "
          "claims without the gate | false claims | false without the gate | runs with channels |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    tot = [0] * 7
    for row in a.rows:
        name, dim, neval, maxiter = row.split(":")
        exact = exact_of(strata, name, dim)
        n = claims = held = false = false_ungated = chan = 0
        for seed in range(a.seed0, a.seed0 + a.seeds):
            r = run(strata, name, dim, neval, maxiter, seed)
            if log:
                log.write(json.dumps(dict(r, row=row, run_seed=seed)) + "\n")
            n += 1
            I, s = r.get("integral"), r.get("sigma")
            d = abs(I - exact) if I is not None else float("inf")
            pull = 0.0 if d <= 32e-16 * abs(exact) else (d / s if s else float("inf"))
            conv, withheld = bool(r.get("converged")), bool(r.get("peaks_held"))
            claims += conv
            held += withheld
            false += conv and pull > 3
            false_ungated += (conv or withheld) and pull > 3
            chan += len(r.get("channels") or []) > 1
        print(f"| {name} | {dim} | {neval} | {maxiter} | {n} | {claims} | {held} | "
              f"{claims + held} | {false} | {false_ungated} | {chan} |", flush=True)
        for k, v in enumerate((n, claims, held, claims + held, false, false_ungated, chan)):
            tot[k] += v
    print(f"| all | | | | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]} | {tot[4]} | {tot[5]} | "
          f"{tot[6]} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
