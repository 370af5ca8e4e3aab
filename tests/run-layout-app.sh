#!/bin/sh
# The program is a client of the library: app/ includes the public headers
# (include/strata/) and its own, nothing else (tests/run-layout.sh).
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
LAYOUT_PART=app exec sh "$srcdir/tests/run-layout.sh"
