#!/bin/sh
# The convergence log against damage, links, FIFOs and concurrent readers
# (doc/file-formats.md): a flipped bit is refused or harmless, never a
# crash or a wrong value; a damaged log is set aside on resume with its
# reason; the log's name is opened once, without following links; links
# inside logs and checkpoints are refused; `strata log` polled while the
# run writes reads a prefix of the final log every time.
#
#   LOG_POLLS (default 200): how many reads during a run (bench/log_polls.sh
#   runs 1,000).
set -u
STRATA=${STRATA:-/work/wt/log/strata}
POLLS=${LOG_POLLS:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$tmp" || exit 1
fails=0
passes=0
ok() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rows() { n=$(grep -c '^ *[0-9][0-9]*   ' "$1" 2>/dev/null); echo "${n:-0}"; }
wait_rows() { # wait_rows FILE N PID
  i=0
  while [ "$(rows "$1")" -lt "$2" ] && kill -0 "$3" 2>/dev/null && [ $i -lt 3000 ]; do
    sleep 0.01
    i=$((i + 1))
  done
}
# prefix A B: file A is the beginning of file B.
prefix() { [ "$(wc -c <"$1")" -le "$(wc -c <"$2")" ] && head -c "$(wc -c <"$1")" "$2" | cmp -s - "$1"; }
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import h5py, numpy' 2>/dev/null; then py=$p; break; fi
done
# flip FILE OFFSET BIT
flip() {
  "${py:-python3}" - "$@" <<'PY'
import sys
path, at, bit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, 'r+b') as f:
    f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ (1 << bit)]))
PY
}

job="--threads 1 --set run.backend=cpu --set integral.integrand=f4 --set integral.dim=5 --set vegas.epsrel=0 --set vegas.neval=1e5 --set vegas.skip=1"

if [ -z "${LOG_POLLS_ONLY:-}" ]; then
# --- the file format: superblock 3 (checksummed metadata), Fletcher-32 chunks ---------
"$STRATA" run $job --set vegas.maxiter=4 --set run.log=a.h5 --set run.log_map=2 \
  --set run.checkpoint=a.ck.h5 >a.out 2>a.err || fail "first run: $(cat a.err)"
[ "$(od -An -tu1 -j8 -N1 a.h5 | tr -d ' ')" = 3 ] && ok || fail "the log's superblock is not version 3"
if command -v h5dump >/dev/null; then
  [ "$(h5dump -H -p a.h5 | grep -c 'CHECKSUM FLETCHER32')" -ge 5 ] && ok \
    || fail "the log's tables lack Fletcher-32 checksums"
fi
"$STRATA" log --csv a.h5 >a.csv || fail "strata log --csv a.h5"

# --- a flipped bit in a row's value: refused by strata log, set aside on resume --------
if [ -n "$py" ]; then
  at=$("$py" - a.h5 "$(sed -n 3p a.csv | cut -d, -f2)" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
print(data.find(struct.pack('<d', float(sys.argv[2]))))
PY
)
  if [ "$at" -gt 0 ]; then
    cp a.h5 v.h5; cp a.ck.h5 v.ck.h5
    flip v.h5 $((at + 3)) 5
    "$STRATA" log v.h5 >v.log 2>v.err
    rc=$?
    [ $rc -eq 1 ] && grep -q "v.h5: cannot read /iterations: .*[Ff]letcher32" v.err && ok \
      || fail "a flipped bit in a row's integral: strata log exit $rc: $(cat v.err)"
    "$STRATA" run $job --set vegas.maxiter=6 --set run.log=v.h5 --set run.checkpoint=v.ck.h5 \
      --resume --force >v2.out 2>v2.err
    rc=$?
    [ $rc -eq 0 ] && grep -q "v.h5: the log was damaged (/iterations: .*[Ff]letcher32.*); kept as v.h5.broken" v2.err \
      && [ -f v.h5.broken ] && ok \
      || fail "resume with a flipped row: exit $rc: $(cat v2.err)"
    "$STRATA" log v.h5 >v2.log 2>&1 && [ "$(rows v2.log)" -eq 6 ] && ok \
      || fail "the rebuilt log: $(rows v2.log) rows: $(tail -n 1 v2.log)"
  else
    fail "the second row's integral is not in the file"
  fi
else
  echo "SKIP: bit flips (no python3 with h5py and numpy: Debian package python3-h5py)"
fi

# --- flipped bits in the metadata: never a crash, a hang, or a wrong row ---------------
# Every 97th byte of the file's first 16 kB (superblock, object headers,
# chunk indexes, heaps) with strata log; every 1021st with a resume.
"$STRATA" log a.h5 >a.log || fail "strata log a.h5"
size=$(wc -c <a.h5)
end=$((size < 16384 ? size : 16384))
crashes=0 wrong=0 tried=0 refused=0
at=0
while [ $at -lt $end ] && [ -n "$py" ]; do
  cp a.h5 m.h5
  flip m.h5 $at $((at % 8))
  timeout 20 "$STRATA" log m.h5 >m.log 2>m.err
  rc=$?
  tried=$((tried + 1))
  case $rc in
    0) prefix m.log a.log || { wrong=$((wrong + 1)); echo "byte $at bit $((at % 8)): exit 0 and another table"; } ;;
    1) refused=$((refused + 1)) ;;
    *) crashes=$((crashes + 1)); echo "byte $at bit $((at % 8)): strata log exit $rc: $(tail -n 1 m.err)" ;;
  esac
  at=$((at + 97))
done
[ -z "$py" ] || { [ $crashes -eq 0 ] && [ $wrong -eq 0 ] && ok || fail "metadata flips: $crashes crashes, $wrong wrong tables in $tried"; }
echo "metadata flips: $tried tried, $refused refused, $crashes crashes, $wrong wrong"
crashes=0
resume_flip() { # resume_flip BYTE BIT
  rm -f r.h5*; cp a.h5 r.h5; cp a.ck.h5 r.ck.h5
  flip r.h5 "$1" "$2"
  timeout 60 "$STRATA" run $job --set vegas.maxiter=6 --set run.log=r.h5 --set run.checkpoint=r.ck.h5 \
    --set run.log_map=2 --resume --force >r.out 2>r.err
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
    crashes=$((crashes + 1)); echo "byte $1 bit $2: resume exit $rc: $(tail -n 1 r.err)"
  elif [ $rc -eq 0 ] && ! "$STRATA" log r.h5 2>&1 | cmp -s - r.out; then
    crashes=$((crashes + 1)); echo "byte $1 bit $2: the resumed log differs from the run's output"
  fi
}
# The bit that made every resume of format version 1 crash in this job's log
# (SIGSEGV in H5Dwrite), then a sweep.
[ -z "$py" ] || resume_flip 3215 3
at=5
while [ $at -lt $end ] && [ -n "$py" ]; do
  resume_flip $at $((at % 8))
  at=$((at + 1021))
done
[ -z "$py" ] || { [ $crashes -eq 0 ] && ok || fail "resumes after metadata flips: $crashes failed"; }

# --- the log is opened once: a symbolic link put in its place is not followed ----------
echo "another file" >victim
touch -d 2000-01-01 victim
"$STRATA" run $job --set vegas.neval=1e6 --set vegas.maxiter=14 --set run.log=s.h5 >s.out 2>s.err &
pid=$!
wait_rows s.out 3 $pid
mv s.h5 s.real.h5 && ln -s victim s.h5
wait $pid || fail "the run whose log was replaced: $(cat s.err)"
[ "$(stat -c %Y victim)" = "$(date -d 2000-01-01 +%s)" ] && [ "$(cat victim)" = "another file" ] && ok \
  || fail "the run touched the file behind the link that replaced its log"
"$STRATA" log s.real.h5 2>&1 | cmp -s - s.out && ok || fail "the moved log does not hold the whole run"

# --- FIFOs: refused at once by strata log, a run and a resume ------------------------
mkfifo fifo.h5
timeout 10 "$STRATA" log fifo.h5 >/dev/null 2>f.err
rc=$?
[ $rc -eq 1 ] && grep -q "fifo.h5: cannot read the log: not a regular file" f.err && ok \
  || fail "strata log of a FIFO: exit $rc: $(cat f.err)"
timeout 10 "$STRATA" run $job --set vegas.maxiter=2 --set run.log=fifo.h5 >/dev/null 2>f.err
rc=$?
[ $rc -eq 1 ] && grep -q "fifo.h5: the log exists already" f.err && ok || fail "a run with a FIFO log: exit $rc: $(cat f.err)"
timeout 10 "$STRATA" run $job --set vegas.maxiter=2 --set run.log=fifo.h5 --set run.checkpoint=f.ck.h5 --set run.resume=auto >/dev/null 2>f.err
rc=$?
[ $rc -eq 1 ] && grep -q "fifo.h5: cannot write the log: not a regular file" f.err && ok \
  || fail "resume = auto with a FIFO log: exit $rc: $(cat f.err)"

# --- links inside checkpoints and logs -------------------------------------------------
if [ -n "$py" ]; then
  "$STRATA" run $job --set vegas.maxiter=3 --set integral.dim=4 --set run.checkpoint=other.ck.h5 \
    --set run.log=other.h5 >/dev/null 2>&1 || fail "the other run"
  cp a.ck.h5 x.ck.h5
  "$py" - <<'PY' || fail "crafting links"
import h5py
with h5py.File('x.ck.h5', 'r+') as f:
    del f['map']
    f['map'] = h5py.ExternalLink('other.ck.h5', '/map')
with h5py.File('a.h5', 'r') as a, h5py.File('x.h5', 'w', libver='latest') as f:
    for k, v in a.attrs.items():
        f.attrs[k] = v
    f['iterations'] = h5py.ExternalLink('other.h5', '/iterations')
with h5py.File('y.h5', 'w', libver='latest') as f:
    f.attrs['format'] = 'strata log'
    f['here'] = [1.0]
    f['iterations'] = h5py.SoftLink('/here')
PY
  "$STRATA" run $job --set vegas.maxiter=6 --set run.checkpoint=x.ck.h5 --resume --force >/dev/null 2>x.err
  rc=$?
  [ $rc -ne 0 ] && grep -q "x.ck.h5: .*/map is an external link" x.err && ok \
    || fail "a checkpoint whose /map is an external link: exit $rc: $(cat x.err)"
  "$STRATA" log x.h5 >/dev/null 2>x.err
  rc=$?
  [ $rc -eq 1 ] && grep -q "x.h5: cannot read /iterations: /iterations is an external link" x.err && ok \
    || fail "a log whose /iterations is an external link: exit $rc: $(cat x.err)"
  "$STRATA" log y.h5 >/dev/null 2>x.err
  rc=$?
  [ $rc -eq 1 ] && grep -q "y.h5: cannot read /iterations: /iterations is a soft link" x.err && ok \
    || fail "a log whose /iterations is a soft link: exit $rc: $(cat x.err)"

  # --- a damaged log's reason, and logs of format version 1 ------------------------------
  cp a.h5 w.h5; cp a.ck.h5 w.ck.h5
  "$py" - <<'PY' || fail "crafting a bad shape"
import h5py
with h5py.File('w.h5', 'r+') as f:
    f.create_dataset('iterations_comp', shape=(4, 1, 3), dtype='<f8')
PY
  "$STRATA" run $job --set vegas.maxiter=6 --set run.log=w.h5 --set run.checkpoint=w.ck.h5 \
    --resume --force >/dev/null 2>w.err
  rc=$?
  [ $rc -eq 0 ] && grep -q "w.h5: the log was damaged (/iterations_comp has an impossible shape); kept as w.h5.broken" w.err \
    && ok || fail "the reason a log was damaged: exit $rc: $(cat w.err)"
  "$py" - <<'PY' || fail "crafting a version 1 log"
import h5py, numpy as np
t = np.dtype([('itn', '<i4'), ('integral', '<f8'), ('sigma', '<f8'), ('average', '<f8'),
              ('average_sigma', '<f8'), ('chi2_dof', '<f8'), ('Q', '<f8'), ('neval', '<i8'),
              ('wall_s', '<f8'), ('elapsed_s', '<f8'), ('kept', 'i1'), ('restarted', 'i1'),
              ('adapting', 'i1')])
with h5py.File('old.h5', 'w', libver='earliest') as f:
    f.attrs['format'] = 'strata log'
    f.attrs['format_version'] = np.int64(1)
    f.attrs['status'] = 'running'
    f['iterations'] = np.array([(1, 2.5, 0.5, 2.5, 0.5, 0.0, 1.0, 1000, 0.1, 0.1, 1, 0, 0)], dtype=t)
PY
  [ "$(od -An -tu1 -j8 -N1 old.h5 | tr -d ' ')" = 0 ] || fail "old.h5 is not of superblock 0"
  "$STRATA" log --csv old.h5 >old.csv 2>old.err && [ "$(sed -n 2p old.csv | cut -d, -f1-3)" = "1,2.5,0.5" ] \
    && ok || fail "strata log of a format version 1 log: $(cat old.err)"
  cp old.h5 old2.h5
  "$STRATA" run $job --set vegas.maxiter=2 --set run.log=old.h5 --set run.checkpoint=old.ck.h5 --set run.resume=auto >/dev/null 2>old.err
  rc=$?
  [ $rc -eq 1 ] && grep -q "old.h5: log format version 1 (HDF5 superblock version 0, no checksums), written by an older strata" old.err \
    && cmp -s old.h5 old2.h5 && ok || fail "resume of a format version 1 log: exit $rc: $(cat old.err)"
fi

fi # LOG_POLLS_ONLY

# --- read while the run writes: every poll a prefix of the final log -------------------
"$STRATA" run $job --set vegas.maxiter=100000 --set vegas.neval=2e5 --set run.log=p.h5 --set run.log_map=1 \
  --set run.checkpoint=p.ck.h5 --set run.checkpoint_every=1 >p.out 2>p.err &
pid=$!
wait_rows p.out 1 $pid
k=0 bad=0
while [ $k -lt "$POLLS" ]; do
  if [ $((k % 2)) -eq 0 ]; then "$STRATA" log p.h5 >poll.$k 2>poll.$k.err; else "$STRATA" log --csv p.h5 >poll.$k 2>poll.$k.err; fi
  [ $? -eq 0 ] || { bad=$((bad + 1)); echo "poll $k: $(cat poll.$k.err)"; }
  k=$((k + 1))
done
kill -TERM $pid
wait $pid
"$STRATA" log p.h5 >p.log 2>&1 || fail "the polled log: $(cat p.log)"
"$STRATA" log --csv p.h5 >p.csv 2>&1 || fail "the polled log --csv: $(cat p.csv)"
k=0 notprefix=0
while [ $k -lt "$POLLS" ]; do
  if [ $((k % 2)) -eq 0 ]; then final=p.log; else final=p.csv; fi
  [ -s poll.$k ] && ! prefix poll.$k $final && { notprefix=$((notprefix + 1)); echo "poll $k is no prefix of the final log"; }
  k=$((k + 1))
done
echo "polls: $POLLS during a run of $(rows p.log) iterations: $bad failed, $notprefix not a prefix"
[ $bad -eq 0 ] && [ $notprefix -eq 0 ] && [ "$(rows p.log)" -ge 2 ] && ok || fail "polls: $bad failed, $notprefix not a prefix"

echo "run-logsafety: $passes passed, $fails failed"
[ $fails -eq 0 ]
