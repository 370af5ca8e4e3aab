"""examples/python/: vegas's classic scripts with only their import line
changed (`import strata_mc as vegas`), run as they are, their results checked
against the exact values and, where vegas is installed, against vegas's
run of the same script."""
import math
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

HERE = os.path.join(ROOT, "examples", "python")
IMPORT = "import strata_mc as vegas\n"


def source(name, module):
    text = open(os.path.join(HERE, name), encoding="utf-8").read()
    assert text.count(IMPORT) == 1, "%s: its one strata line is the import" % name
    return text if module == "strata_mc" else text.replace(IMPORT, "import %s\n" % module)


def run(name, module, cwd):
    """The script's globals after running it with `import MODULE`."""
    pytest.importorskip(module)
    code = source(name, module)
    if "import gvar" in code:
        pytest.importorskip("gvar")
    ns = {"__name__": "__main__"}
    old = os.getcwd()
    os.chdir(cwd)
    try:
        exec(compile(code, os.path.join(HERE, name), "exec"), ns)
    finally:
        os.chdir(old)
    return ns


def agree(a, b, n=5.0):
    """Two estimates (mean, sdev) agree within n combined sigmas."""
    return abs(a[0] - b[0]) < n * math.hypot(a[1], b[1])


def ms(g):
    return float(g.mean), float(g.sdev)


GAUSS4 = math.erf(5.0) ** 3 * (math.erf(15.0) + math.erf(5.0)) / 2
MOMENTS_I = math.erf(0.5 * math.sqrt(200.0)) ** 4
RESUME = math.erf(0.5 * math.sqrt(50.0)) ** 3


@pytest.mark.parametrize("module", ["strata_mc", "vegas"])
def test_gauss4(module, tmp_path):
    r = run("gauss4.py", module, tmp_path)["result"]
    assert agree(ms(r), (GAUSS4, 0)) and r.sdev < 1.5e-4  # to about 1e-4
    if module == "strata_mc":
        test_gauss4.strata = ms(r)
    elif getattr(test_gauss4, "strata", None):
        assert agree(ms(r), test_gauss4.strata)


@pytest.mark.parametrize("module", ["strata_mc", "vegas"])
def test_moments(module, tmp_path):
    ns = run("moments.py", module, tmp_path)
    r = ns["result"]
    assert agree(ms(r["I"]), (MOMENTS_I, 0))
    # The correlations make the ratios precise: the mean to 1e-4 of 0.5.
    assert agree(ms(ns["mean"]), (0.5, 0)) and ns["mean"].sdev < 1e-4
    assert agree(ms(ns["var"]), (1 / 400, 0))
    key = (ms(r["I"]), ms(ns["mean"]), ms(ns["var"]))
    if module == "strata_mc":
        test_moments.strata = key
    elif getattr(test_moments, "strata", None):
        assert all(agree(a, b) for a, b in zip(key, test_moments.strata))


@pytest.mark.parametrize("module", ["strata_mc", "vegas"])
def test_resume(module, tmp_path):
    ns = run("resume.py", module, tmp_path)
    assert ns["saved"].mean == ns["result"].mean  # the file holds the finished call
    for r in (ns["result"], ns["more"]):
        assert agree(ms(r), (RESUME, 0))
    assert len(ns["more"].itn_results) == 5


def test_mpi(tmp_path):
    pytest.importorskip("mpi4py")
    pytest.importorskip("strata_mc._mpi", reason="this binding was built without MPI")
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun")
    script = tmp_path / "mpi.py"
    script.write_text(source("mpi.py", "strata_mc"))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(["mpirun", "--oversubscribe", "-n", "2", sys.executable, str(script)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.findall(r"^result = (\S+)\((\d+)\)\s+Q = ", p.stdout, re.M)
    assert len(m) == 1, p.stdout  # rank 0 alone prints
    mean, err = m[0]
    digits = len(mean.split(".")[1]) if "." in mean else 0
    assert agree((float(mean), int(err) * 10.0 ** -digits), (GAUSS4, 0))
