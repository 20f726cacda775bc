#!/usr/bin/env bash
# MPI integration tests of the hcomp ROMIO driver.
#
# usage: tests/mpi/run.sh PREFIX
#
# PREFIX is an MPICH installation with the hcomp driver (PREFIX/bin/mpicc,
# PREFIX/bin/mpiexec). Every tests/mpi/t_*.c is compiled with PREFIX/bin/mpicc
# (-std=c11 -Wall -Wextra -Werror + $HCOMP_TEST_CFLAGS), then run with 1, 2 and 4
# ranks on an hcomp: file in a fresh directory, with a tier configuration whose
# first tier is a private directory in /dev/shm and whose second is the file's
# own directory. t_persist writes with one rank count and verifies in later
# mpiexec runs with other rank counts. t_plain also runs with 1, 2 and 4 ranks under
# ROMIO_FSTYPE_FORCE=hcomp: with a bare file name. t_basic_rw also runs once with a relative
# file name and once with hcomp's built-in default configuration, and
# examples/scidata_demo.c is built (with -lhcomp) and run small. The generic tests
# also run once against ufs: as a control (the semantics must match).
#
# The fault tests (tests/mpi/README.md) need more: t_soak runs only with
# $HCOMP_TEST_SOAK_NP ranks (default 8, oversubscribed) for $HCOMP_SOAK_SECONDS
# (default 30); t_kill is a driver sequence (a writer run, one rank killed with
# SIGKILL, a verifying run), and so is t_durable (a run that syncs and dies, the RAM
# tier wiped, a verifying run; per hcomp_drain mode, and the hcomp_sync=tiers opt-out;
# skipped where the RAM tier is not on tmpfs); t_enospc and t_rotier mount small file systems and
# print "SKIP ..." where mount(2) is not allowed (not root).
#
# Each run prints "PASS name (np=N)" or "FAIL name (np=N)" followed by its output,
# or "SKIP name (np=N): why" when the program said it cannot run here (counted as
# neither passed nor failed). A run also fails if it leaves anything behind in its
# directory or on the RAM tier, or a mount. The last line is "N passed, N failed"
# (", N skipped" added when some were); the exit status is 1 if any failed.
#
# Environment (all optional):
#   HCOMP_TEST_CFLAGS    extra compiler/linker flags, e.g. "-fsanitize=address"
#   HCOMP_TEST_NPS       rank counts for the hcomp runs (default "1 2 4")
#   HCOMP_TEST_UFS_NP    rank count of the ufs control runs (default 2)
#   HCOMP_TEST_BACKENDS  "hcomp ufs" (default), "hcomp" or "ufs"
#   HCOMP_TEST_ONLY      extended regex: run only tests whose name matches
#   HCOMP_TEST_TIMEOUT   seconds per mpiexec run (default 300)
#   HCOMP_TEST_RUN_ENV   VAR=value words set for every mpiexec run (e.g. a sanitizer
#                        build of libhcomp on LD_LIBRARY_PATH, with LD_PRELOAD)
#   HCOMP_TEST_KEEP=1    keep the work directory (it is printed)
#   HCOMP_TEST_SOAK_NP   rank count of t_soak (default 8)
#   HCOMP_SOAK_SECONDS   how long t_soak runs (default 30)
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
PREFIX=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no such directory: $1" >&2; exit 2; }
CC=$PREFIX/bin/mpicc
MPIEXEC=$PREFIX/bin/mpiexec
for x in "$CC" "$MPIEXEC"; do
    [ -x "$x" ] || { echo "$0: $x not found or not executable" >&2; exit 2; }
done
SRC=$(cd "$(dirname "$0")" && pwd)
NPS=${HCOMP_TEST_NPS:-1 2 4}
UFS_NP=${HCOMP_TEST_UFS_NP:-2}
BACKENDS=${HCOMP_TEST_BACKENDS:-hcomp ufs}
TIMEOUT=${HCOMP_TEST_TIMEOUT:-300}
ONLY=${HCOMP_TEST_ONLY:-}
CFLAGS="-std=c11 -O1 -g -Wall -Wextra -Werror ${HCOMP_TEST_CFLAGS:-}"
# LeakSanitizer reports MPICH's own allocations; leave it off unless asked for
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

# tests that run against both hcomp: and ufs:
GENERIC="t_basic_rw t_views t_unaligned t_overwrite t_holes t_size t_nonblocking t_interleave t_collorder
         t_fileperproc t_deferred t_shared t_modes t_hints t_errors t_delete t_large t_codecs
         t_badinput t_coalesce t_visible"
# tests about hcomp's storage (tiers, compression, faults): hcomp: only
HCOMP_ONLY="t_writeback t_compress t_spill t_perms t_tiers t_capacity t_engine
            t_enospc t_vanish t_rotier t_nospace t_damage t_recdamage t_collfail t_soak
            t_plain t_rewrite t_openshare"
# tests with rank counts of their own (name:np,np...) instead of $HCOMP_TEST_NPS
FIXED_NPS="t_soak:${HCOMP_TEST_SOAK_NP:-8} t_coalesce:1,2,4,8 t_writeback:2,4"
export HCOMP_SOAK_SECONDS=${HCOMP_SOAK_SECONDS:-30}

. "$(dirname "$0")/../suite-lib.sh"
SUITE_CLEANUP=unmount_work     # before the work directory is removed
suite_workspace mpitest
# mounts_under DIR: mount points at or below DIR, deepest first
mounts_under() {
    awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts 2>/dev/null | sort -r
}
# unmount_under DIR: unmount (lazily) everything mounted below DIR; prints what it was
unmount_under() {
    local m i
    for i in 1 2 3 4 5 6 7 8; do     # bind mounts may be stacked on one path
        m=$(mounts_under "$1")
        [ -n "$m" ] || return 0
        [ "$i" = 1 ] && echo "$m"
        echo "$m" | while read -r p; do umount -l "$p" 2>/dev/null; done
    done
}
unmount_work() { unmount_under "$WORK" > /dev/null; }

# 48 MiB of RAM (not private), then the file's directory, named "pfs"
suite_tiers 48MiB speeds shared=pfs public
CONFIG=$WORK/tiers.json

PASSED=0
FAILED=0
SKIPPED=0

pass() { PASSED=$((PASSED + 1)); echo "PASS $1"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "SKIP $1: $2"; }
fail() {
    FAILED=$((FAILED + 1))
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -s "$2" ]; then
        # show the failing output (the end of it if it is long)
        local n
        n=$(wc -l < "$2")
        if [ "$n" -gt 120 ]; then
            echo "    ... ($((n - 120)) earlier lines omitted)"
        fi
        tail -n 120 "$2" | sed 's/^/    /'
    fi
}
selected() { [ -z "$ONLY" ] || [[ $1 =~ $ONLY ]]; }

# ---- build -------------------------------------------------------------------
mkdir -p "$WORK/bin" "$WORK/cases" "$WORK/logs"
BUILT=""
for src in "$SRC"/t_*.c; do
    t=$(basename "$src" .c)
    selected "$t" || [ "$t" = t_persist ] || continue
    log=$WORK/logs/build-$t.log
    # shellcheck disable=SC2086
    if "$CC" $CFLAGS -o "$WORK/bin/$t" "$src" -lm > "$log" 2>&1; then
        BUILT="$BUILT $t"
    else
        fail "$t (build)" "$log"
    fi
done
# the demo program (examples/scidata_demo.c), a small run of it as one more case
DEMO_SRC=$SRC/../../examples/scidata_demo.c
if [[ " $BACKENDS " == *" hcomp "* ]] && [ -f "$DEMO_SRC" ] && selected scidata_demo; then
    log=$WORK/logs/build-scidata_demo.log
    # shellcheck disable=SC2086
    if "$CC" $CFLAGS -o "$WORK/bin/scidata_demo" "$DEMO_SRC" -lhcomp -lm > "$log" 2>&1; then
        BUILT="$BUILT scidata_demo"
    else
        fail "scidata_demo (build)" "$log"
    fi
fi
built() { [[ " $BUILT " == *" $1 "* ]]; }

# ---- running -------------------------------------------------------------------
# leftovers DIR CHECK_RAM: print what a passing run left behind (nothing if clean)
leftovers() {
    find "$1" -mindepth 1 2>/dev/null | head -20
    if [ "$2" = 1 ]; then find "$RAM" -mindepth 1 2>/dev/null | head -20; fi
}

# nps_of TEST DEFAULT: the rank counts TEST runs with
nps_of() {
    local e
    for e in $FIXED_NPS; do
        if [ "${e%%:*}" = "$1" ]; then echo "${e#*:}" | tr , ' '; return; fi
    done
    echo "$2"
}

# run_case LABEL NP CASEDIR CHECK_RAM CHECK_EMPTY PROGRAM ARGS...
run_case() {
    local label=$1 np=$2 dir=$3 check_ram=$4 check_empty=$5
    shift 5
    local log=$WORK/logs/$(echo "$label-np$np" | tr -c 'A-Za-z0-9_.=-' '_').log
    local rc=0
    {
        echo "\$ mpiexec -n $np $*"
        # shellcheck disable=SC2086  # HCOMP_TEST_RUN_ENV is a list of VAR=value words
        timeout -k 10 "$TIMEOUT" env ${HCOMP_TEST_RUN_ENV:-} "$MPIEXEC" -n "$np" "$@"
    } > "$log" 2>&1 || rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "(timed out after ${TIMEOUT}s)" >> "$log"
    elif [ $rc -ne 0 ]; then
        echo "(exit status $rc)" >> "$log"
    fi
    local mounts
    mounts=$(unmount_under "$dir")
    if [ -n "$mounts" ]; then
        { echo "the run left mounts behind (now unmounted):"; echo "$mounts"; } >> "$log"
        rc=1
    fi
    if [ $rc -eq 0 ] && [ "$check_empty" = 1 ]; then
        local left
        left=$(leftovers "$dir" "$check_ram")
        if [ -n "$left" ]; then
            { echo "the run passed but left files behind:"; echo "$left"; } >> "$log"
            rc=1
        fi
    fi
    local skipped
    skipped=$(grep -m1 '^SKIP ' "$log" | sed 's/^SKIP [^:]*: //')
    if [ $rc -eq 0 ] && [ -n "$skipped" ]; then
        skip "$label (np=$np)" "$skipped"
    elif [ $rc -eq 0 ]; then pass "$label (np=$np)"; else fail "$label (np=$np)" "$log"; fi
    # the next case starts clean even after a failure
    [ "$check_ram" = 1 ] && rm -rf "${RAM:?}"/* 2>/dev/null
    return $rc
}

newdir() { local d=$WORK/cases/$1; rm -rf "$d"; mkdir -p "$d"; echo "$d"; }

# run_durable NP VERIFY_NP DIR DRAIN [tiers]: t_durable --write (NP ranks, hcomp_drain=DRAIN,
# hcomp_sync=tiers when asked) syncs and then kills itself; the job must have died after
# the sync ("SYNCED"). The RAM tier is then wiped, as the loss of the node would, and a new
# job (VERIFY_NP ranks) reads every synced byte back (with the opt-out: fails cleanly)
# and deletes the file.
run_durable() {
    local np=$1 vnp=$2 dir=$3 drain=$4 sync=${5:-durable} f="hcomp:$3/f.dat"
    local label="t_durable[$drain,sync=$sync]" log=$WORK/logs/t_durable-$4-$sync-np$1.log
    local rc=0 lost=""
    [ "$sync" = tiers ] && lost=--lost
    echo "\$ mpiexec -n $np t_durable --write --drain=$drain --sync=$sync --ram=$RAM $f $CONFIG" > "$log"
    # shellcheck disable=SC2086
    timeout -k 10 "$TIMEOUT" env ${HCOMP_TEST_RUN_ENV:-} "$MPIEXEC" -n "$np" "$WORK/bin/t_durable" \
        --write "--drain=$drain" "--sync=$sync" "--ram=$RAM" "$f" "$CONFIG" >> "$log" 2>&1 || rc=$?
    echo "(mpiexec ended with status $rc)" >> "$log"
    if ! grep -q '^SYNCED ' "$log" || grep -q '^FAIL ' "$log" || [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
        echo "(the writers did not all sync and then die)" >> "$log"
        rm -rf "${RAM:?}"/* 2>/dev/null
        fail "$label[write, sync, SIGKILL] (np=$np)" "$log"
        return
    fi
    pass "$label[write, sync, SIGKILL] (np=$np)"
    find "${RAM:?}" -mindepth 1 -delete 2>/dev/null   # the node's memory is gone, dot files too
    run_case "$label[verify after the RAM tier was wiped, w=$np]" "$vnp" "$dir" 1 1 \
        "$WORK/bin/t_durable" --verify $lost --delete "$f" "$CONFIG"
}

# run_kill NP VERIFY_NP DIR: t_kill --write with NP ranks until every rank has created
# DIR/f.dat.kill/ready.<rank> (after its data was closed and synced), 0.5 s more, then
# SIGKILL to the last rank; mpiexec must end the job. Then t_kill --verify --delete with
# VERIFY_NP ranks in a new mpiexec.
run_kill() {
    local np=$1 vnp=$2 dir=$3 f="hcomp:$3/f.dat" marks="$3/f.dat.kill"
    local label="t_kill[SIGKILL while writing]" log=$WORK/logs/t_kill-write-np$1.log
    local rc=0 bg i n pid
    echo "\$ mpiexec -n $np t_kill --write $f $CONFIG  (then kill -9 of rank $((np - 1)))" > "$log"
    # shellcheck disable=SC2086
    timeout -k 10 "$TIMEOUT" env ${HCOMP_TEST_RUN_ENV:-} "$MPIEXEC" -n "$np" \
        "$WORK/bin/t_kill" --write "$f" "$CONFIG" >> "$log" 2>&1 &
    bg=$!           # timeout's pid: a TERM to it ends mpiexec and the ranks
    n=0
    for i in $(seq 1 1200); do       # at most 120 s for the writers to get there
        n=$(find "$marks" -name 'ready.*' 2>/dev/null | wc -l)
        [ "$n" -ge "$np" ] && break
        kill -0 "$bg" 2>/dev/null || break
        sleep 0.1
    done
    if [ "$n" -lt "$np" ]; then
        echo "(only $n of $np ranks got to their writing loop)" >> "$log"
        kill -- "$bg" 2>/dev/null
        wait "$bg" 2>/dev/null
        rm -rf "${RAM:?}"/* 2>/dev/null
        rc=1
    else
        sleep 0.5
        pid=$(cat "$marks/ready.$((np - 1))")
        echo "(killing rank $((np - 1)), pid $pid, with SIGKILL)" >> "$log"
        kill -9 "$pid" 2>/dev/null || { echo "(pid $pid was gone already)" >> "$log"; rc=1; }
        wait "$bg"
        i=$?
        echo "(mpiexec ended with status $i)" >> "$log"
        [ "$i" -ne 0 ] || { echo "(the job did not fail although a rank was killed)" >> "$log"; rc=1; }
        [ "$i" -ne 124 ] || { echo "(timed out after ${TIMEOUT}s)" >> "$log"; rc=1; }
        grep -q '^FAIL ' "$log" && rc=1
        # the other ranks must be gone too: they are ours, end them if not
        for pid in $(cat "$marks"/ready.* 2>/dev/null); do
            if kill -0 "$pid" 2>/dev/null; then
                echo "(rank pid $pid survived the job; killed)" >> "$log"
                kill -9 "$pid" 2>/dev/null
                rc=1
            fi
        done
    fi
    rm -rf "$marks"
    if [ $rc -eq 0 ]; then pass "$label (np=$np)"; else fail "$label (np=$np)" "$log"; return; fi
    run_case "t_kill[verify after SIGKILL, w=$np]" "$vnp" "$dir" 1 1 "$WORK/bin/t_kill" \
        --verify --delete "$f" "$CONFIG"
}

for backend in $BACKENDS; do
    case $backend in
    hcomp) nps=$NPS; tests="$GENERIC $HCOMP_ONLY"; suffix=""; cfg=$CONFIG; ram=1 ;;
    ufs) nps=$UFS_NP; tests="$GENERIC"; suffix="[ufs]"; cfg=""; ram=0 ;;
    *) echo "unknown backend $backend" >&2; exit 2 ;;
    esac
    for t in $tests; do
        selected "$t" && built "$t" || continue
        for np in $(nps_of "$t" "$nps"); do
            d=$(newdir "$t$suffix-np$np")
            run_case "$t$suffix" "$np" "$d" "$ram" 1 "$WORK/bin/$t" "$backend:$d/f.dat" $cfg
        done
    done

    # read-after-write in new processes: write with W ranks, verify with others
    if selected t_persist && built t_persist; then
        if [ "$backend" = hcomp ]; then
            combos="1:4,2 2:1,2 4:2,1"
        else
            combos="$UFS_NP:1,4"
        fi
        for combo in $combos; do
            w=${combo%%:*}
            readers=${combo#*:}
            d=$(newdir "t_persist$suffix-w$w")
            f="$backend:$d/f.dat"
            run_case "t_persist$suffix[write]" "$w" "$d" 0 0 "$WORK/bin/t_persist" --write "$f" $cfg || continue
            last=${readers##*,}
            for rd in ${readers//,/ }; do
                if [ "$rd" = "$last" ]; then del=--delete; chk=1; else del=""; chk=0; fi
                run_case "t_persist$suffix[verify w=$w]" "$rd" "$d" "$chk" "$chk" \
                    "$WORK/bin/t_persist" --verify $del "$f" $cfg
            done
        done
    fi

    # a rank killed with SIGKILL while writing (t_kill): the writer run, then the kill
    # of its last rank once every rank has written what must survive, then a new run
    # that verifies (with another rank count) and deletes
    if [ "$backend" = hcomp ] && selected t_kill && built t_kill; then
        for np in $NPS; do
            case $np in 1) vnp=2 ;; 2) vnp=1 ;; *) vnp=2 ;; esac
            d=$(newdir "t_kill-np$np")
            run_kill "$np" "$vnp" "$d"
        done
    fi

    # sync, then the job dies and the node's RAM tier is lost (t_durable): for the drain
    # modes that leave data on the RAM tier until then, every synced byte reads back; with
    # hcomp_sync=tiers it is lost, cleanly. (With hcomp_drain=close the engine writes
    # straight to the shared tier, where the data would be moved at the close anyway:
    # docs/ENGINE.md, "Cost model"; test_hcdp's test_drain_close_goes_shared.)
    if [ "$backend" = hcomp ] && selected t_durable && built t_durable; then
      case $(stat -f -c %T "$RAM" 2>/dev/null) in
      tmpfs|ramfs)
        for np in $NPS; do
            case $np in 1) vnp=2 ;; 2) vnp=1 ;; *) vnp=2 ;; esac
            for drain in background never; do
                run_durable "$np" "$vnp" "$(newdir "t_durable-$drain-np$np")" "$drain"
            done
        done
        run_durable 2 2 "$(newdir "t_durable-optout")" never tiers ;;
      *) skip "t_durable" "the RAM tier $RAM is not on a RAM-backed file system here" ;;
      esac
    fi

    # plain files under ROMIO_FSTYPE_FORCE=hcomp: with bare names (as a program whose
    # file names cannot change is run): t_plain again, the force set for its mpiexec
    if [ "$backend" = hcomp ] && selected t_plain && built t_plain; then
        for np in $NPS; do
            d=$(newdir "t_plain-force-np$np")
            HCOMP_TEST_RUN_ENV="${HCOMP_TEST_RUN_ENV:-} ROMIO_FSTYPE_FORCE=hcomp:" \
                run_case "t_plain[ROMIO_FSTYPE_FORCE=hcomp:]" "$np" "$d" 1 1 "$WORK/bin/t_plain" \
                "$d/f.dat" "$CONFIG"
        done
    fi

    # a relative file name (resolved against the working directory)
    if [ "$backend" = hcomp ] && selected t_basic_rw && built t_basic_rw; then
        d=$(newdir "t_basic_rw-relative")
        (cd "$d" && run_case "t_basic_rw[relative-path]" 2 "$d" 1 1 "$WORK/bin/t_basic_rw" \
            "hcomp:f.dat" "$CONFIG") && PASSED=$((PASSED + 1)) || FAILED=$((FAILED + 1))
    fi

    # the demo: 2 MiB per rank, one repetition, on the test tiers
    if [ "$backend" = hcomp ] && built scidata_demo; then
        d=$(newdir "scidata_demo")
        run_case "scidata_demo" 2 "$d" 1 1 "$WORK/bin/scidata_demo" --dir "$d" --mib 2 \
            --reps 1 --codec zstd --config "$CONFIG"
    fi

    # the embedded default tier configuration (no hcomp_config hint, no HCOMP_CONFIG)
    if [ "$backend" = hcomp ] && selected t_basic_rw && built t_basic_rw; then
        d=$(newdir "t_basic_rw-default-config")
        (unset HCOMP_CONFIG; run_case "t_basic_rw[default-config]" 2 "$d" 0 1 \
            "$WORK/bin/t_basic_rw" "hcomp:$d/f.dat") && PASSED=$((PASSED + 1)) || FAILED=$((FAILED + 1))
    fi
done

if [ "$SKIPPED" -gt 0 ]; then
    echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
else
    echo "$PASSED passed, $FAILED failed"
fi
[ "$FAILED" -eq 0 ]
