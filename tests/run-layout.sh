#!/bin/sh
# The layout's rules (README.md, "Layout"): src/ is the library's algorithm
# and includes nothing of the program (app/), of io/, gpu/ or mpi/; the
# rest of the library (compile/, io/, api/, mpi/) includes nothing of the
# program.  A quoted include is resolved as the compiler would: beside the
# including file first, then in the include directories.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1
fails=0

# where NAME FROM: the folder a quoted include of NAME from folder FROM resolves to.
where() {
  if [ -f "$2/$1" ]; then echo "$2"; return; fi
  for d in src compile io app gpu mpi api; do
    if [ -f "$d/$1" ]; then echo "$d"; return; fi
  done
  echo "?"
}

# check FOLDER FORBIDDEN...: no file of FOLDER includes a file of a forbidden folder.
check() {
  folder=$1; shift
  for f in $(find "$folder" -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' | sort); do
    dir=$(dirname "$f")
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
      to=$(where "$inc" "$dir")
      to=${to%%/*}
      for bad in "$@"; do
        if [ "$to" = "$bad" ]; then
          echo "FAIL: $f includes \"$inc\" from $bad/"
          fails=$((fails + 1))
        fi
      done
    done
  done
}

check src app io gpu mpi api compile
check compile app io gpu mpi api
check io app gpu mpi api
check mpi app io gpu api
check api app
check gpu app io mpi api

echo "layout: $fails violation(s)"
[ $fails -eq 0 ]
