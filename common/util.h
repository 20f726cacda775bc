/* Small helpers shared by libhcomp's modules: error reporting, little-endian
 * encoding, checksums, ids. */
#ifndef HCOMP_UTIL_H
#define HCOMP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hcomp_error.h"

#if defined(__GNUC__)
#define HCOMP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HCOMP_PRINTF(a, b)
#endif

/* Fill err (may be NULL) and return code. */
int hcomp_fail(hcomp_error *err, int code, const char *fmt, ...) HCOMP_PRINTF(3, 4);
/* The same for a failed system call: appends ": strerror(errnum)" and maps errnum
 * to the closest hcomp code. */
int hcomp_fail_errno(hcomp_error *err, int errnum, const char *fmt, ...) HCOMP_PRINTF(3, 4);
int hcomp_code_from_errno(int errnum);
void hcomp_ok(hcomp_error *err);

static inline void hcomp_put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char) v;
    p[1] = (unsigned char) (v >> 8);
}
static inline void hcomp_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char) (v >> (8 * i));
}
static inline void hcomp_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char) (v >> (8 * i));
}
static inline uint16_t hcomp_get_u16(const unsigned char *p)
{
    return (uint16_t) (p[0] | (p[1] << 8));
}
static inline uint32_t hcomp_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t hcomp_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* CRC-32 (zlib's) of a buffer of any size. */
uint32_t hcomp_crc32(const void *buf, size_t len);
/* posix_fadvise(POSIX_FADV_WILLNEED) of [off, off + len) of fd, unless the range is 64 KiB or
 * more and its first, middle and last pages are in the page cache already (cachestat(2),
 * Linux 6.5): the advice then only walks the cached pages (about 7 us a MiB here), which is
 * a tenth of a warm read's time. Returns 1 advised, 0 left alone as cached, -1 the advice
 * failed. Where the kernel cannot say (older kernels, EPERM), it advises. */
int hcomp_advise_willneed(int fd, uint64_t off, uint64_t len);
/* Random bytes from the kernel (getrandom), for file and segment ids. */
int hcomp_random_bytes(void *buf, size_t len);
/* This process's node: $HCOMP_NODE if set (to simulate nodes on one machine), else the
 * host name. */
const char *hcomp_node_name(void);
/* Parse a non-negative size with an optional unit: "4096", "64MiB", "1.5GB",
 * "unlimited" (UINT64_MAX). Returns 0 on success. */
int hcomp_parse_size(const char *text, uint64_t *out);
/* Parse a bandwidth: "10GB/s", "500MiB/s", or a plain number of bytes/s. */
int hcomp_parse_bandwidth(const char *text, double *bytes_per_s);
/* Parse a duration: "20us", "4.16ms", "13.5ns", "1s", or a plain number of seconds. */
int hcomp_parse_duration(const char *text, double *seconds);
/* Write all of buf with write(2) (one call when the kernel takes it whole). */
int hcomp_write_full(int fd, const void *buf, size_t len);
/* pread exactly len bytes; returns bytes read (less only at end of file) or -1. */
long long hcomp_pread_full(int fd, void *buf, size_t len, uint64_t off);
/* Like hcomp_pread_full into A then B (one preadv): a header and its payload. */
long long hcomp_pread2_full(int fd, void *a, size_t alen, void *b, size_t blen, uint64_t off);
/* path made absolute (against the working directory) in out; 0, or -1 with errno. */
int hcomp_abs_path(const char *path, char *out, size_t n);
/* *buf grown (doubling, from 4 KiB) to hold need bytes; 0, or -1 when out of memory
 * (the buffer is unchanged). */
int hcomp_grow(unsigned char **buf, size_t *cap, size_t need);
/* *arrayp (a pointer to an array of elem-byte elements) grown, doubling, to hold need
 * elements; 0, or -1 when out of memory (the array is unchanged). */
int hcomp_grow_array(void *arrayp, size_t *cap, size_t need, size_t elem);
/* The 16 characters at s are lower-case hex digits (an id in a segment directory's name). */
int hcomp_is_hex16(const char *s);

#endif
