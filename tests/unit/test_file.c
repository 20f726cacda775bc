/* End-to-end tests of the public file API (hcomp.h) in a private temporary directory:
 * two tiers in temporary directories named by a tier configuration the test writes,
 * and the mapping files in a third. Every test gets a fresh directory tree and
 * removes it afterwards. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <spawn.h>
#include <unistd.h>

#include "hcomp.h"
#include "hcomp_driver.h"   /* open_with_state, create: calls of the driver's, tested */
#include "tiers/piece_header.h"

#include "file_fixture.h"
#include "../proc_io.h"

/* ---- round trips ----------------------------------------------------------------------- */

static void test_roundtrip_every_codec(void **state)
{
    fixture *fx = *state;
    const uint64_t len = 2 * MIB + 4093;   /* the last piece is partial */
    unsigned char *data = text_data(len, 1);
    static const char *const piece_sizes[] = {"4096", "1048576"};
    for (size_t c = 0; c < hcomp_codec_count(); c++) {
        const hcomp_codec *codec = hcomp_codec_at(c);
        for (size_t ps = 0; ps < 2; ps++) {
            char path[PATH_MAX], name[64];
            snprintf(name, sizeof(name), "rt-%s-%s", codec->name, piece_sizes[ps]);
            file_path(fx, name, path, sizeof(path));
            set_opt(fx, "hcomp_codec", codec->name);
            set_opt(fx, "hcomp_piece_size", piece_sizes[ps]);
            hcomp_file *f = open_file(fx, path, HCOMP_O_WRONLY | HCOMP_O_CREAT | HCOMP_O_EXCL);
            pwrite_ok(f, data, len, 0);
            assert_true(size_of(f) == len);
            CHECK(hcomp_file_sync(f, &e_));
            close_ok(f);
            assert_true(hcomp_is_hcomp_file(path));

            /* a fresh opener with default options reads it (the codec is in the data) */
            hcomp_options_free(fx->opts);
            fx->opts = hcomp_options_new();
            set_opt(fx, "hcomp_config", fx->config);
            f = open_file(fx, path, HCOMP_O_RDONLY);
            assert_true(size_of(f) == len);
            expect_bytes(f, data, len, 0);
            close_ok(f);

            hcomp_stats st;
            stat_ok(path, &st);
            assert_true(st.logical_size == len);
            assert_true(st.live_bytes == len);
            uint64_t want_pieces = (len + atoi(piece_sizes[ps]) - 1) / atoi(piece_sizes[ps]);
            assert_true(st.pieces == want_pieces);
            if (codec->id == HCOMP_CODEC_NONE) {
                assert_true(st.codec[HCOMP_CODEC_NONE].pieces == want_pieces);
                uint64_t psz = (uint64_t) atoi(piece_sizes[ps]);
                uint64_t last = len - (want_pieces - 1) * psz;
                assert_true(st.stored_bytes == (want_pieces - 1) * raw_piece_bytes(psz) +
                                                   raw_piece_bytes(last));
            } else {
                /* compressible text: the codec took (nearly) every piece and it shrank */
                if (st.codec[codec->id].pieces + 1 < want_pieces)
                    fail_msg("%s: only %llu of %llu pieces compressed", name,
                             (unsigned long long) st.codec[codec->id].pieces,
                             (unsigned long long) want_pieces);
                assert_true(st.stored_bytes < len / 2);
            }
            CHECK(hcomp_file_delete(path, &e_));
        }
    }
    free(data);
}

/* Many small writes in one file, then reads at unaligned offsets across pieces. */
static void test_partial_reads(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    set_opt(fx, "hcomp_codec", "zstd");
    const uint64_t len = 64 * KIB;
    unsigned char *data = text_data(len, 2);
    char path[PATH_MAX];
    file_path(fx, "partial", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    /* written in uneven chunks, so pieces and writes do not line up */
    for (uint64_t off = 0; off < len;) {
        uint64_t n = off % 3 == 0 ? 5000 : 3001;
        if (n > len - off)
            n = len - off;
        pwrite_ok(f, data + off, n, off);
        off += n;
    }
    close_ok(f);
    f = open_file(fx, path, HCOMP_O_RDONLY);
    static const struct { uint64_t off, len; } cases[] = {
        {4093, 7}, {0, 1}, {4095, 2}, {4096, 4096}, {4097, 4095}, {1, 65534}, {8191, 4098},
        {4999, 2}, {5000, 1}, {12287, 8193}, {65535, 1}, {0, 65536}, {30000, 30000}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        expect_bytes(f, data + cases[i].off, cases[i].len, cases[i].off);
        expect_bytes(f, data + cases[i].off, cases[i].len, cases[i].off);  /* cached */
    }
    /* past the end: short counts, never an error */
    static const struct { uint64_t off, len, got; } eof[] = {
        {65530, 100, 6}, {65535, 2, 1}, {65536, 10, 0}, {100000, 10, 0},
        {UINT64_C(1) << 47, 4096, 0}, {0, 1000000, 65536}};
    unsigned char *buf = malloc(1000000);
    assert_non_null(buf);
    for (size_t i = 0; i < sizeof(eof) / sizeof(eof[0]); i++) {
        uint64_t n = pread_ok(f, buf, eof[i].len, eof[i].off);
        if (n != eof[i].got)
            fail_msg("read %llu at %llu: %llu bytes, want %llu", (unsigned long long) eof[i].len,
                     (unsigned long long) eof[i].off, (unsigned long long) n,
                     (unsigned long long) eof[i].got);
        if (n)
            assert_memory_equal(buf, data + eof[i].off, n);
    }
    assert_true(pread_ok(f, buf, 0, 10) == 0);
    free(buf);
    close_ok(f);
    free(data);
}

/* ---- overwrites and consistency between openers ------------------------------------------ */

static void test_overwrite_two_handles(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    const uint64_t n = 80 * KIB;
    unsigned char *model = calloc(n, 1);
    assert_non_null(model);
    char path[PATH_MAX];
    file_path(fx, "overwrite", path, sizeof(path));

    hcomp_file *a = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char *w1 = text_data(40000, 10);
    pwrite_ok(a, w1, 40000, 0);
    memcpy(model, w1, 40000);
    expect_bytes(a, model, 40000, 0);     /* decode some pieces into the cache */

    /* same handle: partial overlap of several pieces */
    unsigned char *w2 = random_data(10000, 11);
    pwrite_ok(a, w2, 10000, 5000);
    memcpy(model + 5000, w2, 10000);
    expect_bytes(a, model, 40000, 0);

    /* a second opener writes; the first sees it on its next read, without reopening */
    hcomp_file *b = open_file(fx, path, HCOMP_O_RDWR);
    assert_true(size_of(b) == 40000);
    expect_bytes(b, model, 40000, 0);
    unsigned char *w3 = text_data(20000, 12);
    pwrite_ok(b, w3, 20000, 12000);
    memcpy(model + 12000, w3, 20000);
    expect_bytes(a, model + 4093, 7, 4093);
    expect_bytes(a, model, 40000, 0);
    /* back and forth, each overlapping the last, also beyond the end */
    unsigned char *w4 = random_data(9000, 13);
    pwrite_ok(a, w4, 9000, 30000);
    memcpy(model + 30000, w4, 9000);
    unsigned char *w5 = text_data(1, 14);
    pwrite_ok(b, w5, 1, 30000);
    model[30000] = w5[0];
    unsigned char *w6 = random_data(5000, 15);
    pwrite_ok(b, w6, 5000, 70000);
    memcpy(model + 70000, w6, 5000);
    assert_true(size_of(a) == 75000);
    expect_bytes(a, model, 75000, 0);     /* 40000..70000 is a hole: zeros */
    expect_bytes(b, model, 75000, 0);
    /* b writes exactly over a piece a has cached */
    unsigned char *w7 = random_data(4096, 16);
    expect_bytes(a, model + 8192, 4096, 8192);
    pwrite_ok(b, w7, 4096, 8192);
    memcpy(model + 8192, w7, 4096);
    expect_bytes(a, model + 8192, 4096, 8192);
    close_ok(a);
    close_ok(b);

    /* and a new opener replays the same history */
    hcomp_file *c = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(c) == 75000);
    expect_bytes(c, model, 75000, 0);
    close_ok(c);
    free(w1);
    free(w2);
    free(w3);
    free(w4);
    free(w5);
    free(w6);
    free(w7);
    free(model);
}

static void test_holes(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "holes", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char *d = text_data(100, 3);
    pwrite_ok(f, d, 100, 10000);
    pwrite_ok(f, d, 100, 20000);
    assert_true(size_of(f) == 20100);
    unsigned char *buf = malloc(20100);
    assert_non_null(buf);
    memset(buf, 0xEE, 20100);
    assert_true(pread_ok(f, buf, 20100, 0) == 20100);
    assert_true(all_zero(buf, 10000));
    assert_memory_equal(buf + 10000, d, 100);
    assert_true(all_zero(buf + 10100, 9900));
    assert_memory_equal(buf + 20000, d, 100);
    /* a read entirely inside a hole */
    memset(buf, 0xEE, 100);
    assert_true(pread_ok(f, buf, 100, 15000) == 100);
    assert_true(all_zero(buf, 100));
    /* short read at the end */
    assert_true(pread_ok(f, buf, 100, 20050) == 50);
    assert_memory_equal(buf, d + 50, 50);
    /* an empty file */
    char empty[PATH_MAX];
    file_path(fx, "empty", empty, sizeof(empty));
    hcomp_file *e = open_file(fx, empty, HCOMP_O_RDWR | HCOMP_O_CREAT);
    assert_true(size_of(e) == 0);
    assert_true(pread_ok(e, buf, 100, 0) == 0);
    close_ok(e);
    free(buf);
    free(d);
    close_ok(f);
}

static void test_truncate_extend(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    char path[PATH_MAX];
    file_path(fx, "trunc", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char *d = random_data(20000, 4);
    unsigned char *buf = malloc(40000);
    assert_non_null(buf);
    pwrite_ok(f, d, 20000, 0);

    CHECK(hcomp_file_truncate(f, 5000, &e_));     /* shrink inside a piece */
    assert_true(size_of(f) == 5000);
    assert_true(pread_ok(f, buf, 40000, 0) == 5000);
    assert_memory_equal(buf, d, 5000);

    CHECK(hcomp_file_truncate(f, 30000, &e_));    /* grow: a hole, old data stays gone */
    assert_true(size_of(f) == 30000);
    memset(buf, 0xEE, 40000);
    assert_true(pread_ok(f, buf, 40000, 0) == 30000);
    assert_memory_equal(buf, d, 5000);
    assert_true(all_zero(buf + 5000, 25000));

    CHECK(hcomp_file_extend(f, 10000, &e_));      /* extend never shrinks */
    assert_true(size_of(f) == 30000);
    CHECK(hcomp_file_extend(f, 36000, &e_));      /* preallocate */
    assert_true(size_of(f) == 36000);
    memset(buf, 0xEE, 40000);
    assert_true(pread_ok(f, buf, 40000, 0) == 36000);
    assert_memory_equal(buf, d, 5000);
    assert_true(all_zero(buf + 5000, 31000));

    CHECK(hcomp_file_truncate(f, 8192, &e_));     /* shrink at a piece boundary, in a hole */
    assert_true(size_of(f) == 8192);

    /* another opener sees the same size and data */
    hcomp_file *g = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(g) == 8192);
    memset(buf, 0xEE, 40000);
    assert_true(pread_ok(g, buf, 40000, 0) == 8192);
    assert_memory_equal(buf, d, 5000);
    assert_true(all_zero(buf + 5000, 3192));
    hcomp_error err;
    assert_int_equal(hcomp_file_truncate(g, 0, &err), HCOMP_E_RDONLY);
    assert_int_equal(hcomp_file_extend(g, 100000, &err), HCOMP_E_RDONLY);
    assert_true(size_of(g) == 8192);

    CHECK(hcomp_file_truncate(f, 0, &e_));        /* to zero */
    assert_true(size_of(f) == 0);
    assert_true(size_of(g) == 0);
    assert_true(pread_ok(g, buf, 100, 0) == 0);
    pwrite_ok(f, d, 100, 1000);                   /* and writable again */
    assert_true(size_of(g) == 1100);
    memset(buf, 0xEE, 1100);
    assert_true(pread_ok(g, buf, 1100, 0) == 1100);
    assert_true(all_zero(buf, 1000));
    assert_memory_equal(buf + 1000, d, 100);
    close_ok(f);
    close_ok(g);

    /* the history replays to the same state */
    g = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(g) == 1100);
    expect_bytes(g, d, 100, 1000);
    close_ok(g);

    /* beyond the format's limit */
    f = open_file(fx, path, HCOMP_O_RDWR);
    assert_int_equal(hcomp_file_truncate(f, (UINT64_C(1) << 48) + 1, &err), HCOMP_E_INVAL);
    assert_int_equal(hcomp_file_pwrite(f, d, 10, (UINT64_C(1) << 48) - 5, &err), HCOMP_E_INVAL);
    assert_true(size_of(f) == 1100);
    close_ok(f);
    free(buf);
    free(d);
}

static void test_sparse_beyond_4gib(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "sparse", path, sizeof(path));
    const uint64_t a = 5 * GIB, b = 6 * GIB + 123;
    unsigned char *da = random_data(4096, 5), *db = text_data(4096, 6);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, da, 4096, a);
    pwrite_ok(f, db, 4096, b);
    assert_true(size_of(f) == b + 4096);
    close_ok(f);

    f = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(f) == b + 4096);
    expect_bytes(f, da, 4096, a);
    expect_bytes(f, db, 4096, b);
    expect_bytes(f, da + 1000, 10, a + 1000);
    unsigned char *buf = malloc(MIB);
    assert_non_null(buf);
    /* zeros before, between (start, middle, end) and around the data */
    static const uint64_t holes[] = {0, 4 * GIB - 512 * KIB, 5 * GIB - MIB};
    for (size_t i = 0; i < 3; i++) {
        memset(buf, 0xEE, MIB);
        assert_true(pread_ok(f, buf, MIB, holes[i]) == MIB);
        assert_true(all_zero(buf, MIB));
    }
    const uint64_t between[] = {a + 4096, a + GIB / 2, b - MIB};
    for (size_t i = 0; i < 3; i++) {
        memset(buf, 0xEE, MIB);
        assert_true(pread_ok(f, buf, MIB, between[i]) == MIB);
        assert_true(all_zero(buf, MIB));
    }
    memset(buf, 0xEE, 3 * 4096);
    assert_true(pread_ok(f, buf, 3 * 4096, b - 4096) == 2 * 4096);
    assert_true(all_zero(buf, 4096));
    assert_memory_equal(buf + 4096, db, 4096);
    memset(buf, 0xEE, 8192);
    assert_true(pread_ok(f, buf, 8192, a - 4096) == 8192);
    assert_true(all_zero(buf, 4096));
    assert_memory_equal(buf + 4096, da, 4096);
    close_ok(f);

    hcomp_stats st;
    stat_ok(path, &st);
    assert_true(st.logical_size == b + 4096);
    assert_true(st.live_bytes == 8192);
    assert_true(st.pieces == 2);
    /* nothing of the holes is stored anywhere */
    assert_true(file_length(path) < 4096);
    assert_int_equal(find_segments(fx->t0), 1);
    assert_true((uint64_t) file_length(found_segs[0]) <= 2 * raw_piece_bytes(4096));
    free(buf);
    free(da);
    free(db);
}

/* ---- tiers --------------------------------------------------------------------------- */

static void test_spill_to_second_tier(void **state)
{
    fixture *fx = *state;
    write_config(fx, "64KiB");
    char path[PATH_MAX];
    file_path(fx, "spill", path, sizeof(path));
    const uint64_t len = MIB;
    unsigned char *d = random_data(len, 7);
    hcomp_file *f = open_file(fx, path, HCOMP_O_WRONLY | HCOMP_O_CREAT);
    pwrite_ok(f, d, len, 0);
    close_ok(f);

    hcomp_stats st;
    stat_ok(path, &st);
    assert_true(st.logical_size == len);
    assert_true(st.live_bytes == len);
    assert_int_equal(st.ntiers, 2);
    int fast = stat_tier(&st, "fast"), slow = stat_tier(&st, "slow");
    assert_true(fast >= 0 && slow >= 0);
    assert_string_equal(st.tier[fast].dir, fx->t0);
    assert_string_equal(st.tier[slow].dir, fx->t1);
    if (st.tier[fast].stored_bytes == 0 || st.tier[fast].stored_bytes > 64 * KIB)
        fail_msg("tier fast holds %llu stored bytes", (unsigned long long) st.tier[fast].stored_bytes);
    assert_true(st.tier[slow].stored_bytes > 0);
    assert_true(st.tier[fast].raw_bytes + st.tier[slow].raw_bytes == len);
    assert_true(st.tier[fast].stored_bytes + st.tier[slow].stored_bytes == st.stored_bytes);
    /* the fast tier's directory really holds no more than its capacity */
    assert_int_equal(find_segments(fx->t0), 1);
    assert_true(file_length(found_segs[0]) <= (off_t) (64 * KIB));
    assert_int_equal(find_segments(fx->t1), 1);
    /* random bytes do not compress: stored raw */
    assert_true(st.codec[HCOMP_CODEC_NONE].raw_bytes == len);

    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, len, 0);
    close_ok(f);

    /* a second file finds the fast tier full and goes to the slow tier */
    char path2[PATH_MAX];
    file_path(fx, "spill2", path2, sizeof(path2));
    f = open_file(fx, path2, HCOMP_O_WRONLY | HCOMP_O_CREAT);
    pwrite_ok(f, d, 64 * KIB, 0);
    close_ok(f);
    stat_ok(path2, &st);
    fast = stat_tier(&st, "fast");
    uint64_t fast_stored = fast >= 0 ? st.tier[fast].stored_bytes : 0;
    /* both files together stay within the capacity */
    hcomp_stats st1;
    stat_ok(path, &st1);
    assert_true(fast_stored + st1.tier[stat_tier(&st1, "fast")].stored_bytes <= 64 * KIB);
    f = open_file(fx, path2, HCOMP_O_RDONLY);
    expect_bytes(f, d, 64 * KIB, 0);
    close_ok(f);
    free(d);
}

/* Bytes file path holds on the tier named tier (0 if none). */
static uint64_t stored_on(const char *path, const char *tier)
{
    hcomp_stats st;
    stat_ok(path, &st);
    int t = stat_tier(&st, tier);
    return t >= 0 ? st.tier[t].stored_bytes : 0;
}

/* A file writes 48 KiB into the 64 KiB fast tier, then goes (deleted, or its node-local
 * data drained to the slow tier at close); a file opened at once finds the fast tier's
 * room again and is stored there whole: no figure of the tier the first file saw (its
 * own is kept for a second) may outlive it. */
/* A new file at path holding d (len bytes), closed: what it stored on the fast tier. */
static uint64_t new_file_on_fast(fixture *fx, const char *path, const unsigned char *d,
                                 uint64_t len)
{
    hcomp_file *f = open_file(fx, path, HCOMP_O_WRONLY | HCOMP_O_CREAT);
    pwrite_ok(f, d, len, 0);
    close_ok(f);
    return stored_on(path, "fast");
}

static void freed_room_seen_by_next_file(fixture *fx, int drain)
{
    write_config(fx, "64KiB");
    set_opt(fx, "hcomp_drain", drain ? "close" : "never");
    const uint64_t len = 48 * KIB;
    unsigned char *d = random_data(len, 21);
    char first[PATH_MAX], second[PATH_MAX];
    file_path(fx, "first", first, sizeof(first));
    file_path(fx, "second", second, sizeof(second));
    /* premise: the first file was on the fast tier (drained: no longer) */
    assert_true(new_file_on_fast(fx, first, d, len) ==
                (drain ? 0 : raw_piece_bytes(len)));
    if (!drain)
        CHECK(hcomp_file_delete(first, &e_));
    set_opt(fx, "hcomp_drain", "never");
    uint64_t fast = new_file_on_fast(fx, second, d, len);
    if (fast != raw_piece_bytes(len))
        fail_msg("after the first file was %s, the second stored %llu of %llu bytes on the "
                 "fast tier", drain ? "drained" : "deleted", (unsigned long long) fast,
                 (unsigned long long) len);
    hcomp_file *f = open_file(fx, second, HCOMP_O_RDONLY);
    expect_bytes(f, d, len, 0);
    close_ok(f);
    free(d);
}

static void test_deleted_room_seen_by_next_file(void **state)
{
    freed_room_seen_by_next_file(*state, 0);
}

static void test_drained_room_seen_by_next_file(void **state)
{
    freed_room_seen_by_next_file(*state, 1);
}

/* Another process (an MPI rank, here a forked child) deletes a file that filled the fast
 * tier; this process's next file, opened at once, must see the room: what this process
 * saw of the tier a moment ago is no guide after another process's changes. */
static void test_room_freed_by_another_process(void **state)
{
    fixture *fx = *state;
    write_config(fx, "64KiB");
    const uint64_t len = 48 * KIB;
    unsigned char *d = random_data(len, 23);
    char first[PATH_MAX], second[PATH_MAX];
    file_path(fx, "first", first, sizeof(first));
    file_path(fx, "second", second, sizeof(second));
    assert_true(new_file_on_fast(fx, first, d, len) == raw_piece_bytes(len)); /* premise */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* the child leaves through exec, not exit: a forked copy of a threaded process
         * holds the threads' buffers unreachable, and a leak check at its exit (valgrind
         * follows forks) would report them */
        hcomp_error err;
        const char *status = hcomp_file_delete(first, &err) == HCOMP_OK ? "true" : "false";
        execlp(status, status, (char *) NULL);
        _exit(2);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    uint64_t fast = new_file_on_fast(fx, second, d, len);
    if (fast != raw_piece_bytes(len))
        fail_msg("after another process deleted the first file, the second stored %llu of "
                 "%llu bytes on the fast tier", (unsigned long long) fast, (unsigned long long) len);
    free(d);
}

/* A writer killed while it held a reservation leaves its line in the tier's capacity
 * ledger. The next writer that looks at the tier's room drops it (and the ledger with
 * it), even one that places nothing there (the tier too small for any piece). */
static void test_dead_writer_line_dropped(void **state)
{
    fixture *fx = *state;
    write_config(fx, "2KiB");       /* less than the smallest piece: never written to */
    pid_t child;    /* a process that has ended: its pid is a dead writer's */
    char *argv[] = {"true", NULL};
    assert_int_equal(posix_spawnp(&child, "true", NULL, NULL, argv, environ), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    char host[64], ledger[PATH_MAX], line[256];
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    host[sizeof(host) - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == ' ')
            *c = '_';
    join(ledger, fx->t0, ".hcomp-ledger");
    snprintf(line, sizeof(line), "%s %ld 12345 2048\n", host, (long) child);
    write_text(ledger, line);
    const uint64_t len = 64 * KIB;
    unsigned char *d = random_data(len, 5);
    char path[PATH_MAX];
    file_path(fx, "after-kill", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_WRONLY | HCOMP_O_CREAT);
    pwrite_ok(f, d, len, 0);
    close_ok(f);
    assert_true(stored_on(path, "fast") == 0);      /* premise: nothing reserved there */
    struct stat st;
    if (lstat(ledger, &st) == 0)
        fail_msg("the dead writer's ledger line is still in %s", ledger);
    free(d);
}

static void test_raw_when_not_shrinking(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    set_opt(fx, "hcomp_codec", "lz4");
    char path[PATH_MAX];
    file_path(fx, "raw", path, sizeof(path));
    unsigned char *buf = calloc(8 * 4096, 1);
    assert_non_null(buf);
    unsigned char *r = random_data(4 * 4096, 8);
    /* pieces 0-3 zeros (shrink), 4-7 random (do not) */
    memcpy(buf + 4 * 4096, r, 4 * 4096);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, buf, 8 * 4096, 0);
    expect_bytes(f, buf, 8 * 4096, 0);
    close_ok(f);
    hcomp_stats st;
    stat_ok(path, &st);
    assert_true(st.pieces == 8);
    assert_true(st.codec[HCOMP_CODEC_NONE].pieces == 4);
    assert_true(st.codec[HCOMP_CODEC_NONE].raw_bytes == 4 * 4096);
    assert_true(st.codec[HCOMP_CODEC_NONE].stored_bytes == 4 * raw_piece_bytes(4096));
    assert_true(st.codec[HCOMP_CODEC_LZ4].pieces == 4);
    assert_true(st.codec[HCOMP_CODEC_LZ4].raw_bytes == 4 * 4096);
    assert_true(st.codec[HCOMP_CODEC_LZ4].stored_bytes < 4 * 1024);
    for (int c = 0; c < HCOMP_CODEC_COUNT; c++)
        if (c != HCOMP_CODEC_NONE && c != HCOMP_CODEC_LZ4)
            assert_true(st.codec[c].pieces == 0);
    free(buf);
    free(r);
}

static void test_stat_accounting(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    set_opt(fx, "hcomp_codec", "none");
    char path[PATH_MAX];
    file_path(fx, "stat", path, sizeof(path));
    unsigned char *d = random_data(16384, 9);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d, 16384, 0);          /* pieces P0..P3 */
    hcomp_stats st;
    stat_ok(path, &st);
    assert_true(st.logical_size == 16384 && st.live_bytes == 16384);
    assert_true(st.pieces == 4 && st.stored_bytes == 4 * raw_piece_bytes(4096));

    pwrite_ok(f, d, 4096, 4096);        /* P1 entirely replaced by P4 */
    pwrite_ok(f, d, 100, 10000);        /* P2 partly replaced by P5 */
    pwrite_ok(f, d, 10, 20000);         /* P6 after a hole */
    stat_ok(path, &st);
    assert_true(st.logical_size == 20010);
    assert_true(st.live_bytes == 16384 + 10);
    /* live pieces: P0, P2, P3, P4, P5, P6; P1 is dead and not counted */
    assert_true(st.pieces == 6);
    assert_true(st.stored_bytes == 4 * raw_piece_bytes(4096) + raw_piece_bytes(100) +
                                   raw_piece_bytes(10));
    assert_int_equal(st.ntiers, 1);
    assert_string_equal(st.tier[0].name, "fast");
    assert_string_equal(st.tier[0].dir, fx->t0);
    assert_true(st.tier[0].raw_bytes == st.live_bytes);
    assert_true(st.tier[0].stored_bytes == st.stored_bytes);
    assert_true(st.tier[0].pieces == 6);
    assert_true(st.codec[HCOMP_CODEC_NONE].raw_bytes == st.live_bytes);
    assert_true(st.codec[HCOMP_CODEC_NONE].pieces == 6);

    CHECK(hcomp_file_truncate(f, 4096, &e_));   /* only P0 stays live */
    stat_ok(path, &st);
    assert_true(st.logical_size == 4096 && st.live_bytes == 4096);
    assert_true(st.pieces == 1 && st.stored_bytes == raw_piece_bytes(4096));
    CHECK(hcomp_file_extend(f, 1 << 20, &e_));
    stat_ok(path, &st);
    assert_true(st.logical_size == 1 << 20 && st.live_bytes == 4096);
    close_ok(f);
    free(d);
}

/* ---- durable sync ---------------------------------------------------------------------- */

/* The fixture's tiers, the first said to be volatile (the way a tmpfs one is detected). */
static void write_volatile_config(fixture *fx)
{
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [\n"
             "  {\"name\": \"fast\", \"path\": \"%s\", \"scope\": \"node-local\", \"volatile\": true,"
             "   \"measure\": false},\n"
             "  {\"name\": \"slow\", \"path\": \"%s\", \"measure\": false}\n"
             "]}\n", fx->t0, fx->t1);
    write_text(fx->config, json);
}

/* Remove everything in a tier directory: the node's memory is gone. */
static void wipe_dir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        join(p, dir, e->d_name);
        assert_int_equal(t_rm_tree(p), 0);
    }
    closedir(d);
}

/* Two writes, each followed by a sync, on a volatile first tier (hcomp_drain=never keeps
 * data there until close): after each sync no live byte is left on it, and once its
 * directory is wiped with the file still open, a new opener reads every synced byte. */
static void test_durable_sync(void **state)
{
    fixture *fx = *state;
    write_volatile_config(fx);
    char path[PATH_MAX];
    file_path(fx, "durable", path, sizeof(path));
    unsigned char *d = text_data(3 * MIB, 4);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    hcomp_stats st;
    pwrite_ok(f, d, 2 * MIB, 0);
    stat_ok(path, &st);
    assert_true(st.tier[stat_tier(&st, "fast")].raw_bytes == 2 * MIB);  /* premise */
    CHECK(hcomp_file_sync(f, &e_));
    stat_ok(path, &st);
    int slow = stat_tier(&st, "slow"), fast = stat_tier(&st, "fast");
    assert_true(slow >= 0 && st.tier[slow].raw_bytes == 2 * MIB);
    assert_true(fast < 0 || st.tier[fast].raw_bytes == 0);
    pwrite_ok(f, d + 2 * MIB, MIB, 2 * MIB);        /* the fast tier again */
    CHECK(hcomp_file_sync(f, &e_));
    stat_ok(path, &st);
    slow = stat_tier(&st, "slow");
    assert_true(slow >= 0 && st.tier[slow].raw_bytes == 3 * MIB);
    wipe_dir(fx->t0);
    hcomp_file *g = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(g, d, 3 * MIB, 0);
    close_ok(g);
    close_ok(f);
    free(d);
}

/* hcomp_sync=tiers: sync leaves the data where it is (each tier synced), so wiping the
 * volatile tier loses it: reads fail naming the missing segment, never wrong bytes. */
static void test_sync_tiers_optout(void **state)
{
    fixture *fx = *state;
    write_volatile_config(fx);
    set_opt(fx, "hcomp_sync", "tiers");
    char path[PATH_MAX];
    file_path(fx, "optout", path, sizeof(path));
    unsigned char *d = text_data(MIB, 5);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d, MIB, 0);
    CHECK(hcomp_file_sync(f, &e_));
    hcomp_stats st;
    stat_ok(path, &st);
    assert_true(st.tier[stat_tier(&st, "fast")].raw_bytes == MIB);
    wipe_dir(fx->t0);
    hcomp_file *g = open_file(fx, path, HCOMP_O_RDONLY);
    unsigned char *buf = malloc(MIB);
    assert_non_null(buf);
    hcomp_error err;
    uint64_t got = 0;
    int rc = hcomp_file_pread(g, buf, MIB, 0, &got, &err);
    assert_int_not_equal(rc, HCOMP_OK);
    assert_non_null(strstr(err.msg, fx->t0));
    close_ok(g);
    close_ok(f);
    free(buf);
    free(d);
}

/* A tier whose directory vanishes while the file is open is taken out of placement:
 * later writes go to the next tier and read back; the bytes that lived on the
 * vanished tier fail to read with a message naming what is missing, never wrong data. */
static void test_vanished_tier(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX], moved[PATH_MAX + 8];
    file_path(fx, "vanish", path, sizeof(path));
    snprintf(moved, sizeof(moved), "%s.gone", fx->t0);
    unsigned char *d = random_data(2 * MIB, 21);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d, MIB, 0);                    /* lands on tier 0 */
    assert_true(find_segments(fx->t0) >= 1);
    assert_int_equal(rename(fx->t0, moved), 0);
    pwrite_ok(f, d + MIB, MIB, MIB);            /* tier 0 is gone: tier 1 takes it */
    unsigned char *buf = malloc(MIB);
    assert_non_null(buf);
    assert_true(pread_ok(f, buf, MIB, MIB) == MIB);
    assert_memory_equal(buf, d + MIB, MIB);
    hcomp_error err;
    uint64_t got = 0;
    memset(buf, 0, MIB);
    int rc = hcomp_file_pread(f, buf, 4096, 0, &got, &err);
    if (rc == HCOMP_OK) {
        /* the segment was already open for reading: the bytes must still be right */
        assert_memory_equal(buf, d, 4096);
    } else
        assert_non_null(strstr(err.msg, fx->t0));
    close_ok(f);
    assert_int_equal(rename(moved, fx->t0), 0);
    free(buf);
    free(d);
}

static void test_delete(void **state)
{
    fixture *fx = *state;
    write_config(fx, "64KiB");
    set_opt(fx, "hcomp_piece_size", "65536");
    char path[PATH_MAX];
    file_path(fx, "victim", path, sizeof(path));
    unsigned char *d = random_data(MIB, 10);
    /* two openers: two segments per tier */
    hcomp_file *a = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    hcomp_file *b = open_file(fx, path, HCOMP_O_RDWR);
    pwrite_ok(a, d, 20000, 0);
    pwrite_ok(b, d, 20000, 20000);
    pwrite_ok(a, d, 512 * KIB, 40000);
    pwrite_ok(b, d, 512 * KIB, 40000 + 512 * KIB);
    close_ok(a);
    close_ok(b);
    assert_true(find_segments(fx->t0) >= 2);
    assert_true(find_segments(fx->t1) >= 2);
    hcomp_stats st;
    stat_ok(path, &st);
    assert_int_equal(st.ntiers, 2);

    /* another file in the same tiers must survive */
    char other[PATH_MAX];
    file_path(fx, "bystander", other, sizeof(other));
    hcomp_file *o = open_file(fx, other, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(o, d, 100 * KIB, 0);
    close_ok(o);
    int t0_before = count_entries(fx->t0), t1_before = count_entries(fx->t1);
    /* the victim's segments: every one on the fast tier, and the slow tier's less the
     * bystander's */
    static char victim_segs[32][PATH_MAX];
    int nvictim = 0;
    for (int t = 0; t < 2; t++) {
        int n = find_segments(t ? fx->t1 : fx->t0);
        for (int i = 0; i < n; i++)
            if (strstr(found_segs[i], "/victim.") != NULL && nvictim < 32)
                memcpy(victim_segs[nvictim++], found_segs[i], PATH_MAX);
    }
    assert_true(nvictim >= 4);

    CHECK(hcomp_file_delete(path, &e_));
    for (int i = 0; i < nvictim; i++)
        if (access(victim_segs[i], F_OK) == 0)
            fail_msg("segment %s survived the delete", victim_segs[i]);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(errno, ENOENT);
    assert_false(hcomp_is_hcomp_file(path));
    /* only the bystander's segment directories are left */
    assert_true(count_entries(fx->t0) <= t0_before - 1);
    assert_int_equal(count_entries(fx->t1), t1_before - 1);
    CHECK(hcomp_file_delete(other, &e_));
    assert_int_equal(count_entries(fx->t0), 0);
    assert_int_equal(count_entries(fx->t1), 0);
    assert_int_equal(count_entries(fx->files), 0);

    /* deleting what is not there, or not ours */
    hcomp_error err;
    assert_int_equal(hcomp_file_delete(path, &err), HCOMP_E_NOENT);
    char plain[PATH_MAX];
    file_path(fx, "plain.txt", plain, sizeof(plain));
    write_text(plain, "just some text, not an hcomp mapping file at all\n");
    assert_int_equal(hcomp_file_delete(plain, &err), HCOMP_E_NOTHCOMP);
    assert_int_equal(access(plain, F_OK), 0);
    free(d);
}

/* ---- errors ----------------------------------------------------------------------------- */

static void test_open_errors(void **state)
{
    fixture *fx = *state;
    hcomp_error err;
    hcomp_file *f = (hcomp_file *) 1;
    char path[PATH_MAX];
    file_path(fx, "missing", path, sizeof(path));
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDONLY, 0644, 1, fx->opts, &f, &err),
                     HCOMP_E_NOENT);
    assert_null(f);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDWR, 0644, 1, fx->opts, &f, &err),
                     HCOMP_E_NOENT);
    assert_int_equal(access(path, F_OK), -1);       /* nothing created */

    /* exclusive create of an existing file */
    f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT | HCOMP_O_EXCL);
    close_ok(f);
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDWR | HCOMP_O_CREAT | HCOMP_O_EXCL, 0644, 1,
                                     fx->opts, &f, &err), HCOMP_E_EXIST);
    assert_non_null(strstr(err.msg, path));
    f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);  /* without EXCL: fine */
    close_ok(f);
    assert_int_equal(count_entries(fx->files), 1);          /* no temporary files left */

    /* a plain file with garbage is left alone, whatever the mode */
    char plain[PATH_MAX];
    file_path(fx, "plain.dat", plain, sizeof(plain));
    const char *garbage = "\x7f" "ELF garbage garbage garbage garbage garbage garbage garbage "
                          "garbage garbage garbage garbage";
    write_text(plain, garbage);
    static const int modes[] = {HCOMP_O_RDONLY, HCOMP_O_RDWR, HCOMP_O_WRONLY,
                                HCOMP_O_RDWR | HCOMP_O_CREAT};
    for (size_t i = 0; i < 4; i++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(hcomp_file_open(plain, modes[i], 0644, 1, fx->opts, &f, &err),
                         HCOMP_E_NOTHCOMP);
        assert_null(f);
        assert_int_equal(err.code, HCOMP_E_NOTHCOMP);
        if (strstr(err.msg, plain) == NULL)
            fail_msg("message does not name %s: %s", plain, err.msg);
    }
    assert_true(file_length(plain) == (off_t) strlen(garbage));
    assert_false(hcomp_is_hcomp_file(plain));
    assert_int_equal(hcomp_stat_path(plain, &(hcomp_stats){0}, &err), HCOMP_E_NOTHCOMP);
    /* a directory is not an hcomp file either */
    assert_int_not_equal(hcomp_file_open(fx->t0, HCOMP_O_RDONLY, 0644, 1, fx->opts, &f, &err),
                         HCOMP_OK);

    /* bad flag combinations */
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDONLY | HCOMP_O_RDWR, 0644, 1, fx->opts, &f,
                                     &err), HCOMP_E_INVAL);
    assert_int_equal(hcomp_file_open(path, HCOMP_O_CREAT, 0644, 1, fx->opts, &f, &err),
                     HCOMP_E_INVAL);
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDONLY | HCOMP_O_CREAT, 0644, 1, fx->opts, &f,
                                     &err), HCOMP_E_INVAL);
    assert_int_equal(hcomp_file_open("", HCOMP_O_RDONLY, 0644, 1, fx->opts, &f, &err),
                     HCOMP_E_INVAL);
}

/* hcomp_file_create (ROMIO's create step): a new file is an empty hcomp file; an
 * existing one is left as it is (EXCL: refused); it checks what an open checks first, and
 * creates nothing when those checks fail. */
static void test_create_only(void **state)
{
    fixture *fx = *state;
    hcomp_error err;
    char path[PATH_MAX];
    file_path(fx, "created", path, sizeof(path));
    CHECK(hcomp_file_create(path, HCOMP_O_EXCL, 0640, fx->opts, &e_));
    assert_true(hcomp_is_hcomp_file(path));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    mode_t um = umask(0);
    umask(um);
    assert_int_equal(st.st_mode & 0777, 0640 & ~um);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR);
    uint64_t size = 1;
    CHECK(hcomp_file_size(f, &size, &e_));
    assert_int_equal(size, 0);
    unsigned char d[5000];
    for (size_t i = 0; i < sizeof(d); i++)
        d[i] = (unsigned char) (i * 7);
    pwrite_ok(f, d, sizeof(d), 100);
    close_ok(f);

    /* again: the file and its bytes stay; exclusively: refused, naming the file */
    CHECK(hcomp_file_create(path, 0, 0644, fx->opts, &e_));
    assert_int_equal(hcomp_file_create(path, HCOMP_O_EXCL, 0644, fx->opts, &err), HCOMP_E_EXIST);
    assert_non_null(strstr(err.msg, path));
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, sizeof(d), 100);
    close_ok(f);

    /* a tier directory that is not there, or a seed that is not: nothing is created */
    char fresh[PATH_MAX];
    file_path(fx, "fresh", fresh, sizeof(fresh));
    hcomp_options *o = hcomp_options_dup(fx->opts);
    assert_non_null(o);
    char seed[PATH_MAX];
    join(seed, fx->base, "no-such-seed.json");
    CHECK(hcomp_options_set(o, "hcomp_seed", seed, &e_));
    CHECK(hcomp_options_set(o, "hcomp_feedback_interval", "0", &e_));  /* still checked */
    assert_int_not_equal(hcomp_file_create(fresh, 0, 0644, o, &err), HCOMP_OK);
    assert_non_null(strstr(err.msg, seed));
    assert_int_equal(access(fresh, F_OK), -1);
    hcomp_options_free(o);
    char gone[PATH_MAX], json[4 * PATH_MAX];
    join(gone, fx->base, "no-such-tier");
    snprintf(json, sizeof(json), "{\"version\": 1, \"tiers\": [{\"name\": \"missing\", "
             "\"path\": \"%s\"}]}", gone);
    write_text(fx->config, json);
    assert_int_equal(hcomp_file_create(fresh, 0, 0644, fx->opts, &err), HCOMP_E_NOENT);
    assert_non_null(strstr(err.msg, gone));
    assert_int_equal(access(fresh, F_OK), -1);
}

static void test_readonly_handle(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "ro", path, sizeof(path));
    unsigned char d[100];
    memset(d, 'x', sizeof(d));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d, 100, 0);
    close_ok(f);
    f = open_file(fx, path, HCOMP_O_RDONLY);
    hcomp_error err;
    assert_int_equal(hcomp_file_pwrite(f, d, 10, 0, &err), HCOMP_E_RDONLY);
    assert_int_equal(err.code, HCOMP_E_RDONLY);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(hcomp_file_pwrite(f, d, 10, 1000, &err), HCOMP_E_RDONLY);
    assert_true(size_of(f) == 100);
    expect_bytes(f, d, 100, 0);
    CHECK(hcomp_file_sync(f, &e_));
    close_ok(f);
}

/* len bytes of data written to a new file in writes of 16 KiB (a log of many records) */
static void write_session_pieces(fixture *fx, const char *path, const unsigned char *data,
                                 uint64_t len)
{
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    for (uint64_t off = 0; off < len; off += 16 * KIB)
        pwrite_ok(f, data + off, len - off < 16 * KIB ? len - off : 16 * KIB, off);
    close_ok(f);
}

/* HCOMP_O_LAZY: a read-only handle replays nothing at open (it reads no more than the
 * header), then its first read, size or export replays the log as it is then, writes made
 * after the open included; with a write mode the flag changes nothing. */
static void test_lazy_reader(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "65536");
    char path[PATH_MAX];
    file_path(fx, "lazy", path, sizeof(path));
    const uint64_t len = 2 * MIB;
    unsigned char *d = text_data(len, 3), *later = random_data(100000, 9);
    write_session_pieces(fx, path, d, len);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    long long r0 = proc_bytes_read();
    hcomp_file *lz = open_file(fx, path, HCOMP_O_RDONLY | HCOMP_O_LAZY);
    long long at_open = proc_bytes_read() - r0;
    if (at_open >= sb.st_size / 2)
        fail_msg("a lazy open read %lld bytes of a %lld-byte mapping file", at_open,
                 (long long) sb.st_size);
    /* written after the lazy open, before its first use */
    hcomp_file *w = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_LAZY);
    pwrite_ok(w, later, 100000, len - 50000);
    close_ok(w);
    memcpy(d + len - 50000, later, 50000);
    assert_true(size_of(lz) == len + 50000);
    assert_true(proc_bytes_read() - r0 >= sb.st_size);
    expect_bytes(lz, d, len - 50000, 0);
    expect_bytes(lz, later, 100000, len - 50000);
    close_ok(lz);
    /* a lazy handle exports the state of the whole log */
    lz = open_file(fx, path, HCOMP_O_RDONLY | HCOMP_O_LAZY);
    void *st = NULL;
    size_t stlen = 0;
    hcomp_error err;
    assert_int_equal(hcomp_file_export_state(lz, &st, &stlen, &err), HCOMP_OK);
    close_ok(lz);
    hcomp_file *g = NULL;
    if (hcomp_file_open_with_state(path, HCOMP_O_RDONLY, 0, 1, fx->opts, st, stlen, &g, &err) !=
        HCOMP_OK)
        fail_msg("open with state: %s", err.msg);
    expect_bytes(g, later, 100000, len - 50000);
    close_ok(g);
    free(st);
    free(d);
    free(later);
}

static void test_missing_tier_dir(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "notier", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char d[64] = {1, 2, 3};
    pwrite_ok(f, d, sizeof(d), 0);
    close_ok(f);

    char gone[PATH_MAX];
    join(gone, fx->base, "no-such-tier");
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json), "{\"version\": 1, \"tiers\": [{\"name\": \"fast\", \"path\": \"%s\"},"
             " {\"name\": \"missing\", \"path\": \"%s\"}]}", fx->t0, gone);
    write_text(fx->config, json);
    hcomp_error err;
    static const int writable[] = {HCOMP_O_RDWR, HCOMP_O_WRONLY, HCOMP_O_RDWR | HCOMP_O_CREAT};
    for (size_t i = 0; i < 3; i++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(hcomp_file_open(path, writable[i], 0644, 1, fx->opts, &f, &err),
                         HCOMP_E_NOENT);
        assert_null(f);
        if (strstr(err.msg, gone) == NULL || strstr(err.msg, "missing") == NULL)
            fail_msg("message does not name the tier and its directory: %s", err.msg);
    }
    /* nor is a new file created */
    char fresh[PATH_MAX];
    file_path(fx, "fresh", fresh, sizeof(fresh));
    assert_int_equal(hcomp_file_open(fresh, HCOMP_O_RDWR | HCOMP_O_CREAT, 0644, 1, fx->opts, &f,
                                     &err), HCOMP_E_NOENT);
    assert_int_equal(access(fresh, F_OK), -1);
    /* reading needs only the segments the mapping file names */
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, sizeof(d), 0);
    close_ok(f);
}

/* ---- damaged data -------------------------------------------------------------------------- */

static void test_corrupt_piece(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    static const char *const codecs[] = {"none", "lz4", "zstd", "zlib"};
    for (size_t c = 0; c < 4; c++) {
        set_opt(fx, "hcomp_codec", codecs[c]);
        char path[PATH_MAX], name[64];
        snprintf(name, sizeof(name), "corrupt-%s", codecs[c]);
        file_path(fx, name, path, sizeof(path));
        const uint64_t len = 8 * 4096;
        unsigned char *d = text_data(len, 20);
        char seg[PATH_MAX];
        write_one_segment(fx, path, d, len, seg);
        off_t seglen = file_length(seg);

        /* a byte of the first piece's payload */
        flip_byte(seg, 16 + 3);
        expect_read_fails(fx, path, len, 0, HCOMP_E_CORRUPT, seg);
        expect_read_fails(fx, path, 7, 4089, HCOMP_E_CORRUPT, NULL);
        expect_read_fails(fx, path, 4096, 0, HCOMP_E_CORRUPT, NULL);   /* read whole, uncached */
        hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);           /* the others are fine */
        expect_bytes(f, d + 4096, len - 4096, 4096);
        close_ok(f);
        flip_byte(seg, 16 + 3);

        /* the last byte of the last piece */
        flip_byte(seg, seglen - 1);
        expect_read_fails(fx, path, 10, len - 10, HCOMP_E_CORRUPT, NULL);
        flip_byte(seg, seglen - 1);

        /* a piece header (its start offset) */
        flip_byte(seg, 2);
        expect_read_fails(fx, path, 100, 0, HCOMP_E_CORRUPT, NULL);
        flip_byte(seg, 2);

        /* a truncated segment */
        assert_int_equal(truncate(seg, seglen - 1), 0);
        expect_read_fails(fx, path, 10, len - 10, HCOMP_E_CORRUPT, seg);

        assert_int_equal(unlink(seg), 0);   /* next codec starts with one segment again */
        CHECK(hcomp_file_delete(path, &e_));
        free(d);
    }
}

static void test_missing_segment(void **state)
{
    fixture *fx = *state;
    write_config(fx, "64KiB");
    set_opt(fx, "hcomp_piece_size", "65536");
    char path[PATH_MAX];
    file_path(fx, "noseg", path, sizeof(path));
    unsigned char *d = random_data(256 * KIB, 21);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d, 256 * KIB, 0);
    close_ok(f);
    /* the slow tier's segment goes missing: what was on the fast tier still reads */
    assert_int_equal(find_segments(fx->t1), 1);
    char seg[PATH_MAX];
    snprintf(seg, sizeof(seg), "%s", found_segs[0]);
    assert_int_equal(unlink(seg), 0);
    expect_read_fails(fx, path, 256 * KIB, 0, HCOMP_E_NOENT, seg);
    expect_read_fails(fx, path, 10, 256 * KIB - 10, HCOMP_E_NOENT, seg);
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, 4096, 0);
    close_ok(f);
    free(d);
}

static void test_future_version(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "v99", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char d[10] = {0};
    pwrite_ok(f, d, sizeof(d), 0);
    close_ok(f);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char v[4] = {99, 0, 0, 0};
    assert_int_equal(pwrite(fd, v, 4, 8), 4);
    close(fd);
    off_t before = file_length(path);
    hcomp_error err;
    static const int modes[] = {HCOMP_O_RDONLY, HCOMP_O_RDWR, HCOMP_O_RDWR | HCOMP_O_CREAT};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(hcomp_file_open(path, modes[i], 0644, 1, fx->opts, &f, &err),
                         HCOMP_E_VERSION);
        assert_null(f);
        assert_non_null(strstr(err.msg, path));
        assert_non_null(strstr(err.msg, "99"));
    }
    hcomp_stats st;
    assert_int_equal(hcomp_stat_path(path, &st, &err), HCOMP_E_VERSION);
    assert_int_equal(hcomp_file_delete(path, &err), HCOMP_E_VERSION);
    assert_true(file_length(path) == before);     /* untouched */
    assert_true(hcomp_is_hcomp_file(path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip_every_codec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overwrite_two_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_holes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncate_extend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sparse_beyond_4gib, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill_to_second_tier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_room_seen_by_next_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drained_room_seen_by_next_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_writer_line_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_room_freed_by_another_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_when_not_shrinking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stat_accounting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vanished_tier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durable_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_tiers_optout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lazy_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_tier_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_piece, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_future_version, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
