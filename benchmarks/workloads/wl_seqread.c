/* wl_seqread: a file written out of order, then streamed by readers that analyse what they
 * read (the case read-ahead is for: docs/ENGINE.md, "Read-ahead").
 *
 * --phase write: the file is B blocks of S bytes; rank r writes the blocks b with
 *   b % P == r, one MPI_File_write_at each, in a shuffled order (--order shuffled, the
 *   default) or in increasing order (--order seq); so the pieces of consecutive blocks lie
 *   in different writers' segments, out of their logical order.
 * --phase read: rank r reads the r-th of P contiguous parts of the file in order, C bytes
 *   per MPI_File_read_at (--pattern contiguous, the default), or the chunks of C bytes
 *   numbered k with k % P == r in increasing order (--pattern strided: as IOR's segments or
 *   a rank's slab of array after array), and after each read checks every byte, then computes for
 *   --think MS milliseconds per MiB read (a busy loop: the analysis), as a reader working on
 *   the data does; the next read comes after it.
 * Run the phases as separate programs to read cold (the caller empties the page cache
 * between them).
 *
 * Data: float64, a function of the element's index (a slow ramp and a saw tooth, with a
 * low-bit hash as noise), as a smooth field's values; written as MPI_DOUBLE.
 *
 * usage: wl_seqread FILE --phase write|read [--block S] [--blocks B] [--order shuffled|seq]
 *                   [--chunk C] [--think MS] [--pattern contiguous|strided]
 * RESULT: phase, bytes (logical, all ranks); write: write_s (open..close); read: read_s
 *   (open..close, the slowest rank), io_s (time inside MPI_File_read_at, the slowest rank),
 *   think_s (the computing a rank did) */
#include "wl_common.h"

#include <stdlib.h>
#include <string.h>

static double value(uint64_t e)
{
    return (double) (e >> 12) * 0.25 + (double) (e & 4095) * 1e-3 +
           (double) (wl_hash64(e) & 0xff) * 1e-12;
}

static void fill(double *v, uint64_t e0, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = value(e0 + i);
}

static void busy(double seconds)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds)
        ;
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "--phase write|read [--block S] [--blocks B] "
            "[--order shuffled|seq] [--chunk C] [--think MS] [--pattern contiguous|strided]");
    long long S = 1 << 20, B = 64, C = 1 << 20;
    const char *phase = NULL, *order = "shuffled", *pattern = "contiguous";
    double think_ms = 0;
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--phase") == 0) phase = wl_optval(argc, argv, &i);
        else if (strcmp(argv[i], "--block") == 0) S = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--blocks") == 0) B = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--order") == 0) order = wl_optval(argc, argv, &i);
        else if (strcmp(argv[i], "--chunk") == 0) C = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--think") == 0) think_ms = atof(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--pattern") == 0) pattern = wl_optval(argc, argv, &i);
        else wl_die("unknown option %s", argv[i]);
    }
    int writing = phase && strcmp(phase, "write") == 0, shuffled = strcmp(order, "shuffled") == 0;
    int strided = strcmp(pattern, "strided") == 0;
    if (!phase || (!writing && strcmp(phase, "read")) || (!shuffled && strcmp(order, "seq")) ||
        (!strided && strcmp(pattern, "contiguous")) ||
        S < 8 || S % 8 || S > (1LL << 30) || B < 1 || C < 8 || C % 8 || C > (1LL << 30) ||
        think_ms < 0)
        wl_die("need --phase write|read, --block and --chunk multiples of 8 up to 1 GiB, "
               "--blocks >= 1, --order shuffled|seq, --think >= 0, --pattern contiguous|strided");
    long long total = S * B;
    MPI_Status st;
    if (writing) {
        double *v = malloc((size_t) S);
        long long *mine = malloc((size_t) B * sizeof(*mine)), n = 0;
        if (!v || !mine)
            wl_die("out of memory");
        for (long long b = wl_rank; b < B; b += wl_size)
            mine[n++] = b;
        for (long long i = n - 1; shuffled && i > 0; i--) {
            long long j = (long long) (wl_hash64(((uint64_t) wl_rank << 40) + (uint64_t) i) %
                                       (uint64_t) (i + 1));
            long long t = mine[i];
            mine[i] = mine[j];
            mine[j] = t;
        }
        double t0 = wl_sync_time();
        MPI_File fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
        for (long long k = 0; k < n; k++) {
            fill(v, (uint64_t) (mine[k] * S / 8), (size_t) S / 8);
            wl_mpi(MPI_File_write_at(fh, mine[k] * S, v, (int) (S / 8), MPI_DOUBLE, &st),
                   "MPI_File_write_at");
        }
        wl_close(&c, &fh);
        double t = wl_sync_time() - t0;
        wl_result_begin("seqread", &c);
        wl_result_kv("phase=write bytes=%lld write_s=%.6f", total, t);
        wl_result_end();
        free(v);
        free(mine);
    } else {
        long long part = total / 8 / wl_size * 8, lo = part * wl_rank;
        long long hi = wl_rank == wl_size - 1 ? total : lo + part, step = C;
        if (strided) {          /* chunks rank, rank + P, ...: the last may be short */
            lo = C * wl_rank;
            hi = total;
            step = C * wl_size;
        }
        double *v = malloc((size_t) C), *want = malloc((size_t) C);
        if (!v || !want)
            wl_die("out of memory");
        double io = 0, think = 0, t0 = wl_sync_time();
        MPI_File fh = wl_open(&c, MPI_MODE_RDONLY);
        for (long long off = lo; off < hi; off += step) {
            long long n = hi - off < C ? hi - off : C;
            double a = MPI_Wtime();
            wl_mpi(MPI_File_read_at(fh, off, v, (int) (n / 8), MPI_DOUBLE, &st),
                   "MPI_File_read_at");
            io += MPI_Wtime() - a;
            fill(want, (uint64_t) off / 8, (size_t) n / 8);
            if (memcmp(v, want, (size_t) n) != 0)
                wl_verify_failed("rank %d: the %lld bytes at %lld differ from what was written",
                                 wl_rank, n, off);
            if (think_ms > 0) {
                a = MPI_Wtime();
                busy(think_ms * 1e-3 * (double) n / 1048576.0);
                think += MPI_Wtime() - a;
            }
        }
        wl_close(&c, &fh);
        double t = wl_sync_time() - t0, io_max, think_max;
        MPI_Reduce(&io, &io_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&think, &think_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        wl_result_begin("seqread", &c);
        wl_result_kv("phase=read bytes=%lld read_s=%.6f io_s=%.6f think_s=%.6f", total, t, io_max,
                     think_max);
        wl_result_end();
        free(v);
        free(want);
    }
    MPI_Finalize();
    return 0;
}
