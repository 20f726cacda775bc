#!/usr/bin/env bash
# PnetCDF's own tests (Debian's pnetcdf source package, 1.12.3 in bookworm), built with
# PREFIX's mpicc and run on hcomp: files: their output directory is hcomp:DIR (PnetCDF
# passes the prefix on to MPI_File_open), and on ufs: as the control.
#
#   make check   every test program on 1 process: the classic, 64-bit-offset and CDF-5
#                formats, puts and gets of every kind (var, vara, vars, varm, varn, vard
#                with derived datatypes), nonblocking and buffered requests, record
#                variables, fill values, redefinitions that move data, large variables,
#                then ncvalidator and ncmpidiff on the files
#   make ptest   those of test/testcases and test/nonblocking whose processes share a
#                file, on 4 processes: collective and independent I/O of interleaved
#                subarrays (flexible, varn, vard with derived file types), mixed
#                collective and independent modes, an error raised on some processes,
#                redefinitions that move the data, nonblocking requests
#                (PNC_PTEST_ALL=1: all of test/)
#   4 of those on 4 processes with another LD_PRELOAD interposer (tests/posix/interposer.c,
#                as Darshan's runtime) ahead of `hcomp run`'s adapter
#
# Every run of a writer re-creates its files with ncmpi_create, whose default
# (NC_CLOBBER) has rank 0 truncate(2) an existing file before MPI_File_open: so the
# second writer of each file meets an hcomp file emptied behind hcomp's back (docs/USING.md,
# "Plain files pass through": an empty file opened to be written becomes an hcomp file).
# After the runs every file PnetCDF made must be an hcomp file, none passed through plain.
#
# ncmpi_open reads a file's first 8 bytes with POSIX read(2) to tell its format before it
# calls MPI_File_open (ncmpi_inq_file_format), and ncvalidator reads the whole file so;
# on an hcomp file those are the mapping file's bytes. So here, as for any program that
# reads hcomp files with POSIX calls, every program runs under `hcomp run` (the POSIX read
# adapter, docs/POSIX.md; its MPI-IO goes through hcomp as without it). docs/USING.md, "PnetCDF".
#
# usage: tests/pnetcdf/run.sh PREFIX
# The build (about 2 minutes on 2 cores; the source from `apt-get source pnetcdf`) is kept
# in $HCOMP_CACHE (default ~/.cache/hcomp), keyed by PREFIX and this script. The last line
# is "N passed, N failed". Environment: HCOMP_PNC_TIMEOUT (seconds per make, default 1200),
# HCOMP_TEST_KEEP=1 (or HCOMP_PNC_KEEP=1) keeps the files.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
PREFIX=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no such directory: $1" >&2; exit 2; }
REPO=$(cd "$(dirname "$0")/../.." && pwd)
MPICC=$PREFIX/bin/mpicc MPIEXEC=$PREFIX/bin/mpiexec HCOMP=$PREFIX/bin/hcomp
for x in "$MPICC" "$MPIEXEC" "$HCOMP"; do
    [ -x "$x" ] || { echo "$0: $x not found or not executable" >&2; exit 2; }
done
CACHE=${HCOMP_CACHE:-$HOME/.cache/hcomp}
TIMEOUT=${HCOMP_PNC_TIMEOUT:-1200}

# ---- source and build --------------------------------------------------------------
mkdir -p "$CACHE/src"
src=$(ls -d "$CACHE"/src/pnetcdf-1.* 2>/dev/null | head -n 1 || true)
if [ -z "$src" ] || [ ! -f "$src/configure.ac" ]; then
    echo "fetching PnetCDF's source (apt-get source pnetcdf) ..."
    (cd "$CACHE/src" && apt-get source pnetcdf > "$CACHE/src/pnetcdf-fetch.log" 2>&1) ||
        { tail -n 20 "$CACHE/src/pnetcdf-fetch.log"; echo "$0: apt-get source pnetcdf failed" >&2; exit 2; }
    src=$(ls -d "$CACHE"/src/pnetcdf-1.* | head -n 1)
fi
# Keyed by MPICH's headers' contents, not their times: scripts/setup installs them anew
# into a fresh prefix, and with automake's dependency tracking `make check` then rebuilt
# all of PnetCDF serially (about 100 s of every CI run). So dependency tracking is off,
# and a change of the headers makes a new build instead.
key=$( { echo "$src $PREFIX"; cat "$PREFIX"/include/mpi*.h;
         sed -n '/^# ---- source and build/,/^# ---- runs/p' "$0"; } | sha256sum | cut -c1-16)
build=$CACHE/pnetcdf-$key
if [ ! -f "$build/.built" ]; then
    echo "building PnetCDF $(basename "$src") and its tests with $MPICC (about 2 minutes) ..."
    rm -rf "$build" && mkdir -p "$build"
    # Debian's orig tarball has no configure script: make it (autoconf, automake, libtool)
    if ! { [ -x "$src/configure" ] || (cd "$src" && autoreconf -fi > "$build/autoreconf.log" 2>&1); } ||
       ! (cd "$build" && "$src/configure" MPICC="$MPICC" --disable-fortran --disable-cxx \
              --disable-shared --disable-dependency-tracking > configure.log 2>&1 &&
          make -j"$(nproc)" > make.log 2>&1 && make -j"$(nproc)" tests >> make.log 2>&1); then
        tail -n 30 "$build"/autoreconf.log "$build"/configure.log "$build"/make.log 2>/dev/null
        echo "$0: building PnetCDF and its tests failed (logs in $build)" >&2
        exit 2
    fi
    touch "$build/.built"
fi
echo "PnetCDF tests: $build (source $src)"

# ---- runs --------------------------------------------------------------------------
. "$(dirname "$0")/../suite-lib.sh"
suite_workspace pnc "$(suite_keep HCOMP_PNC_KEEP)"
SHOW='fail|error at|abort|timed out'    # the lines a failure's report shows
# make_tests BACKEND TARGET [DIR [VAR=VALUE...]]: make TARGET in DIR of the build (its top
# if none), the output in $WORK/BACKEND-out; the log's path on stdout (appended to)
make_tests() {
    local be=$1 target=$2 dir=${3:-.}; shift 2; [ $# -gt 0 ] && shift
    local out=$WORK/$be-out log=$WORK/$be-$target.log seq="" mpirun="$MPIEXEC -n NP"
    mkdir -p "$out"
    local outdir=$out
    if [ "$be" = hcomp ]; then
        outdir=hcomp:$out seq="$HCOMP run" mpirun="$MPIEXEC -n NP $HCOMP run"
    fi
    echo "$log"
    HCOMP_CONFIG="$WORK/tiers.json" timeout "$TIMEOUT" make -k -C "$build/$dir" "$target" \
        TESTOUTDIR="$outdir" TESTSEQRUN="$seq" TESTMPIRUN="$mpirun" "$@" >> "$log" 2>&1
}
# every PnetCDF file of an hcomp run is an hcomp file (none passed through as plain)
hcomp_files_only() { # dir, log
    local f n=0 bad=0
    for f in "$1"/*.nc*; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        if [ "$(head -c 8 "$f" | tr -d '\0')" != HCOMPMAP ]; then
            echo "not an hcomp file: $f (begins $(head -c 4 "$f" | od -An -c | tr -s ' '))" >> "$2"
            bad=1
        fi
    done
    [ $n -gt 0 ] || { echo "no PnetCDF file in $1" >> "$2"; bad=1; }
    echo "$n PnetCDF files checked in $1: $([ $bad = 0 ] && echo all hcomp files)" >> "$2"
    return $bad
}
# what make check and make ptest print: automake's "# FAIL:" counts and PnetCDF's own
# "fail"/"Error at line" lines; make's own failure is caught by its exit status
clean_log() {
    ! grep -qE '^# (FAIL|ERROR): +[1-9]|^FAIL:|------ fail|Error at line' "$1"
}

for be in hcomp ufs; do
    log=$(make_tests $be check); rc=$?
    ok=1
    [ $rc = 0 ] && clean_log "$log" && { [ $be = ufs ] || hcomp_files_only "$WORK/$be-out" "$log"; } &&
        ok=0
    suite_report "make check (1 process) [$be]" $ok "$log" "$SHOW"
done
# the same programs on 4 processes: those whose processes write and read interleaved
# parts of one file (all of test/ on 4 processes takes 4 minutes here, the examples and
# benchmarks 3 more; PNC_PTEST_ALL=1 runs all of test/)
PAR_CASES="flexible flexible2 flexible_varm varn_int varn_contig ivarn test_vard test_vard_multiple
           test_vard_rec mix_collectives collective_error record one_record add_var alignment_test
           put_all_kinds iput_all_kinds"
PAR_NONBLOCKING="interleaved column_wise req_all wait_after_indep i_varn_int64 bput_varn mcoll_perf"
if [ "${PNC_PTEST_ALL:-0}" = 1 ]; then
    log=$(make_tests hcomp ptest test); rc=$?
else
    log=$(make_tests hcomp ptest test/testcases "check_PROGRAMS=$(echo $PAR_CASES)"); rc=$?
    make_tests hcomp ptest test/nonblocking "check_PROGRAMS=$(echo $PAR_NONBLOCKING)" > /dev/null ||
        rc=1
fi
ok=1
[ $rc = 0 ] && clean_log "$log" && hcomp_files_only "$WORK/hcomp-out" "$log" && ok=0
suite_report "make ptest, collective and interleaved I/O (4 processes) [hcomp]" $ok "$log" "$SHOW"

# Darshan's runtime (or a sanitizer's) preloaded ahead of the adapter: libhcomp's own calls
# reach the adapter from that interposer (tests/posix/interposer.c stands for it). Before
# 2026-11-26 the driver's writable opens failed so (EROFS), and test_vard's last close
# hung: the reclaim, holding the openers' lock, had its lstat taken for the program's.
log=$WORK/interposer.log ok=0
if gcc -shared -fPIC -O2 -o "$WORK/libinterposer.so" "$REPO/tests/posix/interposer.c" -ldl >> "$log" 2>&1; then
    mkdir -p "$WORK/interposer-out"
    for t in test_vard flexible varn_int mix_collectives; do
        echo "== $t" >> "$log"
        HCOMP_CONFIG="$WORK/tiers.json" HCOMP_TEST_INTERPOSER_SAY=1 timeout 300 "$MPIEXEC" -n 4 \
            -genv LD_PRELOAD "$WORK/libinterposer.so" "$HCOMP" run "$build/test/testcases/$t" \
            "hcomp:$WORK/interposer-out/$t.nc" >> "$log" 2>&1 || { echo "$t: exit $?" >> "$log"; ok=1; }
    done
    [ "$(grep -c -- '------ pass' "$log")" = 4 ] && grep -qE '^interposer: [1-9]' "$log" || ok=1
    clean_log "$log" && hcomp_files_only "$WORK/interposer-out" "$log" || ok=1
else
    ok=1
fi
suite_report "4 programs on 4 processes under hcomp run behind another interposer [hcomp]" $ok "$log" "$SHOW|exit"
suite_summary
