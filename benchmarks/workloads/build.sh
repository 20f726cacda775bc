#!/usr/bin/env bash
# Build the benchmark workloads (benchmarks/workloads/README.md) into OUTDIR.
#
# usage: benchmarks/workloads/build.sh PREFIX OUTDIR
#
# The MPI programs are built with PREFIX/bin/mpicc (our MPICH with the hcomp driver);
# wl_h5vpic with Debian's h5pcc.mpich (-shlib: Debian's libhdf5_mpich and libmpich.so.12),
# to run on PREFIX/lib through LD_LIBRARY_PATH like tests/abi/run.sh. Without h5pcc.mpich,
# wl_h5vpic is skipped with a message (exit status 3 if everything else built).
# Prints one line per program: "built NAME" or "FAILED NAME" (the compiler's output after).
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 PREFIX OUTDIR" >&2
    exit 2
fi
PREFIX=$(cd "$1" && pwd) || exit 2
# libhcomp's and c-blosc2's prefix, when it is not MPICH's (a worktree's own libhcomp run
# with another tree's MPICH): HCOMP_LIBPREFIX
LIBPREFIX=$(cd "${HCOMP_LIBPREFIX:-$PREFIX}" && pwd) || exit 2
OUT=$2
mkdir -p "$OUT" || exit 2
SRC=$(cd "$(dirname "$0")" && pwd)
CC=$PREFIX/bin/mpicc
CFLAGS="-std=c11 -O2 -Wall -Wextra ${WL_CFLAGS:-}"
rc=0

build() {   # NAME COMPILER extra-sources... -- libs...
    local name=$1 cc=$2
    shift 2
    local srcs=() libs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do srcs+=("$SRC/$1"); shift; done
    [ $# -gt 0 ] && shift
    libs=("$@")
    if $cc $CFLAGS -o "$OUT/$name" "$SRC/$name.c" "${srcs[@]}" "${libs[@]}" > "$OUT/$name.build.log" 2>&1; then
        echo "built $name"
    else
        echo "FAILED $name"
        sed 's/^/    /' "$OUT/$name.build.log"
        rc=1
    fi
}

build wl_vpic "$CC" wl_common.c vpic_gen.c -- -lm
build wl_bdcats "$CC" wl_common.c vpic_gen.c -- -lm
build wl_grayscott "$CC" wl_common.c -- -lm
build wl_indep "$CC" wl_common.c -- -lm
build wl_random "$CC" wl_common.c -- -lm
build wl_pieces "$CC" wl_common.c -- -lm
build wl_seqread "$CC" wl_common.c -- -lm
build wl_ckptloop "$CC" wl_common.c -- -lm
build wl_lz4raw "$CC" wl_common.c vpic_gen.c -- -llz4 -lm
# libhcomp's file API directly (no MPI calls; mpicc for vpic_gen's wl_common.h)
build wl_frontier "$CC -I$LIBPREFIX/include" wl_common.c vpic_gen.c -- -L"$LIBPREFIX/lib" \
    -Wl,-rpath,"$LIBPREFIX/lib" -lhcomp -lm
# the end-to-end peer: c-blosc2 (scripts/setup builds it into the prefix) and MPI-IO
build wl_e2e "$CC -I$LIBPREFIX/include" -- -L"$LIBPREFIX/lib" -Wl,-rpath,"$LIBPREFIX/lib" -lblosc2
if command -v h5pcc.mpich > /dev/null 2>&1; then
    # Debian's toolchain: keep our libraries off its link (it must link Debian's MPICH)
    LD_LIBRARY_PATH= build wl_h5vpic "env -u LD_LIBRARY_PATH h5pcc.mpich -shlib" wl_common.c vpic_gen.c -- -lm
else
    echo "skipped wl_h5vpic: h5pcc.mpich not found (apt-get install libhdf5-mpich-dev)"
    [ $rc -eq 0 ] && rc=3
fi
exit $rc
