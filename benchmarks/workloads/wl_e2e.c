/* wl_e2e: hcomp against what an expert writes by hand, end to end (scripts/bench-e2e):
 * the same bytes, the same ranks and threads, the same storage, durable writes and cold
 * reads on both sides.
 *
 *   mpiexec -n N wl_e2e FILE DIR RUNS THREADS CONFIG...
 *
 * FILE is a dataset with FILE.types (lines "offset length dtype", benchmarks/workloads/
 * wl_frontier.c gen); rank r takes the r-th of N equal slices of it (cut at 4 KiB). For
 * each CONFIG, RUNS times, in a fresh directory under DIR:
 *   hcomp:PRIORITY     (or hcomp:default) MPI_File_open("hcomp:DIR/x/f.hc") with hints
 *                      hcomp_priority and hcomp_threads=THREADS; each rank writes its
 *                      slice with MPI_File_write_at_all in 1 MiB calls, each call's
 *                      datatype the region's element type (MPI_FLOAT, MPI_DOUBLE, MPI_INT,
 *                      MPI_BYTE: how the driver learns it); MPI_File_sync; close.
 *   blosc2:CODEC+FILTER-LEVEL[@CHUNK]
 *                      the peer: each rank compresses its slice with c-blosc2 (codec
 *                      blosclz, lz4, lz4hc, zlib, zstd; filter noshuffle, shuffle,
 *                      bitshuffle, bytedelta (shuffle then bytedelta); level 0-9) in chunks
 *                      of CHUNK bytes (default 1 MiB; cut at the regions' ends so each chunk
 *                      has one element size), THREADS threads in each c-blosc2 context, c-blosc2's
 *                      automatic block size; the chunks' offsets come from MPI_Exscan of
 *                      the ranks' compressed sizes; MPI_File_write_at_all of each rank's
 *                      block (its chunk count and sizes, then the chunks) to
 *                      "ufs:DIR/x/f.b2", and of rank 0's table of the blocks' offsets at
 *                      the file's start; MPI_File_sync; close.
 * Then rank 0 runs `scripts/bench-cold DIR/x` (BENCH_COLD: the command), and every rank
 * opens the file again, reads its slice back (hcomp: MPI_File_read_at_all in 1 MiB calls;
 * the peer: its table entry, its block, then decompresses each chunk) and compares it
 * with the original. Times are the slowest rank's, open to close (MPI_Wtime, barriers
 * around). The footprint is the bytes allocated to every file under DIR/x (st_blocks).
 *
 * Prints one line per CONFIG with the medians of RUNS runs:
 *   CONFIG write_s read_s footprint_bytes logical_bytes
 * c-blosc2's in-memory compression and decompression time alone (no I/O; the sum of the
 * ranks' slowest) goes to a sixth and seventh column: compress_s decompress_s (the peer's
 * reference line; 0 for hcomp). */
#define _GNU_SOURCE
#include <blosc2.h>
#include <dirent.h>
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB ((size_t) 1 << 20)
#define MAX_REGIONS 64
#define MAX_RUNS 15

typedef struct region {
    uint64_t off, len;
    int esize;              /* element size: 1, 4, 8 */
    MPI_Datatype type;
} region;

static int rank, nranks;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "wl_e2e[%d]: %s%s%s\n", rank, what, detail ? ": " : "", detail ? detail : "");
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int n = 0;
        MPI_Error_string(rc, msg, &n);
        die(what, msg);
    }
}

static int load_regions(const char *path, region *r)
{
    char tp[4096], name[32];
    snprintf(tp, sizeof tp, "%s.types", path);
    FILE *t = fopen(tp, "r");
    if (t == NULL)
        die("cannot open", tp);
    int n = 0;
    unsigned long long off, len;
    while (n < MAX_REGIONS && fscanf(t, "%llu %llu %31s", &off, &len, name) == 3) {
        r[n].off = off;
        r[n].len = len;
        if (strcmp(name, "float") == 0)
            r[n].esize = 4, r[n].type = MPI_FLOAT;
        else if (strcmp(name, "int32") == 0)
            r[n].esize = 4, r[n].type = MPI_INT;
        else if (strcmp(name, "double") == 0)
            r[n].esize = 8, r[n].type = MPI_DOUBLE;
        else if (strcmp(name, "int64") == 0)
            r[n].esize = 8, r[n].type = MPI_LONG_LONG;
        else
            r[n].esize = 1, r[n].type = MPI_BYTE;
        n++;
    }
    fclose(t);
    return n;
}

/* the region holding byte off of the file */
static const region *region_at(const region *r, int nr, uint64_t off)
{
    for (int i = 0; i < nr; i++)
        if (off >= r[i].off && off < r[i].off + r[i].len)
            return &r[i];
    return &r[nr - 1];
}

/* bytes from off (in the file) to the end of its region, at most cap */
static uint64_t run_len(const region *r, int nr, uint64_t off, uint64_t cap)
{
    const region *g = region_at(r, nr, off);
    uint64_t end = g->off + g->len;
    return end > off && end - off < cap ? end - off : cap;
}

static uint64_t footprint(const char *dir)
{
    uint64_t sum = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            sum += footprint(p);
        else
            sum += (uint64_t) st.st_blocks * 512;
    }
    closedir(d);
    return sum;
}

static void rm_tree(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        die("cannot remove", dir);
}

static double max_time(double t)
{
    double m = 0;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* ---- hcomp ------------------------------------------------------------------------ */

static MPI_Info hcomp_info(const char *priority, int threads)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (strcmp(priority, "default") != 0)
        MPI_Info_set(info, "hcomp_priority", priority);
    char t[16];
    snprintf(t, sizeof t, "%d", threads);
    MPI_Info_set(info, "hcomp_threads", t);
    return info;
}

/* each rank's slice in 1 MiB calls, each of one region's element type */
static void hcomp_io(MPI_File fh, unsigned char *buf, uint64_t lo, uint64_t hi,
                     const region *r, int nr, int write)
{
    /* collective calls: every rank makes the same number (the longest slice's) */
    uint64_t mine = 0, most = 0;
    for (uint64_t at = lo; at < hi; mine++)
        at += run_len(r, nr, at, hi - at < MiB ? hi - at : MiB);
    MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    uint64_t at = lo;
    for (uint64_t c = 0; c < most; c++) {
        uint64_t n = at < hi ? run_len(r, nr, at, hi - at < MiB ? hi - at : MiB) : 0;
        const region *g = region_at(r, nr, at < hi ? at : lo);
        int count = (int) (n / (uint64_t) g->esize);
        MPI_Datatype type = g->type;
        if ((uint64_t) count * (uint64_t) g->esize != n)
            count = (int) n, type = MPI_BYTE;
        int rc = write ? MPI_File_write_at_all(fh, (MPI_Offset) at, buf + (at - lo), count, type,
                                               MPI_STATUS_IGNORE)
                       : MPI_File_read_at_all(fh, (MPI_Offset) at, buf + (at - lo), count, type,
                                              MPI_STATUS_IGNORE);
        check_mpi(rc, write ? "MPI_File_write_at_all (hcomp)" : "MPI_File_read_at_all (hcomp)");
        at += n;
    }
}

static void run_hcomp(const char *priority, int threads, const char *dir, unsigned char *data,
                      uint64_t lo, uint64_t hi, const region *r, int nr, double *wt)
{
    char path[4200];
    snprintf(path, sizeof path, "hcomp:%s/f.hc", dir);
    MPI_Info info = hcomp_info(priority, threads);
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    check_mpi(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
              "MPI_File_open (hcomp, write)");
    hcomp_io(fh, data, lo, hi, r, nr, 1);
    check_mpi(MPI_File_sync(fh), "MPI_File_sync (hcomp)");
    check_mpi(MPI_File_close(&fh), "MPI_File_close (hcomp)");
    *wt = max_time(MPI_Wtime() - t0);
    MPI_Info_free(&info);
}

static void read_hcomp(const char *priority, int threads, const char *dir, unsigned char *back,
                       uint64_t lo, uint64_t hi, const region *r, int nr, double *rt)
{
    char path[4200];
    snprintf(path, sizeof path, "hcomp:%s/f.hc", dir);
    MPI_Info info = hcomp_info(priority, threads);
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    check_mpi(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh),
              "MPI_File_open (hcomp, read)");
    hcomp_io(fh, back, lo, hi, r, nr, 0);
    check_mpi(MPI_File_close(&fh), "MPI_File_close (hcomp, read)");
    *rt = max_time(MPI_Wtime() - t0);
    MPI_Info_free(&info);
}

/* ---- the c-blosc2 peer -------------------------------------------------------------- */

typedef struct peer_cfg {
    int compcode, filter, clevel;     /* filter: 0 none, 1 shuffle, 2 bitshuffle, 3 bytedelta */
    size_t chunk;
} peer_cfg;

static int parse_peer(const char *s, peer_cfg *c)
{
    static const struct { const char *name; int code; } codecs[] = {
        {"blosclz", BLOSC_BLOSCLZ}, {"lz4hc", BLOSC_LZ4HC}, {"lz4", BLOSC_LZ4},
        {"zlib", BLOSC_ZLIB}, {"zstd", BLOSC_ZSTD}};
    static const char *const filters[] = {"noshuffle", "shuffle", "bitshuffle", "bytedelta"};
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    char *plus = strchr(buf, '+'), *dash = plus ? strrchr(plus, '-') : NULL, *at = strchr(buf, '@');
    if (plus == NULL || dash == NULL)
        return -1;
    c->chunk = MiB;
    if (at != NULL) {
        *at = '\0';
        char *end = NULL;
        unsigned long long v = strtoull(at + 1, &end, 10);
        if (end && (*end == 'K' || *end == 'k'))
            v <<= 10;
        else if (end && (*end == 'M' || *end == 'm'))
            v <<= 20;
        if (v < 4096 || v > (1u << 30))
            return -1;
        c->chunk = (size_t) v;
    }
    *plus = '\0';
    *dash = '\0';
    c->compcode = -1;
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++)
        if (strcmp(buf, codecs[i].name) == 0)
            c->compcode = codecs[i].code;
    c->filter = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(plus + 1, filters[i]) == 0)
            c->filter = i;
    c->clevel = atoi(dash + 1);
    return c->compcode < 0 || c->filter < 0 || c->clevel < 0 || c->clevel > 9 ? -1 : 0;
}

static blosc2_context *peer_cctx(const peer_cfg *c, int typesize, int threads)
{
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = (uint8_t) c->compcode;
    cp.clevel = (uint8_t) c->clevel;
    cp.typesize = typesize;
    cp.nthreads = (int16_t) threads;
    memset(cp.filters, 0, sizeof cp.filters);
    memset(cp.filters_meta, 0, sizeof cp.filters_meta);
    if (c->filter == 1)
        cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
    else if (c->filter == 2)
        cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_BITSHUFFLE;
    else if (c->filter == 3) {  /* as python-blosc2's bytedelta: shuffle, then bytedelta */
        cp.filters[BLOSC2_MAX_FILTERS - 2] = BLOSC_SHUFFLE;
        cp.filters[BLOSC2_MAX_FILTERS - 1] = 35;   /* BLOSC_FILTER_BYTEDELTA */
        cp.filters_meta[BLOSC2_MAX_FILTERS - 1] = (uint8_t) typesize;
    }
    return blosc2_create_cctx(cp);
}

/* Each rank's block: u64 nchunks, u64 raw and stored length of each chunk, the chunks. */
static void run_peer(const peer_cfg *c, int threads, const char *dir, const unsigned char *data,
                     uint64_t lo, uint64_t hi, const region *r, int nr, double *wt, double *ct)
{
    char path[4200];
    snprintf(path, sizeof path, "ufs:%s/f.b2", dir);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    /* chunks: at most one element size each */
    uint64_t n = 0;
    for (uint64_t at = lo; at < hi; n++)
        at += run_len(r, nr, at, hi - at < c->chunk ? hi - at : c->chunk);
    size_t cap = 8 + 16 * n + (hi - lo) + n * BLOSC2_MAX_OVERHEAD;
    unsigned char *block = malloc(cap);
    if (block == NULL)
        die("out of memory", NULL);
    uint64_t *hdr = (uint64_t *) (void *) block;
    hdr[0] = n;
    size_t used = 8 + 16 * n;
    double tc = MPI_Wtime();
    uint64_t at = lo;
    blosc2_context *ctx[9] = {NULL};
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = run_len(r, nr, at, hi - at < c->chunk ? hi - at : c->chunk);
        int es = region_at(r, nr, at)->esize;
        if (ctx[es] == NULL && (ctx[es] = peer_cctx(c, es, threads)) == NULL)
            die("blosc2_create_cctx failed", NULL);
        /* room of len + BLOSC2_MAX_OVERHEAD: c-blosc2 then stores a chunk it cannot shrink
         * as it is (given more, it may keep blocks that grew) */
        int k = blosc2_compress_ctx(ctx[es], data + (at - lo), (int32_t) len, block + used,
                                    (int32_t) (len + BLOSC2_MAX_OVERHEAD));
        if (k <= 0) {
            char why[160];
            snprintf(why, sizeof why, "%d for %llu bytes at %llu, room %zu", k,
                     (unsigned long long) len, (unsigned long long) at, cap - used);
            die("blosc2_compress_ctx failed", why);
        }
        hdr[1 + 2 * i] = len;
        hdr[2 + 2 * i] = (uint64_t) k;
        used += (size_t) k;
        at += len;
    }
    for (int i = 0; i < 9; i++)
        if (ctx[i])
            blosc2_free_ctx(ctx[i]);
    *ct = max_time(MPI_Wtime() - tc);
    /* where each rank's block goes: after the table of nranks offsets */
    uint64_t mine = used, before = 0;
    MPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        before = 0;
    uint64_t base = 8 * (uint64_t) nranks, my_off = base + before;
    uint64_t *table = rank == 0 ? malloc(8 * (size_t) nranks) : NULL;
    MPI_Gather(&my_off, 1, MPI_UINT64_T, table, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_File fh;
    check_mpi(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh), "MPI_File_open (peer, write)");
    check_mpi(MPI_File_write_at_all(fh, 0, table, rank == 0 ? nranks : 0, MPI_UINT64_T,
                                    MPI_STATUS_IGNORE), "MPI_File_write_at_all (peer table)");
    /* a block over 2 GiB would need several calls; these are far below */
    check_mpi(MPI_File_write_at_all(fh, (MPI_Offset) my_off, block, (int) used, MPI_BYTE,
                                    MPI_STATUS_IGNORE), "MPI_File_write_at_all (peer)");
    check_mpi(MPI_File_sync(fh), "MPI_File_sync (peer)");
    check_mpi(MPI_File_close(&fh), "MPI_File_close (peer)");
    *wt = max_time(MPI_Wtime() - t0);
    free(table);
    free(block);
}

static void read_peer(const char *dir, unsigned char *back, uint64_t lo, uint64_t hi, int threads,
                      double *rt, double *dt)
{
    char path[4200];
    snprintf(path, sizeof path, "ufs:%s/f.b2", dir);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File fh;
    check_mpi(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
              "MPI_File_open (peer, read)");
    uint64_t ends[2] = {0, 0};
    MPI_Offset fsize = 0;
    MPI_File_get_size(fh, &fsize);
    /* my block's offset, and the next rank's (or the file's end) */
    check_mpi(MPI_File_read_at_all(fh, 8 * (MPI_Offset) rank, ends, rank + 1 < nranks ? 2 : 1,
                                   MPI_UINT64_T, MPI_STATUS_IGNORE), "MPI_File_read_at_all (table)");
    if (rank + 1 == nranks)
        ends[1] = (uint64_t) fsize;
    size_t len = (size_t) (ends[1] - ends[0]);
    unsigned char *block = malloc(len);
    if (block == NULL)
        die("out of memory", NULL);
    check_mpi(MPI_File_read_at_all(fh, (MPI_Offset) ends[0], block, (int) len, MPI_BYTE,
                                   MPI_STATUS_IGNORE), "MPI_File_read_at_all (peer)");
    check_mpi(MPI_File_close(&fh), "MPI_File_close (peer, read)");
    double td = MPI_Wtime();
    const uint64_t *hdr = (const uint64_t *) (const void *) block;
    uint64_t n = hdr[0];
    size_t used = 8 + 16 * n;
    uint64_t at = 0;
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = (int16_t) threads;
    blosc2_context *dctx = blosc2_create_dctx(dp);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t raw = hdr[1 + 2 * i], stored = hdr[2 + 2 * i];
        if (at + raw > hi - lo || used + stored > len ||
            blosc2_decompress_ctx(dctx, block + used, (int32_t) stored, back + at, (int32_t) raw)
                != (int) raw)
            die("peer: a chunk does not decode", NULL);
        used += stored;
        at += raw;
    }
    blosc2_free_ctx(dctx);
    if (at != hi - lo)
        die("peer: the chunks do not cover the slice", NULL);
    *dt = max_time(MPI_Wtime() - td);
    *rt = max_time(MPI_Wtime() - t0);
    free(block);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t) n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 6)
        die("usage: wl_e2e FILE DIR RUNS THREADS CONFIG...", NULL);
    const char *file = argv[1], *top = argv[2];
    int runs = atoi(argv[3]), threads = atoi(argv[4]);
    if (runs < 1 || runs > MAX_RUNS || threads < 1)
        die("RUNS must be 1..15 and THREADS at least 1", NULL);
    blosc2_init();
    region r[MAX_REGIONS];
    int nr = load_regions(file, r);
    if (nr == 0)
        die("no regions in the .types file of", file);
    uint64_t total = r[nr - 1].off + r[nr - 1].len;
    uint64_t slice = (total / (uint64_t) nranks) & ~(uint64_t) 4095;
    uint64_t lo = slice * (uint64_t) rank, hi = rank + 1 == nranks ? total : lo + slice;
    unsigned char *data = malloc(hi - lo), *back = malloc(hi - lo);
    FILE *f = fopen(file, "rb");
    if (data == NULL || back == NULL || f == NULL || fseeko(f, (off_t) lo, SEEK_SET) != 0 ||
        fread(data, 1, hi - lo, f) != hi - lo)
        die("cannot read", file);
    fclose(f);
    const char *cold = getenv("BENCH_COLD");
    for (int a = 5; a < argc; a++) {
        const char *cfg = argv[a];
        int is_hcomp = strncmp(cfg, "hcomp:", 6) == 0;
        peer_cfg pc = {0, 0, 0, MiB};
        if (!is_hcomp && (strncmp(cfg, "blosc2:", 7) != 0 || parse_peer(cfg + 7, &pc) != 0))
            die("not a configuration (hcomp:PRIORITY, blosc2:CODEC+FILTER-LEVEL[@CHUNK])", cfg);
        double w[MAX_RUNS], rd[MAX_RUNS], c[MAX_RUNS], d[MAX_RUNS], fp[MAX_RUNS];
        for (int k = 0; k < runs; k++) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/run", top);
            if (rank == 0) {
                rm_tree(dir);
                if (mkdir(dir, 0700) != 0)
                    die("cannot create", dir);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            c[k] = d[k] = 0;
            if (is_hcomp)
                run_hcomp(cfg + 6, threads, dir, data, lo, hi, r, nr, &w[k]);
            else
                run_peer(&pc, threads, dir, data, lo, hi, r, nr, &w[k], &c[k]);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                fp[k] = (double) footprint(dir);
                char cmd[8400];
                snprintf(cmd, sizeof cmd, "%s '%s' >/dev/null 2>&1", cold ? cold : "true", dir);
                if (system(cmd) != 0)
                    die("the cold-read command failed", cmd);
            }
            memset(back, 0xA5, hi - lo);
            if (is_hcomp)
                read_hcomp(cfg + 6, threads, dir, back, lo, hi, r, nr, &rd[k]);
            else
                read_peer(dir, back, lo, hi, threads, &rd[k], &d[k]);
            int bad = memcmp(back, data, hi - lo) != 0, any = 0;
            MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (any)
                die("read back differs from what was written:", cfg);
        }
        if (rank == 0) {
            printf("%s %.6f %.6f %.0f %llu %.6f %.6f\n", cfg, median(w, runs), median(rd, runs),
                   median(fp, runs), (unsigned long long) total, median(c, runs), median(d, runs));
            fflush(stdout);
        }
    }
    if (rank == 0) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/run", top);
        rm_tree(dir);
    }
    free(data);
    free(back);
    MPI_Finalize();
    return 0;
}
