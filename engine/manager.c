/* Compression manager: a process-wide pool of worker threads taking jobs in order. */
#include "manager.h"
#include "filter.h"
#include "framing.h"
#include "tiers/piece_header.h"
#include "hcomp_codec.h"
#include "common/util.h"
#include "common/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int grow_or_fail(hcomp_job *j, unsigned char **buf, size_t *cap, size_t n)
{
    if (hcomp_grow(buf, cap, n ? n : 1) == 0)
        return 0;
    j->rc = HCOMP_E_NOMEM;
    return -1;
}

/* A framed piece: every block on its own behind the table; no block shrank: the
 * source as it is (codec 0), with its table. */
static void encode_framed(hcomp_job *j, const hcomp_codec *c)
{
    uint32_t bsize = hcomp_filter_is_bitshuffle(j->filter) && j->block_size_bs ? j->block_size_bs
                                                                                : j->block_size;
    uint32_t n = hcomp_frame_blocks(j->len, bsize);
    size_t tlen = hcomp_block_table_size(n);
    if (grow_or_fail(j, &j->table, &j->table_cap, tlen) != 0)
        return;
    j->table_len = (uint32_t) tlen;
    j->block_used = bsize;
    uint32_t any = 0;
    if (c != NULL && c->id != HCOMP_CODEC_NONE) {
        size_t bound = hcomp_frame_bound(c, j->len, bsize), blen = 0;
        uint64_t coded = 0;
        if (bound == SIZE_MAX || grow_or_fail(j, &j->out, &j->out_cap, bound) != 0) {
            j->rc = HCOMP_E_NOMEM;
            return;
        }
        int rc = hcomp_frame_encode(c, j->level, j->filter, bsize, j->src, j->len,
                                    &j->tmp, &j->tmp_cap, j->out, bound, j->table, &blen,
                                    &coded, &any);
        if (rc != HCOMP_OK) {
            j->rc = rc == HCOMP_E_NOMEM ? rc : HCOMP_E_IO;
            return;
        }
        j->coded = coded > UINT32_MAX ? UINT32_MAX : (uint32_t) coded;
        if (any > 0) {
            j->payload = j->out;
            j->stored = (uint32_t) (tlen + blen);
            j->codec_used = (uint8_t) c->id;
            j->filter_used = (uint8_t) j->filter;
        }
    }
    if (any == 0) {
        tlen = hcomp_block_table_size(hcomp_frame_blocks(j->len, HCOMP_BLOCK_AS_IS));
        if (grow_or_fail(j, &j->table, &j->table_cap, tlen) != 0)
            return;
        hcomp_frame_table_raw(HCOMP_BLOCK_AS_IS, j->src, j->len, j->table);
        j->table_len = (uint32_t) tlen;
        j->block_used = HCOMP_BLOCK_AS_IS;
        j->stored = (uint32_t) tlen + j->len;
    }
    j->crc = hcomp_crc32(j->table, tlen);
}

static void encode(hcomp_job *j)
{
    const hcomp_codec *c = hcomp_codec_by_id(j->codec);
    j->payload = j->src;
    j->stored = j->len;
    j->coded = j->len;
    j->table_len = 0;
    j->block_used = 0;
    j->codec_used = HCOMP_CODEC_NONE;
    j->filter_used = HCOMP_FILTER_NONE;
    j->rc = HCOMP_OK;
    if (j->block_size > 0) {
        encode_framed(j, c);
        return;
    }
    if (c != NULL && c->id != HCOMP_CODEC_NONE && j->len > 0) {
        size_t bound = c->bound(j->len), clen = 0;
        if (grow_or_fail(j, &j->out, &j->out_cap, bound) != 0)
            return;
        int rc = hcomp_filter_encode(c, j->level, j->filter, j->src, j->len, &j->tmp,
                                     &j->tmp_cap, j->out, bound, &clen);
        if (rc != HCOMP_OK) {
            j->rc = rc == HCOMP_E_NOMEM ? rc : HCOMP_E_IO;
            return;
        }
        j->coded = (uint32_t) clen;
        if (clen < j->len) {        /* only a piece that shrinks is stored compressed */
            j->payload = j->out;
            j->stored = (uint32_t) clen;
            j->codec_used = (uint8_t) c->id;
            j->filter_used = (uint8_t) j->filter;
        }
    }
    j->crc = hcomp_crc32(j->payload, j->stored);
}

/* Check stored bytes against their checksum, then decode them (codec 0: they are the
 * logical bytes; the caller may have read them straight into dst). */
static void decode(hcomp_job *j)
{
    const hcomp_codec *c = hcomp_codec_by_id(j->codec);
    j->rc = HCOMP_OK;
    j->bad_crc = 0;
    j->bad_block = -1;
    if (j->fetch != NULL && j->fetch(j, j->fetch_arg) != 0) {
        j->rc = HCOMP_E_IO;
        return;
    }
    if (j->block_size > 0) {        /* a whole framed piece: its table, then every block */
        size_t tlen = hcomp_block_table_size(hcomp_frame_blocks(j->dst_len, j->block_size));
        j->bad_crc = j->len < tlen || hcomp_crc32(j->src, tlen) != j->want_crc;
        if (!j->bad_crc && j->blocks_at_dst) {
            if (hcomp_frame_check_raw(j->src, j->len, j->dst, j->dst_len, j->block_size,
                                      &j->bad_block) != HCOMP_OK) {
                j->rc = HCOMP_E_CORRUPT;
                j->bad_crc = j->bad_block >= 0;
            }
            return;
        }
        if (j->bad_crc || c == NULL ||
            hcomp_frame_decode(c, j->filter, j->src, j->len, j->dst_len, j->block_size, j->dst,
                               &j->tmp, &j->tmp_cap, &j->bad_block, &j->bad_crc) != HCOMP_OK)
            j->rc = HCOMP_E_CORRUPT;
        return;
    }
    if (j->block_crcs != NULL) {    /* blocks stored as they are, each its own checksum */
        for (uint32_t at = 0, i = 0; at < j->len && !j->bad_crc; at += j->check_block, i++) {
            uint32_t n = j->len - at < j->check_block ? j->len - at : j->check_block;
            j->bad_crc = hcomp_crc32(j->src + at, n) != j->block_crcs[i];
            j->bad_block = j->bad_crc ? (int64_t) i : -1;
        }
    } else {
        j->bad_crc = hcomp_crc32(j->src, j->len) != j->want_crc;
    }
    if (j->bad_crc || c == NULL)
        j->rc = HCOMP_E_CORRUPT;
    else if (c->id == HCOMP_CODEC_NONE && j->filter == HCOMP_FILTER_NONE) {
        if (j->len != j->dst_len)
            j->rc = HCOMP_E_CORRUPT;
        else if (j->dst != j->src)
            memcpy(j->dst, j->src, j->len);
    } else if (hcomp_filter_decode(c, j->filter, j->src, j->len, j->dst, j->dst_len, &j->tmp,
                                   &j->tmp_cap) != HCOMP_OK)
        j->rc = HCOMP_E_CORRUPT;
}

/* What the encoding o, not kept, made: the job's i-th other, for the predictor */
static void note_other(hcomp_job *j, int i, const hcomp_job *o)
{
    j->other_codec[i] = o->codec;
    j->other_level[i] = o->level;
    j->other_filter[i] = o->filter;
    j->other_coded[i] = o->rc == HCOMP_OK ? o->coded : 0;
    j->other_seconds[i] = o->seconds;
}

/* The job's other encodings (nalt), each into the spare buffers; where one is smaller than
 * what the job holds, the job takes it and the spare buffers take the job's. Field by
 * field: the pool reads state under its lock while this runs. */
static void encode_alts(hcomp_job *j)
{
    for (int i = 0; i < j->nalt; i++) {
        hcomp_job a = *j;
        a.nalt = 0;
        a.codec = j->alt_codec[i];
        a.level = j->alt_level[i];
        a.filter = j->alt_filter[i];
        a.out = j->alt_out;
        a.out_cap = j->alt_out_cap;
        a.table = j->alt_table;
        a.table_cap = j->alt_table_cap;
        double t0 = hcomp_now();
        encode(&a);
        a.seconds = hcomp_now() - t0;
        j->tmp = a.tmp;         /* shared scratch, maybe grown */
        j->tmp_cap = a.tmp_cap;
        if (a.rc != HCOMP_OK || a.stored >= j->stored) {
            j->alt_out = a.out;
            j->alt_out_cap = a.out_cap;
            j->alt_table = a.table;
            j->alt_table_cap = a.table_cap;
            note_other(j, i, &a);
            continue;
        }
        note_other(j, i, j);
        j->alt_out = j->out;
        j->alt_out_cap = j->out_cap;
        j->alt_table = j->table;
        j->alt_table_cap = j->table_cap;
        j->codec = a.codec;
        j->level = a.level;
        j->filter = a.filter;
        j->out = a.out;
        j->out_cap = a.out_cap;
        j->table = a.table;
        j->table_cap = a.table_cap;
        j->payload = a.payload;
        j->table_len = a.table_len;
        j->block_used = a.block_used;
        j->stored = a.stored;
        j->crc = a.crc;
        j->coded = a.coded;
        j->codec_used = a.codec_used;
        j->filter_used = a.filter_used;
        j->seconds = a.seconds;
    }
}

void hcomp_job_run(hcomp_job *j)
{
    double t0 = hcomp_now();
    if (j->decode)
        decode(j);
    else
        encode(j);
    j->seconds = hcomp_now() - t0;
    if (!j->decode && j->nalt > 0 && j->rc == HCOMP_OK)
        encode_alts(j);
}

void hcomp_job_encode(hcomp_job *j)
{
    j->decode = 0;
    hcomp_job_run(j);
}

/* ---- the pool ---------------------------------------------------------------- */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_work = PTHREAD_COND_INITIALIZER;   /* jobs queued */
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;   /* a job finished */
static hcomp_job *queue_jobs;
static size_t queue_n, queue_next;
static unsigned pool_threads;  /* started workers */

static int take(hcomp_job **out)
{
    while (queue_jobs && queue_next < queue_n) {
        hcomp_job *j = &queue_jobs[queue_next++];
        if (j->state == 0) {
            j->state = 1;
            *out = j;
            return 1;
        }
    }
    return 0;
}

static void *worker(void *arg)
{
    (void) arg;
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        hcomp_job *j;
        while (!take(&j))
            pthread_cond_wait(&pool_work, &pool_lock);
        pthread_mutex_unlock(&pool_lock);
        hcomp_job_run(j);
        pthread_mutex_lock(&pool_lock);
        j->state = 2;
        pthread_cond_broadcast(&pool_done);
    }
    return NULL;
}

/* sysconf(_SC_NPROCESSORS_ONLN) opens and reads /sys/devices/system/cpu/online each time
 * (tens of microseconds, on every read and write that uses the pool): asked once */
static unsigned cores(void)
{
    static _Atomic unsigned cached;
    unsigned c = atomic_load_explicit(&cached, memory_order_relaxed);
    if (c == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c = n > 0 ? (unsigned) n : 1;
        atomic_store_explicit(&cached, c, memory_order_relaxed);
    }
    return c;
}

void hcomp_jobs_start(hcomp_job *jobs, size_t n, unsigned threads)
{
    unsigned ncores = cores();
    unsigned want = threads ? threads : ncores;
    if (want > ncores)
        want = ncores;
    pthread_mutex_lock(&pool_lock);
    for (size_t i = 0; i < n; i++)
        jobs[i].state = 0;
    while (pool_threads + 1 < want) {  /* the caller is one of them */
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &a, worker, NULL);
        pthread_attr_destroy(&a);
        if (rc != 0)
            break;      /* fewer helpers: the caller encodes the rest itself */
        pool_threads++;
    }
    /* one task at a time per process (ROMIO serialises I/O per file; several
     * files at once just take turns) */
    while (queue_jobs && queue_next < queue_n)
        pthread_cond_wait(&pool_done, &pool_lock);
    if (want > 1 && n > 1) {
        queue_jobs = jobs;
        queue_n = n;
        queue_next = 0;
        pthread_cond_broadcast(&pool_work);
    }
    pthread_mutex_unlock(&pool_lock);
}

void hcomp_jobs_wait(hcomp_job *jobs, size_t n, size_t i)
{
    pthread_mutex_lock(&pool_lock);
    int pooled = queue_jobs == jobs;
    while (jobs[i].state != 2) {
        hcomp_job *j = NULL;
        if (jobs[i].state == 0) {      /* not taken yet: do it now, in order */
            j = &jobs[i];
            j->state = 1;
        } else if (!pooled || !take(&j)) {
            pthread_cond_wait(&pool_done, &pool_lock);
            continue;
        }
        pthread_mutex_unlock(&pool_lock);
        hcomp_job_run(j);
        pthread_mutex_lock(&pool_lock);
        j->state = 2;
        pthread_cond_broadcast(&pool_done);
    }
    if (pooled && i + 1 == n) {         /* the task is over: release the queue */
        queue_jobs = NULL;
        queue_n = queue_next = 0;
        pthread_cond_broadcast(&pool_done);
    }
    pthread_mutex_unlock(&pool_lock);
    (void) n;
}
