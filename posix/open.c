/* open, openat, creat and their 64-bit and fortified forms.
 *
 * An open for reading of an hcomp file becomes one of the adapter's descriptors; an
 * open that could write one (write access, O_TRUNC) fails with EROFS before anything
 * touches the file, since writing the mapping file's bytes would destroy it: hcomp
 * files are written through MPI-IO ("hcomp:" names) or `hcomp import`. Every other
 * open is the C library's, plus a look at the first bytes of regular files opened for
 * reading. */
#include "adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

int hp_openat(int dirfd, const char *path, int flags, mode_t mode, const void *caller)
{
    hp_real_init();
    if (path == NULL || (flags & O_PATH) || hp_from_self(caller))
        return hp_real.openat(dirfd, path, flags, mode);
    int writes = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
    if (writes) {
        /* a new file (O_CREAT|O_EXCL) cannot be an hcomp file */
        if (!((flags & O_CREAT) && (flags & O_EXCL)) &&
            hp_path_is_hcomp(dirfd, path, flags & O_NOFOLLOW) && !hp_from_hcomp(caller)) {
            hp_say("%s: is an hcomp file, which this adapter opens only for reading (write it "
                   "through MPI-IO with an \"hcomp:\" name, or with `hcomp import`)", path);
            errno = EROFS;
            return -1;
        }
        int fd = hp_real.openat(dirfd, path, flags, mode);
        hp_forget(fd);
        return fd;
    }
    int fd = hp_real.openat(dirfd, path, flags, mode);
    if (fd < 0)
        return fd;
    hp_forget(fd);      /* a descriptor closed behind the adapter's back */
    if (!hp_fd_is_hcomp(fd) || hp_from_hcomp(caller))
        return fd;
    return hp_adopt(fd, flags);
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t) va_arg(ap, int) : 0;
}

HP_EXPORT int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return hp_openat(AT_FDCWD, path, flags, mode, HP_CALLER);
}

HP_EXPORT int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return hp_openat(AT_FDCWD, path, flags, mode, HP_CALLER);
}

HP_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return hp_openat(dirfd, path, flags, mode, HP_CALLER);
}

HP_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return hp_openat(dirfd, path, flags, mode, HP_CALLER);
}

/* what _FORTIFY_SOURCE builds call for open without a mode */
HP_EXPORT int __open_2(const char *path, int flags)
{
    return hp_openat(AT_FDCWD, path, flags, 0, HP_CALLER);
}

HP_EXPORT int __open64_2(const char *path, int flags)
{
    return hp_openat(AT_FDCWD, path, flags, 0, HP_CALLER);
}

HP_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    return hp_openat(dirfd, path, flags, 0, HP_CALLER);
}

HP_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    return hp_openat(dirfd, path, flags, 0, HP_CALLER);
}

HP_EXPORT int creat(const char *path, mode_t mode)
{
    return hp_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, HP_CALLER);
}

HP_EXPORT int creat64(const char *path, mode_t mode)
{
    return hp_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, HP_CALLER);
}
