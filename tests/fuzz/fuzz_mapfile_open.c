/* Fuzz target: the real replay of a mapping file (file/file_log.c) and reads through
 * it (file/file_read.c), by the public API on a file in a fresh temporary directory
 * (under $TMPDIR, else /dev/shm), removed after each input.
 * Input: a 4-byte little-endian length m, m bytes of mapping file, then the bytes of
 * the segment file "./seg" that the corpus's SEGMENT records name (relative to the
 * directory; inputs naming any other directory are passed over, so no input makes the
 * library read files of the machine). With the top bit of m set, every checksum (of the
 * header, the records and the pieces' payloads) and every piece header is made to agree
 * first (tests/fuzz/fuzz_mapfix.h), so mutations reach the replay and the decoders.
 * Properties: open read-only, size and pread succeed or fail with a documented code and
 * a message (never "out of memory" on these small inputs); the size is stable; a read
 * returns exactly min(len, size - off) bytes; reading a range whole and in two parts,
 * and again, gives the same bytes (the one-piece cache is consistent); a lazy reader
 * (HCOMP_O_LAZY) opens where the reader did and gives the same size and first bytes; so
 * does a reader whose replay reads the log in chunks of a few bytes (hcomp_log_chunk).
 * With bit 30 of m set, the file is made format version 3: the mapping file is its header
 * (version 3, log generation 0) and the records go to a writer log of it
 * (docs/FORMAT.md, "Writer logs"), replayed the same way. */
#define _GNU_SOURCE
#include "fuzz_common.h"
#include "hcomp.h"
#include "fuzz_mapfix.h"
#include "file/mapfile.h"
#include "file/file_internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/util.h"

static int cwd_fd = -1;

static int write_file(const char *name, const uint8_t *p, size_t n)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    size_t o = 0;
    while (o < n) {
        ssize_t w = write(fd, p + o, n - o);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        o += (size_t) w;
    }
    return close(fd);
}

/* Every SEGMENT record the replay will see names "." as its directory and a plain
 * file name. hcomp_map_next is the library's own record reader, so this sees what
 * file_log.c will. */
static int segments_local(const uint8_t *map, size_t len)
{
    size_t pos = len < HCOMP_MAP_HEADER_SIZE ? len : HCOMP_MAP_HEADER_SIZE;
    for (;;) {
        hcomp_map_record r;
        int res = hcomp_map_next(map, len, &pos, &r, NULL);
        if (res == HCOMP_MAP_INCOMPLETE)
            return 1;
        if (res == HCOMP_MAP_RECORD && r.type == HCOMP_REC_SEGMENT &&
            (r.u.seg.dir_len != 1 || r.u.seg.dir[0] != '.' ||
             memchr(r.u.seg.file, '/', r.u.seg.file_len) != NULL))
            return 0;
    }
}

static void check_code(int rc, const hcomp_error *err, const char *what)
{
    CHECK(rc >= HCOMP_OK && rc <= HCOMP_E_RDONLY, "%s returned %d", what, rc);
    CHECK(rc != HCOMP_E_NOMEM, "%s: out of memory on a small input: %s", what, err->msg);
    CHECK(rc == HCOMP_OK || err->msg[0] != '\0', "%s failed (%d) without a message", what, rc);
}

static int read_range(hcomp_file *f, uint64_t size, uint64_t off, uint64_t len,
                      unsigned char *buf)
{
    hcomp_error err = {0};
    uint64_t got = 12345;
    memset(buf, 0xee, len);
    int rc = hcomp_file_pread(f, buf, len, off, &got, &err);
    check_code(rc, &err, "pread");
    if (rc != HCOMP_OK)
        return rc;
    uint64_t want = off >= size ? 0 : (size - off < len ? size - off : len);
    CHECK(got == want, "pread of %llu at %llu (size %llu) read %llu", (unsigned long long) len,
          (unsigned long long) off, (unsigned long long) size, (unsigned long long) got);
    return rc;
}

#define MAXREAD (64u << 10)
static unsigned char b1[MAXREAD], b2[MAXREAD], b3[MAXREAD];

/* Reads [off, off+len) whole, in two parts and whole again; where they succeed, the
 * bytes agree. */
static void read_checks(hcomp_file *f, uint64_t size, uint64_t off, uint64_t len)
{
    if (len > MAXREAD)
        len = MAXREAD;
    int r1 = read_range(f, size, off, len, b1);
    uint64_t h = len / 2 + (len > 2 ? 1 : 0);
    int r2 = read_range(f, size, off + h, len - h, b2 + h);
    int r2b = read_range(f, size, off, h, b2);
    int r3 = read_range(f, size, off, len, b3);
    uint64_t n = off >= size ? 0 : (size - off < len ? size - off : len);
    if (r1 == HCOMP_OK && r3 == HCOMP_OK)
        CHECK(memcmp(b1, b3, n) == 0, "two reads of %llu at %llu differ",
              (unsigned long long) len, (unsigned long long) off);
    if (r1 == HCOMP_OK && r2 == HCOMP_OK && r2b == HCOMP_OK)
        CHECK(memcmp(b1, b2, n) == 0, "a read of %llu at %llu differs from the same in two "
              "parts", (unsigned long long) len, (unsigned long long) off);
}

/* g (then closed) has the size of reader f (size query a, size s) and reads its first
 * bytes as f does */
static void expect_like_reader(hcomp_file *g, hcomp_file *f, int a, uint64_t s,
                               const char *what)
{
    hcomp_error err = {0};
    uint64_t sg = 0;
    int c = hcomp_file_size(g, &sg, &err);
    check_code(c, &err, what);
    CHECK(c == a && sg == s, "%s's size: %d %llu, the reader's %d %llu", what, c,
          (unsigned long long) sg, a, (unsigned long long) s);
    if (a == HCOMP_OK) {
        uint64_t n = s < sizeof(b1) ? s : sizeof(b1), g1 = 0, g2 = 0;
        int x = hcomp_file_pread(f, b1, n, 0, &g1, &err);
        int y = hcomp_file_pread(g, b2, n, 0, &g2, &err);
        CHECK(x == y && g1 == g2 && (x != HCOMP_OK || memcmp(b1, b2, n) == 0),
              "%s reads %d/%llu, the reader %d/%llu (or other bytes)", what, y,
              (unsigned long long) g2, x, (unsigned long long) g1);
    }
    check_code(hcomp_file_close(g, &err), &err, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (cwd_fd < 0 && (cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        abort();
    size_t m = 0;
    if (size >= 4)
        m = (size_t) data[0] | (size_t) data[1] << 8 | (size_t) data[2] << 16 |
            (size_t) data[3] << 24;
    int fix = (m & 0x80000000u) != 0;
    int wlog = (m & 0x40000000u) != 0;
    m &= 0x3fffffffu;
    size_t rest = size < 4 ? 0 : size - 4;
    if (m > rest)
        m = rest;
    unsigned char *map = malloc(rest ? rest : 1);
    CHECK(map != NULL, "out of memory");
    memcpy(map, data + (size < 4 ? size : 4), rest);
    if (fix)
        fuzz_fix_map(map, m, map + m, rest - m);
    if (!segments_local(map, m)) {
        free(map);
        return -1;      /* not added to the corpus */
    }

    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/hcomp-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/dev/shm");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp %s", dir);
    CHECK(chdir(dir) == 0, "chdir %s", dir);
    CHECK(write_file("seg", map + m, rest - m) == 0, "writing the input to %s", dir);
    char wlog_dir[64] = "";
    if (wlog && m >= HCOMP_MAP_HEADER_SIZE) {
        /* version 3: a mapping file of its header alone, the records in a writer log */
        unsigned char *h = map;
        hcomp_put_u32(h + 8, HCOMP_MAP_VERSION_WLOGS);
        memset(h + 40, 0, 8);
        hcomp_put_u32(h + 60, hcomp_crc32(h, 60));
        hcomp_wlog_header wh;
        memcpy(wh.file_id, h + 16, 16);
        wh.log_gen = 0;
        wh.writer = 1;
        unsigned char lh[HCOMP_WLOG_HEADER_SIZE];
        hcomp_wlog_header_encode(&wh, lh);
        char *ld = wlog_dir, lp[160];
        snprintf(wlog_dir, sizeof(wlog_dir), ".map.%02x%02x%02x%02x%02x%02x%02x%02x.hcd", h[16], h[17], h[18],
                 h[19], h[20], h[21], h[22], h[23]);
        snprintf(lp, sizeof(lp), "%s/0000000000000000-0000000000000001.log", ld);
        size_t nrec = m - HCOMP_MAP_HEADER_SIZE;
        unsigned char *log = malloc(HCOMP_WLOG_HEADER_SIZE + nrec + 1);
        CHECK(log != NULL, "out of memory");
        memcpy(log, lh, sizeof(lh));
        memcpy(log + sizeof(lh), map + HCOMP_MAP_HEADER_SIZE, nrec);
        CHECK(mkdir(ld, 0700) == 0 && write_file(lp, log, HCOMP_WLOG_HEADER_SIZE + nrec) == 0,
              "writing the writer log to %s", dir);
        free(log);
        m = HCOMP_MAP_HEADER_SIZE;
    }
    CHECK(write_file("map", map, m) == 0, "writing the input to %s", dir);

    hcomp_error err = {0};
    hcomp_file *f = NULL;
    int rc = hcomp_file_open("map", HCOMP_O_RDONLY, 0, 1, NULL, &f, &err);
    check_code(rc, &err, "open");
    if (rc == HCOMP_OK) {
        uint64_t s1 = 0, s2 = 0;
        int a = hcomp_file_size(f, &s1, &err);
        check_code(a, &err, "size");
        int b = hcomp_file_size(f, &s2, &err);
        check_code(b, &err, "size");
        CHECK(a == b && s1 == s2, "size %llu then %llu", (unsigned long long) s1,
              (unsigned long long) s2);
        if (a == HCOMP_OK) {
            uint64_t mid = s1 / 2 > 3000 ? s1 / 2 - 3000 : 0;
            read_checks(f, s1, 0, s1 < 16384 ? s1 + 10 : 16384);
            read_checks(f, s1, mid, 6000);
            read_checks(f, s1, s1 > 4096 ? s1 - 4096 : 0, 5000);
            read_range(f, s1, s1, 10, b1);                  /* at the end: 0 bytes */
        }
        /* a lazy reader replays at its first call: the same size and bytes */
        hcomp_file *g = NULL;
        int l = hcomp_file_open("map", HCOMP_O_RDONLY | HCOMP_O_LAZY, 0, 1, NULL, &g, &err);
        check_code(l, &err, "lazy open");
        CHECK(l == HCOMP_OK, "a lazy open failed where the open succeeded: %s", err.msg);
        expect_like_reader(g, f, a, s1, "a lazy reader");
        /* a replay that reads the log in tiny chunks builds the same */
        size_t saved = hcomp_log_chunk;
        hcomp_log_chunk = 1 + m % 29;
        hcomp_file *h = NULL;
        int o = hcomp_file_open("map", HCOMP_O_RDONLY, 0, 1, NULL, &h, &err);
        hcomp_log_chunk = saved;
        check_code(o, &err, "chunked open");
        CHECK(o == HCOMP_OK, "an open replaying in chunks of %zu failed where the open "
              "succeeded: %s", (size_t) (1 + m % 29), err.msg);
        expect_like_reader(h, f, a, s1, "a reader replaying in chunks");
        rc = hcomp_file_close(f, &err);
        check_code(rc, &err, "close");
    }
    if (wlog_dir[0]) {
        char lp[160];
        snprintf(lp, sizeof(lp), "%s/0000000000000000-0000000000000001.log", wlog_dir);
        CHECK(unlink(lp) == 0 && rmdir(wlog_dir) == 0, "removing %s", wlog_dir);
    }
    CHECK(unlink("map") == 0 && unlink("seg") == 0 && fchdir(cwd_fd) == 0 && rmdir(dir) == 0,
          "removing %s", dir);
    free(map);
    return 0;
}
