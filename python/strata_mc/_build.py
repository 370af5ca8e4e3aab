"""cffi builders of the binding, in API mode: the C compiler reads
libstrata's strata/strata.h and strata/report.h, so the layout of every
structure is the header's own; the declarations below name only the
fields the binding uses (`...;` leaves the rest to the compiler), and
those of strata_params and strata_settings come from their lists in
strata/keys.h, as does the table of keywords the binding reads at run
time (PRELUDE's strata_py_keys).  Run by
setup.py, which first builds the libstrata they read and link (STAGE),
unless $STRATA_PREFIX names an installed one."""
import os
import re
import shlex
import shutil
import subprocess

from cffi import FFI

CDEF = r"""
#define STRATA_VERSION_MAJOR ...
#define STRATA_VERSION_MINOR ...
#define STRATA_VERSION_PATCH ...
#define STRATA_INTERFACE ...
#define STRATA_MAX_DIM ...
#define STRATA_MAX_PARAMS ...
#define STRATA_MAX_COMP ...
#define STRATA_MAX_NCOMP ...
#define STRATA_OK ...
#define STRATA_EINVAL ...
#define STRATA_ENOMEM ...
#define STRATA_ENOTFINITE ...
#define STRATA_EBACKEND ...
#define STRATA_EIO ...
#define STRATA_ECOMM ...
#define STRATA_EPEER ...
#define STRATA_COMP_INTEGRAL ...
#define STRATA_COMP_SIGMA ...
#define STRATA_COMP_AVG ...
#define STRATA_COMP_AVG_SIGMA ...
#define STRATA_COMP_CHI2_DOF ...
#define STRATA_COMP_Q ...
#define STRATA_COMP_COV ...
#define STRATA_RESUME_NO ...
#define STRATA_RESUME_YES ...
#define STRATA_RESUME_AUTO ...
#define STRATA_PEAKS_AUTO ...
#define STRATA_PEAKS_OFF ...
#define STRATA_PEAKS_ON ...
#define STRATA_MAX_KNOWN ...
#define STRATA_MAX_PEAKS ...
#define STRATA_KEY_COUNT ...
#define STRATA_KEY_WHOLE ...
#define STRATA_KEY_REAL ...
#define STRATA_KEY_SWITCH ...
#define STRATA_KEY_CHOICE ...
#define STRATA_KEY_PATH ...
#define STRATA_KEY_TEXT ...

typedef enum { STRATA_MODE_VEGASPLUS, STRATA_MODE_VEGAS, STRATA_MODE_VEGAS1D,
               STRATA_MODE_PLAIN, STRATA_MODE_QMC, ... } strata_mode;
typedef enum { STRATA_QMC_SOBOL, STRATA_QMC_LATTICE, ... } strata_qmc_rule;
typedef enum { STRATA_BACKEND_AUTO, STRATA_BACKEND_CPU, STRATA_BACKEND_CUDA, ... }
    strata_backend_kind;

typedef double (*strata_fn)(const double *x, int dim, const double *params);
typedef void (*strata_bfn)(int64_t n, const double *x, int dim, void *user, double *out);

typedef struct {
  int search;
  int starts;
  int ascents;
  double uniform;
  int nknown;
  double known[...][...];
  ...;
} strata_peaks_params;

@PARAMS@

typedef struct strata_source strata_source;

typedef struct {
  int dim;
  double lower[...], upper[...];
  double params[...];
  int nparams;
  const char *name;
  int ncomp;
  int adapt_comp;
  strata_bfn fb;
  void *user;
  int batch;
  ...;
} strata_problem;

typedef struct {
  int itn;
  double integral, sigma;
  int64_t neval;
  int kept;
  int restarted;
  double avg, avg_sigma, chi2_dof, q;
  int adapting;
  double time_s;
  int ncomp;
  const double *comp;
  double khat;
  int nchannels;
  ...;
} strata_iteration;

typedef struct {
  double x[...];
  double logf;
  double share;
  double weight;
  int known;
  ...;
} strata_result_peak;

typedef struct {
  double integral, sigma, chi2_dof, q;
  int64_t neval;
  int iterations;
  int converged;
  int nhcube;
  double time_s;
  double comm_time_s;
  int ncomp;
  double comp_integral[...], comp_sigma[...];
  double comp_chi2_dof[...], comp_q[...];
  double comp_cov[...];
  int no_target;
  int lost;
  int lost_itn;
  double lost_z, lost_integral, lost_sigma;
  double neval_needed;
  int peaks_searched;
  int nmodes;
  strata_result_peak modes[...];
  int nchannels;
  double alpha_map, alpha_uniform;
  double khat, khat_limit;
  int khat_itn;
  int64_t search_evals;
  int peaks_held;
  char peaks_reason[...];
  double peaks_neval;
  int dim;
  ...;
} strata_result;

typedef void (*strata_iteration_cb)(const strata_iteration *it, void *ctx);

void strata_params_default(strata_params *p);
int strata_params_check(const strata_params *p);
int strata_problem_check(const strata_problem *pr);
const char *strata_last_error(void);
const char *strata_version(void);
const char *strata_mode_name(strata_mode m);
int strata_mode_parse(const char *s, strata_mode *m);

int strata_source_from_string(const char *code, const char *function, int extended,
                              int ncomp, strata_source **out);
void strata_source_free(strata_source *s);
int strata_problem_set_source(strata_problem *pr, strata_source *s);

typedef struct strata_comm strata_comm;
void strata_comm_free(strata_comm *c);
typedef struct strata_integrator strata_integrator;
int strata_integrator_alloc(const strata_problem *pr, const strata_params *p,
                            strata_backend_kind backend, strata_comm *comm,
                            strata_integrator **out);
void strata_integrator_free(strata_integrator *s);
const char *strata_integrator_backend(const strata_integrator *s);
int strata_integrator_step(strata_integrator *s, strata_iteration *it);
int strata_integrator_finished(const strata_integrator *s);
int strata_integrator_result(const strata_integrator *s, strata_result *res);
int strata_integrator_components(const strata_integrator *s, double *integral, double *sigma,
                                 double *chi2_dof, double *q, double *cov);
int strata_integrator_save(strata_integrator *s, const char *path);
int strata_integrator_load(strata_integrator *s, const char *path,
                           strata_iteration_cb progress, void *ctx);
int strata_integrator_save_buffer(strata_integrator *s, void **buf, size_t *len);
int strata_integrator_load_buffer(strata_integrator *s, const void *buf, size_t len,
                                  strata_iteration_cb progress, void *ctx);
int strata_integrator_map(strata_integrator *s, int *naxes, int *ninc, double *edges);
int strata_integrator_set_map(strata_integrator *s, int naxes, int ninc, const double *edges);
int strata_integrator_start_from(strata_integrator *s, strata_integrator *from);

typedef struct strata_settings_names {
  const char *resume;
  const char *resume_key;
  const char *resume_auto;
  const char *new_stop_keys;
  const char *checkpoint;
  const char *log;
  const char *map;
  const char *backend;
  ...;
} strata_settings_names;

@SETTINGS@
void strata_settings_init(strata_settings *st);
int strata_integrator_settings(strata_integrator *s, const strata_settings *st);
typedef int (*strata_progress_cb)(const strata_iteration *it, void *ctx);
int strata_integrator_run(strata_integrator *s, strata_progress_cb progress, void *ctx,
                          strata_result *res);
int strata_integrator_stopped(const strata_integrator *s);
int strata_integrator_error_shared(const strata_integrator *s);
void strata_request_stop(void);

void strata_report_value_error(char *buf, size_t len, double value, double err);
int strata_report_text(const strata_iteration *its, int n, const strata_result *res,
                       double exact, char **text);

void free(void *p);

/* The keys of strata/keys.h, both lists, from PRELUDE. */
typedef struct {
  const char *field, *keyword, *choices;
  int kind, setting;
} strata_py_key;
int strata_py_nkeys(void);
const strata_py_key *strata_py_key_at(int i);

/* Called by the library from C: a numpy batch integrand, the
 * restored iterations of a load and the progress of a run. */
extern "Python" void strata_py_batch(int64_t n, const double *x, int dim, void *user,
                                     double *out);
extern "Python" void strata_py_restored(const strata_iteration *it, void *ctx);
extern "Python" int strata_py_progress(const strata_iteration *it, void *ctx);
"""

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


def keys_header():
    """strata/keys.h of the libstrata the binding is built against: the
    installed one ($STRATA_PREFIX), else the sources an sdist carries or
    the checkout around this folder."""
    prefix = installed_prefix()
    package = os.path.dirname(HERE)
    for inc in ([os.path.join(prefix, "include")] if prefix else
                [os.path.join(package, "libstrata", "include"),
                 os.path.join(os.path.dirname(package), "include")]):
        path = os.path.join(inc, "strata", "keys.h")
        if os.path.exists(path):
            return path
    raise SystemExit("strata: no strata/keys.h in %s: the binding needs the libstrata of "
                     "this repository" % (prefix or package))


def key_fields(text, name):
    """The (type, field) of each entry X(type, field, ...) of the list
    #define NAME(X) in strata/keys.h's text."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    body = re.search(r"#define %s\(X\)((?:.*\\\n)*.*)" % name, text).group(1)
    fields, depth, start = [], 0, None
    for i, ch in enumerate(body):
        if body.startswith("X(", i) and depth == 0:
            start = i + 2
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and start is not None:
                args = body[start:i].split(",")
                fields.append((args[0].strip(), args[1].strip()))
                start = None
    return fields


def struct_cdef(text, name, before="", after=""):
    """The cdef of the struct whose fields are the list NAME."""
    fields = "".join("  %s %s;\n" % f for f in key_fields(text, name))
    return "typedef struct {\n%s%s%s  ...;\n}" % (before, fields, after)


with open(keys_header()) as _f:
    _KEYS = _f.read()
CDEF = CDEF.replace("@PARAMS@", struct_cdef(
    _KEYS, "STRATA_PARAMS_KEYS", after="  strata_peaks_params peaks;\n") + " strata_params;")
CDEF = CDEF.replace("@SETTINGS@", struct_cdef(
    _KEYS, "STRATA_SETTINGS_KEYS",
    after="  const struct strata_settings_names *names;\n") + " strata_settings;")

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
# The type of the keys' table, in every module that includes ffibuilder.
KEY_TYPE = r"""
typedef struct {
  const char *field, *keyword, *choices;
  int kind, setting;
} strata_py_key;
"""
# An older libstrata's header lacks what the declarations above name: say
# so before the compiler lists the missing fields.
PRELUDE = r"""
#include <strata/strata.h>
#include <strata/report.h>
#include <stdlib.h>
#if !defined(STRATA_INTERFACE) || STRATA_INTERFACE < 4 || !defined(STRATA_SETTINGS_KEYS)
#error "this strata binding needs libstrata of interface 4 or later with strata/keys.h (the peak search's parameters and results): install the libstrata of this repository"
#endif
""" + KEY_TYPE + r"""
#define STRATA_PY_PARAM(type, field, kind, key, keyword, lo, hi, def, choices) \
  {#field, keyword, choices, STRATA_KEY_##kind, 0},
#define STRATA_PY_SETTING(type, field, kind, key, keyword, lo, hi, def, choices) \
  {#field, keyword, choices, STRATA_KEY_##kind, 1},
static const strata_py_key strata_py_keys[] = {STRATA_PARAMS_KEYS(STRATA_PY_PARAM)
                                               STRATA_SETTINGS_KEYS(STRATA_PY_SETTING)};
static int strata_py_nkeys(void) { return sizeof strata_py_keys / sizeof *strata_py_keys; }
static const strata_py_key *strata_py_key_at(int i) { return &strata_py_keys[i]; }
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
