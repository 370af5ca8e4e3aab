#!/bin/sh
# The layout's rules (README.md, "Layout"), from the lowest layer up:
#
#   include/strata/  the public headers: include nothing else of strata
#   src/             the algorithm, with the interfaces of its backends
#                    (backend.h) and peers (comm.h)
#   comm/            the peers: the public headers, src/comm.h (the interface
#                    they implement) and src/error.h
#   compile/         users' integrands compiled at run time: also src/
#   io/              checkpoints and logs: also comm/ and compile/
#   cpu/             the CPU backend: also src/
#   gpu/             the CUDA backend: also comm/ and compile/
#   api/             the public integrator: every layer of the library
#   app/             the program: the public headers and its own
#
# A file that includes a folder its layer may not (a higher layer, or one
# beside it) fails, and so does any circle of includes.  A quoted include
# is resolved as the compiler resolves it: beside the including file first,
# then in the include directories, in Makefile.am's order.
#
# LAYOUT_PART=lib checks the library alone, LAYOUT_PART=app the program
# alone (tests/run-layout-app.sh), all both; the default is lib, so that
# each test names the part that broke.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1
part=${LAYOUT_PART:-lib}
fails=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT

# where NAME FROM: the file a quoted include of NAME from folder FROM is.
where() {
  if [ -f "$2/$1" ]; then echo "$2/$1"; return; fi
  for d in include src cpu comm compile io api app gpu; do
    if [ -f "$d/$1" ]; then echo "$d/$1"; return; fi
  done
  echo "?"
}

# sources FOLDER: its C, C++ and CUDA files.
sources() {
  find "$1" \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) -type f | sort
}

# check FOLDER ALLOWED...: every quoted include of FOLDER's files lies in
# an allowed folder; records the includes for the circle check.
check() {
  folder=$1; shift
  for f in $(sources "$folder"); do
    dir=$(dirname "$f")
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
      to=$(where "$inc" "$dir")
      if [ "$to" = "?" ]; then
        echo "FAIL: $f includes \"$inc\", which is no file of the tree"
        fails=$((fails + 1))
        continue
      fi
      echo "$f $to" >>"$edges"
      top=${to%%/*}
      ok=0
      for a in "$@"; do [ "$top" = "$a" ] && ok=1; done
      # comm/ takes its interface and the library's error reporting from
      # src/, nothing else.
      [ "$folder" = comm ] && { [ "$to" = src/comm.h ] || [ "$to" = src/error.h ]; } && ok=1
      if [ $ok -eq 0 ]; then
        echo "FAIL: $f includes \"$inc\" ($to): $folder/ may include only $*"
        fails=$((fails + 1))
      fi
    done
  done
}

if [ "$part" != app ]; then
  check include include
  check src include src
  check comm include comm
  check compile include src compile
  check io include src comm compile io
  check cpu include src cpu
  check gpu include src comm compile gpu
  check api include src comm compile io cpu gpu api
fi
if [ "$part" != lib ]; then
  check app include app
fi

# Any circle of includes, whatever the folders (tsort names one).
if ! tsort "$edges" >/dev/null 2>"$edges.loop"; then
  echo "FAIL: a circle of includes:"
  sed 's/^/  /' "$edges.loop"
  fails=$((fails + 1))
fi
rm -f "$edges.loop"

echo "layout ($part): $fails violation(s)"
[ $fails -eq 0 ]
