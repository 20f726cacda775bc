/* Draining node-local tiers (hcomp_drain): every live piece this opener stored on a
 * node-local tier is decoded (checksum verified) and stored again on the first shared
 * tier with room, encoded as the engine chooses for that tier; one append records the
 * moves (RELOCATE, with the new encoding); then the old copies are freed:
 * at close the node-local segments are removed, in the background (while the file is
 * idle) the moved pieces' bytes are punched out of them. A reader that read the old
 * place before that got the right bytes; one that comes after replays the moves first,
 * and one that raced with it fails the checksum and retries at the new place.
 *
 * A durable sync (hcomp_sync=durable) drains volatile tiers the same way, to the first
 * tier that outlives the node's memory, but copies each piece as it is stored (checked,
 * not decoded nor encoded again): the sync waits for it, and what the engine chose for
 * the fast tier is what it costs least to keep. */
#include "file_internal.h"
#include "common/util.h"
#include "engine/engine.h"
#include "engine/manager.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int segment_index(const hcomp_file *f, uint64_t id)
{
    for (size_t i = 0; i < f->nsegs; i++)
        if (f->segs[i].id == id)
            return (int) i;
    return -1;
}

int hcomp_append_moved(hcomp_file *f, int t, struct iovec *iov, int iovcnt, uint64_t seg_id,
                       uint64_t old_off, uint32_t stored, uint32_t crc, unsigned codec,
                       unsigned filter, int level, unsigned frame, hcomp_error *err)
{
    uint64_t new_off;
    int rc = hcomp_segment_append(f, t, iov, iovcnt, &new_off, err);
    if (rc != HCOMP_OK)
        return rc;
    if (hcomp_map_encode_relocate(&f->batch, seg_id, old_off, f->tw[t].seg_id, new_off, stored,
                                  crc, codec, filter, level, frame) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    return HCOMP_OK;
}

/* Move one piece to a shared tier, encoded as the engine would for that tier (a
 * piece stored raw on a fast tier is often worth compressing on a slow one). */
int hcomp_drain_move_piece(hcomp_file *f, int first_shared, uint32_t idx, uint64_t seg_id,
                           hcomp_job *job, unsigned char **raw, size_t *cap, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    int rc = hcomp_piece_size_ok(f, p, err);     /* before allocating what it says */
    if (rc != HCOMP_OK)
        return rc;
    if (hcomp_grow(raw, cap, p->raw_len ? p->raw_len : 1) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory draining", f->path);
    rc = hcomp_piece_load(f, idx, *raw, err);       /* checked: never moves damage */
    if (rc != HCOMP_OK)
        return rc;
    uint64_t old_off = p->seg_off;
    uint32_t block_size = hcomp_file_block_size(f);
    uint64_t most = hcomp_piece_room_raw(f, p->raw_len);
    for (;;) {
        int t = hcomp_first_fit(f, first_shared, most, err, &rc);
        if (rc != HCOMP_OK)
            return rc;
        if (t < 0)
            return hcomp_fail(err, HCOMP_E_NOSPC, "%s: draining: no shared tier has room for "
                              "a %u-byte piece; the data stays on its node-local tier", f->path,
                              (unsigned) p->raw_len);
        if (f->cfg.tier[t].node_local) {
            first_shared = t + 1;
            continue;
        }
        unsigned codec;
        int level, filter, dtype;
        hcomp_engine_choose(&f->eng, *raw, p->raw_len, t, &codec, &level, &filter, &dtype);
        job->src = *raw;
        job->len = p->raw_len;
        job->codec = codec;
        job->level = level;
        job->filter = filter;
        job->block_size = block_size;
        job->block_size_bs = block_size ? hcomp_engine_block_size_bs(&f->eng, dtype) : 0;
        hcomp_job_encode(job);
        if (job->rc != HCOMP_OK)
            return hcomp_fail(err, job->rc, "%s: draining: encoding a piece failed", f->path);
        unsigned char hdr[HCOMP_PIECE_HEADER_SIZE];
        hcomp_piece_header h = {p->start, p->raw_len, job->stored, job->codec_used,
                                job->filter_used, job->table_len > 0};
        hcomp_piece_header_encode(&h, hdr);
        struct iovec iov[3] = {{hdr, sizeof(hdr)}, {job->table, job->table_len},
                               {(void *) job->payload, job->stored - job->table_len}};
        rc = hcomp_append_moved(f, t, iov, 3, seg_id, old_off, job->stored, job->crc,
                          job->codec_used, job->filter_used,
                          job->codec_used == HCOMP_CODEC_NONE ? HCOMP_MAP_LEVEL_UNKNOWN : job->level,
                          job->table_len ? hcomp_frame_of_block_size(job->block_used) : 0, err);
        if (rc != HCOMP_E_NOSPC)
            return rc;          /* else that tier is marked full now: the next one */
    }
}

/* What a drain moves: node-local pieces to a shared tier, or (a durable sync) pieces on
 * volatile tiers to one that outlives the node's memory. */
enum drain_what { DRAIN_NODE_LOCAL, DRAIN_VOLATILE };

static int tier_volatile(const hcomp_file *f, int t)
{
    return f->tw[t].ready ? f->tw[t].volatile_tier : hcomp_tier_volatile(&f->cfg.tier[t], f->path);
}

/* Whether a drain of this kind moves pieces off tier t, or may put them there. */
static int drains_from(const hcomp_file *f, int t, enum drain_what what)
{
    return what == DRAIN_VOLATILE ? tier_volatile(f, t) : f->cfg.tier[t].node_local;
}

/* Copy one piece as it is stored to the first tier from `from` on that outlives the
 * node's memory, and add its RELOCATE record to f->batch. buf is scratch. */
static int copy_piece(hcomp_file *f, int from, uint32_t idx, uint64_t seg_id, unsigned char **buf,
                      size_t *cap, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    int rc = hcomp_piece_size_ok(f, p, err);     /* before allocating what it says */
    if (rc != HCOMP_OK)
        return rc;
    uint64_t len = HCOMP_PIECE_HEADER_SIZE + (uint64_t) p->stored_len;
    if (hcomp_grow(buf, cap, len) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory syncing", f->path);
    rc = hcomp_piece_fetch(f, idx, *buf, *buf + HCOMP_PIECE_HEADER_SIZE, err); /* never moves damage */
    if (rc != HCOMP_OK)
        return rc;
    for (;;) {
        int t = hcomp_first_fit(f, from, len, err, &rc);
        if (rc != HCOMP_OK)
            return rc;
        if (t < 0)
            return hcomp_fail(err, HCOMP_E_NOSPC, "%s: sync: no tier that outlives the node's "
                              "memory has room for a %llu-byte piece; the data stays on a volatile "
                              "tier (free space, or raise a tier's capacity in %s)", f->path,
                              (unsigned long long) len, f->cfg.source);
        if (tier_volatile(f, t)) {
            from = t + 1;
            continue;
        }
        struct iovec iov[1] = {{*buf, (size_t) len}};
        rc = hcomp_append_moved(f, t, iov, 1, seg_id, p->seg_off, p->stored_len, p->crc, p->codec,
                          p->filter, p->level, p->frame, err);
        if (rc != HCOMP_E_NOSPC)
            return rc;          /* else that tier is marked full now: the next one */
    }
}

/* A piece that failed its checks may have been overwritten by another writer since the
 * drain replayed the log, and its bytes punched out (hcomp_overwritten_punch): then there
 * is nothing to move. */
static int still_dead_now(hcomp_file *f, uint32_t idx)
{
    hcomp_error e;
    return hcomp_log_refresh(f, &e) == HCOMP_OK && !hcomp_piece_live(f, idx);
}

/* fsync every segment the drain may have written to, and its directory's new names */
static int sync_destinations(hcomp_file *f, enum drain_what what, hcomp_error *err)
{
    for (int t = 0; t < f->cfg.ntiers; t++) {
        hcomp_tier_writer *w = &f->tw[t];
        if (drains_from(f, t, what) || !w->ready || w->seg_fd < 0)
            continue;
        if (fsync(w->seg_fd) != 0)
            return hcomp_fail_errno(err, errno, "%s: draining: sync of segment %s/%s on tier "
                                    "\"%s\"", f->path, w->dir, w->seg_name, f->cfg.tier[t].name);
        int rc = hcomp_segment_names_sync(f, t, err);
        if (rc != HCOMP_OK)
            return rc;
    }
    return HCOMP_OK;
}

/* Move up to max_bytes of live pieces off this opener's node-local (or volatile)
 * segments; punch their old bytes out when punch is set. */
static int drain_pieces(hcomp_file *f, enum drain_what what, uint64_t max_bytes, int punch,
                        uint64_t *moved, hcomp_error *err)
{
    *moved = 0;
    int first_dest = -1;
    for (int t = 0; t < f->cfg.ntiers && first_dest < 0; t++)
        if (!drains_from(f, t, what))
            first_dest = t;
    int any = 0;
    for (int t = 0; t < f->cfg.ntiers; t++)
        any |= drains_from(f, t, what) && f->tw[t].ready && f->tw[t].seg_id != 0;
    if (first_dest < 0 || !any)
        return HCOMP_OK;        /* nothing to move, or nowhere to move it */
    int rc = hcomp_log_refresh(f, err);
    if (rc != HCOMP_OK)
        return rc;
    size_t npieces = f->npieces;    /* a retry inside a read may replay more: not these */
    unsigned char *live = calloc(npieces ? npieces : 1, 1);
    if (live == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory draining", f->path);
    for (size_t i = 0; i < f->map.n; i++)
        if (f->map.v[i].piece < npieces)
            live[f->map.v[i].piece] = 1;
    typedef struct { int fd; uint64_t off, len; } hole;
    hole *holes = NULL;
    size_t nholes = 0;
    unsigned char *buf = NULL;
    size_t cap = 0;
    hcomp_job job;
    memset(&job, 0, sizeof(job));
    f->batch.len = 0;
    for (int t = 0; t < f->cfg.ntiers && rc == HCOMP_OK && *moved < max_bytes; t++) {
        hcomp_tier_writer *w = &f->tw[t];
        if (!drains_from(f, t, what) || !w->ready || w->seg_id == 0)
            continue;
        int s = segment_index(f, w->seg_id);
        if (s < 0 || f->segs[s].path == NULL)
            continue;
        int fd = open(f->segs[s].path, (punch ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            rc = hcomp_fail_errno(err, errno, "%s: draining: opening %s", f->path, f->segs[s].path);
            break;
        }
        int keep = 0;
        for (size_t i = 0; i < npieces && rc == HCOMP_OK && *moved < max_bytes &&
                           !hcomp_writeback_cancelled(f); i++) {
            if (f->pieces[i].seg != (uint32_t) s || !live[i])
                continue;
            rc = what == DRAIN_VOLATILE
                     ? copy_piece(f, first_dest, (uint32_t) i, w->seg_id, &buf, &cap, err)
                     : hcomp_drain_move_piece(f, first_dest, (uint32_t) i, w->seg_id, &job, &buf,
                                              &cap, err);
            if (rc == HCOMP_E_CORRUPT && still_dead_now(f, (uint32_t) i)) {
                rc = HCOMP_OK;  /* overwritten by another writer meanwhile, its space freed */
                continue;
            }
            if (rc != HCOMP_OK)
                break;
            uint64_t len = HCOMP_PIECE_HEADER_SIZE + (uint64_t) f->pieces[i].stored_len;
            *moved += len;
            if (punch) {
                hole *h = realloc(holes, (nholes + 1) * sizeof(*h));
                if (h == NULL) {
                    rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
                    break;
                }
                holes = h;
                holes[nholes++] = (hole) {fd, f->pieces[i].seg_off, len};
                keep = 1;
            }
        }
        if (!keep)
            close(fd);
    }
    free(buf);
    free(job.out);
    free(job.tmp);
    free(job.table);
    free(live);
    /* Durable steps (docs/FORMAT.md): the new copies and their names, then the records
     * that point at them, and only then may the old copies go, or a crash between could
     * leave a record pointing at bytes that never reached the disk and no old copy.  A
     * volatile source dies with the node anyway: the sync that called this makes it all
     * durable after. */
    if (rc == HCOMP_OK && what == DRAIN_NODE_LOCAL && f->batch.len > 0)
        rc = sync_destinations(f, what, err);
    if (rc == HCOMP_OK)
        rc = hcomp_log_append(f, &f->batch, err);
    if (rc == HCOMP_OK && what == DRAIN_NODE_LOCAL && f->batch.len > 0)
        rc = hcomp_log_durable(f, err);
    /* recorded: the old copies can go (a failure above leaves them valid and in use) */
    int last_fd = -1;
    for (size_t i = 0; i < nholes; i++) {
        if (rc == HCOMP_OK)
            (void) fallocate(holes[i].fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                             (off_t) holes[i].off, (off_t) holes[i].len);
        if (holes[i].fd != last_fd && last_fd >= 0)
            close(last_fd);
        last_fd = holes[i].fd;
    }
    if (last_fd >= 0)
        close(last_fd);
    free(holes);
    if (rc != HCOMP_OK)
        return rc;
    return hcomp_log_refresh(f, err);
}

int hcomp_drain_step(hcomp_file *f, uint64_t max_bytes, uint64_t *moved, hcomp_error *err)
{
    return drain_pieces(f, DRAIN_NODE_LOCAL, max_bytes, 1, moved, err);
}

int hcomp_drain_volatile(hcomp_file *f, uint64_t *moved, hcomp_error *err)
{
    return drain_pieces(f, DRAIN_VOLATILE, UINT64_MAX, 1, moved, err);
}

int hcomp_drain_node_local(hcomp_file *f, hcomp_error *err)
{
    uint64_t moved;
    int rc = drain_pieces(f, DRAIN_NODE_LOCAL, UINT64_MAX, 0, &moved, err);
    if (rc != HCOMP_OK)
        return rc;              /* nothing recorded: the node-local copies stay valid */
    if (hcomp_writeback_cancelled(f))
        return HCOMP_OK;        /* stopped for a delete, which removes every segment */
    /* every live piece has a shared copy now: free the node-local tier */
    hcomp_file_remove_own_segments(f, 1);
    return HCOMP_OK;
}

/* ---- the background drain --------------------------------------------------------- */

#define DRAIN_PERIOD_S 0.2      /* how often it looks */
#define DRAIN_IDLE_S 0.1        /* the caller must have been idle this long */
#define DRAIN_STEP_BYTES (4u << 20)     /* moved under the file's lock at a time: a write
                                           that comes meanwhile waits for at most this */
#define RECLAIM_PERIOD_S 5.0    /* the background reclaim tries at most this often */

static void *drain_main(void *arg)
{
    hcomp_file *f = arg;
    uint64_t reclaimed_at = UINT64_MAX;     /* the log's generation when last reclaimed */
    double tried = 0;
    pthread_mutex_lock(&f->lock);
    while (!f->drain_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long) (DRAIN_PERIOD_S * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&f->drain_wake, &f->lock, &ts);
        /* steps while the caller stays idle, the lock let go between them so that a
         * write or read that comes waits for one step, not for the whole move */
        uint64_t moved = 1;
        while (!f->drain_stop && moved > 0 && atomic_load(&f->callers) == 0 &&
               hcomp_now() - f->last_io >= DRAIN_IDLE_S) {
            hcomp_error e;
            moved = 0;
            if (hcomp_drain_step(f, DRAIN_STEP_BYTES, &moved, &e) == HCOMP_OK)
                f->stats.drained_bytes += moved;
            else
                f->stats.drain_errors++;    /* the data stays where it is; close tries again */
            pthread_mutex_unlock(&f->lock);
            sched_yield();
            pthread_mutex_lock(&f->lock);
        }
        if (f->drain_stop || hcomp_now() - f->last_io < DRAIN_IDLE_S)
            continue;
        if (f->generation != reclaimed_at && hcomp_now() - tried >= RECLAIM_PERIOD_S) {
            tried = hcomp_now();
            if (hcomp_reclaim_idle(f))
                reclaimed_at = f->generation;
        }
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

void hcomp_drain_start(hcomp_file *f)
{
    f->drain_stop = 0;
    f->drain_running = pthread_create(&f->drain_thread, NULL, drain_main, f) == 0;
}

void hcomp_drain_stop(hcomp_file *f)
{
    if (!f->drain_running)
        return;
    pthread_mutex_lock(&f->lock);
    f->drain_stop = 1;
    pthread_cond_signal(&f->drain_wake);
    pthread_mutex_unlock(&f->lock);
    pthread_join(f->drain_thread, NULL);
    f->drain_running = 0;
}
