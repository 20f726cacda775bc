/* Shared helpers of the benchmark workloads (benchmarks/workloads/wl_*.c).
 *
 * Every workload program takes   wl_xxx FILE [options]
 *   FILE            the file, with its ROMIO prefix: hcomp:/dir/f.dat or ufs:/dir/f.dat
 *   --hint KEY=VAL  an MPI_Info hint passed at every MPI_File_open (repeatable); values may
 *                   hold commas (hcomp_codecs=lz4,zstd:3), which is why it is one per option
 *   --cfg NAME      the configuration's label, copied into the RESULT line
 *   --sync          MPI_File_sync before every close (the write is then durable, and timed so)
 * and prints, from rank 0, one line
 *   RESULT workload=NAME cfg=LABEL np=P key=value ...  peak_rss_kib=K
 * that scripts/bench parses. A read whose bytes differ from what was written fails: the
 * program prints "VERIFY FAILED ..." and calls MPI_Abort, so a fast but wrong configuration
 * can never produce a figure. */
#ifndef WL_COMMON_H
#define WL_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

typedef struct wl_common {
    const char *file;   /* with prefix */
    const char *cfg;    /* label */
    MPI_Info info;      /* the hints */
    int sync;
} wl_common;

extern int wl_rank, wl_size;

/* MPI_Init, rank and size; argv[1] is the file. */
void wl_init(int *argc, char ***argv, wl_common *c, const char *usage);
/* Consume a common option at argv[*i] (advancing *i past its value): 1 if it was one. */
int wl_common_opt(int argc, char **argv, int *i, wl_common *c);
/* The value of option argv[*i], advancing *i; dies when it is missing. */
const char *wl_optval(int argc, char **argv, int *i);
/* "64", "4K", "4KiB", "16M", "2G": bytes or counts with binary suffixes. */
long long wl_parse_size(const char *s);

void wl_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Check an MPI return code; on error die naming the call and MPI's message. */
void wl_mpi(int rc, const char *what);
/* Report a verification failure and abort (never returns). */
void wl_verify_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Barrier, then MPI_Wtime: every phase is timed from all ranks ready to all ranks done. */
double wl_sync_time(void);
/* MPI_File_open / close with the common hints; close syncs first with --sync. */
MPI_File wl_open(const wl_common *c, int amode);
void wl_close(const wl_common *c, MPI_File *fh);
/* Bytes this process has read with read(2)/pread(2) so far (/proc/self/io rchar): what a
 * read phase really touched on storage, mapping files included. */
long long wl_rchar(void);
/* Sum over ranks (long long). */
long long wl_sum_ll(long long v);
/* Start the RESULT line (rank 0 only prints; all ranks must call wl_result_end). */
void wl_result_begin(const char *workload, const wl_common *c);
void wl_result_kv(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wl_result_end(void);   /* adds peak_rss_kib (the largest rank's) and the newline */

/* Counter-based random numbers: the same key gives the same number on every rank and in
 * every program, so a reader regenerates what a writer wrote without sharing state. */
uint64_t wl_hash64(uint64_t x);
static inline double wl_u01(uint64_t key)
{
    return (double) (wl_hash64(key) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
