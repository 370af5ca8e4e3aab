#!/bin/sh
# The reference docs (README, doc/ but the benchmark records, the man page)
# and the comments of the library and the program describe the product as
# it is: no dates, no issue numbers, no account of the development
# sessions.  Measured figures belong in doc/benchmarks.md, whose records
# carry their dates.  A line that must name such a thing goes in ALLOW
# below as FILE:TEXT (the line holds TEXT), with the reason beside it.
cd "${srcdir:-.}" || exit 1

# ISO dates; issue numbers ("issue 16", "issues 15 and 20", "#16");
# ordinal sessions ("the seventh session"; not "the first session", nor
# "this session": a run's start or resume is a session, which the log
# records) and "session 12".
DATE='\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b'
ISSUE='\b[Ii]ssues? #?[0-9]+\b|(^|[ (])#[0-9]+\b'
SESSION='\b(second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|[0-9]+(st|nd|rd|th)) sessions?\b'
SESSION="$SESSION"'|\bdevice session\b|\bsession [0-9]+\b'
WE='\b[Ww]e (measured|tried|found|saw|fixed|changed)\b'
PATTERN="$DATE|$ISSUE|$SESSION|$WE"

# FILE:TEXT lines that may match (keep this short).
ALLOW='
'

docs="README.md doc/strata.1"
for f in doc/*.md; do
  case $f in doc/benchmarks.md) ;; *) docs="$docs $f" ;; esac
done
code=
for d in src cpu app gpu io api mpi compile include comm; do
  [ -d "$d" ] && code="$code $(find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \
    -o -name '*.cuh' -o -name '*.md' \) | sort)"
done

out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
for f in $docs $code; do
  [ -f "$f" ] || continue
  case $f in
    *.md|*.1) grep -nE "$PATTERN" "$f" ;;
    # Code: the comments' text only, so that an assembler's #0 or a format
    # string is not read as prose.
    *) awk '{ t = ""; l = $0
              if (c) { t = l; if (index(l, "*/")) c = 0 }
              else if (i = index(l, "/*")) { t = substr(l, i); if (!index(t, "*/")) c = 1 }
              else if (i = index(l, "//")) t = substr(l, i)
              if (t != "") print FNR ": " t }' "$f" | grep -E "$PATTERN" ;;
  esac | while IFS= read -r line; do
    ok=0
    printf '%s\n' "$ALLOW" | while IFS= read -r a; do
      [ -n "$a" ] && [ "${a%%:*}" = "$f" ] && case $line in *"${a#*:}"*) echo allowed ;; esac
    done | grep -q allowed && ok=1
    [ $ok = 1 ] || echo "FAIL: $f:$line"
  done
done >"$out"
if [ -s "$out" ]; then
  cat "$out"
  echo "run-docs: a date, an issue number or a session account in a reference doc or a comment" \
       "(dates and measured figures belong in doc/benchmarks.md's records)"
  exit 1
fi
echo "run-docs: $(echo $docs $code | wc -w) files checked"
exit 0
