/* hcomp_fsck and hcomp_drain_all (file/tools.h), what `hcomp fsck` and `hcomp drain`
 * run: each test damages a real file the way failures do and checks what is found,
 * what is repaired, and that the bytes read back are the bytes written. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "file/file_internal.h"
#include "file/tools.h"

#define KIB 1024u

typedef struct fixture {
    char base[256], t0[PATH_MAX], t1[PATH_MAX], config[PATH_MAX], file[PATH_MAX];
    hcomp_options *opts;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->base, sizeof(fx->base), "/tmp/hcomp-test-tools-XXXXXX");
    assert_non_null(mkdtemp(fx->base));
    snprintf(fx->t0, sizeof(fx->t0), "%s/tier0", fx->base);
    snprintf(fx->t1, sizeof(fx->t1), "%s/tier1", fx->base);
    snprintf(fx->config, sizeof(fx->config), "%s/tiers.json", fx->base);
    snprintf(fx->file, sizeof(fx->file), "%s/data.hc", fx->base);
    assert_int_equal(mkdir(fx->t0, 0700), 0);
    assert_int_equal(mkdir(fx->t1, 0700), 0);
    FILE *f = fopen(fx->config, "w");
    assert_non_null(f);
    /* "fast" holds 256 KiB, so larger files spill onto "slow" (both shared) */
    fprintf(f, "{\"version\": 1, \"tiers\": [\n"
               " {\"name\": \"fast\", \"path\": \"%s\", \"capacity\": \"256KiB\", \"measure\": false},\n"
               " {\"name\": \"slow\", \"path\": \"%s\", \"measure\": false}]}\n", fx->t0, fx->t1);
    assert_int_equal(fclose(f), 0);
    fx->opts = hcomp_options_new();
    hcomp_error err;
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_config", fx->config, &err), HCOMP_OK);
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_codec", "zstd", &err), HCOMP_OK);
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_piece_size", "65536", &err), HCOMP_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    assert_int_equal(t_rm_tree(fx->base), 0);
    hcomp_options_free(fx->opts);
    free(fx);
    return 0;
}

/* Bytes that compress about 2:1 (each pseudo-random byte twice), by off and seed. */
static void fill(unsigned char *buf, size_t n, uint64_t off, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = ((off + i) >> 1) * 0x9E3779B97F4A7C15ull + seed;
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
        buf[i] = (unsigned char) (x >> 56);
    }
}

static void write_at(fixture *fx, uint64_t off, size_t len, unsigned seed)
{
    hcomp_file *f;
    hcomp_error err;
    unsigned char *buf = malloc(len);
    assert_non_null(buf);
    fill(buf, len, off, seed);
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_WRONLY | HCOMP_O_CREAT, 0640, 1, fx->opts,
                                     &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pwrite(f, buf, len, off, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    free(buf);
}

/* The file reads back as seed's bytes over [off, off+len). */
static void expect_bytes(fixture *fx, uint64_t off, size_t len, unsigned seed)
{
    hcomp_file *f;
    hcomp_error err;
    unsigned char *got = malloc(len), *want = malloc(len);
    assert_non_null(got);
    assert_non_null(want);
    fill(want, len, off, seed);
    int rc = hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, NULL, &f, &err);
    if (rc != HCOMP_OK)
        fail_msg("open: %s", err.msg);
    uint64_t n;
    rc = hcomp_file_pread(f, got, len, off, &n, &err);
    if (rc != HCOMP_OK)
        fail_msg("read: %s", err.msg);
    assert_int_equal(n, len);
    assert_memory_equal(got, want, len);
    hcomp_file_close(f, NULL);
    free(got);
    free(want);
}

static int fsck(fixture *fx, int repair, hcomp_fsck_result *r)
{
    hcomp_error err;
    int rc = hcomp_fsck(fx->file, fx->config, repair, NULL, r, &err);
    if (rc != HCOMP_OK)
        print_message("fsck: %s\n", err.msg);
    return rc;
}

static off_t file_size(const char *p)
{
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    return st.st_size;
}

static void flip_byte(const char *p, off_t at)
{
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0x5a;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

/* The first segment file (by name) in the file's segment directory on tier dir. */
static void first_segment(const fixture *fx, const char *tier, char *out)
{
    DIR *d = opendir(tier);
    assert_non_null(d);
    struct dirent *e;
    out[0] = '\0';
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".hcd")) {
            char dir[PATH_MAX];
            assert_true(snprintf(dir, sizeof(dir), "%s/%s", tier, e->d_name) < PATH_MAX);
            DIR *s = opendir(dir);
            assert_non_null(s);
            struct dirent *g;
            while ((g = readdir(s)) != NULL)
                if (strstr(g->d_name, ".seg") && (out[0] == '\0' || strcmp(g->d_name, strrchr(out, '/') + 1) < 0))
                    assert_true(snprintf(out, PATH_MAX, "%s/%s", dir, g->d_name) < PATH_MAX);
            closedir(s);
        }
    closedir(d);
    (void) fx;
    assert_true(out[0] != '\0');
}

/* Entries of dir other than hidden ones (the capacity ledger). */
static int visible_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_clean(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 600 * KIB, 1);
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_false(r.problems);
    assert_int_equal(r.header_code, HCOMP_OK);
    assert_int_equal(r.logical_size, 600 * KIB);
    assert_int_equal(r.live_bytes, 600 * KIB);
    assert_true(r.live_pieces >= 10);       /* 64 KiB pieces */
    assert_int_equal(r.bad_pieces, 0);
    assert_int_equal(r.damaged_bytes + r.torn_bytes, 0);
}

static void test_torn_tail(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 200 * KIB, 1);
    write_at(fx, 100 * KIB, 50 * KIB, 2);
    off_t full = file_size(fx->file);
    assert_int_equal(truncate(fx->file, full - 5), 0);  /* the last append cut short */
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_true(r.problems);
    assert_true(r.torn_bytes > 0);
    assert_int_equal(file_size(fx->file), full - 5);    /* a check changes nothing */
    assert_int_equal(fsck(fx, 1, &r), HCOMP_OK);
    assert_true(r.rewritten);
    assert_false(r.problems);
    assert_true(strstr(r.backup, ".hcomp-damaged") != NULL);
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_false(r.problems);
    expect_bytes(fx, 0, 100 * KIB, 1);
    expect_bytes(fx, 150 * KIB, 50 * KIB, 1);
    /* the lost record was the second writer's statistics or a piece: what it wrote is
     * either all there or its range reads as before */
    write_at(fx, 0, 10 * KIB, 3);       /* and the repaired file takes new writes */
    expect_bytes(fx, 0, 10 * KIB, 3);
}

static void test_damaged_record(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 128 * KIB, 1);
    off_t first = file_size(fx->file);
    write_at(fx, 128 * KIB, 128 * KIB, 2);
    write_at(fx, 256 * KIB, 128 * KIB, 3);
    flip_byte(fx->file, first + 40);    /* inside the second writer's records */
    /* a record written whole is lost: no read can be trusted (the lost piece would read
     * as a hole), so reads and the size fail until fsck drops it */
    hcomp_file *f;
    hcomp_error err;
    unsigned char b[16];
    uint64_t n, size;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, NULL, &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_pread(f, b, sizeof(b), 0, &n, &err), HCOMP_E_CORRUPT);
    assert_non_null(strstr(err.msg, "fsck --repair"));
    assert_int_equal(hcomp_file_size(f, &size, &err), HCOMP_E_CORRUPT);
    hcomp_file_close(f, NULL);
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_true(r.problems);
    assert_true(r.damaged_bytes > 0);
    assert_true(r.lost_records >= 1);
    assert_int_equal(fsck(fx, 1, &r), HCOMP_OK);
    assert_true(r.rewritten);
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_int_equal(r.damaged_bytes, 0);
    /* the other writers' data is intact */
    expect_bytes(fx, 0, 128 * KIB, 1);
    expect_bytes(fx, 256 * KIB, 128 * KIB, 3);
}

static void test_header_damaged(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 500 * KIB, 1);
    write_at(fx, 0, 64 * KIB, 2);
    flip_byte(fx->file, 40);            /* reserved bytes: caught by the header checksum */
    hcomp_error err;
    hcomp_file *f;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, NULL, &f, &err), HCOMP_E_CORRUPT);
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_true(r.problems);
    assert_int_equal(r.header_code, HCOMP_E_CORRUPT);
    assert_int_equal(fsck(fx, 1, &r), HCOMP_OK);
    assert_true(r.rebuilt);
    assert_false(r.problems);
    expect_bytes(fx, 0, 64 * KIB, 2);   /* the log's order survived: the newer write wins */
    expect_bytes(fx, 64 * KIB, 436 * KIB, 1);
}

static void test_map_lost(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 700 * KIB, 1);      /* spills from "fast" to "slow" */
    usleep(20000);                      /* a later segment: a later modification time */
    write_at(fx, 32 * KIB, 64 * KIB, 2);
    hcomp_stats st;
    hcomp_error err;
    assert_int_equal(hcomp_stat_path(fx->file, &st, &err), HCOMP_OK);
    assert_int_equal(st.ntiers, 2);
    assert_int_equal(unlink(fx->file), 0);
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_true(r.map_missing);
    assert_true(r.problems);
    assert_true(r.found_pieces >= 12);
    assert_int_equal(access(fx->file, F_OK), -1);   /* without --repair nothing is written */
    assert_int_equal(fsck(fx, 1, &r), HCOMP_OK);
    assert_true(r.rebuilt);
    assert_false(r.problems);
    assert_int_equal(r.logical_size, 700 * KIB);
    assert_int_equal(r.overlap_bytes, 64 * KIB);
    expect_bytes(fx, 0, 32 * KIB, 1);
    expect_bytes(fx, 32 * KIB, 64 * KIB, 2);
    expect_bytes(fx, 96 * KIB, 604 * KIB, 1);
    /* and it is a whole hcomp file again: delete removes every piece */
    assert_int_equal(hcomp_file_delete(fx->file, &err), HCOMP_OK);
    assert_int_equal(visible_entries(fx->t0), 0);
}

static void test_punched_piece(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 192 * KIB, 1);      /* three 64 KiB pieces in one segment on "fast" */
    char seg[PATH_MAX];
    first_segment(fx, fx->t0, seg);
    hcomp_file *f;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, NULL, &f, &err), HCOMP_OK);
    uint64_t first_len = HCOMP_PIECE_HEADER_SIZE + f->pieces[0].stored_len;
    assert_int_equal(f->pieces[0].seg_off, 0);
    hcomp_file_close(f, NULL);
    /* what a background drain leaves where a moved piece was */
    int fd = open(seg, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t) first_len), 0);
    close(fd);
    assert_int_equal(unlink(fx->file), 0);
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 1, &r), HCOMP_OK);
    assert_true(r.rebuilt);
    assert_int_equal(r.found_pieces, 2);    /* the hole is passed over, nothing is lost */
    assert_int_equal(r.lost_segment_bytes, 0);
    expect_bytes(fx, 64 * KIB, 128 * KIB, 1);
}

static void test_bad_piece(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 128 * KIB, 1);
    char seg[PATH_MAX];
    first_segment(fx, fx->t0, seg);
    flip_byte(seg, 100);                /* inside the first piece's payload */
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 1, &r), HCOMP_OK);
    assert_true(r.problems);            /* no repair makes damaged data whole */
    assert_int_equal(r.bad_pieces, 1);
    assert_int_equal(r.unreadable_bytes, 64 * KIB);
    expect_bytes(fx, 64 * KIB, 64 * KIB, 1);
    /* and the map is not rebuilt from pieces either: a flipped bit is reported, never
     * guessed around */
    assert_false(r.rebuilt);
    assert_false(r.rewritten);
}

static void test_orphan_segment(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 64 * KIB, 1);
    char seg[PATH_MAX], orphan[PATH_MAX];
    first_segment(fx, fx->t0, seg);
    snprintf(orphan, sizeof(orphan), "%s", seg);
    memcpy(strrchr(orphan, '/') + 1, "00000000000000ff.seg", 20);
    FILE *o = fopen(orphan, "w");
    assert_non_null(o);
    fputs("a writer died before recording this", o);
    fclose(o);
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_false(r.problems);           /* leaked space, not lost data */
    assert_int_equal(r.orphan_files, 1);
    assert_int_equal(fsck(fx, 1, &r), HCOMP_OK);
    assert_int_equal(r.orphans_removed, 1);
    assert_int_equal(access(orphan, F_OK), -1);
    expect_bytes(fx, 0, 64 * KIB, 1);
}

static void test_refuses_foreign_and_future(void **state)
{
    fixture *fx = *state;
    const char *text = "just a text file that happens to have this name, long enough to look at\n";
    FILE *o = fopen(fx->file, "w");
    assert_non_null(o);
    fputs(text, o);
    fclose(o);
    hcomp_fsck_result r;
    hcomp_error err;
    assert_int_equal(hcomp_fsck(fx->file, fx->config, 1, NULL, &r, &err), HCOMP_E_NOTHCOMP);
    assert_int_equal(file_size(fx->file), strlen(text));     /* left alone */
    assert_int_equal(unlink(fx->file), 0);
    write_at(fx, 0, 64 * KIB, 1);
    flip_byte(fx->file, 8);             /* version 1 -> another */
    off_t size = file_size(fx->file);
    assert_int_equal(hcomp_fsck(fx->file, fx->config, 1, NULL, &r, &err), HCOMP_E_VERSION);
    assert_int_equal(file_size(fx->file), size);
    flip_byte(fx->file, 8);
    assert_int_equal(unlink(fx->file), 0);
    /* no mapping file and no segments: nothing to rebuild from */
    char seg[PATH_MAX];
    first_segment(fx, fx->t0, seg);
    assert_int_equal(unlink(seg), 0);
    *strrchr(seg, '/') = '\0';
    assert_int_equal(rmdir(seg), 0);
    assert_int_equal(hcomp_fsck(fx->file, fx->config, 1, NULL, &r, &err), HCOMP_E_NOENT);
}

static void test_drain_all(void **state)
{
    fixture *fx = *state;
    write_at(fx, 0, 700 * KIB, 1);
    write_at(fx, 100 * KIB, 50 * KIB, 2);
    hcomp_file *f;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR, 0, 1, fx->opts, &f, &err), HCOMP_OK);
    hcomp_drain_result res;
    int rc = hcomp_drain_all(f, NULL, &res, &err);
    if (rc != HCOMP_OK)
        fail_msg("drain: %s", err.msg);
    assert_true(res.pieces >= 4);       /* the 256 KiB of "fast" */
    assert_true(res.segments_removed >= 1);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    hcomp_stats st;
    assert_int_equal(hcomp_stat_path(fx->file, &st, &err), HCOMP_OK);
    assert_int_equal(st.ntiers, 1);
    assert_string_equal(st.tier[0].name, "slow");
    assert_int_equal(visible_entries(fx->t0), 0);  /* "fast" holds nothing of the file now */
    expect_bytes(fx, 0, 100 * KIB, 1);
    expect_bytes(fx, 100 * KIB, 50 * KIB, 2);
    expect_bytes(fx, 150 * KIB, 550 * KIB, 1);
    hcomp_fsck_result r;
    assert_int_equal(fsck(fx, 0, &r), HCOMP_OK);
    assert_false(r.problems);
    /* read-only opens cannot drain */
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDONLY, 0, 1, fx->opts, &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_drain_all(f, NULL, &res, &err), HCOMP_E_RDONLY);
    hcomp_file_close(f, NULL);
}

/* One write of many pieces (here 640, more than the 512 of the 32 MiB window) is
 * encoded a window at a time: the job buffers stay bounded, and every byte lands. */
static void test_large_task_window(void **state)
{
    fixture *fx = *state;
    size_t len = 640 * 64 * KIB;
    unsigned char *buf = malloc(len), *got = malloc(len);
    assert_non_null(buf);
    assert_non_null(got);
    fill(buf, len, 0, 7);
    hcomp_file *f;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(fx->file, HCOMP_O_RDWR | HCOMP_O_CREAT, 0640, 1, fx->opts,
                                     &f, &err), HCOMP_OK);
    if (hcomp_file_pwrite(f, buf, len, 0, &err) != HCOMP_OK)
        fail_msg("write: %s", err.msg);
    assert_true(f->njobs_cap <= (32u << 20) / (64 * KIB));
    uint64_t n;
    assert_int_equal(hcomp_file_pread(f, got, len, 0, &n, &err), HCOMP_OK);
    assert_int_equal(n, len);
    assert_memory_equal(got, buf, len);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    hcomp_stats st;
    assert_int_equal(hcomp_stat_path(fx->file, &st, &err), HCOMP_OK);
    assert_true(st.pieces >= 640);    /* a piece cut where "fast" filled up makes two */
    assert_int_equal(st.live_bytes, len);
    free(buf);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_damaged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_map_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_punched_piece, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_piece, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orphan_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_foreign_and_future, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_task_window, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
