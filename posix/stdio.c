/* fopen, fdopen and freopen: the C library opens files for its streams without going
 * through open(), so without these a FILE* would read the mapping file's bytes. An hcomp
 * file opened for reading becomes a stream over the adapter's descriptor (fopencookie;
 * fileno() of it is -1); one opened for writing fails with EROFS, as open does. */
#include "adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static ssize_t cookie_read(void *c, char *buf, size_t len)
{
    struct hp_open *o = hp_get((int) (intptr_t) c);
    if (o == NULL) {
        errno = EBADF;
        return -1;
    }
    ssize_t n = hp_read(o, buf, len);
    hp_put(o);
    return n;
}

static int cookie_seek(void *c, off64_t *pos, int whence)
{
    struct hp_open *o = hp_get((int) (intptr_t) c);
    if (o == NULL) {
        errno = EBADF;
        return -1;
    }
    off_t r = hp_lseek(o, (off_t) *pos, whence);
    hp_put(o);
    if (r < 0)
        return -1;
    *pos = r;
    return 0;
}

static int cookie_close(void *c)
{
    return hp_close((int) (intptr_t) c);
}

static FILE *stream_of(int fd, const char *mode)
{
    cookie_io_functions_t io = {cookie_read, NULL, cookie_seek, cookie_close};
    FILE *fp = fopencookie((void *) (intptr_t) fd, mode, io);
    if (fp == NULL) {
        int e = errno;
        hp_close(fd);
        errno = e;
    }
    return fp;
}

static int mode_writes(const char *mode)
{
    return mode && strpbrk(mode, "wa+") != NULL;
}

static FILE *fopen_any(const char *path, const char *mode, const void *caller)
{
    hp_real_init();
    if (path == NULL || mode == NULL || hp_from_self(caller))
        return hp_real.fopen(path, mode);
    if (mode_writes(mode)) {
        if (hp_path_is_hcomp(AT_FDCWD, path, 0) && !hp_from_hcomp(caller)) {
            hp_say("%s: is an hcomp file, which this adapter opens only for reading (write it "
                   "through MPI-IO with an \"hcomp:\" name, or with `hcomp import`)", path);
            errno = EROFS;
            return NULL;
        }
        return hp_real.fopen(path, mode);
    }
    FILE *fp = hp_real.fopen(path, mode);
    if (fp == NULL || !hp_fd_is_hcomp(fileno(fp)) || hp_from_hcomp(caller))
        return fp;
    fclose(fp);
    int fd = hp_openat(AT_FDCWD, path, O_RDONLY | (strchr(mode, 'e') ? O_CLOEXEC : 0), 0, caller);
    if (fd < 0)
        return NULL;
    if (!hp_is_ours(fd))        /* replaced by a plain file in between */
        return hp_real.fdopen(fd, mode);
    return stream_of(fd, mode);
}

HP_EXPORT FILE *fopen(const char *path, const char *mode)
{
    return fopen_any(path, mode, HP_CALLER);
}

HP_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    return fopen_any(path, mode, HP_CALLER);
}

HP_EXPORT FILE *fdopen(int fd, const char *mode)
{
    hp_real_init();
    if (!hp_is_ours(fd))
        return hp_real.fdopen(fd, mode);
    if (mode_writes(mode)) {
        errno = EINVAL;     /* the descriptor is read-only */
        return NULL;
    }
    return stream_of(fd, mode);
}

static FILE *freopen_any(const char *path, const char *mode, FILE *stream, const void *caller)
{
    hp_real_init();
    if (path && !hp_from_self(caller) && hp_path_is_hcomp(AT_FDCWD, path, 0) &&
        !hp_from_hcomp(caller)) {
        /* a stream cannot become a cookie stream in place */
        hp_say("%s: is an hcomp file; freopen of one is not supported (use fopen)", path);
        fclose(stream);
        errno = ENOTSUP;
        return NULL;
    }
    return hp_real.freopen(path, mode, stream);
}

HP_EXPORT FILE *freopen(const char *path, const char *mode, FILE *stream)
{
    return freopen_any(path, mode, stream, HP_CALLER);
}

HP_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *stream)
{
    return freopen_any(path, mode, stream, HP_CALLER);
}
