/* Pieces framed in blocks (format version 2, docs/FORMAT.md): reads of every alignment
 * across block and piece edges against a model, with coded and stored-as-is blocks;
 * what a small read fetches from storage; a damaged block fails the reads that touch it
 * and only those, naming its range; the block table's checks; readers in several threads at
 * once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <cmocka.h>

#include "file_fixture.h"
#include "hcomp_model.h"
#include "file/tools.h"
#include "engine/framing.h"
#include "engine/filter.h"
#include "common/util.h"
#include "file/file_internal.h"
#include "file/options.h"
#include "tiers/piece_header.h"
#include "common/util.h"
#include "../proc_io.h"
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif


/* text and noise, alternating every 12 KiB: some blocks shrink, some are stored as
 * they are, and some pieces hold both */
static unsigned char *mixed_data(size_t n, uint64_t seed)
{
    unsigned char *t = text_data(n, (unsigned) seed), *r = random_data(n, seed);
    for (size_t i = 0; i < n; i++)
        if ((i / (12 * KIB)) % 3 == 2)
            t[i] = r[i];
    free(r);
    return t;
}

static void write_model(fixture *fx, const char *name, const char *codec, char *path,
                        unsigned char **model, uint64_t *len)
{
    set_opt(fx, "hcomp_codec", codec);
    set_opt(fx, "hcomp_piece_size", "65536");
    set_opt(fx, "hcomp_block_size", "8KiB");
    file_path(fx, name, path, PATH_MAX);
    *len = 5 * 65536 + 12345;      /* the last piece and its last block partial */
    unsigned char *d = mixed_data(*len, 7);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d, *len, 0);
    /* an unaligned overwrite: pieces whose extents start inside a block */
    unsigned char *o = text_data(30000, 99);
    pwrite_ok(f, o, 30000, 70001);
    memcpy(d + 70001, o, 30000);
    free(o);
    close_ok(f);
    *model = d;
}

static void test_reads_every_alignment(void **state)
{
    fixture *fx = *state;
    static const char *codecs[] = {"zstd", "lz4", "none", "blosc-lz4"};
    for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
        char path[PATH_MAX], name[64];
        snprintf(name, sizeof(name), "align-%s", codecs[c]);
        unsigned char *d;
        uint64_t len;
        write_model(fx, name, codecs[c], path, &d, &len);
        static const uint64_t offs[] = {0, 1, 4095, 4096, 8191, 8192, 8193, 65535, 65536, 65537,
                                        70000, 70001, 100001, 131071, 262143, 327679, 327680};
        static const uint64_t lens[] = {1, 7, 4096, 8192, 8193, 16385, 65536, 70000, 200000};
        for (int cold = 0; cold < 2; cold++) {
            hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
            for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
                for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
                    uint64_t o = offs[i], n = lens[j] < len - o ? lens[j] : len - o;
                    if (cold) {     /* a new opener each time: no cached block or table */
                        close_ok(f);
                        f = open_file(fx, path, HCOMP_O_RDONLY);
                    }
                    expect_bytes(f, d + o, n, o);
                }
            expect_bytes(f, d, len, 0);
            close_ok(f);
        }
        /* the pieces are framed in 8 KiB blocks, some coded, some stored as they are */
        hcomp_stats st;
        stat_ok(path, &st);
        if (strcmp(codecs[c], "none") != 0)
            assert_true(st.codec[HCOMP_CODEC_NONE].pieces < st.pieces);
        free(d);
    }
}

/* The bytes that reads of 4 KiB at n random offsets of f (len bytes, d) read from
 * storage, after a first read that replays the log; every read checked. */
static uint64_t random_reads_fetch(hcomp_file *f, const unsigned char *d, uint64_t len, int n,
                                   uint64_t seed)
{
    expect_bytes(f, d, 1, 0);
    uint64_t before = (uint64_t) proc_bytes_read();
    for (int i = 0; i < n; i++) {
        uint64_t o = rng(&seed) % (len - 4096);
        expect_bytes(f, d + o, 4096, o);
    }
    return (uint64_t) proc_bytes_read() - before;
}

/* 4 KiB reads of a file of 1 MiB zstd pieces in 8 KiB blocks (the hint key=value gives
 * them) fetch their blocks, not their pieces (nor the tables of the whole file); the
 * bytes read back, whole too; the statistics count every piece in 8 KiB blocks. */
static void small_reads_fetch_blocks(fixture *fx, const char *key, const char *value,
                                     const char *name)
{
    set_opt(fx, "hcomp_codec", "zstd");
    set_opt(fx, key, value);
    char path[PATH_MAX];
    file_path(fx, name, path, sizeof(path));
    const uint64_t len = 8u << 20;
    unsigned char *d = mixed_data(len, 11);
    write_whole(fx, path, d, len);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    const int reads = 32;
    uint64_t touched = random_reads_fetch(f, d, len, reads, 5);
    /* a 4 KiB read touches at most two blocks, a piece header and table each */
    uint64_t most = (uint64_t) reads * 2 * (8192 + 16 + 8 + 8 * 128);
    if (touched > most)
        fail_msg("%s=%s: %d reads of 4 KiB fetched %llu bytes (at most %llu expected; a piece "
                 "is 1 MiB)", key, value, reads, (unsigned long long) touched,
                 (unsigned long long) most);
    for (size_t i = 0; i < f->npieces; i++) {
        assert_int_equal(f->pieces[i].codec, HCOMP_CODEC_ZSTD);
        assert_int_equal(hcomp_frame_block_size(f->pieces[i].frame), 8192);
    }
    expect_bytes(f, d, len, 0);
    close_ok(f);
    hcomp_stats st;
    hcomp_frame_stats frame[HCOMP_STATS_FRAMES];
    hcomp_error e;
    assert_int_equal(hcomp_stat_path_frames(path, &st, frame, &e), HCOMP_OK);
    assert_int_equal(frame[hcomp_frame_of_block_size(8192)].pieces, st.pieces);
    assert_int_equal(frame[hcomp_frame_of_block_size(8192)].raw_bytes, len);
    free(d);
}

static void test_small_reads_fetch_blocks(void **state)
{
    small_reads_fetch_blocks(*state, "hcomp_block_size", "8192", "sparse-reads");
}

/* MPI's access_style=random gives the same blocks under "auto" */
static void test_access_random_file(void **state)
{
    small_reads_fetch_blocks(*state, "access_style", "random", "random-access");
}

/* Pieces that do not compress are framed in 4 KiB blocks whatever the block size (here
 * the default, 256 KiB): a 4 KiB read of them fetches 4 or 8 KiB and a table, not a
 * 256 KiB block; the file is no more than 0.2% larger than its data for it. */
static void test_small_reads_of_pieces_stored_as_they_are(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "as-is-reads", path, sizeof(path));
    const uint64_t len = 8u << 20;
    unsigned char *d = random_data(len, 12);
    write_whole(fx, path, d, len);
    hcomp_stats st;
    stat_ok(path, &st);
    assert_true(st.codec[HCOMP_CODEC_NONE].pieces == st.pieces);    /* premise: noise */
    assert_true(st.stored_bytes <= len + len / 500 + 64 * st.pieces);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    const int reads = 32;
    uint64_t touched = random_reads_fetch(f, d, len, reads, 9);
    uint64_t most = (uint64_t) reads * (2 * 4096 + 16 + 8 + 8 * 256);
    if (touched > most)
        fail_msg("%d reads of 4 KiB of pieces stored as they are fetched %llu bytes (at most "
                 "%llu expected; a block of the file's size is 256 KiB)", reads,
                 (unsigned long long) touched, (unsigned long long) most);
    close_ok(f);

    /* a read that needs a piece's table first advises the blocks it wants (and only they)
     * before reading it, so that both I/Os are in flight when cold; not when the table is
     * known, nor with read-ahead off */
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d + 3 * 1048576 + 5000, 4096, 3 * 1048576 + 5000);   /* blocks 1 and 2 */
    assert_int_equal(f->stats.block_advice_bytes, 8192);
    expect_bytes(f, d + 3 * 1048576 + 20000, 100, 3 * 1048576 + 20000);  /* table known */
    assert_int_equal(f->stats.block_advice_bytes, 8192);
    expect_bytes(f, d + 5 * 1048576 + 8192, 4096, 5 * 1048576 + 8192);   /* block 2 */
    assert_int_equal(f->stats.block_advice_bytes, 8192 + 4096);
    close_ok(f);
    set_opt(fx, "hcomp_read_ahead", "0");
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d + 3 * 1048576 + 5000, 4096, 3 * 1048576 + 5000);
    assert_int_equal(f->stats.block_advice_bytes, 0);
    close_ok(f);
    free(d);
}

/* A small read of a piece with coded blocks whose table is not known yet advises where its
 * block should be, guessed from the piece's average block, with half an average block on
 * each side (2 average blocks for one block), before reading the table; the guess covers the
 * block on such data; not when the table is known, nor for a read of whole pieces, nor with
 * read-ahead off. */
static void test_small_reads_guess_coded_blocks(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "guess", path, sizeof(path));
    set_opt(fx, "hcomp_codec", "lz4");
    set_opt(fx, "hcomp_block_size", "64KiB");
    const uint64_t len = 8u << 20;
    unsigned char *d = text_data(len, 21);
    write_whole(fx, path, d, len);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    uint64_t off = 3 * 1048576 + 5 * 65536 + 100;
    expect_bytes(f, d + off, 4096, off);
    uint32_t idx = f->map.v[hcomp_extent_map_find(&f->map, off)].piece;
    const hcomp_piece *p = &f->pieces[idx];
    const struct hcomp_table_cache *t = &f->tables[idx % HCOMP_TABLE_CACHE_SLOTS];
    assert_true(p->codec == HCOMP_CODEC_LZ4 && p->frame != 0 && t->valid && t->nblocks == 16);
    uint64_t tlen = t->at[0], avg = (p->stored_len - tlen) / 16;
    assert_true(avg < 65536);                               /* premise: the blocks shrink */
    assert_int_equal(f->stats.block_advice_bytes, avg + avg / 2 * 2);
    if (t->at[5] - tlen < 5 * avg - avg / 2 || t->at[6] - tlen > 6 * avg + avg / 2)
        fail_msg("block 5 is stored at [%llu, %llu) of the payload, outside the guess",
                 (unsigned long long) (t->at[5] - tlen), (unsigned long long) (t->at[6] - tlen));
    expect_bytes(f, d + off + 65536, 4096, off + 65536);     /* table known */
    assert_int_equal(f->stats.block_advice_bytes, avg + avg / 2 * 2);
    expect_bytes(f, d + 5 * 1048576, 1048576, 5 * 1048576);  /* a whole piece */
    assert_int_equal(f->stats.block_advice_bytes, avg + avg / 2 * 2);
    close_ok(f);
    set_opt(fx, "hcomp_read_ahead", "0");
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d + off, 4096, off);
    assert_int_equal(f->stats.block_advice_bytes, 0);
    close_ok(f);
    free(d);
}

/* The stored bytes' offset in seg of block k of the piece that starts at seg offset at. */
static uint64_t block_at(const char *seg, uint64_t at, uint32_t k, uint32_t *stored)
{
    int fd = open(seg, O_RDONLY);
    assert_true(fd >= 0);
    unsigned char h[16 + 8 + 8 * 64];
    assert_true(pread(fd, h, sizeof(h), (off_t) at) > 32);
    close(fd);
    assert_int_equal(h[7] >> 4, 2);                 /* a framed piece */
    const unsigned char *t = h + 16;
    uint32_t n = hcomp_get_u32(t + 4);
    uint64_t off = at + 16 + hcomp_block_table_size(n);
    for (uint32_t i = 0; i < k; i++)
        off += hcomp_block_stored(t, i);
    *stored = hcomp_block_stored(t, k);
    return off;
}

static uint64_t piece_end(const char *seg, uint64_t at)
{
    int fd = open(seg, O_RDONLY);
    assert_true(fd >= 0);
    unsigned char h[16];
    assert_int_equal(pread(fd, h, 16, (off_t) at), 16);
    close(fd);
    return at + 16 + hcomp_get_u32(h + 12);
}

/* n sequential reads of len bytes from off on one handle, checked against d; returns the
 * read calls they made. */
static uint64_t sequential_reads(hcomp_file *f, const unsigned char *d, uint64_t off,
                                 uint64_t len, int n)
{
    uint64_t idle = (uint64_t) proc_read_calls();
    idle = (uint64_t) proc_read_calls() - idle;
    uint64_t calls = (uint64_t) proc_read_calls();
    for (int i = 0; i < n; i++)
        expect_bytes(f, d + off + (uint64_t) i * len, len, off + (uint64_t) i * len);
    return (uint64_t) proc_read_calls() - calls - idle;
}

/* A sequential reader of small pieces of a piece stored as it is (4 KiB blocks) takes the
 * next 256 KiB of the piece into the block cache with the read that needs a block, so 64
 * reads of 1 KiB make three read calls (the table, the first block, the span), not one per
 * 4 KiB block; not
 * with read-ahead off, nor for scattered reads. A damaged block in a span taken ahead fails
 * only the reads of its bytes. */
static void test_sequential_small_reads_take_blocks_ahead(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_codec", "none");
    char path[PATH_MAX], seg[PATH_MAX];
    file_path(fx, "seq-small", path, sizeof(path));
    const uint64_t len = 4u << 20;
    unsigned char *d = random_data(len, 21);
    write_one_segment(fx, path, d, len, seg);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d + len - 1, 1, len - 1);       /* the log is replayed */
    /* the table; the first read's block (a run starts with the second read); the span */
    uint64_t calls = sequential_reads(f, d, 0, 1024, 64);
    if (calls > 3 && !RUNNING_ON_VALGRIND)
        fail_msg("64 sequential reads of 1 KiB made %llu read calls", (unsigned long long) calls);
    /* the run goes on past the span, and across the piece's edge */
    expect_bytes(f, d + 65536, 1048576 + 5000 - 65536, 65536);
    calls = sequential_reads(f, d, 1048576 + 5000, 3000, 20);
    if (calls > 2 && !RUNNING_ON_VALGRIND)
        fail_msg("20 sequential reads of 3000 bytes made %llu read calls",
                 (unsigned long long) calls);
    close_ok(f);

    set_opt(fx, "hcomp_read_ahead", "0");
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d + len - 1, 1, len - 1);
    calls = sequential_reads(f, d, 0, 1024, 64);
    if (calls < 16 && !RUNNING_ON_VALGRIND)
        fail_msg("with read-ahead off, 64 reads of 1 KiB made %llu read calls (16 blocks)",
                 (unsigned long long) calls);
    close_ok(f);
    set_opt(fx, "hcomp_read_ahead", "16MiB");

    /* block 40 of the third piece damaged: a run reading up to it reads right, a read of
     * it fails naming it, the run goes on after it */
    uint64_t p1 = piece_end(seg, 0), p2 = piece_end(seg, p1);
    uint32_t stored;
    uint64_t at = block_at(seg, p2, 40, &stored);
    assert_int_equal(stored, 4096);
    flip_byte(seg, (off_t) (at + 7));
    const uint64_t b40 = 2 * 1048576 + 40 * 4096;
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, 1, 0);
    sequential_reads(f, d, 2 * 1048576 + 8192, 1024, 40 * 4 - 8);  /* up to b40 */
    unsigned char buf[1024];
    uint64_t n;
    hcomp_error err;
    int rc = hcomp_file_pread(f, buf, 1024, b40, &n, &err);
    if (rc != HCOMP_E_CORRUPT || strstr(err.msg, "[2260992, 2265088)") == NULL)
        fail_msg("reading the damaged block: %s (%s)", hcomp_code_name(rc), err.msg);
    expect_bytes(f, d + b40 + 4096, 4096, b40 + 4096);
    sequential_reads(f, d, b40 + 8192, 1024, 8);
    close_ok(f);
    flip_byte(seg, (off_t) (at + 7));
    free(d);
}

/* What fsck says, line after line (hcomp_tool_io.say) */
typedef struct fsck_lines {
    char text[4096];
} fsck_lines;

static void fsck_line(void *ctx, const char *line)
{
    fsck_lines *l = ctx;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof(l->text) - n, "%s\n", line);
}

static void test_damaged_block(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_codec", "zstd");
    set_opt(fx, "hcomp_piece_size", "65536");
    set_opt(fx, "hcomp_block_size", "8192");
    char path[PATH_MAX];
    file_path(fx, "damaged-block", path, sizeof(path));
    const uint64_t len = 4 * 65536;
    unsigned char *d = text_data(len, 3);
    char seg[PATH_MAX];
    write_one_segment(fx, path, d, len, seg);
    /* block 3 of the second piece: logical bytes [65536 + 24576, 65536 + 32768) */
    uint32_t stored;
    uint64_t at = block_at(seg, piece_end(seg, 0), 3, &stored);
    assert_true(stored > 2 && stored < 8192);       /* coded */
    flip_byte(seg, (off_t) (at + stored / 2));
    const char *range = "[90112, 98304)";
    expect_read_fails(fx, path, len, 0, HCOMP_E_CORRUPT, range);                  /* the whole file */
    expect_read_fails(fx, path, 10, 90112 + 100, HCOMP_E_CORRUPT, range);         /* inside the block */
    expect_read_fails(fx, path, 200, 90000, HCOMP_E_CORRUPT, range);              /* across its edge */
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);   /* the rest of its piece reads right */
    expect_bytes(f, d + 65536, 90112 - 65536, 65536);
    expect_bytes(f, d + 98304, 131072 - 98304, 98304);
    expect_bytes(f, d, 65536, 0);
    expect_bytes(f, d + 131072, len - 131072, 131072);
    close_ok(f);
    /* fsck finds the piece damaged and names the block's range, and only its bytes are
     * unreadable; then with block 6 of that piece damaged too, two ranges */
    hcomp_fsck_result res;
    hcomp_error e;
    fsck_lines said = {0};
    hcomp_tool_io io = {.say = fsck_line, .ctx = &said};
    assert_int_equal(hcomp_fsck(path, NULL, 0, &io, &res, &e), HCOMP_OK);
    assert_true(res.bad_pieces == 1 && res.problems);
    assert_int_equal(res.unreadable_bytes, 8192);
    if (strstr(said.text, "[90112, 98304)") == NULL || strstr(said.text, "[65536,") != NULL)
        fail_msg("fsck said: %s", said.text);
    uint32_t stored6;
    uint64_t at6 = block_at(seg, piece_end(seg, 0), 6, &stored6);
    flip_byte(seg, (off_t) (at6 + stored6 / 2));
    said.text[0] = '\0';
    assert_int_equal(hcomp_fsck(path, NULL, 0, &io, &res, &e), HCOMP_OK);
    assert_true(res.bad_pieces == 1);
    assert_int_equal(res.unreadable_bytes, 16384);
    if (strstr(said.text, "[90112, 98304)") == NULL || strstr(said.text, "[114688, 122880)") == NULL)
        fail_msg("fsck said: %s", said.text);
    flip_byte(seg, (off_t) (at6 + stored6 / 2));
    flip_byte(seg, (off_t) (at + stored / 2));
    assert_int_equal(hcomp_fsck(path, NULL, 0, NULL, &res, &e), HCOMP_OK);
    assert_true(res.bad_pieces == 0 && res.problems == 0 && res.unreadable_bytes == 0);
    free(d);
}

/* Pieces stored as they are, read whole: one I/O each (header, table and blocks, the
 * blocks straight into the caller's buffer), every block still checked where it landed:
 * a damaged block fails the reads that touch it, naming its range, a damaged table the
 * reads of its piece, and the rest reads right. */
static void test_raw_pieces_read_whole(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_codec", "none");
    set_opt(fx, "hcomp_piece_size", "65536");
    set_opt(fx, "hcomp_block_size", "8192");
    char path[PATH_MAX];
    file_path(fx, "raw-blocks", path, sizeof(path));
    const uint64_t len = 8 * 65536 - 1000;     /* the last piece and block partial */
    unsigned char *d = random_data(len, 5);
    char seg[PATH_MAX];
    write_one_segment(fx, path, d, len, seg);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    unsigned char *back = malloc(len);
    assert_non_null(back);
    uint64_t idle = (uint64_t) proc_read_calls();
    idle = (uint64_t) proc_read_calls() - idle;     /* what asking costs */
    uint64_t calls = (uint64_t) proc_read_calls(), n = 0;
    hcomp_error err;
    if (hcomp_file_pread(f, back, len, 0, &n, &err) != HCOMP_OK)
        fail_msg("read: %s", err.msg);
    calls = (uint64_t) proc_read_calls() - calls - idle;
    assert_true(n == len && memcmp(back, d, len) == 0);
    /* (valgrind makes read calls of its own in the process: not counted there) */
    if (calls > 8 && !RUNNING_ON_VALGRIND)
        fail_msg("reading 8 pieces stored as they are took %llu read calls",
                 (unsigned long long) calls);
    /* part of each end piece: the 4 KiB blocks wanted whole are read as spans, one call
     * each (a table, an edge block and a span at each end, a call per piece between) */
    calls = (uint64_t) proc_read_calls();
    if (hcomp_file_pread(f, back, len - 3000, 1000, &n, &err) != HCOMP_OK)
        fail_msg("read: %s", err.msg);
    calls = (uint64_t) proc_read_calls() - calls - idle;
    assert_true(n == len - 3000 && memcmp(back, d + 1000, len - 3000) == 0);
    if (calls > 12 && !RUNNING_ON_VALGRIND)
        fail_msg("reading parts of 2 pieces stored as they are and 6 whole took %llu read "
                 "calls (a call per 4 KiB block?)", (unsigned long long) calls);
    close_ok(f);

    /* whatever the block size, a piece stored as it is has 4 KiB blocks: block 6 of the
     * second piece holds logical bytes [65536 + 24576, 65536 + 28672) */
    uint64_t p1 = piece_end(seg, 0);
    uint32_t stored;
    uint64_t at = block_at(seg, p1, 6, &stored);
    assert_int_equal(stored, 4096);                 /* as it is */
    assert_int_equal(at, p1 + 16 + 8 + 8 * 16 + 6 * 4096);
    flip_byte(seg, (off_t) (at + 100));
    const char *range = "[90112, 94208)";
    expect_read_fails(fx, path, len, 0, HCOMP_E_CORRUPT, range);                  /* the whole file */
    expect_read_fails(fx, path, 65536, 65536, HCOMP_E_CORRUPT, range);            /* its piece */
    expect_read_fails(fx, path, 10, 90112 + 100, HCOMP_E_CORRUPT, range);         /* the block */
    /* part of the piece, its blocks read as one span, checked block by block */
    expect_read_fails(fx, path, 40000, 66000, HCOMP_E_CORRUPT, range);
    expect_read_fails(fx, path, 8192, 90112, HCOMP_E_CORRUPT, range);
    f = open_file(fx, path, HCOMP_O_RDONLY);   /* the rest of its piece reads right */
    expect_bytes(f, d + 65536, 90112 - 65536, 65536);
    expect_bytes(f, d + 94208, 131072 - 94208, 94208);
    expect_bytes(f, d + 66000, 90112 - 66000, 66000);
    expect_bytes(f, d + 94208 + 1, 131072 - 94208 - 2, 94208 + 1);
    expect_bytes(f, d, 65536, 0);
    expect_bytes(f, d + 131072, len - 131072, 131072);
    close_ok(f);
    flip_byte(seg, (off_t) (at + 100));

    /* the third piece's table: its reads fail naming the table and the piece's range */
    uint64_t p2 = piece_end(seg, p1);
    flip_byte(seg, (off_t) (p2 + 16 + 8 + 8 * 2 + 1));     /* block 2's entry */
    expect_read_fails(fx, path, 65536, 131072, HCOMP_E_CORRUPT, "block table");
    expect_read_fails(fx, path, 100, 131072 + 5000, HCOMP_E_CORRUPT, "block table");
    expect_read_fails(fx, path, len, 0, HCOMP_E_CORRUPT, "[131072, 196608)");
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, 131072, 0);
    expect_bytes(f, d + 196608, len - 196608, 196608);
    close_ok(f);
    flip_byte(seg, (off_t) (p2 + 16 + 8 + 8 * 2 + 1));
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, len, 0);
    close_ok(f);
    free(back);
    free(d);
}

/* The table's checks: block size and count as the record says, lengths adding up to
 * the payload, none beyond the codec's bound, none empty. */
static size_t bound_x2(size_t n)
{
    return 2 * n;
}

/* Readers in several threads at once, each with its own handle and a pool of its own
 * size: the jobs fetch stored bytes into their thread's scratch (file_read.c), which one
 * thread must never lend another, and which grows from small pieces to large ones. Each
 * reader reads the two files (64 KiB pieces, then 1 MiB ones) whole and in unaligned
 * parts, byte for byte against the model; its thread then ends (its scratch freed: the
 * valgrind and ASan runs of this test see a leak otherwise). Failures are counted in the
 * threads and asserted here (cmocka's asserts are not for other threads). */
typedef struct reader_arg {
    const char *path[2];
    const unsigned char *model[2];
    uint64_t len[2];
    hcomp_options *opts;
    uint64_t seed;
    pthread_barrier_t *start;   /* every round starts in every reader at once */
    int failures;
    char why[1024];
} reader_arg;

static void *reader(void *v)
{
    reader_arg *a = v;
    hcomp_error err = {0};
    for (int round = 0; round < 12; round++)
        for (int k = 0; k < 2; k++) {
            pthread_barrier_wait(a->start);
            if (a->failures)
                continue;       /* the others still wait at the barrier for this one */
            hcomp_file *f = NULL;
            unsigned char *buf = malloc(a->len[k]);
            if (buf == NULL || hcomp_file_open(a->path[k], HCOMP_O_RDONLY, 0644, 1, a->opts, &f,
                                               &err) != HCOMP_OK) {
                a->failures++;
                snprintf(a->why, sizeof(a->why), "open %.400s: %.400s", a->path[k], err.msg);
                free(buf);
                continue;
            }
            for (int i = 0; i < 8 && !a->failures; i++) {
                uint64_t o = i == 0 ? 0 : rng(&a->seed) % a->len[k];
                uint64_t n = i == 0 ? a->len[k] : 1 + rng(&a->seed) % (a->len[k] - o);
                uint64_t got = 0;
                if (hcomp_file_pread(f, buf, n, o, &got, &err) != HCOMP_OK || got != n ||
                    memcmp(buf, a->model[k] + o, n) != 0) {
                    a->failures++;
                    snprintf(a->why, sizeof(a->why), "%.400s: %llu bytes at %llu read wrong (%.400s)",
                             a->path[k], (unsigned long long) n, (unsigned long long) o,
                             err.msg);
                }
            }
            hcomp_file_close(f, &err);
            free(buf);
        }
    return NULL;
}

static void test_readers_in_threads(void **state)
{
    fixture *fx = *state;
    char path[2][PATH_MAX];
    unsigned char *d[2];
    uint64_t len[2];
    write_model(fx, "threads-small", "lz4", path[0], &d[0], &len[0]);
    set_opt(fx, "hcomp_piece_size", "1048576");
    set_opt(fx, "hcomp_block_size", "auto");
    file_path(fx, "threads-large", path[1], PATH_MAX);
    len[1] = 3 * 1048576 + 4321;
    d[1] = mixed_data(len[1], 11);
    hcomp_file *f = open_file(fx, path[1], HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d[1], len[1], 0);
    close_ok(f);
    enum { READERS = 4 };
    reader_arg a[READERS];
    pthread_t t[READERS];
    hcomp_options *opts[READERS];
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, READERS), 0);
    for (int r = 0; r < READERS; r++) {
        hcomp_error err;
        opts[r] = hcomp_options_new();
        assert_non_null(opts[r]);
        assert_int_equal(hcomp_options_set(opts[r], "hcomp_config", fx->config, &err), HCOMP_OK);
        assert_int_equal(hcomp_options_set(opts[r], "hcomp_threads", r % 2 ? "2" : "1", &err),
                         HCOMP_OK);
        a[r] = (reader_arg){{path[0], path[1]}, {d[0], d[1]}, {len[0], len[1]}, opts[r],
                            (uint64_t) r + 1, &start, 0, ""};
        assert_int_equal(pthread_create(&t[r], NULL, reader, &a[r]), 0);
    }
    for (int r = 0; r < READERS; r++) {
        assert_int_equal(pthread_join(t[r], NULL), 0);
        if (a[r].failures)
            fail_msg("reader %d: %s", r, a[r].why);
        hcomp_options_free(opts[r]);
    }
    pthread_barrier_destroy(&start);
    free(d[0]);
    free(d[1]);
}

static void test_block_table_checks(void **state)
{
    (void) state;
    unsigned char t[8 + 8 * 3];
    hcomp_block_table_init(t, 8192, 3);
    hcomp_block_table_set(t, 0, 100, 1);
    hcomp_block_table_set(t, 1, 8192, 2);           /* stored as it is */
    hcomp_block_table_set(t, 2, 50, 3);             /* the last block: 4000 bytes */
    const uint32_t raw = 2 * 8192 + 4000;
    const uint64_t payload = sizeof(t) + 100 + 8192 + 50;
    assert_int_equal(hcomp_block_table_check(t, raw, 8192, payload, bound_x2), 0);
    assert_int_equal(hcomp_block_stored(t, 1), 8192);
    assert_int_equal(hcomp_block_crc(t, 2), 3);
    assert_int_equal(hcomp_block_table_check(t, raw, 16384, payload, bound_x2), -1);
    assert_int_equal(hcomp_block_table_check(t, raw + 8192, 8192, payload, bound_x2), -1);
    assert_int_equal(hcomp_block_table_check(t, raw, 8192, payload + 1, bound_x2), -1);
    hcomp_block_table_set(t, 2, 8001, 3);           /* beyond the bound of 4000 bytes */
    assert_int_equal(hcomp_block_table_check(t, raw, 8192, payload - 50 + 8001, bound_x2), -1);
    hcomp_block_table_set(t, 2, 0, 3);              /* empty */
    assert_int_equal(hcomp_block_table_check(t, raw, 8192, payload - 50, bound_x2), -1);
    /* framings: 4 KiB << (k - 1), 1..15, the block sizes the hint takes */
    assert_int_equal(hcomp_frame_block_size(1), 4096);
    assert_int_equal(hcomp_frame_block_size(7), 256 * 1024);
    assert_int_equal(hcomp_frame_block_size(0), 0);
    assert_int_equal(hcomp_frame_block_size(16), 0);
    assert_int_equal(hcomp_frame_of_block_size(262144), 7);
    assert_int_equal(hcomp_frame_of_block_size(12288), 0);
    assert_int_equal(hcomp_frame_of_block_size(128u << 20), 0);
    assert_int_equal(hcomp_frame_blocks(0, 8192), 0);
    assert_int_equal(hcomp_frame_blocks(8193, 8192), 2);
}

static void test_block_size_hint(void **state)
{
    (void) state;
    hcomp_options *o = hcomp_options_new();
    hcomp_error e;
    static const char *bad[] = {"0", "4095", "12KiB", "128MiB", "x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(hcomp_options_set(o, "hcomp_block_size", bad[i], &e), HCOMP_E_INVAL);
        assert_non_null(strstr(e.msg, "hcomp_block_size"));
    }
    assert_int_equal(hcomp_options_set(o, "hcomp_block_size", "64MiB", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_set(o, "hcomp_block_size", "4096", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 4096);
    hcomp_options_free(o);
}

/* "auto" (the default): 256 KiB blocks, but under the archival priority a piece is one
 * block (the largest power of two in a piece), unless the hint or weights say otherwise */
static void test_block_size_auto(void **state)
{
    (void) state;
    hcomp_options *o = hcomp_options_new();
    hcomp_error e;
    assert_int_equal(hcomp_options_block_size(o), 262144);
    assert_int_equal(hcomp_options_set(o, "hcomp_priority", "archival", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 1u << 20);
    assert_int_equal(hcomp_options_set(o, "hcomp_piece_size", "1536KiB", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 1u << 20);
    assert_int_equal(hcomp_options_set(o, "hcomp_piece_size", "64KiB", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 65536);
    assert_int_equal(hcomp_options_set(o, "hcomp_block_size", "8KiB", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 8192);
    assert_int_equal(hcomp_options_set(o, "hcomp_block_size", "auto", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 65536);
    assert_int_equal(hcomp_options_set(o, "hcomp_weights", "0,0,1", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 262144);
    hcomp_options_free(o);
}

/* Floating-point data in a bit-shuffled form have 64 KiB blocks where the block size is
 * "auto" and the priority weighs reads (the default read_after_write, read_bandwidth);
 * elsewhere the file's block size, and a block size the hint names is kept */
static void test_block_size_bs(void **state)
{
    (void) state;
    static const struct { const char *priority; uint32_t bs; } p[] = {
        {"read_after_write", 65536}, {"read_bandwidth", 65536}, {"async", 262144},
        {"write_bandwidth", 262144}, {"archival", 1u << 20}};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        hcomp_options *o = hcomp_options_new();
        hcomp_error e;
        if (i == 0)
            assert_int_equal(hcomp_options_block_size_bs(o), 65536);   /* the default */
        assert_int_equal(hcomp_options_set(o, "hcomp_priority", p[i].priority, &e), HCOMP_OK);
        assert_int_equal(hcomp_options_block_size_bs(o), p[i].bs);
        assert_int_equal(hcomp_options_set(o, "hcomp_weights", "1,1,1", &e), HCOMP_OK);
        assert_int_equal(hcomp_options_block_size_bs(o), 262144);
        assert_int_equal(hcomp_options_set(o, "hcomp_block_size", "8KiB", &e), HCOMP_OK);
        assert_int_equal(hcomp_options_block_size_bs(o), 8192);
        hcomp_options_free(o);
    }
}

/* float32 values of a smooth field with noisy low bits: bit-shuffling codecs shrink them */
static unsigned char *float_field(size_t n)
{
    float *v = malloc(n);
    assert_non_null(v);
    uint64_t s = 3;
    for (size_t i = 0; i < n / 4; i++)
        v[i] = (float) (100.0 + 10.0 * sin((double) i * 1e-4)) + (float) (rng(&s) % 1000) * 1e-6f;
    return (unsigned char *) v;
}

/* The pieces one file of blosc-lz4 holds: of float32 data in 64 KiB blocks, of int32 data
 * (the same bytes, other element type) in 256 KiB; of zstd (byte-shuffled) in 256 KiB;
 * each read back whole and in parts; a 4 KiB read of a float piece fetches about one
 * 64 KiB block, not a 256 KiB one. */
static void test_float_bitshuffled_blocks(void **state)
{
    fixture *fx = *state;
    static const struct { const char *codec; int dtype; uint32_t block; } cases[] = {
        {"blosc-lz4", HCOMP_DTYPE_FLOAT, 65536}, {"blosc-zstd", HCOMP_DTYPE_DOUBLE, 65536},
        {"blosc-lz4", HCOMP_DTYPE_INT32, 262144}, {"zstd", HCOMP_DTYPE_FLOAT, 262144}};
    const uint64_t len = 4u << 20;
    unsigned char *d = float_field(len);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        set_opt(fx, "hcomp_codec", cases[c].codec);
        char path[PATH_MAX], name[64];
        snprintf(name, sizeof(name), "fbs-%zu", c);
        file_path(fx, name, path, sizeof(path));
        hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
        hcomp_file_set_dtype(f, cases[c].dtype);
        pwrite_ok(f, d, len, 0);
        close_ok(f);
        f = open_file(fx, path, HCOMP_O_RDONLY);
        uint64_t touched = random_reads_fetch(f, d, len, 16, 9);
        expect_bytes(f, d, len, 0);
        assert_int_equal(f->npieces, 4);
        for (size_t i = 0; i < f->npieces; i++) {
            assert_int_not_equal(f->pieces[i].codec, HCOMP_CODEC_NONE);
            assert_int_equal(hcomp_frame_block_size(f->pieces[i].frame), cases[c].block);
        }
        /* a read fetches at most two blocks (each at most its raw size) and a table */
        uint64_t most = 16 * 2 * ((uint64_t) cases[c].block + 16 + 8 + 8 * 256);
        if (touched > most)
            fail_msg("%s: 16 reads of 4 KiB fetched %llu bytes (at most %llu)", cases[c].codec,
                     (unsigned long long) touched, (unsigned long long) most);
        close_ok(f);
    }
    free(d);
}

/* A file written under archival frames each compressed 1 MiB piece in one block; its
 * bytes read back, whole and in parts. */
static void test_archival_pieces_one_block(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_priority", "archival");
    set_opt(fx, "hcomp_codec", "zstd");
    char path[PATH_MAX];
    file_path(fx, "archival", path, sizeof(path));
    const uint64_t len = 3u << 20;
    unsigned char *d = text_data(len, 5);
    write_whole(fx, path, d, len);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    unsigned char *back = malloc(len);
    assert_non_null(back);
    uint64_t got = 0;
    hcomp_error e;
    assert_int_equal(hcomp_file_pread(f, back + 100000, 5000, 100000, &got, &e), HCOMP_OK);
    assert_memory_equal(back + 100000, d + 100000, 5000);
    assert_int_equal(hcomp_file_pread(f, back, len, 0, &got, &e), HCOMP_OK);
    assert_int_equal(got, len);
    assert_memory_equal(back, d, len);
    assert_int_equal(f->npieces, 3);
    for (size_t i = 0; i < f->npieces; i++) {
        assert_int_equal(f->pieces[i].codec, HCOMP_CODEC_ZSTD);
        assert_int_equal(hcomp_frame_block_size(f->pieces[i].frame), 1u << 20);
    }
    close_ok(f);
    free(back);
    free(d);
}

/* fsck's scan of a framed payload flags every damaged block, where a decode stops at the
 * first: none of a sound payload; a block whose checksum fails (1), one whose checksum
 * holds but that does not decode (2); a damaged table fails the scan whole. */
static void test_frame_scan(void **state)
{
    (void) state;
    const hcomp_codec *c = hcomp_codec_by_id(HCOMP_CODEC_ZSTD);
    const uint32_t len = 64 * 1024, bs = 8192, n = 8;
    unsigned char *src = text_data(len, 6), *tmp = NULL, *out = malloc(bs), *dst = malloc(len);
    size_t tmp_cap = 0, tlen = hcomp_block_table_size(n), cap = hcomp_frame_bound(c, len, bs);
    unsigned char *payload = malloc(tlen + cap);
    assert_non_null(out);
    assert_non_null(dst);
    assert_non_null(payload);
    size_t blen = 0;
    uint64_t coded = 0;
    uint32_t any = 0;
    assert_int_equal(hcomp_frame_encode(c, 1, HCOMP_FILTER_NONE, bs, src, len, &tmp, &tmp_cap,
                                        payload + tlen, cap, payload, &blen, &coded, &any),
                     HCOMP_OK);
    assert_int_equal(any, n);
    uint32_t stored = (uint32_t) (tlen + blen), nd = 99;
    unsigned char damaged[8];
    int64_t bad;
    assert_int_equal(hcomp_frame_scan(c, HCOMP_FILTER_NONE, payload, stored, len, bs, out, &tmp,
                                      &tmp_cap, damaged, &nd), HCOMP_OK);
    assert_int_equal(nd, 0);
    /* the checksums of blocks 3 and 6 fail: decode stops at 3, the scan names both */
    size_t at3 = tlen, at6;
    for (uint32_t i = 0; i < 3; i++)
        at3 += hcomp_block_stored(payload, i);
    at6 = at3;
    for (uint32_t i = 3; i < 6; i++)
        at6 += hcomp_block_stored(payload, i);
    payload[at3 + 5] ^= 0x40;
    payload[at6 + 5] ^= 0x40;
    int bad_crc = 0;
    assert_int_equal(hcomp_frame_decode(c, HCOMP_FILTER_NONE, payload, stored, len, bs, dst, &tmp,
                                        &tmp_cap, &bad, &bad_crc), HCOMP_E_CORRUPT);
    assert_int_equal(bad, 3);
    assert_true(bad_crc);
    assert_int_equal(hcomp_frame_scan(c, HCOMP_FILTER_NONE, payload, stored, len, bs, out, &tmp,
                                      &tmp_cap, damaged, &nd), HCOMP_OK);
    assert_int_equal(nd, 2);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(damaged[i], i == 3 || i == 6 ? 1 : 0);
    /* block 6's checksum made to match its damaged bytes: it fails to decode instead */
    uint32_t s6 = hcomp_block_stored(payload, 6);
    memset(payload + at6, 0x5a, s6);
    hcomp_block_table_set(payload, 6, s6, hcomp_crc32(payload + at6, s6));
    assert_int_equal(hcomp_frame_scan(c, HCOMP_FILTER_NONE, payload, stored, len, bs, out, &tmp,
                                      &tmp_cap, damaged, &nd), HCOMP_OK);
    assert_int_equal(nd, 2);
    assert_int_equal(damaged[3], 1);
    assert_int_equal(damaged[6], 2);
    /* a table that does not fit the piece: no block can be told */
    payload[0] ^= 0x01;     /* its block size */
    assert_int_equal(hcomp_frame_scan(c, HCOMP_FILTER_NONE, payload, stored, len, bs, out, &tmp,
                                      &tmp_cap, damaged, &nd), HCOMP_E_CORRUPT);
    free(src);
    free(tmp);
    free(out);
    free(dst);
    free(payload);
}

/* The reads' statistics (hint hcomp_stats): calls, bytes, the blocks fetched and decoded,
 * the stored bytes fetched (the piece's table once), what came from the block cache; and
 * the report a handle that only read prints at close. */
static void test_read_stats(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_codec", "zstd");
    set_opt(fx, "hcomp_block_size", "8192");
    set_opt(fx, "hcomp_read_ahead", "0");
    char path[PATH_MAX];
    file_path(fx, "read-stats", path, sizeof(path));
    const uint64_t len = 2u << 20;
    unsigned char *d = text_data(len, 4);
    write_whole(fx, path, d, len);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(f->pieces[0].codec, HCOMP_CODEC_ZSTD);
    expect_bytes(f, d + 10 * 8192 + 100, 8192, 10 * 8192 + 100);      /* blocks 10 and 11 */
    const hcomp_file_stats *s = &f->stats;
    assert_int_equal(s->reads, 1);
    assert_int_equal(s->read_bytes, 8192);
    assert_int_equal(s->read_units, 2);
    assert_int_equal(s->read_decoded, 2 * 8192);
    assert_int_equal(s->read_cached, 0);
    uint64_t table = 16 + 8 + 8 * 128, fetched = s->read_fetched;
    assert_true(fetched > table && fetched < table + 2 * 8192);   /* the blocks shrank */
    expect_bytes(f, d + 10 * 8192 + 200, 8000, 10 * 8192 + 200);      /* cached */
    assert_int_equal(s->read_units, 2);
    assert_int_equal(s->read_cached, 8000);
    assert_int_equal(s->read_fetched, fetched);
    expect_bytes(f, d, len, 0);                                       /* two whole pieces */
    assert_int_equal(s->reads, 3);
    assert_int_equal(s->read_bytes, 16192 + len);
    assert_int_equal(s->read_units, 4);
    assert_int_equal(s->read_decoded, 2 * 8192 + len);
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    assert_non_null(out);
    hcomp_stats_print_reads(out, path, s);
    fclose(out);
    if (strstr(text, "reads: 3 calls") == NULL || strstr(text, "8000 bytes from the block cache") == NULL)
        fail_msg("the report: %s", text);
    free(text);
    close_ok(f);
    free(d);
}

/* MPI's access_style: "random" (and no sequential) gives "auto" 8 KiB blocks, for float
 * data bit-shuffled too, over the archival priority's whole pieces; a block size the hint
 * names stays, and random with sequential is not random. */
static void test_block_size_access_random(void **state)
{
    (void) state;
    hcomp_options *o = hcomp_options_new();
    hcomp_error e;
    assert_int_equal(hcomp_options_set(o, "access_style", "write_once,random", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 8192);
    assert_int_equal(hcomp_options_block_size_bs(o), 8192);
    assert_int_equal(hcomp_options_set(o, "hcomp_priority", "archival", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 8192);
    assert_int_equal(hcomp_options_set(o, "access_style", "random, sequential", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 1u << 20);
    assert_int_equal(hcomp_options_set(o, "access_style", "read_mostly", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 1u << 20);
    assert_int_equal(hcomp_options_set(o, "access_style", "random", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_set(o, "hcomp_block_size", "64KiB", &e), HCOMP_OK);
    assert_int_equal(hcomp_options_block_size(o), 65536);
    assert_int_equal(hcomp_options_block_size_bs(o), 65536);
    hcomp_options_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_table_checks),
        cmocka_unit_test(test_block_size_access_random),
        cmocka_unit_test_setup_teardown(test_read_stats, setup, teardown),
        cmocka_unit_test(test_frame_scan),
        cmocka_unit_test_setup_teardown(test_access_random_file, setup, teardown),
        cmocka_unit_test(test_block_size_hint),
        cmocka_unit_test(test_block_size_auto),
        cmocka_unit_test(test_block_size_bs),
        cmocka_unit_test_setup_teardown(test_float_bitshuffled_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_archival_pieces_one_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_every_alignment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_reads_fetch_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_reads_guess_coded_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_reads_of_pieces_stored_as_they_are, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sequential_small_reads_take_blocks_ahead, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_damaged_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_raw_pieces_read_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readers_in_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
