/* Unit tests of the in-memory extent map (newest write wins): hand-made cases with
 * the exact expected extents, then a long randomized run checked against a byte
 * array that records which write owns every byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file/extent_map.h"

/* ---- helpers ---------------------------------------------------------------------- */

static void put(hcomp_extent_map *m, uint64_t off, uint64_t len, uint32_t piece, uint32_t piece_off)
{
    hcomp_extent e = {off, len, piece, piece_off};
    assert_int_equal(hcomp_extent_map_insert(m, &e), 0);
}

/* The map must be exactly want[0..n). */
static void expect(const hcomp_extent_map *m, const hcomp_extent *want, size_t n)
{
    if (m->n != n) {
        for (size_t i = 0; i < m->n; i++)
            print_message("  have [%llu, +%llu) piece %u at %u\n",
                          (unsigned long long) m->v[i].off, (unsigned long long) m->v[i].len,
                          m->v[i].piece, m->v[i].piece_off);
        fail_msg("map has %zu extents, want %zu", m->n, n);
    }
    for (size_t i = 0; i < n; i++) {
        if (m->v[i].off != want[i].off || m->v[i].len != want[i].len ||
            m->v[i].piece != want[i].piece || m->v[i].piece_off != want[i].piece_off)
            fail_msg("extent %zu is [%llu, +%llu) piece %u at %u; want [%llu, +%llu) piece %u at %u",
                     i, (unsigned long long) m->v[i].off, (unsigned long long) m->v[i].len,
                     m->v[i].piece, m->v[i].piece_off, (unsigned long long) want[i].off,
                     (unsigned long long) want[i].len, want[i].piece, want[i].piece_off);
    }
}

#define EXPECT(m, ...)                                                           \
    do {                                                                         \
        const hcomp_extent want_[] = {__VA_ARGS__};                              \
        expect((m), want_, sizeof(want_) / sizeof(want_[0]));                    \
    } while (0)

/* ---- hand-made cases ----------------------------------------------------------------- */

static void test_insert_empty(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    assert_int_equal(m.n, 0);
    assert_int_equal(hcomp_extent_map_find(&m, 0), 0);
    put(&m, 1000, 24, 7, 3);
    EXPECT(&m, {1000, 24, 7, 3});
    hcomp_extent_map_free(&m);
    assert_null(m.v);
    assert_int_equal(m.n, 0);
}

static void test_zero_length_insert(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    put(&m, 0, 100, 1, 0);
    put(&m, 50, 0, 2, 0);   /* changes nothing */
    EXPECT(&m, {0, 100, 1, 0});
    hcomp_extent_map_free(&m);
}

static void test_appends(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    /* many appends, past the initial capacity */
    for (uint32_t i = 0; i < 1000; i++)
        put(&m, (uint64_t) i * 4096, 4096, i, 0);
    assert_int_equal(m.n, 1000);
    for (uint32_t i = 0; i < 1000; i++) {
        assert_true(m.v[i].off == (uint64_t) i * 4096);
        assert_true(m.v[i].len == 4096);
        assert_int_equal(m.v[i].piece, i);
    }
    hcomp_extent_map_free(&m);

    hcomp_extent_map_init(&m);
    put(&m, 0, 10, 1, 0);
    put(&m, 10, 20, 2, 5);
    put(&m, 40, 5, 3, 0);   /* append after a gap */
    EXPECT(&m, {0, 10, 1, 0}, {10, 20, 2, 5}, {40, 5, 3, 0});
    hcomp_extent_map_free(&m);
}

static void test_exact_overwrite(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    put(&m, 0, 100, 1, 0);
    put(&m, 100, 100, 2, 0);
    put(&m, 200, 100, 3, 0);
    put(&m, 100, 100, 4, 9);
    EXPECT(&m, {0, 100, 1, 0}, {100, 100, 4, 9}, {200, 100, 3, 0});
    put(&m, 0, 300, 5, 0);  /* exactly everything */
    EXPECT(&m, {0, 300, 5, 0});
    hcomp_extent_map_free(&m);
}

static void test_overwrite_middle(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    put(&m, 1000, 300, 1, 10);
    put(&m, 1100, 50, 2, 7);
    /* split in three; the right part starts 160 bytes into piece 1's data (10 + 150) */
    EXPECT(&m, {1000, 100, 1, 10}, {1100, 50, 2, 7}, {1150, 150, 1, 160});
    /* overwrite the start and the end of an extent */
    put(&m, 1000, 1, 3, 0);
    put(&m, 1299, 1, 4, 0);
    EXPECT(&m, {1000, 1, 3, 0}, {1001, 99, 1, 11}, {1100, 50, 2, 7}, {1150, 149, 1, 160},
           {1299, 1, 4, 0});
    hcomp_extent_map_free(&m);
}

static void test_overwrite_spanning(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    put(&m, 0, 100, 1, 0);
    put(&m, 100, 100, 2, 0);
    put(&m, 200, 100, 3, 0);
    put(&m, 300, 100, 4, 1000);
    put(&m, 500, 100, 5, 0);
    /* partial overlap with 1 and 4, covering 2 and 3 entirely */
    put(&m, 50, 300, 6, 0);
    EXPECT(&m, {0, 50, 1, 0}, {50, 300, 6, 0}, {350, 50, 4, 1050}, {500, 100, 5, 0});
    /* spanning a hole and an extent, ending in another hole */
    put(&m, 380, 250, 7, 0);
    EXPECT(&m, {0, 50, 1, 0}, {50, 300, 6, 0}, {350, 30, 4, 1050}, {380, 250, 7, 0});
    /* starting in a hole before everything */
    hcomp_extent_map_free(&m);
    hcomp_extent_map_init(&m);
    put(&m, 100, 100, 1, 0);
    put(&m, 300, 100, 2, 0);
    put(&m, 0, 350, 3, 0);
    EXPECT(&m, {0, 350, 3, 0}, {350, 50, 2, 50});
    hcomp_extent_map_free(&m);
}

static void test_insert_into_hole(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    put(&m, 0, 100, 1, 0);
    put(&m, 200, 100, 2, 0);
    put(&m, 120, 60, 3, 0);     /* strictly inside the hole */
    EXPECT(&m, {0, 100, 1, 0}, {120, 60, 3, 0}, {200, 100, 2, 0});
    put(&m, 100, 20, 4, 0);     /* exactly fills the gap on the left */
    EXPECT(&m, {0, 100, 1, 0}, {100, 20, 4, 0}, {120, 60, 3, 0}, {200, 100, 2, 0});
    put(&m, 180, 20, 5, 0);     /* and on the right */
    EXPECT(&m, {0, 100, 1, 0}, {100, 20, 4, 0}, {120, 60, 3, 0}, {180, 20, 5, 0},
           {200, 100, 2, 0});
    put(&m, 500, 10, 6, 0);
    put(&m, 400, 10, 7, 0);     /* a hole that ends the map */
    EXPECT(&m, {0, 100, 1, 0}, {100, 20, 4, 0}, {120, 60, 3, 0}, {180, 20, 5, 0},
           {200, 100, 2, 0}, {400, 10, 7, 0}, {500, 10, 6, 0});
    hcomp_extent_map_free(&m);
}

static void make_two(hcomp_extent_map *m)
{
    hcomp_extent_map_init(m);
    put(m, 0, 100, 1, 0);
    put(m, 100, 100, 2, 40);
}

static void test_truncate(void **state)
{
    (void) state;
    hcomp_extent_map m;

    make_two(&m);
    hcomp_extent_map_truncate(&m, 150);     /* inside an extent */
    EXPECT(&m, {0, 100, 1, 0}, {100, 50, 2, 40});
    hcomp_extent_map_free(&m);

    make_two(&m);
    hcomp_extent_map_truncate(&m, 50);      /* inside the first: the second goes */
    EXPECT(&m, {0, 50, 1, 0});
    hcomp_extent_map_free(&m);

    make_two(&m);
    hcomp_extent_map_truncate(&m, 100);     /* at a boundary */
    EXPECT(&m, {0, 100, 1, 0});
    hcomp_extent_map_free(&m);

    make_two(&m);
    hcomp_extent_map_truncate(&m, 200);     /* exactly the end */
    EXPECT(&m, {0, 100, 1, 0}, {100, 100, 2, 40});
    hcomp_extent_map_truncate(&m, 1u << 30); /* beyond the end */
    EXPECT(&m, {0, 100, 1, 0}, {100, 100, 2, 40});
    hcomp_extent_map_free(&m);

    make_two(&m);
    hcomp_extent_map_truncate(&m, 0);
    assert_int_equal(m.n, 0);
    put(&m, 10, 10, 3, 0);                  /* usable after */
    EXPECT(&m, {10, 10, 3, 0});
    hcomp_extent_map_free(&m);

    /* truncate inside a hole */
    hcomp_extent_map_init(&m);
    put(&m, 0, 10, 1, 0);
    put(&m, 100, 10, 2, 0);
    hcomp_extent_map_truncate(&m, 50);
    EXPECT(&m, {0, 10, 1, 0});
    hcomp_extent_map_free(&m);

    hcomp_extent_map_init(&m);
    hcomp_extent_map_truncate(&m, 0);       /* on an empty map */
    assert_int_equal(m.n, 0);
    hcomp_extent_map_free(&m);
}

static void test_find(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    put(&m, 100, 100, 1, 0);
    put(&m, 300, 100, 2, 0);
    put(&m, 400, 1, 3, 0);
    static const struct { uint64_t off; size_t want; } cases[] = {
        {0, 0}, {99, 0},                /* hole before everything */
        {100, 0}, {150, 0}, {199, 0},   /* inside the first, up to its last byte */
        {200, 1}, {250, 1}, {299, 1},   /* the hole between: the next extent */
        {300, 1}, {399, 1},
        {400, 2},                       /* boundary between touching extents */
        {401, 3}, {1000, 3}, {UINT64_MAX, 3}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t got = hcomp_extent_map_find(&m, cases[i].off);
        if (got != cases[i].want)
            fail_msg("find(%llu) = %zu, want %zu", (unsigned long long) cases[i].off, got,
                     cases[i].want);
    }
    hcomp_extent_map_free(&m);
}

/* ---- randomized, against a model ------------------------------------------------------- */

#define SPACE 65536
#define NOPS 4000

static uint64_t rng(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

typedef struct write_info {
    uint64_t off;
    uint32_t piece_off;
} write_info;

/* Compare the map with the model: owner[b] is the write that owns byte b, -1 for none.
 * Each extent must be non-empty, sorted, disjoint, and point into its write at the
 * right place (piece_off - off is the same for every part of one write). */
static void check_model(const hcomp_extent_map *m, const int32_t *owner, const write_info *w,
                        int32_t *scratch, int op)
{
    for (size_t b = 0; b < SPACE; b++)
        scratch[b] = -1;
    uint64_t prev_end = 0;
    for (size_t i = 0; i < m->n; i++) {
        const hcomp_extent *e = &m->v[i];
        if (e->len == 0 || e->off < prev_end || e->off + e->len > SPACE)
            fail_msg("op %d: extent %zu [%llu, +%llu) is empty, unsorted, overlapping or out "
                     "of range (previous end %llu)", op, i, (unsigned long long) e->off,
                     (unsigned long long) e->len, (unsigned long long) prev_end);
        prev_end = e->off + e->len;
        const write_info *wi = &w[e->piece];
        if ((uint64_t) e->piece_off != wi->piece_off + (e->off - wi->off))
            fail_msg("op %d: extent %zu of write %u has piece_off %u, want %llu", op, i, e->piece,
                     e->piece_off, (unsigned long long) (wi->piece_off + (e->off - wi->off)));
        for (uint64_t b = e->off; b < e->off + e->len; b++)
            scratch[b] = (int32_t) e->piece;
    }
    if (memcmp(scratch, owner, SPACE * sizeof(*owner)) != 0) {
        for (size_t b = 0; b < SPACE; b++)
            if (scratch[b] != owner[b])
                fail_msg("op %d: byte %zu belongs to write %d in the map, %d in the model", op, b,
                         scratch[b], owner[b]);
    }
    /* find() agrees with a linear scan */
    for (int k = 0; k < 8; k++) {
        uint64_t off = (uint64_t) ((unsigned) (op * 7919 + k * 8191) % (SPACE + 100));
        size_t want = 0;
        while (want < m->n && m->v[want].off + m->v[want].len <= off)
            want++;
        assert_int_equal(hcomp_extent_map_find(m, off), want);
    }
}

/* batched: writes are collected and given to hcomp_extent_map_insert_batch in batches of
 * 1 to 400 (a truncate, or the batch's random size, ends a batch), as a replay of a
 * mapping file does; the model and the checks are the same. ordered: 63 writes in 64 go
 * where the last one ended, a gap after it or a little back over it (batches in offset
 * order that overlap nothing of their own are resolved without the sweep), the others
 * anywhere */
static void random_run(int batched, int ordered)
{
    uint64_t seed = ordered ? 20261125 : batched ? 20261122 : 20240611;
    uint64_t next = 0;      /* ordered: where the next write goes, mostly */
    int nops = ordered ? 3 * NOPS : NOPS;
    hcomp_extent *batch = malloc(400 * sizeof(*batch));
    size_t nbatch = 0, batch_target = 1, batches = 0, max_batch = 0, in_order = 0;
    assert_non_null(batch);
    int32_t *owner = malloc(SPACE * sizeof(*owner));
    int32_t *scratch = malloc(SPACE * sizeof(*scratch));
    write_info *w = calloc(nops, sizeof(*w));
    assert_non_null(owner);
    assert_non_null(scratch);
    assert_non_null(w);
    for (size_t b = 0; b < SPACE; b++)
        owner[b] = -1;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    uint32_t nwrites = 0;
    size_t max_n = 0, truncates = 0;
    for (int op = 0; op < nops; op++) {
        uint64_t r = rng(&seed);
        if (batched ? r % 1000 < 6 : r % 100 < 4) {     /* rarer when batched: longer batches */
            /* truncate, mostly near the end so the map stays populated */
            uint64_t size = r % 100 == 0 ? 0 : (rng(&seed) % SPACE);
            if (r % 100 == 1 && m.n > 0)
                size = m.v[m.n - 1].off + m.v[m.n - 1].len - 1;   /* the last byte */
            if (r % 100 == 2 && m.n > 0)
                size = m.v[m.n / 2].off;                        /* an extent boundary */
            if (nbatch > 0) {
                assert_int_equal(hcomp_extent_map_insert_batch(&m, batch, nbatch), 0);
                nbatch = 0;
                check_model(&m, owner, w, scratch, op);
            }
            hcomp_extent_map_truncate(&m, size);
            for (uint64_t b = size; b < SPACE; b++)
                owner[b] = -1;
            truncates++;
        } else {
            uint64_t len;
            uint64_t kind = rng(&seed) % 10;
            if (kind < 6)
                len = 1 + rng(&seed) % 512;
            else if (kind < 9)
                len = 1 + rng(&seed) % 4096;
            else
                len = 1 + rng(&seed) % 20000;
            uint64_t off = rng(&seed) % (SPACE - len + 1);
            if (ordered && rng(&seed) % 64 != 0) {  /* after the last write, or a gap on */
                uint64_t how = rng(&seed) % 64;
                off = next + (how < 4 ? rng(&seed) % 3000 : 0);
                if (how == 4)                   /* a little back, over the last write */
                    off = next - (next < 300 ? next : 1 + rng(&seed) % 300);
                if (off + len > SPACE)
                    off = 0;
            }
            next = off + len;
            if (kind == 0 && m.n > 0 && !ordered) {     /* start exactly at a boundary */
                const hcomp_extent *e = &m.v[rng(&seed) % m.n];
                off = rng(&seed) % 2 ? e->off : e->off + e->len;
                if (off + len > SPACE)
                    len = SPACE - off;
                if (len == 0)
                    continue;
            }
            uint32_t id = nwrites++;
            w[id].off = off;
            w[id].piece_off = (uint32_t) (rng(&seed) % 100000);
            if (batched)
                batch[nbatch++] = (hcomp_extent) {off, len, id, w[id].piece_off};
            else
                put(&m, off, len, id, w[id].piece_off);
            for (uint64_t b = off; b < off + len; b++)
                owner[b] = (int32_t) id;
        }
        if (batched && nbatch < batch_target && op + 1 < nops)
            continue;
        if (nbatch > 0) {
            size_t q = 1;
            while (q < nbatch && batch[q].off >= batch[q - 1].off + batch[q - 1].len)
                q++;
            in_order += nbatch > 1 && q == nbatch;
            assert_int_equal(hcomp_extent_map_insert_batch(&m, batch, nbatch), 0);
            max_batch = nbatch > max_batch ? nbatch : max_batch;
            batches++;
            nbatch = 0;
            uint64_t r = rng(&seed) % 4;    /* mostly small batches, some large */
            batch_target = 1 + (size_t) (r == 0 ? rng(&seed) % 400 : rng(&seed) % 20);
        }
        if (m.n > max_n)
            max_n = m.n;
        check_model(&m, owner, w, scratch, op);
    }
    if (batched)    /* batches of few and of hundreds were both merged */
        print_message("%zu batches, the largest %zu, %zu of several writes in offset order\n",
                      batches, max_batch, in_order);
    if (batched)
        assert_true(batches > 30 && max_batch > 200);
    if (ordered)    /* both ways of resolving a batch were taken */
        assert_true(in_order > 10 && batches - in_order > 10);
    free(batch);
    /* the run did exercise a fragmented map and truncation */
    assert_true(max_n > 50);
    assert_true(truncates > (batched ? 10u : 50u));
    hcomp_extent_map_free(&m);
    free(owner);
    free(scratch);
    free(w);
}

static void test_random_against_model(void **state)
{
    (void) state;
    random_run(0, 0);
}

static void test_random_batches_against_model(void **state)
{
    (void) state;
    random_run(1, 0);
}

static void test_ordered_batches_against_model(void **state)
{
    (void) state;
    random_run(1, 1);
}

/* A batch resolved among itself: the newest of overlapping extents wins, an older one
 * keeps its bytes on both sides of a newer one inside it, and the old map keeps what
 * the batch does not cover. */
static void test_batch_hand_made(void **state)
{
    (void) state;
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    put(&m, 0, 100, 1, 0);
    put(&m, 200, 100, 2, 0);
    const hcomp_extent b[] = {
        {50, 200, 3, 0},     /* over the end of 1, the gap, the start of 2 */
        {80, 20, 4, 10},     /* inside 3 */
        {90, 30, 5, 0},      /* inside 3 and over the end of 4 */
        {400, 10, 6, 0},     /* beyond everything */
        {0, 0, 7, 0},        /* empty: ignored */
    };
    assert_int_equal(hcomp_extent_map_insert_batch(&m, b, 5), 0);
    EXPECT(&m, {0, 50, 1, 0}, {50, 30, 3, 0}, {80, 10, 4, 10}, {90, 30, 5, 0},
           {120, 130, 3, 70}, {250, 50, 2, 50}, {400, 10, 6, 0});
    hcomp_extent_map_free(&m);
}

/* Neighbours in a batch that continue one piece join into one extent, whether the batch
 * is in offset order (resolved as it is) or not (the sweep): the same map either way. */
static void test_batch_joins_neighbours(void **state)
{
    (void) state;
    const hcomp_extent in_order[] = {{0, 10, 1, 0}, {10, 10, 1, 10}, {20, 5, 2, 0},
                                     {30, 5, 2, 5}, {35, 0, 3, 0}, {35, 5, 2, 10}};
    const hcomp_extent shuffled[] = {{30, 5, 2, 5}, {0, 10, 1, 0}, {35, 5, 2, 10},
                                     {20, 5, 2, 0}, {10, 10, 1, 10}};
    for (int pass = 0; pass < 2; pass++) {
        hcomp_extent_map m;
        hcomp_extent_map_init(&m);
        put(&m, 5, 100, 9, 0);
        assert_int_equal(pass == 0 ? hcomp_extent_map_insert_batch(&m, in_order, 6)
                                   : hcomp_extent_map_insert_batch(&m, shuffled, 5), 0);
        /* 2's [20, 25) and [30, 40) do not touch; the old extent shows between them */
        EXPECT(&m, {0, 20, 1, 0}, {20, 5, 2, 0}, {25, 5, 9, 20}, {30, 10, 2, 5},
               {40, 65, 9, 35});
        hcomp_extent_map_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_empty),
        cmocka_unit_test(test_zero_length_insert),
        cmocka_unit_test(test_appends),
        cmocka_unit_test(test_exact_overwrite),
        cmocka_unit_test(test_overwrite_middle),
        cmocka_unit_test(test_overwrite_spanning),
        cmocka_unit_test(test_insert_into_hole),
        cmocka_unit_test(test_truncate),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_random_against_model),
        cmocka_unit_test(test_random_batches_against_model),
        cmocka_unit_test(test_batch_hand_made),
        cmocka_unit_test(test_ordered_batches_against_model),
        cmocka_unit_test(test_batch_joins_neighbours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
