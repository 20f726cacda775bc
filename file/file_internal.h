/* The state of one open logical file, shared by file/file_*.c. */
#ifndef HCOMP_FILE_INTERNAL_H
#define HCOMP_FILE_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "hcomp.h"
#include "hcomp_driver.h"
#include "extent_map.h"
#include "hcomp_model.h"
#include "engine/manager.h"
#include "engine/hcdp.h"
#include "engine/engine.h"
#include "engine/stats.h"
#include "options.h"
#include "mapfile.h"
#include "tiers/piece_header.h"
#include "tiers/tier_config.h"
#include "tiers/monitor.h"
#include "tiers/tier_space.h"

/* Decoded blocks (or unframed pieces) kept per open file for reads: at most this many,
 * and at most HCOMP_READ_CACHE_BYTES of them (so large ones get fewer slots); and the
 * block tables of the framed pieces read last. */
#define HCOMP_READ_CACHE_SLOTS 32
#define HCOMP_READ_CACHE_BYTES (32u << 20)
#define HCOMP_TABLE_CACHE_SLOTS 256     /* by piece number: small reads over many pieces */

/* Logical files end at or before 2^48 bytes (the piece header's offset field). */
#define HCOMP_PIECE_MAX_OFFSET_BYTES (UINT64_C(1) << 48)

/* A segment file named in the log. */
typedef struct hcomp_segment {
    uint64_t id;
    char *tier;          /* tier name as recorded */
    char *path;          /* absolute path of the segment file; NULL if never recorded */
    char *node;          /* node that wrote it */
    int node_local;      /* on a node-local tier: readable only on that node */
    int fd;              /* read descriptor, opened on first use; -1 */
    int indexed;         /* its pieces are in the location table (file_log.c) */
    uint64_t seen_len;   /* its length when refresh number seen_at looked (0: never) */
    uint64_t seen_at;
} hcomp_segment;

/* A stored piece named in the log. */
typedef struct hcomp_piece {
    uint32_t seg;        /* index into segs */
    uint64_t seg_off;    /* offset of the piece header in the segment */
    uint32_t stored_len, raw_len, crc;
    uint8_t codec, filter;
    int16_t level;       /* codec level, HCOMP_MAP_LEVEL_UNKNOWN if not recorded */
    uint8_t frame;       /* 0 unframed (format 1), else framed in blocks (docs/FORMAT.md) */
    uint64_t start;      /* logical offset of its first extent (header check) */
    uint32_t ord;        /* where its record stands in the file's order (f->orders) */
} hcomp_piece;

/* Where a record stands in a file's order (format version 3, docs/FORMAT.md "Writer
 * logs"): by stamp, then writer id; the mapping file's own records come first (both zero),
 * in their log's order. */
typedef struct hcomp_order {
    uint64_t stamp, writer;
} hcomp_order;

/* A writer log of a version-3 file (file/writer_log.c). */
typedef struct hcomp_wlog {
    char *name;          /* file name in the log directory */
    int fd;              /* read (another writer's) or read-write (this opener's) */
    uint64_t writer;     /* from its header */
    uint64_t consumed;   /* bytes of it applied, header included */
    uint32_t ord;        /* the order its next records are in (its last ORDER record) */
    int settled;         /* not changed for a while when last read (a writer that died,
                            or the file read after a crash and a reboot) */
    uint64_t durable_to; /* records before this offset, and their pieces, were made
                            durable by a sync (its ORDER records say; 0: none) */
    int says_durable;    /* its ORDER records carry that offset (writers since it was
                            defined): its unconfirmed pieces may be torn by a crash */
    unsigned char *buf;  /* its tail, while a refresh applies it */
    size_t buf_cap, buf_len;
} hcomp_wlog;

/* A writer log's PIECE record past the offset its writer's last sync confirmed, whose
 * piece is not (yet) in its segment: another node's write not arrived yet, or one a
 * crash tore (docs/FORMAT.md, "Durable steps").  Applied, in its order, once the piece
 * is there or a sync confirms it; never if neither happens. */
typedef struct hcomp_unconfirmed {
    unsigned char *rec;  /* the record's bytes (frame included) */
    size_t len;
    uint32_t ord, log;
    uint64_t at;         /* its offset in the log */
} hcomp_unconfirmed;

/* A SIZE record of a version-3 file, kept to place records that arrive late. */
typedef struct hcomp_size_rec {
    uint32_t ord;
    int mode;
    uint64_t size;
} hcomp_size_rec;

/* A run of the write-behind buffer (file/write_buffer.c): logical bytes [off, off+len),
 * held at data + at; in a task (hcomp_file_write_runs), at is unused. */
typedef struct hcomp_wrun {
    uint64_t off, len, at;
} hcomp_wrun;

typedef struct hcomp_wbuf {
    hcomp_wrun *run;           /* disjoint, not touching, in offset order */
    size_t nruns, run_cap;
    unsigned char *data;       /* the runs' bytes (and what merged runs left behind) */
    size_t data_cap;
    uint64_t used;             /* bytes of data in use */
    uint64_t bytes;            /* the runs' bytes */
    unsigned char *out;        /* the runs' bytes in order, for the task (and compaction) */
    size_t out_cap;
    int dtype;                 /* the element type the writes were announced with */
} hcomp_wbuf;

struct hcomp_file {
    char *path;
    int map_fd;
    int writable;
    int dir_unsynced;          /* the file's directory not yet synced by this opener */
    int open_locked;           /* holds the openers' lock (shared) on the mapping file */
    mode_t perm;
    int sharers;
    hcomp_options opts;
    hcomp_tier_config cfg;
    hcomp_map_header hdr;
    char id_hex[33];

    /* replayed log */
    uint64_t consumed;         /* bytes of the mapping file applied */
    uint64_t generation;       /* counts replays that applied records */
    uint64_t skipped;          /* damaged bytes passed over */
    uint64_t lost_records;     /* damaged records that had been written whole: reads fail */
    uint64_t lost_at;          /* the mapping file offset of the first */
    uint64_t tail_stats;       /* bytes of the STATS records that end the log (a snapshot
                                  keeps them) */
    hcomp_segment *segs;
    size_t nsegs, capsegs;
    hcomp_piece *pieces;
    size_t npieces, cappieces;
    hcomp_extent_map map;
    hcomp_extent *replayed;        /* extents of the records being replayed, not yet in map */
    size_t nreplayed, replayed_cap;
    uint64_t size;
    uint32_t *loc;             /* hash of piece locations (segment, offset) -> piece + 1 */
    size_t loc_cap, loc_used;
    int loc_segments, loc_all; /* segments indexed one by one; then all of them (file_log.c) */
    unsigned char *logbuf;
    size_t logbuf_cap;

    /* version 3 (file/writer_log.c): each writer appends to a log of its own in logdir;
     * readers apply every log's records in the file's order */
    char logdir[PATH_MAX];
    hcomp_wlog *wlogs;
    size_t nwlogs, capwlogs;
    int own_wlog;              /* this opener's log in wlogs; -1 before its first append */
    int atomic;                /* MPI's atomic mode (hcomp_file_set_atomic) */
    unsigned upgrade_to;       /* hcomp compact: the format version its rewrite gives */
    uint64_t writer_id;        /* this opener's, random */
    struct timespec logdir_mtime, logdir_ctime;   /* as last listed */
    ino_t logdir_ino;
    hcomp_order *orders;       /* [0]: the mapping file's own records */
    size_t norders, caporders;
    uint32_t cur_ord;          /* the order of the records being applied */
    uint32_t max_ord;          /* the newest order applied */
    uint64_t stamp_seen;       /* the largest stamp of any record read */
    uint64_t last_stamp;       /* this writer's last */
    hcomp_size_rec *sizes;     /* SIZE records of writer logs */
    size_t nsizes, capsizes;
    hcomp_map_record *pending_reloc;  /* RELOCATEs of pieces not yet read */
    size_t npending, cappending;
    uint64_t refreshes;        /* writer-log refreshes so far (segment lengths seen) */
    hcomp_unconfirmed *unconfirmed;  /* PIECE records not applied: their piece is not there */
    size_t nunconfirmed, capunconfirmed;
    uint64_t wlog_durable;     /* this writer's log: the offset its last sync confirmed */
    uint64_t wlog_marked_end;  /* its size after that confirmation */
    hcomp_bytes wstats;        /* the STATS records of the writer logs (a fold keeps them) */
    char lost_log[NAME_MAX + 1];  /* the writer log of the first lost record, if one */

    /* writing */
    hcomp_tier_writer tw[HCOMP_MAX_TIERS];
    unsigned char *scratch;    /* compressed output */
    size_t scratch_cap;
    hcomp_bytes batch;         /* records of the task being written */
    hcomp_job *jobs;           /* the compression manager's jobs, reused across tasks */
    size_t njobs_cap;
    hcomp_wbuf wbuf;           /* small writes not yet written (hcomp_write_buffer) */

    /* the decision: the engine's state for this file (its settings come from opts) */
    hcomp_engine eng;
    hcomp_file_stats stats;

    /* the background drain (hcomp_drain=background) shares the file with the caller */
    pthread_mutex_t lock;
    pthread_cond_t drain_wake;
    pthread_t drain_thread;
    int drain_running, drain_stop;
    atomic_int callers;        /* callers waiting for the lock: the drain lets them in */
    /* write-back (hcomp_drain=writeback): the closed handle waits in the process's queue
     * (file/writeback.c); a delete of the file in this process cancels its drain */
    struct hcomp_file *wb_next;
    atomic_int drain_cancel;
    dev_t wb_dev;              /* its mapping file, when it was queued */
    ino_t wb_ino;
    int wb_queued;             /* closed, its rest in the write-back queue */
    char node[256];            /* the node this opener runs on (hcomp_node_name at open): its
                                  write-back thread, which outlives the handle, keeps it */
    struct stat wb_map_st;     /* the mapping file's state then, and its header bytes */
    unsigned char wb_map_hdr[HCOMP_MAP_HEADER_SIZE];
    int stats_printed;         /* its statistics were printed at its close already */
    /* a read that failed on a piece of another node's node-local tier (file_read.c waits
     * for its write-back): which segment, which bytes */
    int remote_miss;
    size_t remote_seg;
    uint64_t remote_off, remote_len;
    double last_io;            /* hcomp_now() of the caller's last operation */

    /* reading */
    unsigned char *rbuf;       /* stored bytes of one piece, or of a read's blocks */
    size_t rbuf_cap;
    unsigned char *unfilter;   /* decoded bytes before the filter is undone */
    size_t unfilter_cap;
    unsigned char *scan_out;   /* one decoded block of hcomp_piece_scan_blocks (fsck) */
    size_t scan_out_cap;
    /* the logical bytes of the blocks decoded last (least recently used goes first):
     * a piece's bytes never change, so entries stay valid until the pieces are
     * renumbered (a log snapshot) */
    struct hcomp_read_cache {
        unsigned char *buf;
        size_t cap;
        int64_t piece;         /* -1: empty */
        uint32_t block;        /* 0 for an unframed piece */
        uint32_t nblk;         /* the blocks from there it holds (pieces stored as they are) */
        uint64_t used;         /* when last used (f->cache_tick) */
    } cache[HCOMP_READ_CACHE_SLOTS];
    uint64_t cache_tick;
    /* block tables of framed pieces, by piece number, checked by where the piece is and its
     * checksum */
    struct hcomp_table_cache {
        uint64_t seg_id, seg_off;
        uint32_t crc, nblocks;
        int valid;
        unsigned char *t;      /* the table's bytes */
        uint64_t *at;          /* offset of each block's stored bytes in the payload */
        size_t t_cap, at_cap;
    } tables[HCOMP_TABLE_CACHE_SLOTS];
    /* sequential reads (file/read_ahead.c): where the next read of the run would start,
     * how many reads the run has had, the logical end of what was advised */
    uint64_t ra_next, ra_to;
    unsigned ra_run;
    /* strided runs (file/read_ahead.c): where the current run started, where the one
     * before started and how long it was, the stride of a pattern seen (0: none), and
     * where the first of its runs not yet advised starts */
    uint64_t ra_run_start, ra_prev_start, ra_prev_len, ra_stride, ra_stride_to;
    int ra_seq;                /* the read being made continues a sequential run */
    struct hcomp_read_unit *units;     /* a read's blocks to fetch and decode */
    size_t units_cap;
    uint32_t *unit_crcs;               /* the checksums of units of several blocks */
    size_t unit_crcs_cap;
    hcomp_job *rjobs;                  /* their decode jobs */
    size_t rjobs_cap;
};

/* The public file operations take f->lock (file/file_api.c) and call these. */
int hcomp_file_pwrite_locked(hcomp_file *f, const void *buf, uint64_t len, uint64_t off,
                             hcomp_error *err);
int hcomp_file_pwrite_buffered_locked(hcomp_file *f, const void *buf, uint64_t len,
                                      uint64_t off, hcomp_error *err);
int hcomp_file_pread_locked(hcomp_file *f, void *buf, uint64_t len, uint64_t off,
                            uint64_t *nread, hcomp_error *err);
int hcomp_file_close_locked(hcomp_file *f, hcomp_error *err);
int hcomp_file_set_options_locked(hcomp_file *f, const hcomp_options *opts, hcomp_error *err);
int hcomp_file_sync_locked(hcomp_file *f, hcomp_error *err);
int hcomp_file_size_locked(hcomp_file *f, uint64_t *size, hcomp_error *err);
int hcomp_file_truncate_locked(hcomp_file *f, uint64_t size, hcomp_error *err);
int hcomp_file_extend_locked(hcomp_file *f, uint64_t size, hcomp_error *err);

/* Open the file at path read-only to replay its log (stat, footprint, delete). */
int hcomp_file_open_replay(const char *path, hcomp_file **out, hcomp_error *err);

/* file/file_log.c */
int hcomp_log_refresh(hcomp_file *f, hcomp_error *err);
/* Bytes of the mapping log a refresh reads at a time (8 MiB; a variable so that the tests
 * and fuzzers can replay in tiny chunks and compare). */
extern size_t hcomp_log_chunk;
/* HCOMP_E_CORRUPT with a message when the log lost a record written whole (what it
 * recorded cannot be known, so no read can be trusted), else HCOMP_OK. */
int hcomp_log_check_lost(const hcomp_file *f, hcomp_error *err);
int hcomp_log_append(hcomp_file *f, const hcomp_bytes *records, hcomp_error *err);
/* Whether a PIECE record set aside (its piece not there) is in a writer log changed in
 * the last seconds: its piece may still be on its way (another node's write-behind, or
 * flush-behind after its writer's close), so nothing may drop the record yet. */
int hcomp_log_set_aside_settling(const hcomp_file *f);
/* fsync where this opener's records go (its writer log, or the mapping file), and in
 * format 3 the name of the log's directory once: what it appended survives a crash */
int hcomp_log_durable(hcomp_file *f, hcomp_error *err);
void hcomp_log_free(hcomp_file *f);
/* Whether a is later than b in the file's order. */
int hcomp_order_later(const hcomp_file *f, uint32_t a, uint32_t b);

/* file/writer_log.c: the writer logs of a version-3 file */
/* f->logdir from the path and file id (at open) */
int hcomp_wlog_dir_init(hcomp_file *f, hcomp_error *err);
/* List the log directory (when it changed, or always when force) and add the logs of
 * the mapping file's generation not yet known. */
int hcomp_wlog_scan(hcomp_file *f, int force, hcomp_error *err);
/* Append records to this opener's log (created on first use), after an ORDER record. */
int hcomp_wlog_append(hcomp_file *f, const hcomp_bytes *records, hcomp_error *err);
/* Make this opener's log durable (and seen by other clients of the file system). */
int hcomp_wlog_sync(hcomp_file *f, hcomp_error *err);
/* After a sync made this opener's pieces and log durable: an ORDER record saying so up
 * to the log's end, so that readers after a crash can tell the records a crash may have
 * torn from damage (docs/FORMAT.md, "Durable steps"). Not synced itself: it is only a
 * hint, and the next sync makes it durable. */
int hcomp_wlog_confirm(hcomp_file *f, hcomp_error *err);
/* Close and forget every writer log (a fold replaced them). */
void hcomp_wlog_forget(hcomp_file *f);
/* Remove the writer logs in f->logdir not of generation gen (a fold's old ones); the
 * number removed. */
int hcomp_wlog_remove_other_gens(const char *logdir, uint64_t gen);
/* Bytes of every writer log known (their sizes) */
uint64_t hcomp_wlog_bytes(const hcomp_file *f);
/* Read every record this process can see (the log directory listed again), so that
 * what it writes next is ordered after them: at MPI_File_sync, set_size, preallocate and
 * each write in atomic mode (docs/FORMAT.md, "Writer logs"). */
int hcomp_order_advance(hcomp_file *f, hcomp_error *err);

/* file/log_state.c: the replayed state as bytes, for openers that share one replay */
/* 0, or -1 (out of memory) */
int hcomp_log_state_export(const hcomp_file *f, hcomp_bytes *out);
/* Into a handle that has read its header and replayed nothing: 0, or -1 when the state
 * is not this mapping file's (or damaged): the handle is then as before. */
int hcomp_log_state_import(hcomp_file *f, const unsigned char *p, size_t len);

/* file/file_write.c */
/* Write one task: the runs' bytes, one after another in buf (runs disjoint), stored as
 * pieces that never span two runs, recorded with one log append. */
int hcomp_file_write_runs(hcomp_file *f, const void *buf, const hcomp_wrun *runs, size_t nruns,
                          hcomp_error *err);

/* file/write_buffer.c: small writes gathered per handle */
/* whether a write of len bytes goes to the buffer */
int hcomp_wbuf_takes(const hcomp_file *f, uint64_t len);
/* add a write (the buffer is written out when it fills) */
int hcomp_wbuf_add(hcomp_file *f, const void *buf, uint64_t len, uint64_t off, hcomp_error *err);
/* write out what it holds as one task (kept on failure, for a later try) */
int hcomp_wbuf_flush(hcomp_file *f, hcomp_error *err);
/* the end of the last buffered run (0 when empty): the size this handle sees */
uint64_t hcomp_wbuf_end(const hcomp_file *f);
void hcomp_wbuf_free(hcomp_file *f);

struct iovec;
/* Append bytes to this opener's segment on tier t (created, and announced in the
 * batch, on first use); HCOMP_E_NOSPC when the tier is full (it is then skipped). */
int hcomp_segment_append(hcomp_file *f, int t, struct iovec *iov, int iovcnt, uint64_t *seg_off,
                         hcomp_error *err);
/* The block size of the pieces this opener writes: 0 (unframed) in a version-1 file. */
uint32_t hcomp_file_block_size(const hcomp_file *f);
/* The most a piece of len logical bytes takes on a tier (stored as it is: header and
 * block table included). */
uint64_t hcomp_piece_room_raw(const hcomp_file *f, uint64_t len);
int hcomp_first_fit(hcomp_file *f, int from, uint64_t need, hcomp_error *err, int *rc);
/* Close this opener's tier writers (segments, reservations). */
void hcomp_file_writers_close(hcomp_file *f);
/* Remove the segments this opener wrote (all, or those on node-local tiers). */
void hcomp_file_remove_own_segments(hcomp_file *f, int node_local_only);

/* file/writeback.c: the process's drains after close (hcomp_drain=writeback) */
/* The close of f hands the rest of its close to the write-back thread: its drain, the
 * reclaim of the last opener, the end of the close (hcomp_file_close_finish). */
void hcomp_writeback_adopt(hcomp_file *f);
/* A delete of path in this process: the drains of its closed handles stop, and this
 * returns once those handles are closed (their pieces are deleted anyway). */
void hcomp_writeback_cancel(const char *path);
/* Whether f's mapping file is as f's close left it (always, for a handle not in the
 * write-back queue): after the close the program may have written the path itself, and
 * then no rewrite of the log may replace what it wrote. */
int hcomp_writeback_map_unchanged(const hcomp_file *f);
/* Whether f's moves were stopped (a delete of its file while it was queued or moving). */
int hcomp_writeback_cancelled(const hcomp_file *f);
/* Wait until this process's closed handles of path are done moving its pieces. */
void hcomp_writeback_finish(const char *path);
/* The end of a close, after the drain (file_open.c) */
int hcomp_file_close_finish(hcomp_file *f, int rc, int printed, hcomp_error *err);

/* file/drain.c: move this opener's live pieces off node-local tiers */
int hcomp_drain_node_local(hcomp_file *f, hcomp_error *err);
/* Move at most max_bytes of them now, freeing their old place (background drain);
 * *moved tells how many bytes moved. */
int hcomp_drain_step(hcomp_file *f, uint64_t max_bytes, uint64_t *moved, hcomp_error *err);
/* Copy every live piece this opener has on a volatile tier, as stored, to the first tier
 * that is not volatile, record the moves and punch out the old bytes (a durable sync);
 * *moved tells how many bytes moved. */
int hcomp_drain_volatile(hcomp_file *f, uint64_t *moved, hcomp_error *err);
void hcomp_drain_start(hcomp_file *f);
/* Store piece idx (in segment seg_id) again on tier from or a later shared one, encoded
 * for that tier, and add its RELOCATE record to f->batch. job and raw are scratch. */
int hcomp_drain_move_piece(hcomp_file *f, int from, uint32_t idx, uint64_t seg_id,
                           hcomp_job *job, unsigned char **raw, size_t *cap, hcomp_error *err);
void hcomp_drain_stop(hcomp_file *f);
/* Append a moved piece (its header and stored bytes in iov) to this opener's segment on
 * tier t and record the move (from old_off in segment seg_id) in f->batch; HCOMP_E_NOSPC
 * when the tier turned out to be full (it is then marked so). */
int hcomp_append_moved(hcomp_file *f, int t, struct iovec *iov, int iovcnt, uint64_t seg_id,
                       uint64_t old_off, uint32_t stored, uint32_t crc, unsigned codec,
                       unsigned filter, int level, unsigned frame, hcomp_error *err);

/* file/file_open.c: fsync a directory (0, or -1 with errno; a missing one is 0) */
int hcomp_sync_dir(const char *dir);
/* Sync the directories of the segments (and segment directory) opener f created on tier t
 * since the last sync: their names survive a crash only then. */
/* fsync the directory that holds the mapping file (its name, its segment directory's) */
int hcomp_file_dir_sync(hcomp_file *f, hcomp_error *err);
int hcomp_segment_names_sync(hcomp_file *f, int t, hcomp_error *err);
/* file/file_open.c: a new mapping-file header (a random file id, the time now) */
int hcomp_map_new_header(unsigned char out[HCOMP_MAP_HEADER_SIZE], unsigned version,
                         hcomp_error *err, const char *path);
/* file/file_open.c: the file of fd, if still empty, given a new header (*wrote 1). The
 * caller holds flock(LOCK_EX) on it, so that openers of one empty file write one header
 * (creating without hard links, adopting an emptied file, the first writable open). */
int hcomp_map_header_if_empty(int fd, const char *path, unsigned version, int *wrote,
                              hcomp_error *err);

/* file/open_lock.c: the openers' lock on the mapping file (0, or -1 with errno) */
int hcomp_open_lock_shared(int fd);          /* waits while a reclaim runs */
int hcomp_open_lock_exclusive(int fd, int wait);
int hcomp_open_lock_to_shared(int fd);
/* The write-back lock (file/writeback.c): taken, shared, by a handle whose close hands its
 * drain to the background (0, or -1: no locks here); released when its descriptor closes.
 * held: 1 when another open file description holds it, 0 when none does, -1 unknown. */
int hcomp_drain_lock_take(int fd);
int hcomp_drain_lock_held(int fd);
void hcomp_open_unlock(int fd);

/* file/map_replace.c: put header + records in place of the mapping file at path,
 * atomically (tag names the temporary file beside it). */
int hcomp_map_replace(const char *path, const unsigned char *hdr, const hcomp_bytes *recs,
                      mode_t mode, const char *tag, hcomp_error *err);

/* file/reclaim.c: what each segment holds, from the replayed log */
typedef struct hcomp_seg_use {
    uint64_t pieces, live_pieces;
    uint64_t recorded, live;   /* bytes of its pieces (headers included), of the live ones */
    int reachable;             /* this process may change it (path known, not another
                                  node's node-local tier) */
} hcomp_seg_use;
/* use[f->nsegs] and live[f->npieces] (1: a logical byte uses the piece), to be freed */
int hcomp_reclaim_survey(const hcomp_file *f, hcomp_seg_use **use, unsigned char **live,
                         hcomp_error *err);
/* The pieces a write of [off, off+len) overwrites, as this opener's map knows them (none
 * with hcomp_reclaim=never); then, once the write is recorded, punch out those it left
 * dead, so their room serves the rest of the checkpoint. */
int hcomp_overwritten_collect(const hcomp_file *f, uint64_t off, uint64_t len, uint32_t **out,
                              size_t *n);
void hcomp_overwritten_punch(hcomp_file *f, const uint32_t *cand, size_t n);
/* At close: reclaim if this is the last opener (hcomp_reclaim). */
void hcomp_reclaim_at_close(hcomp_file *f);
/* file/coalesce.c: write runs of small pieces (neighbouring extents of pieces under 4 KiB,
 * 16 or more) again as whole pieces, then sync; the caller holds the openers' lock
 * exclusively. *pieces and *bytes: the extents and logical bytes written again; f's
 * statistics are left as they were. */
int hcomp_coalesce_small(hcomp_file *f, uint64_t *pieces, uint64_t *bytes, hcomp_error *err);
/* In the background (the drain thread, hcomp_drain=background), when the file is idle:
 * reclaim if no other process has the file open; 1 if it ran to its end. */
int hcomp_reclaim_idle(hcomp_file *f);
/* Whether a logical byte still uses piece idx (in the map as replayed). */
int hcomp_piece_live(const hcomp_file *f, uint32_t idx);
/* A piece's bytes in its segment: header and payload. */
uint64_t hcomp_piece_bytes_on_disk(const hcomp_piece *p);
/* This process may change the segment: its path is known, and it is not on another node's
 * node-local tier. */
int hcomp_segment_reachable(const hcomp_file *f, const hcomp_segment *s);
/* dir = path up to its last '/', *file = what follows it */
void hcomp_split_path(const char *path, char *dir, size_t dn, const char **file);

/* file/punch.c */
typedef struct hcomp_byte_range { uint64_t off, len; } hcomp_byte_range;
/* Punch out the ranges r[0..n) of segment s (sorted in place, neighbours merged); the
 * blocks given back are added to *freed. */
void hcomp_punch_ranges(const hcomp_file *f, size_t s, hcomp_byte_range *r, size_t n,
                        uint64_t *freed);

/* file/log_snapshot.c */
/* The log can be replaced without changing who owns it, its other names, or where a
 * symbolic link points (st: the mapping file's status). */
int hcomp_log_replaceable(const hcomp_file *f, struct stat *st);
/* Bytes a snapshot of the live state takes (use from hcomp_reclaim_survey). */
uint64_t hcomp_log_snapshot_estimate(const hcomp_file *f, const hcomp_seg_use *use);
struct hcomp_reclaim_result;
/* Replace the log by a snapshot of the live state and go on with it (its size in
 * res->log_after). */
int hcomp_log_rewrite(hcomp_file *f, const hcomp_seg_use *use, const unsigned char *live,
                      const struct stat *st, struct hcomp_reclaim_result *res, hcomp_error *err);
struct hcomp_tool_io;
struct hcomp_reclaim_result;
/* Give back the space of dead pieces and compact the log (file/reclaim.c); the caller
 * holds the openers' lock exclusively. full: whatever is dead, else only when it pays. */
int hcomp_reclaim(hcomp_file *f, int full, const struct hcomp_tool_io *io,
                  struct hcomp_reclaim_result *res, hcomp_error *err);

/* file/file_read.c */
int hcomp_piece_load(hcomp_file *f, uint32_t piece, unsigned char *dst, hcomp_error *err);
/* fsck: each block of a framed piece read, checked and decoded, the damaged ones flagged in
 * damaged[0..blocks) and counted in *ndamaged; an error when the piece cannot be read or
 * its header or block table is damaged (then no block can be told). */
int hcomp_piece_scan_blocks(hcomp_file *f, uint32_t piece, unsigned char *damaged,
                            uint32_t *ndamaged, hcomp_error *err);
/* Read a piece as stored (its 16-byte header into hdr, its stored_len bytes into payload)
 * and check it: the header against the mapping file, the payload against its checksum. */
int hcomp_piece_fetch(hcomp_file *f, uint32_t piece, unsigned char *hdr, unsigned char *payload,
                      hcomp_error *err);
/* Forget every decoded block and table (the pieces are renumbered); free them too when
 * release is set. */
void hcomp_read_cache_clear(hcomp_file *f, int release);
/* The descriptor of segment s, opened if it is not (logical bytes [off, off + len) name
 * what a failure was reading). */
int hcomp_segment_fd(hcomp_file *f, hcomp_segment *s, uint64_t off, uint32_t len, hcomp_error *err);
/* Whether segment s is on a tier whose speed hcomp emulates. */
int hcomp_segment_emulated(const hcomp_file *f, const hcomp_segment *s);
/* Where in its segment the stored bytes of logical bytes [lo, hi) of framed piece p lie,
 * known without its table: exactly for a piece stored as it is, guessed for one with coded
 * blocks (file/file_read.c, advise_blocks). 0 and [*a, *b) set, with *blocks where its
 * first block starts (its header and table end there), or -1. */
int hcomp_piece_blocks_place(const hcomp_piece *p, uint32_t lo, uint32_t hi, uint64_t *a,
                             uint64_t *b, uint64_t *blocks);
/* After a read of logical bytes [off, end): advise what a sequential reader reads next. */
void hcomp_read_ahead(hcomp_file *f, uint64_t off, uint64_t end);
/* HCOMP_E_CORRUPT if the mapping file gives a piece lengths no writer makes: check before
 * allocating a buffer of its size. */
int hcomp_piece_size_ok(const hcomp_file *f, const hcomp_piece *p, hcomp_error *err);

#endif
