#!/usr/bin/env bash
# Smoke test of the benchmark workloads (benchmarks/workloads/): builds every program and
# runs each at a tiny size with 2 ranks on hcomp: and on ufs: (the control), so that the
# programs behind scripts/bench cannot rot. A run passes when it exits 0, prints its
# "RESULT workload=..." line and no "VERIFY FAILED". Two negative checks make sure the
# verification bites: a reader of a file with one flipped byte must fail, and so must a
# Gray-Scott restart that expects other checkpoints than the file holds. The README's
# example (examples/hello_hcomp.c) is built and run as the README says.
#
# usage: tests/bench-smoke/run.sh PREFIX
#
# PREFIX is the MPICH installation with the hcomp driver (PREFIX/bin/mpicc, mpiexec).
# The hcomp runs use a private 4 MiB RAM directory in /dev/shm, then the file's own
# directory (so pieces spill, and drain at close). wl_h5vpic needs Debian's h5pcc.mpich
# (libhdf5-mpich-dev); without it its runs are reported as FAIL. Prints PASS/FAIL per run
# and ends with "N passed, N failed"; exit status 1 if any failed. About 30 s on 2 cores.
# Environment: BENCH_SMOKE_TIMEOUT (seconds per run, default 120), HCOMP_TEST_KEEP=1 (or
# BENCH_SMOKE_KEEP=1) keeps the work directory.
set -u
if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
PREFIX=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no such directory: $1" >&2; exit 2; }
MPIEXEC=$PREFIX/bin/mpiexec
[ -x "$MPIEXEC" ] || { echo "$0: $MPIEXEC not found" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
WL=$(cd "$HERE/../../benchmarks/workloads" && pwd)
TIMEOUT=${BENCH_SMOKE_TIMEOUT:-120}

. "$HERE/../suite-lib.sh"
suite_workspace bench-smoke "$(suite_keep BENCH_SMOKE_KEEP)"
# 4 MiB of RAM: pieces spill to the file's directory, and drain there at close
suite_tiers 4MiB speeds
export HCOMP_CONFIG=$WORK/tiers.json
BIN=$WORK/bin
pass() { suite_pass "$1"; }
fail() { suite_fail "$1" "${2:-}"; }

echo "building the workloads into $BIN"
if "$WL/build.sh" "$PREFIX" "$BIN" > "$WORK/build.log" 2>&1; then
    pass "build ($(grep -c '^built' "$WORK/build.log") programs)"
else
    fail "build" "$WORK/build.log"
fi

# the README's hello world, built and run as it says (no -lhcomp: the driver is in libmpi)
if "$PREFIX/bin/mpicc" -std=c11 -Wall -Wextra -Werror -o "$WORK/hello_hcomp" "$HERE/../../examples/hello_hcomp.c" \
        > "$WORK/hello.log" 2>&1 \
   && timeout -k 5 "$TIMEOUT" "$MPIEXEC" -n 2 "$WORK/hello_hcomp" "hcomp:$WORK/hello.dat" < /dev/null >> "$WORK/hello.log" 2>&1 \
   && grep -q "^hello_hcomp: hcomp:$WORK/hello.dat OK" "$WORK/hello.log"; then
    pass "examples/hello_hcomp.c, as the README builds and runs it"
else
    fail "examples/hello_hcomp.c, as the README builds and runs it" "$WORK/hello.log"
fi

n=0
# run NAME PROGRAM FILE ARGS...: passes on exit 0 + a RESULT line of that program
run() {
    local name=$1 prog=$2
    shift 2
    n=$((n + 1))
    local log=$WORK/run$n.log rc=0 env=()
    [ "$prog" = wl_h5vpic ] && env=(env "LD_LIBRARY_PATH=$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    if [ ! -x "$BIN/$prog" ]; then
        fail "$name: $prog was not built" "$WORK/build.log"
        return 0
    fi
    { echo "\$ mpiexec -n 2 $prog $*"; "${env[@]}" timeout -k 5 "$TIMEOUT" "$MPIEXEC" -n 2 "$BIN/$prog" "$@" < /dev/null; } > "$log" 2>&1 || rc=$?
    local wl=${prog#wl_}
    if [ $rc -eq 0 ] && grep -q "^RESULT workload=$wl " "$log" && ! grep -q "VERIFY FAILED" "$log"; then
        pass "$name: $(grep "^RESULT" "$log" | head -n 1 | cut -c 8-100)..."
    else
        fail "$name (exit $rc)" "$log"
    fi
}

for fs in hcomp ufs; do
    d=$WORK/$fs
    mkdir -p "$d"
    run "vpic $fs" wl_vpic "$fs:$d/vpic.dat" --n 32K --steps 2 --cfg smoke
    run "bdcats all $fs" wl_bdcats "$fs:$d/vpic.dat" --total 64K --steps 2 --mode all
    run "bdcats var $fs" wl_bdcats "$fs:$d/vpic.dat" --total 64K --steps 2 --mode var --var 3 --step 1
    run "bdcats subset $fs" wl_bdcats "$fs:$d/vpic.dat" --total 64K --steps 2 --mode subset --frac 0.05 --run 256
    run "grayscott $fs" wl_grayscott "$fs:$d/gs.dat" --grid 24 --ckpts 2 --every 5
    run "grayscott write $fs" wl_grayscott "$fs:$d/gs2.dat" --grid 24 --ckpts 2 --every 5 --phase write --sync
    run "grayscott restart $fs" wl_grayscott "$fs:$d/gs2.dat" --grid 24 --ckpts 2 --every 5 --phase restart
    run "indep seq smooth 4K $fs" wl_indep "$fs:$d/i1.dat" --block 4K --count 32 --pattern seq
    run "indep random random 64K $fs" wl_indep "$fs:$d/i2.dat" --block 64K --count 8 --pattern random --data random
    run "random $fs" wl_random "$fs:$d/r.dat" --block 256K --steps 2 --hint hcomp_codec=auto
    run "pieces $fs" wl_pieces "$fs:$d/p.dat" --pieces 2000 --size 256
    run "seqread write $fs" wl_seqread "$fs:$d/s.dat" --phase write --block 64K --blocks 24 --sync
    run "seqread read $fs" wl_seqread "$fs:$d/s.dat" --phase read --block 64K --blocks 24 --chunk 40K --think 1
    run "seqread read strided $fs" wl_seqread "$fs:$d/s.dat" --phase read --block 64K --blocks 24 --chunk 40K --pattern strided
    run "ckptloop $fs" wl_ckptloop "$fs:$d/c.dat" --size 256K --vars 2 --rewrites 3 --sync --du "$d"
done
run "h5vpic deflate ufs" wl_h5vpic "ufs:$WORK/ufs/h5d.h5" --n 16K --steps 2 --filter deflate --chunk 4K
run "h5vpic none hcomp" wl_h5vpic "hcomp:$WORK/hcomp/h5.h5" --n 16K --steps 2 --filter none
run "lz4raw" wl_lz4raw none --n 32K --steps 1

# negative check: flip one byte of the ufs VPIC file; every full read must now fail
n=$((n + 1))
log=$WORK/run$n.log
if [ -f "$WORK/ufs/vpic.dat" ]; then
    printf '\x5a' | dd of="$WORK/ufs/vpic.dat" bs=1 seek=300000 conv=notrunc status=none
    rc=0
    timeout -k 5 "$TIMEOUT" "$MPIEXEC" -n 2 "$BIN/wl_bdcats" "ufs:$WORK/ufs/vpic.dat" --total 64K --steps 2 \
        --mode all < /dev/null > "$log" 2>&1 || rc=$?
    if [ $rc -ne 0 ] && grep -q "VERIFY FAILED" "$log" && ! grep -q "^RESULT" "$log"; then
        pass "verification bites: a flipped byte fails wl_bdcats (exit $rc)"
    else
        fail "verification bites: wl_bdcats accepted a damaged file (exit $rc)" "$log"
    fi
else
    fail "verification bites: no ufs VPIC file to damage"
fi

# negative check: a restart that computes other steps than the writer's must not match
n=$((n + 1))
log=$WORK/run$n.log
rc=0
timeout -k 5 "$TIMEOUT" "$MPIEXEC" -n 2 "$BIN/wl_grayscott" "hcomp:$WORK/hcomp/gs2.dat" --grid 24 --ckpts 2 \
    --every 6 --phase restart < /dev/null > "$log" 2>&1 || rc=$?
if [ $rc -ne 0 ] && grep -q "VERIFY FAILED" "$log" && ! grep -q "^RESULT" "$log"; then
    pass "verification bites: a restart expecting other checkpoints fails wl_grayscott (exit $rc)"
else
    fail "verification bites: wl_grayscott's restart accepted checkpoints it did not expect (exit $rc)" "$log"
fi

suite_summary
