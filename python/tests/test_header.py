"""The binding declares what libstrata's public headers declare, as they
declare it: every struct and union with its fields, their types and
offsets and its size, every enum, every function with its type, every
integer constant with its value.  _header.py derives the declarations from
the headers when the binding is built, so a header changed without a new
build of the binding, or a declaration written by hand, fails here.  The
headers are the checkout's include/ ($STRATA_INCLUDE names others)."""
import os
import re
import shutil

import cffi
import pytest

from strata_mc import _header
from strata_mc._lib import ffi, lib

INCLUDE = os.environ.get("STRATA_INCLUDE") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "include")

pytestmark = pytest.mark.skipif(not shutil.which(_header.preprocessor()[0]),
                                reason="no C preprocessor (%s)" % _header.preprocessor()[0])


@pytest.fixture(scope="module")
def header():
    """The headers' declarations in a cffi of their own, which lays out
    the structs itself."""
    text, _ = _header.public_cdef(INCLUDE)
    h = cffi.FFI()
    h.cdef(text)
    return h


def cname(t):
    """t's C name, a typedef's struct named as the typedef (the compiled
    module names some by their tag)."""
    return re.sub(r"\b(struct|union|enum) ", "", t.cname)


def shape(f, t):
    """What of type t must agree: its kind and name, and a struct's or
    union's size and fields (name, type, offset, bits) or an enum's values."""
    out = [t.kind, cname(t)]
    if t.kind == "struct" or t.kind == "union":
        try:  # before its fields: cffi 2.1 aborts on the fields of an opaque struct
            size = f.sizeof(t)
        except (ValueError, ffi.error):  # its size is unknown
            return out + ["opaque"]
        out += [size] + [(n, cname(c.type), c.offset, c.bitsize) for n, c in t.fields]
    elif t.kind == "enum":
        out.append(sorted(t.relements.items()))
    return out


def test_types(header):
    typedefs, structs, unions = header.list_types()
    names = typedefs + ["struct " + s for s in structs] + ["union " + u for u in unions]
    assert names
    for name in names:
        h = shape(header, header.typeof(name))
        try:
            b = shape(ffi, ffi.typeof(name))
        except ffi.error:
            b = ["not declared"]
        assert b == h, "%s: the header's, not the binding's: %s; the binding's, not the " \
            "header's: %s" % (name, [x for x in h if x not in b], [x for x in b if x not in h])


def test_functions(header):
    functions = [k.split()[1] for k in header._parser._declarations if k.startswith("function ")]
    assert "strata_integrator_run" in functions
    for name in functions:
        tp = header._parser._declarations["function " + name][0]
        with header._lock:
            h = cname(header._get_cached_btype(tp))
        assert hasattr(lib, name), "%s: declared by the header (%s), not by the binding" % (name, h)
        b = cname(ffi.typeof(getattr(lib, name)))
        assert b == h, "%s: the binding has %s, the header %s" % (name, b, h)


def test_constants(header):
    _, macros = _header.public_cdef(INCLUDE)
    constants = dict(header._parser._int_constants, **macros)
    assert "STRATA_INTERFACE" in constants and "STRATA_OK" in constants
    for name, value in constants.items():
        b = getattr(lib, name, "not declared")
        assert b == value, "%s: the binding has %s, the header %s" % (name, b, value)
