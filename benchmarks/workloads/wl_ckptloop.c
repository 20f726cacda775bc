/* wl_ckptloop: a checkpoint rewritten in place, as a simulation that keeps one restart
 * file does: every rewrite opens the file, writes each variable (collectively, a
 * contiguous slice per rank), syncs (--sync), closes. What it measures is what a rewrite
 * leaves behind: the blocks allocated to the directories given with --du (the tiers and the
 * file's directory, as the file systems count them) and the mapping file's size, after
 * every rewrite, and the time of each rewrite and of its close alone.
 *
 * Data: smooth fields that change with every rewrite (a sine in the index and the rewrite,
 * plus a little counter-based noise): doubles a Gray-Scott or heat-equation code would
 * write. After the last rewrite every rank reads its slices back and checks them.
 *
 * usage: wl_ckptloop FILE [--size S] [--vars V] [--rewrites N] [--du DIR]... [common options]
 *   S: bytes per rank per variable (default 4M, a multiple of 8), V: variables (default
 *   4), N: rewrites (default 20)
 * Prints "REWRITE i write_s close_s allocated map_bytes" (rank 0) after each rewrite, then
 * RESULT: bytes (logical bytes of one checkpoint), first_alloc, last_alloc, max_alloc,
 * first_map, last_map, write_first_s and write_last_s (medians of the first and last five
 * rewrites), close_s (median of every close), write_s (all rewrites). */
#define _XOPEN_SOURCE 700    /* nftw */
#include "wl_common.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static long long du_total;
static int du_cb(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void) p;
    (void) ftw;
    if (type == FTW_F)
        du_total += (long long) sb->st_blocks * 512;
    return 0;
}

static long long allocated(char **dirs, int ndirs)
{
    du_total = 0;
    for (int i = 0; i < ndirs; i++)
        if (nftw(dirs[i], du_cb, 16, FTW_PHYS) != 0)
            wl_die("cannot walk %s: %s", dirs[i], strerror(errno));
    return du_total;
}

static double value(uint64_t i, int var, int rewrite)
{
    return sin(1e-4 * (double) i + 0.3 * var + 0.05 * rewrite) +
           1e-6 * wl_u01(i * 131 + (uint64_t) var * 7 + (uint64_t) rewrite * 0x10001);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *c = malloc((size_t) n * sizeof(*c));
    memcpy(c, v, (size_t) n * sizeof(*c));
    qsort(c, (size_t) n, sizeof(*c), cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--size S] [--vars V] [--rewrites N] [--du DIR]...");
    long long size = 4 << 20;
    int vars = 4, rewrites = 20, ndu = 0;
    char *du[16];
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--size") == 0) size = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--vars") == 0) vars = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--rewrites") == 0) rewrites = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--du") == 0 && ndu < 16) du[ndu++] = (char *) wl_optval(argc, argv, &i);
        else wl_die("unknown option %s", argv[i]);
    }
    if (size < 8 || size % 8 || size > (1LL << 30) || vars < 1 || rewrites < 1)
        wl_die("need --size a multiple of 8 up to 1 GiB, --vars >= 1, --rewrites >= 1");
    const char *path = strchr(c.file, ':') ? strchr(c.file, ':') + 1 : c.file;
    uint64_t n = (uint64_t) size / 8;
    double *buf = malloc((size_t) size);
    double *t_write = calloc((size_t) rewrites, sizeof(double));
    double *t_close = calloc((size_t) rewrites, sizeof(double));
    if (buf == NULL || t_write == NULL || t_close == NULL)
        wl_die("out of memory");
    long long first_alloc = 0, last_alloc = 0, max_alloc = 0, first_map = 0, last_map = 0;
    double total = 0;
    for (int r = 0; r < rewrites; r++) {
        double t0 = wl_sync_time();
        MPI_File fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
        for (int v = 0; v < vars; v++) {
            uint64_t base = ((uint64_t) v * (uint64_t) wl_size + (uint64_t) wl_rank) * n;
            for (uint64_t k = 0; k < n; k++)
                buf[k] = value(base + k, v, r);
            wl_mpi(MPI_File_write_at_all(fh, (MPI_Offset) (base * 8), buf, (int) n, MPI_DOUBLE,
                                         MPI_STATUS_IGNORE), "MPI_File_write_at_all");
        }
        if (c.sync)
            wl_mpi(MPI_File_sync(fh), "MPI_File_sync");
        double t1 = wl_sync_time();
        wl_mpi(MPI_File_close(&fh), "MPI_File_close");
        double t2 = wl_sync_time();
        t_write[r] = t2 - t0;
        t_close[r] = t2 - t1;
        total += t2 - t0;
        if (wl_rank == 0) {
            struct stat st;
            long long map = stat(path, &st) == 0 ? (long long) st.st_size : -1;
            long long a = allocated(du, ndu);
            printf("REWRITE %d write_s=%.6f close_s=%.6f allocated=%lld map_bytes=%lld\n", r,
                   t_write[r], t_close[r], a, map);
            fflush(stdout);
            if (r == 0) {
                first_alloc = a;
                first_map = map;
            }
            last_alloc = a;
            last_map = map;
            max_alloc = a > max_alloc ? a : max_alloc;
        }
    }
    /* the last checkpoint, read back */
    MPI_File fh = wl_open(&c, MPI_MODE_RDONLY);
    long long bad = 0;
    for (int v = 0; v < vars; v++) {
        uint64_t base = ((uint64_t) v * (uint64_t) wl_size + (uint64_t) wl_rank) * n;
        wl_mpi(MPI_File_read_at_all(fh, (MPI_Offset) (base * 8), buf, (int) n, MPI_DOUBLE,
                                    MPI_STATUS_IGNORE), "MPI_File_read_at_all");
        for (uint64_t k = 0; k < n; k++)
            bad += buf[k] != value(base + k, v, rewrites - 1);
    }
    wl_close(&c, &fh);
    bad = wl_sum_ll(bad);
    if (bad)
        wl_verify_failed("%lld doubles of the last checkpoint read back wrong", bad);
    int k = rewrites < 5 ? rewrites : 5;
    wl_result_begin("ckptloop", &c);
    wl_result_kv("bytes=%lld rewrites=%d first_alloc=%lld last_alloc=%lld max_alloc=%lld "
                 "first_map=%lld last_map=%lld write_first_s=%.6f write_last_s=%.6f close_s=%.6f "
                 "write_s=%.6f", (long long) size * vars * wl_size, rewrites, first_alloc,
                 last_alloc, max_alloc, first_map, last_map, median(t_write, k),
                 median(t_write + rewrites - k, k), median(t_close, rewrites), total);
    wl_result_end();
    free(buf);
    free(t_write);
    free(t_close);
    MPI_Finalize();
    return 0;
}
