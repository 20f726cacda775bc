/* The compression manager: encodes the pieces of a task (filter, then codec; raw
 * when that does not shrink them) on a pool of threads, so that compression of
 * later pieces overlaps the tier I/O of earlier ones; and decodes the blocks of a
 * read on the same threads. The pool is per process and
 * never has more threads than cores: workers = cores - 1, plus the caller, who
 * encodes too while it waits. */
#ifndef HCOMP_MANAGER_H
#define HCOMP_MANAGER_H

#include <stddef.h>
#include <stdint.h>

#define HCOMP_JOB_ALTS 5            /* other encodings a job may try: one per form but the
                                       choice's (four forms: plain, byte-shuffled,
                                       bit-shuffled, bytedelta), the choice's codec at a
                                       faster level, the best observed candidate */

typedef struct hcomp_job {
    /* in */
    int decode;                     /* 0: encode src into a piece; 1: check and decode */
    const unsigned char *src;       /* encode: the logical bytes; decode: the stored ones */
    uint32_t len;                   /* bytes at src */
    unsigned codec;
    int level;
    int filter;
    uint32_t block_size_bs;         /* encode, framed: a bit-shuffled encoding's blocks (0:
                                       block_size) */
    uint32_t block_size;            /* encode: framed in blocks of this size; 0 unframed;
                                       decode: src is a whole framed piece's table and
                                       blocks, in blocks of this size */
    unsigned char *dst;             /* decode: dst_len logical bytes go here (dst may be */
    uint32_t dst_len;               /* src itself for bytes stored as they are) */
    uint32_t want_crc;              /* decode: the stored bytes' CRC-32 (a framed piece's:
                                       its table's) */
    int blocks_at_dst;              /* decode, framed (block_size > 0): src holds only the
                                       table; the blocks, stored as they are, were read
                                       straight to dst: check them there */
    const uint32_t *block_crcs;     /* decode, unframed, codec none: not NULL when src holds
                                       several blocks stored as they are, of check_block
                                       bytes each (the last may be shorter), each with its
                                       own checksum here (want_crc is then unused) */
    uint32_t check_block;
    /* decode: called first, on the job's thread, to bring the stored bytes to src (the
     * caller's I/O: the pool overlaps one job's reading with another's decoding); not 0:
     * the job fails with HCOMP_E_IO, the caller knows why */
    int (*fetch)(struct hcomp_job *job, void *arg);
    void *fetch_arg;
    /* buffers, owned by the caller and grown as needed */
    unsigned char *out;
    size_t out_cap;
    unsigned char *tmp;
    size_t tmp_cap;
    unsigned char *table;           /* encode, framed: the block table */
    size_t table_cap;
    /* out (encode) */
    const unsigned char *payload;   /* what follows the table: src (raw) or out */
    uint32_t table_len;             /* 0 unframed */
    uint32_t block_used;            /* framed: the blocks' size (HCOMP_BLOCK_AS_IS when no
                                       block shrank, else block_size) */
    uint32_t stored;                /* the piece's payload: table_len + bytes at payload */
    uint32_t crc;                   /* the record's checksum: of the payload, or the table */
    uint32_t coded;                 /* the codec's output size (even if stored raw) */
    uint8_t codec_used, filter_used;
    /* out (both) */
    double seconds;                 /* time spent encoding or decoding */
    int rc;                         /* HCOMP_OK or an error code; decode: HCOMP_E_CORRUPT */
    int bad_crc;                    /* decode: a checksum did not match */
    int64_t bad_block;              /* decode, whole framed piece: the first damaged block
                                       (-1: its table, or none); with block_crcs: the
                                       first damaged of them */
    int state;                      /* 0 queued, 1 running, 2 done */
    /* encode: other ways to store the same bytes (a trial's planned choice, or the best
     * of forms not yet observed), encoded after the first; the smallest piece is kept, and
     * codec, level and filter then name the kept one. alt_out and alt_table are spare
     * buffers (the caller owns them, as out and table: they swap) */
    int nalt;
    unsigned alt_codec[HCOMP_JOB_ALTS];
    int alt_level[HCOMP_JOB_ALTS], alt_filter[HCOMP_JOB_ALTS];
    unsigned char *alt_out;
    size_t alt_out_cap;
    unsigned char *alt_table;
    size_t alt_table_cap;
    /* out (nalt > 0): the encodings not kept, for the predictor's feedback (other_coded
     * 0: it failed) */
    unsigned other_codec[HCOMP_JOB_ALTS];
    int other_level[HCOMP_JOB_ALTS], other_filter[HCOMP_JOB_ALTS];
    uint32_t other_coded[HCOMP_JOB_ALTS];
    double other_seconds[HCOMP_JOB_ALTS];
} hcomp_job;

/* Encode (or decode) one job in the calling thread. */
void hcomp_job_encode(hcomp_job *job);
void hcomp_job_run(hcomp_job *job);
/* Start running jobs[0..n) with up to threads-1 helper threads (threads 0: the
 * number of cores). Jobs must stay valid until hcomp_jobs_wait returned for all. */
void hcomp_jobs_start(hcomp_job *jobs, size_t n, unsigned threads);
/* Wait until job i is done, running queued jobs meanwhile. */
void hcomp_jobs_wait(hcomp_job *jobs, size_t n, size_t i);

#endif
