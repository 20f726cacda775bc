/* HCDP on hand-computed cases: the cost of each alternative is worked out in the
 * comments, from the cost model of docs/ENGINE.md. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "engine/hcdp.h"
#include "hcomp_codec.h"

#define MIB (1024.0 * 1024.0)

/* candidates: raw; "fast" (ratio 2, 600 MB/s, 2000 MB/s); "mid" (2.5, 200, 700);
 * "strong" (3.5, 20, 100) */
static void base_input(hcdp_input *in, uint64_t size, double wc, double wd, double wr)
{
    memset(in, 0, sizeof(*in));
    in->size = size;
    in->piece_size = 1u << 20;
    in->w.wc = wc;
    in->w.wd = wd;
    in->w.wr = wr;
    in->ncand = 4;
    in->cand[0] = (hcdp_candidate){HCOMP_CODEC_NONE, 0, 0, 1.0, 0, 0, 0};
    in->cand[1] = (hcdp_candidate){HCOMP_CODEC_LZ4, 1, 0, 2.0, 600e6, 2000e6, 0};
    in->cand[2] = (hcdp_candidate){HCOMP_CODEC_ZSTD, 3, 0, 2.5, 200e6, 700e6, 0};
    in->cand[3] = (hcdp_candidate){HCOMP_CODEC_LZMA, 1, 0, 3.5, 20e6, 100e6, 0};
}

static void add_tier(hcdp_input *in, uint64_t room, double bw, double lat)
{
    in->tier[in->ntiers++] = (hcdp_tier){.room = room, .write_Bps = bw, .read_Bps = bw, .latency = lat};
}

/* 1 MiB, async weights; a 10 GB/s tier with room for all (1 us), a 100 MB/s one (4 ms) */
static void ram_pfs_async(hcdp_input *in)
{
    base_input(in, 1 << 20, 1, 0, 0);
    add_tier(in, 64u << 20, 10e9, 1e-6);
    add_tier(in, UINT64_MAX / 4, 100e6, 4e-3);
}

/* One fast tier with room for all: with async weights the write time decides:
 * raw 1 MiB / 10 GB/s = 0.1 ms beats any codec (lz4 alone costs 1.7 ms). */
static void test_fits_in_ram(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    ram_pfs_async(&in);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 0);
    assert_int_equal(p.part[0].cand, 0);
    assert_true(p.part[0].len == 1u << 20);
    assert_true(fabs(p.cost - ((1 << 20) + 16) / 10e9 - 1e-6) < 1e-9);
}

/* The same tiers, the fast one node-local and drained at close to the slow one: its
 * cost becomes raw 0.1 ms + read back 0.1 ms + the slow tier's 10.5 ms + 4 ms latency,
 * more than lz4 straight on the slow tier (1.75 + 5.24 + 4 ms = 11.0 ms): the engine
 * goes straight there. */
static void test_drain_close_charged(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    ram_pfs_async(&in);
    in.tier[0].drain_to = 2;
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 1);
    assert_int_equal(p.part[0].cand, 1);
    double raw_local = ((1 << 20) + 16) / 10e9 * 2 + 1e-6 + ((1 << 20) + 16) / 100e6 + 1e-6 + 4e-3;
    assert_true(fabs(hcdp_place_cost(&in, 1 << 20, 0, 0) - raw_local) < 1e-9);
    double lz4 = (1 << 20) / 600e6 + ((1 << 19) + 16) / 100e6 + 4e-3;
    assert_true(fabs(p.cost - lz4) < 1e-9);
}

/* The same tiers, drained at close, with weights mostly on reading (0.2 write, 0.8
 * read): the bytes are read after the close, from the slow tier, whichever tier takes
 * them first. Raw on the fast tier: W = 0.1 ms + 1 us + read back 0.1 ms + 10.5 ms +
 * 4 ms 1 us, R = the slow tier's 10.5 + 4 ms: 14.5 ms in all. On the slow tier lz4:
 * W = 1.75 + 5.24 + 4 = 11.0 ms, R = 0.52 + 5.24 + 4 = 9.77 ms: 10.0 ms, the plan
 * (zstd 10.4, raw 14.5). When R was the fast tier's (0.1 ms), raw there cost 3.0 ms and
 * won: the data went to RAM, to be moved and encoded again at the close. */
static void test_drain_close_goes_shared(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    ram_pfs_async(&in);
    in.w = (hcdp_weights){0.2, 0.8, 0.0};
    in.tier[0].drain_to = 2;
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 1);
    assert_int_equal(p.part[0].cand, 1);
    double st = (1 << 20) + 16;
    double w_local = st / 10e9 + 1e-6 + st / 10e9 + st / 100e6 + 1e-6 + 4e-3;
    double r_home = st / 100e6 + 4e-3;
    assert_true(fabs(hcdp_place_cost(&in, 1 << 20, 0, 0) - (0.2 * w_local + 0.8 * r_home)) < 1e-9);
    double lz4_st = (1 << 19) + 16;
    double lz4 = 0.2 * ((1 << 20) / 600e6 + lz4_st / 100e6 + 4e-3) +
                 0.8 * ((1 << 20) / 2000e6 + lz4_st / 100e6 + 4e-3);
    assert_true(fabs(p.cost - lz4) < 1e-9);
}

/* Async weights on a slow tier: write time = len/comp + stored/bw.
 * 1 MiB: raw 10.5 ms; lz4 1.75 + 5.24 = 7.0 ms; zstd 5.24 + 4.19 = 9.4 ms;
 * lzma 52 + 3 = 55 ms: the fastest codec (lz4) wins. */
static void test_async_fastest(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 1 << 20, 1, 0, 0);
    add_tier(&in, UINT64_MAX / 4, 100e6, 0);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].cand, 1);
    double lz4 = (1 << 20) / 600e6 + ((1 << 19) + 16) / 100e6;
    assert_true(fabs(p.cost - lz4) < 1e-9);
}

/* Archival weights: only the footprint counts, stored / bw: the highest ratio wins
 * even though it is the slowest. */
static void test_archival_highest_ratio(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 8 << 20, 0, 0, 1);
    add_tier(&in, UINT64_MAX / 4, 100e6, 0);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].cand, 3);
}

/* Incompressible data: no codec is a candidate (ratio <= 1): raw. */
static void test_incompressible_none(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 4 << 20, 0.3, 0.3, 0.4);
    for (int c = 1; c < in.ncand; c++)
        in.cand[c].ratio = c == 1 ? 1.0 : 0.98;
    add_tier(&in, UINT64_MAX / 4, 100e6, 0);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].cand, 0);
}

/* A task larger than the fast tier spills: raw (only candidate) 1 MiB task on a
 * tier with 300 KiB of room: the largest 4 KiB multiple whose stored size (+16 B
 * header) fits is 296 KiB (303104 + 16 <= 307200); the rest goes to tier 1. */
static void test_spill_4k_split(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 1 << 20, 1, 0, 0);
    in.ncand = 1;
    add_tier(&in, 300 * 1024, 10e9, 0);
    add_tier(&in, UINT64_MAX / 4, 100e6, 0);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 2);
    assert_int_equal(p.part[0].tier, 0);
    assert_true(p.part[0].len == 296 * 1024);
    assert_true(p.part[0].len % HCDP_ALIGN == 0);
    assert_int_equal(p.part[1].tier, 1);
    assert_true(p.part[1].len == (1 << 20) - 296 * 1024);
}

/* A full tier (room 0) or a vanished one (the caller gives room 0) is skipped. */
static void test_full_tier_skipped(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 1 << 20, 0.3, 0.3, 0.4);
    add_tier(&in, 0, 10e9, 0);
    add_tier(&in, 0, 2e9, 0);
    add_tier(&in, UINT64_MAX / 4, 100e6, 0);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 2);
}

/* No room anywhere: the plan fails (the caller reports no space). */
static void test_no_room(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 1 << 20, 0.3, 0.3, 0.4);
    add_tier(&in, 1000, 10e9, 0);
    assert_int_equal(hcdp_plan_task(&in, &p), -1);
}

/* Compression makes the task fit the fast tier: 1 MiB with 600 KiB of room. Raw
 * would have to split; lz4 (ratio 2: 512 KiB + 16) fits whole. With read-after-write
 * weights: lz4 on tier 0 = 0.3 (1.75 ms + 0.05) + 0.3 (0.52 + 0.05) + 0.4 (0.05)
 * = 0.73 ms, less than any split with a part on the 100 MB/s tier. */
static void test_compression_fits_fast_tier(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 1 << 20, 0.3, 0.3, 0.4);
    add_tier(&in, 600 * 1024, 10e9, 0);
    add_tier(&in, UINT64_MAX / 4, 100e6, 0);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 0);
    assert_int_equal(p.part[0].cand, 1);
}

/* The price of a tier's room, async weights (a raw byte costs 1 / bandwidth): a RAM tier
 * (10 GB/s) 75% full over an empty NVMe tier (2 GB/s) over an unbounded PFS (100 MB/s).
 * NVMe is empty: price 0. RAM: (NVMe's rate 5e-10 + 0 - its own 1e-10) x 0.75^2 =
 * 2.25e-10 s a byte. With NVMe half full: NVMe (1e-8 - 5e-10) x 0.5^2 = 2.375e-9; RAM
 * (5e-10 + 2.375e-9 - 1e-10) x 0.5625 = 1.5609375e-9. With NVMe full (no room), RAM's
 * data would go to the PFS: (1e-8 - 1e-10) x 0.5625 = 5.56875e-9. Weights are normalised
 * first (here 2, 0, 0). */
static void test_room_prices(void **state)
{
    (void) state;
    hcdp_input in;
    base_input(&in, 1 << 20, 2, 0, 0);
    add_tier(&in, 1u << 20, 10e9, 0);
    add_tier(&in, 8u << 20, 2e9, 0);
    add_tier(&in, UINT64_MAX / 4, 100e6, 0);
    in.tier[0].capacity = 4u << 20;
    in.tier[1].capacity = 8u << 20;
    hcdp_room_prices(&in);
    assert_true(in.tier[2].price == 0 && in.tier[1].price == 0);
    assert_true(fabs(in.tier[0].price - 2.25e-10) < 1e-22);
    in.tier[1].room = 4u << 20;
    hcdp_room_prices(&in);
    assert_true(fabs(in.tier[1].price - 2.375e-9) < 1e-21);
    assert_true(fabs(in.tier[0].price - 1.5609375e-9) < 1e-21);
    in.tier[1].room = 0;
    hcdp_room_prices(&in);
    assert_true(in.tier[1].price == 0);
    assert_true(fabs(in.tier[0].price - 5.56875e-9) < 1e-20);
}

/* Async weights, a 20 MiB RAM tier (10 GB/s) over the PFS (100 MB/s). At 10% full, raw
 * on RAM costs 0.1 ms + its room (9.9e-9 x 0.01 a byte: 0.1 ms), lz4 1.75 ms + 0.05 ms
 * + 0.05 ms: raw. At 90% full the room costs 9.9e-9 x 0.81 = 8.0e-9 a byte: raw 0.1 +
 * 8.4 ms, lz4 1.8 + 4.2 ms, zstd 5.2 + 3.4 ms, the PFS 10.5 ms + 4 ms latency: lz4, which
 * leaves twice the room for the tasks that follow. */
static void test_filling_tier_compresses(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 1 << 20, 1, 0, 0);
    add_tier(&in, 18u << 20, 10e9, 0);
    add_tier(&in, UINT64_MAX / 4, 100e6, 4e-3);
    in.tier[0].capacity = 20u << 20;
    hcdp_room_prices(&in);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 0);
    assert_int_equal(p.part[0].cand, 0);
    in.tier[0].room = 2u << 20;
    hcdp_room_prices(&in);
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 0);
    assert_int_equal(p.part[0].cand, 1);
    double lz4 = ((1 << 20) / 600e6 + ((1 << 19) + 16) / 10e9) + in.tier[0].price * ((1 << 19) + 16);
    assert_true(fabs(p.cost - lz4) < 1e-12);
}

/* A part is split off only onto a room of at least a minimum part (64 KiB here), the
 * floor below which the store path cannot cut a part that came out larger than
 * predicted. 1 MiB, async weights, RAM (10 GB/s) over the PFS (100 MB/s, 4 ms): with
 * 200 KiB of RAM left, lz4's largest part there (about 400 KiB) and the rest on the PFS
 * (about 9 ms) beat the whole task on the PFS with lz4 (11.0 ms); with 60 KiB left,
 * lz4's 120 KiB would fit, but that room is below the floor: the whole task goes down. */
static void test_no_split_into_sliver(void **state)
{
    (void) state;
    hcdp_input in;
    hcdp_plan p;
    base_input(&in, 1 << 20, 1, 0, 0);
    add_tier(&in, 200 * 1024, 10e9, 0);
    add_tier(&in, UINT64_MAX / 4, 100e6, 4e-3);
    in.tier[0].min_part = 64 * 1024;
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 2);
    assert_int_equal(p.part[0].tier, 0);
    assert_int_equal(p.part[0].cand, 1);
    in.tier[0].room = 60 * 1024;
    assert_int_equal(hcdp_plan_task(&in, &p), 0);
    assert_int_equal(p.nparts, 1);
    assert_int_equal(p.part[0].tier, 1);
}

/* The plan's cost equals the sum of its parts' costs, and is no worse than every
 * single-tier, single-codec assignment that fits (exhaustive check). */
static void test_optimal_against_exhaustive(void **state)
{
    (void) state;
    for (int trial = 0; trial < 50; trial++) {
        hcdp_input in;
        hcdp_plan p;
        double w[3] = {(trial % 5) / 4.0, (trial % 3) / 2.0, (trial % 7) / 6.0};
        if (w[0] + w[1] + w[2] == 0)
            w[2] = 1;
        base_input(&in, (uint64_t) (1 + trial % 9) << 20, w[0], w[1], w[2]);
        add_tier(&in, (uint64_t) (trial % 4) << 20, 10e9, 1e-6);
        add_tier(&in, (uint64_t) (1 + trial % 3) << 21, 2e9, 2e-5);
        add_tier(&in, UINT64_MAX / 4, 100e6, 4e-3);
        assert_int_equal(hcdp_plan_task(&in, &p), 0);
        double sum = 0;
        uint64_t len = 0;
        for (int i = 0; i < p.nparts; i++) {
            sum += p.part[i].cost;
            len += p.part[i].len;
        }
        assert_true(len == in.size);
        assert_true(fabs(sum - p.cost) < 1e-9 * (1 + p.cost));
        double sw = w[0] + w[1] + w[2];
        hcdp_input norm = in;
        norm.w.wc /= sw;
        norm.w.wd /= sw;
        norm.w.wr /= sw;
        for (int t = 0; t < in.ntiers; t++)
            for (int c = 0; c < in.ncand; c++) {
                double stored = ceil((double) in.size / in.cand[c].ratio) +
                    16.0 * (double) ((in.size + in.piece_size - 1) / in.piece_size);
                if (stored <= (double) in.tier[t].room)
                    assert_true(p.cost <= hcdp_place_cost(&norm, in.size, t, c) + 1e-12);
            }
    }
}

/* The lower bound on splits changes nothing but the work: on nearly full hierarchies
 * with many candidates (as the engine gives HCDP: about 25), the bounded search returns
 * the plan of the search that explores every split, in fewer states. */
static void test_bound_keeps_the_plan(void **state)
{
    (void) state;
    unsigned long seed = 12345;
    unsigned states_bounded = 0, states_all = 0;
    for (int trial = 0; trial < 200; trial++) {
        hcdp_input in;
        double w[3];
        for (int i = 0; i < 3; i++) {
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
            w[i] = (double) (seed >> 40 & 0xffff) / 65535.0;
        }
        base_input(&in, (uint64_t) (1 + trial % 8) << 20, w[0], w[1], w[2] + 1e-3);
        in.ncand = 25;
        for (int c = 1; c < in.ncand; c++) {
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
            double u = (double) (seed >> 33 & 0xfffff) / 1048575.0;
            in.cand[c] = (hcdp_candidate){HCOMP_CODEC_ZSTD, c, c % 2, 1.0 + 3.0 * u,
                                          (20 + 1000 * u * u) * 1e6, (100 + 3000 * u) * 1e6, 0};
        }
        uint64_t r = (uint64_t) (trial % 5 + 1) << 18; /* 256 KiB .. 1.25 MiB: nearly full */
        add_tier(&in, r, 10e9, 1e-7);
        add_tier(&in, 2 * r, 2e9, 2e-5);
        add_tier(&in, 3 * r, 500e6, 6e-5);
        add_tier(&in, UINT64_MAX / 4, 100e6, 4e-3);
        if (trial % 2) {        /* rooms priced: the bound must hold with prices too */
            for (int t = 0; t < 3; t++)
                in.tier[t].capacity = in.tier[t].room * (uint64_t) (2 + trial % 3);
            hcdp_room_prices(&in);
        }
        hcdp_plan a, b;
        assert_int_equal(hcdp_plan_task(&in, &a), 0);
        in.no_bound = 1;
        assert_int_equal(hcdp_plan_task(&in, &b), 0);
        assert_true(fabs(a.cost - b.cost) <= 1e-12 * b.cost);
        assert_int_equal(a.nparts, b.nparts);
        for (int i = 0; i < a.nparts; i++)
            assert_memory_equal(&a.part[i], &b.part[i], sizeof(a.part[i]));
        assert_true(a.states <= b.states);
        states_bounded += a.states;
        states_all += b.states;
    }
    print_message("states: %u bounded, %u exploring every split\n", states_bounded, states_all);
    assert_true(states_bounded * 4 < states_all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits_in_ram),
        cmocka_unit_test(test_drain_close_charged),
        cmocka_unit_test(test_drain_close_goes_shared),
        cmocka_unit_test(test_async_fastest),
        cmocka_unit_test(test_archival_highest_ratio),
        cmocka_unit_test(test_incompressible_none),
        cmocka_unit_test(test_spill_4k_split),
        cmocka_unit_test(test_full_tier_skipped),
        cmocka_unit_test(test_no_room),
        cmocka_unit_test(test_compression_fits_fast_tier),
        cmocka_unit_test(test_no_split_into_sliver),
        cmocka_unit_test(test_room_prices),
        cmocka_unit_test(test_filling_tier_compresses),
        cmocka_unit_test(test_optimal_against_exhaustive),
        cmocka_unit_test(test_bound_keeps_the_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
