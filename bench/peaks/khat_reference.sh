#!/bin/sh
# strata's Pareto k-hat against arviz-stats' PSIS (bench/peaks/khat_reference.py).
#   bench/peaks/khat_reference.sh     (from a built tree; Python 3 with arviz-stats)
set -e
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$top/libtool" --quiet --tag=CC --mode=link ${CC:-cc} -std=c11 -O2 -I"$top/include" \
  -I"$top/src" -o "$tmp/khat_reference" "$top/bench/peaks/khat_reference.c" \
  "$top/libstrata_core.la" -lm
python3 "$top/bench/peaks/khat_reference.py" "$tmp/khat_reference"
