/* Writes the seed corpus of the fuzz targets (tests/fuzz/make-corpus builds and runs it):
 *   corpus_gen OUTDIR
 * makes OUTDIR/<target>/<name> for every target: small valid inputs, made by the
 * library itself (real mapping files and segments written through the public file
 * API, encoded records and headers, compressed streams of every codec, the embedded
 * default seed cut down to a few rows per model, tier configurations). */
#include "hcomp.h"
#include "hcomp_codec.h"
#include "hcomp_model.h"
#include "engine/predictor.h"
#include "common/util.h"
#include "file/mapfile.h"
#include "tiers/piece_header.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *outdir;

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "corpus_gen: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void put(const char *target, const char *name, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", outdir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        die("mkdir", path);
    snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        die("cannot write", path);
}

static void put_text(const char *target, const char *name, const char *text)
{
    put(target, name, text, strlen(text));
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die("cannot open", path);
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n + 65536 > cap) {
            cap = cap ? 2 * cap : 65536;
            if ((buf = realloc(buf, cap)) == NULL)
                die("out of memory", NULL);
        }
        got = fread(buf + n, 1, 65536, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return buf;
}

/* Compressible test data: text-like words, or smooth doubles. */
static void fill_words(unsigned char *p, size_t n, unsigned seed)
{
    static const char *const w[] = {"pressure ", "density ", "step ", "0.25 ", "mesh ",
                                    "energy ", "rank ", "\n", "velocity ", "1e-3 "};
    size_t o = 0;
    while (o < n) {
        seed = seed * 1103515245u + 12345u;
        const char *s = w[(seed >> 16) % 10];
        for (size_t i = 0; s[i] && o < n; i++)
            p[o++] = (unsigned char) s[i];
    }
}

static void fill_doubles(unsigned char *p, size_t n)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        double v = 100.0 + 3.0 * sin((double) i / 800.0);
        memcpy(p + i, &v, 8);
    }
    for (size_t i = n - n % 8; i < n; i++)
        p[i] = 0;
}

/* ---- piece headers ---------------------------------------------------------------- */

static void piece_headers(void)
{
    for (unsigned c = 0; c < HCOMP_CODEC_COUNT; c++) {
        hcomp_piece_header h = {.start = (uint64_t) c * 1048576u + 4096u, .raw_len = 65536,
                                .stored_len = c == 0 ? 65536 : 1000 + 77 * c, .codec = (uint8_t) c,
                                .filter = (uint8_t) (c % 5)};
        unsigned char out[HCOMP_PIECE_HEADER_SIZE];
        hcomp_piece_header_encode(&h, out);
        char name[32];
        snprintf(name, sizeof(name), "codec%u", c);
        put("fuzz_piece_header", name, out, sizeof(out));
    }
}

/* ---- mapping files ---------------------------------------------------------------- */

static char base[] = "/tmp/hcomp-corpus-XXXXXX";

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st; (void) flag; (void) ftw;
    return remove(p);
}

static void check(int rc, const hcomp_error *err, const char *what)
{
    if (rc != HCOMP_OK)
        die(what, err->msg);
}

static hcomp_options *options(const char *config, const char *codec)
{
    hcomp_options *o = hcomp_options_new();
    hcomp_error err;
    if (o == NULL)
        die("out of memory", NULL);
    check(hcomp_options_set(o, "hcomp_config", config, &err), &err, "hcomp_config");
    check(hcomp_options_set(o, "hcomp_codec", codec, &err), &err, "hcomp_codec");
    check(hcomp_options_set(o, "hcomp_threads", "1", &err), &err, "hcomp_threads");
    check(hcomp_options_set(o, "hcomp_piece_size", "4096", &err), &err, "hcomp_piece_size");
    return o;
}

/* Writes a small logical file through the public API: pieces of several codecs, an
 * overwrite, a hole, doubles (byte shuffle), a truncate and a grow; its statistics
 * record at close; with drain, a RELOCATE of the node-local pieces. */
static void write_file(const char *config, const char *path, int codecs)
{
    static const char *const list[] = {"zstd", "lz4", "zlib", "bzip2", "brotli", "snappy",
                                       "lzma", "none", "auto"};
    hcomp_error err;
    hcomp_options *o = options(config, list[0]);
    hcomp_file *f;
    check(hcomp_file_open(path, HCOMP_O_RDWR | HCOMP_O_CREAT, 0644, 1, o, &f, &err), &err, "open");
    unsigned char buf[6000];
    uint64_t off = 0;
    for (int i = 0; i < codecs; i++) {
        hcomp_options *oi = options(config, list[i % 9]);
        check(hcomp_file_set_options(f, oi, &err), &err, "set_options");
        hcomp_options_free(oi);
        size_t n = 700 + 300 * (size_t) (i % 4);
        if (i == 8) {
            hcomp_file_set_dtype(f, HCOMP_DTYPE_DOUBLE);
            fill_doubles(buf, n = 2048);
        } else
            fill_words(buf, n, (unsigned) i);
        check(hcomp_file_pwrite(f, buf, n, off, &err), &err, "pwrite");
        off += n + (i == 3 ? 5000 : 0);     /* a hole after the fourth */
    }
    fill_words(buf, 500, 99);
    check(hcomp_file_pwrite(f, buf, 500, 100, &err), &err, "pwrite (overwrite)");
    check(hcomp_file_truncate(f, off - 100, &err), &err, "truncate");
    check(hcomp_file_extend(f, off + 300, &err), &err, "extend");
    check(hcomp_file_close(f, &err), &err, "close");
    hcomp_options_free(o);
}

/* Rewrites every SEGMENT record to name "./seg" (fuzz_mapfile_open writes the segment
 * there); returns the new mapping file and, in *seg, the bytes of the (only) segment. */
static unsigned char *relocatable(const unsigned char *map, size_t len, size_t *out_len,
                                  unsigned char **seg, size_t *seg_len)
{
    hcomp_bytes b = {0};
    if (hcomp_bytes_reserve(&b, HCOMP_MAP_HEADER_SIZE) != 0)
        die("out of memory", NULL);
    memcpy(b.p, map, HCOMP_MAP_HEADER_SIZE);
    b.len = HCOMP_MAP_HEADER_SIZE;
    size_t pos = HCOMP_MAP_HEADER_SIZE;
    *seg = NULL;
    for (;;) {
        size_t at = pos;
        hcomp_map_record r;
        int res = hcomp_map_next(map, len, &pos, &r, NULL);
        if (res == HCOMP_MAP_INCOMPLETE)
            break;
        if (res != HCOMP_MAP_RECORD)
            die("damaged mapping file written by the library", NULL);
        if (r.type == HCOMP_REC_SEGMENT) {
            char tier[256], path[4096];
            snprintf(tier, sizeof(tier), "%.*s", (int) r.u.seg.tier_len, r.u.seg.tier);
            snprintf(path, sizeof(path), "%.*s/%.*s", (int) r.u.seg.dir_len, r.u.seg.dir,
                     (int) r.u.seg.file_len, r.u.seg.file);
            if (*seg != NULL)
                die("more than one segment", path);
            *seg = slurp(path, seg_len);
            if (hcomp_map_encode_segment(&b, r.u.seg.id, tier, ".", "seg", "fuzz", 0) != 0)
                die("out of memory", NULL);
        } else {
            if (hcomp_bytes_reserve(&b, pos - at) != 0)
                die("out of memory", NULL);
            memcpy(b.p + b.len, map + at, pos - at);
            b.len += pos - at;
        }
    }
    if (*seg == NULL)
        die("no segment in the mapping file", NULL);
    *out_len = b.len;
    return b.p;
}

static void mapping_files(void)
{
    if (mkdtemp(base) == NULL)
        die("mkdtemp", base);
    char one[4096], two[4096], fast[4096], slow[4096], path[4096];
    snprintf(fast, sizeof(fast), "%s/fast", base);
    snprintf(slow, sizeof(slow), "%s/slow", base);
    mkdir(fast, 0700);
    mkdir(slow, 0700);
    /* one shared tier: every piece in one segment */
    snprintf(one, sizeof(one), "%s/one.json", base);
    FILE *f = fopen(one, "w");
    fprintf(f, "{\"version\": 1, \"tiers\": [{\"name\": \"slow\", \"path\": \"%s\"}]}\n", slow);
    fclose(f);
    /* a small node-local tier drained at close to a shared one: SEGMENT, PIECE, SIZE,
     * STATS and RELOCATE records */
    snprintf(two, sizeof(two), "%s/two.json", base);
    f = fopen(two, "w");
    fprintf(f, "{\"version\": 1, \"tiers\": [{\"name\": \"fast\", \"path\": \"%s\", "
            "\"capacity\": \"64KiB\", \"scope\": \"node-local\"}, {\"name\": \"slow\", "
            "\"path\": \"%s\"}]}\n", fast, slow);
    fclose(f);

    size_t len;
    unsigned char *map;
    snprintf(path, sizeof(path), "%s/drained.h5c", base);
    write_file(two, path, 5);
    map = slurp(path, &len);
    put("fuzz_mapfile", "drained", map, len);
    put("fuzz_mapfile", "drained-cut", map, len - 7);      /* a record being written */
    free(map);

    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof(path), "%s/codecs%d.h5c", base, k);
        write_file(one, path, k ? 9 : 3);
        map = slurp(path, &len);
        put("fuzz_mapfile", k ? "codecs" : "small", map, len);
        size_t mlen, slen;
        unsigned char *seg;
        unsigned char *m2 = relocatable(map, len, &mlen, &seg, &slen);
        unsigned char *in = malloc(4 + mlen + slen);
        hcomp_put_u32(in, (uint32_t) mlen);
        memcpy(in + 4, m2, mlen);
        memcpy(in + 4 + mlen, seg, slen);
        put("fuzz_mapfile_open", k ? "codecs" : "small", in, 4 + mlen + slen);
        /* the same with the "make checksums right" flag (fuzz_mapfile_open.c) */
        hcomp_put_u32(in, (uint32_t) mlen | 0x80000000u);
        put("fuzz_mapfile_open", k ? "codecs-fix" : "small-fix", in, 4 + mlen + slen);
        hcomp_put_u32(in, (uint32_t) mlen);
        if (k == 0) {   /* the mapping file alone: the segment is missing */
            hcomp_put_u32(in, (uint32_t) mlen);
            put("fuzz_mapfile_open", "no-segment", in, 4 + mlen);
        }
        free(in);
        free(m2);
        free(seg);
        free(map);
    }

    /* every record type, encoded directly, after a header */
    hcomp_bytes b = {0};
    hcomp_map_header h = {.version = HCOMP_MAP_VERSION, .created_ns = 1700000000000000000ull};
    memcpy(h.file_id, "0123456789abcdef", 16);
    hcomp_bytes_reserve(&b, HCOMP_MAP_HEADER_SIZE);
    hcomp_map_header_encode(&h, b.p);
    b.len = HCOMP_MAP_HEADER_SIZE;
    hcomp_map_extent ext[2] = {{0, 4096, 0}, {8192, 100, 4000}};
    hcomp_map_encode_segment(&b, 7, "ram", "/dev/shm/x", "0000000000000007.seg", "node1", 1);
    hcomp_map_encode_piece(&b, 7, 0, 300, 4100, 0x12345678u, 2, 1, 3, 0, ext, 2);
    hcomp_map_encode_piece(&b, 7, 316, 300, 4100, 0x12345678u, 2, 1, 3, 1, ext, 1);
    hcomp_map_encode_size(&b, 9000, HCOMP_SIZE_SET);
    hcomp_map_encode_size(&b, 20000, HCOMP_SIZE_GROW);
    hcomp_map_encode_relocate(&b, 7, 0, 8, 4096, 280, 0x9abcdef0u, 3, 1, 9, 0);
    hcomp_map_encode_relocate(&b, 7, 316, 8, 8192, 280, 0x9abcdef0u, 3, 1, 9, 7);
    hcomp_map_encode_stats(&b, "{\"tasks\": 1}");
    put("fuzz_mapfile", "records", b.p, b.len);
    b.p[HCOMP_MAP_HEADER_SIZE + 40] ^= 0x55;     /* damage the first record */
    put("fuzz_mapfile", "damaged", b.p, b.len);
    hcomp_bytes_free(&b);

    nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- codecs ------------------------------------------------------------------------ */

/* fuzz_codecs input: byte 0 = codec id (bits 0-2, + 8 with bit 7) | 8 for a round trip |
 * level (bits 4-6);
 * decode: bytes 1-2 the expected length (little-endian), then the stream;
 * round trip: the data from byte 1. */
static void codecs(void)
{
    unsigned char raw[3000], words[3000];
    fill_doubles(raw, sizeof(raw));
    fill_words(words, sizeof(words), 5);
    for (unsigned c = 0; c < HCOMP_CODEC_COUNT; c++) {
        const hcomp_codec *k = hcomp_codec_by_id(c);
        char name[64];
        for (int d = 0; d < 2; d++) {
            const unsigned char *src = d ? raw : words;
            size_t n = d ? 1000 : sizeof(words);
            size_t cap = k->bound(n);
            unsigned char *in = malloc(3 + cap);
            size_t got;
            if (k->compress(src, n, in + 3, cap, &got, HCOMP_LEVEL_DEFAULT) != HCOMP_OK)
                die("compress", k->name);
            in[0] = (unsigned char) ((c & 7) | (c & 8 ? 0x80 : 0));
            in[1] = (unsigned char) n;
            in[2] = (unsigned char) (n >> 8);
            snprintf(name, sizeof(name), "decode-%s-%d", k->name, d);
            put("fuzz_codecs", name, in, 3 + got);
            free(in);
        }
        /* c-blosc2 chunks with each filter pipeline hcomp writes (8-byte elements, a tail
         * past the last whole one for the delta filters): the untyped decode takes them */
        for (int s = HCOMP_SHUFFLE_BYTE; k->id >= HCOMP_CODEC_BLOSC2_LZ4 && s <= HCOMP_SHUFFLE_DELTA; s++) {
            static const char *const sname[] = {"none", "byte", "bit", "bytedelta", "delta"};
            size_t n = 1003, cap = k->bound(n), got;
            unsigned char *in = malloc(3 + cap);
            if (k->compress_typed(raw, n, in + 3, cap, &got, HCOMP_LEVEL_DEFAULT, 8, s) != HCOMP_OK)
                die("compress_typed", k->name);
            in[0] = (unsigned char) ((c & 7) | (c & 8 ? 0x80 : 0));
            in[1] = (unsigned char) n;
            in[2] = (unsigned char) (n >> 8);
            snprintf(name, sizeof(name), "decode-%s-%s", k->name, sname[s]);
            put("fuzz_codecs", name, in, 3 + got);
            free(in);
        }
        unsigned char rt[301];
        rt[0] = (unsigned char) ((c & 7) | 8 | ((c & 7) << 4) | (c & 8 ? 0x80 : 0));
        memcpy(rt + 1, c >= HCOMP_CODEC_BLOSC_LZ4 ? raw : words, 300);
        snprintf(name, sizeof(name), "roundtrip-%s", k->name);
        put("fuzz_codecs", name, rt, sizeof(rt));
    }
}

/* ---- seeds -------------------------------------------------------------------------- */

static void seeds(void)
{
    /* the embedded default seed with two rows per model (the whole is 170 KB, too
     * large an input for mutation to be effective; the rows all look alike) */
    char *text = hcomp_seed_default_text();
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (doc == NULL)
        die("the default seed is not JSON", jerr.text);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(doc, "models"), i, m) {
        json_t *rows = json_object_get(m, "rows");
        while (json_array_size(rows) > 2)
            json_array_remove(rows, json_array_size(rows) - 1);
    }
    json_object_set_new(doc, "weights", json_pack("{s:f,s:f,s:f}", "compress", 0.3,
                                                  "decompress", 0.3, "ratio", 0.4));
    char *small = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
    json_decref(doc);
    free(text);
    hcomp_predictor *p;
    hcomp_error err;
    check(hcomp_seed_parse(small, strlen(small), "corpus", &p, &err), &err, "seed_parse");
    put_text("fuzz_seed", "default-trimmed", small);
    free(small);
    /* as the writer writes it, with a system signature and an observation */
    hcomp_tier_signature t = {.name = "ram", .path = "/dev/shm/hcomp-0", .node = "vm",
                              .node_local = 1, .write_Bps = 1.5e9, .read_Bps = 3.5e9,
                              .latency_s = 1.1e-6, .free_bytes = 25259167744ull};
    hcomp_predictor_set_tiers(p, &t, 1);
    hcomp_features f = {.dtype = HCOMP_DTYPE_DOUBLE, .dist = HCOMP_DIST_NORMAL, .entropy = 6.5,
                        .probe_ratio = 1.2, .sampled = 24576};
    hcomp_predictor_observe(p, &f, HCOMP_CODEC_ZSTD, 1, 1 << 20, 600000, 0.004, 0.001);
    char *dump = hcomp_seed_dump(p);
    /* keep only the first two models of the dump: small */
    json_t *d = json_loads(dump, 0, &jerr);
    json_t *models = json_object_get(d, "models");
    while (json_array_size(models) > 3)
        json_array_remove(models, 0);
    char *dump2 = json_dumps(d, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
    put_text("fuzz_seed", "saved", dump2);
    free(dump2);
    json_decref(d);
    free(dump);
    hcomp_predictor_free(p);
    put_text("fuzz_seed", "minimal",
             "{\"format\":\"hcomp-seed\",\"version\":1,\"features\":[\"1\",\"entropy\","
             "\"log_probe_ratio\",\"dtype_int32\",\"dtype_int64\",\"dtype_float\",\"dtype_double\","
             "\"dist_normal\",\"dist_exponential\",\"dist_gamma\"],\"targets\":[\"log_ratio\","
             "\"log_comp_Bps\",\"log_decomp_Bps\"],\"row_fields\":[\"dtype\",\"dist\",\"entropy\","
             "\"probe_ratio\",\"bytes\",\"ratio\",\"comp_Bps\",\"decomp_Bps\",\"source\"],"
             "\"models\":[{\"codec\":\"lz4\",\"level\":1,\"coef\":{"
             "\"log_ratio\":[0.1,0,0,0,0,0,0,0,0,0],\"log_comp_Bps\":[20,0,0,0,0,0,0,0,0,0],"
             "\"log_decomp_Bps\":[21,0,0,0,0,0,0,0,0,0]},\"rows\":[[\"int32\",\"gamma\",2.1,3.2,"
             "65536,4.1,300000000.0,null,\"obs\"]]}]}");
    put_text("fuzz_seed", "version2", "{\"format\":\"hcomp-seed\",\"version\":2}");
}

/* ---- tier configurations ------------------------------------------------------------ */

static void tier_configs(void)
{
    put_text("fuzz_tier_config", "readme",
             "{\n  \"version\": 1,\n  \"tiers\": [\n"
             "    {\"name\": \"ram\",  \"path\": \"/dev/shm/hcomp-$UID\", \"capacity\": \"1GiB\", "
             "\"private\": true,\n     \"bandwidth\": \"10GB/s\", \"latency\": \"1us\", "
             "\"scope\": \"node-local\"},\n"
             "    {\"name\": \"nvme\", \"path\": \"/local/nvme/$USER\", \"capacity\": \"200GiB\",\n"
             "     \"bandwidth\": \"2GB/s\", \"latency\": \"20us\", \"scope\": \"node-local\"},\n"
             "    {\"name\": \"pfs\",  \"path\": \"@filedir\", \"capacity\": \"unlimited\", "
             "\"scope\": \"shared\"}\n  ]\n}\n");
    put_text("fuzz_tier_config", "emulate",
             "{\"version\": 1, \"tiers\": [{\"name\": \"slow\", \"path\": \"${HOME}/tiers/x\", "
             "\"capacity\": 1048576, \"bandwidth\": 250000000.5, \"latency\": \"4.16ms\", "
             "\"emulate\": true, \"private\": false}]}");
    put_text("fuzz_tier_config", "minimal", "{\"tiers\": [{\"name\": \"a\", \"path\": \"/\"}]}");
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: corpus_gen OUTDIR", NULL);
    outdir = argv[1];
    setenv("HCOMP_NODE", "fuzz", 1);
    piece_headers();
    mapping_files();
    codecs();
    seeds();
    tier_configs();
    return 0;
}
