/* Read-ahead of sequential reads (file/read_ahead.c, hint hcomp_read_ahead). A file is
 * written backwards, a piece at a time, so that its segment holds the pieces in the
 * reverse of their logical order (as two writers' segments or a drain's moves make
 * happen): the kernel's own read-ahead of the segment cannot serve a reader going
 * forward. After the segment's pages are dropped from the page cache, two sequential
 * reads must bring the pieces of the next window into it (seen with mincore), and
 * nothing beyond the window; with the hint at 0, or with reads that are not sequential,
 * nothing is advised. Strided reads (one piece every fourth) bring the pattern's next reads
 * and nothing between them. Where the page cache cannot be emptied (a segment on tmpfs), the
 * residency checks are left out and the advised byte counts are still checked. Ranges
 * already in the page cache are not advised again (hcomp_advise_willneed), but counted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "file_fixture.h"
#include "file/file_internal.h"
#include "common/util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PIECE (64 * KIB)
#define NPIECES 64

/* a file of NPIECES pieces of PIECE bytes stored as they are, written last piece first */
static unsigned char *write_backwards(fixture *fx, const char *path)
{
    set_opt(fx, "hcomp_codec", "none");
    set_opt(fx, "hcomp_piece_size", "65536");
    unsigned char *d = random_data(NPIECES * PIECE, 7);
    hcomp_file *f = open_file(fx, path, HCOMP_O_WRONLY | HCOMP_O_CREAT);
    for (int i = NPIECES - 1; i >= 0; i--)
        pwrite_ok(f, d + (uint64_t) i * PIECE, PIECE, (uint64_t) i * PIECE);
    hcomp_error err;
    if (hcomp_file_sync(f, &err) != HCOMP_OK)  /* clean pages: they can be dropped */
        fail_msg("sync: %s", err.msg);
    close_ok(f);
    return d;
}

/* Drop every segment of f from the page cache. */
static void drop_segments(hcomp_file *f)
{
    for (size_t i = 0; i < f->nsegs; i++) {
        if (f->segs[i].path == NULL)
            continue;
        int fd = open(f->segs[i].path, O_RDONLY);
        if (fd < 0 && errno == ENOENT)
            continue;   /* a rewritten file's dead segment, removed at close (reclaim.c) */
        assert_true(fd >= 0);
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        close(fd);
    }
}

/* The fraction of the pages of the stored pieces behind logical [a, b) that are in
 * the page cache. */
static double resident(hcomp_file *f, uint64_t a, uint64_t b)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t in = 0, all = 0;
    for (size_t i = hcomp_extent_map_find(&f->map, a); i < f->map.n && f->map.v[i].off < b; i++) {
        const hcomp_piece *p = &f->pieces[f->map.v[i].piece];
        const hcomp_segment *s = &f->segs[p->seg];
        uint64_t lo = p->seg_off / (uint64_t) page * (uint64_t) page;
        uint64_t hi = p->seg_off + HCOMP_PIECE_HEADER_SIZE + p->stored_len;
        int fd = open(s->path, O_RDONLY);
        assert_true(fd >= 0);
        void *m = mmap(NULL, hi - lo, PROT_READ, MAP_SHARED, fd, (off_t) lo);
        assert_true(m != MAP_FAILED);
        size_t np = (hi - lo + (uint64_t) page - 1) / (uint64_t) page;
        unsigned char *v = malloc(np);
        assert_non_null(v);
        assert_int_equal(mincore(m, hi - lo, v), 0);
        for (size_t k = 0; k < np; k++)
            in += v[k] & 1;
        all += np;
        free(v);
        munmap(m, hi - lo);
        close(fd);
    }
    return all ? (double) in / (double) all : 0.0;
}

/* wait (up to 3 s) until the pieces behind [a, b) are all in the page cache */
static double wait_resident(hcomp_file *f, uint64_t a, uint64_t b)
{
    double r = 0;
    for (int i = 0; i < 300 && (r = resident(f, a, b)) < 1.0; i++)
        nanosleep(&(struct timespec) {0, 10 * 1000 * 1000}, NULL);
    return r;
}

/* The file written backwards (its bytes in *d), reopened with hcomp_read_ahead=read_ahead
 * (NULL: the default) after its segment left the page cache; *evictable: whether it did. */
static hcomp_file *backwards_cold(fixture *fx, const char *read_ahead, unsigned char **d,
                                  int *evictable)
{
    char path[PATH_MAX];
    file_path(fx, "backwards", path, sizeof(path));
    *d = write_backwards(fx, path);
    if (read_ahead != NULL)     /* else the default */
        set_opt(fx, "hcomp_read_ahead", read_ahead);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    drop_segments(f);
    *evictable = resident(f, 0, NPIECES * PIECE) == 0.0;
    if (!*evictable)
        print_message("(the segments stay in the page cache here: residency not checked)\n");
    return f;
}

/* Two sequential reads: the first window is what the first read's size (at least 256 KiB)
 * covers after it, the second twice that: logical [128 KiB, 640 KiB) is advised by then,
 * and the pieces after it are not. */
static void test_sequential_reads_bring_next_window(void **state)
{
    unsigned char *d;
    int evictable;
    hcomp_file *f = backwards_cold(*state, "16MiB", &d, &evictable);
    expect_bytes(f, d, PIECE, 0);
    expect_bytes(f, d + PIECE, PIECE, PIECE);
    uint64_t stored = HCOMP_PIECE_HEADER_SIZE + f->pieces[0].stored_len;
    /* pieces [1, 10) advised (the first read's window [64K, 320K), then [320K, 640K)),
     * neighbours in the segment in one advice each */
    assert_true(f->stats.readahead_bytes >= 9 * stored);
    assert_true(f->stats.readahead_bytes <= 9 * stored + 2 * 64 * KIB);
    if (evictable) {
        double r = wait_resident(f, 2 * PIECE, 10 * PIECE);
        if (r < 1.0)
            fail_msg("the next window is %.0f%% in the page cache after sequential reads", 100 * r);
        double beyond = resident(f, 16 * PIECE, NPIECES * PIECE);
        if (beyond > 0.0)
            fail_msg("%.0f%% of what lies beyond the window was read ahead", 100 * beyond);
    }
    /* on to the end: never more advised than is stored, and the bytes are right */
    uint64_t before = f->stats.readahead_bytes;
    for (uint64_t off = 2 * PIECE; off < NPIECES * PIECE; off += PIECE)
        expect_bytes(f, d + off, PIECE, off);
    assert_true(f->stats.readahead_bytes > before);
    assert_true(f->stats.readahead_bytes <= NPIECES * stored);
    close_ok(f);
    free(d);
}

/* hcomp_read_ahead=0: the same reads advise nothing, and the next pieces stay cold */
static void test_read_ahead_off(void **state)
{
    unsigned char *d;
    int evictable;
    hcomp_file *f = backwards_cold(*state, "0", &d, &evictable);
    expect_bytes(f, d, PIECE, 0);
    expect_bytes(f, d + PIECE, PIECE, PIECE);
    assert_true(f->stats.readahead_bytes == 0);
    if (evictable) {
        nanosleep(&(struct timespec) {0, 200 * 1000 * 1000}, NULL);
        /* (piece 2's last page holds the start of piece 1, which was read) */
        double r = resident(f, 3 * PIECE, 10 * PIECE);
        if (r > 0.0)
            fail_msg("%.0f%% of the next pieces is in the page cache without read-ahead", 100 * r);
    }
    close_ok(f);
    free(d);
}

/* MPI's access_style=random leaves read-ahead to the pattern the reads show: a reader that
 * declared random access but reads on sequentially is read ahead of (BD-CATS-IO's random
 * subset reads in a strided pattern, which read-ahead serves: docs/ENGINE.md) */
static void test_access_style_random_keeps_read_ahead(void **state)
{
    unsigned char *d;
    int evictable;
    set_opt(*state, "access_style", "write_once,random");
    hcomp_file *f = backwards_cold(*state, NULL, &d, &evictable);
    (void) evictable;
    expect_bytes(f, d, PIECE, 0);
    expect_bytes(f, d + PIECE, PIECE, PIECE);
    assert_true(f->stats.readahead_bytes > 0);
    close_ok(f);
    free(d);
}

/* reads that do not continue each other advise nothing */
static void test_scattered_reads_not_read_ahead(void **state)
{
    unsigned char *d;
    int evictable;
    hcomp_file *f = backwards_cold(*state, "16MiB", &d, &evictable);
    (void) evictable;
    static const uint64_t at[] = {20, 3, 41, 7, 33, 12};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
        expect_bytes(f, d + at[i] * PIECE + 100, 5000, at[i] * PIECE + 100);
    assert_true(f->stats.readahead_bytes == 0);
    close_ok(f);
    free(d);
}

/* Reads of one piece every fourth piece, from offset 0 (each rank's slab of array after
 * array; IOR's segments): after the third, the pattern's next eight reads are advised (the
 * hint's 16 MiB hold more), each piece alone (they are 192 KiB apart in the segment), and
 * nothing between them; each later read of the pattern advises one more; a read of another
 * length ends the pattern. */
static void test_strided_reads_bring_next_reads(void **state)
{
    unsigned char *d;
    int evictable;
    hcomp_file *f = backwards_cold(*state, "16MiB", &d, &evictable);
    uint64_t stored = HCOMP_PIECE_HEADER_SIZE + f->pieces[0].stored_len;
    expect_bytes(f, d, PIECE, 0);       /* from 0: a sequential run's first read too */
    uint64_t seq = f->stats.readahead_bytes;
    expect_bytes(f, d + 4 * PIECE, PIECE, 4 * PIECE);
    assert_true(f->stats.readahead_bytes == seq);
    expect_bytes(f, d + 8 * PIECE, PIECE, 8 * PIECE);
    assert_true(f->stats.readahead_bytes == seq + 8 * stored);
    if (evictable) {
        for (int k = 12; k <= 40; k += 4) {
            double r = wait_resident(f, (uint64_t) k * PIECE, (uint64_t) (k + 1) * PIECE);
            if (r < 1.0)
                fail_msg("piece %d, the pattern's next, is %.0f%% in the page cache", k, 100 * r);
        }
        /* between them: at most the two pages each shares with an advised neighbour */
        double between = resident(f, 9 * PIECE, 12 * PIECE);
        if (between > 0.1)
            fail_msg("%.0f%% of the pieces between the pattern's reads was read ahead",
                     100 * between);
        if (resident(f, 45 * PIECE, NPIECES * PIECE) > 0.0)
            fail_msg("pieces beyond the pattern's next eight reads were read ahead");
    }
    expect_bytes(f, d + 12 * PIECE, PIECE, 12 * PIECE);
    assert_true(f->stats.readahead_bytes == seq + 9 * stored);      /* piece 44 */
    /* a shorter read: its run's length is known only when the run ends, so the pattern
     * goes on once more (piece 48), and the next run, shorter, ends it */
    expect_bytes(f, d + 16 * PIECE, PIECE / 2, 16 * PIECE);
    assert_true(f->stats.readahead_bytes == seq + 10 * stored);
    expect_bytes(f, d + 20 * PIECE, PIECE / 2, 20 * PIECE);
    assert_true(f->stats.readahead_bytes == seq + 10 * stored);
    close_ok(f);
    free(d);
}

/* Runs of two sequential reads of a piece each, every sixth piece (IOR's segments read a
 * transfer at a time; a collective read's aggregator call after call): at the third run's
 * first read, the rest of that run (piece 13) and the next eight runs (two pieces each,
 * neighbours in the segment: one advice each) are advised, and nothing in the gaps between
 * runs (a sequential window would run into them); the run's second read and the next run
 * advise nothing new. A run longer than the pattern's ends it. */
static void test_strided_runs_bring_next_runs(void **state)
{
    unsigned char *d;
    int evictable;
    hcomp_file *f = backwards_cold(*state, "16MiB", &d, &evictable);
    uint64_t stored = HCOMP_PIECE_HEADER_SIZE + f->pieces[0].stored_len;
    for (uint64_t run = 0; run < 12; run += 6) {
        expect_bytes(f, d + run * PIECE, PIECE, run * PIECE);
        expect_bytes(f, d + (run + 1) * PIECE, PIECE, (run + 1) * PIECE);
    }
    uint64_t before = f->stats.readahead_bytes;
    expect_bytes(f, d + 12 * PIECE, PIECE, 12 * PIECE);
    assert_true(f->stats.readahead_bytes == before + 17 * stored);
    if (evictable) {
        for (int k = 18; k <= 60; k += 6) {
            double r = wait_resident(f, (uint64_t) k * PIECE, (uint64_t) (k + 2) * PIECE);
            if (r < 1.0)
                fail_msg("run at piece %d, the pattern's next, is %.0f%% in the page cache", k,
                         100 * r);
        }
        double gap = resident(f, 15 * PIECE, 17 * PIECE);
        if (gap > 0.1)
            fail_msg("%.0f%% of the gap after the third run was read ahead", 100 * gap);
    }
    expect_bytes(f, d + 13 * PIECE, PIECE, 13 * PIECE);
    expect_bytes(f, d + 18 * PIECE, PIECE, 18 * PIECE);
    assert_true(f->stats.readahead_bytes == before + 17 * stored);
    expect_bytes(f, d + 19 * PIECE, PIECE, 19 * PIECE);
    expect_bytes(f, d + 20 * PIECE, PIECE, 20 * PIECE);     /* longer than the pattern's */
    uint64_t after = f->stats.readahead_bytes;
    expect_bytes(f, d + 26 * PIECE, PIECE, 26 * PIECE);     /* not a pattern's run */
    assert_true(f->stats.readahead_bytes == after);
    close_ok(f);
    free(d);
}

/* The fraction of the pages of [off, off + len) of piece idx's segment in the page cache. */
static double resident_at(hcomp_file *f, uint32_t idx, uint64_t off, uint64_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    const hcomp_segment *s = &f->segs[f->pieces[idx].seg];
    uint64_t lo = off / (uint64_t) page * (uint64_t) page, hi = off + len;
    int fd = open(s->path, O_RDONLY);
    assert_true(fd >= 0);
    void *m = mmap(NULL, hi - lo, PROT_READ, MAP_SHARED, fd, (off_t) lo);
    assert_true(m != MAP_FAILED);
    size_t np = (hi - lo + (uint64_t) page - 1) / (uint64_t) page, in = 0;
    unsigned char *v = malloc(np);
    assert_non_null(v);
    assert_int_equal(mincore(m, hi - lo, v), 0);
    for (size_t k = 0; k < np; k++)
        in += v[k] & 1;
    free(v);
    munmap(m, hi - lo);
    close(fd);
    return (double) in / (double) np;
}

/* Small strided reads (a random subset's 4 KiB of each array) advise of each read ahead
 * only its piece's header and table and the 4 KiB block it wants (their place follows from
 * the record for pieces stored as they are), not the whole piece: eight reads ahead at the
 * third read, one more at each later one. */
static void test_small_strided_reads_advise_their_blocks(void **state)
{
    unsigned char *d;
    int evictable;
    hcomp_file *f = backwards_cold(*state, "16MiB", &d, &evictable);
    /* a piece's header, table and blocks 0 to 2: neighbours closer than 64 KiB in its
     * segment are advised as one range */
    uint64_t each = HCOMP_PIECE_HEADER_SIZE + hcomp_block_table_size(PIECE / 4096) + 3 * 4096;
    for (uint64_t k = 0; k < 24; k += 4)
        expect_bytes(f, d + k * PIECE + 8192, 4096, k * PIECE + 8192);
    assert_true(f->stats.readahead_bytes == 11 * each);    /* pieces 12, 16, ..., 52 */
    if (evictable) {
        uint32_t idx = f->map.v[hcomp_extent_map_find(&f->map, 32 * PIECE)].piece;
        const hcomp_piece *p = &f->pieces[idx];
        uint64_t blocks = p->seg_off + each - 3 * 4096;
        double r = 0;
        for (int i = 0; i < 300 && (r = resident_at(f, idx, blocks + 8192, 4096)) < 1.0; i++)
            nanosleep(&(struct timespec) {0, 10 * 1000 * 1000}, NULL);
        if (r < 1.0)
            fail_msg("the block a strided read ahead wants is %.0f%% in the page cache", 100 * r);
        double rest = resident_at(f, idx, blocks + 4 * 4096, 12 * 4096);
        if (rest > 0.0)
            fail_msg("%.0f%% of the rest of a piece of small strided reads was read ahead",
                     100 * rest);
    }
    close_ok(f);
    free(d);
}

/* the same strided reads with the hint at 0 advise nothing */
static void test_strided_read_ahead_off(void **state)
{
    unsigned char *d;
    int evictable;
    hcomp_file *f = backwards_cold(*state, "0", &d, &evictable);
    (void) evictable;
    for (uint64_t k = 0; k < 24; k += 4)
        expect_bytes(f, d + k * PIECE, PIECE, k * PIECE);
    assert_true(f->stats.readahead_bytes == 0);
    close_ok(f);
    free(d);
}

/* whether cachestat(2) answers here (Linux 6.5 and later, where it is not refused) */
static int cachestat_answers(int fd)
{
    struct { uint64_t off, len; } r = {0, 4096};
    uint64_t st[5];
    return syscall(451, fd, &r, st, 0) == 0;
}

/* hcomp_advise_willneed: a large range whose pages are in the page cache is left alone; a
 * small range, or one with a page missing at its start, middle or end, is advised */
static void test_advice_skips_cached_ranges(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "advice", path, sizeof(path));
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    unsigned char *d = random_data(MIB, 3);
    assert_int_equal(pwrite(fd, d, MIB, 0), (ssize_t) MIB);
    assert_int_equal(ftruncate(fd, 4 * MIB), 0);        /* a hole after it: no pages */
    int answers = cachestat_answers(fd);
    if (!answers)
        print_message("(cachestat(2) does not answer here: every range is advised)\n");
    assert_int_equal(hcomp_advise_willneed(fd, 3 * MIB, MIB), 1);   /* the hole */
    assert_int_equal(hcomp_advise_willneed(fd, 512 * KIB, 2 * MIB), 1);  /* its end in it */
    assert_int_equal(hcomp_advise_willneed(fd, 0, MIB), answers ? 0 : 1);  /* just written */
    assert_int_equal(hcomp_advise_willneed(fd, 0, 16 * KIB), 1);    /* small: not asked */
    assert_int_equal(hcomp_advise_willneed(-1, 0, MIB), -1);
    assert_int_equal(hcomp_advise_willneed(-1, 0, 16 * KIB), -1);
    close(fd);
    free(d);

    /* a file read again at once: its read-ahead is chosen as before, and not advised */
    file_path(fx, "warm", path, sizeof(path));
    d = write_backwards(fx, path);
    set_opt(fx, "hcomp_read_ahead", "16MiB");
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    for (uint64_t off = 0; off < NPIECES * PIECE; off += PIECE)
        expect_bytes(f, d + off, PIECE, off);
    assert_true(f->stats.readahead_bytes > 0);
    if (answers)
        assert_true(f->stats.advice_cached_bytes >= 9 * PIECE);
    close_ok(f);
    free(d);
}

static void test_hint_bounds(void **state)
{
    (void) state;
    hcomp_options *o = hcomp_options_new();
    hcomp_error err;
    assert_int_equal(hcomp_options_set(o, "hcomp_read_ahead", "2GiB", &err), HCOMP_E_INVAL);
    assert_non_null(strstr(err.msg, "hcomp_read_ahead"));
    assert_int_equal(hcomp_options_set(o, "hcomp_read_ahead", "lots", &err), HCOMP_E_INVAL);
    assert_int_equal(hcomp_options_set(o, "hcomp_read_ahead", "64MiB", &err), HCOMP_OK);
    char v[64];
    assert_int_equal(hcomp_options_get(o, "hcomp_read_ahead", v, sizeof(v)), HCOMP_OK);
    assert_string_equal(v, "67108864");
    hcomp_options_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sequential_reads_bring_next_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_ahead_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_access_style_random_keeps_read_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scattered_reads_not_read_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strided_reads_bring_next_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strided_runs_bring_next_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_strided_reads_advise_their_blocks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_strided_read_ahead_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_advice_skips_cached_ranges, setup, teardown),
        cmocka_unit_test(test_hint_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
