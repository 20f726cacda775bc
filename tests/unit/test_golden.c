/* Files users already have keep reading: the version-1 golden files of
 * tests/unit/data/golden-v1 (made once, tests/unit/golden/make_golden_v1.c) read back byte
 * for byte, check clean with fsck, and take new writes, a reclaim and a compaction. Their
 * segment paths are recorded absolute, so they are copied to GOLDEN_V1_DIR first.
 *   log.hc       a log of plain writes with an overwritten piece still recorded
 *   snapshot.hc  the same after hcomp compact: a log rewritten to its live state
 *   blosc.hc     the same writes with the c-blosc codecs (bit-shuffled chunks, filter 4)
 * and the files of later versions (golden-v2, golden-v3), among them blosc2.hc and
 * blosc2-bit.hc: c-blosc2 chunks with bytedelta, delta, bitshuffle and byte shuffle. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hcomp.h"
#include "file/tools.h"
#include "file/file_internal.h"
#include "engine/filter.h"
#include "golden/golden_v1.h"

/* Copy the regular files of src (and of its subdirectories, one level) to dst. */
static void copy_tree(const char *src, const char *dst, int depth)
{
    assert_true(mkdir(dst, 0755) == 0 || (depth == 0 && errno == EEXIST));
    DIR *d = opendir(src);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char s[PATH_MAX], t[PATH_MAX];
        snprintf(s, sizeof(s), "%s/%s", src, e->d_name);
        snprintf(t, sizeof(t), "%s/%s", dst, e->d_name);
        struct stat st;
        assert_int_equal(lstat(s, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            assert_true(depth < 2);
            copy_tree(s, t, depth + 1);
            continue;
        }
        int in = open(s, O_RDONLY), out = open(t, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(in >= 0 && out >= 0);
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof(buf))) > 0)
            assert_int_equal(write(out, buf, (size_t) n), n);
        assert_int_equal(n, 0);
        close(in);
        close(out);
    }
    closedir(d);
}

static int setup(void **state)
{
    (void) state;
    struct stat st;
    if (lstat(GOLDEN_V1_DIR, &st) == 0)
        assert_int_equal(t_rm_tree(GOLDEN_V1_DIR), 0);
    copy_tree(HCOMP_TEST_DATA "/golden-v1", GOLDEN_V1_DIR, 0);
    /* the version-2 files were made in the same directory (their paths are recorded) */
    copy_tree(HCOMP_TEST_DATA "/golden-v2", GOLDEN_V1_DIR, 0);
    copy_tree(HCOMP_TEST_DATA "/golden-v3", GOLDEN_V1_DIR, 0);
    char config[PATH_MAX];
    snprintf(config, sizeof(config), "%s/tiers.json", GOLDEN_V1_DIR);
    FILE *c = fopen(config, "w");
    assert_non_null(c);
    fprintf(c, "{\"version\": 1, \"tiers\": [{\"name\": \"filedir\", \"path\": \"@filedir\", "
               "\"capacity\": \"unlimited\", \"scope\": \"shared\"}]}\n");
    assert_int_equal(fclose(c), 0);
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    assert_int_equal(t_rm_tree(GOLDEN_V1_DIR), 0);
    return 0;
}

static void path_of(const char *name, char *out)
{
    snprintf(out, PATH_MAX, "%s/%s", GOLDEN_V1_DIR, name);
}

/* path opened read-only with the embedded tier configuration (reads need none). */
static hcomp_file *open_read(const char *path)
{
    hcomp_options *o = hcomp_options_new();
    hcomp_error e;
    assert_int_equal(hcomp_options_set(o, "hcomp_config", "embedded", &e), HCOMP_OK);
    hcomp_file *f;
    if (hcomp_file_open(path, HCOMP_O_RDONLY, 0, 1, o, &f, &e) != HCOMP_OK)
        fail_msg("%s: %s", path, e.msg);
    hcomp_options_free(o);
    return f;
}

/* Every byte, then a few ranges across pieces and holes, against the expected content. */
static void expect_golden(const char *path, const unsigned char *want)
{
    hcomp_error e;
    hcomp_file *f = open_read(path);
    uint64_t size = 0;
    assert_int_equal(hcomp_file_size(f, &size, &e), HCOMP_OK);
    assert_int_equal(size, GOLDEN_V1_SIZE);
    unsigned char *got = malloc(GOLDEN_V1_SIZE);
    assert_non_null(got);
    static const uint32_t ranges[][2] = {
        {0, GOLDEN_V1_SIZE}, {9990, 30}, {29990, 40000}, {65530, 40000}, {245000, 20000},
        {259999, 7}, {299990, 10}};
    for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
        uint64_t n = 0;
        memset(got, 0xEE, GOLDEN_V1_SIZE);
        if (hcomp_file_pread(f, got, ranges[r][1], ranges[r][0], &n, &e) != HCOMP_OK)
            fail_msg("%s: read %u at %u: %s", path, ranges[r][1], ranges[r][0], e.msg);
        assert_int_equal(n, ranges[r][1]);
        if (memcmp(got, want + ranges[r][0], ranges[r][1]) != 0)
            fail_msg("%s: the %u bytes at %u differ", path, ranges[r][1], ranges[r][0]);
    }
    free(got);
    assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
    hcomp_fsck_result res;
    assert_int_equal(hcomp_fsck(path, NULL, 0, NULL, &res, &e), HCOMP_OK);
    if (res.problems || res.bad_pieces || res.damaged_bytes || res.orphan_files)
        fail_msg("%s: fsck finds problems", path);
}

static void test_golden_read(void **state)
{
    (void) state;
    unsigned char *want = malloc(GOLDEN_V1_SIZE);
    assert_non_null(want);
    golden_v1_expected(want);
    char path[PATH_MAX];
    path_of("log.hc", path);
    expect_golden(path, want);
    path_of("snapshot.hc", path);
    expect_golden(path, want);
    path_of("blosc.hc", path);
    expect_golden(path, want);
    path_of("framed.hc", path);
    expect_golden(path, want);
    path_of("framed-blosc.hc", path);
    expect_golden(path, want);
    path_of("wlogs.hc", path);
    expect_golden(path, want);
    path_of("folded.hc", path);
    expect_golden(path, want);
    path_of("blosc2.hc", path);
    expect_golden(path, want);
    path_of("blosc2-bit.hc", path);
    expect_golden(path, want);
    free(want);
}

/* 40000 bytes of text written at offset 1000 by today's library, nothing reclaimed. */
static void write_text_at_1000(const char *path, const char *config)
{
    hcomp_error e;
    hcomp_file *f;
    hcomp_options *o = hcomp_options_new();
    assert_int_equal(hcomp_options_set(o, "hcomp_config", config, &e), HCOMP_OK);
    assert_int_equal(hcomp_options_set(o, "hcomp_reclaim", "never", &e), HCOMP_OK);
    if (hcomp_file_open(path, HCOMP_O_RDWR, 0, 1, o, &f, &e) != HCOMP_OK)
        fail_msg("%s: %s", path, e.msg);
    hcomp_options_free(o);
    unsigned char text[40000];
    for (size_t i = 0; i < sizeof(text); i++)
        text[i] = (unsigned char) "abcabd\n"[i % 7];
    assert_int_equal(hcomp_file_pwrite(f, text, sizeof(text), 1000, &e), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
}

/* The files are what they stand for: version 1 unframed, version 2 framed in 8 KiB blocks
 * (pieces compressed and stored as they are); what a version-1 file gets written stays
 * unframed, what a version-2 one gets is framed. */
static void test_golden_versions(void **state)
{
    (void) state;
    static const struct { const char *name; uint32_t version; unsigned frame; } files[] = {
        {"log.hc", 1, 0}, {"snapshot.hc", 1, 0}, {"blosc.hc", 1, 0},
        {"framed.hc", 2, 2}, {"framed-blosc.hc", 2, 2}};
    char config[PATH_MAX];
    snprintf(config, sizeof(config), "%s/tiers.json", GOLDEN_V1_DIR);
    for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
        char path[PATH_MAX];
        path_of(files[k].name, path);
        hcomp_error e;
        hcomp_file *f = open_read(path);
        assert_int_equal(f->hdr.version, files[k].version);
        int coded = 0, as_is = 0;
        for (uint32_t i = 0; i < f->npieces; i++) {
            assert_int_equal(f->pieces[i].frame, files[k].frame);
            coded += f->pieces[i].codec != HCOMP_CODEC_NONE;
            as_is += f->pieces[i].codec == HCOMP_CODEC_NONE;
        }
        assert_true(coded > 0 && as_is > 0);
        uint32_t had = (uint32_t) f->npieces;
        assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
        /* the statistics (hcomp info's "blocks") count every live piece under its framing */
        hcomp_stats st;
        hcomp_frame_stats frame[HCOMP_STATS_FRAMES];
        assert_int_equal(hcomp_stat_path_frames(path, &st, frame, &e), HCOMP_OK);
        assert_true(st.pieces > 0);
        for (unsigned fr = 0; fr < HCOMP_STATS_FRAMES; fr++) {
            int mine = fr == files[k].frame;
            assert_int_equal(frame[fr].pieces, mine ? st.pieces : 0);
            assert_int_equal(frame[fr].stored_bytes, mine ? st.stored_bytes : 0);
            assert_int_equal(frame[fr].raw_bytes, mine ? st.live_bytes : 0);
        }
        /* a write of today's library keeps the file's version and its pieces' kind */
        write_text_at_1000(path, config);
        f = open_read(path);
        assert_int_equal(f->hdr.version, files[k].version);
        assert_true(f->npieces > had);
        for (uint32_t i = had; i < f->npieces; i++)
            assert_int_equal(f->pieces[i].frame == 0, files[k].version == 1);
        assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
    }
}

/* The version-3 files are what they stand for: wlogs.hc's writes each in a writer log of
 * its own (the mapping file its header alone), folded.hc's folded into its mapping file
 * (log generation 1, no writer log); a write of today's library adds a writer log, and the
 * file stays version 3. */
static void test_golden_v3_logs(void **state)
{
    (void) state;
    static const struct { const char *name; uint64_t gen; size_t logs; } files[] = {
        {"wlogs.hc", 0, GOLDEN_V1_NWRITES}, {"folded.hc", 1, 0}};
    char config[PATH_MAX];
    snprintf(config, sizeof(config), "%s/tiers.json", GOLDEN_V1_DIR);
    for (size_t k = 0; k < 2; k++) {
        char path[PATH_MAX];
        path_of(files[k].name, path);
        hcomp_error e;
        hcomp_file *f = open_read(path);
        uint64_t size;
        assert_int_equal(hcomp_file_size(f, &size, &e), HCOMP_OK);  /* a lazy reader replays */
        assert_int_equal(f->hdr.version, 3);
        assert_int_equal(f->hdr.log_gen, files[k].gen);
        assert_int_equal(f->nwlogs, files[k].logs);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_true(files[k].logs ? st.st_size == HCOMP_MAP_HEADER_SIZE
                                  : st.st_size > HCOMP_MAP_HEADER_SIZE);
        uint32_t had = (uint32_t) f->npieces;
        assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
        write_text_at_1000(path, config);
        f = open_read(path);
        assert_int_equal(hcomp_file_size(f, &size, &e), HCOMP_OK);
        assert_int_equal(f->hdr.version, 3);
        assert_int_equal(f->nwlogs, files[k].logs + 1);
        assert_true(f->npieces > had);
        for (uint32_t i = had; i < f->npieces; i++)
            assert_true(f->pieces[i].frame > 0);
        assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
    }
}

/* blosc.hc holds what it stands for: bit-shuffled c-blosc pieces of both codecs. */
static void test_golden_blosc_pieces(void **state)
{
    (void) state;
    char path[PATH_MAX];
    path_of("blosc.hc", path);
    hcomp_error e;
    hcomp_file *f = open_read(path);
    int lz4_bit = 0, zstd_bit = 0;
    for (uint32_t i = 0; i < f->npieces; i++) {
        lz4_bit |= f->pieces[i].codec == HCOMP_CODEC_BLOSC_LZ4 &&
                   f->pieces[i].filter == HCOMP_FILTER_BITSHUFFLE8;
        zstd_bit |= f->pieces[i].codec == HCOMP_CODEC_BLOSC_ZSTD &&
                    f->pieces[i].filter == HCOMP_FILTER_BITSHUFFLE8;
    }
    assert_true(lz4_bit);
    assert_true(zstd_bit);
    assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
}

/* blosc2.hc and blosc2-bit.hc hold what they stand for: c-blosc2 pieces of both codecs,
 * with each of bytedelta, delta, bitshuffle and byte shuffle of 8-byte elements, read
 * by this process, which chose none of them. */
static void test_golden_blosc2_pieces(void **state)
{
    (void) state;
    static const struct { const char *name; unsigned codec; int filter; } want[] = {
        {"blosc2.hc", HCOMP_CODEC_BLOSC2_ZSTD, HCOMP_FILTER_BYTEDELTA8},
        {"blosc2.hc", HCOMP_CODEC_BLOSC2_LZ4, HCOMP_FILTER_DELTA8},
        {"blosc2-bit.hc", HCOMP_CODEC_BLOSC2_LZ4, HCOMP_FILTER_BITSHUFFLE8},
        {"blosc2-bit.hc", HCOMP_CODEC_BLOSC2_ZSTD, HCOMP_FILTER_SHUFFLE8},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        char path[PATH_MAX];
        path_of(want[k].name, path);
        hcomp_error e;
        hcomp_file *f = open_read(path);
        int found = 0;
        for (uint32_t i = 0; i < f->npieces; i++)
            found |= f->pieces[i].codec == want[k].codec && f->pieces[i].filter == want[k].filter;
        if (!found)
            fail_msg("%s: no piece of codec %u with filter %d", want[k].name, want[k].codec,
                     want[k].filter);
        assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
    }
}

/* The old files go on living: a write, the reclaim of the last close, a compaction. */
static void test_golden_lives_on(void **state)
{
    (void) state;
    unsigned char *want = malloc(GOLDEN_V1_SIZE);
    assert_non_null(want);
    golden_v1_expected(want);
    char config[PATH_MAX];
    snprintf(config, sizeof(config), "%s/tiers.json", GOLDEN_V1_DIR);
    const char *names[] = {"log.hc", "snapshot.hc", "blosc.hc", "framed.hc", "framed-blosc.hc",
                           "wlogs.hc", "folded.hc", "blosc2.hc", "blosc2-bit.hc"};
    for (int k = 0; k < (int) (sizeof names / sizeof names[0]); k++) {
        char path[PATH_MAX];
        path_of(names[k], path);
        hcomp_options *o = hcomp_options_new();
        hcomp_error e;
        assert_int_equal(hcomp_options_set(o, "hcomp_config", config, &e), HCOMP_OK);
        assert_int_equal(hcomp_options_set(o, "hcomp_reclaim", "close", &e), HCOMP_OK);
        hcomp_file *f;
        if (hcomp_file_open(path, HCOMP_O_RDWR, 0, 1, o, &f, &e) != HCOMP_OK)
            fail_msg("%s: %s", path, e.msg);
        hcomp_options_free(o);
        unsigned char patch[70000];
        for (size_t i = 0; i < sizeof(patch); i++)
            patch[i] = (unsigned char) (i * 7 + (size_t) k);
        assert_int_equal(hcomp_file_pwrite(f, patch, sizeof(patch), 90000, &e), HCOMP_OK);
        assert_int_equal(hcomp_file_close(f, &e), HCOMP_OK);
        memcpy(want + 90000, patch, sizeof(patch));
        hcomp_reclaim_result r;
        assert_int_equal(hcomp_compact(path, config, NULL, &r, &e), HCOMP_OK);
        hcomp_footprint fp;
        assert_int_equal(hcomp_footprint_path(path, &fp, &e), HCOMP_OK);
        assert_int_equal(fp.dead, 0);
        expect_golden(path, want);
        golden_v1_expected(want);
    }
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_golden_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_lives_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_blosc_pieces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_blosc2_pieces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_v3_logs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
