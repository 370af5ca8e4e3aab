"""The compiled part of the binding: cffi modules built against the
installed libstrata, found by pkg-config (strata.pc; PKG_CONFIG_PATH
honoured).  strata._mpi, the bridge from an mpi4py communicator, is built
where strata/strata_mpi.h is installed and an MPI compiler wrapper or
pkg-config file gives MPI's flags; without it the binding runs without
MPI."""
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "strata"))
import _build  # noqa: E402

modules = ["strata/_build.py:ffibuilder"]
if _build.mpi_flags() is not None:
    modules.append("strata/_build.py:mpi_ffibuilder")
else:
    print("strata: building without MPI (%s)" % _build.why_no_mpi, file=sys.stderr)

setup(cffi_modules=modules)
