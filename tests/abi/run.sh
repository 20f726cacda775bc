#!/usr/bin/env bash
# ABI check: a program built against Debian's own MPICH (through Debian's
# parallel HDF5, package libhdf5-mpich-dev) uses hcomp when PREFIX/lib comes
# first on LD_LIBRARY_PATH, without being rebuilt.
#
# usage: tests/abi/run.sh PREFIX
#
# PREFIX is an MPICH installation with the hcomp driver: PREFIX/lib holds
# libmpi.so.12, libhcomp.so and the link libmpich.so.12 -> libmpi.so.12;
# PREFIX/bin/mpiexec is its launcher.
#
# Steps, each reported as PASS or FAIL:
#   build         tests/abi/hdf5_hcomp.c compiled with Debian's h5pcc.mpich
#                 (-shlib: Debian's libhdf5_mpich.so and libmpich.so.12)
#   ldd[debian]   without PREFIX/lib, libmpich.so.12 resolves to Debian's copy
#                 (a file of a Debian package, per dpkg -S)
#   ldd[hcomp]    with LD_LIBRARY_PATH=PREFIX/lib, libmpich.so.12 and
#                 libhcomp.so.0 resolve into PREFIX/lib, libhdf5 stays Debian's
#   run np=2/4    PREFIX/bin/mpiexec -n N hdf5_hcomp hcomp:<tmp>/npN/t.h5 with
#                 that LD_LIBRARY_PATH: must exit 0, print "hdf5_hcomp: OK",
#                 have loaded MPI from PREFIX/lib, and leave an hcomp mapping
#                 file (starts with "HCOMPMAP")
#   life np=3/4   tests/abi/hdf5_life.c (built the same way): a file's life after
#                 its first write (create; reopen read-write to extend, rewrite,
#                 flush and unlink, three times; reopen read-only and check every
#                 value, whole and in strided parts; every rank alone at once),
#                 run on hcomp:<tmp>/life.h5 and on ufs:<tmp>/life-ufs.h5; both
#                 must print "hdf5_life: OK", and the hcomp file exported with
#                 `hcomp export` must have the ufs: file's size and h5dump output;
#                 np=4 with metadata read and written collectively and alignment
#   control       the same program without PREFIX/lib (Debian's MPICH, which
#                 has no hcomp driver) must refuse the hcomp: file: exit
#                 non-zero with ROMIO's "unsupported file system" error
#   plain np=2/4  tests/abi/hdf5_plain.c (built the same way): rank 0 creates a
#                 plain HDF5 file serially (POSIX driver), then all ranks open it
#                 in parallel read-write and read-only with the MPI-IO driver,
#                 np=2 as hcomp:<file> and np=4 under ROMIO_FSTYPE_FORCE=hcomp:
#                 with the bare name; must print "hdf5_plain: OK" (every value
#                 checked), have loaded MPI from PREFIX/lib, and leave a plain
#                 HDF5 file (HDF5's signature, not "HCOMPMAP")
# The last line is "N passed, N failed"; the exit status is 1 if any failed
# (2 on bad usage or if Debian's toolchain cannot be found or installed).
#
# If libhdf5-mpich-dev is missing and this runs as root, it is installed with
# apt-get (set HCOMP_ABI_NO_INSTALL=1 to fail instead).
# The hcomp runs use a tier configuration that mirrors the embedded default
# (private 64 MiB RAM directory, then the file's own directory) with a RAM
# directory of this run's own, unless HCOMP_CONFIG is already set.
# Environment: HCOMP_ABI_TIMEOUT (seconds per run, default 300),
# HCOMP_TEST_KEEP=1 or HCOMP_ABI_KEEP=1 (keep the work directory).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
PREFIX=$(cd "$1" 2>/dev/null && pwd) || { echo "$0: no such directory: $1" >&2; exit 2; }
PLIB=$PREFIX/lib
MPIEXEC=$PREFIX/bin/mpiexec
[ -x "$MPIEXEC" ] || { echo "$0: $MPIEXEC not found or not executable" >&2; exit 2; }
for f in libmpich.so.12 libhcomp.so.0; do
    [ -e "$PLIB/$f" ] || { echo "$0: $PLIB/$f not found" >&2; exit 2; }
done
SRC=$(cd "$(dirname "$0")" && pwd)/hdf5_hcomp.c
TIMEOUT=${HCOMP_ABI_TIMEOUT:-300}

# ---- Debian's HDF5/MPICH toolchain -------------------------------------------
find_h5pcc() {
    if command -v h5pcc.mpich > /dev/null 2>&1; then
        command -v h5pcc.mpich
    elif command -v h5pcc > /dev/null 2>&1 && h5pcc -show 2>/dev/null | grep -q mpich; then
        command -v h5pcc
    fi
    return 0
}
H5PCC=$(find_h5pcc)
if [ -z "$H5PCC" ] || ! dpkg -s libhdf5-mpich-dev > /dev/null 2>&1; then
    if [ "${HCOMP_ABI_NO_INSTALL:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "installing libhdf5-mpich-dev (Debian's parallel HDF5 for MPICH) ..."
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q libhdf5-mpich-dev > /dev/null ||
            { apt-get update -q > /dev/null && apt-get install -y -q libhdf5-mpich-dev > /dev/null; } ||
            { echo "$0: could not install libhdf5-mpich-dev" >&2; exit 2; }
        H5PCC=$(find_h5pcc)
    fi
fi
[ -n "$H5PCC" ] || { echo "$0: h5pcc.mpich not found: apt-get install libhdf5-mpich-dev" >&2; exit 2; }

. "$(dirname "$0")/../suite-lib.sh"
suite_workspace abi "$(suite_keep HCOMP_ABI_KEEP)"
if [ -z "${HCOMP_CONFIG:-}" ]; then
    suite_tiers 64MiB speeds
    export HCOMP_CONFIG=$WORK/tiers.json
fi

# the library path of the hcomp runs: PREFIX/lib first
HCOMP_LDPATH=$PLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Debian's: no PREFIX/lib anywhere on it
DEBIAN_LDPATH=$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' |
    grep -vxF -e "$PLIB" -e "$PLIB/" -e "$(readlink -f "$PLIB")" | paste -sd: || true)

echo "compiler:   $H5PCC ($(dpkg-query -W -f='${Package} ${Version}' libhdf5-mpich-dev 2>/dev/null))"
echo "            $("$H5PCC" -shlib -show 2>/dev/null | head -c 200)"
echo "hcomp MPI:  $PLIB (LD_LIBRARY_PATH=$HCOMP_LDPATH)"
echo "tiers:      HCOMP_CONFIG=$HCOMP_CONFIG"
echo "work:       $WORK"
echo

pass() { suite_pass "$1"; }
fail() { suite_fail "$1" "${2:-}"; }
# resolved NAME LDPATH: the file the dynamic loader picks for NAME
resolved() {
    LD_LIBRARY_PATH=$2 ldd "$WORK/hdf5_hcomp" 2>/dev/null |
        awk -v n="$1" '$1 == n && $2 == "=>" { print $3; exit }'
}

# ---- build -------------------------------------------------------------------
BIN=$WORK/hdf5_hcomp
if (cd "$WORK" && env -u LD_LIBRARY_PATH "$H5PCC" -shlib -O2 -Wall -Wextra -o "$BIN" "$SRC" -lm) \
        > "$WORK/build.log" 2>&1; then
    pass "build (h5pcc.mpich -shlib)"
else
    fail "build (h5pcc.mpich -shlib)" "$WORK/build.log"
    suite_summary
    exit 1
fi
PBIN=$WORK/hdf5_plain
if (cd "$WORK" && env -u LD_LIBRARY_PATH "$H5PCC" -shlib -O2 -Wall -Wextra -o "$PBIN" \
        "$(dirname "$SRC")/hdf5_plain.c" -lm) > "$WORK/build-plain.log" 2>&1; then
    pass "build hdf5_plain (h5pcc.mpich -shlib)"
else
    fail "build hdf5_plain (h5pcc.mpich -shlib)" "$WORK/build-plain.log"
    PBIN=""
fi
LBIN=$WORK/hdf5_life
if (cd "$WORK" && env -u LD_LIBRARY_PATH "$H5PCC" -shlib -O2 -Wall -Wextra -o "$LBIN" \
        "$(dirname "$SRC")/hdf5_life.c" -lm) > "$WORK/build-life.log" 2>&1; then
    pass "build hdf5_life (h5pcc.mpich -shlib)"
else
    fail "build hdf5_life (h5pcc.mpich -shlib)" "$WORK/build-life.log"
    LBIN=""
fi
{ echo "NEEDED by hdf5_hcomp:"; objdump -p "$BIN" | awk '/NEEDED|RPATH|RUNPATH/ { print "  " $0 }'; } > "$WORK/needed.txt"
if ! grep -q 'NEEDED.*libmpich\.so\.12' "$WORK/needed.txt"; then
    fail "build: hdf5_hcomp does not link libmpich.so.12 directly" "$WORK/needed.txt"
fi

# ---- ldd without PREFIX/lib: Debian's MPICH ------------------------------------
log=$WORK/ldd-debian.txt
LD_LIBRARY_PATH=$DEBIAN_LDPATH ldd "$BIN" > "$log" 2>&1 || true
lib=$(resolved libmpich.so.12 "$DEBIAN_LDPATH")
real=$(readlink -f "${lib:-/nonexistent}" 2>/dev/null || true)
owner=$(dpkg -S "$real" 2>/dev/null | cut -d: -f1 | head -n 1 || true)
if [ -n "$lib" ] && [ -n "$owner" ] && [[ $real != "$PREFIX"/* ]]; then
    pass "ldd[debian]: libmpich.so.12 => $lib ($real, package $owner)"
else
    fail "ldd[debian]: libmpich.so.12 => ${lib:-not found} (${real:-?}; expected a file of a Debian package)" "$log"
fi

# ---- ldd with PREFIX/lib first: hcomp's MPICH ----------------------------------
log=$WORK/ldd-hcomp.txt
LD_LIBRARY_PATH=$HCOMP_LDPATH ldd "$BIN" > "$log" 2>&1 || true
lib=$(resolved libmpich.so.12 "$HCOMP_LDPATH")
hc=$(resolved libhcomp.so.0 "$HCOMP_LDPATH")
h5=$(resolved libhdf5_mpich.so.103 "$HCOMP_LDPATH")
h5=${h5:-$(LD_LIBRARY_PATH=$HCOMP_LDPATH ldd "$BIN" | awk '$1 ~ /^libhdf5_mpich\.so/ { print $3; exit }')}
if [ "$(dirname "${lib:-x}")" = "$PLIB" ] && [ "$(dirname "${hc:-x}")" = "$PLIB" ] &&
        [ -n "$h5" ] && [[ $(readlink -f "$h5") != "$PREFIX"/* ]]; then
    pass "ldd[hcomp]: libmpich.so.12 => $lib (-> $(readlink "$lib" || echo "$lib")), libhcomp.so.0 => $hc, HDF5 stays $h5"
else
    fail "ldd[hcomp]: libmpich.so.12 => ${lib:-not found}, libhcomp.so.0 => ${hc:-not found}, HDF5 => ${h5:-not found} (expected the first two in $PLIB)" "$log"
fi

# ---- runs on hcomp: --------------------------------------------------------------
for np in 2 4; do
    dir=$WORK/np$np
    mkdir -p "$dir"
    log=$WORK/run-np$np.log
    rc=0
    {
        echo "\$ LD_LIBRARY_PATH=$HCOMP_LDPATH mpiexec -n $np hdf5_hcomp hcomp:$dir/t.h5"
        LD_LIBRARY_PATH=$HCOMP_LDPATH timeout -k 10 "$TIMEOUT" \
            "$MPIEXEC" -n "$np" "$BIN" "hcomp:$dir/t.h5" < /dev/null 2>&1 || rc=$?
    } > "$log" 2>&1
    why=""
    [ $rc -eq 0 ] || why="exit status $rc"
    [ $rc -eq 124 ] && why="timed out after ${TIMEOUT}s"
    grep -qx 'hdf5_hcomp: OK' "$log" || why="${why:+$why; }no \"hdf5_hcomp: OK\""
    mpilib=$(sed -n 's/^hdf5_hcomp: MPI library: //p' "$log" | head -n 1)
    [ "$(dirname "${mpilib:-x}")" = "$PLIB" ] ||
        why="${why:+$why; }MPI was loaded from ${mpilib:-?}, not $PLIB"
    if [ ! -f "$dir/t.h5" ] || [ "$(head -c 8 "$dir/t.h5")" != HCOMPMAP ]; then
        why="${why:+$why; }$dir/t.h5 is not an hcomp mapping file"
    fi
    if [ -z "$why" ]; then
        pass "run np=$np: hdf5_hcomp OK on hcomp:$dir/t.h5 ($(stat -c %s "$dir/t.h5")-byte mapping file, MPI from $mpilib)"
    else
        fail "run np=$np: $why" "$log"
    fi
done

# ---- a plain HDF5 file made serially, opened in parallel through hcomp ------------
for np in 2 4; do
    [ -n "$PBIN" ] || break
    dir=$WORK/plain-np$np
    mkdir -p "$dir"
    log=$WORK/plain-np$np.log
    rc=0
    if [ "$np" = 2 ]; then
        how="hcomp:$dir/p.h5"; name="hcomp:$dir/p.h5"; force=""
    else
        how="ROMIO_FSTYPE_FORCE=hcomp: $dir/p.h5"; name="$dir/p.h5"; force="ROMIO_FSTYPE_FORCE=hcomp:"
    fi
    {
        echo "\$ LD_LIBRARY_PATH=$HCOMP_LDPATH $force mpiexec -n $np hdf5_plain $dir/p.h5 $name"
        # shellcheck disable=SC2086  # force is one VAR=value word or nothing
        env LD_LIBRARY_PATH="$HCOMP_LDPATH" $force timeout -k 10 "$TIMEOUT" \
            "$MPIEXEC" -n "$np" "$PBIN" "$dir/p.h5" "$name" < /dev/null 2>&1 || rc=$?
    } > "$log" 2>&1
    why=""
    [ $rc -eq 0 ] || why="exit status $rc"
    [ $rc -eq 124 ] && why="timed out after ${TIMEOUT}s"
    grep -qx 'hdf5_plain: OK' "$log" || why="${why:+$why; }no \"hdf5_plain: OK\""
    mpilib=$(sed -n 's/^hdf5_plain: MPI library: //p' "$log" | head -n 1)
    [ "$(dirname "${mpilib:-x}")" = "$PLIB" ] ||
        why="${why:+$why; }MPI was loaded from ${mpilib:-?}, not $PLIB"
    if [ ! -f "$dir/p.h5" ] || [ "$(head -c 8 "$dir/p.h5" | od -An -tx1 | tr -d ' \n')" != 894844460d0a1a0a ]; then
        why="${why:+$why; }$dir/p.h5 is not a plain HDF5 file any more"
    fi
    if [ -z "$why" ]; then
        pass "plain np=$np: a serially created HDF5 file opened in parallel read-write through $how, still plain HDF5 ($(stat -c %s "$dir/p.h5") bytes)"
    else
        fail "plain np=$np ($how): $why" "$log"
    fi
done

# ---- the life of a file: checkpoints, partial reads; the same on ufs: ------------
# life NP WHAT [VAR=value]: hdf5_life on hcomp: and ufs: with NP ranks, then compared
life() {
    local np=$1 what=$2 dir=$WORK/life-np$1 why="" fs name log rc a b
    shift 2
    mkdir -p "$dir"
    for fs in hcomp ufs; do
        name=$dir/life.h5
        [ "$fs" = ufs ] && name=$dir/life-ufs.h5
        log=$WORK/life-np$np-$fs.log
        rc=0
        {
            echo "\$ LD_LIBRARY_PATH=$HCOMP_LDPATH $* mpiexec -n $np hdf5_life $fs:$name"
            env LD_LIBRARY_PATH="$HCOMP_LDPATH" "$@" timeout -k 10 "$TIMEOUT" \
                "$MPIEXEC" -n "$np" "$LBIN" "$fs:$name" < /dev/null 2>&1 || rc=$?
        } > "$log" 2>&1
        [ $rc -eq 0 ] || why="${why:+$why; }$fs: exit status $rc"
        grep -qx 'hdf5_life: OK' "$log" || why="${why:+$why; }$fs: no \"hdf5_life: OK\""
        [ -n "$why" ] && break
    done
    if [ -z "$why" ]; then
        [ "$(head -c 8 "$dir/life.h5")" = HCOMPMAP ] || why="$dir/life.h5 is not an hcomp file"
        log=$WORK/life-np$np-export.log
        LD_LIBRARY_PATH=$HCOMP_LDPATH "$PREFIX/bin/hcomp" export "$dir/life.h5" \
            "$dir/exported.h5" > "$log" 2>&1 || why="${why:+$why; }hcomp export failed"
    fi
    if [ -z "$why" ]; then
        a=$(stat -c %s "$dir/life-ufs.h5") b=$(stat -c %s "$dir/exported.h5")
        [ "$a" = "$b" ] || why="the hcomp file holds $b bytes, the ufs: one $a"
        log=$WORK/life-np$np-diff.txt
        # (h5dump's first line names the file)
        h5dump "$dir/life-ufs.h5" 2>&1 | tail -n +2 > "$WORK/life-np$np-ufs.dump"
        h5dump "$dir/exported.h5" 2>&1 | tail -n +2 > "$WORK/life-np$np-hcomp.dump"
        diff "$WORK/life-np$np-ufs.dump" "$WORK/life-np$np-hcomp.dump" > "$log" ||
            why="${why:+$why; }h5dump differs between the ufs: file and the exported hcomp file"
    fi
    if [ -z "$why" ]; then
        pass "life np=$np ($what): created, extended, rewritten and flushed 3 times, read in parts; hcomp: and ufs: alike ($b bytes, same h5dump)"
    else
        fail "life np=$np ($what): $why" "$log"
    fi
}
if [ -n "$LBIN" ]; then
    life 3 "independent metadata"
    life 4 "collective metadata, 64 KiB alignment" HDF5_LIFE_COLLECTIVE_METADATA=1
fi

# ---- control: Debian's own MPICH has no hcomp driver -----------------------------
dir=$WORK/control
mkdir -p "$dir"
log=$WORK/control.log
rc=0
{
    echo "\$ LD_LIBRARY_PATH=$DEBIAN_LDPATH mpiexec -n 1 hdf5_hcomp hcomp:$dir/t.h5"
    LD_LIBRARY_PATH=$DEBIAN_LDPATH timeout -k 10 "$TIMEOUT" \
        "$MPIEXEC" -n 1 "$BIN" "hcomp:$dir/t.h5" < /dev/null 2>&1 || rc=$?
} > "$log" 2>&1
mpilib=$(sed -n 's/^hdf5_hcomp: MPI library: //p' "$log" | head -n 1)
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && ! grep -qx 'hdf5_hcomp: OK' "$log" &&
        grep -Eq 'iofstypeunsupported|[Uu]nsupported|[Ii]nvalid file' "$log" &&
        [ -n "$mpilib" ] && [[ $(readlink -f "$mpilib") != "$PREFIX"/* ]]; then
    pass "control: with Debian's MPICH ($mpilib) the hcomp: file is refused (exit $rc: $(grep -Eo 'iofstypeunsupported|[Uu]nsupported[^,]*|[Ii]nvalid file[^,]*' "$log" | head -n 1))"
else
    fail "control: Debian's MPICH should refuse hcomp: (exit $rc, MPI from ${mpilib:-?})" "$log"
fi

echo
suite_summary
