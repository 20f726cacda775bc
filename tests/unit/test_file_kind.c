/* hcomp_file_kind: what a path names (hcomp file, plain file, missing, not regular),
 * without changing it. Damaged mapping files must never be called plain.
 * hcomp_file_adopt_empty: an empty file made an empty hcomp file, nothing else changed
 * (hcomp_file_adoptable_empty: the same question, changing nothing);
 * and an empty file opened by several writers at once gets one header. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hcomp.h"
#include "hcomp_driver.h"   /* adopt_empty: a call of the driver's, tested */

typedef struct fixture {
    char base[256];             /* short: names below it fit PATH_MAX */
    char cfg[PATH_MAX];
    hcomp_options *opts;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->base, sizeof(fx->base), "/tmp/hcomp-test-kind-XXXXXX");
    assert_non_null(mkdtemp(fx->base));
    snprintf(fx->cfg, sizeof(fx->cfg), "%s/tiers.json", fx->base);
    FILE *f = fopen(fx->cfg, "w");
    assert_non_null(f);
    fprintf(f, "{\"version\": 1, \"tiers\": [{\"name\": \"here\", \"path\": \"@filedir\"}]}\n");
    assert_int_equal(fclose(f), 0);
    fx->opts = hcomp_options_new();
    assert_non_null(fx->opts);
    hcomp_error err;
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_config", fx->cfg, &err), HCOMP_OK);
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

static void put(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t) len);
    assert_int_equal(close(fd), 0);
}

static size_t slurp(const char *path, unsigned char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, cap);
    assert_true(n >= 0);
    close(fd);
    return (size_t) n;
}

static int kind_of(const char *path)
{
    int kind = -1;
    hcomp_error err;
    int rc = hcomp_file_kind(path, &kind, &err);
    if (rc != HCOMP_OK)
        fail_msg("hcomp_file_kind(%s): %s", path, err.msg);
    return kind;
}

/* A real hcomp file with a little data; its bytes are returned in map (len). */
static void make_hcomp(fixture *fx, const char *path, unsigned char *map, size_t *len)
{
    hcomp_file *f;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(path, HCOMP_O_CREAT | HCOMP_O_RDWR, 0600, 1, fx->opts, &f,
                                     &err), HCOMP_OK);
    char data[5000];
    memset(data, 'x', sizeof(data));
    assert_int_equal(hcomp_file_pwrite(f, data, sizeof(data), 0, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    *len = slurp(path, map, 65536);
    assert_true(*len > 64);
}

static void test_kinds(void **state)
{
    fixture *fx = *state;
    char p[PATH_MAX];

    snprintf(p, sizeof(p), "%s/missing", fx->base);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_MISSING);

    snprintf(p, sizeof(p), "%s/hc", fx->base);
    static unsigned char map[65536];
    size_t maplen;
    make_hcomp(fx, p, map, &maplen);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_HCOMP);
    assert_string_equal(hcomp_file_kind_name(HCOMP_FILE_KIND_HCOMP), "hcomp");
    hcomp_error err;
    assert_int_equal(hcomp_file_delete(p, &err), HCOMP_OK);

    /* plain files of every size, also ones that merely mention the magic later on */
    snprintf(p, sizeof(p), "%s/plain", fx->base);
    put(p, "", 0);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    put(p, "x", 1);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    put(p, "hello, world\n", 13);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    put(p, "HCOMX", 5);     /* short, not a prefix of the magic */
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    put(p, "xxHCOMPMAP and more text than a header of sixty-four bytes would hold", 70);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    static unsigned char big[1 << 16];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (unsigned char) (i * 2654435761u >> 13);
    put(p, big, sizeof(big));
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    assert_string_equal(hcomp_file_kind_name(HCOMP_FILE_KIND_PLAIN), "plain");
    /* looking changed nothing */
    unsigned char back[1 << 16];
    assert_int_equal(slurp(p, back, sizeof(back)), sizeof(big));
    assert_memory_equal(back, big, sizeof(big));

    /* not regular */
    assert_int_equal(kind_of(fx->base), HCOMP_FILE_KIND_NOT_REGULAR);
    assert_int_equal(kind_of("/dev/null"), HCOMP_FILE_KIND_NOT_REGULAR);
    snprintf(p, sizeof(p), "%s/fifo", fx->base);
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_NOT_REGULAR);
    assert_string_equal(hcomp_file_kind_name(HCOMP_FILE_KIND_NOT_REGULAR), "not-regular");
    assert_string_equal(hcomp_file_kind_name(HCOMP_FILE_KIND_MISSING), "missing");

    /* a path that cannot be looked at is an error, not a kind */
    snprintf(p, sizeof(p), "%s/tiers.json/below", fx->base);
    int kind = 7;
    assert_int_not_equal(hcomp_file_kind(p, &kind, &err), HCOMP_OK);
    assert_int_equal(kind, -1);
    assert_non_null(strstr(err.msg, p));
    assert_int_not_equal(hcomp_file_kind("", &kind, &err), HCOMP_OK);
}

/* Mapping files damaged in their first bytes stay hcomp (their open fails), never plain. */
static void test_damaged_stays_hcomp(void **state)
{
    fixture *fx = *state;
    char p[PATH_MAX], q[PATH_MAX];
    static unsigned char map[65536], copy[65536];
    size_t maplen;
    snprintf(p, sizeof(p), "%s/orig", fx->base);
    make_hcomp(fx, p, map, &maplen);
    snprintf(q, sizeof(q), "%s/damaged", fx->base);

    /* cut inside the magic, inside the header, inside the log */
    size_t cuts[] = {1, 3, 7, 8, 40, 63, 64, 100};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        put(q, map, cuts[i]);
        if (kind_of(q) != HCOMP_FILE_KIND_HCOMP)
            fail_msg("a mapping file cut after %zu bytes was not called hcomp", cuts[i]);
    }
    /* one or two bytes of the magic damaged (any byte, any bit) */
    for (int i = 0; i < 8; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, map, maplen);
            copy[i] ^= (unsigned char) (1u << bit);
            copy[(i + 3) % 8] ^= 0xff;
            put(q, copy, maplen);
            if (kind_of(q) != HCOMP_FILE_KIND_HCOMP)
                fail_msg("a mapping file with bytes %d and %d of its magic damaged was not "
                         "called hcomp", i, (i + 3) % 8);
        }
    /* the whole magic gone, the rest of the header intact (its checksum tells) */
    memcpy(copy, map, maplen);
    memcpy(copy, "ZZZZZZZZ", 8);
    put(q, copy, maplen);
    assert_int_equal(kind_of(q), HCOMP_FILE_KIND_HCOMP);
    /* and such a file does not open: the failure names the cause */
    hcomp_file *f = NULL;
    hcomp_error err;
    assert_int_equal(hcomp_file_open(q, HCOMP_O_RDONLY, 0, 1, fx->opts, &f, &err),
                     HCOMP_E_NOTHCOMP);
    assert_null(f);
    /* a flipped bit elsewhere in the header: still hcomp (and corrupt) */
    memcpy(copy, map, maplen);
    copy[20] ^= 0x10;
    put(q, copy, maplen);
    assert_int_equal(kind_of(q), HCOMP_FILE_KIND_HCOMP);
    assert_int_equal(hcomp_file_open(q, HCOMP_O_RDONLY, 0, 1, fx->opts, &f, &err),
                     HCOMP_E_CORRUPT);
    unlink(q);
    assert_int_equal(hcomp_file_delete(p, &err), HCOMP_OK);
}

static int is_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The hidden segment directory of the file at path on the file's own tier ("" if none). */
static void segment_dir_of(const char *dir, const char *name, char *out, size_t n)
{
    char p[PATH_MAX], id[33];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    unsigned char hdr[64];
    assert_int_equal(slurp(p, hdr, sizeof(hdr)), sizeof(hdr));
    for (int i = 0; i < 16; i++)
        snprintf(id + 2 * i, 3, "%02x", hdr[16 + i]);
    snprintf(out, n, "%s/.%s.%.16s.hcd", dir, name, id);
}

/* hcomp_file_adopt_empty: an empty file (PnetCDF truncates before its create) becomes an
 * empty hcomp file in place; anything else is left as it is. The segment directories of
 * the emptied hcomp file stay: they cannot be told from those of a file renamed away. */
static void test_adopt_empty(void **state)
{
    fixture *fx = *state;
    hcomp_error err;
    hcomp_file *f;
    int adopted = -1;
    unsigned char map[65536];
    size_t len;
    char p[PATH_MAX], old_dir[PATH_MAX], new_dir[PATH_MAX], moved[PATH_MAX];
    snprintf(p, sizeof(p), "%s/ckpt.nc", fx->base);
    snprintf(moved, sizeof(moved), "%s/ckpt.nc.old", fx->base);

    /* a checkpoint rotated away (its records name .ckpt.nc.ID.hcd by absolute path), an
     * empty file made in its place, adopted: the rotated file keeps every byte */
    make_hcomp(fx, p, map, &len);
    segment_dir_of(fx->base, "ckpt.nc", old_dir, sizeof(old_dir));
    assert_true(is_dir(old_dir));
    assert_int_equal(rename(p, moved), 0);
    put(p, "", 0);
    assert_int_equal(chmod(p, 0640), 0);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    int adoptable = -1;         /* the driver's question changes nothing */
    assert_int_equal(hcomp_file_adoptable_empty(p, &adoptable, &err), HCOMP_OK);
    assert_int_equal(adoptable, 1);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_PLAIN);
    assert_int_equal(hcomp_file_adopt_empty(p, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 1);
    assert_int_equal(kind_of(p), HCOMP_FILE_KIND_HCOMP);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 64);
    assert_int_equal(st.st_mode & 0777, 0640);         /* the file's mode is kept */
    assert_true(is_dir(old_dir));
    {
        char back[5000], want[5000];
        uint64_t got = 0;
        memset(want, 'x', sizeof(want));
        assert_int_equal(hcomp_file_open(moved, HCOMP_O_RDONLY, 0, 1, fx->opts, &f, &err),
                         HCOMP_OK);
        assert_int_equal(hcomp_file_pread(f, back, sizeof(back), 0, &got, &err), HCOMP_OK);
        assert_int_equal(got, sizeof(back));
        assert_memory_equal(back, want, sizeof(want));
        assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    }

    /* it is an empty hcomp file: size 0, written and read back like a new one */
    assert_int_equal(hcomp_file_open(p, HCOMP_O_RDWR, 0, 1, fx->opts, &f, &err), HCOMP_OK);
    uint64_t size = 99;
    assert_int_equal(hcomp_file_size(f, &size, &err), HCOMP_OK);
    assert_int_equal(size, 0);
    char data[3000], back[3000];
    memset(data, 'y', sizeof(data));
    assert_int_equal(hcomp_file_pwrite(f, data, sizeof(data), 100, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    segment_dir_of(fx->base, "ckpt.nc", new_dir, sizeof(new_dir));
    assert_true(is_dir(new_dir));
    assert_int_equal(hcomp_file_open(p, HCOMP_O_RDONLY, 0, 1, fx->opts, &f, &err), HCOMP_OK);
    assert_int_equal(hcomp_file_size(f, &size, &err), HCOMP_OK);
    assert_int_equal(size, 3100);
    uint64_t got = 0;
    assert_int_equal(hcomp_file_pread(f, back, sizeof(back), 100, &got, &err), HCOMP_OK);
    assert_int_equal(got, sizeof(back));
    assert_memory_equal(back, data, sizeof(data));

    /* an hcomp file (non-empty), and one emptied while an hcomp opener holds it: untouched */
    assert_int_equal(hcomp_file_adopt_empty(p, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 0);
    assert_int_equal(truncate(p, 0), 0);
    assert_int_equal(hcomp_file_adopt_empty(p, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 0);
    assert_int_equal(hcomp_file_adoptable_empty(p, &adoptable, &err), HCOMP_OK);
    assert_int_equal(adoptable, 0);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_true(is_dir(new_dir));
    assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);

    /* a plain file with data, a symbolic link to an empty file, a missing file, a
     * directory: unchanged, not adopted */
    char q[PATH_MAX], l[PATH_MAX], e[PATH_MAX];
    snprintf(q, sizeof(q), "%s/plain.dat", fx->base);
    put(q, "plain bytes", 11);
    assert_int_equal(hcomp_file_adopt_empty(q, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 0);
    assert_int_equal(slurp(q, map, sizeof(map)), 11);
    snprintf(e, sizeof(e), "%s/empty.dat", fx->base);
    snprintf(l, sizeof(l), "%s/link.dat", fx->base);
    put(e, "", 0);
    assert_int_equal(symlink(e, l), 0);
    assert_int_equal(hcomp_file_adopt_empty(l, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 0);
    assert_int_equal(hcomp_file_adoptable_empty(l, &adoptable, &err), HCOMP_OK);
    assert_int_equal(adoptable, 0);
    assert_int_equal(kind_of(e), HCOMP_FILE_KIND_PLAIN);
    snprintf(q, sizeof(q), "%s/missing.dat", fx->base);
    assert_int_equal(hcomp_file_adopt_empty(q, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 0);
    assert_int_equal(kind_of(q), HCOMP_FILE_KIND_MISSING);
    assert_int_equal(hcomp_file_adopt_empty(fx->base, &adopted, &err), HCOMP_OK);
    assert_int_equal(adopted, 0);
}

/* Processes that open one empty file to be written at the same moment (library openers,
 * not the driver, which adopts it first): one header is written, each writes its part,
 * and every part reads back. Without the lock around it, two wrote a header each. */
#define AT_ONCE 6
#define AT_ONCE_ROUNDS 12
static void test_empty_opened_at_once(void **state)
{
    fixture *fx = *state;
    char p[PATH_MAX];
    hcomp_error e;
    snprintf(p, sizeof(p), "%s/together.dat", fx->base);
    /* No pool threads before a fork (this test runs first, and without them): a child
     * has the memory of the parent's workers but not the workers, and valgrind
     * (tests/valgrind) would count their codecs' contexts as lost in it. */
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_threads", "1", &e), HCOMP_OK);
    for (int round = 0; round < AT_ONCE_ROUNDS; round++) {
        unlink(p);
        put(p, "", 0);
        int go[2];
        assert_int_equal(pipe(go), 0);
        pid_t kids[AT_ONCE];
        for (int i = 0; i < AT_ONCE; i++) {
            kids[i] = fork();
            assert_true(kids[i] >= 0);
            if (kids[i] == 0) {
                char c;
                close(go[1]);
                if (read(go[0], &c, 1) != 0)    /* until the parent closes its end */
                    _exit(3);
                hcomp_file *f;
                hcomp_error err;
                char part[4096];
                memset(part, 'a' + i, sizeof(part));
                if (hcomp_file_open(p, HCOMP_O_RDWR, 0, AT_ONCE, fx->opts, &f, &err) != HCOMP_OK) {
                    fprintf(stderr, "child %d: %s\n", i, err.msg);
                    _exit(1);
                }
                int rc = hcomp_file_pwrite(f, part, sizeof(part), (uint64_t) i * sizeof(part), &err);
                if (hcomp_file_close(f, &err) != HCOMP_OK || rc != HCOMP_OK) {
                    fprintf(stderr, "child %d: %s\n", i, err.msg);
                    _exit(2);
                }
                _exit(0);
            }
        }
        close(go[0]);
        close(go[1]);
        for (int i = 0; i < AT_ONCE; i++) {
            int status;
            assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
            assert_true(WIFEXITED(status));
            if (WEXITSTATUS(status) != 0)
                fail_msg("round %d: opener %d failed (exit %d)", round, i, WEXITSTATUS(status));
        }
        hcomp_file *f;
        hcomp_error err;
        assert_int_equal(hcomp_file_open(p, HCOMP_O_RDONLY, 0, 1, fx->opts, &f, &err), HCOMP_OK);
        uint64_t size = 0, got = 0;
        assert_int_equal(hcomp_file_size(f, &size, &err), HCOMP_OK);
        assert_int_equal(size, AT_ONCE * 4096);
        static char back[AT_ONCE * 4096], want[AT_ONCE * 4096];
        for (int i = 0; i < AT_ONCE; i++)
            memset(want + i * 4096, 'a' + i, 4096);
        assert_int_equal(hcomp_file_pread(f, back, sizeof(back), 0, &got, &err), HCOMP_OK);
        assert_int_equal(got, sizeof(back));
        assert_memory_equal(back, want, sizeof(want));
        assert_int_equal(hcomp_file_close(f, &err), HCOMP_OK);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty_opened_at_once, setup, teardown), /* first */
        cmocka_unit_test_setup_teardown(test_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_stays_hcomp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt_empty, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
