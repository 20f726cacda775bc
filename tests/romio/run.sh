#!/usr/bin/env bash
# ROMIO's own C test programs (src/mpi/romio/test in the patched MPICH tree)
# run against the hcomp: driver, with ufs: as a control.
#
# usage: tests/romio/run.sh PREFIX
#
# PREFIX is an MPICH installation with the hcomp driver (PREFIX/bin/mpicc,
# PREFIX/bin/mpiexec). The MPICH build tree is the one named in
# PREFIX/.hcomp-mpich-build (override with ROMIO_TEST_SRC=<dir with the test *.c>).
#
# Every program in the TESTS table below is copied to a temporary build
# directory, compiled one at a time with PREFIX/bin/mpicc, and run with
# `timeout 300 PREFIX/bin/mpiexec -n NP` (NP and the arguments are the ones
# ROMIO's `runtests` script uses) on a file in a fresh directory:
#   hcomp:<tmp>/hcomp/<name>/<name>   and, as a control,   ufs:<tmp>/ufs/<name>/<name>
# A case passes only if the program exits 0, prints its success line
# (" No Errors" for most; perf checks no data and its line is its last
# bandwidth report) and prints nothing that reports errors ("Found N errors",
# "N/M blocks corrupt", ...). On hcomp, in addition:
#   - every regular file the run leaves in its directory is an hcomp mapping
#     file (starts with "HCOMPMAP"): the hcomp driver, not a fallback, made it;
#   - it leaves the same file names as the ufs run (deletions, shared file
#     pointer files, one file per rank);
#   - if it deleted all its files, no data is left (in its directory or in the
#     run's RAM tier); if it left files, MPI_File_delete on them (the cleanup
#     between cases) succeeds and leaves nothing behind either.
#
# The hcomp runs use a tier configuration that mirrors the embedded default
# (a private 64 MiB RAM directory in /dev/shm, then the file's own directory),
# but with a RAM directory of this run's own, so that nothing is left in or
# taken from the shared /dev/shm/hcomp-<uid>. Set HCOMP_CONFIG yourself to
# test another configuration ("embedded" = the embedded default itself).
#
# Output: "PASS name [hcomp] (np=N)" / "FAIL ..." per case (a failing case is
# followed by its output). An hcomp failure whose program also fails on ufs is
# marked "(also fails on ufs: not hcomp's)" but still counted. Cases whose
# disk needs are not met print SKIP. The last line is
# "N passed, N failed" (", N skipped" if any), counting the hcomp cases; the ufs control is summed up
# on the line before. Exit status: 1 if any hcomp case failed, 2 on bad usage.
#
# Environment (all optional):
#   ROMIO_TEST_ONLY      extended regex: run only programs whose name matches
#   ROMIO_TEST_TIMEOUT   seconds per mpiexec run (default 300)
#   ROMIO_TEST_NO_UFS=1  skip the ufs control runs
#   HCOMP_TEST_KEEP=1    keep the work directory (its path is printed; or
#                        ROMIO_TEST_KEEP=1)
#   ROMIO_TEST_HEAVY=1   also run large_array (4 GiB, ~1 GiB of RAM per rank)
#   HCOMP_TEST_RUN_ENV   VAR=value words set for every mpiexec run (e.g. a sanitizer
#                        build of libhcomp on LD_LIBRARY_PATH, with LD_PRELOAD)
set -euo pipefail

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
if [ -n "${ROMIO_TEST_SRC:-}" ]; then
    TESTSRC=$ROMIO_TEST_SRC
else
    [ -r "$PREFIX/.hcomp-mpich-build" ] ||
        { echo "$0: $PREFIX/.hcomp-mpich-build not found (or set ROMIO_TEST_SRC)" >&2; exit 2; }
    TESTSRC=$(head -n 1 "$PREFIX/.hcomp-mpich-build")/src/mpi/romio/test
fi
[ -f "$TESTSRC/simple.c" ] || { echo "$0: no ROMIO test sources in $TESTSRC" >&2; exit 2; }
TIMEOUT=${ROMIO_TEST_TIMEOUT:-300}
ONLY=${ROMIO_TEST_ONLY:-}
BACKENDS="hcomp ufs"
[ "${ROMIO_TEST_NO_UFS:-0}" = 1 ] && BACKENDS="hcomp"

# ---- what runs -------------------------------------------------------------
# name | ranks | arguments (@F = the file name) | success line (regex, whole line; A && B:
# both lines) | flags
# Ranks and arguments are those of ROMIO's runtests script; the programs that
# runtests does not run (creat_excl, perf, big_extents, large_file,
# large_array) take their file name the same way and run with 4 ranks
# (large_file: 1, as it demands). Flags:
#   all      the success line must be printed by every rank (np times)
#   disk=N   needs N GiB free where the files go, else the case is skipped
#   heavy    runs only with ROMIO_TEST_HEAVY=1 (minutes, GiBs of RAM)
#   force    the program takes no file name (it makes its own in the current
#            directory): run with ROMIO_FSTYPE_FORCE=BACKEND: so that its files
#            go through the backend; for hcomp under `hcomp run`, since the
#            program also reads its file with fopen (external32: checks the
#            bytes' order that each data representation wrote)
TESTS='
simple           |4| -fname @F   | No Errors
async            |4| -fname @F   | No Errors
async-multiple   |4| -fname @F   | No Errors
atomicity        |4| -fname @F   | No Errors
coll_test        |4| -fname @F   | No Errors
excl             |4| -fname @F   | No Errors
file_info        |4| -fname @F   | No Errors
i_noncontig      |2| -fname @F   | No Errors
noncontig        |2| -fname @F   | No Errors
noncontig_coll   |2| -fname @F   | No Errors
noncontig_coll2  |4| -fname @F   | No Errors
aggregation1     |4| -h -f @F    | No Errors
aggregation2     |4| @F          | No Errors
hindexed         |4| @F          | No Errors
misc             |4| -fname @F   | No Errors
shared_fp        |4| -fname @F   | No Errors
ordered_fp       |4| -fname @F   | No Errors
split_coll       |4| -fname @F   | No Errors
psimple          |4| -fname @F   | No Errors
error            |1| -fname @F   | No Errors
status           |1| -fname @F   | No Errors
types_with_zeros |2| @F          | No Errors
darray_read      |4| @F          | No Errors
creat_excl       |4| -fname @F   | No Errors
perf             |4| -fname @F   | Read bandwidth after file sync = .* Mbytes/sec
big_extents      |4| @F          | No Errors
large_file       |1| -fname @F   | Data read back is correct | disk=6
large_array      |4| -fname @F   | Process [0-9]+: data read back is correct | all heavy disk=6
external32       |2|             | native datarep is LITTLE ENDIAN && external32 datarep is BIG ENDIAN && internal datarep is LITTLE ENDIAN | force
'
# Output that reports errors, in any program (extended regex, case-insensitive).
ERROR_RE='found [0-9]+ error|[0-9]+/[0-9]+ blocks corrupt|^error:|got -?[0-9]+ expected|readbuf=.*writebuf=|unexpected (value|error message)|did not return an error|returns? error|MPI_Abort|^Abort\('

# Programs of the test directory that are not run, and why.
declare -A EXCLUDED=(
    [fcoll_test]="Fortran (fcoll_test.f); runtests only runs the Fortran tests when they are configured, and they are not in this build"
    [fmisc]="Fortran (fmisc.f), as above"
    [fperf]="Fortran (fperf.f), as above"
    [pfcoll_test]="Fortran (pfcoll_test.f), as above"
    [syshints]="takes no data file name: argv[1] is ROMIO's hint file test_hintfile, which it both reads through ROMIO_HINTS (plain open(2), so an hcomp: prefix cannot be used) and opens read-only as the MPI file; it tests hint parsing, not a file system"
    [coll_perf]="a benchmark that checks nothing, and its global array is 2176 x 1152 x 1408 ints, a 13 GiB file (the README's 128^3 is out of date) written 3 times and read twice: timed out (300 s) on ufs as well as hcomp on this 2-core machine"
)

# ---- work space ------------------------------------------------------------
. "$(dirname "$0")/../suite-lib.sh"
suite_workspace romio "$(suite_keep ROMIO_TEST_KEEP)"
if [ -z "${HCOMP_CONFIG:-}" ]; then
    suite_tiers 64MiB speeds
    export HCOMP_CONFIG=$WORK/tiers.json
else
    RAM=""      # the caller's tiers: no RAM tier of this run's own to check
fi
mkdir -p "$WORK/src" "$WORK/bin" "$WORK/logs" "$WORK/hcomp" "$WORK/ufs"

echo "ROMIO tests from: $TESTSRC"
echo "MPI:              $PREFIX ($("$PREFIX/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p'))"
echo "hcomp tiers:      HCOMP_CONFIG=$HCOMP_CONFIG${RAM:+ (RAM tier $RAM, 64 MiB)}"
echo "work directory:   $WORK"

PASSED=0
FAILED=0
SKIPPED=0
UFS_PASSED=0
UFS_FAILED=0

# show_log FILE: the end of a case's output, indented
show_log() {
    local n
    n=$(wc -l < "$1")
    [ "$n" -gt 60 ] && echo "    ... ($((n - 60)) earlier lines omitted; full log: $1)"
    tail -n 60 "$1" | awk '{ print "    " $0 }'
    return 0
}
selected() { [ -z "$ONLY" ] || [[ $1 =~ $ONLY ]]; }
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }

# ---- the table versus the test directory -------------------------------------
NAMES=""
declare -A NP ARGS OK FLAGS
while IFS='|' read -r name np args ok flags; do
    name=$(trim "$name")
    [ -n "$name" ] || continue
    NAMES="$NAMES $name"
    NP[$name]=$(trim "$np")
    ARGS[$name]=$(trim "$args")
    OK[$name]=$(trim "$ok")
    FLAGS[$name]=" $(trim "$flags") "
done <<< "$TESTS"

# every C/Fortran program of the directory is either run or excluded with a reason
UNLISTED=""
for src in "$TESTSRC"/*.c "$TESTSRC"/*.f; do
    p=$(basename "$src"); p=${p%.*}
    [[ " $NAMES " == *" $p "* ]] || [ -n "${EXCLUDED[$p]:-}" ] || UNLISTED="$UNLISTED $p"
done
if [ -n "$UNLISTED" ]; then
    echo "WARNING: programs in $TESTSRC neither run nor excluded:$UNLISTED"
fi
echo "excluded:"
for p in $(printf '%s\n' "${!EXCLUDED[@]}" | sort); do
    echo "  $p: ${EXCLUDED[$p]}"
done
HEAVY=${ROMIO_TEST_HEAVY:-0}
for t in $NAMES; do
    if [[ ${FLAGS[$t]} == *" heavy "* ]] && [ "$HEAVY" != 1 ]; then
        echo "  $t: heavy (4 GiB file, 1 GiB of RAM per rank, ~100 s on ufs and ~150 s on hcomp here): runs only with ROMIO_TEST_HEAVY=1"
    fi
done
echo

# ---- build (one compiler at a time) ------------------------------------------
BUILT=""
for t in $NAMES; do
    selected "$t" || continue
    [[ ${FLAGS[$t]} == *" heavy "* ]] && [ "$HEAVY" != 1 ] && continue
    cp "$TESTSRC/$t.c" "$WORK/src/"
    log=$WORK/logs/build-$t.log
    if (cd "$WORK/src" && "$CC" -O2 -o "$WORK/bin/$t" "$t.c" -lm) > "$log" 2>&1; then
        BUILT="$BUILT $t"
    else
        FAILED=$((FAILED + 1))
        echo "FAIL $t (build)"
        show_log "$log"
    fi
done

# hcomp_rm FILE...: MPI_File_delete of each file (the cleanup between cases)
cat > "$WORK/src/hcomp_rm.c" <<'EOF'
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
if ! (cd "$WORK/src" && "$CC" -O2 -o "$WORK/bin/hcomp_rm" hcomp_rm.c) > "$WORK/logs/build-hcomp_rm.log" 2>&1; then
    echo "$0: cannot build the cleanup helper:" >&2
    cat "$WORK/logs/build-hcomp_rm.log" >&2
    exit 2
fi

# ---- running ---------------------------------------------------------------
# run_case NAME BACKEND: runs one program on one backend; sets RESULT (0 = pass)
# and REASON; the output is in $WORK/logs/NAME.BACKEND.log
run_case() {
    local t=$1 be=$2
    local dir=$WORK/$be/$t
    local log=$WORK/logs/$t.$be.log
    local file="$be:$dir/$t"
    local np=${NP[$t]} rc=0 a
    local -a argv=() pre=()
    if [[ ${FLAGS[$t]} == *" force "* ]]; then
        pre=(env "ROMIO_FSTYPE_FORCE=$be:")
        [ "$be" = hcomp ] && pre+=("$PREFIX/bin/hcomp" run)
    fi
    for a in ${ARGS[$t]}; do
        [ "$a" = @F ] && a=$file
        argv+=("$a")
    done
    rm -rf "$dir"
    mkdir -p "$dir"
    [ "$be" = hcomp ] && [ -n "$RAM" ] && { find "$RAM" -mindepth 1 -delete 2>/dev/null || true; }
    {
        echo "\$ (cd $dir && ${pre[*]} mpiexec -n $np $t ${argv[*]})"
        # shellcheck disable=SC2086  # RUN_ENV is a list of words
        (cd "$dir" && env ${HCOMP_TEST_RUN_ENV:-} timeout -k 10 "$TIMEOUT" "${pre[@]}" "$MPIEXEC" \
            -n "$np" "$WORK/bin/$t" "${argv[@]}") 2>&1 || rc=$?
    } > "$log" 2>&1 < /dev/null
    RESULT=0
    REASON=""
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        RESULT=1; REASON="timed out after ${TIMEOUT}s"
    elif [ $rc -ne 0 ]; then
        RESULT=1; REASON="exit status $rc"
    fi
    local want=1 got
    [[ ${FLAGS[$t]} == *" all "* ]] && want=$np
    local line rest=${OK[$t]}
    while [ -n "$rest" ]; do
        line=${rest%% && *}
        [ "$line" = "$rest" ] && rest="" || rest=${rest#* && }
        got=$(grep -Ec "^[[:space:]]*${line}[[:space:]]*\$" "$log" || true)
        if [ "$got" -lt "$want" ]; then
            RESULT=1
            if [ "$want" -gt 1 ]; then
                REASON="${REASON:+$REASON; }success line \"$line\" printed $got times, not by all $want ranks"
            else
                REASON="${REASON:+$REASON; }no success line \"$line\""
            fi
        fi
    done
    if tail -n +2 "$log" | grep -Eiq "$ERROR_RE"; then
        RESULT=1; REASON="${REASON:+$REASON; }reports errors"
    fi
    # what the run left: regular files (names) in its directory
    local f bad="" notmap=""
    LEFT=$(cd "$dir" && find . -mindepth 1 -maxdepth 1 -type f -printf '%P\n' | sort | tr '\n' ' ')
    if [ "$be" = hcomp ]; then
        for f in $LEFT; do
            [ "$(head -c 8 "$dir/$f")" = HCOMPMAP ] || notmap="$notmap $f"
        done
        if [ -n "$notmap" ]; then
            RESULT=1; REASON="${REASON:+$REASON; }not hcomp mapping files:$notmap"
        fi
        # a run that deleted all its files must not leave their data behind
        if [ -z "$LEFT" ]; then
            bad=$( (find "$dir" -mindepth 1; if [ -n "$RAM" ]; then find "$RAM" -mindepth 1; fi) |
                head -n 5 | tr '\n' ' ' || true)
            if [ -n "$bad" ]; then
                RESULT=1; REASON="${REASON:+$REASON; }its files were deleted but left data behind: $bad"
            fi
        fi
    fi
    {
        echo "--- files left in $dir:"
        (cd "$dir" && find . -mindepth 1 -maxdepth 1 -printf '%y %s %p\n' | sort)
        if [ "$be" = hcomp ] && [ -n "$RAM" ]; then
            echo "--- in the RAM tier $RAM:"
            (cd "$RAM" && find . -mindepth 1 -printf '%y %s %p\n' | sort)
        fi
    } >> "$log" 2>&1
    # the next case starts from nothing: the hcomp files are deleted with
    # MPI_File_delete (so their data in the tiers goes too), which must work
    # and must leave nothing behind
    if [ "$be" = hcomp ] && [ -n "$LEFT" ]; then
        local -a doomed=()
        for f in $LEFT; do
            [ "$(head -c 8 "$dir/$f")" = HCOMPMAP ] && doomed+=("hcomp:$dir/$f")
        done
        if [ ${#doomed[@]} -gt 0 ]; then
            echo "--- cleanup: MPI_File_delete ${doomed[*]}" >> "$log"
            if ! timeout -k 10 60 "$MPIEXEC" -n 1 "$WORK/bin/hcomp_rm" "${doomed[@]}" >> "$log" 2>&1 < /dev/null; then
                RESULT=1; REASON="${REASON:+$REASON; }MPI_File_delete of the files it left failed"
            elif [ -z "$notmap" ]; then
                bad=$( (find "$dir" -mindepth 1; if [ -n "$RAM" ]; then find "$RAM" -mindepth 1; fi) |
                    head -n 5 | tr '\n' ' ' || true)
                if [ -n "$bad" ]; then
                    RESULT=1; REASON="${REASON:+$REASON; }MPI_File_delete of the files it left left data behind: $bad"
                fi
            fi
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
    if [[ ${FLAGS[$t]} =~ \ disk=([0-9]+)\  ]]; then
        need=${BASH_REMATCH[1]}
        free=$(df -Pk "$WORK" | awk 'NR == 2 { print int($4 / 1048576) }')
        if [ "${free:-0}" -lt "$need" ]; then
            SKIPPED=$((SKIPPED + 1))
            echo "SKIP $t (np=$np): needs $need GiB free in $WORK, has ${free:-?} GiB"
            continue
        fi
    fi
    ufs_result=""
    if [[ " $BACKENDS " == *" ufs "* ]]; then
        run_case "$t" ufs
        ufs_result=$RESULT
        ufs_reason=$REASON
        ufs_left=$LEFT
    fi
    run_case "$t" hcomp
    # the same file names must be left as on ufs (deletions, shared file
    # pointer files, one file per rank, ...)
    if [ "$ufs_result" = 0 ] && [ "$LEFT" != "$ufs_left" ]; then
        RESULT=1
        REASON="${REASON:+$REASON; }left files [ ${LEFT}] where ufs left [ ${ufs_left}]"
    fi
    if [ "$RESULT" -eq 0 ]; then
        PASSED=$((PASSED + 1))
        echo "PASS $t [hcomp] (np=$np)"
    else
        FAILED=$((FAILED + 1))
        note=""
        [ "$ufs_result" = 1 ] && note=" (also fails on ufs: not hcomp's)"
        echo "FAIL $t [hcomp] (np=$np): $REASON$note"
        show_log "$WORK/logs/$t.hcomp.log"
    fi
    if [ -n "$ufs_result" ]; then
        if [ "$ufs_result" -eq 0 ]; then
            UFS_PASSED=$((UFS_PASSED + 1))
            echo "PASS $t [ufs] (np=$np)"
        else
            UFS_FAILED=$((UFS_FAILED + 1))
            echo "FAIL $t [ufs] (np=$np): $ufs_reason (control run: a problem of the test or of ROMIO, not hcomp's)"
            show_log "$WORK/logs/$t.ufs.log"
        fi
    fi
done

echo
if [[ " $BACKENDS " == *" ufs "* ]]; then
    echo "ufs control: $UFS_PASSED passed, $UFS_FAILED failed"
fi
echo "hcomp:"
if [ "$SKIPPED" -gt 0 ]; then
    echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
else
    echo "$PASSED passed, $FAILED failed"
fi
[ "$FAILED" -eq 0 ]
