#!/bin/sh
# The public API's fuzzer (tests/fuzz_api.c, built with AddressSanitizer and
# UBSan): every exported function with NULL, zero, negative, NaN and huge
# arguments.  It fails on a crash, a sanitizer's report or a NULL not
# refused with STRATA_EINVAL, and here when libstrata exports a function
# (the list tests/run-symbols.sh checks) that the fuzzer has no cases for.
set -u
top_builddir=${top_builddir:-.}
fuzz=$(cd "$top_builddir" && pwd)/tests/fuzz_api
lib=$top_builddir/.libs/libstrata.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
if [ -f "$lib" ]; then
  nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {sub(/@.*/, "", $3); print $3}' |
    sort -u >"$tmp/exported"
  "$fuzz" --list | sort -u >"$tmp/covered"
  for s in $(comm -23 "$tmp/exported" "$tmp/covered"); do
    echo "FAIL: libstrata.so exports $s, which tests/fuzz_api.c has no cases for"
    fails=$((fails + 1))
  done
else
  echo "note: no shared $lib: the fuzzer's list is not compared with the exports"
fi
mkdir -m 700 "$tmp/cache"
cd "$tmp" || exit 1
# The compile cache of this test's own; leaks are not checked (MPI's, HDF5's).
STRATA_CACHE_DIR="$tmp/cache" OMP_NUM_THREADS=1 \
  ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" "$fuzz" || fails=$((fails + 1))
[ $fails -eq 0 ]
