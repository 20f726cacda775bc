/* Reclaiming space (file/reclaim.c): overwritten pieces give their space back at the last
 * close or to hcomp_compact, segments emptied by overwrites are removed, mostly dead ones
 * compacted, the log rewritten to what is live; every byte reads back as the model says,
 * and a process killed in the middle leaves a file that reads right. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "file_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "file/tools.h"
#include "file/file_internal.h"

#include <pthread.h>

#define PIECE (256 * KIB)

static hcomp_footprint footprint(const char *path)
{
    hcomp_footprint fp;
    hcomp_error err;
    int rc = hcomp_footprint_path(path, &fp, &err);
    if (rc != HCOMP_OK)
        fail_msg("footprint %s: %s", path, err.msg);
    return fp;
}

static hcomp_reclaim_result compact_ok(fixture *fx, const char *path)
{
    hcomp_reclaim_result r;
    hcomp_error err;
    int rc = hcomp_compact(path, fx->config, NULL, &r, &err);
    if (rc != HCOMP_OK)
        fail_msg("compact %s: %s: %s", path, hcomp_code_name(rc), err.msg);
    return r;
}

/* Open, write len bytes of data at off, close. */
static void write_session(fixture *fx, const char *path, const unsigned char *data,
                          uint64_t len, uint64_t off)
{
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, data, len, off);
    close_ok(f);
}

static void expect_file(fixture *fx, const char *path, const unsigned char *want, uint64_t len)
{
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(size_of(f), len);
    expect_bytes(f, want, len, 0);
    close_ok(f);
}

/* One shared tier: one segment per writing session, so what is removed and moved is known. */
static int reclaim_setup(void **state)
{
    setup(state);
    fixture *fx = *state;
    char json[2 * PATH_MAX];
    snprintf(json, sizeof(json), "{\"version\": 1, \"tiers\": [{\"name\": \"disk\", \"path\": "
             "\"%s\", \"capacity\": \"unlimited\"}]}\n", fx->t1);
    write_text(fx->config, json);
    set_opt(fx, "hcomp_piece_size", "262144");
    return 0;
}

/* A checkpoint rewritten in place keeps the footprint and the log of one checkpoint. */
static void test_checkpoint_loop(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "ckpt", path, sizeof(path));
    const uint64_t len = 4 * MIB;
    hcomp_footprint first = {0}, fp;
    unsigned char *d = NULL;
    for (unsigned gen = 0; gen < 12; gen++) {
        free(d);
        d = text_data(len, gen);
        write_session(fx, path, d, len, 0);
        fp = footprint(path);
        if (gen == 0)
            first = fp;
        assert_int_equal(fp.dead, 0);           /* the last close reclaimed it all */
        assert_int_equal(fp.segments_dead, 0);
    }
    if (fp.allocated > first.allocated + first.allocated / 5)
        fail_msg("after 12 writes %llu bytes allocated, after one %llu",
                 (unsigned long long) fp.allocated, (unsigned long long) first.allocated);
    if (fp.map_bytes > 2 * first.map_bytes)
        fail_msg("mapping file %llu bytes after 12 writes, %llu after one",
                 (unsigned long long) fp.map_bytes, (unsigned long long) first.map_bytes);
    expect_file(fx, path, d, len);
    free(d);
}

/* hcomp_reclaim=never keeps everything until hcomp_compact, which then gives back every
 * dead byte; random unaligned overwrites over several sessions against a model. */
static void test_random_overwrites_then_compact(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    char path[PATH_MAX];
    file_path(fx, "random", path, sizeof(path));
    const uint64_t len = 3 * MIB + 1234;
    unsigned char *model = text_data(len, 7);
    write_session(fx, path, model, len, 0);
    uint64_t seed = 42;
    for (int session = 0; session < 4; session++) {
        hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR);
        for (int w = 0; w < 12; w++) {
            uint64_t n = 1 + rng(&seed) % (600 * KIB);
            uint64_t off = rng(&seed) % (len - n);
            unsigned char *chunk = (w & 1) ? random_data(n, seed) : text_data(n, (unsigned) seed);
            pwrite_ok(f, chunk, n, off);
            memcpy(model + off, chunk, n);
            free(chunk);
        }
        close_ok(f);
        assert_true(footprint(path).dead > 0);  /* never: kept */
        expect_file(fx, path, model, len);
    }
    hcomp_footprint before = footprint(path);
    hcomp_reclaim_result r = compact_ok(fx, path);
    hcomp_footprint after = footprint(path);
    assert_true(r.ran);
    assert_true(r.log_rewritten);
    assert_int_equal(r.dead_found, before.dead);
    assert_int_equal(after.dead, 0);
    assert_int_equal(after.live, before.live);
    assert_true(after.allocated < before.allocated);
    assert_true(after.map_bytes < before.map_bytes);
    /* what is allocated now is what is live, give or take a block per segment */
    if (after.allocated > after.live + after.segments * 8 * KIB)
        fail_msg("%llu bytes allocated for %llu live", (unsigned long long) after.allocated,
                 (unsigned long long) after.live);
    expect_file(fx, path, model, len);
    /* a second compaction finds nothing */
    r = compact_ok(fx, path);
    assert_false(r.ran);
    free(model);
}

/* Pieces that move, by two kinds of record in one log: drained at close from the
 * node-local tier to the shared one, then copied by a compaction (segments mostly dead
 * after an overwrite). A fresh open replays both (the table of where pieces are is built
 * for a segment at the first move from it), and so does an opener handed another's
 * replayed state. */
static void test_pieces_moved_twice(void **state)
{
    fixture *fx = *state;
    write_config(fx, "16MiB");
    set_opt(fx, "hcomp_reclaim", "never");
    set_opt(fx, "hcomp_drain", "close");
    char path[PATH_MAX];
    file_path(fx, "twice", path, sizeof(path));
    const uint64_t len = 6 * MIB;
    unsigned char *model = text_data(len, 11);
    write_session(fx, path, model, len, 0);     /* most on "fast", drained at close */
    unsigned char *over = random_data(len, 5);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR);
    for (uint64_t off = 0; off < len; off += 512 * KIB)    /* most of it, not all */
        if ((off / (512 * KIB)) % 4 != 1) {
            pwrite_ok(f, over + off, 512 * KIB, off);
            memcpy(model + off, over + off, 512 * KIB);
        }
    close_ok(f);
    hcomp_reclaim_result r = compact_ok(fx, path);
    assert_true(r.ran);
    expect_file(fx, path, model, len);
    /* a state replayed by one handle, imported by another */
    f = open_file(fx, path, HCOMP_O_RDONLY);
    void *st = NULL;
    size_t stlen = 0;
    hcomp_error err;
    assert_int_equal(hcomp_file_export_state(f, &st, &stlen, &err), HCOMP_OK);
    close_ok(f);
    hcomp_file *g = NULL;
    if (hcomp_file_open_with_state(path, HCOMP_O_RDONLY, 0, 1, fx->opts, st, stlen, &g, &err) !=
        HCOMP_OK)
        fail_msg("open with state: %s", err.msg);
    expect_bytes(g, model, len, 0);
    close_ok(g);
    free(st);
    free(over);
    free(model);
}

/* A compaction that moves pieces out of many segments (one per writing session): the
 * replay indexes each of them at its first move, without growing its table for each
 * (doubling it per segment made a 40-segment file's replay run out of memory). */
static void test_compaction_of_many_segments(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    char path[PATH_MAX];
    file_path(fx, "many", path, sizeof(path));
    const unsigned nseg = 40;
    const uint64_t piece = 256 * KIB, chunk = 4 * piece, len = nseg * chunk;
    unsigned char *model = text_data(len, 21);
    for (unsigned k = 0; k < nseg; k++)         /* a segment each, of 4 pieces */
        write_session(fx, path, model + k * chunk, chunk, k * chunk);
    unsigned char *over = random_data(len, 8);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR);
    for (unsigned k = 0; k < nseg; k++) {       /* 3 pieces of 4: each segment mostly dead */
        uint64_t at = k * chunk + piece;
        pwrite_ok(f, over + at, 3 * piece, at);
        memcpy(model + at, over + at, 3 * piece);
    }
    close_ok(f);
    hcomp_reclaim_result r = compact_ok(fx, path);
    assert_true(r.ran);
    expect_file(fx, path, model, len);
    free(over);
    free(model);
}

/* A segment whose every piece was overwritten is removed; one mostly dead is compacted
 * (its live pieces copied, then it is removed); one mostly live has its dead pieces
 * punched out. */
static void test_segments_removed_compacted_punched(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    set_opt(fx, "hcomp_codec", "none");     /* stored = raw: sizes are exact */
    char pa[PATH_MAX], pb[PATH_MAX];
    file_path(fx, "a", pa, sizeof(pa));
    file_path(fx, "b", pb, sizeof(pb));
    const uint64_t len = 8 * PIECE;
    unsigned char *d1 = random_data(len, 1), *d2 = random_data(len, 2);
    /* a: first session 8 pieces; second overwrites 6 of them: mostly dead, compacted */
    write_session(fx, pa, d1, len, 0);
    write_session(fx, pa, d2, 6 * PIECE, 0);
    memcpy(d1, d2, 6 * PIECE);
    hcomp_reclaim_result r = compact_ok(fx, pa);
    assert_int_equal(r.pieces_moved, 2);
    assert_int_equal(r.bytes_moved, 2 * raw_piece_bytes(PIECE));
    assert_int_equal(r.segments_removed, 1);
    assert_int_equal(find_segments(fx->base), 2);
    expect_file(fx, pa, d1, len);

    /* b: 8 pieces, then 3 overwritten (3 of 11 dead: auto reclaims at close; the first
     * segment is 5/8 live: its dead pieces are punched out, not copied) */
    unsigned char *e1 = random_data(len, 3), *e2 = random_data(len, 4);
    set_opt(fx, "hcomp_reclaim", "auto");
    write_session(fx, pb, e1, len, 0);
    hcomp_footprint one = footprint(pb);
    write_session(fx, pb, e2, 3 * PIECE, 3 * PIECE);
    memcpy(e1 + 3 * PIECE, e2, 3 * PIECE);
    hcomp_footprint two = footprint(pb);
    /* punched out; the last close folded the writer logs (format 3), which drops their
     * records too */
    assert_int_equal(two.dead, 0);
    assert_int_equal(two.live, one.live);
    assert_int_equal(two.segments, 2);
    /* the first lost three pieces' blocks (but the two it shares with live pieces), the
     * second holds three (and a partial last block) */
    if (two.allocated > one.allocated + 12 * KIB)
        fail_msg("%llu bytes allocated after the overwrite, %llu before", (unsigned long long) two.allocated, (unsigned long long) one.allocated);
    expect_file(fx, pb, e1, len);

    /* whole rewrite of b: both old segments removed */
    write_session(fx, pb, e2, len, 0);
    assert_int_equal(footprint(pb).segments, 1);
    expect_file(fx, pb, e2, len);
    free(d1);
    free(d2);
    free(e1);
    free(e2);
}

/* Many small overwrites make a long log; compaction rewrites it to the live pieces. */
static void test_log_compaction(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    char path[PATH_MAX];
    file_path(fx, "log", path, sizeof(path));
    const uint64_t len = 64 * KIB;
    unsigned char *model = text_data(len, 1);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, model, len, 0);
    uint64_t seed = 9;
    for (int w = 0; w < 600; w++) {
        uint64_t off = (rng(&seed) % 16) * 4 * KIB;
        unsigned char *chunk = text_data(4 * KIB, (unsigned) w);
        pwrite_ok(f, chunk, 4 * KIB, off);
        memcpy(model + off, chunk, 4 * KIB);
        free(chunk);
    }
    pwrite_ok(f, "tail", 4, len + 10000);   /* a hole, then 4 bytes: the size survives */
    close_ok(f);
    unsigned char *want = calloc(1, len + 10004);
    assert_non_null(want);
    memcpy(want, model, len);
    memcpy(want + len + 10000, "tail", 4);
    hcomp_footprint before = footprint(path);
    hcomp_reclaim_result r = compact_ok(fx, path);
    assert_true(r.log_rewritten);
    hcomp_footprint after = footprint(path);
    /* at most 17 live pieces (16 blocks and the tail): a few KiB of records */
    if (after.map_bytes > 4 * KIB || after.map_bytes * 20 > before.map_bytes)
        fail_msg("mapping file %llu bytes before, %llu after", (unsigned long long) before.map_bytes,
                 (unsigned long long) after.map_bytes);
    expect_file(fx, path, want, len + 10004);
    /* the file goes on: written after its snapshot, read right */
    f = open_file(fx, path, HCOMP_O_RDWR);
    pwrite_ok(f, "new", 3, 5);
    memcpy(want + 5, "new", 3);
    close_ok(f);
    expect_file(fx, path, want, len + 10004);
    free(model);
    free(want);
}

/* While another handle has the file open, nothing is reclaimed and hcomp_compact refuses;
 * the next writer's last close does it. */
static void test_other_opener_blocks_reclaim(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "busy", path, sizeof(path));
    const uint64_t len = 4 * PIECE;
    unsigned char *d1 = text_data(len, 1), *d2 = text_data(len, 2);
    write_session(fx, path, d1, len, 0);
    hcomp_file *reader = open_file(fx, path, HCOMP_O_RDONLY);
    write_session(fx, path, d2, len, 0);
    assert_true(footprint(path).dead > 0);
    hcomp_reclaim_result r;
    hcomp_error err;
    assert_int_equal(hcomp_compact(path, fx->config, NULL, &r, &err), HCOMP_E_IO);
    assert_non_null(strstr(err.msg, "open in another process"));
    expect_bytes(reader, d2, len, 0);   /* the reader sees the new data, old segments kept */
    close_ok(reader);
    assert_true(footprint(path).dead > 0);  /* a reader's close does not reclaim */
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR);
    close_ok(f);
    assert_int_equal(footprint(path).dead, 0);
    expect_file(fx, path, d2, len);
    free(d1);
    free(d2);
}

static uint64_t live_pieces(const char *path)
{
    hcomp_stats st;
    hcomp_error err;
    if (hcomp_stat_path(path, &st, &err) != HCOMP_OK)
        fail_msg("stat %s: %s", path, err.msg);
    return st.pieces;
}

/* n writes of rec bytes each, in a shuffled order, tiling [off, off + n rec) */
static void write_records(hcomp_file *f, const unsigned char *data, uint64_t off, size_t n,
                          size_t rec, unsigned seed)
{
    size_t *order = malloc(n * sizeof(*order));
    assert_non_null(order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    srand(seed);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t) rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        pwrite_ok(f, data + order[i] * rec, rec, off + order[i] * rec);
    free(order);
}

/* A file written in tiny independent writes (hcomp_write_buffer=0, the default: each write
 * a piece): the last close writes each run of 16 or more neighbouring small pieces again as
 * whole pieces, and reclaiming drops the old ones; every byte, the hole between two runs
 * and the size stay as written; a run too short, a file another opener holds, and
 * hcomp_reclaim=never are left as they are, the last until hcomp compact. */
static void test_small_pieces_coalesced(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "records", path, sizeof(path));
    const size_t rec = 100, n = 3000;
    const uint64_t gap = 1 << 20, len = 2 * n * rec + gap;
    unsigned char *want = calloc(len + 16 * rec, 1), *d = text_data(n * rec, 3);
    assert_non_null(want);
    memcpy(want, d, n * rec);
    memcpy(want + n * rec + gap, d, n * rec);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    write_records(f, d, 0, n, rec, 1);
    write_records(f, d, n * rec + gap, n, rec, 2);
    /* another opener: the first close is not the last, and leaves the pieces */
    hcomp_file *other = open_file(fx, path, HCOMP_O_RDONLY);
    close_ok(f);
    assert_int_equal(live_pieces(path), 2 * n);
    close_ok(other);                    /* a reader's close changes nothing */
    assert_int_equal(live_pieces(path), 2 * n);
    f = open_file(fx, path, HCOMP_O_RDWR);
    close_ok(f);
    uint64_t after = live_pieces(path);
    if (after > 4)                      /* 300 KB each side of the hole: a piece or two */
        fail_msg("%llu live pieces after the last close, of %zu small ones",
                 (unsigned long long) after, 2 * n);
    hcomp_footprint fp = footprint(path);
    assert_int_equal(fp.dead, 0);
    assert_true(fp.map_bytes < 64 * KIB);
    expect_file(fx, path, want, len);
    hcomp_stats st;
    hcomp_error err;
    assert_int_equal(hcomp_stat_path(path, &st, &err), HCOMP_OK);
    assert_int_equal(st.live_bytes, 2 * n * rec);   /* the hole stays a hole */

    /* 15 small pieces in a row: not worth it; 16 are */
    f = open_file(fx, path, HCOMP_O_RDWR);
    write_records(f, d, len, 15, rec, 3);
    close_ok(f);
    assert_int_equal(live_pieces(path), after + 15);
    f = open_file(fx, path, HCOMP_O_RDWR);
    write_records(f, d + 15 * rec, len + 15 * rec, 1, rec, 4);
    close_ok(f);
    assert_true(live_pieces(path) <= after + 1);
    memcpy(want + len, d, 16 * rec);    /* grown by the 16 records */
    expect_file(fx, path, want, len + 16 * rec);

    /* hcomp_reclaim=never: left as written */
    char path2[PATH_MAX];
    file_path(fx, "records-never", path2, sizeof(path2));
    set_opt(fx, "hcomp_reclaim", "never");
    f = open_file(fx, path2, HCOMP_O_RDWR | HCOMP_O_CREAT);
    write_records(f, d, 0, n, rec, 5);
    close_ok(f);
    assert_int_equal(live_pieces(path2), n);
    expect_file(fx, path2, d, n * rec);
    /* until hcomp compact */
    hcomp_reclaim_result r = compact_ok(fx, path2);
    assert_int_equal(r.coalesced_pieces, n);
    assert_int_equal(r.coalesced_bytes, n * rec);
    assert_true(live_pieces(path2) <= 2);
    assert_int_equal(footprint(path2).dead, 0);
    expect_file(fx, path2, d, n * rec);
    r = compact_ok(fx, path2);          /* and once is enough */
    assert_int_equal(r.coalesced_pieces, 0);
    free(want);
    free(d);
}

/* The same with a node-local first tier drained in the background (hcomp_drain=background).
 * The close drains the node-local segment and removes it before the small pieces are
 * written again, and the drain after the rewrite must pass the removed segment by (it
 * tried to open it, failed, and the old pieces stayed as dead bytes): a drain right after
 * a drain succeeds, and the close leaves the pieces written again, no dead bytes and the
 * node-local tier empty. */
static void test_small_pieces_coalesced_drained(void **state)
{
    fixture *fx = *state;
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json), "{\"version\": 1, \"tiers\": [{\"name\": \"ram\", \"path\": "
             "\"%s\", \"scope\": \"node-local\", \"bandwidth\": \"10GB/s\", \"measure\": false}, "
             "{\"name\": \"disk\", \"path\": \"%s\", \"bandwidth\": \"100MB/s\", "
             "\"measure\": false}]}\n", fx->t0, fx->t1);
    write_text(fx->config, json);
    set_opt(fx, "hcomp_drain", "background");
    set_opt(fx, "hcomp_priority", "async");     /* the fast tier first */
    char path[PATH_MAX];
    file_path(fx, "drained", path, sizeof(path));
    const size_t rec = 100, n = 2000;
    unsigned char *d = text_data(n * rec, 5);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    write_records(f, d, 0, n, rec, 6);
    hcomp_error err;
    pthread_mutex_lock(&f->lock);       /* the background drain takes it too */
    int rc1 = hcomp_drain_node_local(f, &err);
    if (rc1 != HCOMP_OK)
        fail_msg("the first drain: %s", err.msg);
    int rc2 = hcomp_drain_node_local(f, &err);
    pthread_mutex_unlock(&f->lock);
    if (rc2 != HCOMP_OK)
        fail_msg("a drain after a drain: %s", err.msg);
    close_ok(f);
    uint64_t after = live_pieces(path);
    if (after > 2)
        fail_msg("%llu live pieces after the last close, of %zu small ones",
                 (unsigned long long) after, n);
    hcomp_footprint fp = footprint(path);
    if (fp.dead != 0)
        fail_msg("%llu bytes of dead pieces left after the close", (unsigned long long) fp.dead);
    hcomp_stats st;
    assert_int_equal(hcomp_stat_path(path, &st, &err), HCOMP_OK);
    for (size_t t = 0; t < st.ntiers; t++)
        if (strcmp(st.tier[t].name, "ram") == 0)
            assert_int_equal(st.tier[t].pieces, 0);
    expect_file(fx, path, d, n * rec);
    free(d);
}

/* A file kept open by one process: the background thread (hcomp_drain=background)
 * reclaims while it is idle, and the handle goes on reading and writing after. */
static void test_background_reclaim(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_drain", "background");
    char path[PATH_MAX];
    file_path(fx, "bg", path, sizeof(path));
    const uint64_t len = 2 * MIB;
    unsigned char *a = text_data(len, 1), *b = text_data(len, 2);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    for (int i = 0; i < 6; i++)
        pwrite_ok(f, i % 2 ? b : a, len, 0);
    hcomp_footprint before = footprint(path);
    struct timespec nap = {1, 500000000};   /* idle: the thread looks every 0.2 s */
    nanosleep(&nap, NULL);
    hcomp_footprint after = footprint(path);
    if (after.map_bytes >= before.map_bytes || after.dead != 0)
        fail_msg("mapping file %llu bytes before the idle time, %llu after; %llu dead bytes",
                 (unsigned long long) before.map_bytes, (unsigned long long) after.map_bytes,
                 (unsigned long long) after.dead);
    expect_bytes(f, b, len, 0);
    pwrite_ok(f, a, 4096, 8192);
    memcpy(b + 8192, a, 4096);
    expect_bytes(f, b, len, 0);
    close_ok(f);
    expect_file(fx, path, b, len);
    free(a);
    free(b);
}

/* hcomp compact of path in a child killed after nap_s seconds (nap_s < 0: not killed) or
 * ended before; then the file must read as model says, before and after fsck --repair,
 * which must leave no problem and remove every unfinished mapping file (counted in
 * *temporaries). A child that ended tells through a pipe whether its compaction
 * succeeded (its exit status is valgrind's in the valgrind suite, where the child's
 * pool threads count as leaks at _exit). Returns 1 if the kill interrupted it. */
static int kill_compact_then_check(fixture *fx, const char *path, double nap_s, int i,
                                   const unsigned char *model, uint64_t len,
                                   uint64_t *temporaries)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        hcomp_reclaim_result r;
        hcomp_error err;
        char said[sizeof(err.msg) + 1];
        said[0] = hcomp_compact(path, fx->config, NULL, &r, &err) == HCOMP_OK ? 'y' : 'n';
        snprintf(said + 1, sizeof(said) - 1, "%s", said[0] == 'y' ? "" : err.msg);
        ssize_t w = write(fds[1], said, strlen(said) + 1);
        (void) w;
        _exit(0);
    }
    close(fds[1]);
    if (nap_s >= 0) {
        struct timespec nap = {(time_t) nap_s, (long) ((nap_s - (double) (time_t) nap_s) * 1e9)};
        nanosleep(&nap, NULL);
        kill(pid, SIGKILL);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char said[2048] = "";
    ssize_t got = read(fds[0], said, sizeof(said) - 1);
    close(fds[0]);
    int interrupted = got <= 0;
    if (!interrupted && said[0] != 'y')
        fail_msg("kill %d: the compaction failed: %s", i, said + 1);
    expect_file(fx, path, model, len);
    hcomp_fsck_result fr;
    hcomp_error err;
    assert_int_equal(hcomp_fsck(path, fx->config, 1, NULL, &fr, &err), HCOMP_OK);
    if (fr.problems)
        fail_msg("kill %d: fsck --repair leaves problems", i);
    if (fr.temporaries != fr.temporaries_removed)
        fail_msg("kill %d: %llu unfinished mapping files, %llu removed", i,
                 (unsigned long long) fr.temporaries, (unsigned long long) fr.temporaries_removed);
    *temporaries += fr.temporaries;
    expect_file(fx, path, model, len);
    return interrupted;
}

/* A compaction killed at any moment leaves a file that reads every byte right. */
static void test_killed_compaction(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    set_opt(fx, "hcomp_codec", "none");
    char path[PATH_MAX];
    file_path(fx, "killed", path, sizeof(path));
    const uint64_t len = 24 * PIECE;
    unsigned char *d1 = random_data(len, 11), *d2 = random_data(len, 12);
    /* time one full compaction, to spread the kills over it */
    write_session(fx, path, d1, len, 0);
    write_session(fx, path, d2, len / 2, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    compact_ok(fx, path);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    unsigned char *model = malloc(len);
    assert_non_null(model);
    memcpy(model, d1, len);
    memcpy(model, d2, len / 2);
    int interrupted = 0;
    uint64_t temporaries = 0;
    for (int i = 0; i < 10; i++) {
        /* a new half overwritten: more dead pieces to reclaim */
        unsigned char *d = random_data(len / 2, 100 + (uint64_t) i);
        uint64_t off = (i & 1) ? len / 2 : 0;
        write_session(fx, path, d, len / 2, off);
        memcpy(model + off, d, len / 2);
        free(d);
        interrupted += kill_compact_then_check(fx, path, took * (double) i / 10.0, i, model, len,
                                               &temporaries);
    }
    print_message("compaction %.3f s; %d of 10 runs killed before they ended; %llu unfinished "
                  "mapping files removed by fsck\n", took, interrupted,
                  (unsigned long long) temporaries);
    assert_true(interrupted > 0);
    free(d1);
    free(d2);
    free(model);
}

/* hcomp compact killed at 10 moments while it writes runs of small pieces again (and then
 * reclaims): the file reads as the model says after each kill, fsck --repair leaves no
 * problem, and what the next run finds still small it writes again. */
static void test_killed_coalescing(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    char path[PATH_MAX];
    file_path(fx, "killed-small", path, sizeof(path));
    const size_t rec = 200, n = 4000;
    const uint64_t len = (uint64_t) n * rec;
    unsigned char *model = text_data(len, 21);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    write_records(f, model, 0, n, rec, 21);
    close_ok(f);
    assert_int_equal(compact_ok(fx, path).coalesced_pieces, n);
    /* time a compaction as the kills will find it (half the records small again, in a
     * child process), to spread them over it */
    f = open_file(fx, path, HCOMP_O_RDWR);
    write_records(f, model, 0, n / 2, rec, 22);
    close_ok(f);
    struct timespec t0, t1;
    uint64_t temporaries = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(kill_compact_then_check(fx, path, -1, -1, model, len, &temporaries), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(live_pieces(path) <= 2);    /* it wrote the small pieces again */
    double took = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    int interrupted = 0;
    for (int i = 0; i < 10; i++) {
        /* half of it written again in small records: small pieces to write again */
        unsigned char *d = text_data(len / 2, 200 + (unsigned) i);
        uint64_t off = (i & 1) ? len / 2 : 0;
        f = open_file(fx, path, HCOMP_O_RDWR);
        write_records(f, d, off, n / 2, rec, 300 + (unsigned) i);
        close_ok(f);
        memcpy(model + off, d, len / 2);
        free(d);
        interrupted += kill_compact_then_check(fx, path, took * (double) i / 10.0, i, model, len,
                                               &temporaries);
    }
    compact_ok(fx, path);           /* whatever a kill left small is written again */
    assert_true(live_pieces(path) <= 2);
    assert_int_equal(footprint(path).dead, 0);
    expect_file(fx, path, model, len);
    print_message("a compaction writing %zu small pieces again: %.3f s in a child process; %d "
                  "of 10 runs killed before they ended\n", n / 2, took, interrupted);
    assert_true(interrupted > 0);
    free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_checkpoint_loop, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_pieces_moved_twice, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_of_many_segments, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_overwrites_then_compact, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_segments_removed_compacted_punched, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_compaction, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_opener_blocks_reclaim, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_pieces_coalesced, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_pieces_coalesced_drained, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_reclaim, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_compaction, reclaim_setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_coalescing, reclaim_setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
