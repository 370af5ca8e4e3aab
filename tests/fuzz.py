#!/usr/bin/env python3
"""Fuzzers of what strata reads: job files and command lines (job), and
checkpoints and logs with a flipped bit or cut short, and checkpoints, logs
and tables whose attributes and datasets are crafted with h5py (hdf5).

    fuzz.py job|hdf5 STRATA        (the sanitized program, tests/strata-asan)

Environment: FUZZ_SEED (default 1) and FUZZ_CASES (default 2000 job, 500
hdf5 cases) choose the cases; FUZZ_CASE=N runs case N alone and keeps its
files; FUZZ_JOBS runs that many at once (default 2).  Case N of seed S is
the same on every machine: its generator is seeded with (S, N).

Each case fails when strata
  - ends by a signal, or AddressSanitizer or UBSan reports (exit 86),
  - runs past its time limit (a hang),
  - exits non-zero without a last stderr line "strata: ...", or prints a raw
    control character,
  - exits 0 where the answer is known and differs from it: a job file only
    rewritten (line endings, spaces, comments) must give the base job's bits,
    a job with a bad value must be refused, a resume from a damaged
    checkpoint or log must give the undamaged resume's bits, and
    `strata log` must print the undamaged log's table or fail,
  - exits non-zero and the checkpoint it found is gone or changed,
  - exits 0 reading a crafted file that must be refused: an attribute or
    dataset of the wrong type, rank or size, a string with a NUL inside, a
    soft or external link, or a dataset declaring more than the file holds.
Crafted cases need h5py (python3-h5py); without it they are left out.
"""
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError:
    h5py = None

SANITIZER_EXIT = 86
TIME_LIMIT = 60  # seconds a case's strata may run: the slowest takes < 2
ENV = dict(os.environ,
           # Open MPI and HDF5 are not built with the sanitizers; MPI leaks.
           # A size read from a damaged file may ask for terabytes: malloc
           # returns NULL, as it would without ASan, and no case takes more
           # than 4 GB of this shared machine.
           ASAN_OPTIONS="detect_leaks=0:exitcode=%d:allocator_may_return_null=1:"
                        "hard_rss_limit_mb=4096" % SANITIZER_EXIT,
           UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=%d" % SANITIZER_EXIT,
           OMP_NUM_THREADS="1")
ENV.pop("STRATA_CACHE_DIR", None)
# Run as root in CI: the integrands compiled for the table cases go to a
# cache of the fuzzer's own (main() sets it).


def run(strata, args, cwd, limit=TIME_LIMIT):
    p = subprocess.run(["timeout", "-k", "5", str(limit), strata] + args, cwd=cwd, env=ENV,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def crash(rc, err):
    """Why (rc, stderr) is a crash or a hang, or None."""
    if rc in (124, 137, -9):  # SIGKILL comes from timeout -k alone
        return "hang: no end within %d s" % TIME_LIMIT
    if rc < 0 or rc >= 128:
        return "killed by signal %d" % (-rc if rc < 0 else rc - 128)
    if rc == SANITIZER_EXIT or b"Sanitizer" in err or b"runtime error:" in err:
        return "sanitizer report (exit %d)" % rc
    return None


def message(rc, err):
    """Why a failing run's stderr is not a clean message, or None."""
    lines = err.decode("utf-8", "replace").splitlines()
    if rc not in (1, 2):
        return "exit status %d" % rc
    if not lines or not lines[-1].startswith("strata: "):
        return "no 'strata: ' line last on stderr"
    if re.search(r"[\x00-\x09\x0b-\x1f\x7f]", err.decode("latin-1")):
        return "a raw control character on stderr"
    return None


def result(out):
    """integral and sigma of --json's line, as printed (the bits)."""
    try:
        j = json.loads(out.decode().strip().splitlines()[-1])
        return (repr(j["integral"]), repr(j["sigma"]))
    except (ValueError, IndexError, KeyError, UnicodeDecodeError):
        return None


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def kept(path, want, folder):
    """The checkpoint's bytes are still there: at its name or set aside."""
    if os.path.isfile(path) and digest(path) == want:
        return True
    return any(digest(os.path.join(folder, n)) == want for n in os.listdir(folder)
               if os.path.isfile(os.path.join(folder, n)))


# --- job files and command lines -------------------------------------------------------
INTEGRANDS = ["f1", "f2", "f3", "f4", "f5", "f6"]
MODES = ["vegas+", "vegas", "vegas1d", "plain", "qmc"]
NUMERIC = {"integral": ["dim"], "vegas": ["neval", "maxiter", "skip", "epsrel", "epsabs",
                                          "alpha", "beta", "ninc", "max_nhcube", "min_q",
                                          "adapt_iters", "neval_frozen", "maxeval"],
           "peaks": ["starts", "ascents", "uniform"],
           "run": ["threads", "checkpoint_every", "checkpoint_every_s", "log_map"]}
KEYS = {"integral": ["integrand", "dim", "params", "lower", "upper", "body", "function",
                     "form", "ncomp", "adapt", "tables"],
        "vegas": ["mode", "neval", "maxiter", "skip", "epsrel", "epsabs", "alpha", "beta",
                  "ninc", "seed", "max_nhcube", "adapt_iters", "min_q", "qmc", "qmc_map", "map",
                  "neval_frozen", "maxeval", "nrand"],
        "peaks": ["search", "known", "starts", "ascents", "uniform"],
        "run": ["backend", "threads", "log", "log_map", "checkpoint", "checkpoint_every",
                "checkpoint_every_s", "check_ranks", "resume"]}
GARBAGE = ["x", "1e4x", "@@", "1 2", "--1", "0x", "1e", "nan", "inf", "1e999", "\x01",
           "\xd9\xa1", "1,", "2..3", "+-1"]
BYTES = b"\r\n\0\x1b\x7f\t []=;#:.,-+eE0123456789 \xff\xc3\xa9x"


def base_job(k):
    """Tiny valid jobs: each runs in milliseconds."""
    r = random.Random(1000 + k)
    return ("[integral]\nintegrand = %s\ndim = %d\n[vegas]\nmode = %s\nneval = %d\n"
            "maxiter = 2\nskip = 0\nseed = %d\n[run]\nthreads = 1\n"
            % (INTEGRANDS[k % 6], r.randint(1, 4), MODES[k % 5], r.choice([500, 1000, 2000]),
               r.randint(1, 99)))


NBASE = 10
# A job cut short runs with the defaults (neval 1e6, epsrel 1e-3): a
# minute under ASan.  Every run stops before 4e6 evaluations, and one that
# asks for more in an iteration is refused.
GUARD = ["run", "job.ini", "--set", "vegas.maxeval=4000000", "-q", "-j"]


def rewritten(r, text):
    """The same job in another spelling."""
    lines = text.split("\n")[:-1]
    out = []
    for ln in lines:
        if r.random() < 0.3:
            out.append(r.choice(["; a comment", "# a comment", "", "   ", ";" + "c" * 4000]))
        if "=" in ln and r.random() < 0.5:
            k, v = ln.split("=", 1)
            # no space before the key: an indented line continues the one above
            ln = k.strip() + " " * r.randint(0, 4) + "=" + " " * r.randint(0, 4) + v.strip() \
                + " " * r.randint(0, 3)
        out.append(ln)
    end = r.choice(["\n", "\r\n", "\r" * r.randint(1, 6000) + "\n"])
    return end.join(out) + end


def refused(r, text):
    """The job with one thing that must be refused."""
    lines = text.split("\n")[:-1]
    kind = r.randrange(4)
    if kind == 0:  # a bad number
        sec = r.choice(list(NUMERIC))
        key = r.choice(NUMERIC[sec])
        return text + "[%s]\n%s = %s\n" % (sec, key, r.choice(GARBAGE)), None
    if kind == 1:  # an unknown key, spelled with odd bytes
        sec = r.choice(list(KEYS))
        key = r.choice(KEYS[sec])
        i = r.randrange(1, len(key))  # inside: inih trims white space around a key
        key = key[:i] + r.choice(["\r", "\x01", "\x1b[2J", "z", "\t\x7f"]) + key[i:]
        return text + "[%s]\n%s = 1\n" % (sec, key), None
    if kind == 2:  # a key twice
        i = r.choice([j for j, ln in enumerate(lines) if "=" in ln])
        lines.insert(i + 1, lines[i])
        return "\n".join(lines) + "\n", None
    return text, r.choice([["--set", "vegas.%s=%s" % (r.choice(NUMERIC["vegas"]), r.choice(GARBAGE))],
                           ["--set", "run.no_such=1"], ["-t", r.choice(["-1", "x", "1e99", ""])],
                           ["--bogus"], ["--set", "novalue"], ["--set", ".x=1"]])


def mutated(r, text):
    """Bytes changed at random."""
    b = bytearray(text.encode())
    for _ in range(r.randint(1, 8)):
        op = r.randrange(8)
        i = r.randrange(len(b) + 1)
        if op == 0 and b:
            b[i % len(b)] ^= 1 << r.randrange(8)
        elif op == 1:
            b[i:i] = bytes(r.choice(BYTES) for _ in range(r.randint(1, 8)))
        elif op == 2:
            del b[i:i + r.randint(1, 20)]
        elif op == 3:  # a long line, near inih's limit, with or without a run of '\r'
            n = r.choice([4090, 4095, 4096, 4097, 4100, 5000, 12000])
            b[i:i] = b"\nneval = 1" + b"0" * (n - 10) + b"\r" * r.choice([0, 1, 2, 5000]) + b"\n"
        elif op == 4:
            b[i:i] = b"\r" * r.randint(1, 9000)
        elif op == 5:
            j = r.randrange(len(b) + 1)
            b[i:i] = b[min(i, j):max(i, j)][:2000]
        elif op == 6:
            b[i:i] = r.choice([b"\n  indented = 1\n", b"\n[", b"\n]\n", b"\n=\n", b"\n[run\n",
                               b"\nbody = return x[0];\n", b"\n[integral]\nintegrand = inline\n",
                               b"\nlower = -1e308\nupper = 1e308\n", b"\nparams = " + b"1," * 40])
        else:
            del b[i:]
    return bytes(b)


def odd_args(r):
    args = []
    for _ in range(r.choice([0, 0, 1, 2, 3])):
        c = r.randrange(6)
        if c == 0:
            sec = r.choice(list(KEYS))
            args += ["--set", "%s.%s=%s" % (sec, r.choice(KEYS[sec]), r.choice(GARBAGE + ["1", "2"]))]
        elif c == 1:
            args += ["-t", r.choice(["1", "0", "x", "99999999999", "-3"])]
        elif c == 2:
            args.append(r.choice(["-r", "-f", "-v", "--resume", "--force", "-x", "--json=1", "-"]))
        elif c == 3:
            args += ["--set", "".join(chr(r.randrange(1, 128)) for _ in range(r.randint(0, 40)))]
        elif c == 4:
            args += ["--set", "vegas.neval=" + "9" * r.randint(1, 5000)]
        else:
            args.append(r.choice(["other.ini", "/", "/dev/null", "a\rb.ini"]))
    return args


def job_case(strata, seed, n, root, bases, ckpt):
    r = random.Random("%d/%d" % (seed, n))
    k = r.randrange(NBASE)
    text = base_job(k)
    d = tempfile.mkdtemp(dir=root)
    args, want, kind = [], None, r.random()
    with_ckpt = r.random() < 0.1
    if with_ckpt:
        text = base_job(0) + "checkpoint = ck.h5\n"
        shutil.copy(ckpt[0], os.path.join(d, "ck.h5"))
    if kind < 0.15 and not with_ckpt:
        data, want = rewritten(r, text).encode(), ("same", bases[k])
    elif kind < 0.4:
        t, args = refused(r, text)
        data, want = t.encode(), ("refused",)
        args = args or []
    else:
        data = mutated(r, text)
        args = odd_args(r)
    with open(os.path.join(d, "job.ini"), "wb") as f:
        f.write(data)
    rc, out, err = run(strata, GUARD + args, d)
    why = crash(rc, err)
    if not why and rc != 0:
        why = message(rc, err)
        if not why and with_ckpt and not kept(os.path.join(d, "ck.h5"), ckpt[1], d):
            why = "exit %d, and the checkpoint it found is gone or changed" % rc
    if not why and rc == 0 and want:
        if want[0] == "refused":
            why = "a job that must be refused ran (exit 0)"
        elif result(out) != want[1]:
            why = "the rewritten job gave %s, the job %s" % (result(out), want[1])
    return n, why, err, d, GUARD + args, rc


# --- checkpoints and logs --------------------------------------------------------------
# A log of iterations with maps (log_map = 2) and a checkpoint, then resumed
# to more iterations: the resume reads both and writes both.
HDF5_JOB = ("[integral]\nintegrand = f4\ndim = 3\n[vegas]\nneval = 2000\nmaxiter = 4\n"
            "skip = 0\nseed = 3\n[run]\nthreads = 1\ncheckpoint = run.ck\nlog = run.log.h5\n"
            "log_map = 2\ncheckpoint_every = 1\n")
RESUME = ["run", "job.ini", "--resume", "--force", "--set", "vegas.maxiter=6", "-q", "-j"]
# Found by the fuzzer or by hand before it; each case is (file, byte, bit)
# or (file, length).
KNOWN = [("run.log.h5", 3215, 3), ("run.log.h5", 8935, 0),
         # the size of a string in the global heap: HDF5 read 32 kB past it
         ("run.log.h5", 31073, 7)]


# --- crafted files: every read checks type class, rank and size -------------------------
# What each command reads, and must refuse when it is crafted: (path of the
# object, kind).  Attributes: "i" integer, "f" floating point, "s" string.
CK_READ = [("format_version", "i"), ("definition", "s"), ("definition_hash", "s"),
           ("strata_version", "s"), ("backend", "s"), ("host", "s"), ("created", "s"),
           ("ranks", "i"), ("iterations", "i"), ("neval_total", "i"), ("time_s", "f"),
           ("strat_finer", "i"), ("packed_uniforms", "i"),
           ("/map", "d"), ("/allocation", "d"), ("/history/integral", "d"),
           ("/history/sigma", "d"), ("/history/time_s", "d"), ("/history/neval", "d")]
LOG_PRINT = [("format", "s"), ("status", "s"), ("converged", "i"), ("iterations", "i"),
             ("neval", "i"), ("integral", "f"), ("sigma", "f"), ("chi2_dof", "f"), ("Q", "f"),
             ("time_s", "f"), ("exact", "f"), ("no_target", "i"), ("lost", "i"),
             ("lost_z", "f"), ("neval_needed", "f"), ("thin", "i"), ("/iterations", "d")]
# Read on resume only (a log that fails them is set aside, the run goes on).
LOG_RESUME = [("definition", "s"), ("definition_hash", "s"), ("checkpoint_iterations", "i"),
              ("/map", "d"), ("/map_itn", "d"), ("/rank_sample_time", "d"), ("/sessions", "d")]
TABLE_READ = [("/t", "d"), ("/u", "d"), ("/t:x0", "f"), ("/t:x1", "f"), ("/u:x", "f"),
              ("/u:y0", "f")]
TABLE_BODY = ("out[0] = strata_interp1(STRATA_TABLE(tables, t), x[0]) * "
              "strata_interp2(STRATA_TABLE(tables, u), x[0], x[1]);")
TABLE_RUN = ["run", "--threads", "1", "--set", "integral.integrand=inline", "--set",
             "integral.form=extended", "--set", "integral.dim=2", "--set",
             "integral.body=" + TABLE_BODY, "--set", "integral.tables=t=tbl.h5:/t, u=tbl.h5:/u",
             "--set", "vegas.neval=1000", "--set", "vegas.maxiter=2", "--set", "vegas.skip=0",
             "-q", "-j"]


def make_table(path):
    with h5py.File(path, "w") as f:
        t = f.create_dataset("t", data=np.linspace(1.0, 2.0, 64))
        t.attrs["x0"], t.attrs["x1"] = 0.0, 1.0
        u = f.create_dataset("u", data=np.arange(64.0).reshape(8, 8) + 1.0)
        u.attrs["x"] = np.linspace(0.0, 1.0, 8)
        u.attrs["y0"], u.attrs["y1"] = 0.0, 1.0


def bad_value(r, kind, old, any_number):
    """A value of the wrong shape or type for an attribute of that kind
    (any_number: integers and floating point both belong)."""
    c = r.randrange(7)
    if c == 0:  # an array where one value belongs (4,000: past any buffer)
        return np.zeros(r.choice([0, 2, 4000]), dtype="S8" if kind == "s" else "i8")
    if c == 1:  # two dimensions
        return np.zeros((1, 1), dtype="i8" if kind == "i" else "f8")
    if c == 2:  # a string with a NUL inside
        text = old if isinstance(old, bytes) else str(old).encode()
        return np.bytes_(text + b"\0" + r.choice([b"", b"x", text]) + b"!")
    if c == 3:  # another class
        return "3" if any_number else {"i": 1.5, "f": np.int64(3), "s": np.int64(7)}[kind]
    if c == 4:
        return np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")])[0]
    if c == 5:
        return h5py.Empty("f8")
    return np.array(["a", "b"], dtype=h5py.string_dtype())


def craft(r, path, what, kind, extra, table):
    """Makes the object what of the file at path wrong; returns what was done.
    extra: a path in the file for a soft link, a file for an external one."""
    with h5py.File(path, "r+") as f:
        if ":" in what:  # an attribute of a dataset
            obj, name = what.split(":")
            owner = f[obj]
        elif kind != "d":
            owner, name = f, what
        if kind != "d":
            old = owner.attrs[name] if name in owner.attrs else b"x"
            v = bad_value(r, kind, old, table)
            del owner.attrs[name]
            if isinstance(v, np.bytes_):
                owner.attrs.create(name, v, dtype="S%d" % len(v))
            else:
                owner.attrs[name] = v
            return "attribute %s set to %s %s" % (what, getattr(v, "dtype", type(v).__name__),
                                                 getattr(v, "shape", ""))
        old = f[what]
        attrs = dict(old.attrs)
        shape, dtype = old.shape, old.dtype
        # Kept under another name: the dataset itself stays in the file.
        f.move(what, what + "_")
        old = f[what + "_"]
        c = r.randrange(8)
        if c == 0:  # declares far more than the file holds
            n = 2 ** r.choice([40, 48, 60])
            big = (n,) + tuple(shape[1:]) if len(shape) else (n,)
            d = f.create_dataset(what, shape=big, maxshape=(None,) + big[1:], dtype=dtype,
                                 chunks=(1,) + big[1:])
            done = "declared %s" % (big,)
        elif c == 1:  # another rank
            data = np.zeros(tuple(shape) + (1,) if len(shape) < 3 else shape[:1], dtype=dtype)
            d = f.create_dataset(what, data=data)
            done = "rank %d" % data.ndim
        elif c == 2:  # another class
            others = ["S8", [("a", "i4"), ("b", "f8")]] + ([] if table else ["f8", "i8"])
            other = r.choice([o for o in others if np.dtype(o).kind != dtype.kind])
            d = f.create_dataset(what, shape=shape, dtype=other)
            done = "class %s" % np.dtype(other).kind
        elif c == 3:
            d = f.create_dataset(what, data=np.float64(1.0))
            done = "scalar"
        elif c == 4:  # a soft link to another object of the file
            f[what] = h5py.SoftLink(r.choice(["/", extra[0]]))
            return "soft link"
        elif c == 5:  # an external link, to a file strata did not open
            f[what] = h5py.ExternalLink(extra[1], r.choice(["/t", "/map", "/iterations"]))
            return "external link"
        elif c == 6:
            f.create_group(what)
            return "group"
        else:  # (a log of no rows is a log still, and its table empty)
            if path.endswith("run.log.h5"):
                f.move(what + "_", what)
                return "dataset %s unchanged" % what
            d = f.create_dataset(what, shape=(0,) + tuple(shape[1:]), dtype=dtype,
                                 maxshape=(None,) + tuple(shape[1:]))
            done = "no rows"
        for k, v in attrs.items():
            d.attrs[k] = v
        return "dataset %s: %s" % (what, done)


def crafted_case(strata, seed, n, root, ref):
    r = random.Random("crafted %d/%d" % (seed, n))
    d = tempfile.mkdtemp(dir=root)
    for name in ("job.ini", "run.ck", "run.log.h5", "tbl.h5"):
        shutil.copy(os.path.join(ref["dir"], name), d)
    target = r.choice(["run.ck", "run.log.h5", "run.log.h5", "tbl.h5"])
    path = os.path.join(d, target)
    if target == "run.ck":
        what, kind = r.choice(CK_READ)
        tries = [(RESUME, "refused")]
    elif target == "tbl.h5":
        what, kind = r.choice(TABLE_READ)
        tries = [(TABLE_RUN, "refused")]
    else:
        what, kind = r.choice(LOG_PRINT + LOG_RESUME)
        tries = [(["log", "run.log.h5"], "refused" if (what, kind) in LOG_PRINT else "same"),
                 (RESUME, "same")]
    # The other object a link points to, and a file outside (another user's, say).
    other = os.path.join(root, "ref", "tbl.h5" if target != "tbl.h5" else "run.log.h5")
    try:
        done = "%s: %s" % (target, craft(r, path, what, kind, ("/" + what.strip("/") + "_",
                                                              other), target == "tbl.h5"))
    except (OSError, ValueError, TypeError, KeyError) as e:
        return n, "cannot craft %s of %s: %r" % (what, target, e), b"", d, [], 0
    if done.endswith("unchanged"):
        tries = [(args, "same") for args, want in tries]
    return n, *judge(strata, d, tries, path, ref, done)


def hdf5_damage(seed, n, folder):
    """Case n of seed: the file of folder it damages and where, (byte, bit)
    flipped or (length,) cut to, and the words that say so.  The Python
    log reader's sweep (python/tests/test_log_fuzz.py) takes the same."""
    r = random.Random("%d/%d" % (seed, n))
    if n < len(KNOWN):
        target, where = KNOWN[n][0], KNOWN[n][1:]
    else:
        target = r.choice(["run.ck", "run.log.h5", "run.log.h5"])
        size = os.path.getsize(os.path.join(folder, target))
        where = (r.randrange(size), r.randrange(8)) if r.random() < 0.8 else (r.randrange(size),)
    what = "%s: %s" % (target, "bit %d of byte %d flipped" % (where[1], where[0])
                       if len(where) == 2 else "cut to %d bytes" % where[0])
    return target, where, what


def damage(path, where):
    with open(path, "r+b") as f:
        if len(where) == 2:
            f.seek(where[0])
            c = f.read(1)
            if c:
                f.seek(where[0])
                f.write(bytes([c[0] ^ (1 << where[1])]))
        else:
            f.truncate(where[0])


def hdf5_case(strata, seed, n, root, ref):
    # One case in three (past the known ones) is a crafted file, where h5py is there.
    if h5py and n >= len(KNOWN) and n % 3 == 2:
        return crafted_case(strata, seed, n, root, ref)
    d = tempfile.mkdtemp(dir=root)
    for name in ("job.ini", "run.ck", "run.log.h5"):
        shutil.copy(os.path.join(ref["dir"], name), d)
    target, where, what = hdf5_damage(seed, n, d)
    path = os.path.join(d, target)
    damage(path, where)
    tries = [(["log", "run.log.h5"], "same")] if target == "run.log.h5" else []
    return n, *judge(strata, d, tries + [(RESUME, "same")], path, ref, what)


def judge(strata, d, tries, path, ref, what):
    """Runs each (args, want) of tries on the damaged file at path: want
    "refused", it must fail; "same", it may fail or give the undamaged
    answer.  Returns (why or None, stderr, folder, args, exit status)."""
    damaged = digest(path)
    for args, want in tries:
        rc, out, err = run(strata, args, d)
        if os.environ.get("FUZZ_CASE"):  # one case: say what it did and what came of it
            print("%s; strata %s: exit %d: %s" % (what, args[0], rc,
                                                 err.decode(errors="replace").strip()[-300:]))
        why = crash(rc, err)
        if not why and rc != 0:
            why = message(rc, err)
            if not why and path.endswith("run.ck") and not kept(path, damaged, d):
                why = "exit %d, and the damaged checkpoint is gone or changed" % rc
        if not why and rc == 0:
            if want == "refused":
                why = "a file that must be refused was read (exit 0)"
            elif args[0] == "log" and out != ref["log"]:
                why = "strata log printed another table (exit 0)"
            elif args[0] == "run" and result(out) != ref["resume"]:
                why = "the resume gave %s, undamaged %s (exit 0)" % (result(out), ref["resume"])
        if why:
            return "%s; %s" % (what, why), err, d, args, rc
    return None, b"", d, tries[-1][0], rc


def prepare_hdf5(strata, root):
    d = os.path.join(root, "ref")
    os.mkdir(d)
    with open(os.path.join(d, "job.ini"), "w") as f:
        f.write(HDF5_JOB)
    rc, out, err = run(strata, ["run", "job.ini", "-q"], d)
    if rc != 0:
        sys.exit("fuzz: the reference run failed (%d): %s" % (rc, err.decode(errors="replace")))
    ref = {"dir": d}
    if h5py:
        make_table(os.path.join(d, "tbl.h5"))
        rc, out, err = run(strata, TABLE_RUN, d)
        if rc != 0:
            sys.exit("fuzz: the table run failed (%d): %s" % (rc, err.decode(errors="replace")))
    else:
        print("fuzz hdf5: no h5py (python3-h5py): crafted files left out", flush=True)
    rc, ref["log"], err = run(strata, ["log", "run.log.h5"], d)
    r = os.path.join(root, "resumed")
    shutil.copytree(d, r)
    rc2, out, err2 = run(strata, RESUME, r)
    ref["resume"] = result(out)
    if rc or rc2 or not ref["resume"]:
        sys.exit("fuzz: the reference log or resume failed: %s%s" % (err.decode(errors="replace"),
                                                                    err2.decode(errors="replace")))
    shutil.rmtree(r)
    return ref


def prepare_job(strata, root):
    bases = []
    for k in range(NBASE):
        d = tempfile.mkdtemp(dir=root)
        with open(os.path.join(d, "job.ini"), "w") as f:
            f.write(base_job(k))
        rc, out, err = run(strata, GUARD, d)
        if rc != 0 or not result(out):
            sys.exit("fuzz: base job %d failed (%d): %s" % (k, rc, err.decode(errors="replace")))
        bases.append(result(out))
        shutil.rmtree(d)
    d = os.path.join(root, "ck")
    os.mkdir(d)
    with open(os.path.join(d, "job.ini"), "w") as f:
        f.write(base_job(0) + "checkpoint = ck.h5\n")
    rc, out, err = run(strata, ["run", "job.ini", "-q"], d)
    if rc != 0:
        sys.exit("fuzz: the checkpoint run failed: %s" % err.decode(errors="replace"))
    path = os.path.join(d, "ck.h5")
    return bases, (path, digest(path))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("job", "hdf5"):
        sys.exit("usage: fuzz.py job|hdf5 STRATA")
    what, strata = sys.argv[1], os.path.abspath(sys.argv[2])
    seed = int(os.environ.get("FUZZ_SEED", "1"))
    ncases = int(os.environ.get("FUZZ_CASES", "2000" if what == "job" else "500"))
    one = os.environ.get("FUZZ_CASE")
    cases = [int(one)] if one else range(ncases)
    root = tempfile.mkdtemp(prefix="strata-fuzz-")
    ENV["STRATA_CACHE_DIR"] = os.path.join(root, "cache")
    print("fuzz %s: seed %d, %d cases, %s (FUZZ_SEED=%d FUZZ_CASES=%d to repeat)"
          % (what, seed, len(cases), strata, seed, ncases), flush=True)
    if what == "job":
        bases, ckpt = prepare_job(strata, root)
        case = lambda n: job_case(strata, seed, n, root, bases, ckpt)
    else:
        ref = prepare_hdf5(strata, root)
        case = lambda n: hdf5_case(strata, seed, n, root, ref)
    fails, status = 0, {}
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("FUZZ_JOBS", "2"))) as pool:
        for n, why, err, d, args, rc in pool.map(case, cases):
            status[rc] = status.get(rc, 0) + 1
            if why:
                fails += 1
                if fails <= 20:
                    lines = err.decode("utf-8", "replace").strip().splitlines()
                    at = [i for i, ln in enumerate(lines) if "ERROR: " in ln or "runtime error" in ln]
                    tail = lines[at[0]:at[0] + 8] if at else lines[-8:]
                    print("FAIL case %d (FUZZ_SEED=%d FUZZ_CASE=%d): %s\n  strata %s\n    %s"
                          % (n, seed, n, why, " ".join(repr(a) if re.search(r"[^\w./=+-]", a)
                                                       else a for a in args),
                             "\n    ".join(tail)), flush=True)
            if not one:
                shutil.rmtree(d, ignore_errors=True)
    print("fuzz %s: %d cases, %d failed (seed %d); exit status (last run of a case): %s%s"
          % (what, len(cases), fails, seed, ", ".join("%d: %d" % kv for kv in sorted(status.items())),
             "; files of the case in " + d if one else ""))
    if not one:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
