#!/bin/sh
# The Python package's modules (python/strata_mc/) import no circle.  Every
# relative import is an edge, also one inside a function: deferring it
# only hides the circle until the call.  tsort names a circle.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir/python/strata_mc" || exit 1
edges=$(mktemp)
trap 'rm -f "$edges" "$edges.loop"' EXIT
for f in *.py; do
  m=${f%.py}
  # "from .x import ..." and "from . import x, y".
  sed -n -e 's/^[[:space:]]*from \.\([a-z_][a-z_0-9]*\) import .*/\1/p' \
    -e 's/^[[:space:]]*from \. import \(.*\)/\1/p' "$f" | tr ',' '\n' |
    sed 's/[[:space:]]as[[:space:]].*//; s/[[:space:]]//g' | while read -r to; do
      [ -n "$to" ] && [ "$to" != "$m" ] && echo "$m $to"
    done >>"$edges"
  echo "$m $m" >>"$edges"
done
if ! tsort "$edges" >/dev/null 2>"$edges.loop"; then
  echo "FAIL: a circle of imports in python/strata_mc:"
  sed 's/^/  /' "$edges.loop"
  exit 1
fi
echo "python layout: $(grep -vc '^\(.*\) \1$' "$edges") imports, no circle"
