#!/usr/bin/env bash
# Runs every cmocka unit test program (check_PROGRAMS of Makefile.am) under valgrind's
# memcheck: invalid reads and writes, uses of uninitialised values, bad frees, and
# definitely lost memory are failures. The programs come from a build without
# sanitizers of its own, build/valgrind (the repository's configure; built here when
# missing or out of date). Prints "PASS test_x (N s)" or "FAIL test_x" with valgrind's
# report, then "N passed, N failed".
#
#   tests/valgrind/run.sh                 # every unit test program
#   tests/valgrind/run.sh test_codecs     # some of them
#
# Environment: HCOMP_VALGRIND_TIMEOUT (seconds per program, default 600),
# HCOMP_VALGRIND_BUILD (default <repo>/build/valgrind), HCOMP_JOBS (make jobs and
# programs run at once, at most 2).
# Suppressions: tests/valgrind/hcomp.supp (third-party libraries only, each explained).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${HCOMP_VALGRIND_BUILD:-$repo/build/valgrind}
limit=${HCOMP_VALGRIND_TIMEOUT:-600}
jobs=${HCOMP_JOBS:-2}
[ "$jobs" -gt 2 ] && jobs=2
supp="$repo/tests/valgrind/hcomp.supp"

progs=$(awk '/^check_PROGRAMS *=/ {on=1} on {print; if ($0 !~ /\\$/) exit}' "$repo/Makefile.am" |
        tr ' \t\\' '\n\n\n' | grep '^tests/unit/test_')
if [ $# -gt 0 ]; then
    want=" $* "
    progs=$(for p in $progs; do [[ "$want" == *" $(basename "$p") "* ]] && echo "$p"; done)
fi
n=$(echo $progs | wc -w)
fail_all() {
    echo "FAIL valgrind stage: $*"
    echo "0 passed, $((n > 0 ? n : 1)) failed"
    exit 1
}
command -v valgrind >/dev/null 2>&1 || fail_all "valgrind not found (apt-get install valgrind; scripts/setup does)"
[ -n "$progs" ] || fail_all "no unit test programs (check_PROGRAMS in Makefile.am)"

# ---- build (no sanitizers: valgrind and ASan do not mix) -------------------------------
mkdir -p "$build" || fail_all "cannot create $build"
if [ ! -f "$build/config.status" ] || [ "$repo/configure" -nt "$build/config.status" ]; then
    # c-blosc2 is in the set-up's prefix (scripts/setup builds it there), not in this one
    (cd "$build" && PKG_CONFIG_PATH="${PREFIX:-$repo/install}/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
        "$repo/configure" --prefix="$build/prefix" >configure.out 2>&1) ||
        fail_all "configure failed; see $build/configure.out"
fi
(cd "$build" && nice make -j"$jobs" >make.out 2>&1 && nice make -j"$jobs" $progs >>make.out 2>&1) ||
    { tail -n 30 "$build/make.out"; fail_all "build failed; see $build/make.out"; }

# ---- run ----------------------------------------------------------------------------------
logs="$build/valgrind-logs"
mkdir -p "$logs"
# two programs at a time (the machine's cores; memcheck runs each on one thread), the
# slowest first so that they do not end the run alone; results printed in order
run_one() { # program path: writes $logs/NAME.result (first line PASS or FAIL)
    local p=$1 name vlog olog start rc secs why
    name=$(basename "$p")
    vlog="$logs/$name.valgrind"
    olog="$logs/$name.out"
    start=$(date +%s)
    # like `make check`: from the top of the build directory
    (cd "$build" && timeout -k 10 "$limit" valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite --show-leak-kinds=definite --track-origins=no --suppressions="$supp" \
        --log-file="$vlog" "./$p" </dev/null >"$olog" 2>&1)
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ "$rc" -eq 0 ]; then
        echo "PASS $name ($secs s)" >"$logs/$name.result"
    else
        case $rc in
            99) why="memory errors or definite leaks" ;;
            124|137) why="timed out after $limit s" ;;
            *) why="exit $rc" ;;
        esac
        { echo "FAIL $name ($why, $secs s); valgrind log $vlog, output $olog"
          head -n 60 "$vlog" | sed 's/^/    /'
          grep -E '^\[  (FAILED|ERROR)' "$olog" | head -n 20 | sed 's/^/    /'; } >"$logs/$name.result"
    fi
}
slow="test_engine test_codecs test_analyzer test_reclaim test_seed test_file"
ordered=$(for s in $slow; do for p in $progs; do [ "$(basename "$p")" = "$s" ] && echo "$p"; done; done
          for p in $progs; do [[ " $slow " == *" $(basename "$p") "* ]] || echo "$p"; done)
for p in $ordered; do rm -f "$logs/$(basename "$p").result"; done
. "$repo/tests/suite-lib.sh"
suite_parallel "$jobs" run_one $ordered
suite_results "$logs" $(for p in $progs; do basename "$p"; done)
suite_summary
