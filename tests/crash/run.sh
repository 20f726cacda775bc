#!/usr/bin/env bash
# Crash states (issue 46): each workload runs once under crash_record.so, which records
# every call that changes the file system under its directories; explore.py then builds
# the states a power loss could leave (docs/FORMAT.md, "Durable steps": POSIX's weak
# model), writes each into those directories and checks that every byte synced reads
# back (hcomp export, and MPI-IO for some), after `hcomp fsck --repair` if the file does
# not open, and that nothing never written is returned.  Two planted bugs (a sync that
# skips the mapping file and the writer logs; directory syncs skipped) must be caught.
#   tests/crash/run.sh PREFIX
# HCOMP_CRASH_STATES bounds the states per workload (default 240), HCOMP_CRASH_RANDOM
# sets the random states per crash point (default 2; the long run of docs/TESTING.md:
# HCOMP_CRASH_STATES=20000 HCOMP_CRASH_RANDOM=40); HCOMP_CRASH_ONLY (a
# regular expression) picks workloads; HCOMP_TEST_KEEP=1 keeps the work directory and
# copies of violating states.
set -u
PREFIX=$(cd "${1:?usage: $0 PREFIX}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../suite-lib.sh
. "$here/../suite-lib.sh"
suite_workspace crash "${HCOMP_TEST_KEEP:-0}"
STATES=${HCOMP_CRASH_STATES:-240}
H=$PREFIX/bin/hcomp
bin=$WORK/bin
mkdir -p "$bin"
if ! gcc -std=gnu11 -O2 -Wall -Wextra -Werror -shared -fPIC "$here/crash_record.c" \
        -o "$bin/crash_record.so" -ldl -lpthread >"$WORK/build.log" 2>&1 ||
   ! "$PREFIX/bin/mpicc" -std=gnu11 -O2 -Wall -Wextra -Werror "$here/crash_work.c" \
        -o "$bin/crash_work" >>"$WORK/build.log" 2>&1; then
    suite_report "build the recorder and the workloads" 1 "$WORK/build.log"
    suite_summary
    exit 1
fi

# record NAME TIERS HINTS...: a fresh directory set, the workload run under the recorder
# with 2 ranks; its trace in $WORK/NAME
record() {
    local name=$1 tiers=$2 nprocs=$3
    shift 3
    local w=$WORK/$name
    mkdir -p "$w/d" "$w/ram" "$w/nvme" "$w/trace" "$w/oracle" "$w/cache"
    chmod 700 "$w/ram" "$w/nvme"
    head -c 8 /dev/zero >"$w/trace/seq"
    case $tiers in
    ram) cat >"$w/tiers.json" <<JSON
{"version":1,"tiers":[
 {"name":"ram","path":"$w/ram","capacity":"64MiB","volatile":true,"scope":"node-local","private":true,"measure":false},
 {"name":"disk","path":"@filedir","measure":false}]}
JSON
    ;;
    nvme) cat >"$w/tiers.json" <<JSON
{"version":1,"tiers":[
 {"name":"nvme","path":"$w/nvme","capacity":"64MiB","volatile":false,"scope":"node-local","private":true,"measure":false},
 {"name":"disk","path":"@filedir","measure":false}]}
JSON
    ;;
    esac
    (cd "$w" && timeout -k 5 120 env HCOMP_CACHE_DIR="$w/cache" HCOMP_CRASH_TRACE="$w/trace" \
        HCOMP_CRASH_ROOTS="$w/d:$w/ram:$w/nvme" "$PREFIX/bin/mpiexec" -n "$nprocs" \
        -genv LD_PRELOAD "$bin/crash_record.so" "$bin/crash_work" "$@") >"$w/run.log" 2>&1
}

# explore NAME [ARGS...]: the crash states of NAME's trace, checked
explore() {
    local name=$1 w=$WORK/$1
    shift
    HCOMP_CONFIG=$w/tiers.json HCOMP_CACHE_DIR=$w/cache python3 "$here/explore.py" \
        --trace "$w/trace" --root "$w/d" --root "$w/nvme" --volatile "$w/ram" \
        --file "$w/d/f.hc" --oracle "$w/oracle" --hcomp "$H" --max-states "$STATES" \
        --random "${HCOMP_CRASH_RANDOM:-2}" \
        --reader "$bin/crash_work read hcomp:$w/d/f.hc $w/tiers.json" --name "$name" \
        ${HCOMP_TEST_KEEP:+--keep "$WORK/violations"} "$@"
}

only() { [[ -z "${HCOMP_CRASH_ONLY:-}" || $1 =~ $HCOMP_CRASH_ONLY ]]; }

# workload NAME TIERS NPROCS WORKLOAD HINTS...: recorded, then explored
workload() {
    local name=$1 tiers=$2 nprocs=$3 kind=$4 w=$WORK/$1 rc
    shift 4
    only "$name" || return 0
    record "$name" "$tiers" "$nprocs" "$kind" "hcomp:$w/d/f.hc" "$w/tiers.json" "$w/oracle" "$@"
    rc=$?
    if [ "$kind" = killed ]; then
        # every rank kills itself after its last write: the job fails, the trace stays
        grep -q "synced" <(strings "$w"/trace/trace.* 2>/dev/null) && rc=0
    fi
    if [ "$rc" -ne 0 ]; then
        suite_report "$name: the workload ran under the recorder" 1 "$w/run.log"
        return
    fi
    explore "$name" >"$w/explore.log" 2>&1
    rc=$?
    tail -n 1 "$w/explore.log" | sed 's/^/    /'
    suite_report "$name: no crash state loses a synced byte or shows one never written" \
        "$rc" "$w/explore.log" VIOLATION
}

workload collective ram 2 collective
workload rewrite ram 2 rewrite hcomp_reclaim=close
workload ramsync ram 2 ramsync hcomp_drain=never
workload small ram 2 small hcomp_write_buffer=0 hcomp_reclaim=close
workload drain nvme 2 drain hcomp_drain=background
# the same moves after the close, behind the program (issue 43), waited for by MPI_Finalize
workload writeback nvme 2 drain hcomp_drain=writeback
workload killed ram 2 killed

# hcomp compact of a file with dead pieces: every call of it is a crash point, and each
# state holds the old or the new file, the same bytes
only compact && record compact ram 2 collective "hcomp:$WORK/compact/d/f.hc" "$WORK/compact/tiers.json" \
    "$WORK/compact/oracle" hcomp_reclaim=never
rc=$?
if ! only compact; then
    :
elif [ "$rc" -eq 0 ]; then
    w=$WORK/compact
    (cd "$w" && env HCOMP_CONFIG="$w/tiers.json" HCOMP_CACHE_DIR="$w/cache" \
        HCOMP_CRASH_TRACE="$w/trace" HCOMP_CRASH_ROOTS="$w/d:$w/ram:$w/nvme" \
        LD_PRELOAD="$bin/crash_record.so" sh -c \
        "'$bin/crash_work' mark 'begin compact' && '$H' compact '$w/d/f.hc' &&
         '$bin/crash_work' mark 'end compact'") >>"$w/run.log" 2>&1
    rc=$?
fi
if ! only compact; then
    :
elif [ "$rc" -ne 0 ]; then
    suite_report "compact: the workload ran under the recorder" 1 "$WORK/compact/run.log"
else
    explore compact >"$WORK/compact/explore.log" 2>&1
    rc=$?
    tail -n 1 "$WORK/compact/explore.log" | sed 's/^/    /'
    suite_report "compact: every state of an interrupted compaction holds the file" "$rc" \
        "$WORK/compact/explore.log" VIOLATION
fi

# the explorer's own checks: a sync that skips the mapping file and the writer logs, and
# one that skips every directory, are caught on the same trace
for bug in skip-map-sync skip-segdir-sync; do
    only collective || continue
    explore collective --plant "$bug" --max-states 120 >"$WORK/plant-$bug.log" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q VIOLATION "$WORK/plant-$bug.log"; then
        suite_report "the explorer catches a planted bug ($bug)" 0 "$WORK/plant-$bug.log"
    else
        suite_report "the explorer catches a planted bug ($bug)" 1 "$WORK/plant-$bug.log"
    fi
done
suite_summary
