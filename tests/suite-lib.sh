# Shared by the suites that run other projects' test programs on hcomp: files
# (tests/hdf5par, tests/pnetcdf) and by those that run many slow checkers two at a time
# (tests/valgrind, tests/fuzz): sourced, not run.
#
#   suite_workspace TAG KEEP   a work directory $WORK (TMPDIR) and a private RAM tier
#                              directory $RAM (/dev/shm when there is one), removed at
#                              exit unless KEEP is 1, and $WORK/tiers.json: the embedded
#                              default's shape (64 MiB of RAM, then the file's directory)
#   suite_report NAME OK LOG [PATTERN]
#                              count and print "PASS NAME" (OK 0) or "FAIL NAME" and the
#                              end of LOG (the lines around PATTERN if given)
#   suite_summary              print "N passed, N failed"; the status is 0 if none failed
#   suite_parallel JOBS FUNC ITEM...
#                              FUNC ITEM for every ITEM, JOBS at a time in the background;
#                              returns when all are done (each FUNC writes its own result)
#   suite_results DIR NAME...  print DIR/NAME.result (its first line "PASS ..." or "FAIL
#                              ...", then any detail) for every NAME in the order given,
#                              and count it; a missing one is a failure

suite_workspace() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/hcomp-$1.XXXXXX") || exit 2
    RAM=$(mktemp -d "/dev/shm/hcomp-$1.XXXXXX" 2>/dev/null) || { RAM=$WORK/ram; mkdir -p "$RAM"; }
    chmod 700 "$RAM"
    SUITE_KEEP=$2
    trap 'if [ "$SUITE_KEEP" = 1 ]; then echo "kept: $WORK $RAM"; else rm -rf "$WORK" "$RAM"; fi' EXIT
    trap 'exit 130' INT TERM
    cat > "$WORK/tiers.json" <<JSON
{"version":1,"tiers":[
  {"name":"ram","path":"$RAM","capacity":"64MiB","scope":"node-local","private":true},
  {"name":"filedir","path":"@filedir","capacity":"unlimited","scope":"shared"}
]}
JSON
}

PASSED=0 FAILED=0
suite_report() {
    if [ "$2" = 0 ]; then
        PASSED=$((PASSED + 1)); echo "PASS $1"
    else
        FAILED=$((FAILED + 1)); echo "FAIL $1"
        if [ -n "${4:-}" ]; then
            grep -v '^$' "$3" | grep -iE -B2 -A8 "$4" | tail -n 40
        else
            grep -v '^$' "$3" | tail -n 30
        fi | awk '{ print "    " $0 }'
    fi
}

suite_summary() {
    echo "$PASSED passed, $FAILED failed"
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
