#!/usr/bin/env bash
# The POSIX read adapter (libhcomp_posix.so, `hcomp run`): serial programs read hcomp
# files in place.
#
# usage: tests/posix/run.sh PREFIX
#
# PREFIX is the installation (bin/hcomp, lib/libhcomp_posix.so, and MPICH with the
# hcomp driver: bin/mpiexec, lib/libmpi.so). Steps, each reported PASS or FAIL:
#   - posix_api (tests/posix/posix_api.c): every wrapped call on an hcomp file made
#     with `hcomp import` (small pieces and blocks, so reads cross their edges)
#     against the plain original: reads, seeks, stat family, dup, readv, stdio,
#     locks, refused writes and mmap, a damaged block (EIO, only in its range),
#     threads, fork; also under the ASan+UBSan build of the adapter
#     ($HCOMP_POSIX_ASAN_LIB, e.g. build/asan/.libs/libhcomp_posix.so)
#   - coreutils and Python through `hcomp run`: cmp equals `hcomp export`, cat, cp,
#     md5sum, tail, dd, stat, Python's open().read(); plain files untouched
#   - refusals: a shell's `>>` onto an hcomp file fails (EROFS) and the file is intact
#   - the hcomp tool started under the adapter still reads mapping files as they are
#   - HDF5: tests/posix/h5_write.c (parallel HDF5, Debian's h5pcc.mpich, 2 ranks on
#     our MPICH) writes the same file through hcomp: and to a plain file; h5dump,
#     h5ls -r -v (hdf5-tools) and h5py (pip, in a virtual environment made here,
#     kept in $HCOMP_POSIX_VENV, default build/posix-venv) print or return the same
#     for both; a hyperslab read with h5py; h5dump of a damaged file fails naming
#     the range; the MPI program itself run under `hcomp run` (its MPI-IO opens of
#     hcomp: files are libhcomp's own and pass through), also with another interposer
#     preloaded ahead of the adapter (tests/posix/interposer.c, as Darshan's runtime)
# Last line: "N passed, N failed"; exit status 1 if any failed.
set -uo pipefail
PREFIX=$(cd "${1:?usage: $0 PREFIX}" && pwd)
REPO=$(cd "$(dirname "$0")/../.." && pwd)
H=$PREFIX/bin/hcomp
LIB=$PREFIX/lib/libhcomp_posix.so
VENV=${HCOMP_POSIX_VENV:-$REPO/build/posix-venv}
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }
for f in "$H" "$LIB" "$PREFIX/bin/mpiexec"; do
    [ -e "$f" ] || { ko "installation" "$f not found"; finish; }
done
. "$REPO/tests/suite-lib.sh"
suite_workspace posix       # its own tiers.json below replaces the harness's
W=$WORK
cd "$W"
export HCOMP_POSIX_LIB=$LIB
mkdir -p tier
cat >tiers.json <<JSON
{"version": 1, "tiers": [{"name": "disk", "path": "$W/tier", "measure": false}]}
JSON
export HCOMP_CONFIG=$W/tiers.json

# ---- data: smooth doubles, text, noise; small pieces and blocks -----------------
python3 - <<'PY'
import math, random, struct
random.seed(7)
with open("plain.dat", "wb") as f:
    f.write(b"".join(struct.pack("<d", math.sin(i * 1e-3) + random.random() * 1e-9) for i in range(200000)))
    f.write("".join("line %d: pressure %d\n" % (i, i * 7 % 1013) for i in range(40000)).encode())
    f.write(bytes(random.getrandbits(8) for _ in range(300000)))
    f.write(b"tail!")
PY
hints=(--no-progress --hint hcomp_piece_size=262144 --hint hcomp_block_size=16384)
"$H" import "${hints[@]}" plain.dat f.hc >/dev/null 2>&1 || ko "import" "hcomp import failed"
"$H" import "${hints[@]}" plain.dat damaged.hc >/dev/null 2>&1
: >empty.dat
"$H" import --no-progress empty.dat empty.hc >/dev/null 2>&1
# damage one block of damaged.hc: bytes in the middle of its segment
seg=$(ls -S "$W"/tier/*damaged.hc.*.hcd/*.seg 2>/dev/null | head -n 1)
if [ -z "$seg" ]; then
    ko "damage a segment" "no segment of damaged.hc under $W/tier"
else
    half=$(($(stat -c %s "$seg") / 2))
    printf '\x55\xaa\x55\xaa\x55\xaa\x55\xaa' | dd of="$seg" bs=1 seek="$half" conv=notrunc 2>/dev/null
    "$H" cat damaged.hc >/dev/null 2>cat.err
    range=$(grep -oE 'logical bytes \[[0-9]+, [0-9]+\)' cat.err | head -n 1)
    lo=$(sed -E 's/.*\[([0-9]+), .*/\1/' <<<"$range")
    hi=$(sed -E 's/.*, ([0-9]+)\)/\1/' <<<"$range")
    [ -n "$lo" ] && ok "damaged block found ($range)" || ko "damaged block found" "$(head -c 400 cat.err)"
fi

# ---- every wrapped call -------------------------------------------------------
if gcc -std=c11 -O1 -g -Wall -Wextra -pthread -o posix_api "$REPO/tests/posix/posix_api.c" \
        >build.log 2>&1; then
    ok "build posix_api"
    "$H" run ./posix_api "$W/f.hc" "$W/plain.dat" "$W/damaged.hc" "${lo:-0}" "${hi:-0}" "$W/empty.hc" \
        >api.out 2>api.err
    rc=$?
    grep -E '^(PASS|FAIL) ' api.out | sed 's/^/  /'
    n=$(grep -c '^PASS' api.out)
    if [ $rc -eq 0 ] && [ "$n" -gt 40 ]; then ok "posix_api: $n checks"; else ko "posix_api" "exit $rc; $(grep FAIL api.out | head -5) $(head -c 600 api.err)"; fi
    grep -q "logical bytes \[${lo:-x}, ${hi:-x})" api.err && ok "the damaged read's message names its range" ||
        ko "the damaged read's message names its range" "$(head -c 600 api.err)"
    if [ -n "${HCOMP_POSIX_ASAN_LIB:-}" ]; then
        asan_rt="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
        env LD_PRELOAD="$asan_rt:$HCOMP_POSIX_ASAN_LIB" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            ./posix_api "$W/f.hc" "$W/plain.dat" "$W/damaged.hc" "${lo:-0}" "${hi:-0}" "$W/empty.hc" \
            >asan.out 2>asan.err
        rc=$?
        if [ $rc -eq 0 ] && ! grep -qE 'ERROR: AddressSanitizer|runtime error' asan.err; then
            ok "posix_api under the ASan+UBSan adapter: $(grep -c '^PASS' asan.out) checks"
        else
            ko "posix_api under the ASan+UBSan adapter" "exit $rc; $(grep FAIL asan.out | head -3) $(grep -A8 -E 'ERROR|runtime error' asan.err | head -20)"
        fi
    fi
else
    ko "build posix_api" "$(head -c 600 build.log)"
fi

# ---- everyday tools -------------------------------------------------------------
"$H" export f.hc exported.dat >/dev/null 2>&1
"$H" run cmp exported.dat f.hc >/dev/null 2>&1 && ok "cmp through the adapter equals hcomp export" ||
    ko "cmp through the adapter equals hcomp export" "differ"
cmp -s exported.dat plain.dat && ok "hcomp export equals the original" || ko "hcomp export equals the original" "differ"
[ "$("$H" run cat f.hc | md5sum)" = "$(md5sum <plain.dat)" ] && ok "cat" || ko "cat" "other bytes"
"$H" run cp f.hc copied.dat 2>cp.err && cmp -s copied.dat plain.dat && ok "cp" || ko "cp" "$(head -c 300 cp.err)"
[ "$("$H" run md5sum f.hc | cut -d' ' -f1)" = "$(md5sum plain.dat | cut -d' ' -f1)" ] && ok "md5sum" || ko "md5sum" "differs"
[ "$("$H" run tail -c 1000 f.hc | md5sum)" = "$(tail -c 1000 plain.dat | md5sum)" ] && ok "tail -c (seeks from the end)" || ko "tail -c" "differs"
[ "$("$H" run dd if=f.hc bs=4096 skip=37 count=5 2>/dev/null | md5sum)" = \
  "$(dd if=plain.dat bs=4096 skip=37 count=5 2>/dev/null | md5sum)" ] && ok "dd skip=37 count=5" || ko "dd" "differs"
[ "$("$H" run stat -c %s f.hc)" = "$(stat -c %s plain.dat)" ] && ok "stat -c %s: the logical size" ||
    ko "stat -c %s" "$("$H" run stat -c %s f.hc)"
[ "$("$H" run python3 -c 'import os,sys; d=open(sys.argv[1],"rb").read(); print(len(d), os.path.getsize(sys.argv[1]))' f.hc)" = \
  "$(stat -c %s plain.dat) $(stat -c %s plain.dat)" ] && ok "Python open().read() and os.path.getsize" || ko "Python" "other size"
"$H" run python3 -c 'import sys; sys.exit(0 if open(sys.argv[1],"rb").read()==open(sys.argv[2],"rb").read() else 1)' f.hc plain.dat &&
    ok "Python reads the same bytes" || ko "Python reads the same bytes" "differ"
[ "$("$H" run md5sum plain.dat)" = "$(md5sum plain.dat)" ] && ok "a plain file reads as itself" || ko "a plain file reads as itself" "differs"
"$H" run sh -c 'cat plain.dat > plain-copy.dat' && cmp -s plain.dat plain-copy.dat && ok "plain files are written as usual" ||
    ko "plain files are written as usual" "differ"

# ---- refusals -----------------------------------------------------------------------
before=$(md5sum <f.hc)
"$H" run sh -c 'echo more >> f.hc' 2>append.err && ko "appending to an hcomp file is refused" "it succeeded" ||
    { grep -q "only for reading" append.err && ok "appending to an hcomp file is refused, saying why" ||
      ko "appending to an hcomp file is refused, saying why" "$(head -c 300 append.err)"; }
"$H" run sh -c ': > f.hc' 2>/dev/null && ko "truncating an hcomp file is refused" "it succeeded" ||
    ok "truncating an hcomp file is refused"
[ "$(md5sum <f.hc)" = "$before" ] && "$H" export f.hc again.dat >/dev/null 2>&1 && cmp -s again.dat plain.dat &&
    ok "the refused file is intact" || ko "the refused file is intact" "changed"
"$H" run "$H" info f.hc >info.out 2>&1 && grep -q "format  *version" info.out &&
    ok "the hcomp tool under the adapter reads the mapping file itself" ||
    ko "the hcomp tool under the adapter reads the mapping file itself" "$(head -c 300 info.out)"
"$H" run ./no-such-program 2>/dev/null
[ $? -eq 127 ] && ok "hcomp run of a missing program: exit 127" || ko "hcomp run of a missing program" "other status"

# ---- HDF5 -----------------------------------------------------------------------------
H5PCC=$(command -v h5pcc.mpich || true)
if [ -z "$H5PCC" ] || ! command -v h5dump >/dev/null; then
    ko "HDF5 tools" "h5pcc.mpich (libhdf5-mpich-dev) or h5dump (hdf5-tools) missing: scripts/setup installs them"
    finish
fi
if (env -u LD_LIBRARY_PATH "$H5PCC" -shlib -O2 -o h5_write "$REPO/tests/posix/h5_write.c" -lm) >h5build.log 2>&1; then
    ok "build h5_write (h5pcc.mpich)"
else
    ko "build h5_write" "$(head -c 600 h5build.log)"
    finish
fi
mpirun() { env LD_LIBRARY_PATH="$PREFIX/lib" timeout 300 "$PREFIX/bin/mpiexec" -n 2 "$@"; }
mpirun ./h5_write "hcomp:$W/a.h5" >w1.out 2>&1 && grep -q OK w1.out && [ "$(head -c 8 a.h5)" = HCOMPMAP ] &&
    ok "h5_write through hcomp: (2 ranks)" || ko "h5_write through hcomp:" "$(head -c 600 w1.out)"
mpirun ./h5_write "$W/b.h5" >w2.out 2>&1 && grep -q OK w2.out && ok "h5_write to a plain file (2 ranks)" ||
    ko "h5_write to a plain file" "$(head -c 600 w2.out)"
"$H" run h5dump a.h5 2>dump.err | sed "s#a\.h5#X#" >a.dump
h5dump b.h5 | sed "s#b\.h5#X#" >b.dump
[ -s a.dump ] && cmp -s a.dump b.dump && ok "h5dump prints the same ($(wc -l <a.dump) lines)" ||
    ko "h5dump prints the same" "$(diff a.dump b.dump | head -5) $(head -c 300 dump.err)"
"$H" run h5ls -r -v a.h5 2>&1 | sed "s#a\.h5#X#" >a.ls
h5ls -r -v b.h5 | sed "s#b\.h5#X#" >b.ls
[ -s a.ls ] && cmp -s a.ls b.ls && ok "h5ls -r -v prints the same" || ko "h5ls -r -v prints the same" "$(diff a.ls b.ls | head -5)"

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import h5py' 2>/dev/null; then
    rm -rf "$VENV"
    { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q h5py numpy; } >venv.log 2>&1 ||
        { ko "a virtual environment with h5py" "$(tail -c 600 venv.log)"; finish; }
fi
cat >digest.py <<'PY'
import hashlib, sys
import h5py, numpy as np
def digest(path):
    h = hashlib.sha256()
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            h.update(name.encode())
            if isinstance(obj, h5py.Dataset):
                h.update(obj[()].tobytes())
            for k in sorted(obj.attrs):
                h.update(k.encode() + np.asarray(obj.attrs[k]).tobytes())
        f.visititems(visit)
        part = f["grid/temperature"][37:151, 200:311].tobytes() + f["particles/x"][4090:9000].tobytes()
    return h.hexdigest(), hashlib.sha256(part).hexdigest()
print(*digest(sys.argv[1]))
PY
a=$("$H" run "$VENV/bin/python" digest.py a.h5 2>py.err)
b=$("$VENV/bin/python" digest.py b.h5)
[ -n "$a" ] && [ "${a% *}" = "${b% *}" ] && ok "h5py reads every dataset and attribute the same" ||
    ko "h5py reads every dataset and attribute the same" "'$a' vs '$b' $(head -c 300 py.err)"
[ -n "$a" ] && [ "${a#* }" = "${b#* }" ] && ok "h5py hyperslab reads the same" || ko "h5py hyperslab reads the same" "'$a' vs '$b'"

# the MPI program under the adapter: ROMIO's hcomp driver (libhcomp.so) reads its own
# mapping files, and the plain file opened by HDF5's POSIX calls is untouched
"$H" run env LD_LIBRARY_PATH="$PREFIX/lib" timeout 300 "$PREFIX/bin/mpiexec" -n 2 ./h5_write "hcomp:$W/c.h5" \
    >w3.out 2>&1 && grep -q OK w3.out && ok "an MPI program writing hcomp: under hcomp run" ||
    ko "an MPI program writing hcomp: under hcomp run" "$(head -c 600 w3.out)"
"$H" run h5dump c.h5 2>/dev/null | sed "s#c\.h5#X#" | cmp -s - b.dump && ok "and its file reads the same" ||
    ko "and its file reads the same" "differs"

# another LD_PRELOAD interposer ahead of the adapter, as Darshan's runtime or a
# sanitizer's is: libhcomp's calls then reach the adapter from it, not from libhcomp
# (before 2026-11-26 the driver's writable opens failed with EROFS so, and a close hung)
if gcc -shared -fPIC -O2 -Wall -Wextra -o libinterposer.so "$REPO/tests/posix/interposer.c" -ldl \
        >ip-build.log 2>&1; then
    ip() { env LD_PRELOAD="$W/libinterposer.so${LD_PRELOAD:+:$LD_PRELOAD}" HCOMP_TEST_INTERPOSER_SAY=1 "$@"; }
    ip "$H" run env LD_LIBRARY_PATH="$PREFIX/lib" timeout 300 "$PREFIX/bin/mpiexec" -n 2 ./h5_write \
        "hcomp:$W/e.h5" >w4.out 2>&1
    rc=$?
    grep -q OK w4.out && [ $rc -eq 0 ] && [ "$(head -c 8 e.h5)" = HCOMPMAP ] &&
        grep -qE '^interposer: [1-9][0-9]* calls' w4.out &&
        ok "an MPI program writing hcomp: under hcomp run behind another interposer" ||
        ko "an MPI program writing hcomp: under hcomp run behind another interposer" "exit $rc: $(head -c 600 w4.out)"
    ip "$H" run h5dump e.h5 2>/dev/null | sed "s#e\.h5#X#" | cmp -s - b.dump &&
        ok "and h5dump behind the interposer reads it the same" ||
        ko "and h5dump behind the interposer reads it the same" "differs"
    ip "$H" run ./posix_api "$W/f.hc" "$W/plain.dat" "$W/damaged.hc" "${lo:-0}" "${hi:-0}" "$W/empty.hc" \
        >ip-api.out 2>ip-api.err
    rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c '^PASS' ip-api.out)" -gt 40 ] && grep -qE '^interposer: [1-9]' ip-api.err &&
        ok "posix_api behind the interposer: the program's calls still translated" ||
        ko "posix_api behind the interposer" "exit $rc; $(grep FAIL ip-api.out | head -5) $(head -c 400 ip-api.err)"
else
    ko "build the test interposer" "$(head -c 600 ip-build.log)"
fi

# a damaged HDF5 file: h5dump fails and the message names the range
"$H" import "${hints[@]}" b.h5 d.h5 >/dev/null 2>&1
seg=$(ls -S "$W"/tier/*d.h5.*.hcd/*.seg 2>/dev/null | head -n 1)
if [ -n "$seg" ]; then
    printf '\x55\xaa\x55\xaa\x55\xaa\x55\xaa' | dd of="$seg" bs=1 seek=$(($(stat -c %s "$seg") / 2)) conv=notrunc 2>/dev/null
    "$H" run h5dump d.h5 >d.dump 2>d.err
    rc=$?
    [ $rc -ne 0 ] && grep -qE 'logical bytes \[[0-9]+, [0-9]+\)' d.err && ok "h5dump of a damaged file fails, naming the range" ||
        ko "h5dump of a damaged file fails, naming the range" "exit $rc: $(head -c 400 d.err)"
else
    ko "damage d.h5" "no segment"
fi
finish
