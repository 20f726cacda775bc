#!/usr/bin/env bash
# Builds libhcomp's sources and the libFuzzer targets tests/fuzz/fuzz_*.c with clang
# (-fsanitize=fuzzer,address,undefined) into build/fuzz, then runs each target for a
# bounded time on a copy of its seed corpus tests/fuzz/corpus/<target>/ (the committed
# corpus is never modified). Prints "PASS fuzz_x: N execs" or "FAIL fuzz_x" with the
# crashing input and the command that reproduces it, then "N passed, N failed".
#
#   tests/fuzz/run.sh                  # every target, HCOMP_FUZZ_SECONDS (12) each
#   tests/fuzz/run.sh fuzz_codecs      # some targets
#   tests/fuzz/run.sh --build-only     # just build (tests/fuzz/make-corpus uses it)
#
# Environment: HCOMP_FUZZ_SECONDS (per target, default 12: a bounded run in CI; set it
# higher for a longer search), CLANG (default: clang, else the newest clang-NN),
# HCOMP_FUZZ_BUILD (default <repo>/build/fuzz), HCOMP_JOBS (2).
# Without a working clang/libFuzzer this FAILS: scripts/setup installs clang and
# libclang-rt-14-dev.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here="$repo/tests/fuzz"
out=${HCOMP_FUZZ_BUILD:-$repo/build/fuzz}
secs=${HCOMP_FUZZ_SECONDS:-12}
jobs=${HCOMP_JOBS:-2}
[ "$jobs" -gt 2 ] && jobs=2
build_only=0
targets=()
for a in "$@"; do
    case $a in
        --build-only) build_only=1 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) targets+=("${a%.c}") ;;
    esac
done
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$here"/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi

fail_all() { # message: nothing can run
    echo "FAIL fuzz build: $*"
    echo "0 passed, ${#targets[@]} failed"
    exit 1
}

# ---- toolchain ------------------------------------------------------------------------
CC=${CLANG:-}
if [ -z "$CC" ]; then
    for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
        command -v "$c" >/dev/null 2>&1 && { CC=$c; break; }
    done
fi
[ -n "$CC" ] || fail_all "clang not found (apt-get install clang libclang-rt-14-dev; scripts/setup does)"
mkdir -p "$out/obj" "$out/bin" "$out/artifacts" || fail_all "cannot create $out"
probe="$out/probe.c"
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void) d; (void) n; return 0; }\n' >"$probe"
"$CC" -fsanitize=fuzzer,address,undefined "$probe" -o "$out/probe" >"$out/probe.log" 2>&1 ||
    fail_all "$CC cannot build a libFuzzer program (libclang-rt-NN-dev missing?): $(tail -n 3 "$out/probe.log")"

# c-blosc2: in the set-up's prefix (scripts/setup builds it there)
export PKG_CONFIG_PATH="${PREFIX:-$repo/install}/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkgs="liblz4 libzstd zlib libbrotlienc libbrotlidec liblzma jansson gsl libdeflate blosc blosc2"
pc_cflags=$(pkg-config --cflags $pkgs) || fail_all "pkg-config $pkgs (c-blosc2: run scripts/setup --lib-only)"
pc_libs="$(pkg-config --libs $pkgs) -Wl,-rpath,$(pkg-config --variable=libdir blosc2)" || fail_all "pkg-config $pkgs"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -fno-omit-frame-pointer $SAN -std=c11 -pthread -D_GNU_SOURCE -I$repo/include -I$repo $pc_cflags"
LIBS="$pc_libs -lbz2 -lsnappy -lm -pthread"

# ---- the library: the sources of libhcomp_core (Makefile.am), compiled directly -----
srcs=$(awk '/^libhcomp_core_la_SOURCES *=/ {on=1} on {print; if ($0 !~ /\\$/) exit}' "$repo/Makefile.am" |
       tr ' \t\\' '\n\n\n' | grep '\.c$')
[ -n "$srcs" ] || fail_all "no libhcomp_core_la_SOURCES in Makefile.am"
# an object is rebuilt when its source, any library header or the flags are newer
stamp="$out/obj/flags"
echo "$CC $CFLAGS -fsanitize=fuzzer-no-link" >"$stamp.new"
cmp -s "$stamp.new" "$stamp" || mv "$stamp.new" "$stamp"
rm -f "$stamp.new"
newest_h=$(ls -t "$stamp" "$repo"/include/*.h "$repo"/*/*.h | head -n 1)
todo=()
objs=()
for s in $srcs; do
    o="$out/obj/$(echo "${s%.c}" | tr / _).o"
    objs+=("$o")
    if [ ! -f "$o" ] || [ "$repo/$s" -nt "$o" ] || [ "$newest_h" -nt "$o" ]; then
        todo+=("$s")
    fi
done
if [ ${#todo[@]} -gt 0 ]; then
    echo "building ${#todo[@]} library sources with $CC into $out"
    export CC CFLAGS repo out
    printf '%s\n' "${todo[@]}" | nice xargs -P "$jobs" -I{} sh -c \
        'o="$out/obj/$(echo "{}" | sed "s/\.c$//" | tr / _).o"; rm -f "$o";
         $CC $CFLAGS -fsanitize=fuzzer-no-link -c "$repo/{}" -o "$o.tmp" 2>"$o.log" && mv "$o.tmp" "$o" ||
         { echo "compile error in {}:"; cat "$o.log"; exit 255; }' ||
        fail_all "library sources did not compile"
fi
lib="$out/libhcomp_fuzz.a"
if [ ! -f "$lib" ] || [ -n "$(find "${objs[@]}" -newer "$lib" 2>/dev/null | head -n 1)" ]; then
    rm -f "$lib"
    ar rcs "$lib" "${objs[@]}" || fail_all "ar $lib"
fi

# ---- the targets ---------------------------------------------------------------------
built=()
build_fail=()
for t in "${targets[@]}"; do
    src="$here/$t.c"
    bin="$out/bin/$t"
    if [ ! -f "$src" ]; then build_fail+=("$t"); echo "FAIL $t: no $src"; continue; fi
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$lib" -nt "$bin" ] || [ "$here/fuzz_common.h" -nt "$bin" ]; then
        if ! nice "$CC" $CFLAGS -fsanitize=fuzzer "$src" "$lib" $LIBS -o "$bin" >"$out/bin/$t.log" 2>&1; then
            echo "FAIL $t: does not build"; cat "$out/bin/$t.log"; build_fail+=("$t"); continue
        fi
    fi
    built+=("$t")
done
if [ "$build_only" -eq 1 ]; then
    [ ${#build_fail[@]} -eq 0 ] && echo "built: ${built[*]} in $out/bin" && exit 0
    exit 1
fi

# ---- the runs ------------------------------------------------------------------------
pass=0 fails=${#build_fail[@]}
shm=/dev/shm; [ -d "$shm" ] && [ -w "$shm" ] || shm=${TMPDIR:-/tmp}
work=$(mktemp -d "$shm/hcomp-fuzz-run.XXXXXX") || fail_all "no temporary directory"
trap 'rm -rf "$work"' EXIT
# two targets at a time (the machine's cores; libFuzzer runs each on one thread), each
# for its own HCOMP_FUZZ_SECONDS; results printed in order
fuzz_one() { # target: writes $work/TARGET.result (first line PASS or FAIL)
    local t=$1 bin="$out/bin/$1" w="$work/$1" log="$out/$1.log" start rc execs crashes c
    mkdir -p "$w/corpus" "$w/tmp" "$w/artifacts"
    [ -d "$here/corpus/$t" ] && cp -R "$here/corpus/$t/." "$w/corpus/"
    start=$(date +%s)
    # the targets make their temporary files under TMPDIR (tmpfs when there is one)
    (cd "$w" && TMPDIR="$w/tmp" nice "$bin" -max_total_time="$secs" -rss_limit_mb=2048 \
        -timeout=30 -print_final_stats=1 -artifact_prefix="$w/artifacts/" "$w/corpus" \
        </dev/null >"$log" 2>&1)
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    crashes=$(find "$w/artifacts" -type f | head -n 5)
    if [ "$rc" -eq 0 ] && [ -z "$crashes" ] && [ -n "$execs" ]; then
        echo "PASS $t: ${execs} execs in $(( $(date +%s) - start )) s, corpus $(ls "$w/corpus" | wc -l) inputs" \
            >"$work/$t.result"
    else
        { echo "FAIL $t (exit $rc, ${execs:-?} execs); log $log"
          grep -E 'ERROR|SUMMARY|property violated|runtime error|==[0-9]+==' "$log" | head -n 20 | sed 's/^/    /'
          mkdir -p "$out/artifacts/$t"
          for c in $crashes; do
              cp "$c" "$out/artifacts/$t/"
              echo "    input: $out/artifacts/$t/$(basename "$c")"
              echo "    reproduce: $bin $out/artifacts/$t/$(basename "$c")"
          done; } >"$work/$t.result"
    fi
    rm -rf "$w"
}
. "$repo/tests/suite-lib.sh"
suite_parallel 2 fuzz_one "${built[@]}"
PASSED=$pass FAILED=$fails
suite_results "$work" "${built[@]}"
suite_summary
