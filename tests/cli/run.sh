#!/usr/bin/env bash
# Tests of the installed `hcomp` tool (PREFIX/bin/hcomp): every subcommand on real
# files, with damage done the way failures do it, checking exit statuses, messages
# and that the bytes read back are the bytes written.
#   tests/cli/run.sh PREFIX
# HCOMP_TOOL names another build of the tool to test (e.g. the sanitizer build).
# Prints "PASS name" / "FAIL name: why" per check and "N passed, N failed" last.
set -u
PREFIX=$(cd "${1:?usage: $0 PREFIX}" && pwd)
H=${HCOMP_TOOL:-$PREFIX/bin/hcomp}
[ -x "$H" ] || { echo "FAIL: $H not found"; echo "0 passed, 1 failed"; exit 1; }
. "$(dirname "$0")/../suite-lib.sh"
suite_workspace clitest       # its own tiers.json below replaces the harness's
W=$WORK
cd "$W"
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
# expect NAME STATUS COMMAND...: the command exits with STATUS; its output is in $W/out
expect() {
    local name=$1 want=$2
    shift 2
    "$@" >"$W/out" 2>&1
    local got=$?
    if [ "$got" -eq "$want" ]; then ok "$name"; else ko "$name" "exit $got, wanted $want: $(head -c 600 "$W/out")"; fi
}
has() { # NAME PATTERN: the last command's output matches
    if grep -qE "$2" "$W/out"; then ok "$1"; else ko "$1" "no /$2/ in: $(head -c 600 "$W/out")"; fi
}
same() { # NAME A B
    if cmp -s "$2" "$3"; then ok "$1"; else ko "$1" "$2 and $3 differ"; fi
}

# two shared tiers: 256 KiB "fast", then "slow" (the last, where drain goes)
mkdir -p fast slow
cat >tiers.json <<JSON
{"version": 1, "tiers": [
  {"name": "fast", "path": "$W/fast", "capacity": "256KiB", "measure": false},
  {"name": "slow", "path": "$W/slow", "measure": false}]}
JSON
export HCOMP_CONFIG=$W/tiers.json
# 3 MiB of text-like data (compresses), 1 MiB of random bytes, a 1 MiB hole, 5 bytes
{ for i in $(seq 1 90000); do echo "line $i: temperature $((i % 97)).$((i % 13)) pressure $((i * 7 % 1013))"; done | head -c 3145728
  head -c 1048576 /dev/urandom
  head -c 1048576 /dev/zero
  printf 'tail!'; } >in.dat

expect "import" 0 "$H" import --no-progress --hint hcomp_piece_size=262144 in.dat f.hc
expect "import refuses an existing file" 1 "$H" import in.dat f.hc
has "import says --force" "exists.*--force"
expect "info" 0 "$H" info f.hc
has "info: logical size" "logical size .*\($(stat -c %s in.dat) bytes\)"
has "info: tier fast" "^ +fast +$W/fast"
has "info: tier slow" "^ +slow +$W/slow"
has "info: the hole" "1\.0 MiB in holes"
has "info: format version" "format +version 3"
expect "export" 0 "$H" export f.hc out.dat
same "export gives the bytes back" in.dat out.dat
if [ "$(stat -c %b out.dat)" -lt "$(stat -c %b in.dat)" ]; then ok "export keeps the hole sparse"; else ko "export keeps the hole sparse" "$(stat -c %b out.dat) blocks"; fi
expect "export refuses to overwrite" 1 "$H" export f.hc out.dat
expect "export --force" 0 "$H" export --force f.hc out.dat
"$H" export f.hc - >stdout.dat 2>/dev/null && same "export to stdout" in.dat stdout.dat
"$H" cat f.hc --offset 3145000 --length 2000 >part.dat
dd if=in.dat of=want.dat bs=1 skip=3145000 count=2000 2>/dev/null
same "cat --offset --length" want.dat part.dat
"$H" cat f.hc --offset $(( $(stat -c %s in.dat) - 3 )) >end.dat
[ "$(cat end.dat)" = "il!" ] && ok "cat past the end stops at EOF" || ko "cat past the end stops at EOF" "$(od -c end.dat | head -2)"
expect "fsck clean" 0 "$H" fsck f.hc
has "fsck says clean" "f.hc: clean"

# a torn append (a crash in the middle of close's last record): found, repaired, data intact
cp f.hc f.map
truncate -s -9 f.hc
expect "fsck finds a torn record" 1 "$H" fsck f.hc
has "fsck names it" "incomplete record"
expect "fsck --repair of a torn record" 0 "$H" fsck --repair f.hc
has "repair keeps the damaged map" "kept as .*f\.hc\.hcomp-damaged"
expect "fsck after repair" 0 "$H" fsck f.hc
"$H" export --force f.hc out.dat >/dev/null 2>&1; same "data intact after repair" in.dat out.dat
rm -f f.hc.hcomp-damaged*

# drain: everything ends on "slow", nothing of the file is left on "fast"
expect "drain" 0 "$H" drain f.hc
has "drain reports the moves" "moved [1-9][0-9]* pieces to tier \"slow\""
if [ -z "$(ls -A fast | grep -v '^\.hcomp-ledger')" ]; then ok "drain empties the upper tier"; else ko "drain empties the upper tier" "$(ls -A fast)"; fi
"$H" export --force f.hc out.dat >/dev/null 2>&1; same "data intact after drain" in.dat out.dat

# a flipped bit in a piece: reported with its logical range, never read as data
seg=$(ls slow/f.hc.*.hcd/*.seg | head -1)
cp "$seg" seg.bak
printf '\xff' | dd of="$seg" bs=1 seek=200 conv=notrunc 2>/dev/null
expect "fsck finds a damaged piece" 1 "$H" fsck f.hc
has "fsck names the checksum" "DAMAGED: .*checksum mismatch"
expect "export of a damaged file fails" 1 "$H" export --force f.hc out.dat
has "export says what is damaged" "checksum mismatch"
[ ! -e out.dat ] && ok "no half-exported file" || ko "no half-exported file" "out.dat exists"
cp seg.bak "$seg"

# a lost mapping file: rebuilt from the pieces' headers
rm f.hc
expect "fsck of a lost mapping file" 1 "$H" fsck f.hc
has "fsck finds the pieces" "found [1-9][0-9]* valid pieces"
expect "fsck --repair rebuilds it" 0 "$H" fsck --repair f.hc
"$H" export f.hc out2.dat >/dev/null 2>&1
# the hole at the end of the data part and the 5 bytes after it come back; the size
# is the end of the last piece
same "data intact after rebuild" in.dat out2.dat

# compact: nothing dead in a fresh import; the bytes stay; info reports the footprint
expect "info: footprint" 0 "$H" info f.hc
has "info: on storage" "on storage +[0-9.]+ [KMG]iB allocated to [0-9]+ segment files"
expect "compact of a fresh file" 0 "$H" compact f.hc
has "compact: nothing to reclaim" "nothing to reclaim"
"$H" export f.hc out3.dat >/dev/null 2>&1
same "data intact after compact" in.dat out3.dat

# compact of a file of small pieces (written through libhcomp with hcomp_reclaim=never, so
# that its close leaves them): they are written again whole, the dead ones freed, and the
# figures it prints are each their own (dead found, mapping file before and after)
LIBHCOMP=$PREFIX/lib/libhcomp.so
if python3 - "$LIBHCOMP" "$W/small.hc" "$W/small.dat" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
class Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 1024)]   # HCOMP_ERROR_MSG_MAX
lib.hcomp_options_new.restype = ctypes.c_void_p
lib.hcomp_options_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p]
lib.hcomp_file_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_int,
                                ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
lib.hcomp_file_pwrite.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64,
                                  ctypes.c_void_p]
lib.hcomp_file_close.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
e = Err()
o = lib.hcomp_options_new()
assert lib.hcomp_options_set(o, b"hcomp_reclaim", b"never", ctypes.byref(e)) == 0, e.msg
f = ctypes.c_void_p()
assert lib.hcomp_file_open(sys.argv[2].encode(), 4 | 8, 0o644, 1, o, ctypes.byref(f), ctypes.byref(e)) == 0, e.msg
data = b"".join(b"record %06d: %s\n" % (i, b"x" * (i % 50)) for i in range(3000))
rec = 300
for off in range(0, len(data), rec):   # every write a piece (hcomp_write_buffer=0)
    assert lib.hcomp_file_pwrite(f, data[off:off + rec], len(data[off:off + rec]), off, ctypes.byref(e)) == 0, e.msg
assert lib.hcomp_file_close(f, ctypes.byref(e)) == 0, e.msg
open(sys.argv[3], "wb").write(data)
PY
then
    expect "info: small pieces" 0 "$H" info small.hc
    has "info: one piece a write" "in [0-9]{3,} live pieces"
    expect "compact of small pieces" 0 "$H" compact small.hc
    has "compact writes small pieces again" "^.*small.hc: [0-9]{3,} small pieces \([0-9.]+ [KM]iB\) written again as whole pieces"
    dead=$(sed -n 's/.*: \([0-9.]* [KMG]*i*B\) of dead pieces found.*/\1/p' "$W/out")
    log_after=$(sed -n 's/.*mapping file [0-9.]* [KMG]*i*B -> \([0-9.]* [KMG]*i*B\).*/\1/p' "$W/out")
    log_before=$(sed -n 's/.*mapping file \([0-9.]* [KMG]*i*B\) -> .*/\1/p' "$W/out")
    [ -n "$dead" ] && [ -n "$log_after" ] && [ "$dead" != "$log_after" ] && [ "$log_before" != "$log_after" ] \
        && ok "compact prints each figure (dead $dead, mapping file $log_before -> $log_after)" \
        || ko "compact prints each figure" "$(cat "$W/out")"
    [ "$log_after" = "$(stat -c %s small.hc) B" ] && ok "compact's mapping file size is the file's" \
        || ko "compact's mapping file size is the file's" "printed $log_after, the file has $(stat -c %s small.hc) bytes"
    expect "info after compact" 0 "$H" info small.hc
    has "info: few pieces" "in [1-3] live pieces"
    "$H" export small.hc small.out >/dev/null 2>&1
    same "small pieces: data intact after compact" small.dat small.out
    "$H" rm small.hc >/dev/null 2>&1     # its pieces share the tiers the rm test counts
else
    ko "a file of small pieces through libhcomp" "the Python writer failed"
fi

# bad usage and foreign files
expect "no command" 2 "$H"
expect "unknown command" 2 "$H" frobnicate f.hc
expect "unknown option" 2 "$H" info --frob f.hc
expect "bad hint" 2 "$H" import --hint hcomp_codec=nope in.dat g.hc
has "bad hint named" "hcomp_codec"
echo "not an hcomp file at all, just text that is long enough to have a header" >plain.txt
expect "info of a plain file" 1 "$H" info plain.txt
has "info says not hcomp" "not an hcomp file"
expect "fsck of a plain file" 2 "$H" fsck --repair plain.txt
[ "$(head -c 10 plain.txt)" = "not an hco" ] && ok "fsck leaves a plain file alone" || ko "fsck leaves a plain file alone" "changed"
expect "compact of a plain file" 2 "$H" compact plain.txt
[ "$(head -c 10 plain.txt)" = "not an hco" ] && ok "compact leaves a plain file alone" || ko "compact leaves a plain file alone" "changed"
expect "rm of a plain file" 1 "$H" rm plain.txt
[ -e plain.txt ] && ok "rm leaves a plain file alone" || ko "rm leaves a plain file alone" "removed"

# bit-shuffled c-blosc pieces (codecs 8 and 9), written by one process, read, checked,
# rebuilt and cat by others that never chose them: float32 particle positions in a box
# [64, 128), sorted by cell, with random low bits (2 MiB; the element type is inferred),
# then a tail shorter than an element
python3 - <<'PY'
import random, struct
random.seed(5)
with open("particles.dat", "wb") as f:
    f.write(b"".join(struct.pack("<f", 64 + (i // 64) % 64 + random.random()) for i in range(524288)))
    f.write(b"\x01\x02\x03")
PY
for codec in blosc-lz4 blosc-zstd:9; do
    rm -f b.hc b.out
    expect "import with $codec" 0 "$H" import --no-progress --hint hcomp_codec=$codec particles.dat b.hc
    expect "info of $codec pieces" 0 "$H" info b.hc
    has "info: ${codec%%:*} compressed them" "${codec%%:*} +2\.0 MiB data in +1\.[0-9]+ MiB"
    expect "export of $codec pieces" 0 "$H" export b.hc b.out
    same "$codec pieces read back" particles.dat b.out
    expect "fsck of $codec pieces" 0 "$H" fsck b.hc
    expect "cat of a range across $codec pieces" 0 "$H" cat b.hc --offset 1048570 --length 20
    cmp -s "$W/out" <(tail -c +1048571 particles.dat | head -c 20) && ok "cat of $codec gives the range" || ko "cat of $codec gives the range" "other bytes"
    rm b.hc && expect "fsck rebuilds a lost mapping of $codec pieces" 0 "$H" fsck --repair b.hc
    "$H" export b.hc b.out2 >/dev/null 2>&1
    same "$codec pieces intact after rebuild" particles.dat b.out2
    rm -f b.out2
    "$H" rm b.hc >/dev/null 2>&1
done

# MPI's access_style=random (8 KiB blocks under "auto"): info says what blocks the pieces are in
rm -f r.hc
expect "import with access_style=random" 0 "$H" import --no-progress --hint hcomp_codec=blosc-lz4 --hint access_style=random particles.dat r.hc
expect "info of 8 KiB blocks" 0 "$H" info r.hc
has "info: the blocks are 8 KiB" "^ +8\.0 KiB +2\.0 MiB data in"
has "info: a blocks section" "^ +blocks$"
"$H" rm r.hc >/dev/null 2>&1

# import from a pipe, rm removes every piece
head -c 700000 in.dat | "$H" import - p.hc >/dev/null 2>&1
"$H" export p.hc p.out >/dev/null 2>&1
head -c 700000 in.dat >p.want
same "import from stdin" p.want p.out
expect "rm" 0 "$H" rm f.hc p.hc
left=$(find fast slow -name '*.seg' | wc -l)
[ "$left" -eq 0 ] && [ ! -e f.hc ] && [ ! -e p.hc ] && ok "rm leaves no piece" || ko "rm leaves no piece" "$left segment files left"

# orphans: segment directories beside files removed with rm or emptied with truncate(2)
# (as PnetCDF's create does) are listed and removed; those of a file renamed within the
# directory, and of a damaged mapping file, are kept
mkdir -p od
cat >od.json <<JSON
{"version": 1, "tiers": [{"name": "here", "path": "@filedir", "measure": false}]}
JSON
head -c 300000 in.dat >od.want
for f in a b c r0 dmg; do "$H" import --no-progress --config od.json od.want od/$f.hc >/dev/null 2>&1; done
mv od/r0.hc od/r1.hc
rm od/b.hc
: >od/c.hc
printf 'X' | dd of=od/dmg.hc bs=1 seek=60 conv=notrunc status=none    # its header checksum
mkdir od/.x.0123456789abcdef.hcd && echo note >od/.x.0123456789abcdef.hcd/README
expect "orphans lists" 0 "$H" orphans od
has "orphans: three" "3 hcomp files; 3 segment directories no file here uses"
has "orphans: the removed file's" "od/\.b\.hc\.[0-9a-f]{16}\.hcd: [0-9]+ segment files"
has "orphans: the truncated file's" "od/\.c\.hc\.[0-9a-f]{16}\.hcd"
has "orphans: says what mv does" "moved to another directory"
[ "$(find od -name '*.seg' | wc -l)" -gt 0 ] && [ -d od/.x.0123456789abcdef.hcd ] &&
    ok "orphans without --remove removes nothing" || ko "orphans without --remove removes nothing" "gone"
expect "orphans --remove keeps a directory with other files (exit 1)" 1 "$H" orphans od --remove
has "orphans --remove: removed two, kept one" "removed 2 segment directories.*kept 1"
[ -z "$(ls -d od/.b.hc.*.hcd od/.c.hc.*.hcd 2>/dev/null)" ] && [ -f od/.x.0123456789abcdef.hcd/README ] &&
    ok "orphans --remove removed the orphans only" || ko "orphans --remove removed the orphans only" "$(ls -a od)"
"$H" export od/a.hc od/a.out >/dev/null 2>&1
same "orphans --remove: a file in place intact" od.want od/a.out
"$H" export od/r1.hc od/r1.out >/dev/null 2>&1
same "orphans --remove: a renamed file intact" od.want od/r1.out
ls -d od/.dmg.hc.*.hcd >/dev/null 2>&1 && ok "orphans --remove: a damaged mapping file keeps its pieces" ||
    ko "orphans --remove: a damaged mapping file keeps its pieces" "removed"
rm -r od/.x.0123456789abcdef.hcd
expect "orphans after --remove" 0 "$H" orphans od
has "orphans: none left" "3 hcomp files; 0 segment directories"
expect "orphans of a missing directory" 1 "$H" orphans od/nowhere
expect "orphans usage" 2 "$H" orphans

# one file with a region of every codec (and every c-blosc2 transform), written through the
# installed library by a program built here, exported by the tool (another process) and
# compared with the bytes written
cat >every.c <<'C'
#include <hcomp.h>
#include <hcomp_model.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* region r: 96 KiB + 5 bytes of float64 smooth values (tails past whole elements) */
int main(int argc, char **argv)
{
    static const char *const spec[][2] = {
        {"none", "auto"}, {"lz4", "byte"}, {"zstd:3", "byte"}, {"zlib", "auto"}, {"bzip2", "auto"},
        {"brotli", "auto"}, {"snappy", "byte"}, {"lzma", "auto"}, {"blosc-lz4", "auto"},
        {"blosc-zstd:9", "byte"}, {"blosc2-lz4", "auto"}, {"blosc2-zstd", "bytedelta"},
        {"blosc2-lz4:9", "delta"}, {"blosc2-zstd:1", "byte"}, {"blosc2-zstd:3", "bit"}};
    const size_t n = sizeof spec / sizeof spec[0], len = 98304 + 5;
    unsigned char *buf = malloc(len);
    FILE *want = fopen(argv[2], "wb");
    for (size_t r = 0; r < n; r++) {
        for (size_t i = 0; i + 8 <= len; i += 8) {
            double v = 300.0 + 20.0 * sin((double) (r * len + i) * 1e-4);
            memcpy(buf + i, &v, 8);
        }
        memset(buf + len - 5, (int) r, 5);
        hcomp_options *o = hcomp_options_new();
        hcomp_error e;
        hcomp_file *f;
        if (hcomp_options_set(o, "hcomp_codec", spec[r][0], &e) ||
            hcomp_options_set(o, "hcomp_shuffle", spec[r][1], &e) ||
            hcomp_file_open(argv[1], HCOMP_O_RDWR | HCOMP_O_CREAT, 0644, 1, o, &f, &e)) {
            fprintf(stderr, "%s %s: %s\n", spec[r][0], spec[r][1], e.msg);
            return 1;
        }
        hcomp_file_set_dtype(f, HCOMP_DTYPE_DOUBLE);
        if (hcomp_file_pwrite(f, buf, len, r * len, &e) || hcomp_file_close(f, &e)) {
            fprintf(stderr, "%s: %s\n", spec[r][0], e.msg);
            return 1;
        }
        hcomp_options_free(o);
        fwrite(buf, 1, len, want);
    }
    return fclose(want) != 0;
}
C
if cc -std=c11 -I"$PREFIX/include" -o every every.c -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lhcomp -lm \
        >every.log 2>&1 && ./every every.hc every.want >>every.log 2>&1; then
    ok "a file with every codec and transform written"
    expect "info of a file with every codec" 0 "$H" info every.hc
    for c in lz4 zstd zlib bzip2 brotli snappy lzma blosc-lz4 blosc-zstd blosc2-lz4 blosc2-zstd; do
        has "info: $c pieces in it" "^ +$c +[0-9.]+ KiB data in"
    done
    expect "export of a file with every codec" 0 "$H" export every.hc every.out
    same "every codec read back by export" every.want every.out
    expect "fsck of a file with every codec" 0 "$H" fsck every.hc
else
    ko "a file with every codec and transform written" "$(tail -n 3 every.log)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
