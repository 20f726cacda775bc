/* Replaying and appending the mapping file's log. */
#include "file_internal.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the file's order (version 3: records of several writer logs) ---------- */

int hcomp_order_later(const hcomp_file *f, uint32_t a, uint32_t b)
{
    const hcomp_order *x = &f->orders[a], *y = &f->orders[b];
    if (x->stamp != y->stamp)
        return x->stamp > y->stamp;
    return x->writer > y->writer;
}

/* index 0 is the mapping file's own records: before every writer log's */
static int orders_init(hcomp_file *f)
{
    if (f->norders > 0)
        return 0;
    if (hcomp_grow_array(&f->orders, &f->caporders, 1, sizeof(*f->orders)) != 0)
        return -1;
    f->orders[0] = (hcomp_order) {0, 0};
    f->norders = 1;
    f->cur_ord = f->max_ord = 0;
    return 0;
}

static int64_t add_order(hcomp_file *f, uint64_t stamp, uint64_t writer)
{
    if (f->norders >= UINT32_MAX ||
        hcomp_grow_array(&f->orders, &f->caporders, f->norders + 1, sizeof(*f->orders)) != 0)
        return -1;
    f->orders[f->norders] = (hcomp_order) {stamp, writer};
    if (stamp > f->stamp_seen)
        f->stamp_seen = stamp;
    return (int64_t) f->norders++;
}

/* Whether piece a was recorded after piece b. */
static int piece_later(const hcomp_file *f, uint32_t a, uint32_t b)
{
    uint32_t oa = f->pieces[a].ord, ob = f->pieces[b].ord;
    if (oa != ob)
        return hcomp_order_later(f, oa, ob);
    return a > b;   /* one log's records: in its order */
}

/* The records being applied are older than some applied before (another writer's log
 * was read late): they must not win over those. */
static int applying_late(const hcomp_file *f)
{
    return hcomp_order_later(f, f->max_ord, f->cur_ord);
}

static int find_segment(const hcomp_file *f, uint64_t id)
{
    for (size_t i = f->nsegs; i-- > 0;)  /* recent segments are looked up most */
        if (f->segs[i].id == id)
            return (int) i;
    return -1;
}

static int add_segment(hcomp_file *f, uint64_t id, const char *tier, size_t tl, const char *path,
                       size_t pl)
{
    if (hcomp_grow_array(&f->segs, &f->capsegs, f->nsegs + 1, sizeof(*f->segs)) != 0)
        return -1;
    hcomp_segment *s = &f->segs[f->nsegs];
    s->id = id;
    s->fd = -1;
    s->tier = strndup(tier, tl);
    s->path = path ? strndup(path, pl) : NULL;
    s->node = strdup("");
    s->node_local = 0;
    s->indexed = 0;
    s->seen_len = s->seen_at = 0;
    if (s->tier == NULL || (path && s->path == NULL) || s->node == NULL) {
        free(s->tier);
        free(s->path);
        free(s->node);
        return -1;
    }
    f->nsegs++;
    return (int) f->nsegs - 1;
}

static int apply_segment(hcomp_file *f, const hcomp_map_record *r)
{
    int i = find_segment(f, r->u.seg.id);
    char path[PATH_MAX];
    if ((size_t) r->u.seg.dir_len + 1 + r->u.seg.file_len + 1 > sizeof(path))
        return 0;   /* no such path (damage): its pieces read as "never named", the rest is fine */
    memcpy(path, r->u.seg.dir, r->u.seg.dir_len);
    path[r->u.seg.dir_len] = '/';
    memcpy(path + r->u.seg.dir_len + 1, r->u.seg.file, r->u.seg.file_len);
    size_t pl = (size_t) r->u.seg.dir_len + 1 + r->u.seg.file_len;
    path[pl] = '\0';
    if (i >= 0) {           /* a piece named it before its record arrived */
        if (f->segs[i].path == NULL && (f->segs[i].path = strdup(path)) == NULL)
            return -1;
    } else if ((i = add_segment(f, r->u.seg.id, r->u.seg.tier, r->u.seg.tier_len, path, pl)) < 0)
        return -1;
    char *node = strndup(r->u.seg.node, r->u.seg.node_len);
    if (node == NULL)
        return -1;
    free(f->segs[i].node);
    f->segs[i].node = node;
    f->segs[i].node_local = (r->u.seg.flags & HCOMP_SEGMENT_NODE_LOCAL) != 0;
    return 0;
}

/* what a refresh keeps of its buffers for the next one */
#define LOG_BUFFER_KEPT (4u << 20)

/* ---- where each piece is stored, for RELOCATE records ----------------------- */
/* Only the pieces of segments that pieces moved from (a drain empties a node-local
 * tier's segments), indexed at the first RELOCATE from each, then kept up to date: a file
 * whose pieces never moved never needs the table, and building it for every piece as it
 * was replayed cost a quarter of a replay's time (a cache miss per piece). Each segment
 * indexed costs a pass over all pieces, so past a few (a compaction moves pieces out of
 * many) every segment is indexed at once. */
#define LOC_SEGMENTS_ONE_BY_ONE 4

static int seg_indexed(const hcomp_file *f, uint32_t seg)
{
    return f->loc_all || f->segs[seg].indexed;
}

static size_t loc_hash(uint32_t seg, uint64_t off, size_t cap)
{
    return (size_t) ((off * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) seg * 0xC2B2AE3D27D4EB4Full)) &
        (cap - 1);
}

static int loc_insert(hcomp_file *f, uint32_t idx);

/* The table built again, every indexed piece entered at its current place (the entries
 * of pieces that moved away are dropped): at least 4 slots per indexed piece, and twice
 * the slots when it filled up (twice the slots for every segment indexed would double it
 * for each of a compaction's many segments). */
static int loc_grow(hcomp_file *f, int filled)
{
    size_t indexed = 0;
    for (size_t i = 0; i < f->npieces; i++)
        indexed += seg_indexed(f, f->pieces[i].seg);
    size_t cap = filled && f->loc_cap ? f->loc_cap * 2 : 1024;
    while (cap < 4 * (indexed + 1))
        cap *= 2;
    uint32_t *fresh = calloc(cap, sizeof(*fresh));
    if (fresh == NULL)
        return -1;
    free(f->loc);
    f->loc = fresh;
    f->loc_cap = cap;
    f->loc_used = 0;
    for (size_t i = 0; i < f->npieces; i++)
        if (loc_insert(f, (uint32_t) i) != 0)
            return -1;
    return 0;
}

static int loc_insert(hcomp_file *f, uint32_t idx)
{
    const hcomp_piece *p = &f->pieces[idx];
    if (!seg_indexed(f, p->seg))
        return 0;
    if ((f->loc_used + 1) * 2 > f->loc_cap)
        return loc_grow(f, 1);  /* re-inserts every indexed piece, idx included */
    size_t h = loc_hash(p->seg, p->seg_off, f->loc_cap);
    while (f->loc[h] != 0)
        h = (h + 1) & (f->loc_cap - 1);
    f->loc[h] = idx + 1;
    f->loc_used++;
    return 0;
}

/* The piece stored at (seg, off) now; entries of pieces that moved away no longer
 * match and are passed over. */
static int64_t loc_find(const hcomp_file *f, uint32_t seg, uint64_t off)
{
    if (f->loc_cap == 0)
        return -1;
    for (size_t h = loc_hash(seg, off, f->loc_cap), n = 0; f->loc[h] != 0 && n < f->loc_cap;
         h = (h + 1) & (f->loc_cap - 1), n++) {
        const hcomp_piece *p = &f->pieces[f->loc[h] - 1];
        if (p->seg == seg && p->seg_off == off)
            return (int64_t) f->loc[h] - 1;
    }
    return -1;
}

/* A RELOCATE whose piece is not known yet: in a version-3 file its PIECE record may be in
 * a writer log not read so far; it is tried again after every refresh. */
static int relocate_pending(hcomp_file *f, const hcomp_map_record *r, int may_wait)
{
    if (!may_wait)
        return 0;       /* a log in one order: nothing known there, nothing moves */
    if (hcomp_grow_array(&f->pending_reloc, &f->cappending, f->npending + 1,
                         sizeof(*f->pending_reloc)) != 0)
        return -1;
    f->pending_reloc[f->npending++] = *r;
    return 0;
}

/* may_wait: the record is a writer log's, whose piece may be in a log not read yet */
static int apply_relocate(hcomp_file *f, const hcomp_map_record *r, int may_wait)
{
    int from = find_segment(f, r->u.reloc.old_seg);
    int to = find_segment(f, r->u.reloc.new_seg);
    if (from < 0)
        return relocate_pending(f, r, may_wait);
    if (to < 0 && (to = add_segment(f, r->u.reloc.new_seg, "?", 1, NULL, 0)) < 0)
        return -1;
    if (!seg_indexed(f, (uint32_t) from)) {     /* the first move from there */
        int all = f->loc_segments >= LOC_SEGMENTS_ONE_BY_ONE;
        if (all)
            f->loc_all = 1;
        else
            f->segs[from].indexed = 1;
        if (loc_grow(f, 0) != 0) {
            f->loc_all = 0;
            f->segs[from].indexed = 0;
            return -1;
        }
        f->loc_segments++;
    }
    int64_t idx = loc_find(f, (uint32_t) from, r->u.reloc.old_off);
    if (idx < 0)
        return relocate_pending(f, r, may_wait);
    hcomp_piece *p = &f->pieces[idx];
    p->seg = (uint32_t) to;
    p->seg_off = r->u.reloc.new_off;
    p->stored_len = r->u.reloc.stored_len;
    p->crc = r->u.reloc.crc;
    p->codec = r->u.reloc.codec;
    p->filter = r->u.reloc.filter;
    p->level = (int16_t) r->u.reloc.level;
    p->frame = (uint8_t) r->u.reloc.frame;
    return loc_insert(f, (uint32_t) idx);
}

static int add_replayed(hcomp_file *f, hcomp_extent e)
{
    if (e.len == 0)
        return 0;
    if (hcomp_grow_array(&f->replayed, &f->replayed_cap, f->nreplayed + 1,
                         sizeof(*f->replayed)) != 0)
        return -1;
    f->replayed[f->nreplayed++] = e;
    if (e.off + e.len > f->size)
        f->size = e.off + e.len;
    return 0;
}

/* An extent of a record older than some applied before: cut at the smallest size a later
 * SIZE record set, and only the parts that no later piece maps (records of this refresh
 * come after it in f->replayed, in order, and win by themselves). */
static int add_late_extent(hcomp_file *f, hcomp_extent e)
{
    uint64_t stop = e.off + e.len;
    for (size_t k = 0; k < f->nsizes; k++)
        if (f->sizes[k].mode == HCOMP_SIZE_SET && f->sizes[k].size < stop &&
            hcomp_order_later(f, f->sizes[k].ord, f->cur_ord))
            stop = f->sizes[k].size;
    uint64_t at = e.off;
    for (size_t i = hcomp_extent_map_find(&f->map, at); i < f->map.n && f->map.v[i].off < stop;
         i++) {
        const hcomp_extent *m = &f->map.v[i];
        if (!piece_later(f, m->piece, e.piece))
            continue;
        if (m->off > at &&
            add_replayed(f, (hcomp_extent) {at, m->off - at, e.piece,
                                             e.piece_off + (uint32_t) (at - e.off)}) != 0)
            return -1;
        if (m->off + m->len > at)
            at = m->off + m->len;
    }
    if (at < stop)
        return add_replayed(f, (hcomp_extent) {at, stop - at, e.piece,
                                               e.piece_off + (uint32_t) (at - e.off)});
    return 0;
}

static int apply_piece(hcomp_file *f, const hcomp_map_record *r)
{
    int s = find_segment(f, r->u.piece.seg_id);
    if (s < 0 && (s = add_segment(f, r->u.piece.seg_id, "?", 1, NULL, 0)) < 0)
        return -1;
    if (hcomp_grow_array(&f->pieces, &f->cappieces, f->npieces + 1, sizeof(*f->pieces)) != 0)
        return -1;
    if (f->npieces >= UINT32_MAX)
        return -1;
    uint32_t idx = (uint32_t) f->npieces;
    hcomp_piece *p = &f->pieces[f->npieces++];
    p->seg = (uint32_t) s;
    p->seg_off = r->u.piece.seg_off;
    p->stored_len = r->u.piece.stored_len;
    p->raw_len = r->u.piece.raw_len;
    p->crc = r->u.piece.crc;
    p->codec = r->u.piece.codec;
    p->filter = r->u.piece.filter;
    p->level = (int16_t) r->u.piece.level;
    p->frame = (uint8_t) r->u.piece.frame;
    p->start = 0;
    p->ord = f->cur_ord;
    int late = applying_late(f);
    for (uint32_t i = 0; i < r->u.piece.nextents; i++) {
        hcomp_map_extent me;
        hcomp_map_extent_at(r, i, &me);
        if (i == 0)
            p->start = me.off - me.piece_off;
        hcomp_extent e = {me.off, me.len, idx, me.piece_off};
        if (late ? add_late_extent(f, e) != 0 : add_replayed(f, e) != 0)
            return -1;
    }
    return loc_insert(f, idx);
}

/* The replayed extents into the map, in one merge: records of several writers (or of a
 * collective write's aggregators) arrive out of order, and inserting them one by one
 * costs O(n) each. */
static int flush_replayed(hcomp_file *f)
{
    int rc = hcomp_extent_map_insert_batch(&f->map, f->replayed, f->nreplayed);
    f->nreplayed = 0;
    return rc;
}

/* The latest SIZE record that set the size (-1: none). */
static int64_t last_set(const hcomp_file *f)
{
    int64_t best = -1;
    for (size_t k = 0; k < f->nsizes; k++)
        if (f->sizes[k].mode == HCOMP_SIZE_SET &&
            (best < 0 || hcomp_order_later(f, f->sizes[k].ord, f->sizes[best].ord)))
            best = (int64_t) k;
    return best;
}

/* A set older than pieces applied before it (another writer's log read late): it drops
 * only the bytes of older pieces beyond it; the size is then what the order gives: the
 * latest set, grown by what later records wrote or grew. */
static void apply_late_set(hcomp_file *f, uint64_t size)
{
    hcomp_extent_map *m = &f->map;
    size_t w = hcomp_extent_map_find(m, size);
    for (size_t i = w; i < m->n; i++) {
        hcomp_extent e = m->v[i];
        if (!hcomp_order_later(f, f->pieces[e.piece].ord, f->cur_ord)) {
            if (e.off >= size)
                continue;
            e.len = size - e.off;       /* the extent that straddles it */
        }
        m->v[w++] = e;
    }
    m->n = w;
    int64_t s = last_set(f);
    uint64_t sz = s >= 0 ? f->sizes[s].size : 0;
    if (m->n > 0 && m->v[m->n - 1].off + m->v[m->n - 1].len > sz)
        sz = m->v[m->n - 1].off + m->v[m->n - 1].len;
    for (size_t k = 0; k < f->nsizes; k++)
        if (f->sizes[k].mode == HCOMP_SIZE_GROW && f->sizes[k].size > sz &&
            (s < 0 || hcomp_order_later(f, f->sizes[k].ord, f->sizes[s].ord)))
            sz = f->sizes[k].size;
    f->size = sz;
}

static int apply_size(hcomp_file *f, const hcomp_map_record *r)
{
    int late = applying_late(f);
    if (hcomp_grow_array(&f->sizes, &f->capsizes, f->nsizes + 1, sizeof(*f->sizes)) != 0)
        return -1;
    f->sizes[f->nsizes++] = (hcomp_size_rec) {f->cur_ord, r->u.size.mode, r->u.size.size};
    if (r->u.size.mode == HCOMP_SIZE_SET) {
        if (flush_replayed(f) != 0)
            return -1;
        if (late) {
            apply_late_set(f, r->u.size.size);
        } else {
            hcomp_extent_map_truncate(&f->map, r->u.size.size);
            f->size = r->u.size.size;
        }
    } else if (r->u.size.size > f->size) {
        int64_t s = late ? last_set(f) : -1;
        if (s < 0 || hcomp_order_later(f, f->cur_ord, f->sizes[s].ord))
            f->size = r->u.size.size;   /* a grow that a later set did not undo */
    }
    return 0;
}

static int apply_record(hcomp_file *f, const hcomp_map_record *rec);

size_t hcomp_log_chunk = 8u << 20;

/* Apply the records of buf[0..avail) (the log from file offset base): whole records only
 * unless final (the buffer reaches the end of the log), since whether bytes are damage or
 * a record still being appended can depend on what follows them. Returns the bytes
 * consumed; *rc: nonzero when applying failed (out of memory). */
static size_t apply_chunk(hcomp_file *f, const unsigned char *buf, size_t avail, uint64_t base,
                          int final, int *rc)
{
    size_t pos = 0;
    for (;;) {
        hcomp_map_record rec;
        size_t at = pos;
        int lost = 0;
        uint64_t skipped = f->skipped;
        int r = hcomp_map_next_checked(buf, avail, &pos, &rec, &skipped, &lost);
        if (r == HCOMP_MAP_INCOMPLETE || (r == HCOMP_MAP_DAMAGED && !final)) {
            pos = at;       /* decided with the bytes after it, in the next chunk */
            break;
        }
        f->skipped = skipped;
        if (r == HCOMP_MAP_DAMAGED) {
            if (lost && f->lost_records++ == 0)
                f->lost_at = base + at;
            continue;
        }
        f->cur_ord = 0;
        *rc = apply_record(f, &rec);
        f->tail_stats = rec.type == HCOMP_REC_STATS ? f->tail_stats + (pos - at) : 0;
        if (*rc != 0)
            break;
    }
    return pos;
}

static int refresh_main(hcomp_file *f, hcomp_error *err);

/* ---- writer logs (version 3) ------------------------------------------------ */

/* A run of one writer log's records in one order (its order's key copied in, so that
 * sorting needs no file: refreshes of two files may run at once in two threads). */
typedef struct wbatch {
    hcomp_order key;
    uint32_t log, ord;
    size_t from, to;        /* in that log's buffer */
} wbatch;

static int wbatch_cmp(const void *a, const void *b)
{
    const wbatch *x = a, *y = b;
    if (x->key.stamp != y->key.stamp)
        return x->key.stamp < y->key.stamp ? -1 : 1;
    if (x->key.writer != y->key.writer)
        return x->key.writer < y->key.writer ? -1 : 1;
    if (x->log != y->log)
        return x->log < y->log ? -1 : 1;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* Seconds after its last change during which bytes of a writer log that are no valid
 * record are taken for an append still arriving (docs/FORMAT.md, "Writer logs"). */
#define WLOG_SETTLE_SECONDS 5

static int log_settling(const struct stat *st)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec - st->st_mtim.tv_sec < WLOG_SETTLE_SECONDS;
}

int hcomp_log_set_aside_settling(const hcomp_file *f)
{
    for (size_t k = 0; k < f->nunconfirmed; k++) {
        const hcomp_wlog *w = &f->wlogs[f->unconfirmed[k].log];
        struct stat st;
        if (w->fd >= 0 && fstat(w->fd, &st) == 0 && log_settling(&st))
            return 1;
    }
    return 0;
}

/* Read the new bytes of writer log i and cut its whole records into batches. */
static int read_wlog_tail(hcomp_file *f, uint32_t i, wbatch **bv, size_t *nb, size_t *cb,
                          hcomp_error *err)
{
    hcomp_wlog *w = &f->wlogs[i];
    w->buf_len = 0;
    struct stat st;
    if (w->fd < 0)
        return HCOMP_OK;
    if (fstat(w->fd, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: stat of writer log %s/%s", f->path, f->logdir,
                                w->name);
    w->settled = !log_settling(&st);
    if ((uint64_t) st.st_size <= w->consumed)
        return HCOMP_OK;
    size_t len = (size_t) ((uint64_t) st.st_size - w->consumed);
    if (hcomp_grow(&w->buf, &w->buf_cap, len) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading writer log %s", f->path,
                          w->name);
    long long got = hcomp_pread_full(w->fd, w->buf, len, w->consumed);
    if (got < 0)
        return hcomp_fail_errno(err, errno, "%s: reading writer log %s/%s", f->path, f->logdir,
                                w->name);
    size_t pos = 0, from = 0;
    uint32_t ord = w->ord;
    for (;;) {
        hcomp_map_record rec;
        size_t at = pos;
        int lost = 0;
        int r = hcomp_map_next_checked(w->buf, (size_t) got, &pos, &rec, &f->skipped, &lost);
        if (r == HCOMP_MAP_INCOMPLETE) {
            pos = at;       /* still being appended, or torn by a crash: not written */
            break;
        }
        if (r == HCOMP_MAP_DAMAGED) {
            /* a log written in the last seconds may show an append whose bytes reach this
             * client out of order (another node's write-behind): wait for the rest
             * rather than call it damage; a log nobody writes to any more is what it is */
            if (log_settling(&st)) {
                f->skipped -= pos - at;     /* not passed over: read again next time */
                pos = at;
                break;
            }
            if (lost && f->lost_records++ == 0) {
                f->lost_at = w->consumed + at;
                snprintf(f->lost_log, sizeof(f->lost_log), "%s", w->name);
            }
            continue;
        }
        if (rec.type != HCOMP_REC_ORDER)
            continue;
        if (rec.u.order.durable & HCOMP_ORDER_DURABLE) {
            uint64_t d = rec.u.order.durable & ~HCOMP_ORDER_DURABLE;
            w->says_durable = 1;
            if (d > w->durable_to)
                w->durable_to = d;
        }
        if (at > from) {
            if (hcomp_grow_array(bv, cb, *nb + 1, sizeof(**bv)) != 0)
                return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
            (*bv)[(*nb)++] = (wbatch) {f->orders[ord], i, ord, from, at};
        }
        int64_t o = add_order(f, rec.u.order.stamp, w->writer);
        if (o < 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        ord = (uint32_t) o;
        from = pos;
    }
    if (pos > from) {
        if (hcomp_grow_array(bv, cb, *nb + 1, sizeof(**bv)) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        (*bv)[(*nb)++] = (wbatch) {f->orders[ord], i, ord, from, pos};
    }
    w->ord = ord;
    w->buf_len = pos;
    return HCOMP_OK;
}

static int apply_record(hcomp_file *f, const hcomp_map_record *rec)
{
    switch (rec->type) {
        case HCOMP_REC_SEGMENT: return apply_segment(f, rec);
        case HCOMP_REC_PIECE: return apply_piece(f, rec);
        case HCOMP_REC_SIZE: return apply_size(f, rec);
        case HCOMP_REC_RELOCATE: return apply_relocate(f, rec, f->cur_ord != 0);
        default: return 0;
    }
}

/* Whether the piece a PIECE record names is in its segment: the segment exists and is
 * long enough (its length looked at once a refresh); with header set (the record's log
 * has not changed for a while: a crash's), also that the piece's 16-byte header is the
 * record's (a crash may keep a later write to a segment and lose an earlier one: zeros).
 * 1 when that cannot be looked at from here: the read will say why. */
static int stored_there(hcomp_file *f, uint64_t seg_id, uint64_t seg_off, uint32_t raw_len,
                        uint32_t stored_len, uint8_t codec, int header)
{
    int s = find_segment(f, seg_id);
    if (s < 0)
        return 1;
    hcomp_segment *sg = &f->segs[s];
    if (sg->path == NULL || (sg->node_local && strcmp(sg->node, f->node) != 0))
        return 1;
    /* not kept open: a read opens it when it needs it, and fails if it is gone by then
     * (a tier that vanished); a record its writer's sync confirmed is never set aside */
    int fd = sg->fd >= 0 ? sg->fd : -1;
    if (sg->seen_at != f->refreshes || (header && fd < 0)) {
        if (fd < 0 && (fd = open(sg->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
            return errno != ENOENT;
        struct stat st;
        if (sg->seen_at != f->refreshes && fstat(fd, &st) == 0) {
            sg->seen_len = (uint64_t) st.st_size;
            sg->seen_at = f->refreshes;
        }
    }
    int there = sg->seen_at == f->refreshes &&
                sg->seen_len >= seg_off + HCOMP_PIECE_HEADER_SIZE + (uint64_t) stored_len;
    if (there && header) {
        unsigned char hb[HCOMP_PIECE_HEADER_SIZE];
        hcomp_piece_header h;
        there = hcomp_pread_full(fd, hb, sizeof(hb), seg_off) == (long long) sizeof(hb) &&
                hcomp_piece_header_decode(hb, &h) == 0 && h.raw_len == raw_len &&
                h.stored_len == stored_len && h.codec == codec;
    }
    if (fd >= 0 && fd != sg->fd)
        close(fd);
    return there;
}

/* The piece is where its record says, or where a RELOCATE read so far moved it (a sync
 * copies pieces off a RAM tier that a crash empties: the copy is what survives). */
static int piece_there(hcomp_file *f, const hcomp_map_record *r, int header)
{
    if (stored_there(f, r->u.piece.seg_id, r->u.piece.seg_off, r->u.piece.raw_len,
                     r->u.piece.stored_len, r->u.piece.codec, header))
        return 1;
    for (size_t k = 0; k < f->npending; k++) {
        const hcomp_map_record *m = &f->pending_reloc[k];
        if (m->u.reloc.old_seg == r->u.piece.seg_id && m->u.reloc.old_off == r->u.piece.seg_off &&
            stored_there(f, m->u.reloc.new_seg, m->u.reloc.new_off, r->u.piece.raw_len,
                         m->u.reloc.stored_len, m->u.reloc.codec, header))
            return 1;
    }
    return 0;
}

/* A writer log's PIECE record that no sync of its writer confirmed, and whose piece is
 * not there: set aside (docs/FORMAT.md, "Durable steps") rather than applied, so that a
 * crash that kept the record and lost the piece leaves the bytes under it readable. */
static int set_aside(hcomp_file *f, uint32_t log, const hcomp_map_record *rec,
                     const unsigned char *bytes, size_t len, uint64_t at)
{
    const hcomp_wlog *w = &f->wlogs[log];
    /* a log still being written: its writer is alive, and only a piece not arrived yet
     * (short segment) is set aside; one that is not (a crash) also has its header looked
     * at, once a record: a live writer's unsynced records cost a length check a segment */
    if ((int) log == f->own_wlog || !w->says_durable || at < w->durable_to ||
        piece_there(f, rec, w->settled))
        return 0;
    if (hcomp_grow_array(&f->unconfirmed, &f->capunconfirmed, f->nunconfirmed + 1,
                         sizeof(*f->unconfirmed)) != 0)
        return -1;
    unsigned char *copy = malloc(len);
    if (copy == NULL)
        return -1;
    memcpy(copy, bytes, len);
    f->unconfirmed[f->nunconfirmed++] = (hcomp_unconfirmed) {copy, len, f->cur_ord, log, at};
    return 1;
}

/* Records set aside whose piece came, or which a sync of their writer confirmed since
 * (a confirmed piece that is still not there is damage, and its reads will say so):
 * applied now, in their order (a late record fills only what no newer one maps). */
static int apply_set_aside(hcomp_file *f)
{
    size_t keep = 0;
    int rc = 0;
    for (size_t k = 0; k < f->nunconfirmed; k++) {
        hcomp_unconfirmed *u = &f->unconfirmed[k];
        hcomp_map_record rec;
        size_t pos = 0;
        uint64_t skipped = 0;
        int r = hcomp_map_next(u->rec, u->len, &pos, &rec, &skipped);
        const hcomp_wlog *w = &f->wlogs[u->log];
        if (rc == 0 && r == HCOMP_MAP_RECORD &&
            (u->at < w->durable_to || piece_there(f, &rec, w->settled))) {
            f->cur_ord = u->ord;
            rc = apply_piece(f, &rec);
            f->cur_ord = 0;
            free(u->rec);
            continue;
        }
        f->unconfirmed[keep++] = *u;
    }
    f->nunconfirmed = keep;
    return rc;
}

/* RELOCATEs that found no piece, tried again once the refresh applied everything */
static int retry_pending(hcomp_file *f)
{
    size_t n = f->npending;
    if (n == 0)
        return 0;
    hcomp_map_record *v = f->pending_reloc;
    f->pending_reloc = NULL;
    f->npending = f->cappending = 0;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++)
        rc = apply_relocate(f, &v[k], 1);     /* kept pending if still unknown */
    free(v);
    return rc;
}

/* Apply the new records of every writer log, in the file's order. */
static int refresh_wlogs(hcomp_file *f, hcomp_error *err)
{
    f->refreshes++;     /* segment lengths are looked at again */
    int rc = hcomp_wlog_scan(f, 0, err);
    if (rc != HCOMP_OK)
        return rc;
    wbatch *bv = NULL;
    size_t nb = 0, cb = 0;
    for (uint32_t i = 0; i < f->nwlogs && rc == HCOMP_OK; i++)
        rc = read_wlog_tail(f, i, &bv, &nb, &cb, err);
    int arc = 0;
    if (rc == HCOMP_OK && nb > 0) {
        qsort(bv, nb, sizeof(*bv), wbatch_cmp);
        for (size_t b = 0; b < nb && arc == 0; b++) {
            const hcomp_wlog *w = &f->wlogs[bv[b].log];
            f->cur_ord = bv[b].ord;
            size_t pos = bv[b].from;
            while (pos < bv[b].to && arc == 0) {
                hcomp_map_record rec;
                uint64_t skipped = 0;   /* counted when the tail was read */
                size_t at = pos;
                /* read as the tail was (to its end): damage is told apart the same way */
                int r = hcomp_map_next(w->buf, w->buf_len, &pos, &rec, &skipped);
                if (r == HCOMP_MAP_INCOMPLETE)
                    break;
                if (r != HCOMP_MAP_RECORD || rec.type == HCOMP_REC_ORDER)
                    continue;
                if (rec.type == HCOMP_REC_PIECE &&
                    (arc = set_aside(f, bv[b].log, &rec, w->buf + at, pos - at,
                                     w->consumed + at)) != 0) {
                    arc = arc < 0 ? arc : 0;
                    continue;
                }
                arc = apply_record(f, &rec);
                if (arc == 0 && rec.type == HCOMP_REC_STATS &&
                    hcomp_bytes_reserve(&f->wstats, pos - at) == 0) {
                    memcpy(f->wstats.p + f->wstats.len, w->buf + at, pos - at);
                    f->wstats.len += pos - at;
                }
            }
            if (!applying_late(f))
                f->max_ord = f->cur_ord;
        }
        f->cur_ord = 0;
        if (arc == 0)
            arc = flush_replayed(f);
    }
    /* pieces set aside that came since (also when nothing is new in the logs), then the
     * RELOCATEs that wait for a piece */
    if (rc == HCOMP_OK && (nb > 0 || f->nunconfirmed > 0)) {
        size_t before = f->nunconfirmed;
        if (arc == 0 && f->nunconfirmed > 0 && (arc = apply_set_aside(f)) == 0)
            arc = flush_replayed(f);
        if (arc == 0)
            arc = retry_pending(f);
        if (arc != 0)
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory replaying the writer logs",
                            f->path);
        else if (nb > 0 || f->nunconfirmed != before)
            f->generation++;
    }
    free(bv);
    if (rc == HCOMP_OK)
        for (size_t i = 0; i < f->nwlogs; i++)
            f->wlogs[i].consumed += f->wlogs[i].buf_len;
    for (size_t i = 0; i < f->nwlogs; i++) {
        f->wlogs[i].buf_len = 0;
        if (f->wlogs[i].buf_cap > LOG_BUFFER_KEPT) {
            free(f->wlogs[i].buf);
            f->wlogs[i].buf = NULL;
            f->wlogs[i].buf_cap = 0;
        }
    }
    return rc;
}

int hcomp_log_refresh(hcomp_file *f, hcomp_error *err)
{
    if (orders_init(f) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    int rc = refresh_main(f, err);
    if (rc == HCOMP_OK && f->hdr.version >= HCOMP_MAP_VERSION_WLOGS)
        rc = refresh_wlogs(f, err);
    return rc;
}

/* The mapping file's own records, in their order. */
static int refresh_main(hcomp_file *f, hcomp_error *err)
{
    struct stat st;
    if (fstat(f->map_fd, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: stat of the mapping file", f->path);
    uint64_t end = (uint64_t) st.st_size;
    if (end <= f->consumed)
        return HCOMP_OK;
    /* the log is read a chunk at a time (a whole log of a million pieces is 65 MB): a
     * record or a damaged stretch cut by a chunk's end is taken up by the next chunk,
     * which starts at it (and grows when one does not fit) */
    uint64_t pos = 0;       /* bytes after f->consumed applied or passed over */
    size_t chunk = hcomp_log_chunk ? hcomp_log_chunk : 1;
    int rc = 0;
    while (f->consumed + pos < end && rc == 0) {
        uint64_t from = f->consumed + pos;
        size_t len = end - from < chunk ? (size_t) (end - from) : chunk;
        if (hcomp_grow(&f->logbuf, &f->logbuf_cap, len) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading the mapping file",
                              f->path);
        long long got = hcomp_pread_full(f->map_fd, f->logbuf, len, from);
        if (got < 0)
            return hcomp_fail_errno(err, errno, "%s: reading the mapping file", f->path);
        int final = (uint64_t) got < len || from + len == end;
        size_t used = apply_chunk(f, f->logbuf, (size_t) got, from, final, &rc);
        pos += used;
        if (final)
            break;
        if (used == 0)
            chunk = chunk > SIZE_MAX / 2 ? SIZE_MAX : 2 * chunk;
    }
    if (rc == 0)
        rc = flush_replayed(f);
    f->nreplayed = 0;
    /* a whole log read at open (96 MB for a million pieces) is not kept for the handle's
     * life: later refreshes read tails of a few records */
    if (f->logbuf_cap > LOG_BUFFER_KEPT) {
        free(f->logbuf);
        f->logbuf = NULL;
        f->logbuf_cap = 0;
    }
    if (f->replayed_cap * sizeof(*f->replayed) > LOG_BUFFER_KEPT) {
        free(f->replayed);
        f->replayed = NULL;
        f->replayed_cap = 0;
    }
    if (rc != 0)    /* consumed stays: the next refresh replays these records again */
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory replaying the mapping file",
                          f->path);
    if (pos > 0)
        f->generation++;
    f->consumed += pos;
    return HCOMP_OK;
}

int hcomp_log_check_lost(const hcomp_file *f, hcomp_error *err)
{
    if (f->lost_records == 0)
        return HCOMP_OK;
    if (f->lost_log[0])
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: writer log %s/%s is damaged at byte %llu "
                          "(%llu records written whole fail their checksums, or a log's header): "
                          "what they recorded is lost, so no read of this file can be trusted; "
                          "`hcomp fsck --repair %s` keeps the other records (then only the lost "
                          "writes are missing)", f->path, f->logdir, f->lost_log,
                          (unsigned long long) f->lost_at, (unsigned long long) f->lost_records,
                          f->path);
    return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the mapping file is damaged at byte %llu (%llu "
                      "records written whole fail their checksums): what they recorded is lost, "
                      "so no read of this file can be trusted; `hcomp fsck --repair %s` keeps the "
                      "other records (then only the lost writes are missing)", f->path,
                      (unsigned long long) f->lost_at, (unsigned long long) f->lost_records,
                      f->path);
}

int hcomp_log_append(hcomp_file *f, const hcomp_bytes *records, hcomp_error *err)
{
    if (records->len == 0)
        return HCOMP_OK;
    if (f->hdr.version >= HCOMP_MAP_VERSION_WLOGS)
        return hcomp_wlog_append(f, records, err);
    /* One write(2) on an O_APPEND descriptor: the records land whole and in one
     * place even with other writers appending at the same time. */
    ssize_t n;
    do
        n = write(f->map_fd, records->p, records->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return hcomp_fail_errno(err, errno, "%s: appending to the mapping file", f->path);
    if ((size_t) n != records->len)
        return hcomp_fail(err, HCOMP_E_NOSPC, "%s: the mapping file's file system took only %zd "
                          "of %zu bytes (full?); the write is not recorded", f->path, n,
                          records->len);
    return HCOMP_OK;
}

int hcomp_log_durable(hcomp_file *f, hcomp_error *err)
{
    if (f->hdr.version >= HCOMP_MAP_VERSION_WLOGS) {
        int rc = hcomp_wlog_sync(f, err);
        if (rc == HCOMP_OK && f->dir_unsynced) {    /* the log directory's own name */
            rc = hcomp_file_dir_sync(f, err);
            if (rc == HCOMP_OK)
                f->dir_unsynced = 0;
        }
        return rc;
    }
    if (fsync(f->map_fd) != 0)
        return hcomp_fail_errno(err, errno, "%s: sync of the mapping file", f->path);
    return HCOMP_OK;
}

void hcomp_log_free(hcomp_file *f)
{
    for (size_t i = 0; i < f->nsegs; i++) {
        if (f->segs[i].fd >= 0)
            close(f->segs[i].fd);
        free(f->segs[i].tier);
        free(f->segs[i].path);
        free(f->segs[i].node);
    }
    free(f->segs);
    free(f->loc);
    f->loc = NULL;
    f->loc_cap = 0;
    f->loc_segments = f->loc_all = 0;
    free(f->pieces);
    free(f->logbuf);
    hcomp_extent_map_free(&f->map);
    free(f->replayed);
    f->replayed = NULL;
    f->nreplayed = f->replayed_cap = 0;
    f->segs = NULL;
    f->pieces = NULL;
    f->logbuf = NULL;
    f->logbuf_cap = 0;
    f->nsegs = f->npieces = 0;
    f->capsegs = f->cappieces = 0;
    /* the writer logs' read state; this opener's own log and clock stay */
    for (size_t i = 0; i < f->nwlogs; i++) {
        free(f->wlogs[i].buf);
        f->wlogs[i].buf = NULL;
        f->wlogs[i].buf_cap = f->wlogs[i].buf_len = 0;
        f->wlogs[i].consumed = f->wlogs[i].fd >= 0 ? HCOMP_WLOG_HEADER_SIZE : UINT64_MAX;
        f->wlogs[i].ord = 0;
    }
    free(f->orders);
    f->orders = NULL;
    f->norders = f->caporders = 0;
    f->cur_ord = f->max_ord = 0;
    free(f->sizes);
    f->sizes = NULL;
    f->nsizes = f->capsizes = 0;
    free(f->pending_reloc);
    f->pending_reloc = NULL;
    f->npending = f->cappending = 0;
    for (size_t k = 0; k < f->nunconfirmed; k++)
        free(f->unconfirmed[k].rec);
    free(f->unconfirmed);
    f->unconfirmed = NULL;
    f->nunconfirmed = f->capunconfirmed = 0;
    hcomp_bytes_free(&f->wstats);
    f->lost_log[0] = '\0';
}
