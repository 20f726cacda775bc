/* LD_PRELOAD shim for the crash-state explorer (tests/crash/explore.py): records,
 * in the order they happened across all processes, the calls that change file-system
 * state under the directories named in HCOMP_CRASH_ROOTS (colon-separated real paths),
 * with the bytes written, so that the explorer can build the states a crash could leave.
 *
 *   HCOMP_CRASH_TRACE  directory for the trace: "seq" (a shared 8-byte counter, created
 *                      by the explorer) and one "trace.<host>.<pid>" file per process
 *   HCOMP_CRASH_ROOTS  the directories whose changes are recorded
 *
 * A call is recorded after it returns successfully, numbered from the shared counter
 * then: a call that returned before another process's call started gets the smaller
 * number, which is all the explorer needs (MPI orders the rest).  Marks: access(2) on
 * "/HCOMP_CRASH_MARK/<text>" records <text> (the workloads' oracle) and returns 0.
 * Records are written unbuffered, so a process killed at any point leaves a trace
 * of every call it completed before the last one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
    OP_CREATE = 1, OP_MKDIR, OP_UNLINK, OP_RMDIR, OP_RENAME, OP_LINK, OP_WRITE, OP_TRUNC,
    OP_FALLOC, OP_FSYNC, OP_FDATASYNC, OP_SYNCALL, OP_MARK, OP_SYNCRANGE
};

/* one record: this header, then path1 (len1), path2 (len2), data (dlen) */
struct rec {
    uint64_t seq;
    uint32_t op, pid;
    uint64_t ino, ino2; /* the file (or source parent); the second parent */
    int64_t a, b, c;    /* offset, length, mode... per op */
    uint32_t len1, len2, dlen, pad;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int trace_fd = -1;
static volatile uint64_t *seqp;
static char roots[8][PATH_MAX];
static int nroots, ready;

#define REAL(ret, name, args) static ret(*real_##name) args
REAL(int, open, (const char *, int, ...));
REAL(int, open64, (const char *, int, ...));
REAL(int, openat, (int, const char *, int, ...));
REAL(int, openat64, (int, const char *, int, ...));
REAL(int, creat, (const char *, mode_t));
REAL(ssize_t, write, (int, const void *, size_t));
REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
REAL(ssize_t, pwrite64, (int, const void *, size_t, off_t));
REAL(ssize_t, writev, (int, const struct iovec *, int));
REAL(ssize_t, pwritev, (int, const struct iovec *, int, off_t));
REAL(ssize_t, pwritev64, (int, const struct iovec *, int, off_t));
REAL(int, fsync, (int));
REAL(int, fdatasync, (int));
REAL(int, sync_file_range, (int, off_t, off_t, unsigned));
REAL(int, fallocate, (int, int, off_t, off_t));
REAL(int, fallocate64, (int, int, off_t, off_t));
REAL(int, posix_fallocate, (int, off_t, off_t));
REAL(int, ftruncate, (int, off_t));
REAL(int, ftruncate64, (int, off_t));
REAL(int, truncate, (const char *, off_t));
REAL(int, mkdir, (const char *, mode_t));
REAL(int, mkdirat, (int, const char *, mode_t));
REAL(int, unlink, (const char *));
REAL(int, unlinkat, (int, const char *, int));
REAL(int, rmdir, (const char *));
REAL(int, rename, (const char *, const char *));
REAL(int, renameat, (int, const char *, int, const char *));
REAL(int, renameat2, (int, const char *, int, const char *, unsigned));
REAL(int, link, (const char *, const char *));
REAL(int, linkat, (int, const char *, int, const char *, int));
REAL(void, sync, (void));
REAL(int, syncfs, (int));
REAL(int, access, (const char *, int));

#define LOAD(name) real_##name = dlsym(RTLD_NEXT, #name)

/* trace.<host>.<pid>: processes of several nodes (pid namespaces) may share a pid */
static void trace_name(char *out, size_t n, const char *dir)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(out, n, "%s/trace.%s.%d", dir, host, (int) getpid());
}

__attribute__((constructor)) static void init(void)
{
    LOAD(open); LOAD(open64); LOAD(openat); LOAD(openat64); LOAD(creat); LOAD(write);
    LOAD(pwrite); LOAD(pwrite64); LOAD(writev); LOAD(pwritev); LOAD(pwritev64); LOAD(fsync);
    LOAD(fdatasync); LOAD(sync_file_range); LOAD(fallocate); LOAD(fallocate64);
    LOAD(posix_fallocate); LOAD(ftruncate); LOAD(ftruncate64); LOAD(truncate); LOAD(mkdir);
    LOAD(mkdirat); LOAD(unlink); LOAD(unlinkat); LOAD(rmdir); LOAD(rename); LOAD(renameat);
    LOAD(renameat2); LOAD(link); LOAD(linkat); LOAD(sync); LOAD(syncfs); LOAD(access);
    const char *dir = getenv("HCOMP_CRASH_TRACE"), *r = getenv("HCOMP_CRASH_ROOTS");
    if (!dir || !r)
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/seq", dir);
    int fd = real_open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    void *m = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return;
    seqp = m;
    trace_name(path, sizeof path, dir);
    trace_fd = real_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    for (const char *p = r; *p && nroots < 8;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t) (e - p) : strlen(p);
        if (n > 0 && n < PATH_MAX) {
            memcpy(roots[nroots], p, n);
            roots[nroots++][n] = 0;
        }
        p += n + (e != NULL);
    }
    ready = trace_fd >= 0;
}

/* a fork's child records into its own trace */
__attribute__((constructor)) static void at_fork_setup(void);
static void child_after_fork(void)
{
    if (!ready)
        return;
    char path[PATH_MAX];
    trace_name(path, sizeof path, getenv("HCOMP_CRASH_TRACE"));
    close(trace_fd);
    trace_fd = real_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pthread_mutex_init(&lock, NULL);
}
static void at_fork_setup(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static int under_roots(const char *abs)
{
    for (int i = 0; i < nroots; i++) {
        size_t n = strlen(roots[i]);
        if (strncmp(abs, roots[i], n) == 0 && (abs[n] == '/' || abs[n] == 0))
            return 1;
    }
    return 0;
}

static int fd_path(int fd, char *out)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, PATH_MAX - 1);
    if (n <= 0)
        return -1;
    out[n] = 0;
    return 0;
}

/* the absolute path of (dirfd, path) with its directory resolved (the last component
 * is kept as it is: it may not exist, or be a symlink we must not follow) */
static int abs_path(int dirfd, const char *path, char *out)
{
    char base[PATH_MAX], dir[PATH_MAX], full[2 * PATH_MAX];
    if (path[0] == '/')
        snprintf(full, sizeof full, "%s", path);
    else {
        if (dirfd == AT_FDCWD) {
            if (!getcwd(base, sizeof base))
                return -1;
        } else if (fd_path(dirfd, base) != 0)
            return -1;
        snprintf(full, sizeof full, "%s/%s", base, path);
    }
    size_t n = strlen(full);
    while (n > 1 && full[n - 1] == '/')
        full[--n] = 0;
    char *slash = strrchr(full, '/');
    if (!slash)
        return -1;
    *slash = 0;
    if (!realpath(full[0] ? full : "/", dir))
        return -1;
    int w = snprintf(out, PATH_MAX, "%s/%s", strcmp(dir, "/") ? dir : "", slash + 1);
    return w > 0 && w < PATH_MAX ? 0 : -1;
}

static uint64_t ino_of_path(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 ? (uint64_t) st.st_ino : 0;
}

static uint64_t parent_ino(const char *abs)
{
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", abs);
    char *s = strrchr(d, '/');
    if (s == d)
        s[1] = 0;
    else if (s)
        *s = 0;
    return ino_of_path(d);
}

static const char *base_of(const char *abs)
{
    const char *s = strrchr(abs, '/');
    return s ? s + 1 : abs;
}

static void emit(uint32_t op, uint64_t ino, uint64_t ino2, int64_t a, int64_t b, int64_t c,
                 const char *p1, const char *p2, const struct iovec *iov, int iovcnt,
                 size_t dlen)
{
    struct rec r = {0};
    r.op = op;
    r.pid = (uint32_t) getpid();
    r.ino = ino;
    r.ino2 = ino2;
    r.a = a;
    r.b = b;
    r.c = c;
    r.len1 = p1 ? (uint32_t) strlen(p1) : 0;
    r.len2 = p2 ? (uint32_t) strlen(p2) : 0;
    r.dlen = (uint32_t) dlen;
    struct iovec v[3 + 64];
    int nv = 0;
    v[nv++] = (struct iovec){&r, sizeof r};
    if (r.len1)
        v[nv++] = (struct iovec){(void *) p1, r.len1};
    if (r.len2)
        v[nv++] = (struct iovec){(void *) p2, r.len2};
    size_t left = dlen;
    for (int i = 0; i < iovcnt && left > 0 && nv < 3 + 64; i++) {
        size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
        v[nv++] = (struct iovec){iov[i].iov_base, n};
        left -= n;
    }
    pthread_mutex_lock(&lock);
    r.seq = __atomic_add_fetch(seqp, 1, __ATOMIC_SEQ_CST);
    /* one writev per record (O_APPEND), so a kill cannot split a record from its data */
    real_writev(trace_fd, v, nv);
    pthread_mutex_unlock(&lock);
}

/* the inode of fd if it is under a root, else 0 */
static uint64_t fd_ino(int fd, int *is_dir)
{
    char p[PATH_MAX];
    if (!ready || fd_path(fd, p) != 0 || !under_roots(p))
        return 0;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    if (is_dir)
        *is_dir = S_ISDIR(st.st_mode);
    return (uint64_t) st.st_ino;
}

static int do_open(int dirfd, const char *path, int flags, mode_t mode,
                   int (*op)(int, const char *, int, ...))
{
    char abs[PATH_MAX];
    int track = ready && abs_path(dirfd, path, abs) == 0 && under_roots(abs);
    int existed = track ? ino_of_path(abs) != 0 : 0;
    int fd = op(dirfd, path, flags, mode);
    if (fd >= 0 && track) {
        struct stat st;
        if (fstat(fd, &st) == 0) {
            if (!existed && (flags & O_CREAT))
                emit(OP_CREATE, (uint64_t) st.st_ino, parent_ino(abs), 0, 0, 0, base_of(abs),
                     NULL, NULL, 0, 0);
            else if ((flags & O_TRUNC) && S_ISREG(st.st_mode) && (flags & O_ACCMODE) != O_RDONLY)
                emit(OP_TRUNC, (uint64_t) st.st_ino, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0);
        }
    }
    return fd;
}

static int open_at_real(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = va_arg(ap, mode_t);
    va_end(ap);
    return real_openat(dirfd, path, flags, mode);
}

#define MODE_ARG                                                                           \
    mode_t mode = 0;                                                                       \
    if (flags & (O_CREAT | __O_TMPFILE)) {                                                 \
        va_list ap;                                                                        \
        va_start(ap, flags);                                                               \
        mode = va_arg(ap, mode_t);                                                         \
        va_end(ap);                                                                        \
    }

int open(const char *path, int flags, ...)
{
    MODE_ARG
    return do_open(AT_FDCWD, path, flags, mode, open_at_real);
}
int open64(const char *path, int flags, ...)
{
    MODE_ARG
    return do_open(AT_FDCWD, path, flags, mode, open_at_real);
}
int openat(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG
    return do_open(dirfd, path, flags, mode, open_at_real);
}
int openat64(int dirfd, const char *path, int flags, ...)
{
    MODE_ARG
    return do_open(dirfd, path, flags, mode, open_at_real);
}
int __open_2(const char *path, int flags) { return do_open(AT_FDCWD, path, flags, 0, open_at_real); }
int __open64_2(const char *path, int flags) { return do_open(AT_FDCWD, path, flags, 0, open_at_real); }
int __openat_2(int d, const char *path, int flags) { return do_open(d, path, flags, 0, open_at_real); }
int __openat64_2(int d, const char *path, int flags) { return do_open(d, path, flags, 0, open_at_real); }
int creat(const char *path, mode_t mode)
{
    return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, open_at_real);
}

static void rec_write(int fd, off_t off, const struct iovec *iov, int iovcnt, ssize_t n)
{
    if (n <= 0)
        return;
    uint64_t ino = fd_ino(fd, NULL);
    if (!ino)
        return;
    if (off < 0) /* write(2): where it went is where the offset is now, less what it wrote */
        off = lseek(fd, 0, SEEK_CUR) - n;
    emit(OP_WRITE, ino, 0, off, n, 0, NULL, NULL, iov, iovcnt, (size_t) n);
}

ssize_t write(int fd, const void *buf, size_t len)
{
    ssize_t n = real_write(fd, buf, len);
    struct iovec v = {(void *) buf, len};
    rec_write(fd, -1, &v, 1, n);
    return n;
}
ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    ssize_t n = real_pwrite(fd, buf, len, off);
    struct iovec v = {(void *) buf, len};
    rec_write(fd, off, &v, 1, n);
    return n;
}
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
    ssize_t n = real_pwrite64(fd, buf, len, off);
    struct iovec v = {(void *) buf, len};
    rec_write(fd, off, &v, 1, n);
    return n;
}
ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    ssize_t n = real_writev(fd, iov, cnt);
    rec_write(fd, -1, iov, cnt, n);
    return n;
}
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    ssize_t n = real_pwritev(fd, iov, cnt, off);
    rec_write(fd, off, iov, cnt, n);
    return n;
}
ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    ssize_t n = real_pwritev64(fd, iov, cnt, off);
    rec_write(fd, off, iov, cnt, n);
    return n;
}

static int rec_sync(int fd, int rc, uint32_t op)
{
    uint64_t ino;
    if (rc == 0 && (ino = fd_ino(fd, NULL)) != 0)
        emit(op, ino, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0);
    return rc;
}
int fsync(int fd) { return rec_sync(fd, real_fsync(fd), OP_FSYNC); }
int fdatasync(int fd) { return rec_sync(fd, real_fdatasync(fd), OP_FDATASYNC); }
int sync_file_range(int fd, off_t off, off_t n, unsigned flags)
{
    return rec_sync(fd, real_sync_file_range(fd, off, n, flags), OP_SYNCRANGE);
}
void sync(void)
{
    real_sync();
    if (ready)
        emit(OP_SYNCALL, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0);
}
int syncfs(int fd)
{
    int rc = real_syncfs(fd);
    if (rc == 0 && ready)
        emit(OP_SYNCALL, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0);
    return rc;
}

static int rec_falloc(int fd, int mode, off_t off, off_t len, int rc)
{
    uint64_t ino;
    if (rc == 0 && (ino = fd_ino(fd, NULL)) != 0)
        emit(OP_FALLOC, ino, 0, off, len, mode, NULL, NULL, NULL, 0, 0);
    return rc;
}
int fallocate(int fd, int mode, off_t off, off_t len)
{
    return rec_falloc(fd, mode, off, len, real_fallocate(fd, mode, off, len));
}
int fallocate64(int fd, int mode, off_t off, off_t len)
{
    return rec_falloc(fd, mode, off, len, real_fallocate64(fd, mode, off, len));
}
int posix_fallocate(int fd, off_t off, off_t len)
{
    int rc = real_posix_fallocate(fd, off, len);
    rec_falloc(fd, 0, off, len, rc);
    return rc;
}

static int rec_trunc(uint64_t ino, off_t len, int rc)
{
    if (rc == 0 && ino)
        emit(OP_TRUNC, ino, 0, len, 0, 0, NULL, NULL, NULL, 0, 0);
    return rc;
}
int ftruncate(int fd, off_t len) { return rec_trunc(fd_ino(fd, NULL), len, real_ftruncate(fd, len)); }
int ftruncate64(int fd, off_t len) { return rec_trunc(fd_ino(fd, NULL), len, real_ftruncate64(fd, len)); }
int truncate(const char *path, off_t len)
{
    char abs[PATH_MAX];
    uint64_t ino = ready && abs_path(AT_FDCWD, path, abs) == 0 && under_roots(abs) ? ino_of_path(abs) : 0;
    return rec_trunc(ino, len, real_truncate(path, len));
}

static int do_mkdir(int dirfd, const char *path, mode_t mode)
{
    char abs[PATH_MAX];
    int track = ready && abs_path(dirfd, path, abs) == 0 && under_roots(abs);
    int rc = real_mkdirat(dirfd, path, mode);
    if (rc == 0 && track)
        emit(OP_MKDIR, ino_of_path(abs), parent_ino(abs), 0, 0, 0, base_of(abs), NULL, NULL, 0, 0);
    return rc;
}
int mkdir(const char *path, mode_t mode) { return do_mkdir(AT_FDCWD, path, mode); }
int mkdirat(int dirfd, const char *path, mode_t mode) { return do_mkdir(dirfd, path, mode); }

static int do_unlink(int dirfd, const char *path, int flags)
{
    char abs[PATH_MAX];
    int track = ready && abs_path(dirfd, path, abs) == 0 && under_roots(abs);
    uint64_t ino = track ? ino_of_path(abs) : 0, parent = track ? parent_ino(abs) : 0;
    int rc = real_unlinkat(dirfd, path, flags);
    if (rc == 0 && track)
        emit((flags & AT_REMOVEDIR) ? OP_RMDIR : OP_UNLINK, ino, parent, 0, 0, 0, base_of(abs),
             NULL, NULL, 0, 0);
    return rc;
}
int unlink(const char *path) { return do_unlink(AT_FDCWD, path, 0); }
int unlinkat(int dirfd, const char *path, int flags) { return do_unlink(dirfd, path, flags); }
int rmdir(const char *path) { return do_unlink(AT_FDCWD, path, AT_REMOVEDIR); }

static int do_rename(int d1, const char *p1, int d2, const char *p2, unsigned flags)
{
    char a1[PATH_MAX], a2[PATH_MAX];
    int t1 = ready && abs_path(d1, p1, a1) == 0 && under_roots(a1);
    int t2 = ready && abs_path(d2, p2, a2) == 0 && under_roots(a2);
    uint64_t ino = t1 ? ino_of_path(a1) : 0, sp = t1 ? parent_ino(a1) : 0;
    int rc = real_renameat2(d1, p1, d2, p2, flags);
    if (rc == 0 && (t1 || t2)) {
        uint64_t dp = t2 ? parent_ino(a2) : 0;
        if (!ino && t2)
            ino = ino_of_path(a2);
        emit(OP_RENAME, ino, sp, (int64_t) dp, 0, 0, t1 ? base_of(a1) : "",
             t2 ? base_of(a2) : "", NULL, 0, 0);
    }
    return rc;
}
int rename(const char *a, const char *b) { return do_rename(AT_FDCWD, a, AT_FDCWD, b, 0); }
int renameat(int d1, const char *a, int d2, const char *b) { return do_rename(d1, a, d2, b, 0); }
int renameat2(int d1, const char *a, int d2, const char *b, unsigned f)
{
    return do_rename(d1, a, d2, b, f);
}

static int do_link(int d1, const char *p1, int d2, const char *p2, int flags)
{
    char a2[PATH_MAX];
    int track = ready && abs_path(d2, p2, a2) == 0 && under_roots(a2);
    int rc = real_linkat(d1, p1, d2, p2, flags);
    if (rc == 0 && track)
        emit(OP_LINK, ino_of_path(a2), parent_ino(a2), 0, 0, 0, base_of(a2), NULL, NULL, 0, 0);
    return rc;
}
int link(const char *a, const char *b) { return do_link(AT_FDCWD, a, AT_FDCWD, b, 0); }
int linkat(int d1, const char *a, int d2, const char *b, int f) { return do_link(d1, a, d2, b, f); }

int access(const char *path, int mode)
{
    static const char mark[] = "/HCOMP_CRASH_MARK/";
    if (strncmp(path, mark, sizeof mark - 1) == 0) {
        if (ready)
            emit(OP_MARK, 0, 0, 0, 0, 0, path + sizeof mark - 1, NULL, NULL, 0, 0);
        return 0;
    }
    return real_access(path, mode);
}
