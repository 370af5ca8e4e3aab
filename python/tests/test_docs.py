"""doc/python.md's examples and the README's, each run as the whole
program it is (the one marked `<!-- test: mpirun -n 2 -->` on two MPI
ranks); one marked `<!-- file: PATH -->` is that file of the repository,
word for word (test_vegas_scripts.py runs those)."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

DOCS = ("doc/python.md", "README.md")


def blocks():
    """The docs' Python blocks: (those to run, those that are files)."""
    run, files = [], []
    for doc in DOCS:
        text = open(os.path.join(ROOT, doc), encoding="utf-8").read()
        for m in re.finditer(r"(<!-- (test|file): ([^>]*) -->\n)?```python\n(.*?)```", text,
                             re.S):
            line = text[:m.start()].count("\n") + 1
            block = pytest.param(m.group(4), m.group(3), id="%s:%d" % (doc, line))
            (files if m.group(2) == "file" else run).append(block)
    return run, files


EXAMPLES, FILES = blocks()


def test_there_are_examples():
    assert len(EXAMPLES) >= 10 and len(FILES) >= 4


@pytest.mark.parametrize("code, how", EXAMPLES)
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
        pytest.importorskip("strata_mc._mpi", reason="this binding was built without MPI")
        if not shutil.which("mpirun"):
            pytest.skip("no mpirun")
        cmd = ["mpirun", "--oversubscribe", "-n", n.group(1)] + cmd
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip()


@pytest.mark.parametrize("code, path", FILES)
def test_example_is_the_file(code, path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        assert code == f.read(), "%s differs from the doc's copy" % path
