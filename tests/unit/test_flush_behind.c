/* Segments sent to storage as they are written (hint hcomp_flush_after,
 * hcomp_tier_writer_flush_behind): on a tier that keeps its data (configured
 * "volatile": false), each time the hint's bytes were appended to a segment their
 * write-back is started; nothing is started with the hint at 0 or on a volatile tier,
 * and the bytes read back are those written in every case. The kernel's side (the
 * pages leave the page cache's dirty lists early) is not observable from here; what a
 * durable sync gains is measured by scripts/bench-small-writes (BENCHMARKS.md). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "file_fixture.h"
#include "file/file_internal.h"

#define NWRITES 8

/* one tier in fx->t1, of the volatility given */
static void one_tier(fixture *fx, int is_volatile)
{
    char json[2 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [\n"
             "  {\"name\": \"disk\", \"path\": \"%s\", \"capacity\": \"unlimited\", "
             "\"volatile\": %s, \"measure\": false}\n]}\n", fx->t1, is_volatile ? "true" : "false");
    write_text(fx->config, json);
    set_opt(fx, "hcomp_codec", "none");
}

/* NWRITES pieces of 1 MiB stored as they are, then the bytes the writer started to send
 * to storage as it wrote; the file is read back whole after a sync and a reopen */
static uint64_t write_and_count(fixture *fx, const char *name)
{
    char path[PATH_MAX];
    file_path(fx, name, path, sizeof(path));
    unsigned char *d = random_data(NWRITES * MIB, 11);
    hcomp_file *f = open_file(fx, path, HCOMP_O_WRONLY | HCOMP_O_CREAT);
    for (int i = 0; i < NWRITES; i++)
        pwrite_ok(f, d + (uint64_t) i * MIB, MIB, (uint64_t) i * MIB);
    uint64_t started = f->stats.flush_behind_bytes;
    hcomp_error err;
    if (hcomp_file_sync(f, &err) != HCOMP_OK)
        fail_msg("sync: %s", err.msg);
    assert_int_equal(f->stats.flush_behind_bytes, started);    /* the sync is not counted */
    close_ok(f);
    f = open_file(fx, path, HCOMP_O_RDONLY);
    unsigned char *back = malloc(NWRITES * MIB);
    assert_non_null(back);
    assert_int_equal(pread_ok(f, back, NWRITES * MIB, 0), NWRITES * MIB);
    assert_memory_equal(back, d, NWRITES * MIB);
    close_ok(f);
    free(back);
    free(d);
    return started;
}

/* The default (1 MiB): every piece's bytes as it was appended. */
static void test_default_sends_every_piece(void **state)
{
    fixture *fx = *state;
    one_tier(fx, 0);
    assert_int_equal(write_and_count(fx, "a.hc"), NWRITES * raw_piece_bytes(MIB));
}

/* 3 MiB: after the third and the sixth piece, those pieces; the last two wait for the
 * sync. */
static void test_threshold_groups_pieces(void **state)
{
    fixture *fx = *state;
    one_tier(fx, 0);
    set_opt(fx, "hcomp_flush_after", "3MiB");
    assert_int_equal(write_and_count(fx, "b.hc"), 6 * raw_piece_bytes(MIB));
}

static void test_off(void **state)
{
    fixture *fx = *state;
    one_tier(fx, 0);
    set_opt(fx, "hcomp_flush_after", "0");
    assert_int_equal(write_and_count(fx, "c.hc"), 0);
}

/* A tier in the node's memory has no storage to send to. */
static void test_volatile_tier_never(void **state)
{
    fixture *fx = *state;
    one_tier(fx, 1);
    set_opt(fx, "hcomp_drain", "never");
    set_opt(fx, "hcomp_sync", "tiers");     /* the sync leaves the pieces where they are */
    assert_int_equal(write_and_count(fx, "d.hc"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_sends_every_piece, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threshold_groups_pieces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_volatile_tier_never, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
