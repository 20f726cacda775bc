/* The statistics: the engine's STATS record generated from engine/stats.h's lists writes
 * the bytes it always wrote (docs/FORMAT.md) and reads the records of the golden files;
 * hcomp_stat_path fills only as much of hcomp_stats as the caller's build knows (a caller
 * built against an older, smaller struct gets its prefix: run under the ASan build too,
 * whose buffers here are exactly that size); the version macros agree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file_fixture.h"
#include "engine/stats.h"
#include "file/mapfile.h"
#include "file/tools.h"

/* ---- the STATS record --------------------------------------------------------------- */

/* What hcomp_stats_json wrote for stats_sample() before its lists were X-macros (captured
 * from that code): the record's bytes must never change for the same statistics. */
static const char frozen_record[] =
    "{\"tasks\":11,\"analyses\":12,\"analyses_shared\":13,\"plans\":14,\"predictions\":15,"
    "\"pieces\":16,\"bytes_in\":17,\"drained_bytes\":18,\"sync_moved_bytes\":19,"
    "\"flush_behind_bytes\":20,\"readahead_bytes\":21,\"block_advice_bytes\":22,"
    "\"advice_cached_bytes\":23,\"write_seconds\":0.5,\"analysis_seconds\":0.125,"
    "\"prediction_seconds\":9.9999999999999995e-7,\"placement_seconds\":0.10000000000000001,"
    "\"compression_seconds\":2.25,\"io_seconds\":3.0,\"feedback_seconds\":0.33333333333333331,"
    "\"read_feedback_seconds\":0.0,\"tiers\":[{\"name\":\"fast\",\"raw\":100,\"stored\":50,"
    "\"pieces\":3},{\"name\":\"slow \\\"quoted\\\"\",\"raw\":200,\"stored\":150,\"pieces\":4}],"
    "\"codecs\":{\"none\":{\"raw\":7,\"stored\":23,\"pieces\":1},\"zstd\":{\"raw\":1000,"
    "\"stored\":400,\"pieces\":5}}}";

static void stats_sample(hcomp_file_stats *s, hcomp_tier_config *cfg)
{
    memset(s, 0, sizeof(*s));
    s->tasks = 11, s->analyses = 12, s->analyses_shared = 13, s->plans = 14;
    s->predictions = 15, s->pieces = 16, s->bytes_in = 17, s->drained_bytes = 18;
    s->sync_moved_bytes = 19, s->flush_behind_bytes = 20, s->readahead_bytes = 21;
    s->block_advice_bytes = 22, s->advice_cached_bytes = 23;
    s->t_write = 0.5, s->t_analysis = 0.125, s->t_prediction = 1e-6, s->t_placement = 0.1;
    s->t_compression = 2.25, s->t_io = 3.0, s->t_feedback = 1.0 / 3.0, s->t_read_feedback = 0.0;
    s->tier_raw[0] = 100, s->tier_stored[0] = 50, s->tier_pieces[0] = 3;
    s->tier_raw[1] = 200, s->tier_stored[1] = 150, s->tier_pieces[1] = 4;
    s->codec_raw[HCOMP_CODEC_ZSTD] = 1000, s->codec_stored[HCOMP_CODEC_ZSTD] = 400;
    s->codec_pieces[HCOMP_CODEC_ZSTD] = 5;
    s->codec_raw[HCOMP_CODEC_NONE] = 7, s->codec_stored[HCOMP_CODEC_NONE] = 23;
    s->codec_pieces[HCOMP_CODEC_NONE] = 1;
    /* counters the record does not keep change nothing in it */
    s->reads = 99, s->drain_errors = 98, s->t_read = 9.5, s->reclaim_ran = 1;
    memset(cfg, 0, sizeof(*cfg));
    cfg->ntiers = 2;
    strcpy(cfg->tier[0].name, "fast");
    strcpy(cfg->tier[1].name, "slow \"quoted\"");
}

static void test_record_bytes_unchanged(void **state)
{
    (void) state;
    hcomp_file_stats s;
    hcomp_tier_config cfg;
    stats_sample(&s, &cfg);
    char *json = hcomp_stats_json(&s, &cfg);
    assert_non_null(json);
    assert_string_equal(json, frozen_record);
    free(json);
}

/* Read back, every recorded statistic is what was written, and written again the same bytes */
static void test_record_read_back(void **state)
{
    (void) state;
    hcomp_file_stats want, got;
    hcomp_tier_config cfg;
    stats_sample(&want, &cfg);
    char names[HCOMP_MAX_TIERS][HCOMP_TIER_NAME_MAX + 1];
    int ntiers = -1;
    assert_int_equal(hcomp_stats_from_json(frozen_record, strlen(frozen_record), &got, names,
                                           &ntiers), 0);
    assert_int_equal(ntiers, 2);
    assert_string_equal(names[0], "fast");
    assert_string_equal(names[1], "slow \"quoted\"");
#define SAME_COUNTER(name, desc) assert_true(got.name == want.name);
    HCOMP_RECORDED_COUNTERS(SAME_COUNTER)
#undef SAME_COUNTER
#define SAME_TIME(name, desc) assert_true(got.t_##name == want.t_##name);
    HCOMP_RECORDED_TIMES(SAME_TIME)
#undef SAME_TIME
#define SAME_PART(name, desc)                                                         \
    assert_memory_equal(got.tier_##name, want.tier_##name, sizeof(got.tier_##name));   \
    assert_memory_equal(got.codec_##name, want.codec_##name, sizeof(got.codec_##name));
    HCOMP_RECORDED_PARTS(SAME_PART)
#undef SAME_PART
    assert_true(got.reads == 0 && got.t_read == 0.0);     /* not recorded: not read */
    char *again = hcomp_stats_json(&got, &cfg);
    assert_string_equal(again, frozen_record);
    free(again);
    assert_int_equal(hcomp_stats_from_json("[1]", 3, &got, NULL, NULL), -1);
    assert_int_equal(hcomp_stats_from_json("{\"tasks\":", 9, &got, NULL, NULL), -1);
}

/* One STATS record of a golden file: every key it has reads back as it was written; one
 * with every key of today's record is written again byte for byte. */
static int golden_records, golden_whole;

static void check_golden_record(const char *where, const char *json, size_t len)
{
    hcomp_file_stats s;
    char names[HCOMP_MAX_TIERS][HCOMP_TIER_NAME_MAX + 1];
    int ntiers;
    if (hcomp_stats_from_json(json, len, &s, names, &ntiers) != 0)
        fail_msg("%s: a STATS record that does not read: %.*s", where, (int) len, json);
    hcomp_tier_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ntiers = ntiers;
    for (int t = 0; t < ntiers; t++)
        memcpy(cfg.tier[t].name, names[t], sizeof(names[t]));
    char *again = hcomp_stats_json(&s, &cfg);
    json_t *orig = json_loadb(json, len, 0, NULL), *mine = json_loads(again, 0, NULL);
    assert_non_null(orig);
    assert_non_null(mine);
    const char *key;
    json_t *v;
    json_object_foreach(orig, key, v) {
        if (!json_equal(v, json_object_get(mine, key)))
            fail_msg("%s: key %s of %.*s reads back as %s", where, key, (int) len, json, again);
    }
    golden_records++;
    if (json_object_size(orig) == json_object_size(mine)) {
        golden_whole++;
        if (strlen(again) != len || memcmp(again, json, len) != 0)
            fail_msg("%s: written again as %s, not %.*s", where, again, (int) len, json);
    }
    json_decref(orig);
    json_decref(mine);
    free(again);
}

static int scan_golden(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) ftw;
    size_t n = strlen(path);
    size_t skip = n > 3 && strcmp(path + n - 3, ".hc") == 0 ? HCOMP_MAP_HEADER_SIZE
                  : n > 4 && strcmp(path + n - 4, ".log") == 0 ? HCOMP_WLOG_HEADER_SIZE : 0;
    if (flag != FTW_F || skip == 0 || (size_t) sb->st_size <= skip)
        return 0;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *buf = malloc((size_t) sb->st_size);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t) sb->st_size, f), (size_t) sb->st_size);
    fclose(f);
    size_t pos = skip;
    uint64_t skipped = 0;
    hcomp_map_record rec;
    int r;
    while (pos < (size_t) sb->st_size &&
           (r = hcomp_map_next(buf, (size_t) sb->st_size, &pos, &rec, &skipped)) != HCOMP_MAP_INCOMPLETE)
        if (r == HCOMP_MAP_RECORD && rec.type == HCOMP_REC_STATS)
            check_golden_record(path, rec.u.stats.json, rec.u.stats.len);
    free(buf);
    return 0;
}

static void test_golden_records_read(void **state)
{
    (void) state;
    golden_records = golden_whole = 0;
    assert_int_equal(nftw(HCOMP_TEST_DATA, scan_golden, 16, FTW_PHYS), 0);
    print_message("%d STATS records in the golden files, %d of today's keys (byte-equal)\n",
                  golden_records, golden_whole);
    assert_true(golden_records >= 5);
    assert_true(golden_whole >= 1);       /* the format-3 goldens are today's records */
}

/* ---- hcomp_stats and its size -------------------------------------------------------- */

static void write_sample_file(fixture *fx, char *path, size_t n)
{
    file_path(fx, "stats.hc", path, n);
    hcomp_file *f;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, fx->opts, &f,
                                     &err), HCOMP_OK);
    size_t len = 300 * 1024;
    unsigned char *buf = malloc(len);
    assert_non_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char) (i / 1000);
    assert_int_equal(hcomp_file_pwrite(f, buf, len, 4096, &err), HCOMP_OK);
    free(buf);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
}

/* An older caller's struct ended before the tiers: it gets that prefix, nothing past it
 * (the buffer is exactly that size: ASan would see an overflow), and its size back. */
static void test_stats_prefix_only(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    write_sample_file(fx, path, sizeof(path));
    hcomp_error err;
    hcomp_stats full;
    assert_int_equal(hcomp_stat_path(path, &full, &err), HCOMP_OK);
    assert_int_equal(full.size, sizeof(full));
    assert_int_equal(full.logical_size, 4096 + 300 * 1024);
    assert_int_equal(full.ncodecs, HCOMP_CODEC_COUNT);
    assert_true(full.codec[HCOMP_CODEC_LZ4].pieces == full.pieces);

    const size_t sizes[] = {sizeof(size_t), offsetof(hcomp_stats, pieces),
                            offsetof(hcomp_stats, ntiers), offsetof(hcomp_stats, tier[1]),
                            offsetof(hcomp_stats, codec), sizeof(hcomp_stats) - 1};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        unsigned char *old = malloc(n + 64);
        assert_non_null(old);
        memset(old, 0xA5, n + 64);
        assert_int_equal(hcomp_stat_path_sized(path, (hcomp_stats *) old, n, &err), HCOMP_OK);
        for (size_t i = n; i < n + 64; i++)
            assert_int_equal(old[i], 0xA5);         /* nothing past the caller's size */
        size_t said;
        memcpy(&said, old, sizeof(said));
        assert_int_equal(said, n);
        /* the prefix is the full struct's, but for the size field */
        assert_memory_equal(old + sizeof(size_t), (unsigned char *) &full + sizeof(size_t),
                            n - sizeof(size_t));
        free(old);
        unsigned char *exact = malloc(n);           /* ASan: no byte written past n */
        assert_non_null(exact);
        assert_int_equal(hcomp_stat_path_sized(path, (hcomp_stats *) exact, n, &err), HCOMP_OK);
        free(exact);
    }
    /* a caller built against a later, larger struct: its tail zeroed, the size says so */
    size_t big = sizeof(hcomp_stats) + 256;
    unsigned char *newer = malloc(big);
    assert_non_null(newer);
    memset(newer, 0xA5, big);
    assert_int_equal(hcomp_stat_path_sized(path, (hcomp_stats *) newer, big, &err), HCOMP_OK);
    assert_int_equal(((hcomp_stats *) newer)->size, sizeof(hcomp_stats));
    for (size_t i = sizeof(hcomp_stats); i < big; i++)
        assert_int_equal(newer[i], 0);
    free(newer);
    /* too small for even the size field */
    uint32_t tiny = 0x5A5A5A5A;
    assert_int_equal(hcomp_stat_path_sized(path, (hcomp_stats *) &tiny, sizeof(tiny), &err),
                     HCOMP_E_INVAL);
    assert_int_equal(tiny, 0x5A5A5A5A);
}

/* hcomp info's "recorded by its writers": the STATS records of a file, summed
 * (hcomp_file_facts_path) */
static void test_recorded_stats(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    /* the last close would reclaim the overwritten bytes, its new log keeping only the last
     * writer's record: the records' sum is what is asked here */
    set_opt(fx, "hcomp_reclaim", "never");
    write_sample_file(fx, path, sizeof(path));
    write_sample_file(fx, path, sizeof(path));      /* a second writer, over the same bytes */
    hcomp_file_facts facts;
    hcomp_error err;
    assert_int_equal(hcomp_file_facts_path(path, &facts, &err), HCOMP_OK);
    assert_int_equal(facts.stats_records, 2);
    assert_int_equal(facts.version, 3);
    const hcomp_file_stats sum = facts.recorded;
    assert_int_equal(sum.tasks, 2);
    assert_int_equal(sum.bytes_in, 2 * 300 * 1024);
    assert_true(sum.pieces >= 2 && sum.t_write > 0.0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    hcomp_stats_print_recorded(out, "  ", &sum);
    fclose(out);
    assert_non_null(strstr(text, "  bytes_in "));
    assert_non_null(strstr(text, " 614400    logical bytes written\n"));
    assert_non_null(strstr(text, "read_feedback_seconds"));
    free(text);
}

/* ---- the version --------------------------------------------------------------------- */

static void test_version(void **state)
{
    (void) state;
    char s[32];
    snprintf(s, sizeof(s), "%d.%d.%d", HCOMP_VERSION_MAJOR, HCOMP_VERSION_MINOR,
             HCOMP_VERSION_PATCH);
    assert_string_equal(s, HCOMP_VERSION_STRING);
    assert_string_equal(HCOMP_VERSION_STRING, PACKAGE_VERSION);    /* configure.ac's */
    assert_int_equal(HCOMP_VERSION_NUMBER, HCOMP_VERSION_MAJOR * 10000 +
                                           HCOMP_VERSION_MINOR * 100 + HCOMP_VERSION_PATCH);
    assert_int_equal(hcomp_version_number(), HCOMP_VERSION_NUMBER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_bytes_unchanged),
        cmocka_unit_test(test_record_read_back),
        cmocka_unit_test(test_golden_records_read),
        cmocka_unit_test_setup_teardown(test_stats_prefix_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recorded_stats, setup, teardown),
        cmocka_unit_test(test_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
