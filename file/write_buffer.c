/* The write-behind buffer: small writes of one handle gathered into one task.
 *
 * A write through hcomp_file_pwrite_buffered smaller than the piece size (and than the
 * buffer) is copied here instead of being a task of its own, with its own analysis,
 * pieces, checksums and log append. The buffer keeps runs: disjoint logical ranges in
 * offset order, a write that touches or overlaps runs merged into them (the later bytes
 * win, as they would on disk). It is written out as one task (file_write.c: pieces never
 * span two runs, so every piece backs one logical range and its header still names it;
 * tasks of at most a piece, so that what each overwrote is freed before the next is
 * placed) when it is full, before a write that is not buffered, before a read or a truncation of
 * this handle, at sync and at close, and when the driver asks (hcomp_file_flush: MPI's
 * collective calls, atomic mode). Until then no other opener sees those bytes, which MPI's
 * non-atomic mode allows (MPI-4.0 14.6.1: sync-barrier-sync or close/open make them
 * visible, and both flush); a process killed before a flush loses them and nothing else. */
#include "file_internal.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

/* at most this many runs: random small writes make a run each, and each run costs a
 * binary search and a move of the runs after it */
#define WBUF_MAX_RUNS 4096

uint64_t hcomp_wbuf_end(const hcomp_file *f)
{
    const hcomp_wbuf *b = &f->wbuf;
    return b->nruns ? b->run[b->nruns - 1].off + b->run[b->nruns - 1].len : 0;
}

int hcomp_wbuf_takes(const hcomp_file *f, uint64_t len)
{
    uint64_t limit = f->opts.write_buffer < f->opts.piece_size ? f->opts.write_buffer
                                                              : f->opts.piece_size;
    return f->writable && len > 0 && len < limit;
}

void hcomp_wbuf_free(hcomp_file *f)
{
    free(f->wbuf.run);
    free(f->wbuf.data);
    free(f->wbuf.out);
    memset(&f->wbuf, 0, sizeof(f->wbuf));
}

/* the first run that ends at or after off (touching counts) */
static size_t first_touching(const hcomp_wbuf *b, uint64_t off)
{
    size_t lo = 0, hi = b->nruns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->run[mid].off + b->run[mid].len < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Write runs [i, ...) as one task of at most `limit` bytes (a run longer than that in
 * parts, from its start); *written: how many bytes of them are now stored. */
static int write_task(hcomp_file *f, size_t i, uint64_t limit, uint64_t *written,
                      size_t *next, hcomp_error *err)
{
    hcomp_wbuf *b = &f->wbuf;
    size_t j = i;
    uint64_t total = 0;
    while (j < b->nruns && (j == i || total + b->run[j].len <= limit))
        total += b->run[j++].len;
    hcomp_wrun part[1];
    const hcomp_wrun *runs = b->run + i;
    size_t n = j - i;
    if (total > limit) {        /* one long run: its first `limit` bytes */
        part[0] = (hcomp_wrun) {b->run[i].off, limit, b->run[i].at};
        runs = part;
        total = limit;
    }
    /* the task's bytes one after another, in offset order */
    if (hcomp_grow(&b->out, &b->out_cap, total) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory writing %llu buffered bytes",
                          f->path, (unsigned long long) total);
    uint64_t at = 0;
    for (size_t k = 0; k < n && at < total; k++) {
        uint64_t len = runs[k].len < total - at ? runs[k].len : total - at;
        memcpy(b->out + at, b->data + runs[k].at, len);
        at += len;
    }
    int rc = hcomp_file_write_runs(f, b->out, runs, runs == part ? 1 : n, err);
    if (rc != HCOMP_OK)
        return rc;
    *written = total;
    *next = runs == part ? i : j;
    return HCOMP_OK;
}

int hcomp_wbuf_flush(hcomp_file *f, hcomp_error *err)
{
    hcomp_ok(err);
    hcomp_wbuf *b = &f->wbuf;
    if (b->nruns == 0)
        return HCOMP_OK;
    /* tasks of at most a piece each: each one's overwritten pieces are punched out before
     * the next is placed, so a checkpoint rewritten in small writes still finds its old
     * room on the fast tier (as the writes themselves would have) */
    uint64_t limit = f->opts.piece_size;
    int saved = f->eng.dtype_hint, rc = HCOMP_OK;
    f->eng.dtype_hint = b->dtype;
    size_t i = 0;
    while (i < b->nruns) {
        uint64_t written = 0;
        size_t next = i;
        if ((rc = write_task(f, i, limit, &written, &next, err)) != HCOMP_OK)
            break;
        b->bytes -= written;
        if (next == i) {        /* part of a long run: the rest stays */
            b->run[i].off += written;
            b->run[i].at += written;
            b->run[i].len -= written;
        }
        i = next;
    }
    f->eng.dtype_hint = saved;
    /* what is written leaves; what is not is kept: a later flush (sync, close) tries again
     * and reports it again */
    memmove(b->run, b->run + i, (b->nruns - i) * sizeof(*b->run));
    b->nruns -= i;
    if (b->nruns == 0)
        b->used = 0;
    if (rc != HCOMP_OK) {
        char msg[HCOMP_ERROR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
        return hcomp_fail(err, rc, "writing %llu bytes of earlier small writes (buffered, "
                          "hcomp_write_buffer) failed: %s", (unsigned long long) b->bytes, msg);
    }
    return HCOMP_OK;
}

/* Room for a new run of len bytes at the end of data; a compaction first when the bytes
 * that merged runs left behind would make data outgrow twice the buffer. */
static int reserve(hcomp_file *f, uint64_t len)
{
    hcomp_wbuf *b = &f->wbuf;
    if (b->used + len > 2 * (uint64_t) f->opts.write_buffer && b->bytes < b->used) {
        if (hcomp_grow(&b->out, &b->out_cap, b->bytes) != 0)
            return -1;
        uint64_t at = 0;
        for (size_t i = 0; i < b->nruns; i++) {
            memcpy(b->out + at, b->data + b->run[i].at, b->run[i].len);
            b->run[i].at = at;
            at += b->run[i].len;
        }
        unsigned char *t = b->data;
        size_t tc = b->data_cap;
        b->data = b->out;
        b->data_cap = b->out_cap;
        b->out = t;
        b->out_cap = tc;
        b->used = at;
    }
    return hcomp_grow(&b->data, &b->data_cap, b->used + len);
}

int hcomp_wbuf_add(hcomp_file *f, const void *buf, uint64_t len, uint64_t off, hcomp_error *err)
{
    hcomp_wbuf *b = &f->wbuf;
    /* the element type the engine is told applies to the whole task: a change of type
     * ends the task */
    if (b->nruns > 0 && b->dtype != f->eng.dtype_hint) {
        int rc = hcomp_wbuf_flush(f, err);
        if (rc != HCOMP_OK)
            return rc;
    }
    if (b->nruns == 0)
        b->dtype = f->eng.dtype_hint;
    size_t i = first_touching(b, off), j = i;
    uint64_t lo = off, hi = off + len;
    while (j < b->nruns && b->run[j].off <= hi) {
        if (b->run[j].off < lo)
            lo = b->run[j].off;
        if (b->run[j].off + b->run[j].len > hi)
            hi = b->run[j].off + b->run[j].len;
        j++;
    }
    /* runs i..j-1 touch the write: they and it become one run [lo, hi) */
    if (j == i + 1 && b->run[i].off == lo && b->run[i].at + b->run[i].len == b->used &&
        hi > b->run[i].off + b->run[i].len) {
        /* the common case: a run grows at its end and its bytes are the last in data */
        hcomp_wrun *r = &b->run[i];
        uint64_t grow = hi - (r->off + r->len);
        if (reserve(f, grow) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        r = &b->run[i];     /* a compaction may have moved its bytes */
        if (r->at + r->len == b->used) {
            memcpy(b->data + r->at + (off - r->off), buf, len);
            b->used += grow;
            b->bytes += grow;
            r->len += grow;
            goto added;
        }
    }
    if (i == j && b->nruns >= WBUF_MAX_RUNS) {
        int rc = hcomp_wbuf_flush(f, err);
        if (rc != HCOMP_OK)
            return rc;
        return hcomp_wbuf_add(f, buf, len, off, err);
    }
    if (reserve(f, hi - lo) != 0 ||
        hcomp_grow_array(&b->run, &b->run_cap, b->nruns + 1, sizeof(*b->run)) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    uint64_t at = b->used, merged = 0;
    for (size_t k = i; k < j; k++) {
        memcpy(b->data + at + (b->run[k].off - lo), b->data + b->run[k].at, b->run[k].len);
        merged += b->run[k].len;
    }
    memcpy(b->data + at + (off - lo), buf, len);
    b->used += hi - lo;
    b->bytes += (hi - lo) - merged;
    hcomp_wrun nr = {lo, hi - lo, at};
    /* runs i..j-1 are replaced by the one run */
    if (j == i)
        memmove(b->run + i + 1, b->run + i, (b->nruns - i) * sizeof(*b->run));
    else if (j > i + 1)
        memmove(b->run + i + 1, b->run + j, (b->nruns - j) * sizeof(*b->run));
    b->nruns += 1 - (j - i);
    b->run[i] = nr;
added:
    if (b->bytes >= f->opts.write_buffer)
        return hcomp_wbuf_flush(f, err);
    return HCOMP_OK;
}
