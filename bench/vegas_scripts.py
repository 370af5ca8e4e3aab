#!/usr/bin/env python3
"""examples/python/ (vegas's classic scripts with `import strata_mc as
vegas`) run under strata and, with the import line put back, under
Lepage's vegas: each script's CPU time, the two alternating, and the ratio
of the medians.  The MPI script runs on one rank (mpi=True without mpirun).
Also a per-point integrand (vegas's plain function), 10 x 1e4.

    python bench/vegas_scripts.py [--repeat N]

Needs the strata_mc package and vegas and gvar (pip install vegas gvar)."""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples", "python")
SCRIPTS = ("gauss4.py", "moments.py", "resume.py", "mpi.py")
PER_POINT = """import math
import strata_mc as vegas
def f(x):
    dx2 = 0
    for d in range(4):
        dx2 += (x[d] - 0.5) ** 2
    return math.exp(-dx2 * 100.) * 1013.2118364296088
integ = vegas.Integrator([[-1, 1], [0, 1], [0, 1], [0, 1]])
result = integ(f, nitn=10, neval=1e4)
print(result)
"""


def cpu_of(code, cwd):
    """The CPU time (user + system) of a Python process running code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cases = [(name, open(os.path.join(EXAMPLES, name), encoding="utf-8").read())
             for name in SCRIPTS] + [("per-point", PER_POINT)]
    with tempfile.TemporaryDirectory() as cwd:
        for name, code in cases:
            times = {"strata": [], "vegas": []}
            for _ in range(args.repeat):
                for module in times:
                    src = code if module == "strata" else code.replace(
                        "import strata_mc as vegas\n", "import vegas\n")
                    times[module].append(cpu_of(src, cwd))
            s, v = statistics.median(times["strata"]), statistics.median(times["vegas"])
            print("%-10s strata %6.2f s   vegas %6.2f s   strata/vegas %.2f" % (name, s, v,
                                                                               s / v))


if __name__ == "__main__":
    main()
