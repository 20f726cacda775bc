/* A program built against hcomp-api-1/, the public headers as they were frozen at public
 * API 1 (hcomp 0.2.0), and nothing else of hcomp (no include/, no internal header), run
 * on today's shared libhcomp: what it calls must still exist and mean the same, and
 * hcomp_stat_path must fill its hcomp_stats, which later libraries have grown (more
 * codecs, more counters), correctly and no further than that struct's end.
 *
 *   abi_api_1 [DIR]     (a scratch directory is made in DIR, default /tmp, and removed)
 *
 * Prints "abi_api_1: OK" and exits 0, or says what differs and exits 1. Built and run by
 * `make check` (Makefile.am), also in the sanitizer build. */
#include <hcomp.h>      /* from tests/abi-api/hcomp-api-1/: the frozen copy */

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if HCOMP_VERSION_NUMBER != 200
#error "built against the wrong hcomp.h: this test is for the frozen copy of API 1 (0.2.0)"
#endif

static int failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "abi_api_1: %s:%d: ", __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
            failures++;                                                           \
        }                                                                         \
    } while (0)

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st;
    (void) ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Guarded so that a later library writing past this build's struct is seen even
 * without a sanitizer. */
struct guarded_stats {
    hcomp_stats st;
    unsigned char guard[4096];
};

int main(int argc, char **argv)
{
    char base[PATH_MAX - 64], tiers[PATH_MAX], config[PATH_MAX], file[PATH_MAX];
    snprintf(base, sizeof base, "%s/hcomp-abi-api-XXXXXX", argc > 1 ? argv[1] : "/tmp");
    if (mkdtemp(base) == NULL) {
        perror("abi_api_1: mkdtemp");
        return 1;
    }
    snprintf(tiers, sizeof tiers, "%s/tier", base);
    snprintf(config, sizeof config, "%s/tiers.json", base);
    snprintf(file, sizeof file, "%s/data.hc", base);
    mkdir(tiers, 0700);
    FILE *cf = fopen(config, "w");
    if (cf == NULL) {
        perror("abi_api_1: tiers.json");
        return 1;
    }
    fprintf(cf, "{\"version\": 1, \"tiers\": [{\"name\": \"disk\", \"path\": \"%s\", "
            "\"capacity\": \"unlimited\", \"measure\": false}]}\n", tiers);
    fclose(cf);

    /* the library is as new as this header, or newer within its major version */
    int lib = hcomp_version_number();
    CHECK(lib >= HCOMP_VERSION_NUMBER && lib / 10000 == HCOMP_VERSION_MAJOR &&
          (HCOMP_VERSION_MAJOR > 0 || lib / 100 == HCOMP_VERSION_NUMBER / 100),
          "library version %d, header %d (%s)", lib, HCOMP_VERSION_NUMBER, HCOMP_VERSION_STRING);

    /* write a file of two codecs' pieces through the public API */
    hcomp_error err;
    hcomp_options *opts = hcomp_options_new();
    CHECK(opts != NULL, "hcomp_options_new");
    if (opts == NULL)
        return 1;
    CHECK(hcomp_options_set(opts, "hcomp_config", config, &err) == HCOMP_OK, "config: %s", err.msg);
    CHECK(hcomp_options_set(opts, "hcomp_piece_size", "65536", &err) == HCOMP_OK, "piece: %s",
          err.msg);
    const size_t part = 256 * 1024;
    unsigned char *buf = malloc(2 * part), *back = malloc(2 * part);
    if (buf == NULL || back == NULL)
        return 1;
    for (size_t i = 0; i < 2 * part; i++)
        buf[i] = (unsigned char) (i / 512);
    hcomp_file *f = NULL;
    const char *codec[2] = {"lz4", "zstd"};
    for (int k = 0; k < 2 && failures == 0; k++) {
        CHECK(hcomp_options_set(opts, "hcomp_codec", codec[k], &err) == HCOMP_OK, "%s", err.msg);
        CHECK(hcomp_file_open(file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, opts, &f, &err) ==
              HCOMP_OK, "open: %s", err.msg);
        if (f == NULL)
            break;
        CHECK(hcomp_file_pwrite(f, buf + k * part, part, k * part, &err) == HCOMP_OK,
              "write: %s", err.msg);
        CHECK(hcomp_file_close(f, &err) == HCOMP_OK, "close: %s", err.msg);
        f = NULL;
    }
    uint64_t nread = 0;
    if (failures == 0 && hcomp_file_open(file, HCOMP_O_RDONLY, 0, 1, opts, &f, &err) == HCOMP_OK) {
        CHECK(hcomp_file_pread(f, back, 2 * part, 0, &nread, &err) == HCOMP_OK, "%s", err.msg);
        CHECK(nread == 2 * part && memcmp(back, buf, 2 * part) == 0, "read back differs");
        hcomp_file_close(f, NULL);
    }

    /* the statistics, into this build's struct */
    struct guarded_stats *g = malloc(sizeof *g);
    if (g == NULL)
        return 1;
    memset(g, 0xA5, sizeof *g);
    CHECK(hcomp_stat_path(file, &g->st, &err) == HCOMP_OK, "stat: %s", err.msg);
    for (size_t i = 0; i < sizeof g->guard; i++)
        if (g->guard[i] != 0xA5) {
            CHECK(0, "hcomp_stat_path wrote byte %zu past the caller's struct", i);
            break;
        }
    hcomp_stats *st = &g->st;
    CHECK(st->size == sizeof(hcomp_stats), "size %zu, want %zu", st->size, sizeof(hcomp_stats));
    CHECK(st->logical_size == 2 * part, "logical_size %llu", (unsigned long long) st->logical_size);
    CHECK(st->live_bytes == 2 * part, "live_bytes %llu", (unsigned long long) st->live_bytes);
    CHECK(st->pieces >= 2, "pieces %llu", (unsigned long long) st->pieces);
    CHECK(st->ntiers == 1 && strcmp(st->tier[0].name, "disk") == 0 &&
          strcmp(st->tier[0].dir, tiers) == 0, "tiers: %zu, \"%s\" at %s", st->ntiers,
          st->tier[0].name, st->tier[0].dir);
    CHECK(st->tier[0].raw_bytes == 2 * part && st->tier[0].pieces == st->pieces &&
          st->tier[0].stored_bytes == st->stored_bytes, "the tier's counters");
    CHECK(st->ncodecs >= HCOMP_CODEC_BLOSC_ZSTD + 1 && st->ncodecs <= HCOMP_STATS_MAX_CODECS,
          "ncodecs %zu", st->ncodecs);
    uint64_t raw = 0, stored = 0, pieces = 0;
    for (size_t c = 0; c < st->ncodecs; c++) {
        raw += st->codec[c].raw_bytes;
        stored += st->codec[c].stored_bytes;
        pieces += st->codec[c].pieces;
        const hcomp_codec *cd = hcomp_codec_by_id((unsigned) c);
        CHECK(st->codec[c].pieces == 0 || cd != NULL, "codec %zu has pieces and no name", c);
    }
    CHECK(raw == st->live_bytes && stored == st->stored_bytes && pieces == st->pieces,
          "the codecs' counters add up to %llu, %llu, %llu", (unsigned long long) raw,
          (unsigned long long) stored, (unsigned long long) pieces);
    CHECK(st->codec[HCOMP_CODEC_LZ4].raw_bytes == part && st->codec[HCOMP_CODEC_ZSTD].raw_bytes == part,
          "lz4 %llu, zstd %llu bytes", (unsigned long long) st->codec[HCOMP_CODEC_LZ4].raw_bytes,
          (unsigned long long) st->codec[HCOMP_CODEC_ZSTD].raw_bytes);
#define PRINT_COUNTER(name, desc)                                                      \
    printf("abi_api_1: %-13s %12llu  (%s)\n", #name, (unsigned long long) st->name, desc);
    HCOMP_STATS_FILE_COUNTERS(PRINT_COUNTER)
#undef PRINT_COUNTER

    /* the library's own kinds, and delete */
    int kind = -1;
    CHECK(hcomp_file_kind(file, &kind, &err) == HCOMP_OK && kind == HCOMP_FILE_KIND_HCOMP,
          "kind %d (%s)", kind, hcomp_file_kind_name(kind));
    CHECK(hcomp_file_delete(file, &err) == HCOMP_OK, "delete: %s", err.msg);

    free(g);
    free(buf);
    free(back);
    hcomp_options_free(opts);
    nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (failures) {
        fprintf(stderr, "abi_api_1: %d checks failed\n", failures);
        return 1;
    }
    printf("abi_api_1: OK (built against hcomp %s, ran on %d)\n", HCOMP_VERSION_STRING, lib);
    return 0;
}
