/* What else a program does with a descriptor: close and dup keep the table right
 * (dup'ed descriptors share one offset, as POSIX says); fcntl reports a read-only
 * descriptor; flock and fcntl locks succeed (nothing can write the file through the
 * adapter, and libhcomp holds its own openers' lock while the file is open); mmap,
 * sendfile, splice and copy_file_range fail with a clear error so that programs fall
 * back to read, never to the mapping file's bytes. */
#include "adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

int hp_close(int fd)
{
    hp_real_init();
    /* forgotten first: once closed, the number may be reused at once by another thread
     * (Linux frees it even when close reports an error) */
    hp_forget(fd);
    return hp_real.close(fd);
}

HP_EXPORT int close(int fd)
{
    return hp_close(fd);
}

HP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    hp_real_init();
    if (hp_real.close_range == NULL) {
        errno = ENOSYS;
        return -1;
    }
    int r = hp_real.close_range(first, last, flags);
    if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
        for (unsigned fd = first; fd <= last && fd < (1u << 20); fd++)
            hp_forget((int) fd);
    return r;
}

HP_EXPORT void closefrom(int lowfd)
{
    hp_real_init();
    if (hp_real.closefrom)
        hp_real.closefrom(lowfd);
    for (int fd = lowfd < 0 ? 0 : lowfd; fd < (1 << 20); fd++)
        if (hp_is_ours(fd))
            hp_forget(fd);
}

HP_EXPORT int dup(int fd)
{
    hp_real_init();
    int n = hp_real.dup(fd);
    if (n >= 0)
        hp_dup_entry(fd, n);
    return n;
}

HP_EXPORT int dup2(int fd, int to)
{
    hp_real_init();
    int n = hp_real.dup2(fd, to);
    if (n >= 0 && fd != to)
        hp_dup_entry(fd, n);
    return n;
}

HP_EXPORT int dup3(int fd, int to, int flags)
{
    hp_real_init();
    int n = hp_real.dup3(fd, to, flags);
    if (n >= 0)
        hp_dup_entry(fd, n);
    return n;
}

static int lock_cmd(int cmd)
{
    return cmd == F_GETLK || cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_GETLK ||
           cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
}

static int fcntl_ours(struct hp_open *o, int fd, int cmd, void *arg)
{
    switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC: {
        int n = hp_real.fcntl(fd, cmd, arg);
        if (n >= 0)
            hp_dup_entry(fd, n);
        return n;
    }
    case F_GETFL:
        return o->status_flags;
    case F_SETFL:   /* O_NONBLOCK and the like: a regular file's reads never block */
        o->status_flags = (o->status_flags & O_ACCMODE) | O_LARGEFILE |
                          ((int) (intptr_t) arg & (O_NONBLOCK | O_NOATIME | O_DIRECT | O_APPEND));
        return 0;
    default:
        if (lock_cmd(cmd)) {
            if ((cmd == F_GETLK || cmd == F_OFD_GETLK) && arg)
                ((struct flock *) arg)->l_type = F_UNLCK;
            return 0;
        }
        return hp_real.fcntl(fd, cmd, arg);
    }
}

static int fcntl_any(int fd, int cmd, void *arg)
{
    hp_real_init();
    struct hp_open *o = hp_get(fd);
    if (o == NULL) {
        int n = hp_real.fcntl(fd, cmd, arg);
        /* a duplicate of a plain descriptor may take a number left by one of ours */
        if (n >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
            hp_forget(n);
        return n;
    }
    int r = fcntl_ours(o, fd, cmd, arg);
    hp_put(o);
    return r;
}

HP_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_any(fd, cmd, arg);
}

HP_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_any(fd, cmd, arg);
}

HP_EXPORT int flock(int fd, int op)
{
    hp_real_init();
    if (hp_is_ours(fd))
        return 0;
    return hp_real.flock(fd, op);
}

static void *mmap_any(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    hp_real_init();
    if (!(flags & MAP_ANONYMOUS)) {
        struct hp_open *o = hp_get(fd);
        if (o) {
            hp_say("%s: mmap of an hcomp file is not supported (its bytes are compressed "
                   "pieces); read it with read or pread", o->path);
            hp_put(o);
            errno = ENODEV;
            return MAP_FAILED;
        }
    }
    return hp_real.mmap(addr, len, prot, flags, fd, off);
}

HP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap_any(addr, len, prot, flags, fd, off);
}

HP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap_any(addr, len, prot, flags, fd, off);
}

/* In-kernel copies cannot decompress: the error makes callers (cp, Python's shutil)
 * fall back to read and write. */
HP_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
    hp_real_init();
    if (hp_is_ours(in) || hp_is_ours(out) || hp_real.sendfile == NULL) {
        errno = EINVAL;
        return -1;
    }
    return hp_real.sendfile(out, in, off, count);
}

HP_EXPORT ssize_t sendfile64(int out, int in, off_t *off, size_t count)
{
    return sendfile(out, in, off, count);
}

HP_EXPORT ssize_t copy_file_range(int in, off_t *inoff, int out, off_t *outoff, size_t len,
                                  unsigned flags)
{
    hp_real_init();
    if (hp_is_ours(in) || hp_is_ours(out) || hp_real.copy_file_range == NULL) {
        errno = EXDEV;
        return -1;
    }
    return hp_real.copy_file_range(in, inoff, out, outoff, len, flags);
}

HP_EXPORT ssize_t splice(int in, off_t *inoff, int out, off_t *outoff, size_t len, unsigned flags)
{
    hp_real_init();
    if (hp_is_ours(in) || hp_is_ours(out) || hp_real.splice == NULL) {
        errno = EINVAL;
        return -1;
    }
    return hp_real.splice(in, inoff, out, outoff, len, flags);
}
