/* wl_vpic: a VPIC-IO-like write. Every rank owns N particles with 8 properties (6 float,
 * 2 int; generator in vpic_gen.h) and, at each of T steps, writes each property with one
 * collective MPI_File_write_at_all into one shared file, as VPIC-IO writes one dataset per
 * property and step:
 *
 *   file = for t in steps, for v in properties: the property of all N*P particles, rank r's
 *          N at element r*N (4 bytes each); offset ((t*8 + v)*N*P + r*N) * 4
 *
 * The MPI datatype is MPI_FLOAT or MPI_INT, so the driver knows the element type. Only the
 * I/O is timed: open, the 8 collective writes of every step (the data of a step is generated
 * before its writes, as a simulation computes between checkpoints), close.
 *
 * usage: wl_vpic FILE [--n PARTICLES_PER_RANK] [--steps T] [common options]
 * RESULT: bytes (logical), write_s, gen_s (untimed generation), particles (global) */
#include "vpic_gen.h"
#include "wl_common.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--n PARTICLES_PER_RANK] [--steps T]");
    long long n = 1 << 20;
    int steps = 2;
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--n") == 0)
            n = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--steps") == 0)
            steps = atoi(wl_optval(argc, argv, &i));
        else
            wl_die("unknown option %s", argv[i]);
    }
    if (n <= 0 || steps <= 0 || n > (1LL << 28))
        wl_die("need 0 < --n <= 2^28 and --steps > 0");
    uint64_t total = (uint64_t) n * (uint64_t) wl_size, g0 = (uint64_t) n * (uint64_t) wl_rank;
    uint32_t *buf = malloc((size_t) n * 4 * VPIC_NVARS);
    if (buf == NULL)
        wl_die("out of memory");

    double t_io = 0, t_gen = 0, t0 = wl_sync_time();
    MPI_File fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    t_io += wl_sync_time() - t0;
    for (int t = 0; t < steps; t++) {
        double g = MPI_Wtime();
        for (int v = 0; v < VPIC_NVARS; v++)
            vpic_fill(v, t, g0, (uint64_t) n, buf + (size_t) v * (size_t) n);
        t_gen += MPI_Wtime() - g;
        t0 = wl_sync_time();
        for (int v = 0; v < VPIC_NVARS; v++) {
            MPI_Offset off = (MPI_Offset) (((uint64_t) t * VPIC_NVARS + (uint64_t) v) * total + g0) * 4;
            wl_mpi(MPI_File_write_at_all(fh, off, buf + (size_t) v * (size_t) n, (int) n,
                                         v < 6 ? MPI_FLOAT : MPI_INT, MPI_STATUS_IGNORE),
                   "MPI_File_write_at_all");
        }
        t_io += wl_sync_time() - t0;
    }
    t0 = wl_sync_time();
    wl_close(&c, &fh);
    t_io += wl_sync_time() - t0;

    wl_result_begin("vpic", &c);
    wl_result_kv("bytes=%llu", (unsigned long long) (total * 4 * VPIC_NVARS * (uint64_t) steps));
    wl_result_kv("write_s=%.6f", t_io);
    wl_result_kv("gen_s=%.3f", t_gen);
    wl_result_kv("particles=%llu steps=%d", (unsigned long long) total, steps);
    wl_result_end();
    free(buf);
    MPI_Finalize();
    return 0;
}
