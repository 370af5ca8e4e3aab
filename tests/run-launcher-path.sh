#!/bin/sh
# The strata launcher runs the program proper where make install puts it:
# a path it holds from the build, which must follow the prefix when the
# prefix changes (./configure --prefix=P again, or make prefix=P), without
# a make clean.  The launcher alone is built, by this build's Makefile, in
# a scratch directory: for one prefix, then another, then the same again
# (not rebuilt).
set -u
top=${top_builddir:-$(pwd)}
srcdir=${srcdir:-.}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
build() {
  ${MAKE:-make} -s -C "$scratch" -f "$top/Makefile" srcdir="$srcdir" top_srcdir="$srcdir" \
    prefix="$scratch/$1" strata >"$scratch/make.log" 2>&1 ||
    { cat "$scratch/make.log"; echo "FAIL: make strata prefix=$scratch/$1"; exit 1; }
}
embedded() { grep -a -o "$scratch/p[0-9]/libexec/strata/strata" "$scratch/strata" | head -1; }
fail=0
build p1
[ "$(embedded)" = "$scratch/p1/libexec/strata/strata" ] ||
  { echo "FAIL: prefix p1: the launcher runs '$(embedded)'"; fail=1; }
build p2
[ "$(embedded)" = "$scratch/p2/libexec/strata/strata" ] ||
  { echo "FAIL: prefix p1, then p2: the launcher still runs '$(embedded)'"; fail=1; }
touch "$scratch/mark"
sleep 1
build p2
[ -z "$(find "$scratch/strata" -newer "$scratch/mark")" ] ||
  { echo "FAIL: the same prefix again rebuilt the launcher"; fail=1; }
[ $fail -eq 0 ] && echo "ok: the launcher follows the prefix (p1, p2) and is not rebuilt for the same one"
exit $fail
