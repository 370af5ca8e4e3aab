"""libstrata's public headers as cffi declarations: the C preprocessor
expands strata/strata.h and strata/report.h (their X-lists of keys
included) with empty stand-ins for the system headers they include, whose
types (int64_t, size_t, FILE) cffi knows itself, so that the binding
declares every struct, enum and function exactly as the header does and
the two cannot drift.  The integer macros, which the preprocessor leaves
out of its output, come from its list of definitions (-dM).  Used by
_build.py when it builds the binding and by tests/test_header.py, which
checks a built binding against the headers it is given."""
import os
import re
import shlex
import subprocess
import tempfile

HEADERS = ("strata/strata.h", "strata/report.h")


def preprocessor():
    """The C compiler's words ($CC, else cc), which preprocess with -E."""
    return shlex.split(os.environ.get("CC") or "cc")


def _run(words, path):
    r = subprocess.run(words, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("strata: %s failed on %s:\n%s" % (words[0], path, r.stderr.strip()))
    return r.stdout


def _system_headers(include):
    """The <...> headers that libstrata's headers include."""
    names = set()
    for d, _, files in os.walk(os.path.join(include, "strata")):
        for f in files:
            with open(os.path.join(d, f)) as h:
                names.update(re.findall(r"^\s*#\s*include\s*<([^>]+)>", h.read(), re.M))
    return names


def public_cdef(include):
    """(declarations, macros): the text cffi's cdef reads for HEADERS under
    INCLUDE (a folder holding strata/), and the integer macros they define,
    name -> value."""
    with tempfile.TemporaryDirectory() as stubs:
        for name in _system_headers(include):
            path = os.path.join(stubs, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").close()
        unit = os.path.join(stubs, "public.c")
        with open(unit, "w") as f:
            f.write("".join("#include <%s>\n" % h for h in HEADERS))
        # Attributes, which cffi does not read, say nothing of a layout it needs.
        words = preprocessor() + ["-E", "-nostdinc", "-D__attribute__(x)=", "-I", stubs,
                                  "-I", include, unit]
        decls = _run(words + ["-P"], os.path.join(include, HEADERS[0]))
        defined = _run(words + ["-dM", "-undef"], os.path.join(include, HEADERS[0]))
    macros = {}
    for name, value in re.findall(r"^#define (STRATA_\w+) (.+)$", defined, re.M):
        if re.fullmatch(r"-?\d+", value.strip()):
            macros[name] = int(value)
    text = "".join("#define %s %d\n" % m for m in sorted(macros.items())) + decls
    return text, macros
