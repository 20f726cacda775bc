# The harness of the suites' runners (tests/*/run.sh): sourced, not run.
#
#   suite_keep [OLD_VAR]       prints 1 if the work directory is to be kept:
#                              HCOMP_TEST_KEEP=1 (or the runner's older variable OLD_VAR=1)
#   suite_workspace TAG [KEEP] a work directory $WORK (TMPDIR) and a private RAM tier
#                              directory $RAM (/dev/shm when there is one), removed at
#                              exit unless KEEP (default: suite_keep) is 1 (their paths are
#                              printed then); $SUITE_CLEANUP, if set, names a function run
#                              first at exit (unmounts, a test bed's shutdown); and
#                              $WORK/tiers.json as suite_tiers 64MiB writes it
#   suite_tiers RAMCAP [speeds] [OPTION...]
#                              (re)writes $WORK/tiers.json: the embedded default's shape,
#                              RAMCAP of $RAM ("ram", node-local, private), then the file's
#                              directory ("filedir", unlimited, shared); "speeds" states
#                              them (10GB/s and 1us, 1GB/s and 100us) instead of having
#                              them probed; options: shared=NAME (the second tier's name),
#                              public (the RAM tier not private)
#   suite_pass NAME            count and print "PASS NAME"
#   suite_fail NAME [LOG [PATTERN]]
#                              count and print "FAIL NAME" and the end of LOG (the lines
#                              around PATTERN if given)
#   suite_skip NAME WHY        count and print "SKIP NAME: WHY" (neither passed nor failed)
#   suite_report NAME OK LOG [PATTERN]
#                              suite_pass NAME if OK is 0, else suite_fail NAME LOG PATTERN
#   suite_summary              print "N passed, N failed" (", N skipped" if any); the status
#                              is 0 if none failed
#   suite_parallel JOBS FUNC ITEM...
#                              FUNC ITEM for every ITEM, JOBS at a time in the background;
#                              returns when all are done (each FUNC writes its own result)
#   suite_results DIR NAME...  print DIR/NAME.result (its first line "PASS ..." or "FAIL
#                              ...", then any detail) for every NAME in the order given,
#                              and count it; a missing one is a failure

suite_keep() {
    if [ "${HCOMP_TEST_KEEP:-0}" = 1 ] || { [ -n "${1:-}" ] && [ "${!1:-0}" = 1 ]; }; then
        echo 1
    else
        echo 0
    fi
}

suite_workspace() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/hcomp-$1.XXXXXX") || exit 2
    RAM=$(mktemp -d "/dev/shm/hcomp-$1.XXXXXX" 2>/dev/null) || { RAM=$WORK/ram; mkdir -p "$RAM"; }
    chmod 700 "$RAM"
    SUITE_KEEP=${2:-$(suite_keep)} SUITE_WORK=$WORK SUITE_RAM=$RAM
    trap '[ -n "${SUITE_CLEANUP:-}" ] && "$SUITE_CLEANUP"
          if [ "$SUITE_KEEP" = 1 ]; then echo "kept: $SUITE_WORK $SUITE_RAM"
          else rm -rf "$SUITE_WORK" "$SUITE_RAM"; fi' EXIT
    trap 'exit 130' INT TERM
    suite_tiers 64MiB
}

suite_tiers() {
    local cap=$1 speeds=0 shared=filedir private=',"private":true' o ram_speed="" shared_speed=""
    shift
    for o in "$@"; do
        case $o in
            speeds) speeds=1 ;;
            shared=*) shared=${o#shared=} ;;
            public) private="" ;;
            *) echo "suite_tiers: unknown option $o" >&2; return 2 ;;
        esac
    done
    if [ "$speeds" = 1 ]; then
        ram_speed=',"bandwidth":"10GB/s","latency":"1us"'
        shared_speed=',"bandwidth":"1GB/s","latency":"100us"'
    fi
    cat > "$WORK/tiers.json" <<JSON
{"version":1,"tiers":[
  {"name":"ram","path":"$RAM","capacity":"$cap"$ram_speed,"scope":"node-local"$private},
  {"name":"$shared","path":"@filedir","capacity":"unlimited"$shared_speed,"scope":"shared"}
]}
JSON
}

PASSED=0 FAILED=0 SKIPPED=0
suite_pass() {
    PASSED=$((PASSED + 1)); echo "PASS $1"
}

suite_fail() {
    FAILED=$((FAILED + 1)); echo "FAIL $1"
    [ -n "${2:-}" ] && [ -s "$2" ] || return 0
    if [ -n "${3:-}" ]; then
        grep -v '^$' "$2" | grep -iE -B2 -A8 "$3" | tail -n 40
    else
        grep -v '^$' "$2" | tail -n 30
    fi | awk '{ print "    " $0 }'
}

suite_skip() {
    SKIPPED=$((SKIPPED + 1)); echo "SKIP $1: $2"
}

suite_report() {
    if [ "$2" = 0 ]; then suite_pass "$1"; else suite_fail "$1" "$3" "${4:-}"; fi
}

suite_summary() {
    if [ "$SKIPPED" -gt 0 ]; then
        echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
    else
        echo "$PASSED passed, $FAILED failed"
    fi
    [ "$FAILED" = 0 ]
}

suite_parallel() {
    local jobs=$1 func=$2 item
    shift 2
    for item in "$@"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        "$func" "$item" &
    done
    wait
}

suite_results() {
    local dir=$1 name r
    shift
    for name in "$@"; do
        r=$dir/$name.result
        if [ -f "$r" ] && head -n 1 "$r" | grep -q '^PASS'; then
            PASSED=$((PASSED + 1))
        else
            FAILED=$((FAILED + 1))
            [ -f "$r" ] || echo "FAIL $name (no result)"
        fi
        [ -f "$r" ] && cat "$r"
    done
    return 0
}
