"""strata_mc.log on damaged logs: the bit flips and cuts of the program's
fuzzer (tests/fuzz.py hdf5, the cases on the log), each read in a child
process with a time limit.  A read must end within it, with the undamaged
log's contents or a StrataError; never another exception or a crash.
FUZZ_SEED and FUZZ_CASES choose the cases as they do for tests/fuzz.py."""
import concurrent.futures
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT

h5py = pytest.importorskip("h5py")

# Seconds a read may take: `strata log` refuses any of these in under 0.2 s.
LIMIT = 30


def _fuzz():
    spec = importlib.util.spec_from_file_location("strata_fuzz",
                                                  os.path.join(ROOT, "tests", "fuzz.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _contents(path):
    """What the reader made of the log, as a digest."""
    from strata_mc.log import Log
    g = Log(path)
    h = hashlib.sha256()
    for part in (g.table.tobytes(), g.maps.tobytes(), g.map_itn.tobytes(),
                 repr(sorted(g.attrs.items())).encode(), repr(g.result).encode()):
        h.update(part)
    return h.hexdigest()


def _read_in_child(path):
    """("ok", digest), ("refused", message), ("raised", what), ("killed", signal)
    or ("hang", None): a read of path in a forked child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing of HDF5 is open in the parent
        os.close(r)
        try:
            from strata_mc import StrataError
            try:
                out = "ok " + _contents(path)
            except StrataError as e:
                out = "refused " + str(e)
            except BaseException as e:  # noqa: B036 - reported to the parent
                out = "raised %s: %s" % (type(e).__name__, e)
            os.write(w, out.encode(errors="replace")[:4000])
        finally:
            os._exit(0)
    os.close(w)
    end = time.monotonic() + LIMIT
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > end:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(r)
            return "hang", None
        time.sleep(0.005)
    text = os.read(r, 4096).decode(errors="replace")
    os.close(r)
    if os.WIFSIGNALED(st):
        return "killed", os.WTERMSIG(st)
    kind, _, rest = text.partition(" ")
    return kind, rest


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_damaged_logs_are_read_or_refused_in_time(strata_bin, tmp_path):
    fuzz = _fuzz()
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "job.ini").write_text(fuzz.HDF5_JOB)
    r = subprocess.run([strata_bin, "run", "job.ini", "-q"], cwd=ref, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    kind, want = _read_in_child(str(ref / "run.log.h5"))
    assert kind == "ok", (kind, want)
    seed = int(os.environ.get("FUZZ_SEED", "1"))
    ncases = int(os.environ.get("FUZZ_CASES", "500"))
    cases = [(n,) + fuzz.hdf5_damage(seed, n, str(ref)) for n in range(ncases)]
    cases = [c for c in cases if c[1] == "run.log.h5"]

    def read(case):
        n, target, where, what = case
        path = str(tmp_path / ("case%d.h5" % n))
        shutil.copy(str(ref / target), path)
        fuzz.damage(path, where)
        t = time.monotonic()
        kind, got = _read_in_child(path)
        os.unlink(path)
        return n, what, kind, got, time.monotonic() - t

    fails, counts, slowest = [], {}, 0.0
    # Two at once, as tests/fuzz.py runs its cases (the parent's threads
    # only fork and wait: none holds h5py's lock at a fork).
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(read, cases))
    for n, what, kind, got, took in results:
        slowest = max(slowest, took)
        counts[kind] = counts.get(kind, 0) + 1
        why = {"hang": "no end within %d s" % LIMIT, "killed": "killed by signal %s" % got,
               "raised": "raised %s" % got}.get(kind)
        if kind == "ok" and got != want:
            why = "read other contents than the undamaged log's"
        if why:
            fails.append("case %d (FUZZ_SEED=%d): %s; %s" % (n, seed, what, why))
    print("damaged logs: %s; slowest read %.2f s" % (counts, slowest), file=sys.stderr)
    assert not fails, "\n".join(fails[:20])
