/* block_cost: what framing pieces in 256 KiB and 64 KiB blocks costs against one block per 1 MiB
 * piece (the unframed pieces' encoding), and how a large read's decoding compares with the
 * codec's own speed (issue 17). FILE's bytes (float32 data such as `wl_frontier gen
 * particles`) are written through libhcomp in 1 MiB calls with one fixed codec and one
 * compression thread to a one-tier configuration in DIR (a tmpfs directory: storage is not
 * the bound), read back warm whole with 1 and 2 threads (checked), 5 times each; prints the
 * medians, and each codec's decoding speed in memory on the same 1 MiB pieces (one thread,
 * the best of 5), which times the threads is the bound a read can reach.
 *
 * With `auto`, the engine chooses instead (codec auto, the default priority and block
 * size; the tier's speed measured, then told as 1 GB/s and as 200 MB/s), and the bound is
 * the pieces the engine wrote: their stored bytes, taken from the segments into memory,
 * decoded block by block by two threads into a buffer of the read's size, without
 * checksums (blocks and pieces stored as they are: copied).
 *
 *   make benchmarks/block_cost && benchmarks/block_cost particles.dat /dev/shm/somedir [auto] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hcomp.h"
#include "hcomp_model.h"
#include "engine/filter.h"
#include "file/file_internal.h"
#include "tiers/piece_header.h"
#include "bench_util.h"

#define MIB (1u << 20)
#define RUNS 5

static void check(int rc, const hcomp_error *e)
{
    if (rc != HCOMP_OK) {
        fprintf(stderr, "block_cost: %s\n", e->msg);
        exit(1);
    }
}

static hcomp_file *open_with(const char *path, int flags, const char *const *kv, hcomp_error *e)
{
    hcomp_options *o = hcomp_options_new();
    for (; kv[0] != NULL; kv += 2)
        check(hcomp_options_set(o, kv[0], kv[1], e), e);
    hcomp_file *f;
    check(hcomp_file_open(path, flags, 0600, 1, o, &f, e), e);
    hcomp_options_free(o);
    return f;
}

/* Write d[0..n) afresh to path in 1 MiB calls, as float32 data, with the options kv;
 * returns the write's MB/s (the close not counted). */
static double write_new(const char *path, const char *const *kv, const unsigned char *d,
                        size_t n)
{
    hcomp_error e;
    hcomp_file_delete(path, &e);
    hcomp_file *f = open_with(path, HCOMP_O_RDWR | HCOMP_O_CREAT, kv, &e);
    hcomp_file_set_dtype(f, HCOMP_DTYPE_FLOAT);
    double t0 = bench_now();
    for (size_t off = 0; off < n; off += MIB)
        check(hcomp_file_pwrite(f, d + off, n - off < MIB ? n - off : MIB, off, &e), &e);
    double mbs = (double) n / (bench_now() - t0) / 1e6;
    check(hcomp_file_close(f, &e), &e);
    return mbs;
}

/* one thread's decoding speed of codec on FILE's 1 MiB pieces, in memory (MB/s) */
static double raw_decode(const char *name, int level, int filter, const unsigned char *d, size_t n)
{
    const hcomp_codec *c = hcomp_codec_by_name(name);
    size_t np = n / MIB, cap = c->bound(MIB);
    unsigned char *z = malloc(np * cap), *out = malloc(MIB), *tmp = NULL;
    size_t *zl = malloc(np * sizeof(*zl)), tmp_cap = 0;
    if (z == NULL || out == NULL || zl == NULL)
        exit(1);
    for (size_t i = 0; i < np; i++)
        if (hcomp_filter_encode(c, level, filter, d + i * MIB, MIB, &tmp, &tmp_cap, z + i * cap,
                                cap, &zl[i]) != HCOMP_OK)
            exit(1);
    double best = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = bench_now();
        for (size_t i = 0; i < np; i++)
            if (hcomp_filter_decode(c, filter, z + i * cap, zl[i], out, MIB, &tmp, &tmp_cap) != HCOMP_OK)
                exit(1);
        double s = (double) (np * MIB) / (bench_now() - t0) / 1e6;
        best = s > best ? s : best;
    }
    free(z);
    free(out);
    free(zl);
    free(tmp);
    return best;
}

/* Run fn on a in this thread and on b in another at once; returns the seconds both took. */
static double on_two_threads(void *(*fn)(void *), void *a, void *b)
{
    pthread_t t;
    double t0 = bench_now();
    if (pthread_create(&t, NULL, fn, b) != 0)
        exit(1);
    fn(a);
    pthread_join(t, NULL);
    return bench_now() - t0;
}

/* A piece of the file as the engine stored it: its stored bytes (behind the header) in
 * memory, and where its logical bytes go. */
typedef struct {
    unsigned char *z;
    uint32_t stored, raw;
    uint64_t at;
    const hcomp_codec *c;
    int filter;
    uint32_t bs;             /* framed: its blocks' size; 0 unframed */
} stored_piece;

typedef struct {
    const stored_piece *p;
    size_t first, count;
    unsigned char *out;
    int failed;
} piece_share;

/* Decode the pieces of one share as the read does, less the checksums. */
static void *decode_pieces(void *arg)
{
    piece_share *s = arg;
    unsigned char *tmp = NULL;
    size_t tmp_cap = 0;
    for (size_t k = s->first; k < s->first + s->count; k++) {
        const stored_piece *p = &s->p[k];
        unsigned char *out = s->out + p->at;
        if (p->bs == 0) {
            if (p->c == NULL || p->c->id == HCOMP_CODEC_NONE)
                memcpy(out, p->z, p->raw);
            else if (hcomp_filter_decode(p->c, p->filter, p->z, p->stored, out, p->raw, &tmp,
                                         &tmp_cap) != HCOMP_OK)
                s->failed = 1;
            continue;
        }
        uint32_t n = hcomp_frame_blocks(p->raw, p->bs);
        const unsigned char *in = p->z + hcomp_block_table_size(n);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t raw = i + 1 < n ? p->bs : p->raw - i * p->bs, st = hcomp_block_stored(p->z, i);
            if (st == raw)
                memcpy(out + (size_t) i * p->bs, in, raw);
            else if (hcomp_filter_decode(p->c, p->filter, in, st, out + (size_t) i * p->bs, raw,
                                         &tmp, &tmp_cap) != HCOMP_OK)
                s->failed = 1;
            in += st;
        }
    }
    free(tmp);
    return NULL;
}

/* Decode np pieces by two threads (each half of them) into out; returns the seconds it
 * took, and sets *failed when a piece did not decode. */
static double decode_on_two_threads(const stored_piece *p, size_t np, unsigned char *out,
                                    int *failed)
{
    piece_share s[2] = {{p, 0, np / 2, out, 0}, {p, np / 2, np - np / 2, out, 0}};
    double secs = on_two_threads(decode_pieces, &s[0], &s[1]);
    *failed = s[0].failed || s[1].failed;
    return secs;
}

/* The same bytes in blocks of bs, each encoded alone in memory, decoded by two threads
 * (each half of the blocks) into one buffer of the file's size, as a large read's blocks
 * are: its output leaves the caches, which raw_decode's 1 MiB buffer does not. */
static double raw_decode_into(const char *name, int level, int filter, const unsigned char *d,
                              size_t n, size_t bs, unsigned char *out)
{
    const hcomp_codec *c = hcomp_codec_by_name(name);
    size_t nb = (n + bs - 1) / bs, cap = c->bound(bs), tmp_cap = 0;
    unsigned char *z = malloc(nb * cap), *tmp = NULL;
    stored_piece *p = malloc(nb * sizeof(*p));
    if (z == NULL || p == NULL)
        exit(1);
    for (size_t i = 0; i < nb; i++) {
        size_t len = n - i * bs < bs ? n - i * bs : bs, zl = 0;
        if (hcomp_filter_encode(c, level, filter, d + i * bs, len, &tmp, &tmp_cap, z + i * cap,
                                cap, &zl) != HCOMP_OK)
            exit(1);
        p[i] = (stored_piece){z + i * cap, (uint32_t) zl, (uint32_t) len, i * bs, c, filter, 0};
    }
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        int failed;
        v[r] = (double) n / decode_on_two_threads(p, nb, out, &failed) / 1e6;
        if (failed || memcmp(out, d, n) != 0) {
            fprintf(stderr, "block_cost: raw decoding differs\n");
            exit(1);
        }
    }
    free(z);
    free(p);
    free(tmp);
    return bench_median(v, RUNS);
}

/* The bound of a read of the file at path: its pieces' stored bytes decoded by two threads
 * into out (checked against d), medians of RUNS; *share_none gets the share of the logical
 * bytes stored as they are. */
static double decode_file_pieces(const char *path, const char *cfg, const unsigned char *d,
                                 size_t n, unsigned char *out, double *share_none)
{
    hcomp_error e;
    const char *kv[] = {"hcomp_config", cfg, NULL};
    hcomp_file *f = open_with(path, HCOMP_O_RDONLY, kv, &e);
    stored_piece *p = calloc(f->npieces ? f->npieces : 1, sizeof(*p));
    uint64_t none = 0, bytes = 0;
    if (p == NULL)
        exit(1);
    for (size_t k = 0; k < f->npieces; k++) {
        const hcomp_piece *q = &f->pieces[k];
        const hcomp_segment *sg = &f->segs[q->seg];
        p[k] = (stored_piece){malloc(q->stored_len ? q->stored_len : 1), q->stored_len,
                              q->raw_len, q->start, hcomp_codec_by_id(q->codec), q->filter,
                              q->frame ? hcomp_frame_block_size(q->frame) : 0};
        FILE *sf = sg->path ? fopen(sg->path, "rb") : NULL;
        if (p[k].z == NULL || sf == NULL || q->start + q->raw_len > n ||
            fseek(sf, (long) (q->seg_off + HCOMP_PIECE_HEADER_SIZE), SEEK_SET) != 0 ||
            fread(p[k].z, 1, q->stored_len, sf) != q->stored_len) {
            fprintf(stderr, "block_cost: cannot take piece %zu of %s\n", k, path);
            exit(1);
        }
        fclose(sf);
        if (q->codec == HCOMP_CODEC_NONE)
            none += q->raw_len;
        bytes += q->raw_len;
    }
    *share_none = bytes ? (double) none / (double) bytes : 0;
    size_t np = f->npieces;
    check(hcomp_file_close(f, &e), &e);
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        int failed;
        memset(out, 0, n);
        v[r] = (double) n / decode_on_two_threads(p, np, out, &failed) / 1e6;
        if (failed || bytes != n || memcmp(out, d, n) != 0) {
            fprintf(stderr, "block_cost: the file's pieces decode to other bytes\n");
            exit(1);
        }
    }
    for (size_t k = 0; k < np; k++)
        free(p[k].z);
    free(p);
    return bench_median(v, RUNS);
}

/* The engine's choice on a tier whose speed is measured or told (speed NULL: measured). */
static void auto_rows(const unsigned char *d, unsigned char *back, size_t n, const char *dir)
{
    static const char *const speeds[] = {NULL, "1GB/s", "200MB/s"};
    char cfg[4096], path[4096];
    snprintf(cfg, sizeof(cfg), "%s/tiers.json", dir);
    snprintf(path, sizeof(path), "%s/f.hc", dir);
    printf("| tier speed | ratio | stored as they are | codecs (share of the stored pieces' logical bytes) | write MB/s | read MB/s, 2 threads | the file's pieces decoded by 2 threads into a buffer of the read's size | read / that |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof(speeds) / sizeof(speeds[0]); k++) {
        FILE *c = fopen(cfg, "w");
        if (c == NULL) {
            perror(cfg);
            exit(1);
        }
        if (speeds[k])
            fprintf(c, "{\"version\": 1, \"tiers\": [{\"name\": \"t\", \"path\": \"%s\", "
                       "\"bandwidth\": \"%s\", \"measure\": false}]}\n", dir, speeds[k]);
        else
            fprintf(c, "{\"version\": 1, \"tiers\": [{\"name\": \"t\", \"path\": \"%s\"}]}\n", dir);
        fclose(c);
        double w[RUNS], r2[RUNS], into[RUNS], none[RUNS], ratio[RUNS];
        char codecs[512] = "";
        for (int rep = 0; rep < RUNS; rep++) {
            hcomp_error e;
            const char *wkv[] = {"hcomp_config", cfg, "hcomp_threads", "1", "hcomp_drain",
                                 "never", NULL};
            w[rep] = write_new(path, wkv, d, n);
            const char *rkv[] = {"hcomp_threads", "2", NULL};
            hcomp_file *f = open_with(path, HCOMP_O_RDONLY, rkv, &e);
            double t0;
            uint64_t got;
            check(hcomp_file_pread(f, back, n, 0, &got, &e), &e);     /* warm */
            t0 = bench_now();
            check(hcomp_file_pread(f, back, n, 0, &got, &e), &e);
            r2[rep] = (double) n / (bench_now() - t0) / 1e6;
            if (got != n || memcmp(back, d, n) != 0) {
                fprintf(stderr, "block_cost: the bytes read back differ\n");
                exit(1);
            }
            check(hcomp_file_close(f, &e), &e);
            into[rep] = decode_file_pieces(path, cfg, d, n, back, &none[rep]);
            hcomp_stats st;
            check(hcomp_stat_path(path, &st, &e), &e);
            ratio[rep] = (double) n / (double) st.stored_bytes;
            if (rep == RUNS - 1) {      /* the last repetition's codecs, as an example */
                for (int i = 0; i < HCOMP_CODEC_COUNT; i++) {
                    const hcomp_codec *cd = hcomp_codec_by_id((unsigned) i);
                    if (st.codec[i].pieces == 0 || cd == NULL)
                        continue;
                    size_t l = strlen(codecs);
                    snprintf(codecs + l, sizeof(codecs) - l, "%s%s %.0f%%", l ? ", " : "",
                             cd->name, 100.0 * (double) st.codec[i].raw_bytes / (double) n);
                }
            }
        }
        double rd = bench_median(r2, RUNS), bound = bench_median(into, RUNS);
        printf("| %s | %.3f | %.0f%% | %s | %.0f | %.0f | %.0f | %.0f%% |\n",
               speeds[k] ? speeds[k] : "measured", bench_median(ratio, RUNS),
               100.0 * bench_median(none, RUNS), codecs, bench_median(w, RUNS), rd, bound,
               100.0 * rd / bound);
    }
    hcomp_error e;
    hcomp_file_delete(path, &e);
    remove(cfg);
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "auto") == 0)) {
        fprintf(stderr, "usage: block_cost FILE DIR [auto]\n");
        return 2;
    }
    FILE *fp = fopen(argv[1], "rb");
    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0) {
        perror(argv[1]);
        return 1;
    }
    size_t n = (size_t) ftell(fp);
    rewind(fp);
    unsigned char *d = malloc(n), *back = malloc(n);
    if (d == NULL || back == NULL || fread(d, 1, n, fp) != n)
        return 1;
    fclose(fp);
    if (argc == 4) {
        auto_rows(d, back, n, argv[2]);
        return 0;
    }
    char cfg[4096], path[4096];
    snprintf(cfg, sizeof(cfg), "%s/tiers.json", argv[2]);
    snprintf(path, sizeof(path), "%s/f.hc", argv[2]);
    FILE *c = fopen(cfg, "w");
    if (c == NULL) {
        perror(cfg);
        return 1;
    }
    fprintf(c, "{\"version\": 1, \"tiers\": [{\"name\": \"t\", \"path\": \"%s\", "
               "\"bandwidth\": \"1GB/s\", \"measure\": false}]}\n", argv[2]);
    fclose(c);
    static const struct { const char *codec, *name; int level, filter; } cs[] = {
        {"lz4", "lz4", 1, HCOMP_FILTER_NONE}, {"zstd", "zstd", 1, HCOMP_FILTER_NONE},
        {"blosc-lz4:5", "blosc-lz4", 5, HCOMP_FILTER_BITSHUFFLE4}};
    static const char *const blocks[] = {"1048576", "262144", "65536"};
    printf("| codec | block | ratio | write MB/s | read MB/s, 1 thread | 2 threads | codec's decoding x 2 threads | read / that | the same blocks decoded by 2 threads into a buffer of the read's size | read / that |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
        double dec = raw_decode(cs[k].name, cs[k].level, cs[k].filter, d, n);
        for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
            double w[RUNS], r1[RUNS], r2[RUNS];
            uint64_t stored = 0;
            for (int rep = 0; rep < RUNS; rep++) {
                hcomp_error e;
                const char *wkv[] = {"hcomp_config", cfg, "hcomp_codec", cs[k].codec,
                                     "hcomp_block_size", blocks[b], "hcomp_threads", "1",
                                     "hcomp_drain", "never", NULL};
                w[rep] = write_new(path, wkv, d, n);
                hcomp_file *f;
                double t0;
                for (int th = 1; th <= 2; th++) {
                    const char *rkv[] = {"hcomp_threads", th == 1 ? "1" : "2", NULL};
                    f = open_with(path, HCOMP_O_RDONLY, rkv, &e);
                    uint64_t got;
                    check(hcomp_file_pread(f, back, n, 0, &got, &e), &e);     /* warm */
                    t0 = bench_now();
                    check(hcomp_file_pread(f, back, n, 0, &got, &e), &e);
                    (th == 1 ? r1 : r2)[rep] = (double) n / (bench_now() - t0) / 1e6;
                    if (got != n || memcmp(back, d, n) != 0) {
                        fprintf(stderr, "block_cost: the bytes read back differ\n");
                        return 1;
                    }
                    check(hcomp_file_close(f, &e), &e);
                }
                hcomp_stats st;
                check(hcomp_stat_path(path, &st, &e), &e);
                stored = st.stored_bytes;
            }
            double rd2 = bench_median(r2, RUNS);
            double into = raw_decode_into(cs[k].name, cs[k].level, cs[k].filter, d, n,
                                          (size_t) atoi(blocks[b]), back);
            printf("| %s | %s | %.3f | %.0f | %.0f | %.0f | %.0f | %.0f%% | %.0f | %.0f%% |\n",
                   cs[k].codec, blocks[b], (double) n / (double) stored, bench_median(w, RUNS),
                   bench_median(r1, RUNS), rd2, 2 * dec, 100.0 * rd2 / (2 * dec), into,
                   100.0 * rd2 / into);
        }
    }
    hcomp_error e;
    hcomp_file_delete(path, &e);
    remove(cfg);
    return 0;
}
