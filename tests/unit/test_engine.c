/* The engine end to end through the file API: codec choice per data kind, the
 * weights' effect, byte shuffle, node-local tiers on two simulated nodes (drain),
 * feedback written back to a named seed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tutil.h"
#include "common/clock.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hcomp.h"
#include "hcomp_model.h"
#include "engine/analyzer.h"
#include "engine/engine.h"
#include "engine/filter.h"
#include "engine/framing.h"
#include "engine/manager.h"
#include "file/file_internal.h"
#include "engine/predictor.h"

#define MIB (1u << 20)

typedef struct fixture {
    char base[256], t0[PATH_MAX], t1[PATH_MAX], config[PATH_MAX], file[PATH_MAX];
} fixture;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* tier 0: node-local, emulated 2 GB/s; tier 1: shared, emulated 200 MB/s */
static void write_config(fixture *fx, const char *cap0)
{
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [\n"
             " {\"name\": \"nvme\", \"path\": \"%s\", \"capacity\": \"%s\", \"scope\": \"node-local\","
             "  \"bandwidth\": \"2GB/s\", \"latency\": \"20us\", \"measure\": false},\n"
             " {\"name\": \"pfs\", \"path\": \"%s\", \"bandwidth\": \"200MB/s\", \"latency\": \"1ms\","
             " \"measure\": false}\n"
             "]}\n", fx->t0, cap0, fx->t1);
    write_text(fx->config, json);
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->base, sizeof(fx->base), "/tmp/hcomp-test-engine-XXXXXX");
    assert_non_null(mkdtemp(fx->base));
    snprintf(fx->t0, sizeof(fx->t0), "%s/t0", fx->base);
    snprintf(fx->t1, sizeof(fx->t1), "%s/t1", fx->base);
    snprintf(fx->config, sizeof(fx->config), "%s/tiers.json", fx->base);
    snprintf(fx->file, sizeof(fx->file), "%s/data.h5c", fx->base);
    assert_int_equal(mkdir(fx->t0, 0700), 0);
    assert_int_equal(mkdir(fx->t1, 0700), 0);
    write_config(fx, "unlimited");
    unsetenv("HCOMP_NODE");
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    unsetenv("HCOMP_NODE");
    assert_int_equal(t_rm_tree(fx->base), 0);
    free(fx);
    return 0;
}

static hcomp_options *opts(const fixture *fx, ...)
{
    hcomp_options *o = hcomp_options_new();
    assert_non_null(o);
    hcomp_error err;
    assert_int_equal(hcomp_options_set(o, "hcomp_config", fx->config, &err), HCOMP_OK);
    va_list ap;
    va_start(ap, fx);
    for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
        const char *v = va_arg(ap, const char *);
        if (hcomp_options_set(o, k, v, &err) != HCOMP_OK)
            fail_msg("%s=%s: %s", k, v, err.msg);
    }
    va_end(ap);
    return o;
}

/* The options of most tests here: node-local data left where it was placed. */
static hcomp_options *drain_never(const fixture *fx)
{
    return opts(fx, "hcomp_drain", "never", NULL);
}

/* Writes buf in tasks of task bytes; with sync, hcomp_file_sync before the close. */
static void write_file_sync(const fixture *fx, hcomp_options *o, int dtype, const void *buf,
                            size_t len, size_t task, int sync)
{
    hcomp_file *f;
    hcomp_error err;
    if (hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err) != HCOMP_OK)
        fail_msg("open: %s", err.msg);
    hcomp_file_set_dtype(f, dtype);
    for (size_t off = 0; off < len; off += task) {
        size_t n = len - off < task ? len - off : task;
        if (hcomp_file_pwrite(f, (const char *) buf + off, n, off, &err) != HCOMP_OK)
            fail_msg("pwrite: %s", err.msg);
    }
    if (sync && hcomp_file_sync(f, &err) != HCOMP_OK)
        fail_msg("sync: %s", err.msg);
    if (hcomp_file_close(f, &err) != HCOMP_OK)
        fail_msg("close: %s", err.msg);
}

static void write_file(const fixture *fx, hcomp_options *o, int dtype, const void *buf, size_t len,
                       size_t task)
{
    write_file_sync(fx, o, dtype, buf, len, task, 0);
}

static int read_file(const fixture *fx, void *buf, size_t len, hcomp_error *err)
{
    hcomp_file *f;
    int rc = hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, NULL, &f, err);
    if (rc != HCOMP_OK)
        return rc;
    uint64_t got = 0;
    rc = hcomp_file_pread(f, buf, len, 0, &got, err);
    hcomp_file_close(f, NULL);
    if (rc == HCOMP_OK && got != len)
        fail_msg("short read %llu of %zu", (unsigned long long) got, len);
    return rc;
}

static void delete_file(const fixture *fx)
{
    hcomp_error err;
    if (hcomp_file_delete(fx->file, &err) != HCOMP_OK)
        fail_msg("delete: %s", err.msg);
}

/* data kinds */
static double *smooth(size_t n)
{
    double *d = malloc(n * sizeof(double));
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = 300.0 + 20.0 * sin((double) i * 0.001) + 5.0 * cos((double) i * 0.00037);
    return d;
}

/* The next value of a xorshift64 generator. */
static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static unsigned char *random_bytes(size_t n, unsigned seed)
{
    unsigned char *d = malloc(n);
    assert_non_null(d);
    uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char) xorshift(&x);
    return d;
}

static char *text(size_t n)
{
    static const char *const words[] = {"pressure", "temperature", "step", "rank", "value",
                                        "converged", "residual", "mesh", "cell", "flux"};
    char *d = malloc(n);
    assert_non_null(d);
    size_t k = 0;
    for (unsigned i = 0; k < n; i++) {
        char w[64];
        int l = snprintf(w, sizeof(w), "%s=%u %s\n", words[i % 10], i * 7 % 1000, words[(i / 3) % 10]);
        for (int j = 0; j < l && k < n; j++)
            d[k++] = w[j];
    }
    return d;
}

static void stat_ok(const fixture *fx, hcomp_stats *st)
{
    hcomp_error err;
    if (hcomp_stat_path(fx->file, st, &err) != HCOMP_OK)
        fail_msg("stat: %s", err.msg);
}

/* Every kind of data reads back exactly, and the choices fit the data: random bytes
 * are stored raw, text and smooth fields are compressed. The first tier is a disk's
 * 500 MB/s here: on the fixture's 2 GB/s, compressing full-precision doubles 1.5x at
 * 3 GB/s and storing them raw cost about the same, and either is a right choice. */
static void test_auto_round_trip_by_kind(void **state)
{
    fixture *fx = *state;
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [\n"
             " {\"name\": \"disk\", \"path\": \"%s\", \"bandwidth\": \"500MB/s\", "
             "\"latency\": \"100us\", \"measure\": false}]}\n", fx->t0);
    write_text(fx->config, json);
    const size_t len = 4 * MIB;
    struct {
        const char *name;
        void *data;
        int dtype;
        int expect_compressed;
    } kinds[] = {
        {"smooth doubles", smooth(len / 8), HCOMP_DTYPE_DOUBLE, 1},
        {"text", text(len), HCOMP_DTYPE_BYTES, 1},
        {"random", random_bytes(len, 3), -1, 0},
    };
    unsigned char *back = malloc(len);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        hcomp_options *o = drain_never(fx);
        write_file(fx, o, kinds[k].dtype, kinds[k].data, len, MIB);
        hcomp_options_free(o);
        hcomp_error err;
        memset(back, 0xAA, len);
        if (read_file(fx, back, len, &err) != HCOMP_OK)
            fail_msg("%s: read: %s", kinds[k].name, err.msg);
        if (memcmp(back, kinds[k].data, len) != 0)
            fail_msg("%s: data differs", kinds[k].name);
        hcomp_stats st;
        stat_ok(fx, &st);
        double ratio = (double) st.live_bytes / (double) st.stored_bytes;
        if (kinds[k].expect_compressed && !(ratio > 1.2))
            fail_msg("%s: ratio %.3f, expected compression", kinds[k].name, ratio);
        if (!kinds[k].expect_compressed &&
            st.codec[HCOMP_CODEC_NONE].raw_bytes != st.live_bytes)
            fail_msg("%s: %llu of %llu bytes not stored raw", kinds[k].name,
                     (unsigned long long) (st.live_bytes - st.codec[HCOMP_CODEC_NONE].raw_bytes),
                     (unsigned long long) st.live_bytes);
        delete_file(fx);
        free(kinds[k].data);
    }
    free(back);
}

/* Writes the doubles d as one task (synced with sync), checks that they read back, and
 * returns how many of the file's pieces are lzma; the file is deleted. */
static uint64_t lzma_pieces(const fixture *fx, hcomp_options *o, const double *d, size_t len,
                            int sync)
{
    write_file_sync(fx, o, HCOMP_DTYPE_DOUBLE, d, len, len, sync);
    unsigned char *back = malloc(len);
    hcomp_error err;
    if (read_file(fx, back, len, &err) != HCOMP_OK || memcmp(back, d, len) != 0)
        fail_msg("read back: %s", err.msg);
    free(back);
    hcomp_stats st;
    stat_ok(fx, &st);
    delete_file(fx);
    return st.codec[HCOMP_CODEC_LZMA].pieces;
}

/* A tier declared to write at 2 MB/s, where this process's writes (into the page cache,
 * then synced) are measured far faster: the measurement does not raise the declared
 * speed (the storage writes behind the page cache, overlapped with compression), so
 * lzma's ratio keeps paying for its time, with "measure" true or false. */
static void test_measured_writes_do_not_raise_speed(void **state)
{
    fixture *fx = *state;
    const size_t len = MIB / 2;
    double *d = smooth(len / 8);        /* lzma makes far more of it than lz4 does */
    for (int measure = 0; measure < 2; measure++) {
        char json[4 * PATH_MAX];
        snprintf(json, sizeof(json),   /* a directory of its own: a monitor slot of its own */
                 "{\"version\": 1, \"tiers\": [{\"name\": \"disk\", \"path\": \"%s\", "
                 "\"bandwidth\": \"2MB/s\", \"latency\": \"1ms\", \"measure\": %s}]}\n",
                 measure ? fx->t1 : fx->t0, measure ? "true" : "false");
        write_text(fx->config, json);
        uint64_t lzma[4];
        for (int k = 0; k < 4; k++) {
            hcomp_options *o = opts(fx, "hcomp_piece_size", "262144", "hcomp_drain", "never",
                                    "hcomp_codecs", "lz4,lzma", NULL);
            lzma[k] = lzma_pieces(fx, o, d, len, 1);
            hcomp_options_free(o);
        }
        for (int k = 0; k < 4; k++)
            if (lzma[k] != 2)
                fail_msg("declared 2 MB/s: file %d has %llu of 2 pieces lzma (measure %d)", k,
                         (unsigned long long) lzma[k], measure);
    }
    free(d);
}

/* A tier's speed is shared by the processes of the node that write at once
 * (hcomp_node_writers): told 2 GB/s, one writer takes lz4 for smooth doubles; a thousand
 * writers get 2 MB/s each, for which lzma's ratio pays. */
static void test_node_writers_share_speed(void **state)
{
    fixture *fx = *state;
    const size_t len = MIB;
    double *d = smooth(len / 8);
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [{\"name\": \"disk\", \"path\": \"%s\", "
             "\"bandwidth\": \"2GB/s\", \"latency\": \"1us\", \"measure\": false}]}\n", fx->t0);
    write_text(fx->config, json);
    const char *writers[2] = {"1", "1000"};
    uint64_t lzma[2];
    for (int k = 0; k < 2; k++) {
        hcomp_options *o = opts(fx, "hcomp_piece_size", "262144", "hcomp_drain", "never",
                                "hcomp_codecs", "lz4,lzma", "hcomp_node_writers", writers[k], NULL);
        lzma[k] = lzma_pieces(fx, o, d, len, 0);
        hcomp_options_free(o);
    }
    if (lzma[0] != 0 || lzma[1] != 4)
        fail_msg("lzma pieces of 4: %llu with one writer (want 0), %llu with 1000 (want 4)",
                 (unsigned long long) lzma[0], (unsigned long long) lzma[1]);
    free(d);
}

/* A tier with no stated speed is priced at the node's probe, read from the node's cache at
 * the first plan; several writers of a node share what several streams got together. */
static void test_node_writers_share_probed_aggregate(void **state)
{
    fixture *fx = *state;
    const size_t len = 3 * 256 * 1024;      /* three pieces: fewer writes than are measured */
    double *d = smooth(len / 8);
    char json[4 * PATH_MAX], cache[PATH_MAX + 16], entry[2 * PATH_MAX], line[128];
    snprintf(cache, sizeof(cache), "%s/cache", fx->base);
    assert_int_equal(mkdir(cache, 0700), 0);
    char *old_cache = getenv("HCOMP_CACHE_DIR") ? strdup(getenv("HCOMP_CACHE_DIR")) : NULL;
    setenv("HCOMP_CACHE_DIR", cache, 1);
    /* one stream 2 GB/s; two streams together 2 TB/s, or not known; each in a directory
     * of its own (the process's monitor keeps a directory's probe) */
    const char *together[2] = {"2e12", "0"};
    const char *dir[2] = {fx->t0, fx->t1};
    uint64_t lzma[2];
    for (int k = 0; k < 2; k++) {
        snprintf(json, sizeof(json),
                 "{\"version\": 1, \"tiers\": [{\"name\": \"disk\", \"path\": \"%s\", "
                 "\"latency\": \"1us\"}]}\n", dir[k]);
        write_text(fx->config, json);
        struct stat st;
        assert_int_equal(stat(dir[k], &st), 0);
        snprintf(entry, sizeof(entry), "%s/probe-%llx", cache, (unsigned long long) st.st_dev);
        snprintf(line, sizeof(line), "hcomp-probe 2 2e9 2e9 %s %s %.0f\n", together[k],
                 together[k], (double) time(NULL));
        write_text(entry, line);
        hcomp_options *o = opts(fx, "hcomp_piece_size", "262144", "hcomp_drain", "never",
                                "hcomp_codecs", "lz4,lzma", "hcomp_node_writers", "1000", NULL);
        lzma[k] = lzma_pieces(fx, o, d, len, 0);
        hcomp_options_free(o);
    }
    if (old_cache != NULL)
        setenv("HCOMP_CACHE_DIR", old_cache, 1);
    else
        unsetenv("HCOMP_CACHE_DIR");
    free(old_cache);
    if (lzma[0] != 0 || lzma[1] != 3)
        fail_msg("lzma pieces of 3 for 1000 writers: %llu with 2 TB/s for two streams (want "
                 "0), %llu with one stream's 2 GB/s alone (want 3)",
                 (unsigned long long) lzma[0], (unsigned long long) lzma[1]);
    free(d);
}

/* Archival weights store the same data smaller than async weights do. */
static void test_weights_change_decision(void **state)
{
    fixture *fx = *state;
    const size_t len = 4 * MIB;
    char *d = text(len);
    uint64_t stored[2];
    const char *prio[2] = {"async", "archival"};
    for (int i = 0; i < 2; i++) {
        hcomp_options *o = opts(fx, "hcomp_priority", prio[i], "hcomp_drain", "never", NULL);
        write_file(fx, o, HCOMP_DTYPE_BYTES, d, len, MIB);
        hcomp_options_free(o);
        hcomp_stats st;
        stat_ok(fx, &st);
        stored[i] = st.stored_bytes;
        unsigned char *back = malloc(len);
        hcomp_error err;
        assert_int_equal(read_file(fx, back, len, &err), HCOMP_OK);
        assert_memory_equal(back, d, len);
        free(back);
        delete_file(fx);
    }
    if (!(stored[1] < stored[0]))
        fail_msg("archival stored %llu bytes, async %llu", (unsigned long long) stored[1],
                 (unsigned long long) stored[0]);
    free(d);
}

/* A fixed codec is used for every piece that shrinks. */
static void test_fixed_codec(void **state)
{
    fixture *fx = *state;
    const size_t len = 2 * MIB;
    char *d = text(len);
    hcomp_options *o = opts(fx, "hcomp_codec", "zlib:6", "hcomp_drain", "never", NULL);
    write_file(fx, o, HCOMP_DTYPE_BYTES, d, len, MIB);
    hcomp_options_free(o);
    hcomp_stats st;
    stat_ok(fx, &st);
    assert_true(st.codec[HCOMP_CODEC_ZLIB].raw_bytes == len);
    delete_file(fx);
    free(d);
}

/* Byte shuffle is chosen for smooth doubles when allowed, and undone on read. */
static void test_shuffle_round_trip(void **state)
{
    fixture *fx = *state;
    const size_t n = MIB / 2, len = n * sizeof(double);
    double *d = smooth(n);
    for (size_t i = 0; i < n; i++)      /* full-precision noise in the low bits */
        d[i] += 1e-9 * (double) ((i * 2654435761u) % 1000);
    hcomp_options *o = opts(fx, "hcomp_priority", "archival", "hcomp_drain", "never", NULL);
    write_file(fx, o, HCOMP_DTYPE_DOUBLE, d, len, MIB);
    hcomp_options_free(o);
    double *back = malloc(len);
    hcomp_error err;
    assert_int_equal(read_file(fx, back, len, &err), HCOMP_OK);
    assert_memory_equal(back, d, len);
    hcomp_stats st;
    stat_ok(fx, &st);
    assert_true(st.stored_bytes < st.live_bytes);
    delete_file(fx);
    /* shuffle off: the result still reads back */
    o = opts(fx, "hcomp_shuffle", "off", "hcomp_drain", "never", NULL);
    write_file(fx, o, HCOMP_DTYPE_DOUBLE, d, len, MIB);
    hcomp_options_free(o);
    assert_int_equal(read_file(fx, back, len, &err), HCOMP_OK);
    assert_memory_equal(back, d, len);
    delete_file(fx);
    free(back);
    free(d);
}

/* Particle data as a PIC code writes it, float32: positions sorted by cell with random
 * offsets inside the cell (the low mantissa bits are noise), then Maxwellian momenta. */
static float *particles(size_t n)
{
    float *p = malloc(n * sizeof(float));
    assert_non_null(p);
    uint64_t s = 99;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double) (s >> 11) / 9007199254740992.0;
        if ((i / (MIB / 4)) % 2 == 0) {
            p[i] = (float) (64 + (i / 64) % 64 + u);
        } else {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double v = ((double) (s >> 11) + 1) / 9007199254740993.0;
            p[i] = (float) (0.1 + 0.25 * sqrt(-2 * log(v)) * cos(2 * M_PI * u));
        }
    }
    return p;
}

/* A file open with the footprint alone as the weights (archival's preset adds a
 * tie-breaker of write time, which under valgrind, 50 times slower, is no longer a
 * tie-breaker), the first nwrite of ntask MiB of particles written to it in 1 MiB tasks. */
static hcomp_file *footprint_file(const fixture *fx, size_t ntask, size_t nwrite, float **x,
                                  hcomp_options **o)
{
    *x = particles(ntask * MIB / sizeof(float));
    *o = opts(fx, "hcomp_weights", "0,0,1", "hcomp_drain", "never", NULL);
    hcomp_error err;
    hcomp_file *f;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, *o, &f, &err),
                     HCOMP_OK);
    hcomp_file_set_dtype(f, HCOMP_DTYPE_FLOAT);
    const unsigned char *b = (const unsigned char *) *x;
    for (size_t i = 0; i < nwrite; i++)
        assert_int_equal(hcomp_file_pwrite(f, b + i * MIB, MIB, i * MIB, &err), HCOMP_OK);
    return f;
}

/* Closes a footprint_file, checks its first len bytes read back as x, and cleans up. */
static void footprint_file_done(const fixture *fx, hcomp_file *f, hcomp_options *o, float *x,
                                size_t len)
{
    hcomp_error err;
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    hcomp_options_free(o);
    float *back = malloc(len);
    assert_non_null(back);
    assert_int_equal(read_file(fx, back, len, &err), HCOMP_OK);
    assert_memory_equal(back, x, len);
    free(back);
    free(x);
    delete_file(fx);
}

/* Archival weights (the footprint) on particles: once the first tasks have fed back, the engine's choice
 * for positions and for momenta compresses within 2% of the best ratio of all of its
 * candidates (every codec, level and filter) measured on the same bytes, and what it
 * writes reads back. (Before bitshuffle and the shuffled forms in the seed it chose lzma
 * at 1.78 where c-blosc's zstd with bitshuffle makes 1.88.) */
static void test_archival_on_particles(void **state)
{
    fixture *fx = *state;
    const size_t ntask = 24, len = ntask * MIB;
    float *x;
    hcomp_options *o;
    hcomp_error err;
    hcomp_file *f = footprint_file(fx, ntask, ntask, &x, &o);
    const unsigned char *b = (const unsigned char *) x;
    static hcomp_task_plan plan;
    unsigned char *out = malloc(2 * MIB), *tmp = NULL;
    size_t tmp_cap = 0;
    for (size_t t = ntask - 2; t < ntask; t++) {
        assert_int_equal(hcomp_engine_plan(&f->eng, b + t * MIB, MIB, &plan, &err), HCOMP_OK);
        const hcdp_candidate *chosen = &plan.input.cand[plan.hcdp.part[0].cand];
        double best = 0, got = 0;
        const char *best_name = "";
        int best_level = 0, best_filter = 0;
        for (int c = 0; c < plan.input.ncand; c++) {
            const hcdp_candidate *k = &plan.input.cand[c];
            const hcomp_codec *codec = hcomp_codec_by_id(k->codec);
            size_t clen = 0;
            assert_int_equal(hcomp_filter_encode(codec, k->level, k->filter, b + t * MIB, MIB, &tmp,
                                                 &tmp_cap, out, 2 * MIB, &clen), HCOMP_OK);
            double r = (double) MIB / (double) clen;
            if (r > best) {
                best = r;
                best_name = codec->name;
                best_level = k->level;
                best_filter = k->filter;
            }
            if (k == chosen)
                got = r;
        }
        if (got < 0.98 * best)
            fail_msg("task %zu: archival chose %s:%d filter %d, ratio %.3f; %s:%d filter %d "
                     "makes %.3f", t, hcomp_codec_by_id(chosen->codec)->name, chosen->level,
                     chosen->filter, got, best_name, best_level, best_filter, best);
    }
    free(out);
    free(tmp);
    footprint_file_done(fx, f, o, x, len);
}

static int count_files(const char *dir)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof(cmd), "find '%s' -type f -name '*.seg' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}
/* Encodes src with codec:level (and, alt_codec not NONE, the second way too) in 256 KiB
 * blocks; decodes what the job kept and checks it is src. */
static hcomp_job encode_job(const unsigned char *src, uint32_t len, unsigned codec, int level,
                            unsigned alt_codec, int alt_level)
{
    hcomp_job j;
    memset(&j, 0, sizeof j);
    j.src = src;
    j.len = len;
    j.codec = codec;
    j.level = level;
    j.filter = HCOMP_FILTER_NONE;
    j.block_size = 262144;
    j.nalt = alt_codec != HCOMP_CODEC_NONE;
    j.alt_codec[0] = alt_codec;
    j.alt_level[0] = alt_level;
    j.alt_filter[0] = HCOMP_FILTER_NONE;
    hcomp_job_encode(&j);
    assert_int_equal(j.rc, HCOMP_OK);
    unsigned char *piece = malloc(j.stored), *back = malloc(len);
    assert_non_null(piece);
    assert_non_null(back);
    memcpy(piece, j.table, j.table_len);
    memcpy(piece + j.table_len, j.payload, j.stored - j.table_len);
    hcomp_job d;
    memset(&d, 0, sizeof d);
    d.decode = 1;
    d.src = piece;
    d.len = j.stored;
    d.codec = j.codec_used;
    d.filter = j.filter_used;
    d.block_size = j.block_used;
    d.dst = back;
    d.dst_len = len;
    d.want_crc = j.crc;
    hcomp_job_run(&d);
    assert_int_equal(d.rc, HCOMP_OK);
    assert_memory_equal(back, src, len);
    free(d.tmp);
    free(piece);
    free(back);
    return j;
}

static void job_free(hcomp_job *j)
{
    free(j->out);
    free(j->tmp);
    free(j->table);
    free(j->alt_out);
    free(j->alt_table);
}

/* A trial (a form never tried, in place of the plan's choice) costs its piece nothing:
 * the job encodes both ways and keeps the smaller piece, whichever was asked first, and
 * says what the other made for the predictor. */
static void test_trial_keeps_smaller_piece(void **state)
{
    (void) state;
    const uint32_t len = MIB;
    char *t = text(len);
    const unsigned char *src = (const unsigned char *) t;
    hcomp_job lz4 = encode_job(src, len, HCOMP_CODEC_LZ4, 1, HCOMP_CODEC_NONE, 0);
    hcomp_job zstd = encode_job(src, len, HCOMP_CODEC_ZSTD, 9, HCOMP_CODEC_NONE, 0);
    assert_true(zstd.stored < lz4.stored);
    for (int first_smaller = 0; first_smaller < 2; first_smaller++) {
        hcomp_job j = first_smaller ? encode_job(src, len, HCOMP_CODEC_ZSTD, 9, HCOMP_CODEC_LZ4, 1)
                                    : encode_job(src, len, HCOMP_CODEC_LZ4, 1, HCOMP_CODEC_ZSTD, 9);
        assert_int_equal(j.codec, HCOMP_CODEC_ZSTD);
        assert_int_equal(j.level, 9);
        assert_int_equal(j.codec_used, HCOMP_CODEC_ZSTD);
        assert_int_equal(j.stored, zstd.stored);
        assert_int_equal(j.crc, zstd.crc);
        assert_int_equal(j.other_codec[0], HCOMP_CODEC_LZ4);
        assert_int_equal(j.other_level[0], 1);
        assert_int_equal(j.other_coded[0], lz4.coded);
        assert_true(j.other_seconds[0] > 0);
        job_free(&j);
    }
    job_free(&lz4);
    job_free(&zstd);
    free(t);
}

/* The first task of a kind of data has no form observed: its plan also encodes the best
 * candidate of each other form (none predicted slower than its choice), so that after
 * it every form of the data has been observed once and the piece is the smallest of them. */
static void test_untried_form_encodes_the_others(void **state)
{
    fixture *fx = *state;
    float *x;
    hcomp_options *o;
    hcomp_error err;
    hcomp_file *f = footprint_file(fx, 1, 1, &x, &o);
    assert_int_equal(hcomp_file_flush(f, &err), HCOMP_OK);
    const hcomp_analysis_slot *a = &f->eng.aslot[f->eng.aslot_last];
    assert_true(a->valid);
    /* plain, byte-shuffled and bit-shuffled: each observed by the first task alone (a
     * trial of one untried form would have observed two) */
    assert_int_equal(a->form_seen, (1u << HCOMP_FORMS) - 1);
    footprint_file_done(fx, f, o, x, MIB);
}

/* What a codec made on this data is what it is predicted to make on the next task of
 * it: a model that stored pieces of a kind of data in a form is predicted by their
 * ratio (their running mean), not by the regression's local correction. */
static void test_observed_ratio_predicts(void **state)
{
    fixture *fx = *state;
    const size_t ntask = 12;
    float *x;
    hcomp_options *o;
    hcomp_error err;
    hcomp_file *f = footprint_file(fx, ntask, ntask - 1, &x, &o);
    const unsigned char *b = (const unsigned char *) x;
    static hcomp_task_plan plan;
    assert_int_equal(hcomp_engine_plan(&f->eng, b + (ntask - 1) * MIB, MIB, &plan, &err), HCOMP_OK);
    const hcomp_analysis_slot *a = &f->eng.aslot[plan.slot];
    assert_true(a->nobs > 0);
    unsigned char *out = malloc(2 * MIB), *tmp = NULL;
    size_t tmp_cap = 0;
    int checked = 0;
    for (int c = 1; c < plan.input.ncand; c++) {
        const hcdp_candidate *k = &plan.input.cand[c];
        int i = hcomp_engine_observed(a, k->codec, k->level, k->filter);
        if (i >= 0) {
            if (fabs(k->ratio / exp(a->obs_lratio[i]) - 1.0) > 0.01)
                fail_msg("%s:%d filter %d: predicted %.3f, its pieces of this data made %.3f",
                         hcomp_codec_by_id(k->codec)->name, k->level, k->filter, k->ratio,
                         exp(a->obs_lratio[i]));
            /* and it is what the codec makes on the next task's bytes, within 3% */
            size_t clen = 0;
            assert_int_equal(hcomp_filter_encode(hcomp_codec_by_id(k->codec), k->level, k->filter,
                                                 b + (ntask - 1) * MIB, MIB, &tmp, &tmp_cap, out,
                                                 2 * MIB, &clen), HCOMP_OK);
            double made = (double) MIB / (double) clen;
            if (fabs(k->ratio / made - 1.0) > 0.03)
                fail_msg("%s:%d filter %d: predicted %.3f after pieces of this data, makes %.3f",
                         hcomp_codec_by_id(k->codec)->name, k->level, k->filter, k->ratio, made);
            checked++;
        }
    }
    assert_true(checked > 0);
    free(out);
    free(tmp);
    footprint_file_done(fx, f, o, x, (ntask - 1) * MIB);
}


static int slot_observed(const hcomp_analysis_slot *a, const hcdp_candidate *k)
{
    return hcomp_engine_observed(a, k->codec, k->level, k->filter) >= 0;
}

/* A plan whose choice was never observed on the data also encodes the best candidate
 * that was (and the smaller piece is kept): the choice's observations are forgotten, the
 * task planned again, and one of its other encodings must be an observed candidate; the
 * piece written from that plan reads back. */
static void test_unobserved_choice_encodes_observed(void **state)
{
    fixture *fx = *state;
    const size_t ntask = 5;
    float *x;
    hcomp_options *o;
    hcomp_error err;
    hcomp_file *f = footprint_file(fx, ntask, ntask - 1, &x, &o);
    const unsigned char *b = (const unsigned char *) x + (ntask - 1) * MIB;
    static hcomp_task_plan plan;
    hcomp_analysis_slot *a = NULL;
    int choice = -1;
    /* plan the next task; while the choice is one observed on this data, forget what it
     * made there and plan again */
    for (int round = 0; round < 16; round++) {
        assert_int_equal(hcomp_engine_plan(&f->eng, b, MIB, &plan, &err), HCOMP_OK);
        a = &f->eng.aslot[plan.slot];
        const hcdp_candidate *k = &plan.input.cand[plan.hcdp.part[0].cand];
        if (plan.hcdp.part[0].cand > 0 && !slot_observed(a, k)) {
            choice = plan.hcdp.part[0].cand;
            break;
        }
        if (a->nobs < 2)
            break;
        int i = hcomp_engine_observed(a, k->codec, k->level, k->filter);
        a->obs_codec[i] = a->obs_codec[a->nobs - 1];
        a->obs_level[i] = a->obs_level[a->nobs - 1];
        a->obs_form[i] = a->obs_form[a->nobs - 1];
        a->obs_lratio[i] = a->obs_lratio[a->nobs - 1];
        a->obs_n[i] = a->obs_n[a->nobs - 1];
        a->nobs--;
        a->cand_valid = a->plan_valid = 0;
    }
    if (choice < 0)
        fail_msg("no plan chose a candidate unobserved on the data while others were observed");
    int has_observed = 0;
    for (int i = 0; i < plan.nalt; i++)
        has_observed |= slot_observed(a, &plan.input.cand[plan.alt[i]]);
    if (!has_observed)
        fail_msg("choice %u:%d filter %d never observed, and none of its %d other encodings was "
                 "(%d observed)", plan.input.cand[choice].codec, plan.input.cand[choice].level,
                 plan.input.cand[choice].filter, plan.nalt, a->nobs);
    assert_int_equal(hcomp_file_pwrite(f, b, MIB, (ntask - 1) * MIB, &err), HCOMP_OK);
    footprint_file_done(fx, f, o, x, ntask * MIB);
}

/* The choice's codec at a faster level, never observed on the data, is encoded too: under
 * the footprint alone, bit-shuffled blosc2-zstd is chosen at a level above 1 for the first
 * task of particles, and level 1 (at least twice as fast) is among its other encodings. */
static void test_faster_level_encoded_too(void **state)
{
    fixture *fx = *state;
    float *x = particles(MIB / sizeof(float));
    hcomp_options *o = opts(fx, "hcomp_weights", "0,0,1", "hcomp_drain", "never",
                            "hcomp_codecs", "blosc2-zstd", NULL);
    hcomp_error err;
    hcomp_file *f;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err),
                     HCOMP_OK);
    hcomp_file_set_dtype(f, HCOMP_DTYPE_FLOAT);
    /* a first write of other data readies the tiers (a plan before any write has no room) */
    char *t = text(64 * 1024);
    assert_int_equal(hcomp_file_pwrite(f, t, 64 * 1024, 4 * MIB, &err), HCOMP_OK);
    free(t);
    static hcomp_task_plan plan;
    assert_int_equal(hcomp_engine_plan(&f->eng, x, MIB, &plan, &err), HCOMP_OK);
    /* the choice: the plan's part, or the one a trial stands in for (its first alt) */
    const hcdp_candidate *part = &plan.input.cand[plan.hcdp.part[0].cand];
    int found = 0, level_above_1 = 0;
    for (int pass = 0; pass < 2; pass++) {
        const hcdp_candidate *ch = pass == 0 ? part
                                 : plan.nalt > 0 ? &plan.input.cand[plan.alt[0]] : NULL;
        if (ch == NULL || ch->codec != HCOMP_CODEC_BLOSC2_ZSTD || ch->level <= 1)
            continue;
        level_above_1 = 1;
        for (int i = 0; i < plan.nalt; i++) {
            const hcdp_candidate *k = &plan.input.cand[plan.alt[i]];
            found |= k->codec == ch->codec && k->filter == ch->filter && k->level < ch->level;
        }
    }
    if (!level_above_1)
        fail_msg("under the footprint alone blosc2-zstd was planned at level %d (filter %d)",
                 part->level, part->filter);
    if (!found)
        fail_msg("blosc2-zstd:%d filter %d chosen; no faster level among its %d other encodings",
                 part->level, part->filter, plan.nalt);
    assert_int_equal(hcomp_file_pwrite(f, x, MIB, 0, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    hcomp_options_free(o);
    float *back = malloc(MIB);
    assert_int_equal(read_file(fx, back, MIB, &err), HCOMP_OK);
    assert_memory_equal(back, x, MIB);
    free(back);
    free(x);
    delete_file(fx);
}

/* Two simulated nodes: node A writes with a node-local first tier. Without draining,
 * node B gets a clear error naming node A, never wrong bytes; with draining at close,
 * node B reads the right bytes and the node-local tier is empty. (With hcomp_drain=close
 * the engine charges the move to the node-local tier, so only weights on read speed put
 * data there: those are used, and the data is seen there before the close.) */
static void test_two_nodes(void **state)
{
    fixture *fx = *state;
    const size_t len = 2 * MIB;
    char *d = text(len);
    char *back = malloc(len);
    hcomp_error err;
    const char *drain[2] = {"never", "close"};
    for (int i = 0; i < 2; i++) {
        setenv("HCOMP_NODE", "node-A", 1);
        hcomp_options *o = i == 0 ? opts(fx, "hcomp_drain", "never", "hcomp_priority", "async", NULL)
                                  : opts(fx, "hcomp_drain", "close", "hcomp_weights", "0,1,0", NULL);
        hcomp_file *f;
        if (hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err) != HCOMP_OK)
            fail_msg("open: %s", err.msg);
        for (size_t off = 0; off < len; off += 256 * 1024)
            if (hcomp_file_pwrite(f, d + off, 256 * 1024, off, &err) != HCOMP_OK)
                fail_msg("pwrite: %s", err.msg);
        if (count_files(fx->t0) == 0)
            fail_msg("hcomp_drain=%s: nothing was placed on the node-local tier", drain[i]);
        if (hcomp_file_close(f, &err) != HCOMP_OK)
            fail_msg("close: %s", err.msg);
        hcomp_options_free(o);
        setenv("HCOMP_NODE", "node-B", 1);
        int rc = read_file(fx, back, len, &err);
        if (i == 0) {
            assert_true(count_files(fx->t0) > 0);
            if (rc == HCOMP_OK)
                fail_msg("node B read node A's node-local data");
            assert_int_equal(rc, HCOMP_E_IO);
            assert_non_null(strstr(err.msg, "node-A"));
            setenv("HCOMP_NODE", "node-A", 1);
            assert_int_equal(read_file(fx, back, len, &err), HCOMP_OK);
            assert_memory_equal(back, d, len);
        } else {
            if (rc != HCOMP_OK)
                fail_msg("node B after drain: %s", err.msg);
            assert_memory_equal(back, d, len);
            assert_int_equal(count_files(fx->t0), 0);
        }
        setenv("HCOMP_NODE", "node-A", 1);
        delete_file(fx);
        assert_int_equal(count_files(fx->t0) + count_files(fx->t1), 0);
    }
    free(back);
    free(d);
}

static uint64_t blocks_in(const char *dir)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof(cmd), "du -sk '%s' | cut -f1", dir);
    FILE *p = popen(cmd, "r");
    unsigned long long kib = 0;
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%llu", &kib), 1);
    pclose(p);
    return kib * 1024;
}

/* Draining at close costs a second write: for a write-weighted objective the engine
 * stores straight on the shared tier, where without the drain it uses the node-local one. */
static void test_drain_close_charged(void **state)
{
    fixture *fx = *state;
    const size_t len = 2 * MIB;
    char *d = text(len);
    const char *drain[2] = {"never", "close"};
    for (int i = 0; i < 2; i++) {
        hcomp_options *o = opts(fx, "hcomp_drain", drain[i], "hcomp_priority", "async", NULL);
        hcomp_file *f;
        hcomp_error err;
        if (hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err) != HCOMP_OK)
            fail_msg("open: %s", err.msg);
        if (hcomp_file_pwrite(f, d, len, 0, &err) != HCOMP_OK)
            fail_msg("pwrite: %s", err.msg);
        int local = count_files(fx->t0);
        if (i == 0 && local == 0)
            fail_msg("hcomp_drain=never: the fast node-local tier was not used");
        if (i == 1 && local != 0)
            fail_msg("hcomp_drain=close: %d files on the node-local tier; the move at close "
                     "makes it slower than the shared tier", local);
        assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
        hcomp_options_free(o);
        delete_file(fx);
    }
    free(d);
}

/* Background drain: while the writer is idle, its node-local pieces move to the
 * shared tier (their node-local space is freed) and another node can read them
 * before the writer closes. */
static void test_background_drain(void **state)
{
    fixture *fx = *state;
    const size_t len = 4 * MIB;
    char *d = text(len);
    char *back = malloc(len);
    hcomp_error err;
    setenv("HCOMP_NODE", "node-A", 1);
    hcomp_options *o = opts(fx, "hcomp_drain", "background", "hcomp_priority", "async", NULL);
    hcomp_file *f;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pwrite(f, d, len, 0, &err), HCOMP_OK);
    uint64_t before = blocks_in(fx->t0);
    assert_true(before > 64 * 1024);
    uint64_t after = before;
    for (int i = 0; i < 50 && after > 64 * 1024; i++) {     /* idle: up to 5 s */
        usleep(100000);
        after = blocks_in(fx->t0);
    }
    if (after > 64 * 1024)
        fail_msg("node-local tier still holds %llu bytes (was %llu)", (unsigned long long) after,
                 (unsigned long long) before);
    setenv("HCOMP_NODE", "node-B", 1);
    if (read_file(fx, back, len, &err) != HCOMP_OK)
        fail_msg("node B while A has it open: %s", err.msg);
    assert_memory_equal(back, d, len);
    setenv("HCOMP_NODE", "node-A", 1);
    /* the writer goes on writing and reading, correctly */
    assert_int_equal(hcomp_file_pwrite(f, d, 4096, len, &err), HCOMP_OK);
    uint64_t got = 0;
    assert_int_equal(hcomp_file_pread(f, back, len, 0, &got, &err), HCOMP_OK);
    assert_true(got == len);
    assert_memory_equal(back, d, len);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    hcomp_options_free(o);
    delete_file(fx);
    free(back);
    free(d);
}

/* hcomp_drain=writeback (docs/TIERS.md, "Write-back"): the close returns with the pieces
 * still on the node-local tier and the process moves them after it; a reader on another
 * node waits for the move, one with hcomp_drain_wait=0 does not; hcomp_writeback_wait
 * returns once the tier is empty; a delete right after a close stops the move and leaves
 * nothing. The shared tier is emulated slow, so that the move takes a while. */
static void test_writeback_after_close(void **state)
{
    fixture *fx = *state;
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [\n"
             " {\"name\": \"nvme\", \"path\": \"%s\", \"scope\": \"node-local\","
             "  \"bandwidth\": \"2GB/s\", \"latency\": \"20us\", \"measure\": false},\n"
             " {\"name\": \"pfs\", \"path\": \"%s\", \"bandwidth\": \"16MB/s\", \"latency\": \"1ms\","
             " \"emulate\": true}\n]}\n", fx->t0, fx->t1);
    write_text(fx->config, json);
    const size_t len = 4 * MIB;
    char *d = text(len);
    char *back = malloc(len);
    hcomp_error err;
    hcomp_options *o = opts(fx, "hcomp_drain", "writeback", NULL);
    for (int round = 0; round < 4; round++) {
        setenv("HCOMP_NODE", "node-A", 1);
        write_file(fx, o, -1, d, len, len);
        /* the close returned with pieces on the node-local tier (else it would not have
         * queued the handle), and their move is still running (at 16 MB/s) */
        assert_true(hcomp_writeback_pending() > 0);
        setenv("HCOMP_NODE", "node-B", 1);
        if (round == 0) {
            /* another node's reader waits for the move, and reads the right bytes */
            if (read_file(fx, back, len, &err) != HCOMP_OK)
                fail_msg("node B during the write-back: %s", err.msg);
            assert_memory_equal(back, d, len);
        } else if (round == 1) {
            /* one that does not wait is told where the bytes are and what moves them */
            hcomp_options *nw = opts(fx, "hcomp_drain_wait", "0", NULL);
            hcomp_file *f;
            assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, nw, &f, &err), HCOMP_OK);
            uint64_t got = 0;
            int rc = hcomp_file_pread(f, back, len, 0, &got, &err);
            if (rc == HCOMP_OK)
                assert_memory_equal(back, d, len);      /* moved already */
            else if (!strstr(err.msg, "node node-A") || !strstr(err.msg, "hcomp drain"))
                fail_msg("the error does not name the node and the command: %s", err.msg);
            hcomp_file_close(f, NULL);
            hcomp_options_free(nw);
        } else if (round == 2) {
            /* the program writes the path itself after the close (here: damage): the move
             * goes on, but nothing of hcomp's may replace what the program wrote */
            FILE *m = fopen(fx->file, "r+");
            assert_non_null(m);
            assert_int_equal(fwrite("NOTHCOMP", 1, 8, m), 8);
            assert_int_equal(fclose(m), 0);
            assert_int_equal(hcomp_writeback_wait(&err), HCOMP_OK);
            char head[8];
            m = fopen(fx->file, "r");
            assert_non_null(m);
            assert_int_equal(fread(head, 1, 8, m), 8);
            fclose(m);
            assert_memory_equal(head, "NOTHCOMP", 8);
            hcomp_file *g;
            assert_int_not_equal(hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, NULL, &g, &err),
                                 HCOMP_OK);
            assert_int_equal(unlink(fx->file), 0);
            continue;
        } else {
            /* a delete right after the close: the move stops, nothing is left */
            setenv("HCOMP_NODE", "node-A", 1);
            delete_file(fx);
            assert_int_equal(hcomp_writeback_pending(), 0);
            assert_true(blocks_in(fx->t0) <= 8 * 1024);
            break;
        }
        assert_int_equal(hcomp_writeback_wait(&err), HCOMP_OK);
        assert_int_equal(hcomp_writeback_pending(), 0);
        if (blocks_in(fx->t0) > 8 * 1024)      /* empty but for directories: moved */
            fail_msg("round %d: the node-local tier holds %llu bytes after the write-back",
                     round, (unsigned long long) blocks_in(fx->t0));
        if (read_file(fx, back, len, &err) != HCOMP_OK)
            fail_msg("node B after the write-back: %s", err.msg);
        assert_memory_equal(back, d, len);
        setenv("HCOMP_NODE", "node-A", 1);
        delete_file(fx);
    }
    /* written with hcomp_drain=never: nothing will move it, so no reader waits */
    setenv("HCOMP_NODE", "node-A", 1);
    hcomp_options *nv = opts(fx, "hcomp_drain", "never", NULL);
    write_file(fx, nv, -1, d, len, len);
    setenv("HCOMP_NODE", "node-B", 1);
    double t0 = hcomp_now();
    assert_int_not_equal(read_file(fx, back, len, &err), HCOMP_OK);
    assert_true(hcomp_now() - t0 < 5.0);
    if (!strstr(err.msg, "no process is moving them") || !strstr(err.msg, "hcomp drain"))
        fail_msg("unexpected error: %s", err.msg);
    setenv("HCOMP_NODE", "node-A", 1);
    delete_file(fx);
    hcomp_options_free(nv);
    hcomp_options_free(o);
    free(back);
    free(d);
}

/* Writes n tasks (task bytes each, task i from src[i]; dtype announced unless -1) into
 * the fixture's file (replacing it), checks that they read back, and returns the file's
 * statistics. */
static hcomp_file_stats write_tasks_with(fixture *fx, hcomp_options *o, int dtype,
                                         const void *const *src, size_t task, size_t n)
{
    hcomp_file *f;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err), HCOMP_OK);
    if (dtype >= 0)
        hcomp_file_set_dtype(f, dtype);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(hcomp_file_pwrite(f, src[i], task, i * task, &err), HCOMP_OK);
    hcomp_file_stats st = f->stats;
    char *back = malloc(task);
    assert_non_null(back);
    for (size_t i = 0; i < n; i++) {
        uint64_t got = 0;
        assert_int_equal(hcomp_file_pread(f, back, task, i * task, &got, &err), HCOMP_OK);
        assert_true(got == task);
        assert_memory_equal(back, src[i], task);
    }
    free(back);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    hcomp_options_free(o);
    delete_file(fx);
    return st;
}

static hcomp_file_stats write_tasks(fixture *fx, int dtype, const void *const *src, size_t task,
                                    size_t n)
{
    return write_tasks_with(fx, drain_never(fx), dtype, src, task, n);
}

/* n tasks alternating between text t and random bytes r (write_tasks). */
static hcomp_file_stats write_alternating(fixture *fx, const char *t, const unsigned char *r,
                                          size_t task, size_t n)
{
    const void *src[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        src[i] = i % 2 ? (const void *) (r + i / 2 * task) : (const void *) (t + i / 2 * task);
    return write_tasks(fx, -1, src, task, n);
}

/* Tasks that alternate between two kinds of data reuse one analysis per kind (a slot
 * each), and the data reads back. A second file of the same kinds takes both analyses
 * from the first (the process's shared analyses) instead of making its own. */
static void test_analysis_reused_per_kind(void **state)
{
    fixture *fx = *state;
    const size_t task = 64 * 1024, n = 32;
    char *t = text(n / 2 * task);
    unsigned char *r = random_bytes(n / 2 * task, 5);
    hcomp_file_stats first = write_alternating(fx, t, r, task, n);
    uint64_t made = first.analyses + first.analyses_shared;
    if (made < 2 || made > 4)
        fail_msg("%llu analyses (%llu in full) for %zu tasks of two kinds, alternating; want 2 "
                 "to 4", (unsigned long long) made, (unsigned long long) first.analyses, n);
    hcomp_file_stats second = write_alternating(fx, t, r, task, n);
    if (second.analyses_shared < 2 || second.analyses + second.analyses_shared > 4)
        fail_msg("second file: %llu analyses in full, %llu taken from the first; want both "
                 "kinds taken", (unsigned long long) second.analyses,
                 (unsigned long long) second.analyses_shared);
    free(t);
    free(r);
}

/* n float64 values 1 + u (u uniform in [0, 1)), each times 2^k with k 0 or 1 when
 * spread: the low six bytes random either way, the top two narrow or spread. */
static double *doubles(size_t n, unsigned seed, int spread)
{
    double *v = malloc(n * sizeof(double));
    assert_non_null(v);
    uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = xorshift(&x);
        v[i] = (1.0 + (double) (r >> 11) * 0x1p-53) * (spread && (r & 1) ? 2.0 : 1.0);
    }
    return v;
}

/* n tasks of float64 (write_tasks). */
/* n tasks of task bytes each, one after another in data (write_tasks_with; o is freed). */
static hcomp_file_stats write_split(fixture *fx, hcomp_options *o, int dtype, const void *data,
                                    size_t task, size_t n)
{
    const void *src[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        src[i] = (const char *) data + i * task;
    return write_tasks_with(fx, o, dtype, src, task, n);
}

static hcomp_file_stats write_doubles(fixture *fx, const double *data, size_t task, size_t n)
{
    return write_split(fx, drain_never(fx), HCOMP_DTYPE_DOUBLE, data,
                       task, n);
}

/* Two kinds of float64 whose bytes fingerprint alike (middle 512 bytes within the 0.25
 * bit slack) but whose values spread differently: a file of the second kind does not take
 * the analysis a file of the first made (the second fingerprint, of the values' top bytes,
 * tells them apart); a third file of the first kind does. */
static void test_shared_analysis_needs_like_values(void **state)
{
    fixture *fx = *state;
    const size_t task = 64 * 1024, n = 4, count = task * n / sizeof(double);
    double *narrow = doubles(count, 11, 0), *spread = doubles(count, 12, 1);
    const unsigned char *a = (const unsigned char *) narrow, *b = (const unsigned char *) spread;
    double fa = hcomp_byte_entropy(a + (task - 512) / 2, 512);
    double fb = hcomp_byte_entropy(b + (task - 512) / 2, 512);
    if (!(fabs(fa - fb) <= 0.25))
        fail_msg("premise: byte fingerprints %.3f and %.3f should be alike", fa, fb);
    hcomp_file_stats first = write_doubles(fx, narrow, task, n);
    assert_true(first.analyses + first.analyses_shared >= 1);
    hcomp_file_stats other = write_doubles(fx, spread, task, n);
    if (other.analyses_shared != 0 || other.analyses < 1)
        fail_msg("spread values: %llu analyses taken from the narrow file, %llu made; want "
                 "none taken", (unsigned long long) other.analyses_shared,
                 (unsigned long long) other.analyses);
    hcomp_file_stats again = write_doubles(fx, narrow, task, n);
    if (again.analyses_shared < 1 || again.analyses != 0)
        fail_msg("narrow values again: %llu taken, %llu made; want the first file's taken",
                 (unsigned long long) again.analyses_shared, (unsigned long long) again.analyses);
    free(narrow);
    free(spread);
}

/* A tier too small to take a task twice over raw, but many compressed tasks: the plan
 * that put a task there whole is reused for the next like tasks while the tier holds its
 * stored bytes twice and its fill (the price of its room) stays in the same eighth,
 * so HCDP is not run for every task; the tier never holds more than its capacity, and
 * nothing goes to the slow tier while the small one has a minimum part's room left
 * (as it fills, its price makes the engine compress the text harder, so 32 tasks may not
 * fill it), with everything reading back (write_tasks). */
static void test_plan_reused_on_small_tier(void **state)
{
    fixture *fx = *state;
    write_config(fx, "384KiB");
    const size_t task = 256 * 1024, n = 32;
    char *t = text(n * task);
    /* no feedback: a piece whose compression ran 2x off its prediction makes the next plan
     * again (under valgrind every one of them did, in some runs), and this is about the
     * rooms alone */
    hcomp_file_stats st = write_split(fx, opts(fx, "hcomp_drain", "never",
                                               "hcomp_feedback_interval", "0", NULL),
                                      -1, t, task, n);
    uint64_t on_nvme = st.tier_pieces[0];
    if (on_nvme < 4)
        fail_msg("premise: %llu pieces on the 384 KiB tier, want 4 or more (compressed text)",
                 (unsigned long long) on_nvme);
    if (st.tier_stored[0] > 384 * 1024)
        fail_msg("the small tier holds %llu bytes of its 393216", (unsigned long long) st.tier_stored[0]);
    if (st.tier_pieces[1] > 0 && st.tier_stored[0] + 64 * 1024 + 16 < 384 * 1024)
        fail_msg("%llu pieces went to the slow tier while the small one held only %llu of its "
                 "393216 bytes", (unsigned long long) st.tier_pieces[1],
                 (unsigned long long) st.tier_stored[0]);
    if (st.plans * 4 > st.tasks * 3)
        fail_msg("%llu plans made for %llu tasks, %llu pieces on the small tier: want its "
                 "plan reused", (unsigned long long) st.plans, (unsigned long long) st.tasks,
                 (unsigned long long) on_nvme);
    free(t);
}

/* The price of a filling tier's room reaches the engine: with async weights (the write
 * time alone) on a 100 GB/s tier of 1 MiB over a 10 MB/s one, raw storage wins a 256 KiB
 * text task on its own (3 us against lz4's compression), so without the price the fast
 * tier takes three tasks raw and compresses only the fourth, to fit; priced, its room
 * costs more than compressing once it is a quarter full (6e-9 s a stored byte: 1.6 ms for
 * a raw task), so only the first task is stored raw there, everything reading back. */
static void test_filling_tier_priced(void **state)
{
    fixture *fx = *state;
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [\n"
             " {\"name\": \"ram\", \"path\": \"%s\", \"capacity\": \"1MiB\", \"bandwidth\": \"100GB/s\","
             "  \"latency\": \"1us\", \"measure\": false},\n"
             " {\"name\": \"pfs\", \"path\": \"%s\", \"bandwidth\": \"10MB/s\", \"latency\": \"10ms\","
             " \"measure\": false}\n"
             "]}\n", fx->t0, fx->t1);
    write_text(fx->config, json);
    const size_t task = 256 * 1024, n = 16;
    char *t = text(n * task);
    hcomp_options *o = opts(fx, "hcomp_drain", "never", "hcomp_priority", "async", NULL);
    hcomp_file_stats st = write_split(fx, o, -1, t, task, n);     /* frees o */
    if (st.tier_stored[0] > 1024 * 1024)
        fail_msg("the 1 MiB tier holds %llu bytes", (unsigned long long) st.tier_stored[0]);
    uint64_t raw = st.tier_codec_raw[0][HCOMP_CODEC_NONE];
    if (raw > 512 * 1024 || st.tier_raw[0] <= 1024 * 1024)
        fail_msg("the 1 MiB tier took %llu bytes of text (%llu stored), %llu of them raw: want "
                 "at most the first two tasks raw, then the text compressed", (unsigned long long)
                 st.tier_raw[0], (unsigned long long) st.tier_stored[0], (unsigned long long) raw);
    free(t);
}

/* A second file of the same data takes the first file's analysis and, both predicting
 * with unrefitted copies of the embedded seed and every codec allowed, its predictions:
 * it predicts nothing itself. With codecs restricted (hcomp_codecs) it predicts again;
 * what it writes reads back either way (write_tasks). */
static void test_predictions_shared_by_like_files(void **state)
{
    fixture *fx = *state;
    const size_t task = 64 * 1024, n = 4;
    char *t = text(n * task);
    /* each file predicts (or takes the predictions) at its first task, before it has
     * observed anything; the first file predicts, or takes what an earlier test's file of
     * this text predicted */
    hcomp_file_stats first = write_split(fx, drain_never(fx), -1, t, task, n);
    assert_true(first.analyses + first.analyses_shared >= 1);
    /* one task: a task whose predictions missed gets new ones (hcomp_engine_feedback) */
    hcomp_file_stats second = write_split(fx, drain_never(fx), -1, t, task, 1);
    if (second.analyses_shared < 1 || second.predictions != 0)
        fail_msg("second file: %llu analyses taken, %llu predictions made; want its "
                 "predictions taken with the analysis", (unsigned long long) second.analyses_shared,
                 (unsigned long long) second.predictions);
    hcomp_file_stats restricted = write_split(fx, opts(fx, "hcomp_drain", "never", "hcomp_codecs",
                                                       "lz4,zstd", NULL), -1, t, task, n);
    if (restricted.analyses_shared < 1 || restricted.predictions < 1)
        fail_msg("codecs restricted: %llu analyses taken, %llu predictions made; want its own "
                 "predictions", (unsigned long long) restricted.analyses_shared,
                 (unsigned long long) restricted.predictions);
    free(t);
}

/* The predictions a file takes with a shared analysis are the embedded seed's lines plus
 * its own local corrections: what it would predict itself. File A (footprint weights, so it
 * stores with other codecs than B) writes text, which its observations correct its models
 * for, then plans a second kind of text, so shares that kind's candidates; file B (default
 * weights) writes the first text too, then plans the second: it takes A's candidates, and
 * each equals B's own prediction, those of the models B corrected (unlike the line) as
 * much as those of the models only A corrected (the line). */
static void test_shared_lines_plus_own_corrections(void **state)
{
    fixture *fx = *state;
    const size_t task = 64 * 1024, n = 4;
    char *x = text(n * task), *y = text(task);
    for (size_t i = 0; i < task; i++)       /* digits: a kind no other test writes */
        y[i] = (char) ('0' + (unsigned char) y[i] % 10);
    hcomp_error err;
    hcomp_predictor *fresh;
    assert_int_equal(hcomp_predictor_load(NULL, &fresh, &err), HCOMP_OK);
    static hcomp_task_plan plan;
    unsigned codec[2][16];
    int level[2][16];
    size_t ncorr[2];
    for (int file = 0; file < 2; file++) {
        /* A: the footprint alone, so that A's codecs are the slow strong ones whatever the
         * machine's speed (archival's tie-breaker of write time is not one under ASan) */
        hcomp_options *o = file == 0 ? opts(fx, "hcomp_drain", "never", "hcomp_weights",
                                            "0,0,1", NULL)
                                     : drain_never(fx);
        hcomp_file *f;
        assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f,
                                         &err), HCOMP_OK);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(hcomp_file_pwrite(f, x + i * task, task, i * task, &err), HCOMP_OK);
        assert_int_equal(hcomp_predictor_generation(f->eng.pred), 0);  /* premise: no refit */
        ncorr[file] = hcomp_predictor_corrected(f->eng.pred, HCOMP_DTYPE_BYTES, codec[file],
                                                level[file], 16);
        assert_true(ncorr[file] >= 1 && ncorr[file] <= 16);
        uint64_t predictions = f->stats.predictions, taken = f->stats.analyses_shared;
        assert_int_equal(hcomp_engine_plan(&f->eng, y, task, &plan, &err), HCOMP_OK);
        if (file == 0) {
            assert_int_equal(f->stats.predictions, predictions + 1);
        } else {
            if (f->stats.analyses_shared != taken + 1 || f->stats.predictions != predictions)
                fail_msg("file B: %llu analyses taken, %llu predictions for the digits; want "
                         "A's analysis and candidates taken", (unsigned long long)
                         (f->stats.analyses_shared - taken), (unsigned long long)
                         (f->stats.predictions - predictions));
            int own_corrected = 0, a_only = 0;
            for (int c = 1; c < plan.input.ncand; c++) {
                const hcdp_candidate *k = &plan.input.cand[c];
                const hcomp_features *ft = k->filter == HCOMP_FILTER_NONE ? &plan.feat
                                         : k->filter >= HCOMP_FILTER_BITSHUFFLE4 ? &plan.feat_bs
                                                                                 : &plan.feat_sh;
                hcomp_prediction own, line;
                assert_int_equal(hcomp_predictor_predict(f->eng.pred, ft, k->codec, k->level, &own),
                                 HCOMP_OK);
                assert_int_equal(hcomp_predictor_predict(fresh, ft, k->codec, k->level, &line),
                                 HCOMP_OK);
                if (k->ratio != own.ratio || k->comp_Bps != own.comp_Bps ||
                    k->decomp_Bps != own.decomp_Bps)
                    fail_msg("candidate %s:%d (filter %d): ratio %.6g, compression %.6g B/s "
                             "taken; the file predicts %.6g, %.6g B/s",
                             hcomp_codec_by_id(k->codec)->name, k->level, k->filter, k->ratio,
                             k->comp_Bps, own.ratio, own.comp_Bps);
                int in_b = 0, in_a = 0;
                for (size_t i = 0; i < ncorr[1]; i++)
                    in_b |= codec[1][i] == k->codec && level[1][i] == k->level;
                for (size_t i = 0; i < ncorr[0]; i++)
                    in_a |= codec[0][i] == k->codec && level[0][i] == k->level;
                own_corrected += in_b && own.ratio != line.ratio;
                a_only += in_a && !in_b;
            }
            /* premises: both paths were taken */
            assert_true(own_corrected >= 1);
            assert_true(a_only >= 1);
        }
        assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
        hcomp_options_free(o);
        delete_file(fx);
    }
    hcomp_predictor_free(fresh);
    free(x);
    free(y);
}

/* A reused plan gives way when a faster tier gains room: a file whose tasks went to the
 * slow tier because the fast one was full moves its next task up once another file's
 * deletion frees the fast tier, even by less than twice a task (the rooms' coarse
 * signature does not change then). */
static void test_plan_follows_freed_faster_tier(void **state)
{
    fixture *fx = *state;
    write_config(fx, "96KiB");
    const size_t task = 64 * 1024;
    unsigned char *r = random_bytes(4 * task, 9);
    char other[PATH_MAX];
    snprintf(other, sizeof(other), "%s/other.h5c", fx->base);
    hcomp_options *o = drain_never(fx);
    hcomp_file *b, *f;
    hcomp_error err;
    /* another file fills the fast tier */
    assert_int_equal(hcomp_file_open(other, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &b, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pwrite(b, r, 2 * task, 0, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(b, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pwrite(f, r + 2 * task, task, 0, &err), HCOMP_OK);
    assert_true(f->stats.tier_pieces[0] == 0);      /* premise: the fast tier was full */
    assert_int_equal(hcomp_file_delete(other, &err), HCOMP_OK);
    usleep(1100 * 1000);        /* the room of a tier a file saw is kept for a second */
    assert_int_equal(hcomp_file_pwrite(f, r + 3 * task, task, task, &err), HCOMP_OK);
    uint64_t fast = f->stats.tier_pieces[0], plans = f->stats.plans;
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    if (fast != 1)
        fail_msg("after the fast tier was freed the next like task went %s (%llu plans made)",
                 fast ? "there in parts" : "to the slow tier again", (unsigned long long) plans);
    char *back = malloc(2 * task);
    assert_non_null(back);
    assert_int_equal(read_file(fx, back, 2 * task, &err), HCOMP_OK);
    assert_memory_equal(back, r + 2 * task, 2 * task);
    free(back);
    delete_file(fx);
    hcomp_options_free(o);
    free(r);
}

/* Feedback: the model learns from measured pieces and is written back to the seed
 * the user named, at close, by the model's owner only. */
/* Training rows (seed rows and saved observations) of zstd:3 in the seed at path (NULL:
 * the embedded one). */
static size_t zstd3_rows(const char *path)
{
    hcomp_predictor *p;
    hcomp_error err;
    if (hcomp_predictor_load(path, &p, &err) != HCOMP_OK)
        fail_msg("loading the seed: %s", err.msg);
    size_t rows = 0;
    for (size_t i = 0; i < hcomp_predictor_model_count(p); i++) {
        hcomp_model_info mi;
        assert_int_equal(hcomp_predictor_model_at(p, i, &mi), HCOMP_OK);
        if (mi.codec == HCOMP_CODEC_ZSTD && mi.level == 3)
            rows = mi.rows + mi.observations;
    }
    hcomp_predictor_free(p);
    return rows;
}

static void test_feedback_saved_to_seed(void **state)
{
    fixture *fx = *state;
    char seed[PATH_MAX];
    snprintf(seed, sizeof(seed), "%s/seed.json", fx->base);
    hcomp_predictor *p;
    hcomp_error err;
    assert_int_equal(hcomp_predictor_load(NULL, &p, &err), HCOMP_OK);
    assert_int_equal(hcomp_predictor_save(p, seed, &err), HCOMP_OK);
    hcomp_predictor_free(p);
    size_t rows_before = zstd3_rows(seed);
    struct stat before, after;
    assert_int_equal(stat(seed, &before), 0);
    const size_t len = 8 * MIB;
    char *d = text(len);
    hcomp_options *o = opts(fx, "hcomp_seed", seed, "hcomp_feedback_interval", "4",
                            "hcomp_codec", "zstd:3", "hcomp_drain", "never", NULL);
    /* not the owner: the seed stays as it was */
    hcomp_file *f;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, o, &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pwrite(f, d, len, 0, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    assert_int_equal(stat(seed, &after), 0);
    assert_true(after.st_size == before.st_size && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    /* the owner writes it back, with the observations */
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR, 0600, 1, o, &f, &err), HCOMP_OK);
    hcomp_file_set_model_owner(f, 1);
    assert_int_equal(hcomp_file_pwrite(f, d, len, 0, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    assert_int_equal(stat(seed, &after), 0);
    assert_true(after.st_size > before.st_size);
    /* the saved seed holds the measured pieces as training rows of zstd:3 */
    size_t rows_written = zstd3_rows(seed);
    assert_true(rows_written >= rows_before + 8);
    /* a read-only open learns decompression times (the pieces record their level) and
     * its owner writes them back too: one observation per decoded 1 MiB piece */
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, o, &f, &err), HCOMP_OK);
    hcomp_file_set_model_owner(f, 1);
    char *back = malloc(len);
    uint64_t got = 0;
    assert_non_null(back);
    assert_int_equal(hcomp_file_pread(f, back, len, 0, &got, &err), HCOMP_OK);
    assert_true(got == len);
    assert_memory_equal(back, d, len);
    free(back);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    size_t rows_read = zstd3_rows(seed);
    if (rows_read < rows_written + len / MIB)
        fail_msg("zstd:3 has %zu rows after reading %zu pieces back; %zu before", rows_read,
                 (size_t) (len / MIB), rows_written);
    hcomp_options_free(o);
    delete_file(fx);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: their premise is the process's embedded predictor not yet refit, which
         * the observations of the tests after them (each first task of a kind encodes one
         * candidate of every form) soon do */
        cmocka_unit_test_setup_teardown(test_shared_lines_plus_own_corrections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_predictions_shared_by_like_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_round_trip_by_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_weights_change_decision, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measured_writes_do_not_raise_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_writers_share_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_writers_share_probed_aggregate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixed_codec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shuffle_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_archival_on_particles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trial_keeps_smaller_piece, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unobserved_choice_encodes_observed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_faster_level_encoded_too, setup, teardown),
        cmocka_unit_test_setup_teardown(test_observed_ratio_predicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untried_form_encodes_the_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_close_charged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writeback_after_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_analysis_reused_per_kind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_analysis_needs_like_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan_reused_on_small_tier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filling_tier_priced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan_follows_freed_faster_tier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_feedback_saved_to_seed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
