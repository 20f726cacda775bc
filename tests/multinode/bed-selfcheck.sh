#!/usr/bin/env bash
# Self-check of the multi-node test bed (tests/multinode/bed): brings a 2-node bed up in
# its own directory (HCOMP_BED_DIR, default /tmp/hcomp-bed-selfcheck), checks that the
# nodes are separate machines sharing one distributed file system and that MPI jobs span
# them, crashes and revives a node, runs the torn-append demonstration (informational), and
# tears the bed down, checking that nothing is left. Prints "PASS name" / "FAIL name" per
# check and "N passed, N failed"; the status is 0 if none failed.
#
#   tests/multinode/bed-selfcheck.sh [-k]    -k: keep the bed up at the end (no down checks)
#
# Environment: PREFIX (MPICH with hcomp; default <repo>/install), APPEND_K (records per
# node in the torn-append demo, default 5000), HCOMP_BED_* as for bed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../suite-lib.sh
. "$repo/tests/suite-lib.sh"
BEDCMD=$here/bed
export HCOMP_BED_DIR=${HCOMP_BED_DIR:-/tmp/hcomp-bed-selfcheck}
export PREFIX=${PREFIX:-$repo/install}
K=${APPEND_K:-5000}
KEEP=0
[ "${1:-}" = -k ] && KEEP=1

bed() { "$BEDCMD" "$@"; }

LOG=$(mktemp "${TMPDIR:-/tmp}/hcomp-bed-selfcheck.XXXXXX")
cleanup() {
    if [ "$KEEP" = 1 ]; then echo "kept: the bed in $HCOMP_BED_DIR (bed down to end it)"
    else bed down >/dev/null 2>&1 || true; fi
    rm -f "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# check NAME CMD...: run CMD with its output in $LOG, report
check() {
    local name=$1
    shift
    : >"$LOG"
    "$@" >"$LOG" 2>&1
    suite_report "$name" $? "$LOG"
}

# ---- up ------------------------------------------------------------------------------
if [ -n "$(bed nodes 2>/dev/null)" ]; then
    echo "FAIL a bed is already up in $HCOMP_BED_DIR (bed down, or set HCOMP_BED_DIR)"
    KEEP=1
    exit 1
fi
t0=$EPOCHREALTIME
bed up --nodes 2 >"$LOG" 2>&1
st=$?
echo "INFO up took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s"
suite_report bed-up $st "$LOG"
if [ $st != 0 ]; then
    [ $st = 3 ] && echo "(missing prerequisites; nothing else can be checked)"
    suite_summary
    exit 1
fi
MNT=$(bed path)
DIR=$HCOMP_BED_DIR

# ---- nodes are separate ------------------------------------------------------------
hostnames() {
    local a b
    a=$(bed exec node0 hostname) && b=$(bed exec node1 hostname) || return 1
    echo "node0 says $a, node1 says $b, host says $(hostname)"
    [ "$a" = node0 ] && [ "$b" = node1 ] && [ "$(hostname)" != node0 ]
}
check hostnames hostnames

private_shm() {
    local f=bed-selfcheck.$$
    bed exec node0 sh -c "echo node0 > /dev/shm/$f" || return 1
    bed exec node0 test -f "/dev/shm/$f" || { echo "not in node0's /dev/shm"; return 1; }
    if bed exec node1 test -e "/dev/shm/$f"; then echo "node1 sees node0's /dev/shm file"; return 1; fi
    if [ -e "/dev/shm/$f" ]; then echo "the host sees node0's /dev/shm file"; return 1; fi
    bed exec node0 rm -f "/dev/shm/$f"
}
check private-dev-shm private_shm

not_on_host() {
    if mountpoint -q "$MNT" 2>/dev/null; then echo "$MNT is mounted on the host"; return 1; fi
    mount | grep -E 'fuse\.glusterfs' && { echo "a gluster mount in the host namespace"; return 1; }
    bed exec node0 mountpoint "$MNT" && bed exec node1 mountpoint "$MNT"
}
check volume-mounted-in-nodes-only not_on_host

# ---- one shared file system -------------------------------------------------------
shared_bytes() {
    head -c 3000000 /dev/urandom >"$DIR/ref.bin"
    bed exec node0 cp "$DIR/ref.bin" "$MNT/shared.bin" || return 1
    bed exec node1 cmp "$DIR/ref.bin" "$MNT/shared.bin" || return 1
    bed exec node1 sh -c "echo from-node1 > '$MNT/back.txt'" || return 1
    [ "$(bed exec node0 cat "$MNT/back.txt")" = from-node1 ]
}
check node0-writes-node1-reads shared_bytes

distribute() {
    local n0 n1
    bed exec node0 sh -c "mkdir -p '$MNT/dist' && for i in \$(seq 1 40); do echo \$i > '$MNT/dist/f'\$i; done" || return 1
    n0=$(find "$DIR/bricks/b0/dist" -type f 2>/dev/null | wc -l)
    n1=$(find "$DIR/bricks/b1/dist" -type f 2>/dev/null | wc -l)
    echo "40 files: $n0 on brick b0, $n1 on brick b1"
    [ "$n0" -gt 0 ] && [ "$n1" -gt 0 ] && [ $((n0 + n1)) = 40 ]
}
check distribute-over-bricks distribute

# ---- MPI across nodes ----------------------------------------------------------------
mpi_build() {
    "$PREFIX/bin/mpicc" -o "$DIR/mpi_where" "$here/mpi_where.c"
}
check mpi-build mpi_build

mpi_4_over_2() {
    local out
    out=$(timeout 120 env HCOMP_SELFCHECK=yes "$BEDCMD" mpiexec -n 4 "$DIR/mpi_where") || { echo "$out"; return 1; }
    echo "$out"
    [ "$(grep -c '^RANK .* HOST node0 ' <<<"$out")" = 2 ] || return 1
    [ "$(grep -c '^RANK .* HOST node1 ' <<<"$out")" = 2 ] || return 1
    [ "$(grep -c '^RANK .* LOCAL [01]/2$' <<<"$out")" = 4 ] || return 1
    grep -qx 'NCOMMS 2' <<<"$out" && grep -qx 'SUMCHECK ok' <<<"$out"
}
check mpi-4-ranks-2-nodes-shared-split mpi_4_over_2

mpi_env() {
    local out
    out=$(HCOMP_SELFCHECK_X=hx timeout 120 "$BEDCMD" mpiexec -n 4 -genv SELFCHECK_G gy \
        sh -c 'echo "$(hostname) $HCOMP_SELFCHECK_X $SELFCHECK_G"') || { echo "$out"; return 1; }
    echo "$out"
    [ "$(grep -c '^node[01] hx gy$' <<<"$out")" = 4 ]
}
check mpi-env-reaches-ranks mpi_env

# ---- a node crashes ------------------------------------------------------------------
kill_node1() {
    bed exec node1 sh -c 'echo ram > /dev/shm/tier; exec sleep 600' &
    local bg=$!
    sleep 0.5
    bed kill node1 || return 1
    wait $bg 2>/dev/null
    if bed exec node1 true 2>/dev/null; then echo "node1 still runs commands"; return 1; fi
    bed status || true
    [ "$(bed nodes)" = node0 ]
}
check kill-node1 kill_node1

node0_survives() {
    bed exec node0 sh -c "echo after > '$MNT/after-kill.txt' && cat '$MNT/after-kill.txt'" || return 1
    bed exec node0 cmp "$DIR/ref.bin" "$MNT/shared.bin" || return 1
    local out
    out=$(timeout 120 "$BEDCMD" mpiexec -n 2 "$DIR/mpi_where") || { echo "$out"; return 1; }
    echo "$out"
    [ "$(grep -c '^RANK .* HOST node0 ' <<<"$out")" = 2 ] && grep -qx 'NCOMMS 1' <<<"$out"
}
check node0-works-after-node1-killed node0_survives

revive_node1() {
    bed revive node1 || return 1
    [ "$(bed exec node1 hostname)" = node1 ] || return 1
    if bed exec node1 test -e /dev/shm/tier; then echo "node1's /dev/shm survived the crash"; return 1; fi
    [ "$(bed exec node1 cat "$MNT/after-kill.txt")" = after ] || return 1
    local out
    out=$(timeout 120 "$BEDCMD" mpiexec -n 4 "$DIR/mpi_where") || { echo "$out"; return 1; }
    echo "$out"
    grep -qx 'NCOMMS 2' <<<"$out"
}
check revive-node1 revive_node1

# ---- torn appends (informational) ----------------------------------------------------
append_demo() { # LABEL
    local f=$MNT/append-$1.dat
    bed exec node0 rm -f "$f"
    bed exec node0 "$DIR/append_torn" write "$f" 0 "$K" &
    local a=$!
    bed exec node1 "$DIR/append_torn" write "$f" 1 "$K" &
    local b=$! st=0
    wait $a || st=1
    wait $b || st=1
    [ $st = 0 ] || { echo "INFO torn-append ($1): a writer failed"; return 0; }
    echo "INFO torn-append ($1): $(bed exec node0 "$DIR/append_torn" check "$f" 2 "$K")"
}
if cc -std=c11 -O2 -o "$DIR/append_torn" "$here/append_torn.c" 2>"$LOG"; then
    append_demo "defaults"
    vol=$(cat "$DIR/state/volume")
    if bed gluster volume set "$vol" performance.write-behind off >/dev/null 2>&1; then
        sleep 2   # the clients switch to the new graph
        append_demo "write-behind off"
        bed gluster volume reset "$vol" performance.write-behind >/dev/null 2>&1 || true
    fi
else
    echo "INFO torn-append: could not compile append_torn.c:"; cat "$LOG"
fi

# ---- down ----------------------------------------------------------------------------
if [ "$KEEP" = 1 ]; then
    suite_summary
    exit
fi
down_clean() {
    local t0 left=0
    t0=$EPOCHREALTIME
    bed down || return 1
    echo "INFO down took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')s"
    if mount | grep -E 'gluster|hcomp-bed'; then echo "mounts left"; left=1; fi
    if pgrep -a -x 'glusterd|glusterfsd|glusterfs'; then echo "gluster processes left"; left=1; fi
    if pgrep -af 'hcomp-bed-init'; then echo "bed namespaces left"; left=1; fi
    if [ -e "$DIR" ]; then echo "$DIR left"; left=1; fi
    bed down || { echo "a second down failed"; left=1; }
    return $left
}
: >"$LOG"
down_clean >"$LOG" 2>&1
st=$?
grep '^INFO' "$LOG"
suite_report down-leaves-nothing $st "$LOG"
suite_summary
