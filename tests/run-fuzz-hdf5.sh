#!/bin/sh
# The checkpoint, log and table fuzzer (bit flips, truncations, files crafted
# with h5py) of tests/fuzz.py, on the program built with AddressSanitizer and
# UBSan (tests/strata-asan).
# FUZZ_SEED, FUZZ_CASES, FUZZ_CASE and FUZZ_JOBS choose the cases (tests/README.md).
# The Python that has h5py (the system's, python3-h5py) crafts the files.
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import h5py, numpy' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
  command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
  py=python3
fi
exec "$py" "${srcdir:-.}/tests/fuzz.py" hdf5 "${top_builddir:-.}/tests/strata-asan"
