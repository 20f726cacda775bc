/* read, pread, readv, preadv(2) and lseek on the adapter's descriptors: libhcomp's
 * read path (only the blocks a read touches are fetched and decoded, on its worker
 * pool). A damaged piece fails the read with EIO and a message naming the range;
 * it never returns other bytes. Other descriptors go to the C library at the cost of
 * one load. */
#include "adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* Linux's own cap on one read */
#define MAX_IO 0x7ffff000u

ssize_t hp_pread(struct hp_open *o, void *buf, size_t len, uint64_t off)
{
    if (off > (uint64_t) INT64_MAX) {
        errno = EINVAL;
        return -1;
    }
    hcomp_file *f = hp_file(o);
    if (f == NULL)
        return -1;
    if (len > MAX_IO)
        len = MAX_IO;
    uint64_t got = 0;
    hcomp_error err;
    hp_lib_enter();
    int rc = hcomp_file_pread(f, buf, len, off, &got, &err);
    hp_lib_leave();
    if (rc != HCOMP_OK) {
        hp_say("%s", err.msg);
        errno = hp_errno_of(err.code);
        return -1;
    }
    return (ssize_t) got;
}

ssize_t hp_read(struct hp_open *o, void *buf, size_t len)
{
    pthread_mutex_lock(&o->lock);
    ssize_t n = hp_pread(o, buf, len, o->offset);
    if (n > 0)
        o->offset += (uint64_t) n;
    pthread_mutex_unlock(&o->lock);
    return n;
}

static ssize_t preadv_at(struct hp_open *o, const struct iovec *iov, int cnt, uint64_t off)
{
    if (cnt < 0 || cnt > IOV_MAX) {
        errno = EINVAL;
        return -1;
    }
    ssize_t total = 0;
    for (int i = 0; i < cnt; i++) {
        if (iov[i].iov_len == 0)
            continue;
        ssize_t n = hp_pread(o, iov[i].iov_base, iov[i].iov_len, off + (uint64_t) total);
        if (n < 0)
            return total > 0 ? total : -1;
        total += n;
        if ((size_t) n < iov[i].iov_len)
            break;      /* end of file */
    }
    return total;
}

/* readv at the file offset, which moves on */
static ssize_t readv_here(struct hp_open *o, const struct iovec *iov, int cnt)
{
    pthread_mutex_lock(&o->lock);
    ssize_t n = preadv_at(o, iov, cnt, o->offset);
    if (n > 0)
        o->offset += (uint64_t) n;
    pthread_mutex_unlock(&o->lock);
    return n;
}

off_t hp_lseek(struct hp_open *o, off_t off, int whence)
{
    hcomp_file *f = hp_file(o);
    if (f == NULL)
        return -1;
    pthread_mutex_lock(&o->lock);
    uint64_t size = 0;
    hcomp_error err;
    int64_t base = 0;
    if (whence == SEEK_CUR)
        base = (int64_t) o->offset;
    else if (whence == SEEK_END || whence == SEEK_DATA || whence == SEEK_HOLE) {
        hp_lib_enter();
        int rc = hcomp_file_size(f, &size, &err);
        hp_lib_leave();
        if (rc != HCOMP_OK) {
            pthread_mutex_unlock(&o->lock);
            hp_say("%s", err.msg);
            errno = hp_errno_of(err.code);
            return -1;
        }
        base = whence == SEEK_END ? (int64_t) size : 0;
    } else if (whence != SEEK_SET) {
        pthread_mutex_unlock(&o->lock);
        errno = EINVAL;
        return -1;
    }
    int64_t to;
    if (__builtin_add_overflow(base, (int64_t) off, &to) || to < 0) {
        pthread_mutex_unlock(&o->lock);
        errno = EINVAL;
        return -1;
    }
    /* the whole file counts as data (holes read as zeros like any data) */
    if ((whence == SEEK_DATA || whence == SEEK_HOLE) && (uint64_t) to >= size) {
        pthread_mutex_unlock(&o->lock);
        errno = ENXIO;
        return -1;
    }
    if (whence == SEEK_HOLE)
        to = (int64_t) size;
    o->offset = (uint64_t) to;
    pthread_mutex_unlock(&o->lock);
    return (off_t) to;
}

HP_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
    struct hp_open *o = hp_get(fd);
    if (o == NULL) {
        hp_real_init();
        return hp_real.read(fd, buf, len);
    }
    ssize_t n = hp_read(o, buf, len);
    hp_put(o);
    return n;
}

HP_EXPORT ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
    struct hp_open *o = hp_get(fd);
    if (o == NULL) {
        hp_real_init();
        return hp_real.pread(fd, buf, len, off);
    }
    ssize_t n = off < 0 ? (errno = EINVAL, -1) : hp_pread(o, buf, len, (uint64_t) off);
    hp_put(o);
    return n;
}

HP_EXPORT ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
    return pread(fd, buf, len, off);
}

HP_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    struct hp_open *o = hp_get(fd);
    if (o == NULL) {
        hp_real_init();
        return hp_real.readv(fd, iov, cnt);
    }
    ssize_t n = readv_here(o, iov, cnt);
    hp_put(o);
    return n;
}

HP_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    struct hp_open *o = hp_get(fd);
    if (o == NULL) {
        hp_real_init();
        return hp_real.preadv(fd, iov, cnt, off);
    }
    ssize_t n = off < 0 ? (errno = EINVAL, -1) : preadv_at(o, iov, cnt, (uint64_t) off);
    hp_put(o);
    return n;
}

HP_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return preadv(fd, iov, cnt, off);
}

HP_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    struct hp_open *o = hp_get(fd);
    if (o == NULL) {
        hp_real_init();
        if (hp_real.preadv2 == NULL) {
            errno = ENOSYS;
            return -1;
        }
        return hp_real.preadv2(fd, iov, cnt, off, flags);
    }
    /* off -1: the file offset, as readv */
    ssize_t n = off == -1 ? readv_here(o, iov, cnt)
              : off < 0 ? (errno = EINVAL, -1) : preadv_at(o, iov, cnt, (uint64_t) off);
    hp_put(o);
    return n;
}

HP_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    return preadv2(fd, iov, cnt, off, flags);
}

HP_EXPORT off_t lseek(int fd, off_t off, int whence)
{
    struct hp_open *o = hp_get(fd);
    if (o == NULL) {
        hp_real_init();
        return hp_real.lseek(fd, off, whence);
    }
    off_t r = hp_lseek(o, off, whence);
    hp_put(o);
    return r;
}

HP_EXPORT off_t lseek64(int fd, off_t off, int whence)
{
    return lseek(fd, off, whence);
}
