"""The binding and the libstrata it runs on.

build_ext first builds libstrata (configure --disable-program && make
install into build/libstrata/stage), from the checkout that holds this
folder (its files copied, autoreconf run on them) or from the libstrata/
folder of an sdist (configure already generated), then compiles the cffi
modules against it and puts libstrata.so.N beside them in the package,
where their rpath $ORIGIN finds it.  The library gets MPI where an MPI
compiler is (strata_mc._mpi, the bridge from an mpi4py communicator, comes
with it) and CUDA where nvcc is, as ./configure decides.

$STRATA_CONFIGURE adds configure options (the portable wheel:
--without-mpi --with-cuda=no, scripts/wheel); $STRATA_PREFIX builds
against the libstrata that make install put in that prefix instead and
bundles none."""
import filecmp
import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "strata_mc"))
import _build  # noqa: E402

# The C sources: an sdist's copy, else the checkout around this folder.
SDIST_TREE = os.path.join(HERE, "libstrata")
CHECKOUT = os.path.dirname(HERE)


def fail(msg):
    raise SystemExit("strata: " + msg)


def source_files(root):
    """The checkout's files that make libstrata: git's tracked files less
    python/, else (no git) every file less build products."""
    if os.path.isdir(os.path.join(root, ".git")) and shutil.which("git"):
        r = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True, text=True)
        if r.returncode == 0:
            return [f for f in r.stdout.split("\0") if f and not f.startswith("python/")]
    skip_dirs = {".git", "python", "autom4te.cache", ".libs", ".deps", "build"}
    skip_ext = (".o", ".lo", ".la", ".a", ".so", ".log", ".trs")
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in skip_dirs]
        out += [os.path.relpath(os.path.join(d, f), root) for f in files
                if not f.endswith(skip_ext) and f not in ("config.status", "Makefile")]
    return out


def copy_tree(root, files, dest):
    """Copies FILES of ROOT under DEST, leaving alone the ones already
    there and equal, so that make rebuilds only what changed."""
    for f in files:
        src, dst = os.path.join(root, f), os.path.join(dest, f)
        if os.path.islink(src) or not os.path.isfile(src):
            continue
        if os.path.exists(dst) and filecmp.cmp(src, dst, shallow=False):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def run(cmd, cwd, log):
    """Runs CMD in CWD with its output in LOG; on failure the log's tail
    and one line naming the step."""
    with open(log, "a") as out:
        out.write("$ %s\n" % " ".join(cmd))
        out.flush()
        r = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        with open(log) as f:
            sys.stderr.write("".join(f.readlines()[-40:]))
        fail("%s failed in %s (the whole log: %s)" % (cmd[0], cwd, log))


def build_libstrata():
    """configure && make install of libstrata into _build.STAGE."""
    top = os.path.dirname(_build.STAGE)
    src = os.path.join(top, "src")
    os.makedirs(src, exist_ok=True)
    log = os.path.join(top, "build.log")
    open(log, "w").close()
    if os.path.exists(os.path.join(SDIST_TREE, "configure")):
        copy_tree(SDIST_TREE, source_files(SDIST_TREE), src)
    elif os.path.exists(os.path.join(CHECKOUT, "configure.ac")):
        copy_tree(CHECKOUT, source_files(CHECKOUT), src)
        if not os.path.exists(os.path.join(src, "configure")):
            if not shutil.which("autoreconf"):
                fail("building from a checkout needs autoconf, automake and libtool "
                     "(Debian: apt install autoconf automake libtool)")
            run(["autoreconf", "-fi"], src, log)
    else:
        fail("no libstrata sources: neither %s nor a checkout at %s" % (SDIST_TREE, CHECKOUT))
    args = ["--prefix=" + _build.STAGE, "--libdir=" + os.path.join(_build.STAGE, "lib"),
            "--disable-program", "--disable-static"]
    if not _build.bundled_mpi():
        args.append("--without-mpi")
    args += _build.configure_words()
    stamp = os.path.join(top, "configured-with")
    if not (os.path.exists(os.path.join(src, "config.status")) and os.path.exists(stamp)
            and open(stamp).read() == repr(args)):
        run(["./configure"] + args, src, log)
        with open(stamp, "w") as f:
            f.write(repr(args))
    jobs = "-j%d" % (os.cpu_count() or 1)
    run(["make", jobs, "install-libLTLIBRARIES", "install-pkgincludeHEADERS"], src, log)


class BuildExt(build_ext):
    """libstrata first, then the cffi modules, then the library beside them."""

    def run(self):
        # The modules link the library found now (its soname, its place):
        # a build directory left from another libstrata holds modules that
        # look up to date, since their C source does not change with it.
        self.force = True
        if _build.installed_prefix() is None:
            print("strata: building libstrata (log: %s)" % os.path.join(
                os.path.dirname(_build.STAGE), "build.log"), file=sys.stderr)
            build_libstrata()
        super().run()
        if _build.installed_prefix() is None:
            dest = os.path.dirname(self.get_ext_fullpath("strata_mc._lib"))
            # The library under its soname (libstrata.so.N), as the modules ask for it.
            libdir = os.path.join(_build.STAGE, "lib")
            soname = [n for n in os.listdir(libdir) if re.fullmatch(r"libstrata\.so\.\d+", n)]
            if len(soname) != 1:
                raise RuntimeError("strata: no one libstrata.so.N in %s: %s" % (libdir, soname))
            shutil.copy2(os.path.realpath(os.path.join(libdir, soname[0])),
                         os.path.join(dest, soname[0]))


class Sdist(sdist):
    """The sdist carries libstrata's sources (libstrata/) with configure
    generated, so that building it needs a C compiler but no autotools."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        if not os.path.exists(os.path.join(CHECKOUT, "configure.ac")):
            return  # an sdist of an sdist: libstrata/ is among FILES already
        tree = os.path.join(base_dir, "libstrata")
        copy_tree(CHECKOUT, source_files(CHECKOUT), tree)
        r = subprocess.run(["autoreconf", "-fi"], cwd=tree, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout + r.stderr)
            fail("autoreconf failed in %s" % tree)
        shutil.rmtree(os.path.join(tree, "autom4te.cache"), ignore_errors=True)


modules = ["strata_mc/_build.py:ffibuilder"]
if _build.mpi_flags() is not None:
    modules.append("strata_mc/_build.py:mpi_ffibuilder")
else:
    print("strata: building without MPI (%s)" % _build.why_no_mpi, file=sys.stderr)

# cffi's modules use the limited API: one wheel serves every CPython >= 3.9.
setup(cffi_modules=modules, cmdclass={"build_ext": BuildExt, "sdist": Sdist},
      options={"bdist_wheel": {"py_limited_api": "cp39"}})
