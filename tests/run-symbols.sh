#!/bin/sh
# libstrata exports its public API and nothing else: every symbol that
# `nm -D --defined-only libstrata.so` lists is a function declared in the
# installed headers (include/strata/*.h), and every function they declare is
# exported.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
lib=$top_builddir/.libs/libstrata.so
if [ ! -f "$lib" ]; then
  echo "SKIP: no shared $lib (configured --disable-shared?)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {sub(/@.*/, "", $3); print $3}' |
  sort -u >"$tmp/exported"
# Declarations: lines that start with a type and name a function, outside
# comments; typedefs of function pointers and the inline helpers of the
# integrand prelude (STRATA_INLINE, compiled into user code) are not the
# library's.
sed -e 's:/\*.*\*/::g' -e '/\/\*/,/\*\//d' "$srcdir"/include/strata/*.h |
  grep '^[A-Za-z]' | grep -v -e '^typedef' -e 'STRATA_INLINE' -e '^static' |
  grep -o '\bstrata_[a-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | sort -u >"$tmp/declared"

fails=0
for s in $(comm -23 "$tmp/exported" "$tmp/declared"); do
  echo "FAIL: libstrata.so exports $s, which no public header declares"
  fails=$((fails + 1))
done
for s in $(comm -13 "$tmp/exported" "$tmp/declared"); do
  # strata_mpi.h is installed, and its function built, only with MPI.
  if [ "$s" = strata_comm_mpi ] && [ ! -f "$top_builddir/comm/libstrata_core_la-comm_mpi.lo" ]; then
    continue
  fi
  echo "FAIL: $s is declared in a public header but libstrata.so does not export it"
  fails=$((fails + 1))
done
echo "symbols: $(wc -l <"$tmp/exported") exported, $(wc -l <"$tmp/declared") declared, $fails problem(s)"
[ $fails -eq 0 ]
