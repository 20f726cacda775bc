/* Format version 3's writer logs (docs/FORMAT.md, "Writer logs"): every writer appends to a
 * log of its own, readers apply all logs in one order whatever order they read them in, a
 * damaged log is named, and the last close folds the logs into the mapping file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "file_fixture.h"
#include "file/file_internal.h"
#include "common/util.h"
#include "file/tools.h"

#include <dirent.h>

/* the writer logs in the file's log directory (their names into names[], if given) */
static int count_logs(const hcomp_file *f, char names[][NAME_MAX + 1], int max)
{
    DIR *d = opendir(f->logdir);
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".log") == 0) {
            if (names && n < max)
                snprintf(names[n], NAME_MAX + 1, "%s", e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Make a file look unchanged for an hour. */
static void age(const char *path)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= 3600;
    t[1] = t[0];
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

/* Two writers of one file, each with its own log; the mapping file stays its header; the
 * last close folds them in, and the file reads the same after. */
static void test_each_writer_its_log(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    char path[PATH_MAX];
    file_path(fx, "two", path, sizeof(path));
    const uint64_t n = 64 * KIB;
    unsigned char *model = calloc(n, 1), *a = random_data(n, 1), *b = text_data(n, 2);
    hcomp_file *fa = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    hcomp_file *fb = open_file(fx, path, HCOMP_O_RDWR);
    assert_int_equal(fa->hdr.version, 3);
    for (uint64_t off = 0; off < n; off += 4 * KIB) {   /* interleaved, then overlapping */
        hcomp_file *w = (off / (4 * KIB)) % 2 ? fb : fa;
        const unsigned char *src = w == fa ? a : b;
        pwrite_ok(w, src + off, 4 * KIB, off);
        memcpy(model + off, src + off, 4 * KIB);
    }
    pwrite_ok(fb, b + 1000, 6000, 1000);
    memcpy(model + 1000, b + 1000, 6000);
    pwrite_ok(fa, a + 3000, 100, 3000);
    memcpy(model + 3000, a + 3000, 100);
    assert_int_equal(count_logs(fa, NULL, 0), 2);
    assert_int_equal(file_length(path), HCOMP_MAP_HEADER_SIZE);   /* nothing appended to it */
    expect_bytes(fa, model, n, 0);
    expect_bytes(fb, model, n, 0);
    hcomp_file *r = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(r, model, n, 0);
    close_ok(r);
    uint64_t gen = fa->hdr.log_gen;
    char logdir[PATH_MAX];
    snprintf(logdir, sizeof(logdir), "%s", fa->logdir);
    close_ok(fb);
    close_ok(fa);       /* the last: folds */
    r = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(r->hdr.log_gen, gen + 1);
    assert_int_equal(count_logs(r, NULL, 0), 0);
    assert_true(file_length(path) > HCOMP_MAP_HEADER_SIZE);
    expect_bytes(r, model, n, 0);
    close_ok(r);
    CHECK(hcomp_file_delete(path, &e_));
    assert_int_equal(access(logdir, F_OK), -1);     /* the log directory went with it */
    free(model);
    free(a);
    free(b);
}

/* Records read late (another log's, appended before, read after later ones): they do not
 * win over what came after them, pieces nor sizes. The late log's tail is hidden from the
 * reader by cutting it off and put back after the reader applied the later log. */
static void test_late_records_keep_order(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_piece_size", "4096");
    set_opt(fx, "hcomp_reclaim", "never");
    char path[PATH_MAX];
    file_path(fx, "late", path, sizeof(path));
    const uint64_t n = 32 * KIB;
    unsigned char *model = calloc(n, 1), *a = random_data(n, 3), *b = random_data(n, 4);
    hcomp_file *fa = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    hcomp_file *fb = open_file(fx, path, HCOMP_O_RDWR);
    pwrite_ok(fa, a, 4 * KIB, 0);       /* A's log exists */
    pwrite_ok(fb, b, 4 * KIB, 28 * KIB);  /* B's too */
    hcomp_file *r = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(r) == n);
    char la[PATH_MAX + NAME_MAX + 2];
    snprintf(la, sizeof(la), "%s/%s", fa->logdir, fa->wlogs[fa->own_wlog].name);
    off_t before = file_length(la);
    /* A writes [0, 16K) and truncates to 20K; then B, later, writes [8K, 24K) */
    pwrite_ok(fa, a, 16 * KIB, 0);
    CHECK(hcomp_file_truncate(fa, 20 * KIB, &e_));
    off_t after = file_length(la);
    unsigned char *tail = malloc((size_t) (after - before));
    int fd = open(la, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, tail, (size_t) (after - before), before), after - before);
    assert_int_equal(ftruncate(fd, before), 0);
    pwrite_ok(fb, b + 8 * KIB, 16 * KIB, 8 * KIB);
    /* the reader sees B's write alone first */
    unsigned char *got = malloc(n);
    assert_true(size_of(r) == n);
    /* then A's, late */
    assert_int_equal(pwrite(fd, tail, (size_t) (after - before), before), after - before);
    close(fd);
    memcpy(model, a, 4 * KIB);
    memcpy(model, a, 16 * KIB);          /* A's write */
    memset(model + 20 * KIB, 0, n - 20 * KIB);  /* A's truncation (B's first write dropped) */
    memcpy(model + 8 * KIB, b + 8 * KIB, 16 * KIB);  /* B's write, after both */
    assert_true(size_of(r) == 24 * KIB);
    assert_int_equal(pread_ok(r, got, n, 0), 24 * KIB);
    assert_memory_equal(got, model, 24 * KIB);
    /* a reader that reads everything at once agrees */
    hcomp_file *r2 = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(r2) == 24 * KIB);
    expect_bytes(r2, model, 24 * KIB, 0);
    close_ok(r2);
    close_ok(r);
    close_ok(fb);
    close_ok(fa);
    free(got);
    free(tail);
    free(model);
    free(a);
    free(b);
}

/* A record of a writer log damaged, and a log's header: reads fail naming the log. */
static void test_damaged_writer_log_named(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");      /* the logs stay */
    char path[PATH_MAX];
    file_path(fx, "dmg", path, sizeof(path));
    unsigned char *a = random_data(64 * KIB, 5);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, a, 64 * KIB, 0);
    pwrite_ok(f, a, 4 * KIB, 64 * KIB);
    char names[2][NAME_MAX + 1], log[PATH_MAX + NAME_MAX + 2];
    assert_int_equal(count_logs(f, names, 2), 1);
    snprintf(log, sizeof(log), "%s/%s", f->logdir, names[0]);
    close_ok(f);
    off_t len = file_length(log);
    flip_byte(log, HCOMP_WLOG_HEADER_SIZE + 40);     /* inside the first batch, not its end */
    /* damage in a log changed seconds ago is first taken for an append still arriving
     * from another node: the reader reads what comes before it (the second write's
     * record comes after) */
    hcomp_file *r = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(r) < 64 * KIB + 4 * KIB);
    close_ok(r);
    age(log);                                        /* a log nobody writes to any more */
    r = open_file(fx, path, HCOMP_O_RDONLY);
    unsigned char buf[16];
    uint64_t got;
    hcomp_error err;
    assert_int_equal(hcomp_file_pread(r, buf, sizeof(buf), 0, &got, &err), HCOMP_E_CORRUPT);
    assert_non_null(strstr(err.msg, names[0]));
    close_ok(r);
    flip_byte(log, HCOMP_WLOG_HEADER_SIZE + 40);
    flip_byte(log, 20);                              /* the header's file id */
    age(log);
    r = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(hcomp_file_pread(r, buf, sizeof(buf), 0, &got, &err), HCOMP_E_CORRUPT);
    assert_non_null(strstr(err.msg, names[0]));
    close_ok(r);
    flip_byte(log, 20);
    assert_int_equal(file_length(log), len);
    r = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(r, a, 64 * KIB, 0);
    close_ok(r);
    free(a);
}

/* A log of another generation (left by a fold that died before removing it) is ignored. */
static void test_stale_generation_ignored(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    char path[PATH_MAX];
    file_path(fx, "stale", path, sizeof(path));
    unsigned char *a = random_data(16 * KIB, 6), *b = random_data(16 * KIB, 7);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, a, 16 * KIB, 0);
    char names[2][NAME_MAX + 1], log[PATH_MAX + NAME_MAX + 2], keep[PATH_MAX + NAME_MAX + 8];
    count_logs(f, names, 2);
    snprintf(log, sizeof(log), "%s/%s", f->logdir, names[0]);
    snprintf(keep, sizeof(keep), "%s.keep", log);
    close_ok(f);
    /* keep a copy of the log, fold, then put the old log back beside the new file */
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", log, keep);
    assert_int_equal(system(cmd), 0);
    set_opt(fx, "hcomp_reclaim", "close");
    f = open_file(fx, path, HCOMP_O_RDWR);
    pwrite_ok(f, b, 16 * KIB, 0);
    close_ok(f);                                     /* folds: generation + 1 */
    assert_int_equal(rename(keep, log), 0);
    hcomp_file *r = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(r->nwlogs, 0);
    expect_bytes(r, b, 16 * KIB, 0);
    close_ok(r);
    free(a);
    free(b);
}

/* hcomp fsck: a lost record of a writer log is found and named; --repair writes the log
 * again without it, and the other writes read back. */
static void test_fsck_repairs_writer_log(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");      /* the log stays for fsck to see */
    char path[PATH_MAX];
    file_path(fx, "fsck", path, sizeof(path));
    unsigned char *a = random_data(48 * KIB, 8);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    char names[2][NAME_MAX + 1], log[PATH_MAX + NAME_MAX + 2];
    off_t ends[3];
    for (int k = 0; k < 3; k++) {
        pwrite_ok(f, a + k * 16 * KIB, 16 * KIB, (uint64_t) k * 16 * KIB);
        if (k == 0) {
            count_logs(f, names, 2);
            snprintf(log, sizeof(log), "%s/%s", f->logdir, names[0]);
        }
        ends[k] = file_length(log);
    }
    close_ok(f);
    flip_byte(log, ends[0] + 40);       /* the second write's PIECE record */
    hcomp_fsck_result r;
    hcomp_error err;
    assert_int_equal(hcomp_fsck(path, fx->config, 0, NULL, &r, &err), HCOMP_OK);
    assert_true(r.problems);
    assert_int_equal(r.lost_records, 1);
    assert_int_equal(hcomp_fsck(path, fx->config, 1, NULL, &r, &err), HCOMP_OK);
    assert_true(r.rewritten);
    assert_int_equal(hcomp_fsck(path, fx->config, 0, NULL, &r, &err), HCOMP_OK);
    assert_int_equal(r.lost_records, 0);
    hcomp_file *g = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(g, a, 16 * KIB, 0);
    expect_bytes(g, a + 32 * KIB, 16 * KIB, 32 * KIB);
    unsigned char *zero = calloc(16 * KIB, 1);
    expect_bytes(g, zero, 16 * KIB, 16 * KIB);  /* the lost write: a hole, never guessed */
    close_ok(g);
    free(zero);
    free(a);
}

/* A shared replay (docs/SCALING.md) of a file with writer logs is not shared: the state
 * carries none of their read positions, so an opener given it replays for itself, and
 * holds what its own replay builds. */
static void test_state_with_logs_not_shared(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");
    char path[PATH_MAX];
    file_path(fx, "shared", path, sizeof(path));
    unsigned char *a = random_data(32 * KIB, 9), *b = text_data(32 * KIB, 10);
    hcomp_file *w1 = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    hcomp_file *w2 = open_file(fx, path, HCOMP_O_RDWR);
    pwrite_ok(w1, a, 32 * KIB, 0);
    pwrite_ok(w2, b, 16 * KIB, 8 * KIB);
    memcpy(a + 8 * KIB, b, 16 * KIB);
    close_ok(w1);
    close_ok(w2);
    hcomp_file *r = open_file(fx, path, HCOMP_O_RDONLY);
    void *st;
    size_t len;
    CHECK(hcomp_file_export_state(r, &st, &len, &e_));
    assert_true(len < 256);                 /* the header alone */
    hcomp_file *g;
    hcomp_error err;
    assert_int_equal(hcomp_file_open_with_state(path, HCOMP_O_RDONLY, 0, 1, fx->opts, st, len,
                                                &g, &err), HCOMP_OK);
    expect_bytes(g, a, 32 * KIB, 0);
    assert_int_equal(g->npieces, r->npieces);
    assert_int_equal(g->nwlogs, 2);
    close_ok(g);
    close_ok(r);
    free(st);
    free(a);
    free(b);
}

/* A file of format 2 (one log every writer appends to) is not opened for writing by a job
 * on several nodes (HCOMP_O_NODES, which the driver sets): the error says why and how to
 * go on; `hcomp compact --hint hcomp_format=3` makes it version 3, bytes unchanged. */
static void test_v2_refused_across_nodes_then_upgraded(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_format", "2");
    char path[PATH_MAX];
    file_path(fx, "old", path, sizeof(path));
    unsigned char *a = random_data(40 * KIB, 11);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    assert_int_equal(f->hdr.version, 2);
    pwrite_ok(f, a, 40 * KIB, 0);
    close_ok(f);
    set_opt(fx, "hcomp_format", "3");
    hcomp_error err;
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDWR | HCOMP_O_NODES, 0, 4, fx->opts, &f, &err),
                     HCOMP_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "appends from several nodes tear"));
    assert_non_null(strstr(err.msg, "hcomp_format=3"));
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDONLY | HCOMP_O_NODES, 0, 4, fx->opts, &f,
                                     &err), HCOMP_OK);     /* reading is safe */
    close_ok(f);
    hcomp_reclaim_result r;
    assert_int_equal(hcomp_compact(path, fx->config, NULL, &r, &err), HCOMP_OK);
    f = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(f->hdr.version, 2);                   /* compact keeps the version */
    close_ok(f);
    assert_int_equal(hcomp_compact_to(path, fx->config, 3, NULL, &r, &err), HCOMP_OK);
    assert_true(r.log_rewritten);
    assert_int_equal(hcomp_file_open(path, HCOMP_O_RDWR | HCOMP_O_NODES, 0, 4, fx->opts, &f, &err),
                     HCOMP_OK);
    assert_int_equal(f->hdr.version, 3);
    expect_bytes(f, a, 40 * KIB, 0);
    pwrite_ok(f, a + 100, 1000, 100);                     /* into a writer log */
    assert_int_equal(f->own_wlog >= 0, 1);
    close_ok(f);
    f = open_file(fx, path, HCOMP_O_RDONLY);
    expect_bytes(f, a, 40 * KIB, 0);
    close_ok(f);
    free(a);
}

/* Where the last piece a writer stored is: its segment's path and the piece's extent. */
static void last_piece(hcomp_file *f, char *seg, off_t *start, off_t *end)
{
    (void) size_of(f);                  /* its own records applied */
    const hcomp_piece *p = &f->pieces[f->npieces - 1];
    snprintf(seg, PATH_MAX, "%s", f->segs[p->seg].path);
    *start = (off_t) p->seg_off;
    *end = (off_t) (p->seg_off + HCOMP_PIECE_HEADER_SIZE + p->stored_len);
}

/* A crash kept a record and lost its piece (docs/FORMAT.md, "Durable steps"): a write no
 * sync confirmed is set aside, and the synced bytes under it read; once the piece is
 * there it applies, in its order; a piece its writer's sync confirmed that is gone is
 * damage, and the read says so. */
static void test_unsynced_piece_torn_by_a_crash(void **state)
{
    fixture *fx = *state;
    set_opt(fx, "hcomp_reclaim", "never");      /* the logs stay: nothing folds them */
    char path[PATH_MAX], seg[PATH_MAX];
    file_path(fx, "torn", path, sizeof(path));
    unsigned char *a = random_data(16 * KIB, 21), *b = text_data(16 * KIB, 22);
    unsigned char *c = random_data(8 * KIB, 23);
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, a, 16 * KIB, 0);
    CHECK(hcomp_file_sync(f, &e_));
    pwrite_ok(f, b, 16 * KIB, 0);       /* not synced: its piece is lost below */
    off_t start, end;
    last_piece(f, seg, &start, &end);
    close_ok(f);
    unsigned char *tail = malloc((size_t) (end - start));
    int fd = open(seg, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, tail, (size_t) (end - start), start), end - start);
    assert_int_equal(ftruncate(fd, start), 0);
    hcomp_file *r = open_file(fx, path, HCOMP_O_RDONLY);
    assert_true(size_of(r) == 16 * KIB);
    expect_bytes(r, a, 16 * KIB, 0);    /* the synced write, not a damaged read */
    assert_int_equal(r->nunconfirmed, 1);
    /* the piece arrives (another node's write-behind): the next refresh applies it */
    assert_int_equal(pwrite(fd, tail, (size_t) (end - start), start), end - start);
    assert_true(size_of(r) == 16 * KIB);
    assert_int_equal(r->nunconfirmed, 0);
    expect_bytes(r, b, 16 * KIB, 0);
    close_ok(r);
    /* a synced write whose piece is gone is damage: never the bytes under it */
    f = open_file(fx, path, HCOMP_O_RDWR);
    pwrite_ok(f, c, 8 * KIB, 4 * KIB);
    last_piece(f, seg, &start, &end);
    CHECK(hcomp_file_sync(f, &e_));
    close_ok(f);
    int fd2 = open(seg, O_RDWR);
    assert_true(fd2 >= 0);
    assert_int_equal(ftruncate(fd2, start), 0);
    close(fd2);
    r = open_file(fx, path, HCOMP_O_RDONLY);
    assert_int_equal(r->nunconfirmed, 0);
    unsigned char buf[64];
    uint64_t got;
    hcomp_error err;
    assert_int_not_equal(hcomp_file_pread(r, buf, sizeof(buf), 4 * KIB, &got, &err), HCOMP_OK);
    assert_non_null(strstr(err.msg, seg));
    expect_bytes(r, b, 4 * KIB, 0);     /* what it did not overwrite still reads */
    close_ok(r);
    close(fd);
    free(tail);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_writer_its_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_records_keep_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_writer_log_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_generation_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fsck_repairs_writer_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_with_logs_not_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_refused_across_nodes_then_upgraded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unsynced_piece_torn_by_a_crash, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
