/* What the `hcomp` command-line tool does to whole files, kept in the library so that
 * it is unit-tested without the tool: checking and repairing (fsck), draining every
 * piece to the last tier. The tool itself (cli/) only parses arguments and prints. */
#ifndef HCOMP_TOOLS_H
#define HCOMP_TOOLS_H

#include <stdint.h>
#include "hcomp.h"
#include "engine/stats.h"

/* How a long operation talks to its user. Either function may be NULL. */
typedef struct hcomp_tool_io {
    /* one finding, a complete line without its newline */
    void (*say)(void *ctx, const char *line);
    /* done of total units of what (bytes) so far */
    void (*progress)(void *ctx, const char *what, uint64_t done, uint64_t total);
    void *ctx;
} hcomp_tool_io;

/* The live pieces by the blocks they are framed in (docs/FORMAT.md): [0] unframed (format
 * version 1), [k] blocks of 4 KiB << (k - 1). Kept out of hcomp_stats, whose size is
 * part of the library's ABI. */
#define HCOMP_STATS_FRAMES 16
typedef struct hcomp_frame_stats {
    uint64_t raw_bytes;         /* logical bytes they hold */
    uint64_t stored_bytes;      /* headers included */
    uint64_t pieces;
} hcomp_frame_stats;

/* hcomp_stat_path, and when frames is not NULL the same pieces by framing. */
int hcomp_stat_path_frames(const char *path, hcomp_stats *st,
                           hcomp_frame_stats frames[HCOMP_STATS_FRAMES], hcomp_error *err);

/* What `hcomp info` says of a file's mapping file and log, beside its statistics (so
 * that the tool needs no view of the handle, file_internal.h). */
typedef struct hcomp_file_facts {
    unsigned version;           /* format version */
    char id[33];                /* file id, hex */
    uint64_t created_ns;        /* when the file was created (ns since the epoch) */
    uint64_t map_bytes;         /* the mapping file's size */
    uint64_t segments, pieces;  /* recorded in the log (live or not) */
    uint64_t damaged_bytes;     /* bytes of the log skipped as damage */
    /* the engine statistics its writers recorded at their closes (its STATS records, in the
     * mapping file and the writer logs), summed (the recorded counters and times of
     * engine/stats.h), and how many records there were (one that does not read is left out) */
    hcomp_file_stats recorded;
    uint64_t stats_records;
} hcomp_file_facts;

/* The facts of the file at path, its log replayed once (read only, nothing changed). */
int hcomp_file_facts_path(const char *path, hcomp_file_facts *facts, hcomp_error *err);

typedef struct hcomp_fsck_result {
    /* the mapping file */
    int map_missing;            /* there is no mapping file at the path */
    int header_code;            /* HCOMP_OK, or why the header cannot be used */
    uint64_t map_bytes;
    uint64_t records;           /* valid records */
    uint64_t damaged_bytes;     /* bytes of the log that are no valid record */
    uint64_t lost_records;      /* of them, records that had been written whole */
    uint64_t torn_bytes;        /* an incomplete record at the end (a torn append) */
    /* the data */
    uint64_t logical_size, live_bytes;
    uint64_t segments, segments_missing;    /* missing: named, holding live data, gone */
    uint64_t pieces, live_pieces, bad_pieces, remote_pieces;
    uint64_t unreadable_bytes;  /* logical bytes that cannot be read back */
    uint64_t orphan_files, orphan_bytes;    /* segment files no record names */
    uint64_t temporaries;       /* unfinished new mapping files beside it (a killed compaction) */
    uint64_t unconfirmed;       /* writes no sync confirmed whose pieces never came (a crash
                                   before their sync): set aside, not damage */
    /* a rebuild from the pieces' headers (header damaged or mapping file lost) */
    uint64_t found_pieces;      /* pieces found and verified in segment files */
    uint64_t lost_segment_bytes;/* bytes of segment files that hold no valid piece */
    uint64_t overlap_bytes;     /* logical bytes held by pieces of several segments */
    /* what --repair did */
    int rewritten;              /* the log was written again without its damage */
    int rebuilt;                /* the mapping file was rebuilt */
    uint64_t orphans_removed, temporaries_removed;
    char backup[4096];          /* where the damaged mapping file was kept ("" if none) */
    /* anything still wrong after the run (exit status 1 of `hcomp fsck`) */
    int problems;
} hcomp_fsck_result;

/* Check the file at path: the mapping file's header and every record, every segment
 * file, and every live piece (header, checksum, decoding). With repair set:
 * - a log with damaged or torn records is written again without them (atomically);
 * - a mapping file with a damaged header, or one that is gone, is rebuilt from the
 *   headers of the pieces in the file's segment directories (found on the tiers of
 *   config, NULL for $HCOMP_CONFIG or the embedded default, and in the file's own
 *   directory); the damaged one is kept beside it;
 * - segment files that no record names (left by a writer that died) are removed.
 * Damaged pieces cannot be repaired: their logical ranges are reported.
 * Returns HCOMP_OK when the check ran (res says what it found), or an error when it
 * could not (no such file and nothing to rebuild from, a future format version, ...).
 * Run it only on a file no job has open. */
int hcomp_fsck(const char *path, const char *config, int repair, const hcomp_tool_io *io,
               hcomp_fsck_result *res, hcomp_error *err);

typedef struct hcomp_drain_result {
    uint64_t pieces, stored_before, stored_after;   /* the pieces moved */
    uint64_t segments_removed;                      /* emptied segment files removed */
    char tier[64];                                  /* the tier they were moved to */
    uint64_t elsewhere;         /* live pieces left on another node's node-local tier */
    char elsewhere_node[64];    /* (one of) that node */
} hcomp_drain_result;

/* Move every live piece that is not on the last tier of f's configuration there (but
 * those on another node's node-local tier, which only that node reads: counted in
 * res->elsewhere),
 * re-encoded for it (RELOCATE records), then remove the segment files left without
 * live data. The last tier must be shared. f must be open for writing; the call takes
 * its lock (the caller must not hold it). */
int hcomp_drain_all(hcomp_file *f, const hcomp_tool_io *io, hcomp_drain_result *res,
                    hcomp_error *err);

typedef struct hcomp_reclaim_result {
    int ran;                    /* there was enough to reclaim, and no other opener */
    int damaged;                /* the log is damaged: nothing was done (run hcomp fsck) */
    int log_kept;               /* the log could not be replaced (another owner, a link, a
                                   piece whose live bytes one record cannot list) */
    int log_rewritten;
    uint64_t dead_found;        /* bytes of dead pieces found (headers included) */
    uint64_t pieces_moved, bytes_moved;     /* copied out of mostly dead segments */
    uint64_t segments_removed;
    uint64_t bytes_freed;       /* blocks given back to the file systems */
    uint64_t log_before, log_after;
    uint64_t coalesced_pieces, coalesced_bytes;     /* small pieces written again whole
                                                       (hcomp_compact; file/coalesce.c) */
} hcomp_reclaim_result;

/* Reclaim everything dead in the file at path now (hcomp compact): open it for writing
 * with config (NULL: $HCOMP_CONFIG or the embedded default), take the openers' lock
 * exclusively (HCOMP_E_IO with a message if another process has the file open), write
 * runs of small pieces again as whole pieces (as the last close does), move the
 * live pieces out of segments that hold dead ones, remove emptied segments, rewrite the
 * log as a snapshot. */
int hcomp_compact(const char *path, const char *config, const hcomp_tool_io *io,
                  hcomp_reclaim_result *res, hcomp_error *err);
/* The same, and a file of an older format version than version (3) is written again as
 * one of that version (its log rewritten; older hcomp cannot read it then); 0: kept. */
int hcomp_compact_to(const char *path, const char *config, unsigned version,
                     const hcomp_tool_io *io, hcomp_reclaim_result *res, hcomp_error *err);

/* What a file costs on storage, as the file systems count it. */
typedef struct hcomp_footprint {
    uint64_t map_bytes;         /* the mapping file */
    uint64_t allocated;         /* blocks of its segment files (st_blocks) */
    uint64_t live;              /* bytes of live pieces, headers included */
    uint64_t dead;              /* of dead pieces in segment files still there (their blocks
                                   may be punched out already: allocated tells) */
    uint64_t segments, segments_dead;   /* segment files there; of them, without live data */
    uint64_t segments_missing;  /* segment files with live data that are gone */
    size_t ntiers;
    struct {
        char name[64];
        uint64_t allocated, live, dead;
    } tier[16];
} hcomp_footprint;

int hcomp_footprint_path(const char *path, hcomp_footprint *fp, hcomp_error *err);

typedef struct hcomp_orphans_result {
    uint64_t files;             /* hcomp files in the directory */
    uint64_t orphans;           /* segment directories no hcomp file there uses */
    uint64_t orphan_bytes;      /* allocated to their segment files */
    uint64_t removed, removed_bytes;
    uint64_t kept;              /* orphans not removed (other entries in them, an error) */
    uint64_t unreadable;        /* files that could not be read (nothing is removed then) */
} hcomp_orphans_result;

/* The segment directories ".NAME.ID.hcd" in dir whose ID is no hcomp file's there (left
 * by files removed with rm or emptied with truncate(2)); each is reported through io,
 * and with remove set its segment files and then it are removed (one holding anything
 * else is kept). A file moved to another directory with mv still uses the directories
 * of its old name here: the caller must rule that out before removing. Nothing is
 * removed if a file of dir cannot be read (its id unknown). */
int hcomp_orphans(const char *dir, int remove, const hcomp_tool_io *io,
                  hcomp_orphans_result *res, hcomp_error *err);

#endif
