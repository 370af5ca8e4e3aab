#!/bin/sh
# Every key of include/strata/keys.h is documented where its users look:
# a job file's key in strata(1) (".B key", or among the words of ".BR") and in
# README.md's job file reference ("key = ..."), a keyword of the Python
# binding in doc/python.md (`keyword`).  A key added to the list without
# its documentation fails here.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$srcdir" || exit 1
fails=0
n=0
# Each entry's job key and keyword: X(type, field, kind, "key", "keyword", ...),
# the lists' comment lines left out.
entries=$(grep -v '^[[:space:]]*/\?\*' include/strata/keys.h | tr -d '\\\n' |
  grep -o 'X([^"]*"[^"]*", "[^"]*"' | sed 's/.*"\([^"]*\)", "\([^"]*\)"$/\1|\2/')
for e in $entries; do
  key=${e%%|*} keyword=${e#*|}
  n=$((n + 1))
  if [ -n "$key" ]; then
    k=${key#*.}
    grep -Eq "^\.BR? (.*[ \"])?$k( |\"|\$)" doc/strata.1 ||
      { echo "FAIL: $key (include/strata/keys.h) is not in doc/strata.1 (.B $k)"; fails=$((fails + 1)); }
    grep -q "^$k *=" README.md ||
      { echo "FAIL: $key (include/strata/keys.h) is not in README.md's job file reference ($k = ...)"; fails=$((fails + 1)); }
  fi
  if [ -n "$keyword" ]; then
    grep -q "\`$keyword[\`=]" doc/python.md ||
      { echo "FAIL: the keyword $keyword (include/strata/keys.h) is not in doc/python.md"; fails=$((fails + 1)); }
  fi
done
[ "$n" -gt 20 ] || { echo "FAIL: read only $n keys from include/strata/keys.h"; exit 1; }
echo "keys documented: $n keys, $fails missing"
[ $fails -eq 0 ]
