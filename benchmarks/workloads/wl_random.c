/* wl_random: the incompressible control. Every rank writes T blocks of S pseudo-random
 * bytes (splitmix64 of the global position: nothing for a codec to find) with collective
 * MPI_File_write_at_all, rank r's block of step t at (t*P + r)*S; then reads everything
 * back collectively and compares every byte. A compressing configuration can only lose
 * here: this measures what its analysis and attempts cost.
 *
 * usage: wl_random FILE [--block S] [--steps T] [common options]
 * RESULT: bytes (logical, all ranks), write_s, read_s (each open..close) */
#include "wl_common.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--block S] [--steps T]");
    long long S = 8 << 20;
    int T = 4;
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--block") == 0) S = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--steps") == 0) T = atoi(wl_optval(argc, argv, &i));
        else wl_die("unknown option %s", argv[i]);
    }
    if (S < 8 || S % 8 || S > (1LL << 30) || T < 1)
        wl_die("need --block a multiple of 8 up to 1 GiB and --steps >= 1");
    uint64_t *buf = malloc((size_t) S), *back = malloc((size_t) S);
    if (!buf || !back)
        wl_die("out of memory");

    double t_write = 0, t_read = 0, t0 = wl_sync_time();
    MPI_File fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    t_write += wl_sync_time() - t0;
    for (int t = 0; t < T; t++) {
        uint64_t e0 = ((uint64_t) t * (uint64_t) wl_size + (uint64_t) wl_rank) * (uint64_t) S / 8;
        for (long long e = 0; e < S / 8; e++)
            buf[e] = wl_hash64(e0 + (uint64_t) e);
        t0 = wl_sync_time();
        wl_mpi(MPI_File_write_at_all(fh, (MPI_Offset) e0 * 8, buf, (int) S, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_write_at_all");
        t_write += wl_sync_time() - t0;
    }
    t0 = wl_sync_time();
    wl_close(&c, &fh);
    t_write += wl_sync_time() - t0;

    t0 = wl_sync_time();
    fh = wl_open(&c, MPI_MODE_RDONLY);
    t_read += wl_sync_time() - t0;
    for (int t = 0; t < T; t++) {
        uint64_t e0 = ((uint64_t) t * (uint64_t) wl_size + (uint64_t) wl_rank) * (uint64_t) S / 8;
        memset(back, 0, (size_t) S);
        t0 = wl_sync_time();
        wl_mpi(MPI_File_read_at_all(fh, (MPI_Offset) e0 * 8, back, (int) S, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_read_at_all");
        t_read += wl_sync_time() - t0;
        for (long long e = 0; e < S / 8; e++)
            if (back[e] != wl_hash64(e0 + (uint64_t) e))
                wl_verify_failed("step %d: 8-byte word %lld differs from what was written", t, e);
    }
    t0 = wl_sync_time();
    wl_close(&c, &fh);
    t_read += wl_sync_time() - t0;

    wl_result_begin("random", &c);
    wl_result_kv("bytes=%lld write_s=%.6f read_s=%.6f", S * T * wl_size, t_write, t_read);
    wl_result_end();
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
