#!/usr/bin/env python3
"""A C-source integrand run from Python against `strata run` of the same
job, on the GPU: the binding should add nothing to the GPU's time.

    python bench/python_gpu.py STRATA_BIN [--neval N] [--maxiter N] [--repeat N]
                               [--dim D] [--backend cuda|cpu]

STRATA_BIN is the strata program of the build whose libstrata the binding
was installed against (pip install ./python).  The job: the 6-D gaussian
of examples/integrands/gauss.c (a = 625), `neval` points per iteration
(default 1e7), `maxiter` iterations (default 20), epsrel 0, seed 1.  Each
repeat runs `STRATA_BIN run JOB --json -q` and the same problem through
strata.Integrator(strata.Source(...)), after one unmeasured run of each
(the compile cache filled, the GPU woken).  Prints every run's wall time
and the library's own time_s (the iterations, without the set-up), the
medians and their ratio (target: Python within 10% of strata run), and
whether the two results are the same bits."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GAUSS_C = os.path.join(HERE, "..", "examples", "integrands", "gauss.c")


def job_text(a):
    return """[integral]
integrand = file:%s
function = gauss
dim = %d
params = 625
[vegas]
neval = %d
maxiter = %d
epsrel = 0
seed = 1
[run]
backend = %s
""" % (os.path.abspath(GAUSS_C), a.dim, a.neval, a.maxiter, a.backend)


def run_program(a, job):
    t = time.perf_counter()
    r = subprocess.run([a.strata, "run", job, "--json", "-q"], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("python_gpu: %s run failed: %s" % (a.strata, r.stderr.strip()))
    js = json.loads(r.stdout.strip().splitlines()[-1])
    return wall, js["time_s"], js["integral"], js["sigma"], js["backend"]


def run_python(a):
    import strata_mc as strata
    src = strata.Source.from_file(GAUSS_C, "gauss", params=[625])
    t = time.perf_counter()
    s = strata.Integrator(src, [[0, 1]] * a.dim, neval=a.neval, maxiter=a.maxiter, epsrel=0,
                          seed=1, backend=a.backend)
    r = s.integrate()
    wall = time.perf_counter() - t
    s.close()
    return wall, r.time_s, r.mean, r.sdev, r.backend


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("strata", metavar="STRATA_BIN")
    p.add_argument("--neval", type=float, default=1e7)
    p.add_argument("--maxiter", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--dim", type=int, default=6)
    p.add_argument("--backend", default="cuda", choices=("cuda", "cpu", "auto"))
    a = p.parse_args()
    a.neval = int(a.neval)
    try:
        import strata_mc as strata
    except ImportError:
        sys.exit("python_gpu: needs the strata_mc package (pip install ./python)")
    d = tempfile.mkdtemp()
    os.environ.setdefault("STRATA_CACHE_DIR", os.path.join(d, "cache"))
    job = os.path.join(d, "job.ini")
    with open(job, "w") as f:
        f.write(job_text(a))
    print("# %s, strata_mc %s; %d-D gaussian (gauss.c), %d x %.0e, backend %s"
          % (subprocess.run([a.strata, "--version"], capture_output=True,
                            text=True).stdout.splitlines()[0], strata.version, a.dim, a.maxiter,
             a.neval, a.backend))
    run_program(a, job)  # compile caches filled, the device initialised
    run_python(a)
    print("%-8s %4s %9s %9s %24s %10s %s" % ("who", "rep", "wall_s", "time_s", "integral",
                                             "sigma", "backend"))
    res = {"strata run": [], "python": []}
    for k in range(a.repeat):
        for who, fn in (("strata run", lambda: run_program(a, job)),
                        ("python", lambda: run_python(a))):
            out = fn()
            res[who].append(out)
            print("%-10s %2d %9.3f %9.3f %24.17g %10.3g %s" % ((who, k) + out))
            sys.stdout.flush()
    med = {w: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
           for w, v in res.items()}
    for i, name in ((1, "time_s (iterations)"), (0, "wall (whole process / call)")):
        print("median %s: strata run %.3f s, python %.3f s, ratio %.3f (target <= 1.10)"
              % (name, med["strata run"][i], med["python"][i],
                 med["python"][i] / med["strata run"][i]))
    same = res["strata run"][0][2:4] == res["python"][0][2:4]
    print("same bits: %s" % ("yes" if same else "NO: %r against %r" % (
        res["strata run"][0][2:4], res["python"][0][2:4])))


if __name__ == "__main__":
    main()
