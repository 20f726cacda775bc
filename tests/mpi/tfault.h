/* Helpers of the fault tests (t_enospc, t_vanish, t_rotier, t_kill, t_damage,
 * t_soak, t_badinput), on top of tcommon.h: mounting small file systems, removing
 * directory trees, damaging files, skipping a test that cannot run here, and checks
 * of MPI error classes and messages.
 *
 * A test that needs what this machine cannot give (mount(2) without root) prints
 *   SKIP <test>: <why>
 * on rank 0 and exits 0 without an OK line; tests/mpi/run.sh counts it as skipped,
 * neither passed nor failed. */
#ifndef HCOMP_TFAULT_H
#define HCOMP_TFAULT_H

#include "tcommon.h"

#include <fcntl.h>
#include <sys/mount.h>

/* ---- skipping ---------------------------------------------------------------------- */

TC_UNUSED static int t_skip(tctx *t, const char *why) __attribute__((noreturn));
TC_UNUSED static int t_skip(tctx *t, const char *why)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        printf("SKIP %s: %s\n", t->test, why);
        fflush(stdout);
    }
    MPI_Finalize();
    exit(0);
}

/* ---- mounts (rank 0 does them, everybody learns the outcome) ---------------------- */

/* Paths rank 0 mounted and has not unmounted yet: unmounted (lazily) when a check
 * fails on rank 0, so that a failing run leaves no mount behind; run.sh also
 * unmounts whatever is left under its work directory. */
static char t_mounts[4][4096];

static void t_forget_mount(const char *dir)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(t_mounts[i], dir) == 0)
            t_mounts[i][0] = 0;
}

static void t_unmount_all_on_exit(void)
{
    for (int i = 3; i >= 0; i--)
        if (t_mounts[i][0]) {
            umount2(t_mounts[i], MNT_DETACH);
            t_mounts[i][0] = 0;
        }
}

static void t_remember_mount(const char *dir)
{
    static int registered;
    if (!registered) {
        atexit(t_unmount_all_on_exit);
        registered = 1;
    }
    for (int i = 0; i < 4; i++)
        if (t_mounts[i][0] == 0) {
            snprintf(t_mounts[i], sizeof t_mounts[i], "%s", dir);
            return;
        }
}

/* Rank 0 runs mount(2); returns errno (0: mounted) on every rank. */
TC_UNUSED static int t_mount(const tctx *t, const char *source, const char *dir, const char *fstype,
                             unsigned long flags, const char *data)
{
    int err = 0;
    if (t->rank == 0) {
        if (mount(source, dir, fstype, flags, data) != 0)
            err = errno;
        else if (!(flags & MS_REMOUNT))
            t_remember_mount(dir);
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return err;
}

/* Mount a tmpfs of the given size ("1m") at dir (which must exist), mode 0700.
 * Returns errno on every rank; 0 when mounted. */
TC_UNUSED static int t_mount_tmpfs(const tctx *t, const char *dir, const char *size)
{
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s,mode=0700", size);
    return t_mount(t, "tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts);
}

/* Unmount dir (rank 0); a failure fails the test. */
TC_UNUSED static void t_umount(const tctx *t, const char *dir)
{
    int err = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        for (int i = 0; i < 50 && umount(dir) != 0; i++) {
            err = errno;
            if (err != EBUSY)
                break;
            usleep(100000); /* a monitor thread may be looking at it right now */
        }
        if (err == EBUSY && umount2(dir, MNT_DETACH) == 0)
            err = 0;
        else if (err && t_exists(dir)) {
            struct stat a, b;
            char parent[4200];
            snprintf(parent, sizeof parent, "%s/..", dir);
            if (stat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev == b.st_dev)
                err = 0; /* it is not a mount point (any more) */
        }
        if (!err)
            t_forget_mount(dir);
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("umount %s: %s", dir, strerror(err));
}

/* ---- files and directories --------------------------------------------------------- */

static int t_rm_cb(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(p) != 0 && errno != ENOENT ? -1 : 0;
}

/* rm -rf path (on the calling rank); returns 0 or errno. */
TC_UNUSED static int t_rm_rf(const char *path)
{
    if (!t_exists(path))
        return 0;
    return nftw(path, t_rm_cb, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : (errno ? errno : EIO);
}

/* Regular files under dir whose name ends with suffix; their paths (at most max) go
 * to out[]. Returns how many were found (more than max are counted too). */
static char (*t_find_out)[4096];
static int t_find_n, t_find_max;
static const char *t_find_suffix;
static int t_find_cb(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    size_t l = strlen(p), s = strlen(t_find_suffix);
    if (type == FTW_F && l >= s && strcmp(p + l - s, t_find_suffix) == 0) {
        if (t_find_n < t_find_max)
            snprintf(t_find_out[t_find_n], 4096, "%s", p);
        t_find_n++;
    }
    return 0;
}

TC_UNUSED static int t_find_files(const char *dir, const char *suffix, char (*out)[4096], int max)
{
    t_find_out = out;
    t_find_n = 0;
    t_find_max = max;
    t_find_suffix = suffix;
    if (nftw(dir, t_find_cb, 16, FTW_PHYS) != 0)
        return -1;
    return t_find_n;
}

/* Bytes allocated to the segment files under dir (punched holes do not count). */
TC_UNUSED static uint64_t t_segment_bytes(const char *dir)
{
    static char found[256][4096];
    int n = t_find_files(dir, ".seg", found, 256);
    uint64_t sum = 0;
    for (int i = 0; i < n && i < 256; i++) {
        struct stat st;
        if (stat(found[i], &st) == 0)
            sum += (uint64_t)st.st_blocks * 512;
    }
    return sum;
}

/* Size of a file, -1 if missing. */
TC_UNUSED static long long t_file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* Flip the bits of the byte at off (xor 0xff); returns 0 or errno. */
TC_UNUSED static int t_flip_byte(const char *path, long long off)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return errno;
    unsigned char c;
    int err = 0;
    if (pread(fd, &c, 1, off) != 1)
        err = errno ? errno : EIO;
    c ^= 0xff;
    if (!err && pwrite(fd, &c, 1, off) != 1)
        err = errno ? errno : EIO;
    close(fd);
    return err;
}

/* Write len bytes at off of a file (creating it); returns 0 or errno. */
TC_UNUSED static int t_write_bytes(const char *path, const void *buf, size_t len, long long off,
                                   int trunc)
{
    int fd = open(path, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0), 0644);
    if (fd < 0)
        return errno;
    int err = pwrite(fd, buf, len, off) == (ssize_t)len ? 0 : (errno ? errno : EIO);
    close(fd);
    return err;
}

/* The whole file in a malloc'd buffer (*len its size); NULL if it cannot be read. */
TC_UNUSED static unsigned char *t_slurp(const char *path, size_t *len)
{
    long long n = t_file_size(path);
    *len = 0;
    if (n < 0)
        return NULL;
    unsigned char *b = t_malloc((size_t)n);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || pread(fd, b, (size_t)n, 0) != n) {
        if (fd >= 0)
            close(fd);
        free(b);
        return NULL;
    }
    close(fd);
    *len = (size_t)n;
    return b;
}

/* The pieces stored in the segment files (*.seg) under dir, from their 16-byte piece
 * headers (docs/FORMAT.md): fn(logical start, raw length, arg) for each. Stops at a
 * segment's end or at a header that is not version 1 or 2. Returns the number of pieces. */
typedef void (*t_piece_fn)(uint64_t start, uint32_t raw, void *arg);
TC_UNUSED static int t_seg_pieces(const char *dir, t_piece_fn fn, void *arg)
{
    static char segs[256][4096];
    int n = t_find_files(dir, ".seg", segs, 256), pieces = 0;
    if (n > 256)
        TFAIL("more than 256 segments under %s", dir);
    for (int i = 0; i < n; i++) {
        size_t len;
        unsigned char *b = t_slurp(segs[i], &len);
        if (!b)
            TFAIL("cannot read segment %s", segs[i]);
        for (size_t at = 0; at + 16 <= len;) {
            uint64_t start = 0;
            for (int k = 5; k >= 0; k--)
                start = start << 8 | b[at + (size_t)k];
            uint32_t raw = (uint32_t)b[at + 8] | (uint32_t)b[at + 9] << 8 |
                           (uint32_t)b[at + 10] << 16 | (uint32_t)b[at + 11] << 24;
            uint32_t stored = (uint32_t)b[at + 12] | (uint32_t)b[at + 13] << 8 |
                              (uint32_t)b[at + 14] << 16 | (uint32_t)b[at + 15] << 24;
            if (((b[at + 7] >> 4) != 1 && (b[at + 7] >> 4) != 2) || at + 16 + stored > len)
                break;
            fn(start, raw, arg);
            pieces++;
            at += 16 + (size_t)stored;
        }
        free(b);
    }
    return pieces;
}

/* The record frames of a mapping file's bytes m (docs/FORMAT.md): offset, length
 * (frame included) and type of each, at most max; returns how many. */
typedef struct t_rec {
    size_t at, len;
    int type;
} t_rec;

TC_UNUSED static int t_records(const unsigned char *m, size_t len, t_rec *out, int max)
{
    int n = 0;
    for (size_t at = 64; at + 12 <= len && n < max;) {
        uint32_t magic = (uint32_t)m[at] | (uint32_t)m[at + 1] << 8 | (uint32_t)m[at + 2] << 16 |
                         (uint32_t)m[at + 3] << 24;
        uint32_t plen = (uint32_t)m[at + 4] | (uint32_t)m[at + 5] << 8 |
                        (uint32_t)m[at + 6] << 16 | (uint32_t)m[at + 7] << 24;
        if (magic != 0x31524348u)
            TFAIL("mapping file: no record magic at %zu", at);
        out[n].at = at;
        out[n].len = 16 + (size_t)plen;
        out[n].type = m[at + 8] | m[at + 9] << 8;
        n++;
        at += 16 + (size_t)plen;
    }
    return n;
}

/* ---- errors ------------------------------------------------------------------------- */

/* The class and text of an MPI error code. */
TC_UNUSED static int t_err_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

TC_UNUSED static const char *t_err_text(int code)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    s[0] = 0;
    MPI_Error_string(code, s, &len);
    return s;
}

/* MPI_File_open that must fail with one of the classes want1/want2 (want2 may be -1)
 * and a message that contains each of the NULL-ended strings. Only rank 0 renders the
 * message: ROMIO broadcasts some open error codes from rank 0, which other ranks cannot
 * render. Returns rank 0's message (empty on other ranks). */
TC_UNUSED static const char *t_open_fails(const tctx *t, MPI_Comm comm, const char *name, int amode,
                                          MPI_Info info, int want1, int want2, const char *what,
                                          ...)
{
    static char msg[MPI_MAX_ERROR_STRING + 1];
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(comm, name, amode, info, &fh);
    if (rc == MPI_SUCCESS) {
        MPI_File_close(&fh);
        TFAIL("%s: MPI_File_open(%.300s) succeeded, expected %s", what, name, t_class_name(want1));
    }
    int cls = t_err_class(rc), crank = 0;
    MPI_Comm_rank(comm, &crank);
    msg[0] = 0;
    if (crank == 0)
        snprintf(msg, sizeof msg, "%s", t_err_text(rc));
    if (cls != want1 && cls != want2)
        TFAIL("%s: MPI_File_open(%.300s) gave %s (class %d): %s; expected %s%s%s", what, name,
              t_class_name(cls), cls, msg, t_class_name(want1), want2 >= 0 ? " or " : "",
              want2 >= 0 ? t_class_name(want2) : "");
    if (fh != MPI_FILE_NULL)
        TFAIL("%s: a failed open did not leave MPI_FILE_NULL", what);
    if (crank == 0) {
        va_list ap;
        va_start(ap, what);
        for (const char *s; (s = va_arg(ap, const char *)) != NULL;)
            if (!strstr(msg, s))
                TFAIL("%s: the error message does not name '%s': %s", what, s, msg);
        va_end(ap);
        /* the cause, without MPICH's error stack around hcomp's message */
        const char *cause = msg, *h;
        while ((h = strstr(cause, "hcomp: ")) != NULL)
            cause = h + 7;
        printf("  [%s] %s: %s: %.300s\n", t->test, what, t_class_name(cls), cause);
        fflush(stdout);
    }
    return msg;
}

/* Write ref's bytes [off, off+len) at off (collectively if coll), or fail the test. */
TC_UNUSED static void write_ok(MPI_File fh, uint64_t off, const uint8_t *ref, uint64_t len,
                               int coll, const char *what)
{
    MPI_Status st;
    int rc = coll ? MPI_File_write_at_all(fh, (MPI_Offset)off, ref + off, (int)len, MPI_BYTE, &st)
                  : MPI_File_write_at(fh, (MPI_Offset)off, ref + off, (int)len, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS)
        TFAIL("%s: %s of %llu bytes at %llu failed: %s", what, coll ? "write_at_all" : "write_at",
              (unsigned long long)len, (unsigned long long)off, t_errstr(rc));
}

#endif
