"""Fixtures of the binding's tests: the strata program that make install
put beside the library (for runs to compare with), a compile cache of the
test's own, and a helper that runs a job."""
import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def _strata_program():
    """$STRATA, else the strata of the prefix whose strata.pc the binding
    was built against, else strata on PATH."""
    if os.environ.get("STRATA"):
        return os.environ["STRATA"]
    try:
        prefix = subprocess.run(["pkg-config", "--variable=prefix", "strata"], text=True,
                                capture_output=True, check=True).stdout.strip()
        p = os.path.join(prefix, "bin", "strata")
        if os.access(p, os.X_OK):
            return p
    except (OSError, subprocess.CalledProcessError):
        pass
    return shutil.which("strata")


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """A compile cache of the tests' own (0700, as strata requires)."""
    d = tmp_path_factory.mktemp("cache")
    os.chmod(d, 0o700)
    os.environ["STRATA_CACHE_DIR"] = str(d / "strata")
    return d


@pytest.fixture(scope="session")
def strata_bin():
    p = _strata_program()
    if not p:
        pytest.skip("no strata program (set STRATA=path/to/strata)")
    return p


def run_job(strata_bin, job, cwd, *args):
    """Runs `strata run JOB --json`; the JSON line as a dict."""
    r = subprocess.run([strata_bin, "run", str(job), "--json"] + list(args), cwd=cwd,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stdout
