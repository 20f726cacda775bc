/* Error reporting, parsing of sizes and units, checksums, ids, full I/O. */
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#ifdef HCOMP_HAVE_ISAL
#include <isa-l/crc.h>
#else
#include <libdeflate.h>
#endif

const char *hcomp_code_name(int code)
{
    static const char *const names[] = {
        "HCOMP_OK", "HCOMP_E_INVAL", "HCOMP_E_NOENT", "HCOMP_E_EXIST", "HCOMP_E_ACCESS",
        "HCOMP_E_NOSPC", "HCOMP_E_NOTHCOMP", "HCOMP_E_VERSION", "HCOMP_E_CORRUPT",
        "HCOMP_E_IO", "HCOMP_E_NOMEM", "HCOMP_E_UNSUPPORTED", "HCOMP_E_RDONLY", "HCOMP_E_NAME"};
    if (code < 0 || (size_t) code >= sizeof(names) / sizeof(names[0]))
        return "HCOMP_E_UNKNOWN";
    return names[code];
}

void hcomp_ok(hcomp_error *err)
{
    if (err) {
        err->code = HCOMP_OK;
        err->msg[0] = '\0';
    }
}

int hcomp_fail(hcomp_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int hcomp_code_from_errno(int errnum)
{
    switch (errnum) {
        case ENOENT:
        case ENOTDIR:
            return HCOMP_E_NOENT;
        case EEXIST:
            return HCOMP_E_EXIST;
        case EACCES:
        case EPERM:
        case ELOOP:
            return HCOMP_E_ACCESS;
        case EROFS:
            return HCOMP_E_RDONLY;
        case ENOSPC:
        case EDQUOT:
        case EFBIG:
            return HCOMP_E_NOSPC;
        case ENOMEM:
            return HCOMP_E_NOMEM;
        case EINVAL:
            return HCOMP_E_INVAL;
        case ENAMETOOLONG:
        case EISDIR:        /* a directory's name where a file's is wanted */
            return HCOMP_E_NAME;
        default:
            return HCOMP_E_IO;
    }
}

int hcomp_fail_errno(hcomp_error *err, int errnum, const char *fmt, ...)
{
    int code = hcomp_code_from_errno(errnum);
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t) n < sizeof(err->msg))
            snprintf(err->msg + n, sizeof(err->msg) - (size_t) n, ": %s", strerror(errnum));
        err->code = code;
    }
    return code;
}

/* CRC-32 (the zlib/IEEE polynomial, so files written with zlib's crc32 verify the same).
 * Every byte read is checked, so on page-cache-speed tiers this is a large share of a
 * read: ISA-L's (carry-less multiplication on 64-byte vectors where the CPU has them:
 * 34-40 GB/s a core here on 64 KiB and more, 20 GB/s on 4 KiB), else libdeflate's
 * (16.5 GB/s here; its wide-vector code came in 1.20, after Debian bookworm's 1.14). */
uint32_t hcomp_crc32(const void *buf, size_t len)
{
#ifdef HCOMP_HAVE_ISAL
    return crc32_gzip_refl(0, buf, len);
#else
    return libdeflate_crc32(0, buf, len);
#endif
}

#ifndef __NR_cachestat
#define __NR_cachestat 451  /* the same number on every architecture (Linux 6.5) */
#endif
#define ADVISE_PROBE_FROM (64u << 10)

/* Whether the page holding byte off of fd is in the page cache: cachestat(2) counts what
 * is there without reading anything (a read with RWF_NOWAIT would start read-ahead around
 * a missing page); 0 where the kernel does not have it or refuses (EPERM on files the
 * caller may neither write nor own, since 6.x). */
static int page_cached(int fd, uint64_t off)
{
    static atomic_int missing;      /* ENOSYS once (an older kernel, valgrind): not asked again */
    struct { uint64_t off, len; } range = {off & ~(uint64_t) 4095, 4096};
    struct { uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted; } st;
    if (atomic_load_explicit(&missing, memory_order_relaxed))
        return 0;
    if (syscall(__NR_cachestat, fd, &range, &st, 0) == 0)
        return st.nr_cache > 0;
    if (errno == ENOSYS)
        atomic_store_explicit(&missing, 1, memory_order_relaxed);
    return 0;
}

int hcomp_advise_willneed(int fd, uint64_t off, uint64_t len)
{
    if (len >= ADVISE_PROBE_FROM && page_cached(fd, off + len - 1) &&
        page_cached(fd, off + len / 2) && page_cached(fd, off))
        return 0;
    return posix_fadvise(fd, (off_t) off, (off_t) len, POSIX_FADV_WILLNEED) == 0 ? 1 : -1;
}

int hcomp_random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

const char *hcomp_node_name(void)
{
    static _Thread_local char name[256];
    const char *env = getenv("HCOMP_NODE");
    if (env && env[0])
        snprintf(name, sizeof(name), "%s", env);
    else if (gethostname(name, sizeof(name)) != 0)
        snprintf(name, sizeof(name), "localhost");
    name[sizeof(name) - 1] = '\0';
    return name;
}

/* number followed by a unit from table; scale[i] multiplies */
static int parse_scaled(const char *text, const char *const *units, const double *scale,
                        size_t nunits, double *out)
{
    if (text == NULL)
        return -1;
    while (*text == ' ')
        text++;
    if (*text == '\0' || *text == '-' || *text == '+')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || !isfinite(v) || v < 0)
        return -1;
    while (*end == ' ')
        end++;
    if (*end == '\0') {
        *out = v;
        return 0;
    }
    for (size_t i = 0; i < nunits; i++) {
        if (strcasecmp(end, units[i]) == 0) {
            *out = v * scale[i];
            return 0;
        }
    }
    return -1;
}

int hcomp_parse_size(const char *text, uint64_t *out)
{
    static const char *const units[] = {"B", "KB", "KiB", "K", "MB", "MiB", "M", "GB", "GiB", "G",
                                        "TB", "TiB", "T"};
    static const double scale[] = {1, 1e3, 1024.0, 1024.0, 1e6, 1048576.0, 1048576.0, 1e9,
                                   1073741824.0, 1073741824.0, 1e12, 1099511627776.0,
                                   1099511627776.0};
    if (text && strcasecmp(text, "unlimited") == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    double v;
    if (parse_scaled(text, units, scale, sizeof(scale) / sizeof(scale[0]), &v) != 0)
        return -1;
    if (v >= 18446744073709551615.0 || v != floor(v))
        return -1;  /* whole bytes only */
    *out = (uint64_t) v;
    return 0;
}

int hcomp_parse_bandwidth(const char *text, double *bytes_per_s)
{
    static const char *const units[] = {"B/s", "KB/s", "KiB/s", "MB/s", "MiB/s", "GB/s", "GiB/s",
                                        "TB/s"};
    static const double scale[] = {1, 1e3, 1024.0, 1e6, 1048576.0, 1e9, 1073741824.0, 1e12};
    return parse_scaled(text, units, scale, sizeof(scale) / sizeof(scale[0]), bytes_per_s);
}

int hcomp_parse_duration(const char *text, double *seconds)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    static const double scale[] = {1, 1e-3, 1e-6, 1e-9};
    return parse_scaled(text, units, scale, sizeof(scale) / sizeof(scale[0]), seconds);
}

int hcomp_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

long long hcomp_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
    return hcomp_pread2_full(fd, buf, len, NULL, 0, off);
}

long long hcomp_pread2_full(int fd, void *a, size_t alen, void *b, size_t blen, uint64_t off)
{
    size_t done = 0, len = alen + blen;
    while (done < len) {
        struct iovec rest[2];
        int n_iov = 0;
        if (done < alen)
            rest[n_iov++] = (struct iovec) {(char *) a + done, alen - done};
        size_t bdone = done > alen ? done - alen : 0;
        if (blen > 0)
            rest[n_iov++] = (struct iovec) {(char *) b + bdone, blen - bdone};
        ssize_t n = preadv(fd, rest, n_iov, (off_t) (off + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        done += (size_t) n;
    }
    return (long long) done;
}

int hcomp_abs_path(const char *path, char *out, size_t n)
{
    char cwd[PATH_MAX];
    if (path[0] == '/')
        cwd[0] = '\0';
    else if (getcwd(cwd, sizeof(cwd)) == NULL)
        return -1;
    if (snprintf(out, n, "%s%s%s", cwd, cwd[0] ? "/" : "", path) >= (int) n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int hcomp_grow(unsigned char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    unsigned char *p = realloc(*buf, n);
    if (p == NULL)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

int hcomp_grow_array(void *arrayp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    if (n > SIZE_MAX / elem)
        return -1;
    void *old;
    memcpy(&old, arrayp, sizeof(old));
    void *p = realloc(old, n * elem);
    if (p == NULL)
        return -1;
    memcpy(arrayp, &p, sizeof(p));
    *cap = n;
    return 0;
}

int hcomp_is_hex16(const char *s)
{
    for (int i = 0; i < 16; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}
