#!/usr/bin/env bash
# Crash states across nodes (issue 46 on the bed of issue 42): a workload of tests/crash
# with one rank on each of two bed nodes, writing one file on the GlusterFS volume, both
# recorded by crash_record.so into one trace (the nodes share the host's /tmp, so one
# counter orders their calls); then, on node0, every crash state explore.py builds is
# written onto the volume and checked there.  Run by tests/multinode/run.sh with the bed
# up.
#   tests/crash/bed-case.sh PREFIX WORKDIR WORKLOAD [HINT=VALUE...]
# Prints "PASS ..." or "FAIL ..." and details; exit status 0 or 1.
set -u
PREFIX=$(cd "${1:?usage: $0 PREFIX WORKDIR WORKLOAD [HINT=VALUE...]}" && pwd)
W=${2:?}
kind=${3:?}
shift 3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BED=$(cd "$here/../multinode" && pwd)/bed
MNT=$("$BED" path)
name="crash states of '$kind' written from 2 nodes ($*)"
fail() { echo "FAIL $name: $1"; [ -f "${2:-}" ] && tail -n 25 "$2" | sed 's/^/    /'; exit 1; }

mkdir -p "$W/bin" "$W/trace" "$W/oracle" "$W/cache"
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -shared -fPIC "$here/crash_record.c" \
    -o "$W/bin/crash_record.so" -ldl -lpthread >"$W/build.log" 2>&1 &&
    "$PREFIX/bin/mpicc" -std=gnu11 -O2 -Wall -Wextra -Werror "$here/crash_work.c" \
        -o "$W/bin/crash_work" >>"$W/build.log" 2>&1 || fail "build" "$W/build.log"
head -c 8 /dev/zero >"$W/trace/seq"
D=$MNT/crash-$kind
"$BED" exec node0 sh -c "rm -rf '$D' && mkdir -p '$D'" || fail "mkdir $D on the volume"
cat >"$W/tiers.json" <<JSON
{"version":1,"tiers":[{"name":"shared","path":"@filedir","measure":false}]}
JSON
timeout -k 5 180 "$BED" mpiexec -n 2 -ppn 1 -genv HCOMP_CACHE_DIR "$W/cache" \
    -genv HCOMP_CRASH_TRACE "$W/trace" -genv HCOMP_CRASH_ROOTS "$D" \
    -genv LD_PRELOAD "$W/bin/crash_record.so" "$W/bin/crash_work" "$kind" "hcomp:$D/f.hc" \
    "$W/tiers.json" "$W/oracle" "$@" >"$W/run.log" 2>&1 || fail "the workload" "$W/run.log"
[ "$(ls "$W/trace" | grep -c '^trace\.node')" -ge 2 ] || fail "no trace from both nodes" "$W/run.log"
# the MPI-IO reader is left out: a singleton MPI process inside a bed node has no
# process manager to reach (hcomp export reads through the same library)
timeout -k 5 600 "$BED" exec node0 env HCOMP_CONFIG="$W/tiers.json" HCOMP_CACHE_DIR="$W/cache" \
    python3 "$here/explore.py" --trace "$W/trace" --root "$D" --file "$D/f.hc" \
    --oracle "$W/oracle" --hcomp "$PREFIX/bin/hcomp" --name "bed-$kind" \
    --max-states "${HCOMP_CRASH_STATES:-150}" --reader-every 1000000000 >"$W/explore.log" 2>&1
rc=$?
"$BED" exec node0 rm -rf "$D"
[ "$rc" -eq 0 ] || fail "$(grep -c VIOLATION "$W/explore.log") violations" "$W/explore.log"
echo "PASS $name"
tail -n 1 "$W/explore.log" | sed 's/^/    /'
