/* Tier speed probes shared by a user's processes on a node (tiers/monitor.c probes a tier
 * directory whose speed no configuration states). Without it every process of every job
 * wrote, synced and read back 4 MiB in every such directory at its start: on a parallel
 * file system, 4 GiB and a thousand syncs for a job of 1,024 ranks, to learn a starting
 * value that the process's own I/O replaces after a few writes; here, 12% of a short job's
 * durable writes. Now the first process probes and writes what it found to a small file
 * in a private per-user directory of the node; the others, and later jobs, read it for
 * ten minutes (HCOMP_PROBE_MAX_AGE).
 *
 * The cache directory is $HCOMP_CACHE_DIR if set ("off": no cache, every process probes),
 * else /dev/shm/hcomp-UID.cache, else $TMPDIR (or /tmp)/hcomp-UID.cache; created mode
 * 0700, and used only if it is a real directory of this user that no one else can enter
 * (else every process probes, as before). One file per file system, named by its device
 * number ("probe-DEV"): "hcomp-probe 2 READ_Bps WRITE_Bps READ_ALL_Bps WRITE_ALL_Bps
 * UNIX_TIME" (one stream's speeds, then HCOMP_PROBE_STREAMS streams' together; a version-1
 * line, one stream's alone, is probed again). Directories on one
 * file system share its probe: when each directory had its own, each new one (a job's new
 * output directory, a test's) was probed again, each time under whatever other I/O ran
 * (this machine's disk: 0.08 to 1.6 GB/s read back over one hour's probes). */
#ifndef HCOMP_PROBE_CACHE_H
#define HCOMP_PROBE_CACHE_H

/* Seconds a cached probe stands for a new process. Ten minutes: a probe taken under
 * another job's I/O misleads every job of the node while it stands (here one taken during
 * the test suite read 123 MB/s and wrote 15 MB/s, against 1.7 GB/s and 580 MB/s idle, and
 * for the hour it stood the engine compressed a VPIC-IO write into zstd and blosc-lz4 that
 * it stores mostly as it is with the idle figures, taking 30% longer). A probe costs 36 MiB
 * of I/O (one stream, then two; about twice one stream's 25 ms), once per node, user and file system in that
 * time. */
#define HCOMP_PROBE_MAX_AGE 600.0

#include "monitor.h"

enum {
    HCOMP_PROBE_NO_CACHE = -1,  /* probe alone: there is no cache to share it through */
    HCOMP_PROBE_MINE = 0,       /* nothing fresh cached: probe, then hcomp_probe_cache_end */
    HCOMP_PROBE_CACHED = 1,     /* *read_Bps and *write_Bps hold a fresh probe */
    HCOMP_PROBE_BUSY = 2        /* another process is probing dir now: ask again later */
};

/* What to do about a probe of dir; with HCOMP_PROBE_MINE, *lock_fd holds the lock that
 * keeps the node's other processes from probing dir meanwhile. */
int hcomp_probe_cache_begin(const char *dir, hcomp_probe_speeds *out, int *lock_fd);
/* Store a probe (when its one-stream speeds are positive) and release the lock. */
void hcomp_probe_cache_end(int lock_fd, const hcomp_probe_speeds *p);
/* A fresh probe of dir's file system, read without the lock (while another process
 * probes, the entry may be empty or old: then 0); 1 and *out filled, else 0. */
int hcomp_probe_cache_peek(const char *dir, hcomp_probe_speeds *out);

#endif
