#!/bin/sh
# The job-file and command-line fuzzer of tests/fuzz.py, on the
# program built with AddressSanitizer and UBSan (tests/strata-asan).
# FUZZ_SEED, FUZZ_CASES, FUZZ_CASE and FUZZ_JOBS choose the cases (tests/README.md).
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "${srcdir:-.}/tests/fuzz.py" job "${top_builddir:-.}/tests/strata-asan"
