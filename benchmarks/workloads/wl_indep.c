/* wl_indep: independent writes and reads of one block size (4 KiB to 4 MiB in the
 * benchmark), sequential or random, into one shared file.
 *
 * Rank r owns K blocks of S bytes at offset r*K*S. It writes them with MPI_File_write_at,
 * one call per block, in increasing order (--pattern seq) or in a random permutation
 * (--pattern random, a different one per rank); closes; reopens; reads them back the same
 * way (random: another permutation) and compares every byte.
 *
 * Data (generated before the timing, a function of the global element index):
 *   --data smooth   float64 samples of two superposed sine waves (periods 4096 and 65536
 *                   elements) plus noise of 1e-9 in the low bits, as a smooth field has;
 *                   written as MPI_DOUBLE
 *   --data random   incompressible pseudo-random bytes (splitmix64), written as MPI_BYTE
 *
 * usage: wl_indep FILE [--block S] [--count K] [--pattern seq|random] [--data smooth|random]
 * RESULT: bytes (logical, all ranks), write_s, read_s (each open..close) */
#include "wl_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void permute(long long *order, long long k, uint64_t key)
{
    for (long long i = 0; i < k; i++)
        order[i] = i;
    for (long long i = k - 1; i > 0; i--) {
        long long j = (long long) (wl_hash64(key * 0x100000001b3ULL + (uint64_t) i) % (uint64_t) (i + 1));
        long long t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--block S] [--count K] [--pattern seq|random] [--data smooth|random]");
    long long S = 1 << 20, K = 16;
    const char *pattern = "seq", *data = "smooth";
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--block") == 0) S = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--count") == 0) K = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--pattern") == 0) pattern = wl_optval(argc, argv, &i);
        else if (strcmp(argv[i], "--data") == 0) data = wl_optval(argc, argv, &i);
        else wl_die("unknown option %s", argv[i]);
    }
    int rnd = strcmp(pattern, "random") == 0, smooth = strcmp(data, "smooth") == 0;
    if (S < 8 || S % 8 || S > (1LL << 30) || K < 1 || (!rnd && strcmp(pattern, "seq")) ||
        (!smooth && strcmp(data, "random")))
        wl_die("need --block a multiple of 8 up to 1 GiB, --count >= 1, --pattern seq|random, "
               "--data smooth|random");
    size_t bytes = (size_t) S * (size_t) K;
    unsigned char *mine = malloc(bytes), *back = malloc(bytes);
    long long *order = malloc((size_t) K * sizeof(*order));
    if (!mine || !back || !order)
        wl_die("out of memory");
    uint64_t e0 = (uint64_t) wl_rank * bytes / 8;   /* first global 8-byte element */
    for (size_t e = 0; e < bytes / 8; e++) {
        uint64_t g = e0 + e;
        if (smooth) {
            double x = (double) g;
            double val = sin(6.283185307179586 * x / 4096) + 0.3 * sin(6.283185307179586 * x / 65536) +
                         1e-9 * (wl_u01(g) - 0.5);
            memcpy(mine + 8 * e, &val, 8);
        } else {
            uint64_t r = wl_hash64(g ^ 0xC0FFEEULL);
            memcpy(mine + 8 * e, &r, 8);
        }
    }
    MPI_Datatype type = smooth ? MPI_DOUBLE : MPI_BYTE;
    int count = (int) (smooth ? S / 8 : S);
    MPI_Offset base = (MPI_Offset) wl_rank * (MPI_Offset) bytes;

    permute(order, rnd ? K : 0, (uint64_t) wl_rank * 2 + 1);
    double t0 = wl_sync_time();
    MPI_File fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    for (long long i = 0; i < K; i++) {
        long long b = rnd ? order[i] : i;
        wl_mpi(MPI_File_write_at(fh, base + b * S, mine + (size_t) b * (size_t) S, count, type,
                                 MPI_STATUS_IGNORE), "MPI_File_write_at");
    }
    wl_close(&c, &fh);
    double t_write = wl_sync_time() - t0;

    memset(back, 0, bytes);
    permute(order, rnd ? K : 0, (uint64_t) wl_rank * 2 + 2);
    t0 = wl_sync_time();
    fh = wl_open(&c, MPI_MODE_RDONLY);
    for (long long i = 0; i < K; i++) {
        long long b = rnd ? order[i] : i;
        wl_mpi(MPI_File_read_at(fh, base + b * S, back + (size_t) b * (size_t) S, count, type,
                                MPI_STATUS_IGNORE), "MPI_File_read_at");
    }
    wl_close(&c, &fh);
    double t_read = wl_sync_time() - t0;
    if (memcmp(mine, back, bytes) != 0) {
        size_t e = 0;
        while (mine[e] == back[e])
            e++;
        wl_verify_failed("byte %zu of block %zu differs from what was written", e % (size_t) S,
                         e / (size_t) S);
    }

    wl_result_begin("indep", &c);
    wl_result_kv("pattern=%s data=%s block=%lld count=%lld", pattern, data, S, K);
    wl_result_kv("bytes=%lld write_s=%.6f read_s=%.6f", (long long) bytes * wl_size, t_write, t_read);
    wl_result_end();
    free(mine);
    free(back);
    free(order);
    MPI_Finalize();
    return 0;
}
