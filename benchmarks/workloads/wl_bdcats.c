/* wl_bdcats: a BD-CATS-IO-like reader of wl_vpic's output (same layout, same generator),
 * with any number of ranks. Every value read is compared with the generator's.
 *
 *   --mode all     every property of every step, each rank a contiguous share of the
 *                  particles, one collective MPI_File_read_at_all per property and step
 *                  (BD-CATS reads all properties to cluster the particles)
 *   --mode var     one property (--var V, default 0 = x) of one step (--step S, default the
 *                  last), collectively
 *   --mode subset  a random subset: runs of --run particles (default 1024) chosen at random,
 *                  without repetition, among all steps until --frac of the particles x steps
 *                  (default 0.01) is covered; all 8 properties of each run are read with
 *                  independent MPI_File_read_at calls, the runs dealt round-robin to ranks
 *
 * usage: wl_bdcats FILE --total PARTICLES --steps T [--mode all|var|subset] [--var V]
 *                  [--step S] [--frac F] [--run R] [--seed K] [common options]
 * RESULT: bytes (logical bytes read), read_s (open..close, checks excluded), touched (bytes
 * all ranks read from storage through read(2)/pread(2), /proc/self/io rchar: the stored
 * bytes the reads really cost, mapping files included) */
#include "vpic_gen.h"
#include "wl_common.h"

#include <stdlib.h>
#include <string.h>

static void check(int v, int t, uint64_t g0, uint64_t n, const void *buf)
{
    long long bad = vpic_check(v, t, g0, n, buf);
    if (bad >= 0)
        wl_verify_failed("property %s step %d particle %llu differs from what was written",
                         vpic_var_names[v], t, (unsigned long long) (g0 + (uint64_t) bad));
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "--total PARTICLES --steps T [--mode all|var|subset] ...");
    long long total = 0, run = 1024;
    int steps = 0, var = 0, step = -1;
    double frac = 0.01;
    unsigned long long seed = 1;
    const char *mode = "all";
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        const char *a = argv[i];
        if (strcmp(a, "--total") == 0) total = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(a, "--steps") == 0) steps = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(a, "--mode") == 0) mode = wl_optval(argc, argv, &i);
        else if (strcmp(a, "--var") == 0) var = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(a, "--step") == 0) step = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(a, "--frac") == 0) frac = atof(wl_optval(argc, argv, &i));
        else if (strcmp(a, "--run") == 0) run = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(a, "--seed") == 0) seed = strtoull(wl_optval(argc, argv, &i), NULL, 0);
        else wl_die("unknown option %s", a);
    }
    if (total <= 0 || steps <= 0 || var < 0 || var >= VPIC_NVARS || step >= steps || run <= 0 ||
        frac <= 0 || frac > 1)
        wl_die("need --total > 0, --steps > 0, 0 <= --var < 8, --step < steps, --run > 0, 0 < --frac <= 1");
    if (step < 0)
        step = steps - 1;
    uint64_t T = (uint64_t) total;
    /* this rank's contiguous share of the particles (collective modes) */
    uint64_t share = T / (uint64_t) wl_size, extra = T % (uint64_t) wl_size, r = (uint64_t) wl_rank;
    uint64_t g0 = r * share + (r < extra ? r : extra), n = share + (r < extra ? 1 : 0);
    size_t bufn = strcmp(mode, "subset") == 0 ? (size_t) run : (size_t) n;
    uint32_t *buf = malloc((bufn ? bufn : 1) * 4);
    if (buf == NULL)
        wl_die("out of memory");

    uint64_t logical = 0;
    double t_read = 0;
    long long rc0 = wl_rchar();
    double t0 = wl_sync_time();
    MPI_File fh = wl_open(&c, MPI_MODE_RDONLY);
    t_read += wl_sync_time() - t0;
    if (strcmp(mode, "all") == 0 || strcmp(mode, "var") == 0) {
        int all = strcmp(mode, "all") == 0;
        for (int t = all ? 0 : step; t <= (all ? steps - 1 : step); t++)
            for (int v = all ? 0 : var; v <= (all ? VPIC_NVARS - 1 : var); v++) {
                MPI_Offset off = (MPI_Offset) (((uint64_t) t * VPIC_NVARS + (uint64_t) v) * T + g0) * 4;
                memset(buf, 0xA5, (size_t) n * 4);
                t0 = wl_sync_time();
                wl_mpi(MPI_File_read_at_all(fh, off, buf, (int) n, v < 6 ? MPI_FLOAT : MPI_INT,
                                            MPI_STATUS_IGNORE), "MPI_File_read_at_all");
                t_read += wl_sync_time() - t0;
                check(v, t, g0, n, buf);
                logical += n * 4;
            }
    } else if (strcmp(mode, "subset") == 0) {
        /* slots: (step, run-aligned particle block); a partial Fisher-Yates shuffle picks
         * the first `want` of a random permutation, identically on every rank */
        uint64_t per_step = T / (uint64_t) run, nslots = per_step * (uint64_t) steps;
        uint64_t want = (uint64_t) (frac * (double) nslots + 0.5);
        if (want == 0)
            want = 1;
        if (nslots == 0)
            wl_die("--run %lld is larger than --total", run);
        if (want > nslots)
            want = nslots;
        uint64_t *slot = malloc(nslots * sizeof(*slot));
        if (slot == NULL)
            wl_die("out of memory");
        for (uint64_t k = 0; k < nslots; k++)
            slot[k] = k;
        for (uint64_t k = 0; k < want; k++) {
            uint64_t j = k + wl_hash64(seed * 0x100000001b3ULL + k) % (nslots - k);
            uint64_t tmp = slot[k];
            slot[k] = slot[j];
            slot[j] = tmp;
        }
        t0 = wl_sync_time();
        double busy = 0;
        for (uint64_t k = r; k < want; k += (uint64_t) wl_size) {
            int t = (int) (slot[k] / per_step);
            uint64_t p0 = (slot[k] % per_step) * (uint64_t) run;
            for (int v = 0; v < VPIC_NVARS; v++) {
                MPI_Offset off = (MPI_Offset) (((uint64_t) t * VPIC_NVARS + (uint64_t) v) * T + p0) * 4;
                double b = MPI_Wtime();
                wl_mpi(MPI_File_read_at(fh, off, buf, (int) run, v < 6 ? MPI_FLOAT : MPI_INT,
                                        MPI_STATUS_IGNORE), "MPI_File_read_at");
                busy += MPI_Wtime() - b;
                check(v, t, p0, (uint64_t) run, buf);
                logical += (uint64_t) run * 4;
            }
        }
        /* the checks are not I/O: the phase's time is the slowest rank's read time */
        double slowest = 0;
        MPI_Allreduce(&busy, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t_read += slowest;
        (void) t0;
        free(slot);
    } else {
        wl_die("unknown --mode %s", mode);
    }
    t0 = wl_sync_time();
    wl_close(&c, &fh);
    t_read += wl_sync_time() - t0;
    long long touched = wl_sum_ll(wl_rchar() - rc0);
    long long logical_all = wl_sum_ll((long long) logical);

    wl_result_begin("bdcats", &c);
    wl_result_kv("mode=%s bytes=%lld read_s=%.6f touched=%lld", mode, logical_all, t_read, touched);
    wl_result_kv("dataset=%llu", (unsigned long long) (T * 4 * VPIC_NVARS * (uint64_t) steps));
    wl_result_end();
    free(buf);
    MPI_Finalize();
    return 0;
}
