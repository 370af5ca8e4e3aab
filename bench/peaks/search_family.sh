#!/bin/sh
# The peak search's Sobol' round on the first COUNT tuning instances of the
# family: components found by d and K, evaluations spent.
#   bench/peaks/search_family.sh [COUNT] [SEED]   (from a built tree)
# Needs Python 3 with numpy and scipy (family.py).
set -e
count=${1:-300}
seed=${2:-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$top/bench/peaks/family_table.py" $(seq 1 "$count") > "$tmp/family_rows.h"
"$top/libtool" --quiet --tag=CC --mode=link ${CC:-cc} -std=c11 -O2 -I"$top/include" -I"$top/src" \
  -I"$top/tests" -I"$tmp" -o "$tmp/search_family" "$top/bench/peaks/search_family.c" \
  "$top/libstrata_core.la" -lm
"$tmp/search_family" "$seed"
