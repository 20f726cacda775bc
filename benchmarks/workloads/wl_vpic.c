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
 * --compute S: S seconds of CPU work per rank after each step's writes (a simulation's
 * next step; untimed as I/O), so that a write-back has something to hide behind.
 * --file-per-step: each step is a checkpoint file of its own, FILE.<t> (opened, written,
 * closed), laid out as a one-step file (offsets with t = 0), as most restart files are.
 *
 * usage: wl_vpic FILE [--n PARTICLES_PER_RANK] [--steps T] [--compute S] [--file-per-step]
 *        [common options]
 * RESULT: bytes (logical), write_s (open + writes + close, every step: the application's
 * I/O time), gen_s (untimed generation), compute_s, particles (global) */
#include "vpic_gen.h"
#include "wl_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPU work for about `seconds` (a stencil-like sweep over a small array), not I/O */
static double compute(double seconds)
{
    static double a[4096];
    double t0 = MPI_Wtime(), acc = 0;
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 1; i < 4095; i++) {
            a[i] = 0.25 * (a[i - 1] + 2 * a[i] + a[i + 1]) + 1e-3 * sin((double) i);
            acc += a[i];
        }
    return acc;
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--n PARTICLES_PER_RANK] [--steps T] [--compute S] [--file-per-step]");
    long long n = 1 << 20;
    int steps = 2, per_step = 0;
    double compute_s = 0;
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--n") == 0)
            n = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--steps") == 0)
            steps = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--compute") == 0)
            compute_s = atof(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--file-per-step") == 0)
            per_step = 1;
        else
            wl_die("unknown option %s", argv[i]);
    }
    if (n <= 0 || steps <= 0 || n > (1LL << 28))
        wl_die("need 0 < --n <= 2^28 and --steps > 0");
    uint64_t total = (uint64_t) n * (uint64_t) wl_size, g0 = (uint64_t) n * (uint64_t) wl_rank;
    uint32_t *buf = malloc((size_t) n * 4 * VPIC_NVARS);
    if (buf == NULL)
        wl_die("out of memory");

    double t_io = 0, t_gen = 0, t_cpu = 0, t_open = 0, t_close = 0, t0 = wl_sync_time();
    const char *base = c.file;
    char step_file[4096];
    MPI_File fh = MPI_FILE_NULL;
    if (!per_step)
        fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    t_io += wl_sync_time() - t0;
    double sink = 0;
    for (int t = 0; t < steps; t++) {
        double g = MPI_Wtime();
        for (int v = 0; v < VPIC_NVARS; v++)
            vpic_fill(v, t, g0, (uint64_t) n, buf + (size_t) v * (size_t) n);
        t_gen += MPI_Wtime() - g;
        t0 = wl_sync_time();
        if (per_step) {
            snprintf(step_file, sizeof(step_file), "%s.%d", base, t);
            c.file = step_file;
            fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
            t_open += wl_sync_time() - t0;
        }
        int at = per_step ? 0 : t;
        for (int v = 0; v < VPIC_NVARS; v++) {
            MPI_Offset off = (MPI_Offset) (((uint64_t) at * VPIC_NVARS + (uint64_t) v) * total + g0) * 4;
            wl_mpi(MPI_File_write_at_all(fh, off, buf + (size_t) v * (size_t) n, (int) n,
                                         v < 6 ? MPI_FLOAT : MPI_INT, MPI_STATUS_IGNORE),
                   "MPI_File_write_at_all");
        }
        if (per_step) {
            double c0 = wl_sync_time();
            wl_close(&c, &fh);
            t_close += wl_sync_time() - c0;
        }
        t_io += wl_sync_time() - t0;
        if (compute_s > 0) {
            double w = MPI_Wtime();
            sink += compute(compute_s);
            t_cpu += MPI_Wtime() - w;
        }
    }
    t0 = wl_sync_time();
    if (!per_step)
        wl_close(&c, &fh);
    double tc = wl_sync_time() - t0;
    t_io += tc;
    if (!per_step)
        t_close = tc;
    c.file = base;
    if (sink == 12345.678)
        printf("%g\n", sink);     /* keeps the work from being optimised away */

    wl_result_begin("vpic", &c);
    wl_result_kv("bytes=%llu", (unsigned long long) (total * 4 * VPIC_NVARS * (uint64_t) steps));
    wl_result_kv("write_s=%.6f", t_io);
    wl_result_kv("gen_s=%.3f", t_gen);
    wl_result_kv("compute_s=%.3f open_s=%.6f close_s=%.6f", t_cpu, t_open, t_close);
    wl_result_kv("particles=%llu steps=%d", (unsigned long long) total, steps);
    wl_result_end();
    free(buf);
    MPI_Finalize();
    return 0;
}
