/* The fixture of the file-level unit tests (test_file.c, test_reclaim.c): a private
 * temporary directory with two tiers ("fast", node-local, and "slow") named by a tier
 * configuration the test writes, the mapping files in a third; data generators;
 * wrappers that fail the test with the library's message. Include after cmocka.h. */
#ifndef HCOMP_TEST_FILE_FIXTURE_H
#define HCOMP_TEST_FILE_FIXTURE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hcomp.h"
#include "tutil.h"

#define KIB ((uint64_t) 1 << 10)
#define MIB ((uint64_t) 1 << 20)
#define GIB ((uint64_t) 1 << 30)

/* ---- fixture ---------------------------------------------------------------------- */

typedef struct fixture {
    char base[PATH_MAX];        /* the temporary directory */
    char files[PATH_MAX];       /* mapping files */
    char t0[PATH_MAX];          /* tier "fast" */
    char t1[PATH_MAX];          /* tier "slow" */
    char config[PATH_MAX];
    hcomp_options *opts;
} fixture;

static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* (Re)write the configuration: "fast" (capacity cap0) then "slow" (unlimited), their
 * speeds the engine's guess from their order (not measured: both are directories of one
 * file system, and these tests are about placement, not about measuring). */
static inline void write_config(fixture *fx, const char *cap0)
{
    char json[4 * PATH_MAX];
    snprintf(json, sizeof(json),
             "{\"version\": 1, \"tiers\": [\n"
             "  {\"name\": \"fast\", \"path\": \"%s\", \"capacity\": \"%s\", \"scope\": \"node-local\","
             "   \"measure\": false},\n"
             "  {\"name\": \"slow\", \"path\": \"%s\", \"capacity\": \"unlimited\", \"measure\": false}\n"
             "]}\n", fx->t0, cap0, fx->t1);
    write_text(fx->config, json);
}

/* out = dir/name (out has PATH_MAX bytes) */
static inline void join(char *out, const char *dir, const char *name)
{
    assert_true(snprintf(out, PATH_MAX, "%s/%s", dir, name) < PATH_MAX);
}

static inline int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    snprintf(fx->base, sizeof(fx->base), "/tmp/hcomp-test-file-XXXXXX");
    assert_non_null(mkdtemp(fx->base));
    join(fx->files, fx->base, "files");
    join(fx->t0, fx->base, "tier0");
    join(fx->t1, fx->base, "tier1");
    join(fx->config, fx->base, "tiers.json");
    assert_int_equal(mkdir(fx->files, 0700), 0);
    assert_int_equal(mkdir(fx->t0, 0700), 0);
    assert_int_equal(mkdir(fx->t1, 0700), 0);
    write_config(fx, "unlimited");
    fx->opts = hcomp_options_new();
    assert_non_null(fx->opts);
    hcomp_error err;
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_config", fx->config, &err), HCOMP_OK);
    /* these tests are about the storage underneath the engine: a fixed codec, and
     * node-local data left where it was placed (test_engine.c covers the rest) */
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_codec", "lz4", &err), HCOMP_OK);
    assert_int_equal(hcomp_options_set(fx->opts, "hcomp_drain", "never", &err), HCOMP_OK);
    *state = fx;
    return 0;
}

static inline int teardown(void **state)
{
    fixture *fx = *state;
    chmod(fx->t0, 0700);        /* in case a test took permissions away */
    assert_int_equal(t_rm_tree(fx->base), 0);
    hcomp_options_free(fx->opts);
    free(fx);
    return 0;
}

static inline void file_path(const fixture *fx, const char *name, char *out, size_t n)
{
    assert_true(snprintf(out, n, "%s/%s", fx->files, name) < (int) n);
}

static inline void set_opt(fixture *fx, const char *key, const char *value)
{
    hcomp_error err;
    int rc = hcomp_options_set(fx->opts, key, value, &err);
    if (rc != HCOMP_OK)
        fail_msg("%s=%s: %s", key, value, err.msg);
}

/* ---- data --------------------------------------------------------------------------- */

/* What a piece of len logical bytes stored as it is takes in a new (format-2) file,
 * whatever the block size (such a piece has 4 KiB blocks): its 16-byte header, its block
 * table, the bytes. */
static inline uint64_t raw_piece_bytes(uint64_t len)
{
    return 16 + 8 + 8 * ((len + 4095) / 4096) + len;   /* framed in 4 KiB blocks */
}

static inline uint64_t rng(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static inline unsigned char *random_data(size_t n, uint64_t seed)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char) rng(&seed);
    return p;
}

/* Log-like text with a counter in it: compresses well, and every 4 KiB differs. */
static inline unsigned char *text_data(size_t n, unsigned salt)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    size_t i = 0;
    for (unsigned line = 0; i < n; line++) {
        char buf[128];
        int k = snprintf(buf, sizeof(buf), "step %u.%u: field written, residual %u ok\n", salt,
                         line, (line * 2654435761u) % 1000);
        for (int j = 0; j < k && i < n; j++)
            p[i++] = (unsigned char) buf[j];
    }
    return p;
}

static inline int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* ---- wrappers that fail the test with the library's message --------------------------- */

#define CHECK(call)                                                                     \
    do {                                                                                \
        hcomp_error e_;                                                                 \
        memset(&e_, 0, sizeof(e_));                                                     \
        int rc_ = (call);                                                               \
        if (rc_ != HCOMP_OK)                                                            \
            fail_msg("%s: %s: %s", #call, hcomp_code_name(rc_), e_.msg);                \
    } while (0)

static inline hcomp_file *open_file(fixture *fx, const char *path, int flags)
{
    hcomp_file *f = NULL;
    hcomp_error err;
    int rc = hcomp_file_open(path, flags, 0644, 1, fx->opts, &f, &err);
    if (rc != HCOMP_OK)
        fail_msg("open %s: %s: %s", path, hcomp_code_name(rc), err.msg);
    assert_non_null(f);
    return f;
}

static inline void pwrite_ok(hcomp_file *f, const void *buf, uint64_t len, uint64_t off)
{
    hcomp_error err;
    int rc = hcomp_file_pwrite(f, buf, len, off, &err);
    if (rc != HCOMP_OK)
        fail_msg("pwrite %llu at %llu: %s: %s", (unsigned long long) len,
                 (unsigned long long) off, hcomp_code_name(rc), err.msg);
}

static inline uint64_t pread_ok(hcomp_file *f, void *buf, uint64_t len, uint64_t off)
{
    hcomp_error err;
    uint64_t n = UINT64_MAX;
    int rc = hcomp_file_pread(f, buf, len, off, &n, &err);
    if (rc != HCOMP_OK)
        fail_msg("pread %llu at %llu: %s: %s", (unsigned long long) len,
                 (unsigned long long) off, hcomp_code_name(rc), err.msg);
    return n;
}

static inline uint64_t size_of(hcomp_file *f)
{
    hcomp_error err;
    uint64_t s = UINT64_MAX;
    int rc = hcomp_file_size(f, &s, &err);
    if (rc != HCOMP_OK)
        fail_msg("size: %s", err.msg);
    return s;
}

static inline void close_ok(hcomp_file *f)
{
    hcomp_error err;
    int rc = hcomp_file_close(f, &err);
    if (rc != HCOMP_OK)
        fail_msg("close: %s", err.msg);
}

static inline void stat_ok(const char *path, hcomp_stats *st)
{
    hcomp_error err;
    int rc = hcomp_stat_path(path, st, &err);
    if (rc != HCOMP_OK)
        fail_msg("stat %s: %s", path, err.msg);
}

/* Read [off, off+len) and compare with want (len bytes, all expected to be there). */
static inline void expect_bytes(hcomp_file *f, const unsigned char *want, uint64_t len, uint64_t off)
{
    unsigned char *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    memset(buf, 0xEE, len);
    uint64_t n = pread_ok(f, buf, len, off);
    if (n != len)
        fail_msg("read %llu at %llu returned %llu bytes", (unsigned long long) len,
                 (unsigned long long) off, (unsigned long long) n);
    for (uint64_t i = 0; i < len; i++)
        if (buf[i] != want[i])
            fail_msg("byte %llu (read at %llu+%llu) is 0x%02x, want 0x%02x",
                     (unsigned long long) (off + i), (unsigned long long) off,
                     (unsigned long long) i, buf[i], want[i]);
    free(buf);
}

/* A read of path that fails with code and names in_msg (if not NULL), reading nothing. */
static inline void expect_read_fails(fixture *fx, const char *path, uint64_t len, uint64_t off, int code,
                              const char *in_msg)
{
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDONLY);
    unsigned char *buf = malloc(len);
    assert_non_null(buf);
    hcomp_error err;
    uint64_t n = 12345;
    int rc = hcomp_file_pread(f, buf, len, off, &n, &err);
    if (rc != code)
        fail_msg("read %llu at %llu: %s, want %s (%s)", (unsigned long long) len,
                 (unsigned long long) off, hcomp_code_name(rc), hcomp_code_name(code), err.msg);
    assert_true(n == 0);
    if (in_msg && strstr(err.msg, in_msg) == NULL)
        fail_msg("message does not name %s: %s", in_msg, err.msg);
    free(buf);
    close_ok(f);
}

/* ---- directory helpers ---------------------------------------------------------------- */

/* Entries of a directory other than . and .. */
static inline int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static char found_segs[16][PATH_MAX] __attribute__((unused));
static int nfound_segs __attribute__((unused));

static inline int collect_seg(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) ftw;
    size_t l = strlen(path);
    if (flag == FTW_F && S_ISREG(st->st_mode) && l > 4 && strcmp(path + l - 4, ".seg") == 0 &&
        nfound_segs < 16)
        snprintf(found_segs[nfound_segs++], PATH_MAX, "%s", path);
    return 0;
}

/* The segment files under a tier directory; returns how many. */
static inline int find_segments(const char *dir)
{
    nfound_segs = 0;
    assert_int_equal(nftw(dir, collect_seg, 16, FTW_PHYS), 0);
    return nfound_segs;
}

/* A new file at path holding d (len bytes), closed; seg (PATH_MAX bytes) gets the one
 * segment file it made on the first tier. */
/* Creates the file at path with the fixture's options, its len bytes d, and closes it. */
static inline void write_whole(fixture *fx, const char *path, const unsigned char *d, uint64_t len)
{
    hcomp_file *f = open_file(fx, path, HCOMP_O_RDWR | HCOMP_O_CREAT);
    pwrite_ok(f, d, len, 0);
    close_ok(f);
}

static inline void write_one_segment(fixture *fx, const char *path, const unsigned char *d,
                                     uint64_t len, char *seg)
{
    write_whole(fx, path, d, len);
    assert_int_equal(find_segments(fx->t0), 1);
    snprintf(seg, PATH_MAX, "%s", found_segs[0]);
}

static inline void flip_byte(const char *path, off_t at)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, at), 1);
    c ^= 0x5a;
    assert_int_equal(pwrite(fd, &c, 1, at), 1);
    close(fd);
}

static inline off_t file_length(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static inline int stat_tier(const hcomp_stats *st, const char *name)
{
    for (size_t i = 0; i < st->ntiers; i++)
        if (strcmp(st->tier[i].name, name) == 0)
            return (int) i;
    return -1;
}

#endif
