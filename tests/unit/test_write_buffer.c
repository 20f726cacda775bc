/* The write-behind buffer (file/write_buffer.c, hcomp_file_pwrite_buffered): small writes
 * gathered per handle and written as one task. Checked against a model of the file's
 * bytes through every way a buffered write can be seen: this handle's reads, size,
 * truncation, immediate writes over it, another handle (not before a flush, then
 * yes), close and reopen, fsck and a rebuild of the mapping file from the pieces'
 * headers (pieces never span two runs), and a write-out that fails. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "file_fixture.h"
#include "file/file_internal.h"
#include "file/tools.h"

static void pwrite_buffered_ok(hcomp_file *f, const void *buf, uint64_t len, uint64_t off)
{
    hcomp_error err;
    int rc = hcomp_file_pwrite_buffered(f, buf, len, off, &err);
    if (rc != HCOMP_OK)
        fail_msg("buffered pwrite %llu at %llu: %s", (unsigned long long) len,
                 (unsigned long long) off, err.msg);
}

static void flush_ok(hcomp_file *f)
{
    hcomp_error err;
    if (hcomp_file_flush(f, &err) != HCOMP_OK)
        fail_msg("flush: %s", err.msg);
}

/* sequential small writes become few tasks of whole pieces (a task of at most a piece at
 * a time, so that what each overwrites is freed before the next is placed) */
static void test_sequential_small_writes_one_task(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "seq.hc", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char *d = text_data(2 * MIB, 1);
    for (uint64_t off = 0; off < 2 * MIB; off += 4 * KIB)
        pwrite_buffered_ok(f, d + off, 4 * KIB, off);
    assert_int_equal(f->stats.tasks, 0);            /* all of it still gathered */
    assert_int_equal(size_of(f), 2 * MIB);          /* ... but this handle sees it */
    expect_bytes(f, d, 2 * MIB, 0);                 /* a read writes it out first */
    assert_int_equal(f->stats.tasks, 2);            /* 512 writes, 2 tasks ... */
    assert_int_equal(f->stats.pieces, 2);           /* ... of one 1 MiB piece each */
    close_ok(f);
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, d, 2 * MIB, 0);
    close_ok(f);
    free(d);
}

/* hcomp_write_buffer=0: every write is a task of its own, as hcomp_file_pwrite; and
 * that is the default (a write is seen by other processes once it returns, as parallel
 * HDF5's metadata writes need), so this test runs without the fixture's 4 MiB */
static void test_buffer_off(void **state)
{
    fixture *fx = *state;
    char path[PATH_MAX];
    file_path(fx, "off.hc", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char *d = text_data(64 * KIB, 2);
    for (uint64_t off = 0; off < 64 * KIB; off += 4 * KIB)
        pwrite_buffered_ok(f, d + off, 4 * KIB, off);
    assert_int_equal(f->stats.tasks, 16);
    close_ok(f);
    free(d);
}

/* another handle sees nothing before a flush, everything after; the buffer fills and is
 * written out by itself */
static void test_visibility_to_other_handles(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_write_buffer", "64KiB");
    char path[PATH_MAX];
    file_path(fx, "vis.hc", path, sizeof(path));
    hcomp_file *w = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    hcomp_file *r = open_file(fx, path, HCOMP_O_RDONLY);
    unsigned char *d = random_data(256 * KIB, 3);
    pwrite_buffered_ok(w, d, 8 * KIB, 0);
    assert_int_equal(size_of(r), 0);
    flush_ok(w);
    assert_int_equal(size_of(r), 8 * KIB);
    expect_bytes(r, d, 8 * KIB, 0);
    /* 64 KiB gathered: written out without being asked */
    for (uint64_t off = 8 * KIB; off < 72 * KIB; off += 8 * KIB)
        pwrite_buffered_ok(w, d + off, 8 * KIB, off);
    assert_int_equal(w->wbuf.nruns, 0);
    expect_bytes(r, d, 72 * KIB, 0);
    /* a sync writes out what is left, durably */
    pwrite_buffered_ok(w, d + 100 * KIB, 1000, 100 * KIB);
    CHECK(hcomp_file_sync(w, &e_));
    uint64_t n;
    unsigned char got[1000];
    hcomp_error err;
    assert_int_equal(hcomp_file_pread(r, got, 1000, 100 * KIB, &n, &err), HCOMP_OK);
    assert_int_equal(n, 1000);
    assert_memory_equal(got, d + 100 * KIB, 1000);
    /* the close writes out the rest */
    pwrite_buffered_ok(w, d + 200 * KIB, 3000, 200 * KIB);
    close_ok(w);
    expect_bytes(r, d + 200 * KIB, 3000, 200 * KIB);
    close_ok(r);
    free(d);
}

/* Random buffered writes (overlapping, touching, apart), immediate writes, reads, sizes,
 * flushes, element-type changes (and truncations, when asked), against a model; then
 * reopen and fsck; without truncations also a mapping file rebuilt from the pieces'
 * headers, which must give the same bytes: every piece backs one logical range, which
 * its header names (a truncation is in no piece, so a rebuild cannot know it). */
static void random_against_model(fixture *fx, const char *name, int truncations)
{
    set_opt(fx, "hcomp_write_buffer", "256KiB");
    set_opt(fx, "hcomp_piece_size", "64KiB");
    set_opt(fx, "hcomp_reclaim", "never");     /* the rebuild needs every piece */
    char path[PATH_MAX];
    file_path(fx, name, path, sizeof(path));
    const uint64_t span = 1 * MIB;
    unsigned char *model = calloc(span, 1), *buf = malloc(span), *src = random_data(span, 9);
    assert_non_null(model);
    assert_non_null(buf);
    uint64_t size = 0, s = 42;
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    for (int step = 0; step < 3000; step++) {
        uint64_t what = rng(&s) % 100;
        uint64_t off = rng(&s) % (span - 70 * KIB);
        uint64_t len = 1 + rng(&s) % (what < 70 ? 6000 : 70 * KIB);
        const unsigned char *data = src + rng(&s) % (span - len);
        if (what < 70) {            /* small buffered writes, some right after the last */
            if (what < 20 && size > 0 && size < span - len)
                off = size;
            pwrite_buffered_ok(f, data, len, off);
        } else if (what < 80) {     /* an immediate write */
            pwrite_ok(f, data, len, off);
        } else if (what < 90) {     /* a read (writes the buffer out first) */
            uint64_t n = pread_ok(f, buf, len, off);
            uint64_t want = off >= size ? 0 : (len < size - off ? len : size - off);
            assert_int_equal(n, want);
            if (want)
                assert_memory_equal(buf, model + off, want);
            continue;
        } else if (what < 93) {     /* a truncation */
            if (!truncations)
                continue;
            uint64_t to = rng(&s) % (span / 2);
            CHECK(hcomp_file_truncate(f, to, &e_));
            if (to < size)
                memset(model + to, 0, size - to);
            size = to;
            continue;
        } else if (what < 96) {
            assert_int_equal(size_of(f), size);
            continue;
        } else if (what < 98) {
            flush_ok(f);
            continue;
        } else {                    /* the element type changes: the task ends */
            hcomp_file_set_dtype(f, (int) (rng(&s) % 3) - 1);
            continue;
        }
        memcpy(model + off, data, len);
        if (off + len > size)
            size = off + len;
    }
    assert_int_equal(size_of(f), size);
    close_ok(f);

    f = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(size_of(f), size);
    expect_bytes(f, model, size, 0);
    close_ok(f);
    hcomp_fsck_result res;
    hcomp_error err;
    assert_int_equal(hcomp_fsck(path, fx->config, 0, NULL, &res, &err), HCOMP_OK);
    assert_int_equal(res.problems, 0);
    if (!truncations) {
        assert_int_equal(unlink(path), 0);
        assert_int_equal(hcomp_fsck(path, fx->config, 1, NULL, &res, &err), HCOMP_OK);
        assert_true(res.rebuilt);
        f = open_file(fx, path, HCOMP_O_RDONLY);
        assert_int_equal(size_of(f), size);
        expect_bytes(f, model, size, 0);
        close_ok(f);
    }
    free(model);
    free(buf);
    free(src);
}

static void test_random_against_model(void **state)
{
    random_against_model(*state, "model.hc", 1);
}

static void test_random_rebuilt_from_headers(void **state)
{
    random_against_model(*state, "rebuild.hc", 0);
}

/* a write-out that fails (no room on any tier) is reported by the call that writes it out,
 * and again at close; the buffered bytes are not silently dropped before that */
static void test_failed_write_out_reported(void **state)
{
    fixture *fx = *state;
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json), "{\"version\": 1, \"tiers\": [{\"name\": \"tiny\", \"path\": "
             "\"%s\", \"capacity\": \"64KiB\", \"measure\": false}]}\n", fx->t1);
    write_text(fx->config, json);
    set_opt(fx, "hcomp_codec", "none");
    char path[PATH_MAX];
    file_path(fx, "full.hc", path, sizeof(path));
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    unsigned char *d = random_data(512 * KIB, 5);
    for (uint64_t off = 0; off < 512 * KIB; off += 16 * KIB) {
        hcomp_error err;
        int rc = hcomp_file_pwrite_buffered(f, d + off, 16 * KIB, off, &err);
        assert_int_equal(rc, HCOMP_OK);     /* under 4 MiB: gathered, not yet written */
    }
    hcomp_error err;
    assert_int_equal(hcomp_file_sync(f, &err), HCOMP_E_NOSPC);
    assert_non_null(strstr(err.msg, "earlier small writes"));
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_E_NOSPC);
    assert_non_null(strstr(err.msg, "earlier small writes"));
    free(d);
}

/* the fixture with gathering on: off by default, a hint turns it on */
static int setup_gathering(void **state)
{
    int rc = setup(state);
    if (rc == 0)
        set_opt(*state, "hcomp_write_buffer", "4MiB");
    return rc;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sequential_small_writes_one_task, setup_gathering,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_buffer_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_visibility_to_other_handles, setup_gathering,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup_gathering, teardown),
        cmocka_unit_test_setup_teardown(test_random_rebuilt_from_headers, setup_gathering,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_out_reported, setup_gathering,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
