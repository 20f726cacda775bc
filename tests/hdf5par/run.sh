#!/usr/bin/env bash
# HDF5's own parallel tests (testpar/ of Debian's hdf5 source package: the HDF5 that
# Debian ships, 1.10.8 in bookworm), built with PREFIX's mpicc and run on hcomp: files
# under ROMIO_FSTYPE_FORCE=hcomp: (their file names cannot be given a prefix;
# HDF5_PARAPREFIX puts them in a fresh directory), and on ufs: as the control of a case
# that fails:
#
#   t_mpi np=2,4     HDF5's checks of the MPI-IO it runs on: a write by one process
#                    read by the others after a barrier alone (what HDF5's metadata
#                    writes rely on), offsets past 2 and 4 GiB and MPI_File_get_size,
#                    overlapping independent writes, derived datatypes, and (4 ranks)
#                    collective I/O with some processes writing nothing
#   testphdf5 np=2,3 the parallel HDF5 suite: independent and collective dataset I/O,
#                    extendible and chunked datasets, a file created serially and then
#                    extended in parallel, compact, null and zero-sized datasets,
#                    groups, attributes, fill values, collective metadata I/O, and (3
#                    ranks) collective chunk I/O and object header flushes
#   t_pflush np=2    t_pflush1 writes, calls H5Fflush (MPI_File_sync) on one file and not
#                    on another and exits without closing either; t_pflush2, a new
#                    job, must find the flushed file whole
#
# Not run: t_filters_parallel (its rank 0 reopens a file written through MPI-IO with
# HDF5's serial POSIX driver, which reads an hcomp file's mapping file, not the HDF5
# file it stands for: serial programs read hcomp files through `hcomp run`, docs/TOOLS.md),
# t_cache (a server process that polls: over 10 minutes on 2 oversubscribed cores),
# t_cache_image (starts a helper program by a relative path), t_bigio (2 GiB buffers).
#
# usage: tests/hdf5par/run.sh PREFIX
# The build (about 5 minutes on 2 cores; the source from `apt-get source hdf5`) is kept
# in $HCOMP_CACHE (default ~/.cache/hcomp), keyed by PREFIX and this script. Each run
# prints PASS or FAIL with its log's tail; the last line is "N passed, N failed".
# Environment: HCOMP_H5PAR_TIMEOUT (seconds per run, default 600), HCOMP_TEST_KEEP=1 (or HCOMP_H5PAR_KEEP=1)
# keeps the work directory.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
PREFIX=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no such directory: $1" >&2; exit 2; }
MPICC=$PREFIX/bin/mpicc MPIEXEC=$PREFIX/bin/mpiexec
for x in "$MPICC" "$MPIEXEC"; do
    [ -x "$x" ] || { echo "$0: $x not found or not executable" >&2; exit 2; }
done
CACHE=${HCOMP_CACHE:-$HOME/.cache/hcomp}
TIMEOUT=${HCOMP_H5PAR_TIMEOUT:-600}
PROGS="t_mpi testphdf5 t_pflush1 t_pflush2"

# ---- source and build --------------------------------------------------------------
mkdir -p "$CACHE/src"
src=$(ls -d "$CACHE"/src/hdf5-1.* 2>/dev/null | head -n 1 || true)
if [ -z "$src" ] || [ ! -f "$src/testpar/testphdf5.c" ]; then
    echo "fetching HDF5's source (apt-get source hdf5) ..."
    (cd "$CACHE/src" && apt-get source hdf5 > "$CACHE/src/hdf5-fetch.log" 2>&1) ||
        { tail -n 20 "$CACHE/src/hdf5-fetch.log"; echo "$0: apt-get source hdf5 failed" >&2; exit 2; }
    src=$(ls -d "$CACHE"/src/hdf5-1.* | head -n 1)
fi
key=$( { echo "$src $PREFIX $PROGS"; sed -n '/^# ---- source and build/,/^# ---- runs/p' "$0"; } |
       sha256sum | cut -c1-16)
build=$CACHE/hdf5-testpar-$key
if [ ! -f "$build/.built" ]; then
    echo "building HDF5 $(basename "$src") and its parallel tests with $MPICC (about 5 minutes) ..."
    rm -rf "$build" && mkdir -p "$build"
    if ! (cd "$build" && CC=$MPICC "$src/configure" --enable-parallel --enable-shared \
              --disable-fortran --disable-cxx --disable-hl --disable-tools \
              --enable-build-mode=production > configure.log 2>&1 &&
          make -j"$(nproc)" -C src > make.log 2>&1 &&
          make -j"$(nproc)" -C test libh5test.la >> make.log 2>&1 &&
          make -j"$(nproc)" -C testpar $PROGS >> make.log 2>&1); then
        tail -n 30 "$build"/configure.log "$build"/make.log 2>/dev/null
        echo "$0: building HDF5's parallel tests failed (logs in $build)" >&2
        exit 2
    fi
    touch "$build/.built"
fi
echo "HDF5 tests: $build/testpar (source $src)"

# ---- runs --------------------------------------------------------------------------
. "$(dirname "$0")/../suite-lib.sh"
suite_workspace h5par "$(suite_keep HCOMP_H5PAR_KEEP)"
# run BACKEND NP PROGRAM: its log's path on stdout, its exit status as the status
run() {
    local be=$1 np=$2 prog=$3 dir=$WORK/$1-np$2 env=()
    mkdir -p "$dir"
    env=(HDF5_PARAPREFIX="$dir" HCOMP_CONFIG="$WORK/tiers.json")
    [ "$be" = hcomp ] && env+=(ROMIO_FSTYPE_FORCE=hcomp:)
    local log=$WORK/$be-np$np-$prog.log
    echo "$log"
    (cd "$dir" && env "${env[@]}" timeout "$TIMEOUT" "$MPIEXEC" -n "$np" "$build/testpar/$prog" \
        > "$log" 2>&1)
}
# an hcomp run must have made hcomp files: their segment directories (.NAME.ID.hcd) stay
# beside the names, since HDF5 1.10's tests remove their files with remove(3)
made_hcomp() {
    compgen -G "$WORK/hcomp-np$1/.*.hcd" > /dev/null
}

# check CASE BACKEND: run the case, 0 if it passed; its log's path in $log
check() {
    local rc
    case $1 in
    t_mpi-*)
        log=$(run $2 ${1#t_mpi-} t_mpi); rc=$?
        [ $rc = 0 ] && grep -q "MPI tests finished with no errors" "$log" &&
            { [ $2 = ufs ] || made_hcomp ${1#t_mpi-}; } ;;
    testphdf5-*)
        log=$(run $2 ${1#testphdf5-} testphdf5); rc=$?
        [ $rc = 0 ] && grep -q "PHDF5 tests finished with no errors" "$log" ;;
    pflush)
        # t_pflush1 ends the job without closing its files (a non-zero exit is its design)
        local log1
        log1=$(run $2 2 t_pflush1)
        log=$(run $2 2 t_pflush2); rc=$?
        cat "$log1" >> "$log"
        [ $rc = 0 ] && [ "$(grep -c PASSED "$log")" -ge 3 ] && ! grep -q FAILED "$log" ;;
    esac
}
# each case on hcomp:, and on ufs: only when it failed there (the control then tells an
# hcomp failure from one of HDF5's or of this machine's: its result is printed, not
# counted); HCOMP_H5PAR_CONTROL=1 runs the control always
for c in t_mpi-2 t_mpi-4 testphdf5-2 testphdf5-3 pflush; do
    name=$c
    case $c in
    t_mpi-*) name="t_mpi np=${c#t_mpi-}" ;;
    testphdf5-*) name="testphdf5 np=${c#testphdf5-}" ;;
    pflush) name="t_pflush1 then t_pflush2 np=2" ;;
    esac
    check $c hcomp; ok=$?
    suite_report "$name [hcomp]" $ok "$log"
    if [ $ok != 0 ] || [ "${HCOMP_H5PAR_CONTROL:-0}" = 1 ]; then
        check $c ufs && echo "    control: $name passes on ufs:" ||
            echo "    control: $name fails on ufs: too ($log)"
    fi
done
suite_summary
