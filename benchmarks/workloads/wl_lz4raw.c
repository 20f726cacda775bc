/* wl_lz4raw: lz4's raw compression speed on wl_vpic's data, the yardstick of the goal
 * "RAM tier with lz4: end-to-end write throughput at least 80% of lz4's raw speed on the
 * same data and threads". Every rank generates exactly what wl_vpic's rank generates with
 * the same --n and --steps and compresses each property's N*4 bytes in pieces of --piece
 * bytes (hcomp's default piece: 1 MiB) with LZ4_compress_default, one thread per rank (what
 * hcomp_threads=0 gives when there are as many ranks as cores). No file is written; FILE
 * is accepted (and ignored) so every workload has the same command line.
 *
 * usage: wl_lz4raw FILE [--n PARTICLES_PER_RANK] [--steps T] [--piece B]
 * RESULT: bytes (logical, all ranks), comp_s (the slowest rank's compression time),
 * stored (compressed bytes, all ranks) */
#include "vpic_gen.h"
#include "wl_common.h"

#include <lz4.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--n N] [--steps T] [--piece B]");
    long long n = 1 << 20, piece = 1 << 20;
    int steps = 2;
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--n") == 0) n = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--steps") == 0) steps = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--piece") == 0) piece = wl_parse_size(wl_optval(argc, argv, &i));
        else wl_die("unknown option %s", argv[i]);
    }
    if (n <= 0 || steps <= 0 || n > (1LL << 28) || piece < 4096 || piece > (1 << 30))
        wl_die("need 0 < --n <= 2^28, --steps > 0, 4096 <= --piece <= 1 GiB");
    uint64_t g0 = (uint64_t) n * (uint64_t) wl_rank;
    uint32_t *buf = malloc((size_t) n * 4);
    char *out = malloc((size_t) LZ4_compressBound((int) piece));
    if (!buf || !out)
        wl_die("out of memory");
    double busy = 0;
    long long stored = 0;
    for (int t = 0; t < steps; t++)
        for (int v = 0; v < VPIC_NVARS; v++) {
            vpic_fill(v, t, g0, (uint64_t) n, buf);
            const char *src = (const char *) buf;
            long long len = n * 4;
            double t0 = MPI_Wtime();
            for (long long o = 0; o < len; o += piece) {
                int k = (int) (len - o < piece ? len - o : piece);
                int z = LZ4_compress_default(src + o, out, k, LZ4_compressBound(k));
                if (z <= 0)
                    wl_die("LZ4_compress_default failed");
                stored += z < k ? z : k;   /* hcomp stores a piece that does not shrink raw */
            }
            busy += MPI_Wtime() - t0;
        }
    double slowest = 0;
    MPI_Allreduce(&busy, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long long stored_all = wl_sum_ll(stored);
    wl_result_begin("lz4raw", &c);
    wl_result_kv("bytes=%lld comp_s=%.6f stored=%lld piece=%lld", n * 4 * VPIC_NVARS * steps * wl_size,
                 slowest, stored_all, piece);
    wl_result_end();
    free(buf);
    free(out);
    MPI_Finalize();
    return 0;
}
