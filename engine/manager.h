/* The compression manager: encodes the pieces of a task (filter, then codec; raw
 * when that does not shrink them) on a pool of threads, so that compression of
 * later pieces overlaps the tier I/O of earlier ones. The pool is per process and
 * never has more threads than cores: workers = cores - 1, plus the caller, who
 * encodes too while it waits. */
#ifndef HCOMP_MANAGER_H
#define HCOMP_MANAGER_H

#include <stddef.h>
#include <stdint.h>

typedef struct hcomp_job {
    /* in */
    const unsigned char *src;
    uint32_t len;
    unsigned codec;
    int level;
    int filter;
    /* buffers, owned by the caller and grown as needed */
    unsigned char *out;
    size_t out_cap;
    unsigned char *tmp;
    size_t tmp_cap;
    /* out */
    const unsigned char *payload;   /* src (raw) or out */
    uint32_t stored;
    uint32_t coded;                 /* the codec's output size (even if stored raw) */
    uint8_t codec_used, filter_used;
    double seconds;                 /* time spent encoding */
    int rc;                         /* HCOMP_OK or an error code */
    int state;                      /* 0 queued, 1 running, 2 done */
} hcomp_job;

/* Encode one job in the calling thread. */
void hcomp_job_encode(hcomp_job *job);
/* Start encoding jobs[0..n) with up to threads-1 helper threads (threads 0: the
 * number of cores). Jobs must stay valid until hcomp_jobs_wait returned for all. */
void hcomp_jobs_start(hcomp_job *jobs, size_t n, unsigned threads);
/* Wait until job i is done, encoding queued jobs meanwhile. */
void hcomp_jobs_wait(hcomp_job *jobs, size_t n, size_t i);

#endif
