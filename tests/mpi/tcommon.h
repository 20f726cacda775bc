/* Shared helpers for the hcomp MPI integration tests (tests/mpi/t_*.c).
 *
 * Every test program takes:   t_xxx [--option ...] TARGET [CONFIG]
 *   TARGET  the file to use, with its ROMIO prefix: hcomp:/dir/f.dat or ufs:/dir/f.dat
 *   CONFIG  optional tier configuration JSON, passed as the hcomp_config hint
 *           (only for hcomp: targets; ignored for ufs:)
 *   --xxx   test-specific options (e.g. --write / --verify for t_persist)
 *
 * A test checks real outcomes and on the first mismatch prints
 *   FAIL <test> rank R: <file>:<line>: <what went wrong>
 * and calls MPI_Abort(MPI_COMM_WORLD, 1). On success rank 0 prints "OK <test>".
 * Tests remove every file they create (the harness checks nothing is left).
 *
 * Header-only on purpose: each test is one .c file plus this header. */
#ifndef HCOMP_TCOMMON_H
#define HCOMP_TCOMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <mpi.h>
#include <errno.h>
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define TC_UNUSED __attribute__((unused))

#define KiB ((uint64_t)1024)
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

typedef struct tctx {
    const char *test;     /* program name, for messages */
    const char *target;   /* full name with prefix, e.g. "hcomp:/tmp/w/f.dat" */
    const char *path;     /* the same without the prefix */
    const char *prefix;   /* "hcomp:" or "ufs:" (or "" when none) */
    const char *config;   /* tier configuration path, or NULL */
    int is_hcomp;         /* target uses the hcomp: prefix */
    int rank, nprocs;
    int nopts;            /* the --options given */
    const char *opts[16];
} tctx;

static tctx *t_self; /* for messages from helpers */

/* ---- failing ---------------------------------------------------------------- */

TC_UNUSED static void t_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

TC_UNUSED static void t_fail_at(const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s rank %d: %s:%d: %s\n", t_self ? t_self->test : "?",
            t_self ? t_self->rank : -1, file, line, msg);
    fflush(stderr);
    fflush(stdout);
    /* give the message (and other failing ranks' messages) time to get through
     * mpiexec's output forwarding before the abort tears everything down */
    usleep(300000);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* not reached */
}

#define TFAIL(...) t_fail_at(__FILE__, __LINE__, __VA_ARGS__)
#define TASSERT(cond, ...)                                                         \
    do {                                                                           \
        if (!(cond))                                                               \
            TFAIL("assertion '%s' failed: %s", #cond, t_fmt(__VA_ARGS__));         \
    } while (0)

TC_UNUSED static const char *t_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
TC_UNUSED static const char *t_fmt(const char *fmt, ...)
{
    static char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

TC_UNUSED static const char *t_class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_IO: return "MPI_ERR_IO";
    case MPI_ERR_FILE_EXISTS: return "MPI_ERR_FILE_EXISTS";
    case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY";
    case MPI_ERR_AMODE: return "MPI_ERR_AMODE";
    case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS";
    case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY";
    case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE";
    case MPI_ERR_FILE: return "MPI_ERR_FILE";
    case MPI_ERR_BAD_FILE: return "MPI_ERR_BAD_FILE";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "MPI_ERR_UNSUPPORTED_DATAREP";
    case MPI_ERR_NOT_SAME: return "MPI_ERR_NOT_SAME";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    default: return "(other class)";
    }
}

/* Describe an MPI error code: "MPI_ERR_IO (class 32): <error string>". */
TC_UNUSED static const char *t_errstr(int code)
{
    static char buf[MPI_MAX_ERROR_STRING + 128];
    char s[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    MPI_Error_class(code, &cls);
    MPI_Error_string(code, s, &len);
    snprintf(buf, sizeof buf, "%s (class %d): %s", t_class_name(cls), cls, s);
    return buf;
}

/* Run an MPI call that must succeed. */
#define TCHK(call)                                                                 \
    do {                                                                           \
        int t_rc_ = (call);                                                        \
        if (t_rc_ != MPI_SUCCESS)                                                  \
            TFAIL("%s failed: %s", #call, t_errstr(t_rc_));                       \
    } while (0)

/* Run an MPI call that must fail with error class want_cls. */
#define TCHK_FAILS(want_cls, call)                                                 \
    do {                                                                           \
        int t_rc_ = (call), t_cls_ = MPI_SUCCESS;                                  \
        if (t_rc_ == MPI_SUCCESS)                                                  \
            TFAIL("%s succeeded; expected %s", #call, t_class_name(want_cls));     \
        MPI_Error_class(t_rc_, &t_cls_);                                           \
        if (t_cls_ != (want_cls))                                                  \
            TFAIL("%s: expected %s, got %s", #call, t_class_name(want_cls),        \
                  t_errstr(t_rc_));                                                \
    } while (0)

/* ---- start and finish -------------------------------------------------------- */

TC_UNUSED static void t_usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--option ...] TARGET [CONFIG]\n"
                    "  TARGET: hcomp:/dir/file or ufs:/dir/file\n"
                    "  CONFIG: tier configuration JSON (hcomp_config hint)\n", argv0);
}

TC_UNUSED static void t_init(int *argc, char ***argv, tctx *t)
{
    memset(t, 0, sizeof *t);
    t_self = t;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t->nprocs);
    const char *slash = strrchr((*argv)[0], '/');
    t->test = slash ? slash + 1 : (*argv)[0];

    int npos = 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = (*argv)[i];
        if (strncmp(a, "--", 2) == 0) {
            if (t->nopts < 16)
                t->opts[t->nopts++] = a;
        } else if (npos == 0) {
            t->target = a;
            npos++;
        } else if (npos == 1) {
            t->config = a[0] ? a : NULL;
            npos++;
        } else {
            if (t->rank == 0)
                t_usage((*argv)[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (!t->target) {
        if (t->rank == 0)
            t_usage((*argv)[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *colon = strchr(t->target, ':');
    if (colon && colon - t->target < 16 && colon != t->target) {
        t->path = colon + 1;
        static char prefix[20];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(colon - t->target + 1), t->target);
        t->prefix = prefix;
    } else {
        t->path = t->target;
        t->prefix = "";
    }
    t->is_hcomp = strcmp(t->prefix, "hcomp:") == 0;
    if (!t->is_hcomp)
        t->config = NULL;
    /* Errors on file handles return by default; make it explicit for opens too. */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
}

TC_UNUSED static int t_has_opt(const tctx *t, const char *opt)
{
    for (int i = 0; i < t->nopts; i++)
        if (strcmp(t->opts[i], opt) == 0)
            return 1;
    return 0;
}

TC_UNUSED static void t_log(const tctx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
TC_UNUSED static void t_log(const tctx *t, const char *fmt, ...)
{
    if (t->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("  [%s] ", t->test);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

TC_UNUSED static int t_finish(tctx *t)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        printf("OK %s (%s, np=%d)\n", t->test, t->is_hcomp ? "hcomp" : t->prefix, t->nprocs);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

/* Sum of a per-rank failure count: for checks where every rank must report. */
TC_UNUSED static void t_all_ok(int local_failures, const char *what)
{
    int total = 0;
    MPI_Allreduce(&local_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total != 0)
        TFAIL("%s: %d failure(s) across ranks", what, total);
}

/* ---- names -------------------------------------------------------------------- */

/* A sibling of the target: same prefix and directory, name + suffix.
 * t_name(t, ".b") on "hcomp:/d/f.dat" gives "hcomp:/d/f.dat.b". Static ring buffer. */
TC_UNUSED static const char *t_name(const tctx *t, const char *suffix)
{
    static char ring[8][4096];
    static int next;
    char *b = ring[next++ % 8];
    snprintf(b, 4096, "%s%s", t->target, suffix);
    return b;
}

/* The path (no prefix) of t_name(t, suffix). */
TC_UNUSED static const char *t_path(const tctx *t, const char *suffix)
{
    static char ring[8][4096];
    static int next;
    char *b = ring[next++ % 8];
    snprintf(b, 4096, "%s%s", t->path, suffix);
    return b;
}

/* ---- info ---------------------------------------------------------------------- */

/* An info with the test's hcomp_config (when set) plus key/value pairs, NULL-ended.
 * For ufs targets hcomp_* keys are still set: ROMIO ignores unknown keys. */
TC_UNUSED static MPI_Info t_info(const tctx *t, ...)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (t->is_hcomp && t->config)
        MPI_Info_set(info, "hcomp_config", t->config);
    va_list ap;
    va_start(ap, t);
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k)
            break;
        const char *v = va_arg(ap, const char *);
        MPI_Info_set(info, k, v);
    }
    va_end(ap);
    return info;
}

TC_UNUSED static MPI_File t_open(const tctx *t, const char *name, int amode, MPI_Info info)
{
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, name, amode, info, &fh);
    if (rc != MPI_SUCCESS)
        TFAIL("MPI_File_open(%s, amode=0x%x) failed: %s", name, amode, t_errstr(rc));
    (void)t;
    return fh;
}

/* Delete a file that must exist (collective: rank 0 deletes, others wait). */
TC_UNUSED static void t_delete(const tctx *t, const char *name, MPI_Info info)
{
    int rc = MPI_SUCCESS;
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        rc = MPI_File_delete(name, info);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        TFAIL("MPI_File_delete(%s) failed: %s", name, t_errstr(rc));
}

/* Delete a file that may or may not exist. */
TC_UNUSED static void t_delete_quiet(const tctx *t, const char *name, MPI_Info info)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        (void)MPI_File_delete(name, info);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- small helpers (once here, not copied into each test) --------------------------- */

/* Make every rank's writes durable and seen by all. */
TC_UNUSED static void sync_all(MPI_File fh)
{
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
}

/* Block split of n over p parts: part c gets [*start, *start + *len). */
TC_UNUSED static void t_split(int n, int p, int c, int *start, int *len)
{
    int base = n / p, rem = n % p;
    *len = base + (c < rem);
    *start = c * base + (c < rem ? c : rem);
}

/* Seconds on the monotonic clock. */
TC_UNUSED static double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- data ------------------------------------------------------------------------ */

static inline uint64_t t_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The byte at logical offset off of a reproducible "realistic" byte stream: it
 * alternates every 8 KiB between a smooth signal (quantized sine), a counter
 * sequence (little-endian 64-bit integers) and random bytes. seed selects a
 * different stream (so overwrites are distinguishable). */
static inline uint8_t t_byte(uint64_t off, uint64_t seed)
{
    uint64_t blk = off >> 13;
    switch ((blk + seed) % 3) {
    case 0:
        return (uint8_t)(128.0 + 100.0 * sin((double)off * 0.0021 + (double)seed));
    case 1: {
        uint64_t v = (off >> 3) * 3 + seed * 1000003u;
        return (uint8_t)(v >> (8 * (off & 7)));
    }
    default:
        return (uint8_t)t_mix64(off ^ (seed << 48));
    }
}

/* a[0..n) shuffled (Fisher-Yates, a fixed sequence per seed) */
TC_UNUSED static void t_shuffle(int *a, int n, uint64_t seed)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(t_mix64((uint64_t)i * 7919 + seed) % (uint64_t)(i + 1));
        int x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
}

TC_UNUSED static void t_fill(void *buf, uint64_t len, uint64_t off, uint64_t seed)
{
    uint8_t *b = buf;
    for (uint64_t i = 0; i < len; i++)
        b[i] = t_byte(off + i, seed);
}

/* Incompressible bytes. */
TC_UNUSED static void t_fill_random(void *buf, uint64_t len, uint64_t seed)
{
    uint8_t *b = buf;
    uint64_t i = 0, s = seed * 0x2545F4914F6CDD1Dull + 1;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = t_mix64(s++);
        memcpy(b + i, &v, 8);
    }
    for (uint64_t v = t_mix64(s); i < len; i++, v >>= 8)
        b[i] = (uint8_t)v;
}

/* A smooth 3-D field value at global index (i,j,k) of variable var: Gaussian
 * bumps plus waves plus a little deterministic noise. */
static inline double t_field(int var, long i, long j, long k)
{
    double x = (double)i * 0.05, y = (double)j * 0.07, z = (double)k * 0.03;
    double v = 300.0 + 10.0 * var;
    v += 25.0 * exp(-((x - 1.5) * (x - 1.5) + (y - 2.0) * (y - 2.0) + (z - 0.7) * (z - 0.7)));
    v += 12.0 * exp(-0.5 * ((x - 3.0) * (x - 3.0) + (y - 0.8) * (y - 0.8)));
    v += 3.0 * sin(1.3 * x + var) * cos(0.9 * y) + 1.5 * sin(2.1 * z);
    uint64_t h = t_mix64(((uint64_t)var << 58) ^ ((uint64_t)i << 40) ^ ((uint64_t)j << 20) ^ (uint64_t)k);
    v += 1e-3 * ((double)(h >> 11) / 9007199254740992.0 - 0.5);
    return v;
}

/* Compare got to expected; on mismatch report the first bad offset and fail. */
#define TEXPECT_BYTES(got, exp, n, file_off, what)                                  \
    t_expect_bytes(__FILE__, __LINE__, (got), (exp), (n), (file_off), (what))

TC_UNUSED static void t_expect_bytes(const char *file, int line, const void *got, const void *exp,
                           uint64_t n, uint64_t file_off, const char *what)
{
    const uint8_t *g = got, *e = exp;
    if (memcmp(g, e, n) == 0)
        return;
    uint64_t first = 0, bad = 0;
    int found = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (g[i] != e[i]) {
            if (!found)
                first = i;
            found = 1;
            bad++;
        }
    }
    t_fail_at(file, line,
              "%s: %" PRIu64 " of %" PRIu64 " bytes differ; first at buffer index %" PRIu64
              " (file offset %" PRIu64 "): got 0x%02x, expected 0x%02x",
              what, bad, n, first, file_off + first, g[first], e[first]);
}

TC_UNUSED static int t_all_zero(const void *buf, uint64_t n, uint64_t *first_nonzero)
{
    const uint8_t *b = buf;
    for (uint64_t i = 0; i < n; i++)
        if (b[i]) {
            if (first_nonzero)
                *first_nonzero = i;
            return 0;
        }
    return 1;
}

TC_UNUSED static void *t_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        TFAIL("out of memory allocating %zu bytes", n);
    return p;
}

TC_UNUSED static MPI_Offset t_get_size(MPI_File fh)
{
    MPI_Offset sz = -1;
    TCHK(MPI_File_get_size(fh, &sz));
    return sz;
}

/* Number of bytes a status says were transferred. */
TC_UNUSED static int t_count(const MPI_Status *st)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    return n;
}

/* ---- directories (tiers) --------------------------------------------------------- */

TC_UNUSED static uint64_t t_du_total;
TC_UNUSED static uint64_t t_du_files;
TC_UNUSED static int t_du_cb(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)p;
    (void)ftw;
    if (type == FTW_F) {
        t_du_total += (uint64_t)sb->st_size;
        t_du_files++;
    }
    return 0;
}

/* Sum of the sizes of the regular files under dir (recursively). */
TC_UNUSED static uint64_t t_du(const char *dir, uint64_t *nfiles)
{
    t_du_total = 0;
    t_du_files = 0;
    if (nftw(dir, t_du_cb, 16, FTW_PHYS) != 0)
        TFAIL("cannot walk %s: %s", dir, strerror(errno));
    if (nfiles)
        *nfiles = t_du_files;
    return t_du_total;
}

TC_UNUSED static int t_du_blocks_cb(const char *p, const struct stat *sb, int type,
                                    struct FTW *ftw)
{
    (void)p;
    (void)ftw;
    if (type == FTW_F) {
        t_du_total += (uint64_t)sb->st_blocks * 512u;
        t_du_files++;
    }
    return 0;
}

/* Bytes allocated (as the file system counts them: st_blocks) to the regular files under
 * dir: what they hold of its space, holes punched out of them not counted. */
TC_UNUSED static uint64_t t_du_blocks(const char *dir, uint64_t *nfiles)
{
    t_du_total = 0;
    t_du_files = 0;
    if (nftw(dir, t_du_blocks_cb, 16, FTW_PHYS) != 0)
        TFAIL("cannot walk %s: %s", dir, strerror(errno));
    if (nfiles)
        *nfiles = t_du_files;
    return t_du_total;
}

/* Number of entries directly inside dir (-1 if dir is missing). The first entry's
 * name is copied to first (when given), for messages. */
TC_UNUSED static long t_dir_entries(const char *dir, char *first, size_t firstlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    long n = 0;
    if (first && firstlen)
        first[0] = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == 0 && first && firstlen)
            snprintf(first, firstlen, "%s", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

TC_UNUSED static int t_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Make a directory (rank 0), then barrier. */
TC_UNUSED static void t_mkdir(const tctx *t, const char *dir)
{
    int err = 0;
    if (t->rank == 0 && mkdir(dir, 0700) != 0 && errno != EEXIST)
        err = errno;
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("mkdir %s: %s", dir, strerror(err));
}

/* Remove an (empty) directory made by t_mkdir (rank 0), then barrier. */
TC_UNUSED static void t_rmdir(const tctx *t, const char *dir)
{
    int err = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0 && rmdir(dir) != 0)
        err = errno;
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("rmdir %s: %s", dir, strerror(err));
}

/* Write a text file (rank 0), then barrier. */
TC_UNUSED static void t_write_text(const tctx *t, const char *path, const char *text)
{
    int err = 0;
    if (t->rank == 0) {
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0)
            err = errno ? errno : EIO;
        if (f && fclose(f) != 0 && !err)
            err = errno;
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("cannot write %s: %s", path, strerror(err));
}

/* Remove a plain file (rank 0), then barrier. */
TC_UNUSED static void t_unlink(const tctx *t, const char *path)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Fail unless the directory dir exists and is empty. */
TC_UNUSED static void t_expect_empty_dir(const char *dir, const char *why)
{
    char first[512];
    long n = t_dir_entries(dir, first, sizeof first);
    if (n < 0)
        TFAIL("%s: directory %s is missing", why, dir);
    if (n > 0)
        TFAIL("%s: directory %s is not empty: %ld entries, e.g. '%s'", why, dir, n, first);
}

/* The directory part of a path ("/a/b/f" -> "/a/b"). Static ring buffer. */
TC_UNUSED static const char *t_dirname(const char *path)
{
    static char ring[4][4096];
    static int next;
    char *b = ring[next++ % 4];
    snprintf(b, 4096, "%s", path);
    char *s = strrchr(b, '/');
    if (!s)
        snprintf(b, 4096, ".");
    else if (s == b)
        b[1] = 0;
    else
        *s = 0;
    return b;
}

/* ---- private tier configurations --------------------------------------------- */

/* A tier configuration of its own for a test: directories <path>.tiers/tier<i>
 * and <path>.tiers/tiers.json, made by rank 0 (t_make_tiers_tag: <path>.<tag>/).
 * capacity[i] is the tier's capacity text ("64KiB", "unlimited"). */
typedef struct ttiers {
    int n;
    char top[4096];
    char dir[4][4160];
    char cfg[4160];
} ttiers;

TC_UNUSED static void t_make_tiers_tag(const tctx *t, ttiers *tt, const char *tag, int n,
                                       const char *const capacity[])
{
    memset(tt, 0, sizeof *tt);
    tt->n = n;
    snprintf(tt->top, sizeof tt->top, "%.4000s.%.60s", t->path, tag);
    snprintf(tt->cfg, sizeof tt->cfg, "%s/tiers.json", tt->top);
    t_mkdir(t, tt->top);
    char json[20000];
    int len = snprintf(json, sizeof json, "{\"version\":1,\"tiers\":[");
    for (int i = 0; i < n; i++) {
        snprintf(tt->dir[i], sizeof tt->dir[i], "%s/tier%d", tt->top, i);
        t_mkdir(t, tt->dir[i]);
        len += snprintf(json + len, sizeof json - (size_t)len,
                        "%s{\"name\":\"tier%d\",\"path\":\"%s\",\"capacity\":\"%s\","
                        "\"scope\":\"%s\",\"measure\":false}", /* shared: data stays where
                        placed (no drain); the engine's speeds by their order, as placement is
                        what these tests check */
                        i ? "," : "", i, tt->dir[i], capacity[i], "shared");
    }
    snprintf(json + len, sizeof json - (size_t)len, "]}\n");
    t_write_text(t, tt->cfg, json);
}

TC_UNUSED static void t_make_tiers(const tctx *t, ttiers *tt, int n, const char *const capacity[])
{
    t_make_tiers_tag(t, tt, "tiers", n, capacity);
}

/* Remove what t_make_tiers made; the tier directories must be empty by now. */
TC_UNUSED static void t_remove_tiers(const tctx *t, ttiers *tt)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0)
        for (int i = 0; i < tt->n; i++)
            t_expect_empty_dir(tt->dir[i], "tier directory after the test deleted its files");
    t_unlink(t, tt->cfg);
    for (int i = 0; i < tt->n; i++)
        t_rmdir(t, tt->dir[i]);
    t_rmdir(t, tt->top);
}

#define T_LINE 64
/* Realistic compressible output, total bytes: fixed-width text log lines (first half),
 * then a smooth int32 field, little-endian (second half); bytes [off, off+len). */
TC_UNUSED static void t_gen_log_field(uint8_t *b, uint64_t off, uint64_t len, uint64_t total)
{
    for (uint64_t i = 0; i < len;) {
        uint64_t o = off + i;
        if (o < total / 2) { /* text: one 64-byte line per step */
            uint64_t step = o / T_LINE, in = o % T_LINE;
            char line[T_LINE + 64];
            double tt = (double)step * 0.001;
            int n = snprintf(line, sizeof line, "step=%08llu t=%10.4f T=%8.3f p=%9.2f",
                             (unsigned long long)step, tt, 300.0 + 20.0 * sin(tt),
                             101325.0 + 50.0 * cos(tt * 0.7));
            memset(line + n, ' ', (size_t)(T_LINE - n));
            line[T_LINE - 1] = '\n';
            uint64_t take = T_LINE - in < len - i ? T_LINE - in : len - i;
            memcpy(b + i, line + in, take);
            i += take;
        } else { /* int32 little-endian samples of a smooth signal */
            uint64_t idx = (o - total / 2) / 4, in = o % 4;
            int32_t v = (int32_t)lround(1000.0 * sin((double)idx / 500.0));
            uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
            uint64_t take = 4 - in < len - i ? 4 - in : len - i;
            memcpy(b + i, le + in, take);
            i += take;
        }
    }
}


/* Bytes an hcomp file occupies: everything under the tier directories of tt plus
 * its mapping file. */
TC_UNUSED static uint64_t t_stored(const ttiers *tt, const char *path)
{
    struct stat sb;
    uint64_t total = 0;
    for (int i = 0; i < tt->n; i++)
        total += t_du(tt->dir[i], NULL);
    if (stat(path, &sb) != 0)
        TFAIL("mapping file %s: %s", path, strerror(errno));
    return total + (uint64_t)sb.st_size;
}

#endif
