#!/usr/bin/env bash
# Registers the hcomp driver in a ROMIO source tree (MPICH 4.x): the fstypes row for
# the "hcomp:" prefix, the ADIO constant, the ops-table prototype, the file system in
# ROMIO's configure.ac (with the AC_DEFINE and -lhcomp), the Makefile include, and the
# error messages. Idempotent: every edit is guarded by a marker.
# Usage: scripts/patch-romio.sh MPICH_SOURCE_DIR
set -euo pipefail
src=${1:?usage: patch-romio.sh MPICH_SOURCE_DIR}
romio="$src/src/mpi/romio"
[ -f "$romio/adio/common/ad_fstype.c" ] || { echo "patch-romio: $romio is not a ROMIO tree" >&2; exit 1; }
marker="hcomp driver"

edit() { # file, python code operating on s
    python3 - "$1" "$2" <<'PY'
import sys
path, code = sys.argv[1], sys.argv[2]
s = open(path).read()
env = {"s": s}
exec(code, env)
if env["s"] != s:
    open(path, "w").write(env["s"])
PY
}

f="$romio/adio/common/ad_fstype.c"
grep -q "$marker" "$f" || edit "$f" '
anchor = "    {0, 0, 0}   /* guard entry */"
assert anchor in s, "fstypes guard entry not found"
s = s.replace(anchor, "#ifdef ROMIO_HCOMP /* hcomp driver */\n    {&ADIO_HCOMP_operations, ADIO_HCOMP, \"hcomp:\"},\n#endif\n" + anchor, 1)
'

f="$romio/adio/include/adio.h"
grep -q "$marker" "$f" || edit "$f" '
import re
m = re.search(r"#define ADIO_QUOBYTEFS\s+\d+.*\n", s)
assert m, "ADIO_QUOBYTEFS not found"
s = s[:m.end()] + "#define ADIO_HCOMP               172    /* hcomp driver: compressed multi-tier storage */\n" + s[m.end():]
'

f="$romio/adio/include/adioi_fs_proto.h"
grep -q "$marker" "$f" || edit "$f" '
anchor = "#endif /* ADIOI_FS_PROTO_H_INCLUDED */"
assert anchor in s, "end of adioi_fs_proto.h not found"
s = s.replace(anchor, "#ifdef ROMIO_HCOMP\n/* hcomp driver: prototypes are in adio/ad_hcomp/ad_hcomp.h */\nextern struct ADIOI_Fns_struct ADIO_HCOMP_operations;\n#endif\n\n" + anchor, 1)
'

f="$romio/configure.ac"
grep -q "$marker" "$f" || edit "$f" '
old = "[daos nfs ufs pvfs2 testfs xfs panfs lustre gpfs ime quobytefs])dnl"
assert old in s, "known file systems list not found"
s = s.replace(old, "[daos nfs ufs pvfs2 testfs xfs panfs lustre gpfs ime quobytefs hcomp])dnl", 1)
anchor = "if test -n \"$file_system_quobytefs\" ; then"
assert anchor in s
block = """# hcomp driver: needs libhcomp (hcomp.h, -lhcomp)
if test -n "$file_system_hcomp" ; then
    AC_CHECK_HEADERS(hcomp.h,,
        AC_MSG_ERROR([hcomp support requested but hcomp.h was not found: install libhcomp and pass its include directory in CPPFLAGS]))
    AC_DEFINE(ROMIO_HCOMP,1,[Define for ROMIO with the hcomp driver])
    PAC_APPEND_FLAG([-lhcomp],[LIBS])
fi

"""
s = s.replace(anchor, block + anchor, 1)
'

f="$romio/adio/Makefile.mk"
grep -q "ad_hcomp" "$f" || edit "$f" '
anchor = "include $(top_srcdir)/adio/ad_quobytefs/Makefile.mk\n"
assert anchor in s
s = s.replace(anchor, anchor + "include $(top_srcdir)/adio/ad_hcomp/Makefile.mk\n", 1)
'
# MPI_File_close on an hcomp file returns once every process has closed it: an hcomp
# close still writes (small writes it gathered, the drain of node-local tiers, the
# statistics record, fsync) after ROMIO's last barrier, and a program that reopens,
# deletes or overwrites the file once its close returns (HDF5's tests create a file
# serially where a parallel one was just closed) must not race those writes. Here and
# not in the driver's Close: with deferred open, processes that never opened the file
# skip the driver's Close, but every process reaches this point of ADIO_Close.
f="$romio/adio/common/ad_close.c"
grep -q "$marker" "$f" || edit "$f" '
anchor = "    if (fd->access_mode & ADIO_DELETE_ON_CLOSE) {"
assert s.count(anchor) == 1, "ADIO_DELETE_ON_CLOSE block of ADIO_Close not found"
s = s.replace(anchor, "#ifdef ROMIO_HCOMP /* hcomp driver: every process has closed when one returns */\n    if (fd->file_system == ADIO_HCOMP)\n        MPI_Barrier(fd->comm);\n#endif\n" + anchor, 1)
'
echo "patch-romio: ROMIO in $src knows the hcomp driver"
