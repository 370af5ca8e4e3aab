#!/usr/bin/env python3
"""Tables of baseline.py's runs, in doc/benchmarks.md's markdown.

    summary.py RUNS.jsonl... [--by neval|neval,epsrel|d,K,neval|kind]

For each method and group: runs, "converged" claims, claims within 3 sigma
of the exact value, their ratio, the share of runs that end with a true
claim (claimed and within 3 sigma), all runs within 3 sigma, the largest
|pull| of a claim, and the mean evaluations per run.  A last table per
method gives the issue's acceptance figures: claims within 3 sigma overall,
the worst (d, K, neval) row with 20 or more claims, the share of true
claims at neval >= 3e4, and (B): the share of runs at neval >= 3e4 that end
with a true claim or name a budget whose rerun (baseline.py --rerun-budget)
makes one, with the reruns' own claims.  Files without reruns summarise as
before: their (B) is the plain share.
"""
import argparse
import json
import sys
from collections import defaultdict


def load(paths):
    """The runs and, by the key of the run each one redoes, the reruns."""
    runs, reruns = [], {}
    for p in paths:
        with open(p) as fh:
            for r in (json.loads(line) for line in fh if line.strip()):
                if "rerun_of" in r:
                    reruns[tuple(r["rerun_of"])] = r
                else:
                    runs.append(r)
    return runs, reruns


def key(r):
    return (r["method"], r["seed"], float(r["neval"]), float(r["epsrel"]), r["run_seed"])


def true3(r):
    return r["pull"] is not None and abs(r["pull"]) <= 3


def stats(rs):
    n = len(rs)
    c = [r for r in rs if r["converged"]]
    ok = [r for r in c if true3(r)]
    worst = max((abs(r["pull"]) for r in c if r["pull"] is not None), default=0.0)
    ev = [r.get("neval_total") or 0 for r in rs]
    return dict(n=n, claims=len(c), ok=len(ok), ratio=len(ok) / len(c) if c else float("nan"),
                share=len(ok) / n if n else float("nan"), all3=sum(true3(r) for r in rs),
                worst=worst, evals=sum(ev) / n if n else 0,
                search=sum(r.get("search_evals") or 0 for r in rs) / n if n else 0)


def table(runs, by):
    keys = by.split(",")
    groups = defaultdict(list)
    for r in runs:
        groups[(r["method"],) + tuple(r[k] for k in keys)].append(r)
    head = ["method"] + keys + ["runs", "claims", "within 3σ", "ratio", "true claims / runs",
                                "all within 3σ", "worst claim |pull|", "evals / run", "search evals / run"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for g in sorted(groups, key=lambda g: tuple(str(v) if isinstance(v, str) else f"{v:012.4f}" for v in g)):
        s = stats(groups[g])
        cells = [str(v) if isinstance(v, str) else f"{v:g}" for v in g]
        cells += [str(s["n"]), str(s["claims"]), str(s["ok"]), f"{s['ratio']:.3f}", f"{s['share']:.3f}",
                  str(s["all3"]), f"{s['worst']:.1f}", f"{s['evals']:.3g}", f"{s['search']:.3g}"]
        print("| " + " | ".join(cells) + " |")


def acceptance(runs, reruns):
    print("| method | runs | claims | within 3σ | ratio | worst (d,K,neval) row with ≥ 20 claims "
          "| true claims / runs at neval ≥ 3e4 | (B): true claims or a budget whose rerun makes one "
          "| runs at ≥ 3e4 naming a budget: rerun, rerun claims, within 3σ |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in sorted({r["method"] for r in runs}):
        rs = [r for r in runs if r["method"] == m]
        s = stats(rs)
        rows = defaultdict(list)
        for r in rs:
            rows[(r["d"], r["K"], r["neval"])].append(r)
        worst = "none"
        big = [(stats(v)["ratio"], k) for k, v in rows.items() if stats(v)["claims"] >= 20]
        if big:
            ratio, k = min(big)
            worst = f"{ratio:.3f} at d={k[0]}, K={k[1]}, neval={k[2]:g}"
        high = [r for r in rs if r["neval"] >= 3e4]
        hi = stats(high)
        again = [reruns[key(r)] for r in high if not (r["converged"] and true3(r)) and key(r) in reruns]
        saved = sum(a["converged"] and true3(a) for a in again)
        named = sum(budget_named(r) for r in high)
        b = (hi["ok"] + saved) / hi["n"] if hi["n"] else float("nan")
        print(f"| {m} | {s['n']} | {s['claims']} | {s['ok']} | {s['ratio']:.3f} | {worst} "
              f"| {hi['share']:.3f} ({hi['ok']} of {hi['n']}) | {b:.3f} ({hi['ok']} + {saved} of {hi['n']}) "
              f"| {named}: {len(again)}, {sum(a['converged'] for a in again)}, {saved} |")


def budget_named(r):
    x = r.get("extra") or {}
    return not r["converged"] and bool(x.get("thin_neval") or x.get("peaks_neval")
                                       or x.get("thin") or x.get("peaks_held"))


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--by", default="neval,epsrel")
    a = ap.parse_args(argv)
    runs, reruns = load(a.runs)
    table(runs, a.by)
    print()
    acceptance(runs, reruns)


if __name__ == "__main__":
    main(sys.argv[1:])
