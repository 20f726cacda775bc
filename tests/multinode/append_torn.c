/* Torn-append demonstration for the multi-node test bed (tests/multinode/bed).
 *
 *   append_torn write FILE NODE K    append K records of 59 bytes to FILE, opened with
 *                                    O_APPEND, one write(2) per record, as node NODE
 *   append_torn check FILE NODES K   scan FILE, written by NODES writers of K records
 *                                    each, and count what survived
 *
 * A record is self-checking: magic (4 bytes), node id (1), sequence number (4, little
 * endian), a payload (46) derived from node and sequence, and a checksum (4, FNV-1a over
 * the 55 bytes before it). `check` walks the file: a valid record at the current offset
 * is counted and skipped; otherwise the bytes up to the next valid record are a torn
 * region. It prints one line:
 *
 *   expected E valid V lost L torn_regions T garbage_bytes G duplicates D size S expected_size X
 *
 * lost = E - (distinct valid records). Informational only (the exit status is 0 whenever
 * the file could be read): it shows that concurrent O_APPEND from several clients of a
 * distributed file system is not atomic. Plain C11 + POSIX, no MPI.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { REC = 59, BODY = 55 };
static const unsigned char MAGIC[4] = { 0xA5, 'H', 'B', 0x5A };

static uint32_t fnv1a(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = v & 0xff; p[1] = (v >> 8) & 0xff; p[2] = (v >> 16) & 0xff; p[3] = v >> 24;
}

static uint32_t get32(const unsigned char *p)
{
    return p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void make_record(unsigned char *r, unsigned node, uint32_t seq)
{
    memcpy(r, MAGIC, 4);
    r[4] = (unsigned char) node;
    put32(r + 5, seq);
    for (int i = 9; i < BODY; i++)
        r[i] = (unsigned char) (node * 31u + seq * 7u + (unsigned) i * 13u);
    put32(r + BODY, fnv1a(r, BODY));
}

/* a valid record at p (n bytes available)? sets node and seq */
static int valid_record(const unsigned char *p, size_t n, unsigned *node, uint32_t *seq)
{
    unsigned char want[REC];
    if (n < REC || memcmp(p, MAGIC, 4) != 0 || get32(p + BODY) != fnv1a(p, BODY))
        return 0;
    make_record(want, p[4], get32(p + 5));
    if (memcmp(want, p, REC) != 0)
        return 0;
    *node = p[4];
    *seq = get32(p + 5);
    return 1;
}

static int do_write(const char *path, unsigned node, long k)
{
    unsigned char r[REC];
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) {
        fprintf(stderr, "append_torn: open %s: %s\n", path, strerror(errno));
        return 2;
    }
    for (long s = 0; s < k; s++) {
        make_record(r, node, (uint32_t) s);
        ssize_t w = write(fd, r, REC);
        if (w != REC) {
            fprintf(stderr, "append_torn: write %ld returned %zd: %s\n", s, w,
                    w < 0 ? strerror(errno) : "short write");
            close(fd);
            return 2;
        }
    }
    if (fsync(fd) != 0)
        fprintf(stderr, "append_torn: fsync: %s\n", strerror(errno));
    if (close(fd) != 0) {
        fprintf(stderr, "append_torn: close: %s\n", strerror(errno));
        return 2;
    }
    return 0;
}

static int do_check(const char *path, unsigned nodes, long k)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "append_torn: open %s: %s\n", path, strerror(errno));
        return 2;
    }
    size_t size = (size_t) st.st_size, got = 0;
    unsigned char *buf = malloc(size ? size : 1);
    unsigned char *seen = calloc((size_t) nodes * (size_t) k, 1);
    if (!buf || !seen) {
        fprintf(stderr, "append_torn: out of memory\n");
        return 2;
    }
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r <= 0) {
            fprintf(stderr, "append_torn: read: %s\n", r < 0 ? strerror(errno) : "early EOF");
            return 2;
        }
        got += (size_t) r;
    }
    close(fd);

    long valid = 0, distinct = 0, dups = 0, regions = 0;
    size_t garbage = 0, p = 0;
    int in_garbage = 0;
    while (p < size) {
        unsigned node;
        uint32_t seq;
        if (valid_record(buf + p, size - p, &node, &seq) && node < nodes && seq < (uint32_t) k) {
            valid++;
            size_t idx = (size_t) node * (size_t) k + seq;
            if (seen[idx])
                dups++;
            else
                distinct++;
            seen[idx] = 1;
            p += REC;
            in_garbage = 0;
        } else {
            if (!in_garbage)
                regions++;
            in_garbage = 1;
            garbage++;
            p++;
        }
    }
    long expected = (long) nodes * k;
    printf("expected %ld valid %ld lost %ld torn_regions %ld garbage_bytes %zu duplicates %ld "
           "size %zu expected_size %ld\n", expected, valid, expected - distinct, regions, garbage,
           dups, size, expected * REC);
    free(buf);
    free(seen);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "write") == 0)
        return do_write(argv[2], (unsigned) atoi(argv[3]), atol(argv[4]));
    if (argc == 5 && strcmp(argv[1], "check") == 0)
        return do_check(argv[2], (unsigned) atoi(argv[3]), atol(argv[4]));
    fprintf(stderr, "usage: append_torn write FILE NODE K | append_torn check FILE NODES K\n");
    return 2;
}
