"""doc/python.md's examples and the README's, each run as the whole
program it is (the one marked `<!-- test: mpirun -n 2 -->` on two MPI
ranks)."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

DOCS = ("doc/python.md", "README.md")


def examples():
    out = []
    for doc in DOCS:
        text = open(os.path.join(ROOT, doc), encoding="utf-8").read()
        for m in re.finditer(r"(<!-- test: ([^>]*) -->\n)?```python\n(.*?)```", text, re.S):
            line = text[:m.start()].count("\n") + 1
            out.append(pytest.param(m.group(3), m.group(2), id="%s:%d" % (doc, line)))
    return out


def test_there_are_examples():
    assert len(examples()) >= 10


@pytest.mark.parametrize("code, how", examples())
def test_example(code, how, strata_bin, tmp_path):
    script = tmp_path / "example.py"
    script.write_text(code)
    env = dict(os.environ, STRATA=strata_bin, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [sys.executable, str(script)]
    if how:
        n = re.fullmatch(r"mpirun -n (\d+)", how)
        assert n, how
        pytest.importorskip("mpi4py")
        pytest.importorskip("strata._mpi", reason="this binding was built without MPI")
        if not shutil.which("mpirun"):
            pytest.skip("no mpirun")
        cmd = ["mpirun", "--oversubscribe", "-n", n.group(1)] + cmd
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip()
