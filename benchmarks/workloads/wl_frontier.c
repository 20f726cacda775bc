/* wl_frontier: hcomp's priorities as points of the ratio/throughput plane, on the same
 * bytes a peer (c-blosc2, benchmarks/blosc2_peer.py) compresses (scripts/bench-frontier).
 * No MPI: the data goes through libhcomp's file API with one compression thread
 * (hcomp_threads=1) onto one tier on tmpfs, so the figures are the engine's and the
 * codecs' (analysis, prediction, placement, encoding, the tier's memcpy, the mapping
 * file's appends), comparable with a single-threaded compressor in memory.
 *
 *   wl_frontier gen KIND FILE      write a dataset and FILE.types (lines "offset length
 *                                   dtype"); KIND: particles (VPIC-IO's 8 properties, float32
 *                                   and int32, 64 MiB), h5bench (h5bench_write's VPIC-IO
 *                                   arrays: uniform random floats, linear ramps, int ids,
 *                                   64 MiB), ints+text (int32 counters and log lines, 32 MiB)
 *   wl_frontier types FILE DTYPE   write FILE.types: the whole file of one dtype
 *   wl_frontier measure FILE DIR RUNS BANDWIDTH PRIORITY...
 *                                   on one tier in DIR (tmpfs) that the engine is told
 *                                   runs at BANDWIDTH (e.g. 1GB/s, the embedded default's
 *                                   figure for a file's directory), for each priority
 *                                   ("default": none given), RUNS times: write FILE's bytes in
 *                                   1 MiB calls (each region with its dtype, as an MPI
 *                                   datatype would announce it) to DIR/f.hc, close, read all
 *                                   back and compare; prints "PRIORITY ratio comp_MBps
 *                                   decomp_MBps codecs" with the medians (ratio: logical /
 *                                   stored piece bytes, headers included)
 * (Built with the workloads' mpicc only for vpic_gen.c's dependency on wl_common.h.) */
#define _POSIX_C_SOURCE 200809L
#include "hcomp.h"
#include "hcomp_model.h"
#include "vpic_gen.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB ((size_t) 1 << 20)
#define MAX_REGIONS 64
#define MAX_RUNS 9

typedef struct region {
    uint64_t off, len;
    int dtype;
} region;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "wl_frontier: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

uint64_t wl_hash64(uint64_t x);     /* wl_common.c (vpic_gen's hash) */

static double unit(uint64_t *s)
{
    *s = wl_hash64(*s);
    return (double) (*s >> 11) / 9007199254740992.0;
}

static void put_region(FILE *t, uint64_t off, uint64_t len, int dtype)
{
    fprintf(t, "%llu %llu %s\n", (unsigned long long) off, (unsigned long long) len,
            hcomp_dtype_name(dtype));
}

static void gen(const char *kind, const char *path)
{
    char tp[4096];
    snprintf(tp, sizeof tp, "%s.types", path);
    FILE *f = fopen(path, "wb"), *t = fopen(tp, "w");
    if (f == NULL || t == NULL)
        die("cannot create", path);
    uint64_t off = 0;
    if (strcmp(kind, "particles") == 0 || strcmp(kind, "h5bench") == 0) {
        const uint64_t n = 2 * MiB;             /* particles: 8 arrays of 8 MiB */
        void *a = malloc(n * 4);
        uint64_t s = 12345;
        for (int v = 0; v < VPIC_NVARS; v++) {
            if (kind[0] == 'p') {
                vpic_fill(v, 0, 0, n, a);
            } else {    /* h5bench_write: id_1 = i, id_2 = 2i, x y px py uniform * dim,
                         * z and pz ramps (dims 64) */
                for (uint64_t i = 0; i < n; i++) {
                    float *fl = a;
                    int32_t *in = a;
                    switch (v) {
                        case 0: case 1: case 3: case 4: fl[i] = (float) (unit(&s) * 64); break;
                        case 2: fl[i] = (float) ((double) i / n * 64); break;
                        case 5: fl[i] = (float) (2.0 * i / n * 64); break;
                        case 6: in[i] = (int32_t) i; break;
                        default: in[i] = (int32_t) (2 * i); break;
                    }
                }
            }
            if (fwrite(a, 4, n, f) != n)
                die("write failed", path);
            put_region(t, off, n * 4, v < 6 ? HCOMP_DTYPE_FLOAT : HCOMP_DTYPE_INT32);
            off += n * 4;
        }
        free(a);
    } else if (strcmp(kind, "ints+text") == 0) {
        /* 16 MiB of int32 event counters (a slowly rising id and small counts, as a
         * histogram or index array), then 16 MiB of log lines */
        const uint64_t n = 4 * MiB;
        int32_t *a = malloc(n * 4);
        uint64_t s = 777;
        for (uint64_t i = 0; i < n; i++)
            a[i] = i % 2 ? (int32_t) (unit(&s) * unit(&s) * 40) : (int32_t) (1000000 + i / 16);
        if (fwrite(a, 4, n, f) != n)
            die("write failed", path);
        put_region(t, 0, n * 4, HCOMP_DTYPE_INT32);
        off = n * 4;
        free(a);
        static const char *const words[] = {"step", "rank", "flux", "energy", "dt", "converged",
                                            "residual", "checkpoint", "wrote", "cells"};
        uint64_t start = off, line = 0;
        char buf[256];
        while (off - start < 16 * MiB) {
            int k = snprintf(buf, sizeof buf, "[%08llu] %s=%d %s %.6e %s\n",
                             (unsigned long long) line, words[line % 10], (int) (unit(&s) * 1024),
                             words[(line * 7) % 10], unit(&s) * 1e3, words[(line * 3) % 10]);
            line++;
            uint64_t room = 16 * MiB - (off - start);
            if ((uint64_t) k > room)
                k = (int) room;
            if (fwrite(buf, 1, (size_t) k, f) != (size_t) k)
                die("write failed", path);
            off += (uint64_t) k;
        }
        put_region(t, start, off - start, HCOMP_DTYPE_BYTES);
    } else {
        die("unknown kind", kind);
    }
    if (fclose(f) != 0 || fclose(t) != 0)
        die("write failed", path);
}

static int read_regions(const char *path, region *r)
{
    char tp[4096];
    snprintf(tp, sizeof tp, "%s.types", path);
    FILE *t = fopen(tp, "r");
    if (t == NULL)
        die("no types file", tp);
    int n = 0;
    unsigned long long o, l;
    char name[32];
    while (n < MAX_REGIONS && fscanf(t, "%llu %llu %31s", &o, &l, name) == 3) {
        r[n].off = o;
        r[n].len = l;
        r[n].dtype = hcomp_dtype_from_name(name);
        if (r[n].dtype < 0)
            die("unknown dtype", name);
        n++;
    }
    fclose(t);
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t) n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void check(int rc, const hcomp_error *err, const char *what)
{
    if (rc != HCOMP_OK)
        die(what, err->msg);
}

static void measure(const char *path, const char *dir, int runs, const char *bw, int nprio,
                    char **prio)
{
    region r[MAX_REGIONS];
    int nr = read_regions(path, r);
    FILE *in = fopen(path, "rb");
    if (in == NULL)
        die("cannot open", path);
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    unsigned char *data = malloc((size_t) size), *back = malloc((size_t) size);
    if (data == NULL || back == NULL || fread(data, 1, (size_t) size, in) != (size_t) size)
        die("cannot read", path);
    fclose(in);
    char cfg[4096], fpath[4096], tier[4096];
    snprintf(tier, sizeof tier, "%s/tier", dir);
    snprintf(cfg, sizeof cfg, "%s/tiers.json", dir);
    snprintf(fpath, sizeof fpath, "%s/f.hc", dir);
    if (mkdir(tier, 0700) != 0 && errno != EEXIST)
        die("cannot create", tier);
    FILE *c = fopen(cfg, "w");
    if (c == NULL)
        die("cannot write", cfg);
    /* the tier's speed is what the engine plans for (its I/O runs at tmpfs speed, which
     * must not replace it: not measured) */
    fprintf(c, "{\"version\": 1, \"tiers\": [{\"name\": \"t\", \"path\": \"%s\", "
               "\"bandwidth\": \"%s\", \"measure\": false}]}\n", tier, bw);
    fclose(c);
    for (int p = 0; p < nprio; p++) {
        double ratio[MAX_RUNS], comp[MAX_RUNS], dec[MAX_RUNS];
        char codecs[512] = "";
        for (int run = 0; run < runs; run++) {
            hcomp_error err;
            hcomp_options *o = hcomp_options_new();
            check(hcomp_options_set(o, "hcomp_config", cfg, &err), &err, "hcomp_config");
            check(hcomp_options_set(o, "hcomp_threads", "1", &err), &err, "hcomp_threads");
            check(hcomp_options_set(o, "hcomp_drain", "never", &err), &err, "hcomp_drain");
            if (strcmp(prio[p], "default") != 0)
                check(hcomp_options_set(o, "hcomp_priority", prio[p], &err), &err, prio[p]);
            hcomp_file *f;
            (void) hcomp_file_delete(fpath, &err);
            double t0 = now();
            check(hcomp_file_open(fpath, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err), &err,
                  "open");
            for (int i = 0; i < nr; i++) {
                hcomp_file_set_dtype(f, r[i].dtype);
                for (uint64_t at = r[i].off; at < r[i].off + r[i].len; at += MiB) {
                    uint64_t n = r[i].off + r[i].len - at < MiB ? r[i].off + r[i].len - at : MiB;
                    check(hcomp_file_pwrite(f, data + at, n, at, &err), &err, "write");
                }
            }
            check(hcomp_file_close(f, &err), &err, "close");
            double t1 = now();
            hcomp_stats st;
            check(hcomp_stat_path(fpath, &st, &err), &err, "stat");
            check(hcomp_file_open(fpath, HCOMP_O_RDONLY, 0, 1, o, &f, &err), &err, "reopen");
            double t2 = now();
            for (long at = 0; at < size; at += (long) MiB) {
                uint64_t n = (uint64_t) (size - at) < MiB ? (uint64_t) (size - at) : MiB;
                uint64_t got = 0;
                check(hcomp_file_pread(f, back + at, n, (uint64_t) at, &got, &err), &err, "read");
                if (got != n)
                    die("short read", prio[p]);
            }
            double t3 = now();
            check(hcomp_file_close(f, &err), &err, "close");
            if (memcmp(back, data, (size_t) size) != 0)
                die("read back other bytes", prio[p]);
            ratio[run] = (double) size / (double) st.stored_bytes;
            comp[run] = (double) size / (t1 - t0) / 1e6;
            dec[run] = (double) size / (t3 - t2) / 1e6;
            if (run == runs - 1) {  /* the codecs of the last run, by share of the data */
                size_t used = 0;
                for (int k = 0; k < HCOMP_CODEC_COUNT; k++)
                    if (st.codec[k].raw_bytes > 0)
                        used += (size_t) snprintf(codecs + used, sizeof codecs - used, "%s%s:%.0f%%",
                                                  used ? "," : "", hcomp_codec_by_id((unsigned) k)->name,
                                                  100.0 * (double) st.codec[k].raw_bytes / (double) size);
            }
            hcomp_options_free(o);
            (void) hcomp_file_delete(fpath, &err);
        }
        printf("%s\t%.4f\t%.1f\t%.1f\t%s\n", prio[p], median(ratio, runs), median(comp, runs),
               median(dec, runs), codecs[0] ? codecs : "-");
        fflush(stdout);
    }
    free(data);
    free(back);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "gen") == 0) {
        gen(argv[2], argv[3]);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "types") == 0) {
        char tp[4096];
        snprintf(tp, sizeof tp, "%s.types", argv[2]);
        FILE *f = fopen(argv[2], "rb"), *t = fopen(tp, "w");
        int dt = hcomp_dtype_from_name(argv[3]);
        if (f == NULL || t == NULL || dt < 0)
            die("usage: types FILE DTYPE", argv[2]);
        fseek(f, 0, SEEK_END);
        put_region(t, 0, (uint64_t) ftell(f), dt);
        fclose(f);
        fclose(t);
        return 0;
    }
    if (argc >= 7 && strcmp(argv[1], "measure") == 0) {
        int runs = atoi(argv[4]);
        if (runs < 1 || runs > MAX_RUNS)
            die("runs must be 1..9", argv[4]);
        measure(argv[2], argv[3], runs, argv[5], argc - 6, argv + 6);
        return 0;
    }
    fprintf(stderr, "usage: wl_frontier gen KIND FILE | types FILE DTYPE | "
                    "measure FILE DIR RUNS BANDWIDTH PRIORITY...\n");
    return 2;
}
