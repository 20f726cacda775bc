/* Sharing one replay of the mapping log (file/log_state.c, hcomp_file_export_state and
 * hcomp_file_open_with_state): an opener given another's state holds exactly what its own
 * replay of the whole log would have built, also when records were appended after the
 * state was taken; a state that is not this mapping file's, or damaged, is refused and
 * the opener replays the log itself. Compared on random logs: several writers, overwrites,
 * truncations and growths, moves of pieces (RELOCATE records, from draining a node-local
 * tier at close), by the exported states (which hold everything a replay builds) and by
 * the bytes read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "file_fixture.h"
#include "file/file_internal.h"
#include "common/util.h"

#define SPAN (768 * KIB)

static unsigned char *state_of(hcomp_file *f, size_t *len)
{
    void *s;
    hcomp_error err;
    if (hcomp_file_export_state(f, &s, len, &err) != HCOMP_OK)
        fail_msg("export: %s", err.msg);
    return s;
}

/* Two states hold the same, but for the generation (a count of refreshes: it differs with
 * how the records were read, not with what they built) and the checksum over it. */
static void expect_same_state(const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
    assert_int_equal(la, lb);
    assert_true(la > 64 + 4);
    assert_memory_equal(a, b, 56);
    assert_memory_equal(a + 64, b + 64, la - 64 - 4);
}

static hcomp_file *open_with(fixture *fx, const char *path, const void *s, size_t len)
{
    hcomp_file *f = NULL;
    hcomp_error err;
    if (hcomp_file_open_with_state(path, HCOMP_O_RDONLY, 0, 1, fx->opts, s, len, &f, &err) != HCOMP_OK)
        fail_msg("open with state: %s", err.msg);
    return f;
}

/* n random operations (writes, truncations, growths) by `writers` handles of their own,
 * each closed at the end (the node-local tier is drained at close: RELOCATE records) */
static void random_ops(fixture *fx, const char *path, uint64_t *s, int n, int writers)
{
    hcomp_file *w[4];
    for (int i = 0; i < writers; i++)
        w[i] = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char *data = random_data(96 * KIB, *s);
    for (int k = 0; k < n; k++) {
        hcomp_file *f = w[rng(s) % (uint64_t) writers];
        uint64_t what = rng(s) % 10, off = rng(s) % (SPAN - 96 * KIB), len = 1 + rng(s) % (96 * KIB);
        if (what < 8)
            pwrite_ok(f, data + rng(s) % (96 * KIB - len + 1), len, off);
        else if (what == 8)
            CHECK(hcomp_file_truncate(f, off, &e_));
        else
            CHECK(hcomp_file_extend(f, off + len, &e_));
    }
    free(data);
    for (int i = 0; i < writers; i++)
        close_ok(w[i]);
}

/* what two handles hold, field by field (the state's bytes could agree on a wrong layout) */
static void expect_same_tables(const hcomp_file *a, const hcomp_file *b)
{
    assert_int_equal(a->npieces, b->npieces);
    for (size_t i = 0; i < a->npieces; i++) {
        const hcomp_piece *x = &a->pieces[i], *y = &b->pieces[i];
        assert_int_equal(x->seg, y->seg);
        assert_int_equal(x->seg_off, y->seg_off);
        assert_int_equal(x->stored_len, y->stored_len);
        assert_int_equal(x->raw_len, y->raw_len);
        assert_int_equal(x->crc, y->crc);
        assert_int_equal(x->codec, y->codec);
        assert_int_equal(x->filter, y->filter);
        assert_int_equal(x->level, y->level);
        assert_int_equal(x->frame, y->frame);
        assert_int_equal(x->start, y->start);
    }
    assert_int_equal(a->map.n, b->map.n);
    assert_memory_equal(a->map.v, b->map.v, a->map.n * sizeof(*a->map.v));
    assert_int_equal(a->nsegs, b->nsegs);
    for (size_t i = 0; i < a->nsegs; i++) {
        assert_int_equal(a->segs[i].id, b->segs[i].id);
        assert_string_equal(a->segs[i].tier, b->segs[i].tier);
        assert_string_equal(a->segs[i].node, b->segs[i].node);
        assert_true((a->segs[i].path == NULL) == (b->segs[i].path == NULL));
        if (a->segs[i].path)
            assert_string_equal(a->segs[i].path, b->segs[i].path);
    }
    assert_int_equal(a->size, b->size);
}

static void expect_same_file(hcomp_file *a, hcomp_file *b);

/* b holds what the state s (of handle ref, or NULL) holds, and reads like ref; then b is
 * closed */
static void expect_like(hcomp_file *b, const unsigned char *s, size_t l, hcomp_file *ref)
{
    size_t lb;
    unsigned char *sb = state_of(b, &lb);
    expect_same_state(s, l, sb, lb);
    if (ref)
        expect_same_file(ref, b);
    close_ok(b);
    free(sb);
}

static void expect_same_file(hcomp_file *a, hcomp_file *b)
{
    expect_same_tables(a, b);
    uint64_t sa = size_of(a), sb = size_of(b);
    assert_int_equal(sa, sb);
    unsigned char *x = malloc(sa + 1), *y = malloc(sb + 1);
    assert_int_equal(pread_ok(a, x, sa, 0), sa);
    assert_int_equal(pread_ok(b, y, sb, 0), sb);
    assert_memory_equal(x, y, sa ? sa : 1);
    free(x);
    free(y);
}

static void test_state_equals_own_replay(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_drain", "close");
    set_opt(fx, "hcomp_piece_size", "64KiB");
    set_opt(fx, "hcomp_reclaim", "never");     /* the log stays the same file: its tail grows */
    set_opt(fx, "hcomp_format", "2");          /* one shared log (format 3: test_wlog_state) */
    write_config(fx, "256KiB");
    char path[PATH_MAX];
    file_path(fx, "shared.hc", path, sizeof(path));
    uint64_t s = 7;
    random_ops(fx, path, &s, 120, 3);

    hcomp_file *a = open_file(fx, path, HCOMP_O_RDONLY);
    size_t la;
    unsigned char *sa = state_of(a, &la);
    hcomp_file *b = open_with(fx, path, sa, la);
    assert_true(b->consumed == a->consumed);
    expect_like(b, sa, la, a);

    /* records appended after the state was taken: replayed on top of it */
    hcomp_file *t = open_file(fx, path, HCOMP_O_RDWR);
    CHECK(hcomp_file_truncate(t, 300 * KIB, &e_));
    close_ok(t);
    random_ops(fx, path, &s, 80, 2);
    t = open_file(fx, path, HCOMP_O_RDWR);
    CHECK(hcomp_file_extend(t, SPAN + 5000, &e_));
    close_ok(t);
    b = open_with(fx, path, sa, la);
    /* imported (a generation of its own, then one for the tail), where a replay of the
     * whole log would count one */
    assert_int_equal(b->generation, 2);
    hcomp_file *c = open_file(fx, path, HCOMP_O_RDONLY);
    size_t lc;
    unsigned char *sc = state_of(c, &lc);
    expect_like(b, sc, lc, c);
    close_ok(c);
    close_ok(a);
    free(sa);
    free(sc);
}

/* states that are not this mapping file's, or damaged: refused, the log replayed */
static void test_foreign_or_damaged_state_refused(void **state)
{
    fixture *fx = *state;
    char p1[PATH_MAX], p2[PATH_MAX];
    file_path(fx, "one.hc", p1, sizeof(p1));
    file_path(fx, "two.hc", p2, sizeof(p2));
    uint64_t s = 11;
    random_ops(fx, p1, &s, 30, 1);
    random_ops(fx, p2, &s, 30, 2);
    hcomp_file *a1 = open_file(fx, p1, HCOMP_O_RDONLY), *a2 = open_file(fx, p2, HCOMP_O_RDONLY);
    size_t l1, l2;
    unsigned char *s1 = state_of(a1, &l1), *s2 = state_of(a2, &l2);

    /* another file's state */
    hcomp_file *b = open_with(fx, p2, s1, l1);
    expect_like(b, s2, l2, a2);

    /* damaged in transit: every kind of cut, and flipped bytes */
    size_t cuts[] = {0, 7, 100, l2 / 2, l2 - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        b = open_with(fx, p2, s2, cuts[i]);
        expect_same_file(a2, b);
        close_ok(b);
    }
    unsigned char *bad = malloc(l2);
    for (size_t at = 0; at < l2; at += l2 / 17 + 1) {
        memcpy(bad, s2, l2);
        bad[at] ^= 0x40;
        b = open_with(fx, p2, bad, l2);
        assert_int_equal(b->generation, 1);     /* replayed itself */
        expect_like(b, s2, l2, NULL);
    }
    /* well formed, checksum right, but an extent reaching past its piece (the fuzzer's
     * find: reads went past the piece's block table) */
    memcpy(bad, s2, l2);
    size_t ext0 = l2 - 4 - a2->map.n * 24;
    hcomp_put_u32(bad + ext0 + 20, 0x7fffffff);
    hcomp_put_u32(bad + l2 - 4, hcomp_crc32(bad, l2 - 4));
    b = open_with(fx, p2, bad, l2);
    assert_int_equal(b->generation, 1);     /* refused: replayed itself */
    expect_same_file(a2, b);
    close_ok(b);
    free(bad);

    /* the log replaced since (as a compaction does: a new file renamed over it): the old
     * state names another inode */
    close_ok(a2);
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.new", p2);
    FILE *in = fopen(p2, "rb"), *o = fopen(tmp, "wb");
    assert_non_null(in);
    assert_non_null(o);
    unsigned char chunk[4096];
    for (size_t k; (k = fread(chunk, 1, sizeof(chunk), in)) > 0;)
        assert_int_equal(fwrite(chunk, 1, k, o), k);
    assert_int_equal(fclose(in), 0);
    assert_int_equal(fclose(o), 0);
    assert_int_equal(rename(tmp, p2), 0);
    a2 = open_file(fx, p2, HCOMP_O_RDONLY);
    b = open_with(fx, p2, s2, l2);
    assert_int_equal(b->generation, 1);     /* refused: replayed itself */
    expect_same_file(a2, b);
    size_t la2;
    unsigned char *sa2 = state_of(a2, &la2);
    expect_like(b, sa2, la2, NULL);
    close_ok(a1);
    close_ok(a2);
    free(s1);
    free(s2);
    free(sa2);
}

/* a replay reading the log in chunks of `chunk` bytes builds what one read whole builds:
 * the same state, damage passed over and lost, and the same bytes */
static void expect_chunked_like_whole(fixture *fx, const char *path, int readable)
{
    size_t saved = hcomp_log_chunk;
    hcomp_file *a = open_file(fx, path, HCOMP_O_RDONLY);
    size_t la;
    unsigned char *sa = state_of(a, &la);
    static const size_t chunks[] = {1, 5, 12, 13, 100, 333, 4096};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        hcomp_log_chunk = chunks[i];
        hcomp_file *b = open_file(fx, path, HCOMP_O_RDONLY);
        hcomp_log_chunk = saved;
        assert_true(b->consumed == a->consumed);
        assert_true(b->skipped == a->skipped);
        assert_true(b->lost_records == a->lost_records);
        assert_true(b->lost_at == a->lost_at);
        assert_true(b->tail_stats == a->tail_stats);
        if (readable) {
            expect_like(b, sa, la, a);
        } else {
            expect_same_tables(a, b);
            close_ok(b);
        }
    }
    close_ok(a);
    free(sa);
}

static void test_chunked_replay_equals_whole(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_drain", "close");
    set_opt(fx, "hcomp_piece_size", "64KiB");
    set_opt(fx, "hcomp_reclaim", "never");
    write_config(fx, "256KiB");
    char path[PATH_MAX];
    set_opt(fx, "hcomp_format", "2");          /* chunks of the one shared log */
    file_path(fx, "chunked.hc", path, sizeof(path));
    uint64_t s = 11;
    random_ops(fx, path, &s, 100, 3);
    expect_chunked_like_whole(fx, path, 1);

    /* a torn append at the end (half a record): both stop before it */
    off_t end = file_length(path);
    int fd = open(path, O_RDONLY);
    unsigned char rec[40];
    assert_int_equal(pread(fd, rec, sizeof(rec), 64), (ssize_t) sizeof(rec));
    close(fd);
    fd = open(path, O_WRONLY | O_APPEND);
    assert_int_equal(write(fd, rec, 20), 20);
    close(fd);
    expect_chunked_like_whole(fx, path, 1);
    assert_int_equal(truncate(path, end), 0);

    /* damage in the middle of the log, then records after it: passed over alike */
    flip_byte(path, end / 2);
    flip_byte(path, end / 2 + 1);
    expect_chunked_like_whole(fx, path, 0);
    /* a long stretch of garbage: its end is found past many chunks */
    unsigned char junk[700];
    memset(junk, 0xa5, sizeof(junk));
    fd = open(path, O_WRONLY);
    assert_int_equal(pwrite(fd, junk, sizeof(junk), end / 3), (ssize_t) sizeof(junk));
    close(fd);
    expect_chunked_like_whole(fx, path, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_state_equals_own_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_or_damaged_state_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunked_replay_equals_whole, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
