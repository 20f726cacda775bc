#!/usr/bin/env bash
# MPICH's own MPI-IO test programs (test/mpi/io of the MPICH source) run under
# ROMIO_FSTYPE_FORCE=hcomp:, as a program whose file names cannot change is run, with
# a plain ufs run of each as a control.
#
# usage: tests/mpich-io/run.sh PREFIX
#
# PREFIX is an MPICH installation with the hcomp driver (PREFIX/bin/mpicc,
# PREFIX/bin/mpiexec). The programs, their testlist and MPICH's test harness
# (test/mpi/util/mtest*.c, test/mpi/include/mpitest.h and the configured
# mpitestconf.h) come from the MPICH build tree named in PREFIX/.hcomp-mpich-build
# (override with MPICH_IO_TEST_DIR=<MPICH build tree>/test/mpi).
#
# Every program of io/testlist is compiled with PREFIX/bin/mpicc and MPICH's test
# harness (mtest.c, mtest_common.c, mtest_single.c: libmtest_single), and run
# with the testlist's rank count (at most 4; more than the cores is fine) and its
# arguments, in a fresh empty working directory (the programs use fixed, relative
# names such as "testfile"):
#   ufs    without ROMIO_FSTYPE_FORCE (ROMIO picks ufs for these local files)
#   hcomp  with ROMIO_FSTYPE_FORCE=hcomp: (ROMIO then uses hcomp for every name, a
#          prefixed one included: adio/common/ad_fstype.c), and HCOMP_CONFIG naming a
#          tier configuration like tests/romio/run.sh's (a private RAM directory of
#          this run's own, then @filedir)
# Both runs set ROMIO_PRINT_HINTS=1: after every successful open, ROMIO prints the
# handle's info (rank 0 of its communicator), which shows the driver that opened it.
# A case passes if the program exits 0 and prints " No Errors" (MTest_Finalize). The
# hcomp case must also show that hcomp handled every file: each open printed must
# carry hcomp_file_kind (hcomp, or plain for an existing plain file that hcomp passed
# through: then romio_filesystem_type is UFS), at least one open must be printed,
# every regular file the run leaves must be an hcomp mapping file (starts with
# HCOMPMAP), and after MPI_File_delete of what it left (under the force too), nothing
# may remain in its directory or RAM tier. The ufs control must show no
# hcomp_file_kind at all.
#
# Output: "PASS name (np=N)" / "FAIL name (np=N): why" per hcomp case (a failing case
# is followed by its output), "PASS name [ufs] (np=N)" per control. The last line is
# "N passed, N failed" over the hcomp cases; the ufs control is summed up on the line
# before. Exit status: 1 if any hcomp case failed, 2 on bad usage.
#
# Environment (all optional):
#   MPICH_IO_TEST_ONLY     extended regex: run only programs whose name matches
#   MPICH_IO_TEST_TIMEOUT  seconds per mpiexec run (default 300)
#   MPICH_IO_TEST_NO_UFS=1 skip the ufs control runs
#   HCOMP_TEST_KEEP=1      keep the work directory (its path is printed; or
#                          MPICH_IO_TEST_KEEP=1)
#   HCOMP_TEST_RUN_ENV     VAR=value words set for every mpiexec run
set -uo pipefail

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
if [ -n "${MPICH_IO_TEST_DIR:-}" ]; then
    TESTMPI=$MPICH_IO_TEST_DIR
else
    [ -r "$PREFIX/.hcomp-mpich-build" ] ||
        { echo "$0: $PREFIX/.hcomp-mpich-build not found (or set MPICH_IO_TEST_DIR)" >&2; exit 2; }
    TESTMPI=$(head -n 1 "$PREFIX/.hcomp-mpich-build")/test/mpi
fi
IODIR=$TESTMPI/io
for f in "$IODIR/testlist" "$TESTMPI/util/mtest.c" "$TESTMPI/include/mpitest.h" \
         "$TESTMPI/include/mpitestconf.h"; do
    [ -f "$f" ] || { echo "$0: $f not found (a configured MPICH test/mpi tree is needed)" >&2; exit 2; }
done
TIMEOUT=${MPICH_IO_TEST_TIMEOUT:-300}
ONLY=${MPICH_IO_TEST_ONLY:-}
MAXNP=4

# Programs of the testlist that are not run, and why (none of the reasons is hcomp's).
declare -A EXCLUDED=(
)
# Programs that remove their file with unlink(2) instead of MPI_File_delete: an hcomp
# file's pieces (its hidden .hcd segment directories) stay behind by design (docs/TIERS.md:
# deleting only the mapping file leaves the pieces), so for them the check that
# nothing is left is not made; the script removes the segment directories.
declare -A UNLINKS=(
    [simple_collective]="rank 0 calls unlink(file) after each of its two test_write rounds"
)

. "$(dirname "$0")/../suite-lib.sh"
suite_workspace mpich-io "$(suite_keep MPICH_IO_TEST_KEEP)"
suite_tiers 64MiB speeds
mkdir -p "$WORK/obj" "$WORK/bin" "$WORK/logs" "$WORK/run"

echo "MPICH I/O tests from: $IODIR"
echo "MPI:                  $PREFIX ($("$PREFIX/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p'))"
echo "hcomp runs:           ROMIO_FSTYPE_FORCE=hcomp: HCOMP_CONFIG=$WORK/tiers.json${RAM:+ (RAM tier $RAM, 64 MiB)}"
echo "work directory:       $WORK"

PASSED=0
FAILED=0
UFS_PASSED=0
UFS_FAILED=0
show_log() {
    local n
    n=$(wc -l < "$1")
    [ "$n" -gt 60 ] && echo "    ... ($((n - 60)) earlier lines omitted; full log: $1)"
    tail -n 60 "$1" | awk '{ print "    " $0 }'
    return 0
}
selected() { [ -z "$ONLY" ] || [[ $1 =~ $ONLY ]]; }

# ---- the testlist: "name np [key=value ...]" ----------------------------------------
NAMES=""
declare -A NP ARGS
while read -r name np rest; do
    case $name in ''|'#'*) continue ;; esac
    NAMES="$NAMES $name"
    [ "$np" -gt "$MAXNP" ] 2>/dev/null && np=$MAXNP
    NP[$name]=$np
    args=""
    for kv in $rest; do
        case $kv in arg=*) args="$args ${kv#arg=}" ;; esac
    done
    ARGS[$name]=$args
done < "$IODIR/testlist"
echo "excluded:"
for p in $(printf '%s\n' "${!EXCLUDED[@]}" | sort); do
    echo "  $p: ${EXCLUDED[$p]}"
done
echo "removing their files with unlink(2) (hcomp pieces left behind are not checked):"
for p in $(printf '%s\n' "${!UNLINKS[@]}" | sort); do
    echo "  $p: ${UNLINKS[$p]}"
done
echo

# ---- build ---------------------------------------------------------------------------
# MPICH's libmtest_single: mtest.c, mtest_common.c, mtest_single.c (test/mpi/util)
MTEST_OBJS=""
for m in mtest mtest_common mtest_single; do
    if ! (cd "$WORK/obj" && "$CC" -O1 -I"$TESTMPI/include" -c "$TESTMPI/util/$m.c" -o $m.o) \
            >> "$WORK/logs/build-mtest.log" 2>&1; then
        MTEST_OBJS=failed
        break
    fi
    MTEST_OBJS="$MTEST_OBJS $WORK/obj/$m.o"
done
if [ "$MTEST_OBJS" = failed ]; then
    echo "$0: cannot build MPICH's test harness (util/mtest*.c):" >&2
    cat "$WORK/logs/build-mtest.log" >&2
    exit 2
fi
# hcomp_rm FILE...: MPI_File_delete of each (the cleanup of what a run left)
cat > "$WORK/obj/hcomp_rm.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rc = 0;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (MPI_File_delete(argv[i], MPI_INFO_NULL) != MPI_SUCCESS) {
            fprintf(stderr, "hcomp_rm: cannot delete %s\n", argv[i]);
            rc = 1;
        }
    MPI_Finalize();
    return rc;
}
EOF
if ! "$CC" -O1 -o "$WORK/bin/hcomp_rm" "$WORK/obj/hcomp_rm.c" > "$WORK/logs/build-hcomp_rm.log" 2>&1; then
    echo "$0: cannot build the cleanup helper:" >&2
    cat "$WORK/logs/build-hcomp_rm.log" >&2
    exit 2
fi
BUILT=""
for t in $NAMES; do
    selected "$t" || continue
    [ -n "${EXCLUDED[$t]:-}" ] && continue
    log=$WORK/logs/build-$t.log
    # shellcheck disable=SC2086  # MTEST_OBJS is a list of files
    if "$CC" -O1 -I"$TESTMPI/include" -o "$WORK/bin/$t" "$IODIR/$t.c" $MTEST_OBJS -lm \
            > "$log" 2>&1; then
        BUILT="$BUILT $t"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $t (build)"
        show_log "$log"
    fi
done

# ---- running ---------------------------------------------------------------------------
# run_case NAME BACKEND: sets RESULT (0 = pass) and REASON; output in $WORK/logs/NAME.BACKEND.log
run_case() {
    local t=$1 be=$2 np=${NP[$1]} rc=0
    local dir=$WORK/run/$t.$be log=$WORK/logs/$t.$be.log
    local -a envs=(ROMIO_PRINT_HINTS=1)
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ "$be" = hcomp ]; then
        envs+=(ROMIO_FSTYPE_FORCE=hcomp: HCOMP_CONFIG="$WORK/tiers.json")
        [ -n "$RAM" ] && { find "$RAM" -mindepth 1 -delete 2>/dev/null || true; }
    fi
    {
        echo "\$ (cd $dir && ${envs[*]} mpiexec -n $np $t${ARGS[$t]})"
        # shellcheck disable=SC2086  # ARGS and HCOMP_TEST_RUN_ENV are lists of words
        (cd "$dir" && env ${HCOMP_TEST_RUN_ENV:-} "${envs[@]}" timeout -k 10 "$TIMEOUT" \
            "$MPIEXEC" -n "$np" "$WORK/bin/$t" ${ARGS[$t]}) 2>&1 || rc=$?
    } > "$log" 2>&1 < /dev/null
    RESULT=0
    REASON=""
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        RESULT=1; REASON="timed out after ${TIMEOUT}s"
    elif [ $rc -ne 0 ]; then
        RESULT=1; REASON="exit status $rc"
    fi
    grep -q '^ No Errors$' "$log" || { RESULT=1; REASON="${REASON:+$REASON; }no \" No Errors\""; }
    local left f notmap=""
    left=$(cd "$dir" && find . -mindepth 1 -maxdepth 1 -type f -printf '%P\n' | sort | tr '\n' ' ')
    # the opens ROMIO_PRINT_HINTS showed, and the kinds hcomp reported for them
    local opens hk pk
    opens=$(grep -o 'key = romio_filesystem_type' "$log" | wc -l)
    hk=$(grep -oE 'key = hcomp_file_kind +value = hcomp' "$log" | wc -l)
    pk=$(grep -oE 'key = hcomp_file_kind +value = plain' "$log" | wc -l)
    if [ "$be" = ufs ] && [ $((hk + pk)) -ne 0 ]; then
        RESULT=1; REASON="${REASON:+$REASON; }hcomp_file_kind on a ufs run"
    fi
    if [ "$be" = hcomp ]; then
        if [ "$opens" -eq 0 ]; then
            RESULT=1; REASON="${REASON:+$REASON; }no open printed by ROMIO_PRINT_HINTS"
        elif [ $((hk + pk)) -ne "$opens" ]; then
            RESULT=1; REASON="${REASON:+$REASON; }$opens opens, but only $((hk + pk)) through hcomp (hcomp_file_kind)"
        fi
        KINDS="$opens opens: $hk hcomp, $pk plain"
        for f in $left; do
            [ "$(head -c 8 "$dir/$f")" = HCOMPMAP ] || notmap="$notmap $f"
        done
        [ -n "$notmap" ] && { RESULT=1; REASON="${REASON:+$REASON; }left files that are not hcomp mapping files:$notmap"; }
        {
            echo "--- files left in $dir:"
            (cd "$dir" && find . -mindepth 1 -printf '%y %s %p\n' | sort)
        } >> "$log" 2>&1
        if [ -n "$left" ] && [ -z "$notmap" ]; then
            local -a doomed=()
            for f in $left; do doomed+=("$f"); done
            echo "--- cleanup: MPI_File_delete ${doomed[*]} under the force" >> "$log"
            if ! (cd "$dir" && env ROMIO_FSTYPE_FORCE=hcomp: HCOMP_CONFIG="$WORK/tiers.json" \
                    timeout -k 10 60 "$MPIEXEC" -n 1 "$WORK/bin/hcomp_rm" "${doomed[@]}") >> "$log" 2>&1 < /dev/null; then
                RESULT=1; REASON="${REASON:+$REASON; }MPI_File_delete of the files it left failed"
            fi
        fi
        if [ -n "${UNLINKS[$t]:-}" ]; then
            find "$dir" -mindepth 1 -maxdepth 1 -type d -name '.*.hcd' -exec rm -rf {} + 2>/dev/null
        fi
        if [ -z "$notmap" ]; then
            local bad
            bad=$( (find "$dir" -mindepth 1; [ -n "$RAM" ] && find "$RAM" -mindepth 1) 2>/dev/null |
                head -n 5 | tr '\n' ' ')
            [ -n "$bad" ] && { RESULT=1; REASON="${REASON:+$REASON; }data left behind after its files were deleted: $bad"; }
        fi
    fi
    rm -rf "$dir"
    [ "$be" = hcomp ] && [ -n "$RAM" ] && { find "$RAM" -mindepth 1 -delete 2>/dev/null || true; }
    return 0
}

for t in $NAMES; do
    selected "$t" || continue
    [[ " $BUILT " == *" $t "* ]] || continue
    np=${NP[$t]}
    if [ "${MPICH_IO_TEST_NO_UFS:-0}" != 1 ]; then
        run_case "$t" ufs
        if [ "$RESULT" -eq 0 ]; then
            UFS_PASSED=$((UFS_PASSED + 1))
            echo "PASS $t [ufs] (np=$np)"
        else
            UFS_FAILED=$((UFS_FAILED + 1))
            echo "FAIL $t [ufs] (np=$np): $REASON (control run: not hcomp's)"
            show_log "$WORK/logs/$t.ufs.log"
        fi
    fi
    run_case "$t" hcomp
    if [ "$RESULT" -eq 0 ]; then
        PASSED=$((PASSED + 1))
        echo "PASS $t (np=$np) ($KINDS)"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $t (np=$np): $REASON"
        show_log "$WORK/logs/$t.hcomp.log"
    fi
done

echo
[ "${MPICH_IO_TEST_NO_UFS:-0}" != 1 ] && echo "ufs control: $UFS_PASSED passed, $UFS_FAILED failed"
echo "under ROMIO_FSTYPE_FORCE=hcomp::"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
