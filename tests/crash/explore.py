#!/usr/bin/env python3
"""Crash-state explorer (issue 46): builds the states a crash could leave from a trace
recorded by crash_record.so, replays each into the recorded directories and checks it.

Persistence model (docs/FORMAT.md, "Durable steps"): POSIX's, weaker than ext4's.
  * A write, truncate or fallocate on a file is durable once an fsync or fdatasync of
    that file (through any descriptor) returned after it, or a sync(2)/syncfs(2).
  * A directory entry made or removed (create, mkdir, link, unlink, rmdir, rename) is
    durable once an fsync of that directory returned after it.  An fsync of a file does
    not make its name durable (ext4 and XFS happen to; POSIX does not promise it, and a
    parallel file system need not).
  * Of what is not durable at the crash, each file keeps any prefix of its changes or any
    subset of them, each directory any prefix of its changes; a rename between two
    directories is two changes, one in each.
  * Roots named volatile (a RAM tier) lose everything.
The workload's marks (crash_work.c) say what must be found: after "synced O", every byte
of the file is O's, or one a later "intent" put there; before it, a file that opens holds
only bytes some intent put there.  Between "begin X" and "end X" (a compaction), every
call is a crash point.

usage: explore.py --trace DIR --root PATH [--root PATH] [--volatile PATH] --file PATH
                  --oracle DIR --hcomp BIN [--reader CMD] [--max-states N] [--seed N]
                  [--name NAME] [--keep DIR] [--plant BUG]
Prints one line per violation and a summary; exits 1 on any violation.
"""
import argparse
import glob
import hashlib
import os
import random
import shutil
import struct
import subprocess
import sys
import time

HDR = struct.Struct('<QIIQQqqqIIII')
(CREATE, MKDIR, UNLINK, RMDIR, RENAME, LINK, WRITE, TRUNC, FALLOC, FSYNC, FDATASYNC,
 SYNCALL, MARK, SYNCRANGE) = range(1, 15)
OPNAME = {CREATE: 'create', MKDIR: 'mkdir', UNLINK: 'unlink', RMDIR: 'rmdir',
          RENAME: 'rename', LINK: 'link', WRITE: 'write', TRUNC: 'truncate',
          FALLOC: 'fallocate', FSYNC: 'fsync', FDATASYNC: 'fdatasync', SYNCALL: 'sync',
          MARK: 'mark', SYNCRANGE: 'sync_file_range'}
FALLOC_KEEP_SIZE, FALLOC_PUNCH, FALLOC_ZERO = 1, 2, 16
AFTER_REBOOT = time.time() - 3600   # the files' times in a crash state


class Op:
    __slots__ = ('seq', 'op', 'pid', 'ino', 'ino2', 'a', 'b', 'c', 'p1', 'p2', 'data')

    def __str__(self):
        s = '%s pid %d' % (OPNAME[self.op], self.pid)
        if self.op == MARK:
            return s + ' "%s"' % self.p1
        if self.p1 or self.p2:
            s += ' ' + ' -> '.join(p for p in (self.p1, self.p2) if p)
        if self.op in (WRITE, TRUNC, FALLOC):
            s += ' ino %d at %d len %d' % (self.ino, self.a, self.b)
        elif self.op in (FSYNC, FDATASYNC):
            s += ' ino %d' % self.ino
        return s


def read_trace(tdir):
    ops = []
    for fn in glob.glob(os.path.join(tdir, 'trace.*')):
        with open(fn, 'rb') as f:
            buf = f.read()
        i = 0
        while i + HDR.size <= len(buf):
            o = Op()
            (o.seq, o.op, o.pid, o.ino, o.ino2, o.a, o.b, o.c, l1, l2, dl, _) = \
                HDR.unpack_from(buf, i)
            i += HDR.size
            if i + l1 + l2 + dl > len(buf):
                break  # a record cut by a kill: the call was not recorded as done
            o.p1 = buf[i:i + l1].decode(errors='replace')
            i += l1
            o.p2 = buf[i:i + l2].decode(errors='replace')
            i += l2
            o.data = buf[i:i + dl]
            i += dl
            ops.append(o)
    ops.sort(key=lambda o: o.seq)
    return ops


class Model:
    """The recorded calls turned into per-node change lists.

    A node is a file or directory; an inode number names the node created last with it
    (inode numbers are reused).  Directory changes: ('add', name, node) or ('del', name)
    or ('mv', old, new, node) for a rename within one directory."""

    def __init__(self, ops, roots):
        self.ops = ops
        self.kind = {}        # node -> 'f' or 'd'
        self.cur = {}         # inode -> node
        self.changes = {}     # node -> [(op index, change)]
        self.syncs = {}       # node -> [op index of each fsync/fdatasync]
        self.syncall = []     # op indices of sync(2)
        self.roots = []       # (path, node, volatile)
        self.where = {}       # node -> a path, for messages
        n = 0
        for path, vol in roots:
            node = ('root', n)
            n += 1
            self.kind[node] = 'd'
            self.cur[os.lstat(path).st_ino] = node
            self.roots.append((path, node, vol))
            self.where[node] = path
        self.fresh = 0
        for i, o in enumerate(ops):
            self._add(i, o)

    def _new(self, ino, kind):
        self.fresh += 1
        node = (kind, self.fresh)
        self.kind[node] = kind
        self.cur[ino] = node
        return node

    def _node(self, ino, kind='f'):
        node = self.cur.get(ino)
        if node is None:  # made outside the roots and moved in, or before the trace
            node = self._new(ino, kind)
        return node

    def _chg(self, node, i, c):
        self.changes.setdefault(node, []).append((i, c))

    def _add(self, i, o):
        if o.op in (CREATE, MKDIR):
            node = self._new(o.ino, 'f' if o.op == CREATE else 'd')
            parent = self._node(o.ino2, 'd')
            self.where[node] = self.where.get(parent, '?') + '/' + o.p1
            self._chg(parent, i, ('add', o.p1, node))
        elif o.op == LINK:
            node = self._node(o.ino)
            self._chg(self._node(o.ino2, 'd'), i, ('add', o.p1, node))
        elif o.op in (UNLINK, RMDIR):
            self._chg(self._node(o.ino2, 'd'), i, ('del', o.p1))
        elif o.op == RENAME:
            node = self._node(o.ino)
            src = self._node(o.ino2, 'd') if o.p1 else None
            dst = self._node(o.a & 0xFFFFFFFFFFFFFFFF, 'd') if o.p2 else None  # an inode, as u64
            if src is not None and src == dst:
                self._chg(src, i, ('mv', o.p1, o.p2, node))
            else:
                if src is not None:
                    self._chg(src, i, ('del', o.p1))
                if dst is not None:
                    self._chg(dst, i, ('add', o.p2, node))
            if dst is not None:
                self.where[node] = self.where.get(dst, '?') + '/' + o.p2
        elif o.op in (WRITE, TRUNC, FALLOC):
            self._chg(self._node(o.ino), i, ('data',))
        elif o.op in (FSYNC, FDATASYNC):
            self.syncs.setdefault(self._node(o.ino), []).append(i)
        elif o.op == SYNCALL:
            self.syncall.append(i)

    def durable_upto(self, node, k):
        """Index below which NODE's changes are durable at a crash after op k."""
        last = -1
        for i in self.syncs.get(node, ()):
            if i <= k:
                last = i
        for i in self.syncall:
            if i <= k:
                last = max(last, i)
        return last

    def pending(self, k):
        """{node: (durable change indices, not-durable change indices)} after op k."""
        out = {}
        for node, chs in self.changes.items():
            d = self.durable_upto(node, k)
            dur = [i for i, _ in chs if i <= d]
            rest = [i for i, _ in chs if d < i <= k]
            out[node] = (dur, rest)
        return out


def apply_data(content, o):
    if o.op == WRITE:
        end = o.a + len(o.data)
        if end > len(content):
            content.extend(bytes(end - len(content)))
        content[o.a:end] = o.data
    elif o.op == TRUNC:
        if o.a < len(content):
            del content[o.a:]
        else:
            content.extend(bytes(o.a - len(content)))
    elif o.op == FALLOC:
        end = o.a + o.b
        if o.c & (FALLOC_PUNCH | FALLOC_ZERO):
            stop = min(end, len(content))
            if stop > o.a:
                content[o.a:stop] = bytes(stop - o.a)
        if not (o.c & FALLOC_KEEP_SIZE) and end > len(content):
            content.extend(bytes(end - len(content)))


def materialize(model, keep):
    """Write the state in which exactly the changes in KEEP (op indices, per node) were
    made, into the recorded directories; returns nothing."""
    for path, _, _ in model.roots:
        for name in os.listdir(path):
            p = os.path.join(path, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
    made = {}

    def entries(node):
        ent = {}
        for i, c in model.changes.get(node, ()):
            if i not in keep:
                continue
            if c[0] == 'add':
                ent[c[1]] = c[2]
            elif c[0] == 'del':
                ent.pop(c[1], None)
            elif c[0] == 'mv':
                ent.pop(c[1], None)
                ent[c[2]] = c[3]
        return ent

    def build(node, path, depth):
        if depth > 16:
            return
        for name, child in entries(node).items():
            p = os.path.join(path, name)
            if model.kind[child] == 'd':
                os.mkdir(p, 0o700)
                build(child, p, depth + 1)
            elif child in made:
                os.link(made[child], p)
            else:
                content = bytearray()
                for i, c in model.changes.get(child, ()):
                    if i in keep and c[0] == 'data':
                        apply_data(content, model.ops[i])
                with open(p, 'wb') as f:
                    f.write(content)
                # read after the crash and a reboot: nothing has changed it for a while
                os.utime(p, (AFTER_REBOOT, AFTER_REBOOT))
                made[child] = p

    for path, node, vol in model.roots:
        if not vol:
            build(node, path, 0)


class Oracle:
    def __init__(self, odir):
        self.odir = odir
        self.cache = {}

    def get(self, name):
        if name not in self.cache:
            with open(os.path.join(self.odir, name), 'rb') as f:
                self.cache[name] = f.read()
        return self.cache[name]


def check_bytes(got, synced, later):
    """None if every byte of GOT is SYNCED's, or one of LATER's (bytes), or a zero where
    nothing was synced yet (a hole not yet written: POSIX reads zeros there), else why not."""
    cands = ([synced] if synced is not None else []) + later
    if any(got == c for c in cands):
        return None
    base = len(synced) if synced is not None else 0
    if len(got) < base:
        return 'size %d, synced %d' % (len(got), base)
    hi = max([base] + [len(c) for c in later])
    if len(got) > hi:
        return 'size %d, larger than any write made it (%d)' % (len(got), hi)
    step = 4096
    for s in range(0, len(got), step):
        g = got[s:s + step]
        if any(c[s:s + step] == g for c in cands):
            continue
        if s >= base and not g.strip(b'\0'):
            continue
        for j in range(len(g)):
            x, b = s + j, g[j]
            if any(x < len(c) and c[x] == b for c in cands) or (b == 0 and x >= base):
                continue
            if x < base:
                return 'byte %d is 0x%02x, synced 0x%02x' % (x, b, synced[x])
            return 'byte %d is 0x%02x, never written there' % (x, b)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--trace', required=True)
    ap.add_argument('--root', action='append', default=[])
    ap.add_argument('--volatile', action='append', default=[])
    ap.add_argument('--file', required=True)
    ap.add_argument('--oracle', required=True)
    ap.add_argument('--hcomp', required=True)
    ap.add_argument('--reader', help='command reading FILE through MPI-IO into its last argument')
    ap.add_argument('--reader-every', type=int, default=8,
                    help='run the MPI-IO reader on one state in this many')
    ap.add_argument('--repair-every', type=int, default=4,
                    help='on one readable state in this many, run hcomp fsck --repair and '
                         'check the file again')
    ap.add_argument('--max-states', type=int, default=400)
    ap.add_argument('--random', type=int, default=2, help='random states per crash point')
    ap.add_argument('--seed', type=int, default=46)
    ap.add_argument('--name', default='workload')
    ap.add_argument('--keep', help='copy each violating state here')
    ap.add_argument('--plant', choices=['skip-map-sync', 'skip-segdir-sync'],
                    help="test the explorer: drop one kind of sync from the trace")
    ap.add_argument('--verbose', action='store_true')
    ap.add_argument('--dump', action='store_true', help='print the recorded calls and stop')
    args = ap.parse_args()

    ops = read_trace(args.trace)
    if args.dump:
        for i, o in enumerate(ops):
            print('#%d %s' % (i, o))
        return 0
    if args.plant:
        ops = plant(ops, args.plant, args.file)
    roots = [(os.path.realpath(p), False) for p in args.root] + \
            [(os.path.realpath(p), True) for p in args.volatile]
    devs = {os.lstat(p).st_dev for p, _ in roots}
    if len(devs) != 1:
        sys.exit('explore.py: the roots must be on one file system (inode numbers name files)')
    model = Model(ops, roots)
    oracle = Oracle(args.oracle)
    rng = random.Random(args.seed)
    work = os.path.dirname(os.path.realpath(args.trace))
    out = os.path.join(work, 'explore.out')

    # crash points: after every sync and mark, every call inside begin/end, and an even
    # sample of the rest, bounded by --max-states / states per point
    inside = False
    must, rest = [], []
    for i, o in enumerate(ops):
        if o.op == MARK and o.p1.startswith('begin '):
            inside = True
        elif o.op == MARK and o.p1.startswith('end '):
            inside = False
        if inside or o.op in (FSYNC, FDATASYNC, SYNCALL, MARK, RENAME):
            must.append(i)
        else:
            rest.append(i)
    per_point = 3 + args.random
    budget = max(1, args.max_states // per_point)
    if len(must) > budget:
        must = [must[int(j * len(must) / budget)] for j in range(budget)]
    room = budget - len(must)
    if room >= len(rest):
        pass
    elif room > 0:
        rest = [rest[int(j * len(rest) / room)] for j in range(room)]
    else:
        rest = []
    points = sorted(set(must + rest))

    seen = set()
    stats = {'points': len(points), 'states': 0, 'repaired': 0, 'unreadable_unsynced': 0,
             'mpi_reads': 0, 'repair_checks': 0}
    violations = []
    for k in points:
        synced, later = None, []
        for o in ops[:k + 1]:
            if o.op == MARK:
                word, _, name = o.p1.partition(' ')
                if word == 'synced':
                    synced, later = name, []
                elif word == 'intent':
                    later.append(name)
        pend = model.pending(k)
        states = [('durable only', {n: [] for n in pend}),
                  ('everything', {n: r for n, (_, r) in pend.items()})]
        nodes = [n for n, (_, r) in pend.items() if r]
        for n in nodes[:16]:  # each node alone losing what it had not made durable
            states.append(('all but %s' % (model.where.get(n, str(n)),),
                           {m: (r if m != n else []) for m, (_, r) in pend.items()}))
        for j in range(args.random):
            sel = {}
            for n, (_, r) in pend.items():
                x = rng.random()
                if x < 0.3 or not r:
                    sel[n] = r
                elif x < 0.5:
                    sel[n] = []
                elif x < 0.8 or model.kind[n] == 'd':
                    sel[n] = r[:rng.randrange(len(r) + 1)]
                else:
                    sel[n] = sorted(rng.sample(r, rng.randrange(len(r) + 1)))
            states.append(('random %d' % j, sel))
        for label, sel in states:
            keep = set()
            for n, (dur, _) in pend.items():
                keep.update(dur)
                keep.update(sel.get(n, ()))
            sig = hashlib.sha1(repr(sorted(keep)).encode()).digest()
            if sig in seen:
                continue
            seen.add(sig)
            stats['states'] += 1
            materialize(model, keep)
            why = check_state(args, k, synced, later, oracle, out, stats)
            if why:
                v = '%s: crash after #%d (%s), state "%s": %s' % (
                    args.name, k, ops[k], label, why)
                violations.append(v)
                print('VIOLATION ' + v, flush=True)
                if args.keep:
                    dest = os.path.join(args.keep, '%s-%d-%d' % (args.name, k, len(violations)))
                    for path, _, _ in model.roots:
                        shutil.copytree(path, os.path.join(dest, path.strip('/').replace('/', '_')),
                                        symlinks=True)
            elif args.verbose:
                print('ok after #%d (%s) "%s"' % (k, ops[k], label))
    print('%s: %d calls recorded, %d crash points, %d states checked (%d needed fsck --repair, '
          '%d unreadable before any sync; %d also read through MPI-IO, %d read again after '
          'fsck --repair), %d violations' % (
              args.name, len(ops), stats['points'], stats['states'], stats['repaired'],
              stats['unreadable_unsynced'], stats['mpi_reads'], stats['repair_checks'],
              len(violations)))
    return 1 if violations else 0


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return p.returncode, p.stdout.decode(errors='replace')


def export(args, out):
    if os.path.exists(out):
        os.unlink(out)
    rc, msg = run([args.hcomp, 'export', '--force', args.file, out])
    if rc != 0:
        return None, msg.strip()
    with open(out, 'rb') as f:
        return f.read(), ''


def check_state(args, k, synced, later, oracle, out, stats):
    """Why the state on disk breaks an invariant, or None."""
    s = oracle.get(synced) if synced else None
    lat = [oracle.get(n) for n in later]
    got, msg = export(args, out)
    if got is None:
        if s is None:
            stats['unreadable_unsynced'] += 1
            return None
        rc, fmsg = run([args.hcomp, 'fsck', '--repair', args.file])
        got, msg2 = export(args, out)
        if got is None:
            return 'synced data unreadable: export: %s; fsck --repair (exit %d): %s; then: %s' % (
                msg[-300:], rc, fmsg.strip()[-300:], msg2[-300:])
        stats['repaired'] += 1
    why = check_bytes(got, s, lat)
    if why:
        return 'hcomp export: ' + why
    if args.reader and stats['states'] % args.reader_every == 0:
        stats['mpi_reads'] += 1
        rc, rmsg = run(args.reader.split() + [out + '.mpi'])
        if rc != 0:
            return 'export read it but MPI-IO did not: ' + rmsg.strip()[-300:]
        with open(out + '.mpi', 'rb') as f:
            got2 = f.read()
        if got2 != got:
            return 'MPI-IO read %d bytes that differ from export\'s %d' % (len(got2), len(got))
    if s is not None and stats['states'] % args.repair_every == 1:
        # a repair of a state that reads must not lose what the state had synced
        stats['repair_checks'] += 1
        rc, fmsg = run([args.hcomp, 'fsck', '--repair', args.file])
        got3, msg3 = export(args, out)
        if got3 is None:
            return 'readable, then unreadable after fsck --repair (exit %d: %s): %s' % (
                rc, fmsg.strip()[-300:], msg3[-300:])
        why = check_bytes(got3, s, lat)
        if why:
            return 'after fsck --repair (exit %d): %s' % (rc, why)
    return None


def plant(ops, bug, path):
    """Bugs the explorer must catch: the mapping file's (or the writer logs') fsyncs
    dropped, or every directory fsync dropped."""
    inos = set()
    out = []
    for o in ops:
        if o.op in (CREATE, LINK, RENAME):
            name = o.p2 if o.op == RENAME else o.p1
            if bug == 'skip-map-sync' and (name == os.path.basename(path) or name.endswith('.log')):
                inos.add(o.ino)
        if bug == 'skip-map-sync' and o.op in (FSYNC, FDATASYNC) and o.ino in inos:
            continue
        if bug == 'skip-segdir-sync' and o.op == FSYNC and o.p1 == '' and o.ino in DIRS(ops):
            continue
        out.append(o)
    return out


_dirs = None


def DIRS(ops):
    global _dirs
    if _dirs is None:
        _dirs = {o.ino for o in ops if o.op == MKDIR} | {o.ino2 for o in ops if o.op in (CREATE, MKDIR)}
    return _dirs


if __name__ == '__main__':
    sys.exit(main())
