"""cffi builders of the binding, in API mode.  Every declaration of
libstrata's comes from its headers, strata/strata.h and strata/report.h,
as the preprocessor expands them (_header.py: the structs' fields, those
of strata/keys.h's lists too, the enums, the functions and the integer
macros), so that the binding cannot drift from the header; beside them
only the binding's own (OWN_CDEF).  The table of keywords the binding
reads at run time comes from strata/keys.h's lists too (PRELUDE's
strata_py_keys).  Run by setup.py, which first builds the libstrata they
read and link (STAGE), unless $STRATA_PREFIX names an installed one."""
import importlib.util
import os
import shlex
import shutil
import subprocess

from cffi import FFI

# The type of the keys' table, in every module that includes ffibuilder.
KEY_TYPE = r"""
typedef struct {
  const char *field, *keyword, *choices;
  int kind, setting;
} strata_py_key;
"""
# The binding's own declarations, beside the headers' (_header.py): free()
# for what the library malloc's, the keys' table and the settings' start
# that PRELUDE defines, and the calls from C into Python.
OWN_CDEF = "void free(void *p);\n" + KEY_TYPE + r"""
int strata_py_nkeys(void);
const strata_py_key *strata_py_key_at(int i);
void strata_py_settings_init(strata_settings *st);

extern "Python" void strata_py_batch(int64_t n, const double *x, int dim, void *user,
                                     double *out);
extern "Python" void strata_py_restored(const strata_iteration *it, void *ctx);
extern "Python" int strata_py_progress(const strata_iteration *it, void *ctx);
"""
# The oldest interface (STRATA_INTERFACE) whose structs hold all that the
# binding reads: the peak search's parameters and results.
INTERFACE = 4

HERE = os.path.dirname(os.path.abspath(__file__))
# Where setup.py builds and installs the bundled libstrata (configure --prefix).
STAGE = os.path.join(os.path.dirname(HERE), "build", "libstrata", "stage")


def installed_prefix():
    """$STRATA_PREFIX: the binding is built against the libstrata that
    make install put there, and bundles none; None builds one."""
    return os.environ.get("STRATA_PREFIX") or None


def configure_words():
    """The extra configure options of the bundled build ($STRATA_CONFIGURE)."""
    return shlex.split(os.environ.get("STRATA_CONFIGURE", ""))


def mpicc():
    """The MPI compiler wrapper ($MPICC, else mpicc) or None."""
    return shutil.which(os.environ.get("MPICC", "mpicc"))


def bundled_mpi():
    """Whether the bundled libstrata is built with MPI: where an MPI
    compiler is and $STRATA_CONFIGURE does not say --without-mpi."""
    return mpicc() is not None and not any(
        w in ("--without-mpi", "--with-mpi=no") for w in configure_words())


def libdir_of(prefix):
    """The folder under PREFIX that make install put libstrata.so in."""
    for d in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu")):
        if os.path.exists(os.path.join(prefix, d, "libstrata.so")):
            return os.path.join(prefix, d)
    return os.path.join(prefix, "lib")


def strata_flags():
    """include_dirs, library_dirs and libraries of libstrata.  The bundled
    library lies beside the modules in the package (rpath $ORIGIN); an
    installed one where it was installed."""
    prefix = installed_prefix()
    if prefix is None:
        inc, lib, rpath = os.path.join(STAGE, "include"), os.path.join(STAGE, "lib"), "$ORIGIN"
    else:
        inc, lib = os.path.join(prefix, "include"), libdir_of(prefix)
        rpath = lib
    return dict(include_dirs=[inc], library_dirs=[lib], libraries=["strata"],
                extra_compile_args=[], extra_link_args=["-Wl,-rpath," + rpath])


def include_dir():
    """The folder holding strata/ of the libstrata the binding is built
    against: the installed one ($STRATA_PREFIX), else the sources an sdist
    carries or the checkout around this folder."""
    prefix = installed_prefix()
    package = os.path.dirname(HERE)
    for inc in ([os.path.join(prefix, "include")] if prefix else
                [os.path.join(package, "libstrata", "include"),
                 os.path.join(os.path.dirname(package), "include")]):
        if os.path.exists(os.path.join(inc, "strata", "keys.h")):
            return inc
    raise SystemExit("strata: no strata/keys.h in %s: the binding needs the libstrata of "
                     "this repository" % (prefix or package))


def _header_module():
    """_header.py beside this file (cffi runs this one by its path, not as
    part of the package)."""
    spec = importlib.util.spec_from_file_location("strata_mc_header",
                                                  os.path.join(HERE, "_header.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_cdef():
    """The headers' declarations, refused with one line where they are
    older than the binding."""
    text, macros = _header_module().public_cdef(include_dir())
    if macros.get("STRATA_INTERFACE", 0) < INTERFACE:
        raise SystemExit("strata: this binding needs libstrata of interface %d or later "
                         "(the headers in %s are of %s): install the libstrata of this "
                         "repository" % (INTERFACE, include_dir(),
                                         macros.get("STRATA_INTERFACE", "none")))
    return text


ffibuilder = FFI()
ffibuilder.cdef(public_cdef() + OWN_CDEF)
# The keys' table from strata/keys.h's lists, and strata_settings_init, a
# macro that hands the library this header's struct sizes.
PRELUDE = r"""
#include <strata/strata.h>
#include <strata/report.h>
#include <stdlib.h>
""" + KEY_TYPE + r"""
#define STRATA_PY_PARAM(type, field, kind, key, keyword, lo, hi, def, choices) \
  {#field, keyword, choices, STRATA_KEY_##kind, 0},
#define STRATA_PY_SETTING(type, field, kind, key, keyword, lo, hi, def, choices) \
  {#field, keyword, choices, STRATA_KEY_##kind, 1},
static const strata_py_key strata_py_keys[] = {STRATA_PARAMS_KEYS(STRATA_PY_PARAM)
                                               STRATA_SETTINGS_KEYS(STRATA_PY_SETTING)};
static int strata_py_nkeys(void) { return sizeof strata_py_keys / sizeof *strata_py_keys; }
static const strata_py_key *strata_py_key_at(int i) { return &strata_py_keys[i]; }
static void strata_py_settings_init(strata_settings *st) { strata_settings_init(st); }
"""
ffibuilder.set_source("strata_mc._lib", PRELUDE, **strata_flags())

why_no_mpi = ""


def mpi_flags():
    """MPI's compile words, or None (and why_no_mpi) where libstrata has
    no MPI or no MPI is found.  $MPICC, then mpicc, then pkg-config's
    ompi-c and mpich."""
    global why_no_mpi
    prefix = installed_prefix()
    if prefix is None and not bundled_mpi():
        why_no_mpi = ("libstrata is built without MPI (%s)"
                      % ("STRATA_CONFIGURE says so" if mpicc() else "no mpicc; set MPICC"))
        return None
    if prefix is not None and not os.path.exists(
            os.path.join(prefix, "include", "strata", "strata_mpi.h")):
        why_no_mpi = "the libstrata in %s has no strata/strata_mpi.h: it was built without MPI" % prefix
        return None
    cc = mpicc()
    if cc:
        for show in (["-showme:compile"], ["-compile_info"]):
            r = subprocess.run([cc] + show, capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip():
                words = shlex.split(r.stdout)
                if show == ["-compile_info"]:  # MPICH: the whole command line
                    words = [w for w in words[1:] if w.startswith(("-I", "-D"))]
                return words
    for pc in ("ompi-c", "mpich"):
        try:
            r = subprocess.run(["pkg-config", "--cflags", pc], capture_output=True, text=True)
        except OSError:
            break
        if r.returncode == 0:
            return shlex.split(r.stdout)
    why_no_mpi = "no mpicc (set MPICC) and no pkg-config file ompi-c or mpich"
    return None


def make_mpi_builder():
    b = FFI()
    b.include(ffibuilder)
    b.cdef("int strata_py_comm_mpi(uintptr_t comm_address, strata_comm **out);")
    flags = strata_flags()
    words = mpi_flags() or []
    flags["include_dirs"] = flags["include_dirs"] + [w[2:] for w in words if w.startswith("-I")]
    flags["extra_compile_args"] = flags["extra_compile_args"] + [
        w for w in words if not w.startswith("-I")]
    # The address of an MPI_Comm handle (mpi4py's MPI._addressof): MPI_Comm
    # is an int in MPICH and a pointer in Open MPI, and this takes either.
    b.set_source("strata_mc._mpi", r"""
#include <strata/strata.h>
#include <strata/report.h>
#include <strata/strata_mpi.h>
""" + KEY_TYPE + r"""
static int strata_py_comm_mpi(uintptr_t comm_address, strata_comm **out)
{
  return strata_comm_mpi(*(MPI_Comm *)comm_address, out);
}
""", **flags)
    return b


mpi_ffibuilder = make_mpi_builder() if mpi_flags() is not None else None

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
