/* Where one opener of a file puts its pieces on a tier: the tier directory's checks, the
 * file's segment directory there, the opener's share of the tier's capacity (a ledger
 * shared by every writer of the tier, tier_ledger.c) and its segment file. Knows tiers
 * and paths, not hcomp files: the file layer passes in what a writer is for (the file's
 * path and id, the permissions of its pieces, how many processes share it). */
#ifndef HCOMP_TIER_SPACE_H
#define HCOMP_TIER_SPACE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include "hcomp_error.h"
#include "tier_config.h"

/* One opener's writing state on one tier: where its pieces go, its share of the tier's
 * capacity, its segment file. */
typedef struct hcomp_tier_writer {
    int ready;                 /* directory checked, budget computed */
    int volatile_tier;         /* its data is lost with the node's memory (hcomp_tier_volatile) */
    int full;                  /* the tier is full or failing: placement skips it */
    char why[256];             /* what it said */
    char base[PATH_MAX];       /* the tier's directory (for this file) */
    char dir[PATH_MAX];        /* this file's segment directory on the tier */
    uint64_t budget;           /* bytes reserved and not yet written (UINT64_MAX: unlimited) */
    uint64_t ledger_id;        /* this opener's line in the tier's capacity ledger */
    int in_ledger;
    uint64_t avail_cache;      /* room others leave, as last seen in the ledger */
    double avail_time;         /* when (hcomp_now), 0: never */
    int mon;                   /* the system monitor's handle for the tier directory */
    double exhausted_at;       /* when a reservation last came back empty (0: never) */
    int seg_fd;                /* current segment file, -1 until the first piece */
    uint64_t seg_id;
    uint64_t seg_tail;
    uint64_t flush_from;       /* where the segment's bytes not yet sent to storage begin
                                  (hcomp_tier_writer_flush_behind) */
    char seg_name[32];
    dev_t seg_dev;             /* the segment file as created (its path must lead to it) */
    ino_t seg_ino;
    int names_unsynced;        /* a segment (1), and its directory too (2), were created
                                  since the last sync: their names are not yet durable */
} hcomp_tier_writer;

/* tier_space.c */
/* The directory a tier stands for, for the file at file_path (@filedir: its directory). */
int hcomp_tier_base_dir(const hcomp_tier *t, const char *file_path, char *out, size_t n);
int hcomp_tier_check(const hcomp_tier *t, const char *file_path, hcomp_error *err);
/* Whether the tier's data is lost with the node's memory: as configured ("volatile"),
 * else whether its directory is on a RAM-backed file system (tmpfs, ramfs). */
int hcomp_tier_volatile(const hcomp_tier *t, const char *file_path);
/* Ready w for the file at file_path whose id (hex) is file_id: its segment directory's
 * name, its line in the ledger, its watch by the monitor. */
int hcomp_tier_writer_prepare(hcomp_tier_writer *w, const hcomp_tier *tier, const char *file_path,
                              const char *file_id, hcomp_error *err);
/* w's segment file, created (with mode perm, its directory too) on first use: *is_new. */
int hcomp_tier_writer_segment(hcomp_tier_writer *w, const hcomp_tier *tier, const char *file_path,
                              mode_t perm, int *is_new, hcomp_error *err);
/* Start the write-back to storage of what w's segment got since the last call, without
 * waiting for it, once at least `after` bytes wait (0: never; volatile tiers: never): a
 * durable sync then finds little left to write, and the disk works while the writer
 * does. Returns the bytes whose write-back was started, and in *seconds how long starting
 * it took (0 when nothing was started: the common case costs no clock read). */
uint64_t hcomp_tier_writer_flush_behind(hcomp_tier_writer *w, uint64_t after, double *seconds);
/* Close w's segment, give back its reservation, and forget it. */
void hcomp_tier_writer_close(hcomp_tier_writer *w, const hcomp_tier *tier);
/* Remove w's segment file (and the segment directory, if that leaves it empty). */
void hcomp_tier_writer_remove_segment(hcomp_tier_writer *w);
/* Bytes held in a tier directory by hcomp (its files' segment directories). */
uint64_t hcomp_tier_usage(const char *tier_dir);
/* Emulated tiers: sleep until bytes took as long as the tier's bandwidth and latency
 * say (t0: when the I/O began). */
void hcomp_tier_emulate(const hcomp_tier *tier, uint64_t bytes, int is_write, double t0);

/* tier_ledger.c: capacity shared by all writers of a tier */
/* Reserve at least want bytes for w (in chunks sized for sharers writers of the file). */
int hcomp_tier_reserve(hcomp_tier_writer *w, const hcomp_tier *tier, int sharers, uint64_t want,
                       hcomp_error *err);
/* Bytes w could place on the tier now (its reservation plus what the ledger leaves
 * free), refreshed at most every second (and after each reservation). */
uint64_t hcomp_tier_available(hcomp_tier_writer *w, const hcomp_tier *tier);
void hcomp_tier_release(hcomp_tier_writer *w, const hcomp_tier *tier);

#endif
