/* stat and its relatives report an hcomp file's logical size (st_size, and st_blocks
 * as a plain file of that size would have them: programs that see fewer blocks than
 * bytes take a file for sparse and look for holes). Only regular, non-empty files are
 * looked at; of those, the first 64 bytes tell an hcomp file. An hcomp file's size
 * comes from a read-only open of it, cached by its mapping file's inode, size and
 * times (every write appends to the mapping file, so a write changes the key).
 *
 * Programs built against glibc before 2.33 call __xstat64 and friends; later ones
 * call stat64, fstatat64, statx: both sets are here. */
#include "adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "struct stat64 is struct stat here");

/* ---- logical sizes, cached ------------------------------------------------ */
#define CACHE_SLOTS 32
static struct cached_size {
    dev_t dev;
    ino_t ino;
    off_t map_size;
    struct timespec mtime, ctime;
    uint64_t size;
    int used;
} cache[CACHE_SLOTS];
static unsigned cache_next;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int same(const struct cached_size *c, const struct stat *st)
{
    return c->used && c->dev == st->st_dev && c->ino == st->st_ino && c->map_size == st->st_size &&
           c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
           c->ctime.tv_sec == st->st_ctim.tv_sec && c->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

int hp_logical_size(int probe_fd, uint64_t *size)
{
    struct stat st;
    if (hp_real.fstat(probe_fd, &st) != 0)
        return -1;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (same(&cache[i], &st)) {
            *size = cache[i].size;
            pthread_mutex_unlock(&cache_lock);
            return 0;
        }
    pthread_mutex_unlock(&cache_lock);

    char link[64], path[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", probe_fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0 || (size_t) n >= sizeof(path) - 1) {
        hp_say("an hcomp file's name cannot be found in /proc/self/fd: its size is unknown");
        errno = EIO;
        return -1;
    }
    path[n] = '\0';
    hcomp_file *f;
    if (hp_open_file(path, &f) != 0)
        return -1;
    hcomp_error err;
    hp_lib_enter();
    int rc = hcomp_file_size(f, size, &err);
    hcomp_file_close(f, NULL);
    hp_lib_leave();
    if (rc != HCOMP_OK)
        hp_say("%s", err.msg);
    if (rc != HCOMP_OK) {
        errno = hp_errno_of(rc);
        return -1;
    }
    pthread_mutex_lock(&cache_lock);
    struct cached_size *c = &cache[cache_next++ % CACHE_SLOTS];
    *c = (struct cached_size){st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim, *size, 1};
    pthread_mutex_unlock(&cache_lock);
    return 0;
}

/* 1 with *size if dirfd/path (a regular file of the given mode and size) is an hcomp
 * file, 0 if not, -1 if it is one whose size cannot be had (errno set, said). */
static int size_of_path(int dirfd, const char *path, int nofollow, mode_t mode, uint64_t len,
                        const void *caller, uint64_t *size)
{
    if (!S_ISREG(mode) || len == 0 || hp_from_self(caller))
        return 0;
    int probe = hp_real.openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
                               (nofollow ? O_NOFOLLOW : 0));
    if (probe < 0)
        return 0;       /* unreadable: nothing the program could read through it either */
    int r = 0;
    if (hp_fd_is_hcomp(probe) && !hp_from_hcomp(caller))
        r = hp_logical_size(probe, size) == 0 ? 1 : -1;
    int e = errno;
    hp_real.close(probe);
    errno = e;
    return r;
}

/* the same for a descriptor: only the adapter's own are hcomp files */
static int size_of_fd(int fd, uint64_t *size)
{
    struct hp_open *o = hp_get(fd);
    if (o == NULL)
        return 0;
    int r = -1;
    hcomp_file *f = hp_file(o);
    hcomp_error err;
    hp_lib_enter();
    int rc = f ? hcomp_file_size(f, size, &err) : HCOMP_E_IO;
    hp_lib_leave();
    if (rc == HCOMP_OK)
        r = 1;
    else if (f) {
        hp_say("%s", err.msg);
        errno = hp_errno_of(err.code);
    }
    hp_put(o);
    return r;
}

static int set_size(struct stat *st, int r, uint64_t size)
{
    if (r < 0)
        return -1;
    if (r > 0) {
        st->st_size = (off_t) size;
        st->st_blocks = (blkcnt_t) ((size + 511) / 512);
    }
    return 0;
}

static int do_fstat(int fd, struct stat *st)
{
    hp_real_init();
    if (hp_real.fstat(fd, st) != 0)
        return -1;
    uint64_t size = 0;
    int r = size_of_fd(fd, &size);
    return set_size(st, r, size);
}

static int do_fstatat(int dirfd, const char *path, struct stat *st, int flags, const void *caller)
{
    hp_real_init();
    if (path && path[0] == '\0' && (flags & AT_EMPTY_PATH))
        return do_fstat(dirfd, st);
    if (hp_real.fstatat(dirfd, path, st, flags) != 0)
        return -1;
    uint64_t size = 0;
    int r = size_of_path(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, st->st_mode,
                         (uint64_t) st->st_size, caller, &size);
    return set_size(st, r, size);
}

HP_EXPORT int stat(const char *path, struct stat *st)
{
    return do_fstatat(AT_FDCWD, path, st, 0, HP_CALLER);
}

HP_EXPORT int stat64(const char *path, struct stat64 *st)
{
    return do_fstatat(AT_FDCWD, path, (struct stat *) st, 0, HP_CALLER);
}

HP_EXPORT int lstat(const char *path, struct stat *st)
{
    return do_fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW, HP_CALLER);
}

HP_EXPORT int lstat64(const char *path, struct stat64 *st)
{
    return do_fstatat(AT_FDCWD, path, (struct stat *) st, AT_SYMLINK_NOFOLLOW, HP_CALLER);
}

HP_EXPORT int fstat(int fd, struct stat *st)
{
    return do_fstat(fd, st);
}

HP_EXPORT int fstat64(int fd, struct stat64 *st)
{
    return do_fstat(fd, (struct stat *) st);
}

HP_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    return do_fstatat(dirfd, path, st, flags, HP_CALLER);
}

HP_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    return do_fstatat(dirfd, path, (struct stat *) st, flags, HP_CALLER);
}

/* glibc before 2.33: the version argument is _STAT_VER, whose struct is struct stat
 * on 64-bit Linux */
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);

HP_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
    (void) ver;
    return do_fstatat(AT_FDCWD, path, st, 0, HP_CALLER);
}

HP_EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
    (void) ver;
    return do_fstatat(AT_FDCWD, path, (struct stat *) st, 0, HP_CALLER);
}

HP_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
    (void) ver;
    return do_fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW, HP_CALLER);
}

HP_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
    (void) ver;
    return do_fstatat(AT_FDCWD, path, (struct stat *) st, AT_SYMLINK_NOFOLLOW, HP_CALLER);
}

HP_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
    (void) ver;
    return do_fstat(fd, st);
}

HP_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
    (void) ver;
    return do_fstat(fd, (struct stat *) st);
}

HP_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
    (void) ver;
    return do_fstatat(dirfd, path, st, flags, HP_CALLER);
}

HP_EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
    (void) ver;
    return do_fstatat(dirfd, path, (struct stat *) st, flags, HP_CALLER);
}

HP_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
    hp_real_init();
    if (hp_real.statx == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (hp_real.statx(dirfd, path, flags, mask, sx) != 0)
        return -1;
    uint64_t size = 0;
    int r;      /* path is not NULL: statx would have failed with EFAULT */
    if (path[0] == '\0' && (flags & AT_EMPTY_PATH))
        r = size_of_fd(dirfd, &size);
    else
        r = size_of_path(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, sx->stx_mode, sx->stx_size,
                         HP_CALLER, &size);
    if (r < 0)
        return -1;
    if (r > 0) {
        sx->stx_size = size;
        sx->stx_blocks = (size + 511) / 512;
    }
    return 0;
}
