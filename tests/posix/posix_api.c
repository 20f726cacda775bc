/*
 * The POSIX read adapter, call by call: run under `hcomp run` (or LD_PRELOAD of
 * libhcomp_posix.so) with
 *
 *   posix_api HCOMP PLAIN DAMAGED LO HI EMPTY
 *
 * HCOMP    an hcomp file whose logical bytes are those of PLAIN
 * PLAIN    the same bytes as a plain file (read as the reference; never changed)
 * DAMAGED  an hcomp file with the same bytes, damaged in logical bytes [LO, HI)
 * EMPTY    an hcomp file of 0 bytes
 *
 * Every check prints "PASS name" or "FAIL name: why"; the last line is
 * "N passed, N failed" and the exit status is 1 if any failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int passed, failed;
static unsigned char *ref;      /* PLAIN's bytes */
static size_t ref_len;
static const char *hc, *plain, *damaged, *empty;
static size_t dlo, dhi;

#define CHECK(name, cond, ...)                                  \
    do {                                                        \
        if (cond) {                                             \
            printf("PASS %s\n", name);                          \
            passed++;                                           \
        } else {                                                \
            printf("FAIL %s: ", name);                          \
            printf(__VA_ARGS__);                                \
            printf(" (errno %d %s)\n", errno, strerror(errno)); \
            failed++;                                           \
        }                                                       \
    } while (0)

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t) n + 1);
    if (b == NULL || fread(b, 1, (size_t) n, f) != (size_t) n) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    *len = (size_t) n;
    return b;
}

/* read fd to its end with reads of the given size */
static ssize_t read_all(int fd, unsigned char *out, size_t cap, size_t chunk)
{
    size_t got = 0;
    for (;;) {
        size_t want = chunk < cap - got ? chunk : cap - got;
        if (want == 0) {
            unsigned char extra;
            ssize_t n = read(fd, &extra, 1);
            return n == 0 ? (ssize_t) got : -1;
        }
        ssize_t n = read(fd, out + got, want);
        if (n < 0)
            return -1;
        if (n == 0)
            return (ssize_t) got;
        got += (size_t) n;
    }
}

static void test_sequential(void)
{
    unsigned char *buf = malloc(ref_len + 1);
    size_t chunks[] = {1, 4095, 65536, 1 << 20, ref_len + 1};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        if (chunks[i] == 1 && ref_len > 300000)
            continue;           /* too slow byte by byte for big files */
        int fd = open(hc, O_RDONLY);
        ssize_t n = fd < 0 ? -1 : read_all(fd, buf, ref_len, chunks[i]);
        char name[64];
        snprintf(name, sizeof(name), "read to the end in reads of %zu", chunks[i]);
        CHECK(name, n == (ssize_t) ref_len && memcmp(buf, ref, ref_len) == 0,
              "got %zd of %zu bytes, or other bytes", n, ref_len);
        close(fd);
    }
    free(buf);
}

static void test_pread(void)
{
    int fd = open(hc, O_RDONLY | O_CLOEXEC);
    unsigned char *buf = malloc(1 << 20);
    int bad = 0;
    for (int i = 0; i < 400 && fd >= 0; i++) {
        size_t off = (size_t) (next_rand() % (ref_len + 100));
        size_t len = (size_t) (next_rand() % (i % 4 == 0 ? (1 << 20) : 20000));
        ssize_t n = pread(fd, buf, len, (off_t) off);
        size_t want = off >= ref_len ? 0 : (len < ref_len - off ? len : ref_len - off);
        if (n != (ssize_t) want || (want && memcmp(buf, ref + off, want) != 0)) {
            printf("  pread(%zu, %zu) gave %zd, wanted %zu\n", off, len, n, want);
            bad++;
        }
    }
    CHECK("pread at 400 random offsets and lengths, past the end too", fd >= 0 && bad == 0,
          "%d wrong", bad);
    errno = 0;
    CHECK("pread at a negative offset: EINVAL", pread(fd, buf, 10, -1) == -1 && errno == EINVAL,
          "accepted");
    int fl = fcntl(fd, F_GETFD);
    CHECK("O_CLOEXEC kept", fl >= 0 && (fl & FD_CLOEXEC), "F_GETFD %d", fl);
    close(fd);
    free(buf);
}

static void test_seek(void)
{
    int fd = open(hc, O_RDONLY);
    unsigned char b[100];
    off_t end = lseek(fd, 0, SEEK_END);
    CHECK("lseek SEEK_END is the logical size", end == (off_t) ref_len, "%lld", (long long) end);
    off_t at = lseek(fd, -50, SEEK_END);
    ssize_t n = read(fd, b, sizeof(b));
    CHECK("read after lseek(-50, SEEK_END) gives the last 50 bytes",
          at == (off_t) ref_len - 50 && n == 50 && memcmp(b, ref + ref_len - 50, 50) == 0,
          "at %lld, read %zd", (long long) at, n);
    lseek(fd, 1000, SEEK_SET);
    off_t cur = lseek(fd, 24, SEEK_CUR);
    n = read(fd, b, 10);
    CHECK("SEEK_SET then SEEK_CUR", cur == 1024 && n == 10 && memcmp(b, ref + 1024, 10) == 0,
          "at %lld", (long long) cur);
    errno = 0;
    CHECK("lseek before the start: EINVAL", lseek(fd, -1, SEEK_SET) == -1 && errno == EINVAL, "no");
    CHECK("SEEK_DATA at 0 is 0, SEEK_HOLE is the end (no holes shown)",
          lseek(fd, 0, SEEK_DATA) == 0 && lseek(fd, 0, SEEK_HOLE) == (off_t) ref_len, "no");
    errno = 0;
    CHECK("SEEK_DATA at the end: ENXIO", lseek(fd, (off_t) ref_len, SEEK_DATA) == -1 && errno == ENXIO,
          "no");
    CHECK("lseek past the end, read gives 0", lseek(fd, (off_t) ref_len + 10, SEEK_SET) ==
          (off_t) ref_len + 10 && read(fd, b, 10) == 0, "no");
    close(fd);
}

static void test_stat(void)
{
    struct stat st, pst;
    stat(plain, &pst);
    int fd = open(hc, O_RDONLY);
    int r = fstat(fd, &st);
    CHECK("fstat: the logical size", r == 0 && st.st_size == (off_t) ref_len && S_ISREG(st.st_mode),
          "size %lld", (long long) st.st_size);
    CHECK("fstat: st_blocks of a plain file that size (not sparse)",
          (uint64_t) st.st_blocks * 512 >= ref_len, "blocks %lld", (long long) st.st_blocks);
    r = stat(hc, &st);
    CHECK("stat: the logical size", r == 0 && st.st_size == (off_t) ref_len, "size %lld",
          (long long) st.st_size);
    r = lstat(hc, &st);
    CHECK("lstat: the logical size", r == 0 && st.st_size == (off_t) ref_len, "size %lld",
          (long long) st.st_size);
    struct stat64 st64;
    r = stat64(hc, &st64);
    CHECK("stat64: the logical size", r == 0 && st64.st_size == (off_t) ref_len, "size %lld",
          (long long) st64.st_size);
    r = fstatat(AT_FDCWD, hc, &st, 0);
    CHECK("fstatat: the logical size", r == 0 && st.st_size == (off_t) ref_len, "size %lld",
          (long long) st.st_size);
    r = fstatat(fd, "", &st, AT_EMPTY_PATH);
    CHECK("fstatat(fd, \"\", AT_EMPTY_PATH): the logical size", r == 0 && st.st_size == (off_t) ref_len,
          "size %lld", (long long) st.st_size);
    struct statx sx;
    r = statx(AT_FDCWD, hc, 0, STATX_SIZE | STATX_BLOCKS, &sx);
    CHECK("statx: the logical size", r == 0 && sx.stx_size == ref_len, "size %llu",
          (unsigned long long) sx.stx_size);
    r = statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &sx);
    CHECK("statx(fd, \"\", AT_EMPTY_PATH): the logical size", r == 0 && sx.stx_size == ref_len,
          "size %llu", (unsigned long long) sx.stx_size);
    r = stat(plain, &st);
    CHECK("stat of a plain file unchanged", r == 0 && st.st_size == pst.st_size &&
          st.st_blocks == pst.st_blocks && st.st_ino == pst.st_ino, "size %lld", (long long) st.st_size);
    close(fd);
}

static void test_dup(void)
{
    int fd = open(hc, O_RDONLY);
    int d = dup(fd);
    unsigned char b[64];
    read(fd, b, 10);
    ssize_t n = read(d, b, 20);
    CHECK("dup shares the offset", n == 20 && memcmp(b, ref + 10, 20) == 0 &&
          lseek(fd, 0, SEEK_CUR) == 30, "read %zd", n);
    close(fd);
    n = pread(d, b, 16, 100);
    CHECK("the dup reads after the original is closed", n == 16 && memcmp(b, ref + 100, 16) == 0,
          "read %zd", n);
    int target = open(plain, O_RDONLY);
    int d2 = dup2(d, target);
    n = pread(d2, b, 16, 200);
    CHECK("dup2 onto a plain file's descriptor reads the hcomp file", d2 == target && n == 16 &&
          memcmp(b, ref + 200, 16) == 0, "read %zd", n);
    int d3 = fcntl(d, F_DUPFD_CLOEXEC, 100);
    n = pread(d3, b, 16, 300);
    CHECK("fcntl(F_DUPFD_CLOEXEC) reads the hcomp file", d3 >= 100 && n == 16 &&
          memcmp(b, ref + 300, 16) == 0, "fd %d read %zd", d3, n);
    close(d);
    close(d2);
    close(d3);
    /* the numbers are free again and plain files opened on them read as plain files */
    int p = open(plain, O_RDONLY);
    n = read(p, b, 64);
    CHECK("a plain file opened on a freed number reads its own bytes", n == 64 &&
          memcmp(b, ref, 64) == 0, "read %zd", n);
    close(p);
}

static void test_vectors(void)
{
    int fd = open(hc, O_RDONLY);
    unsigned char a[100], b[5000], c[3];
    struct iovec iov[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
    lseek(fd, 7, SEEK_SET);
    ssize_t n = readv(fd, iov, 3);
    CHECK("readv", n == 5103 && memcmp(a, ref + 7, 100) == 0 && memcmp(b, ref + 107, 5000) == 0 &&
          memcmp(c, ref + 5107, 3) == 0 && lseek(fd, 0, SEEK_CUR) == 5110, "read %zd", n);
    n = preadv(fd, iov, 3, 65530);
    CHECK("preadv", n == 5103 && memcmp(a, ref + 65530, 100) == 0 && memcmp(c, ref + 70630, 3) == 0,
          "read %zd", n);
    close(fd);
}

static void test_fcntl_locks(void)
{
    int fd = open(hc, O_RDONLY | O_NONBLOCK);
    int fl = fcntl(fd, F_GETFL);
    CHECK("F_GETFL: read-only", fl >= 0 && (fl & O_ACCMODE) == O_RDONLY && (fl & O_NONBLOCK),
          "flags %#x", fl);
    CHECK("flock(LOCK_SH) and (LOCK_UN) succeed", flock(fd, LOCK_SH | LOCK_NB) == 0 &&
          flock(fd, LOCK_UN) == 0, "no");
    struct flock lk = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    CHECK("fcntl(F_SETLK) of a read lock succeeds", fcntl(fd, F_SETLK, &lk) == 0, "no");
    close(fd);
}

static void test_refusals(void)
{
    struct stat before, after;
    stat(hc, &before);
    int fds[4];
    errno = 0;
    fds[0] = open(hc, O_RDWR);
    int e0 = errno;
    fds[1] = open(hc, O_WRONLY | O_TRUNC);
    int e1 = errno;
    fds[2] = open(hc, O_RDONLY | O_TRUNC);
    int e2 = errno;
    fds[3] = creat(hc, 0644);
    int e3 = errno;
    CHECK("write opens of an hcomp file fail with EROFS (O_RDWR, O_WRONLY|O_TRUNC, O_RDONLY|O_TRUNC, "
          "creat)", fds[0] == -1 && fds[1] == -1 && fds[2] == -1 && fds[3] == -1 && e0 == EROFS &&
          e1 == EROFS && e2 == EROFS && e3 == EROFS, "fds %d %d %d %d", fds[0], fds[1], fds[2], fds[3]);
    errno = 0;
    FILE *w = fopen(hc, "r+");
    int ew = errno;
    FILE *a = fopen(hc, "a");
    CHECK("fopen for writing fails with EROFS", w == NULL && a == NULL && ew == EROFS && errno == EROFS,
          "opened");
    stat(hc, &after);
    CHECK("the refused file is as it was", after.st_size == before.st_size &&
          after.st_ino == before.st_ino, "size %lld", (long long) after.st_size);
    int fd = open(hc, O_RDONLY);
    errno = 0;
    void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK("mmap fails with ENODEV (never the mapping file's bytes)", m == MAP_FAILED && errno == ENODEV,
          "mapped");
    void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK("anonymous mmap unaffected", anon != MAP_FAILED, "failed");
    munmap(anon, 4096);
    errno = 0;
    ssize_t n = write(fd, "x", 1);
    CHECK("write on the descriptor fails (EBADF)", n == -1 && errno == EBADF, "wrote %zd", n);
    int out = open("/dev/null", O_WRONLY);
    errno = 0;
    n = sendfile(out, fd, NULL, 100);
    CHECK("sendfile fails with EINVAL (callers fall back to read)", n == -1 && errno == EINVAL, "%zd", n);
    errno = 0;
    n = copy_file_range(fd, NULL, out, NULL, 100, 0);
    CHECK("copy_file_range fails with EXDEV (callers fall back to read)", n == -1 && errno == EXDEV,
          "%zd", n);
    close(out);
    close(fd);
}

static void test_stdio(void)
{
    FILE *f = fopen(hc, "rb");
    unsigned char *buf = malloc(ref_len + 1);
    size_t n = f ? fread(buf, 1, ref_len + 1, f) : 0;
    CHECK("fopen + fread to the end", f && n == ref_len && memcmp(buf, ref, ref_len) == 0 && feof(f),
          "read %zu", n);
    if (f) {
        fseek(f, 12345, SEEK_SET);
        long at = ftell(f);
        n = fread(buf, 1, 100, f);
        CHECK("fseek + ftell + fread", at == 12345 && n == 100 && memcmp(buf, ref + 12345, 100) == 0,
              "at %ld", at);
        fseek(f, -10, SEEK_END);
        CHECK("fseek from the end", ftell(f) == (long) ref_len - 10, "at %ld", ftell(f));
        fclose(f);
    }
    int fd = open(hc, O_RDONLY);
    f = fdopen(fd, "r");
    n = f ? fread(buf, 1, 1000, f) : 0;
    CHECK("fdopen of the descriptor + fread", f && n == 1000 && memcmp(buf, ref, 1000) == 0,
          "read %zu", n);
    if (f)
        fclose(f);
    f = fopen(plain, "r");
    CHECK("fopen of a plain file is the C library's own (fileno works)", f && fileno(f) >= 0, "no");
    if (f)
        fclose(f);
    free(buf);
}

static void test_openat(void)
{
    char *copy = strdup(hc), *dir = dirname(copy);
    char *copy2 = strdup(hc), *base = basename(copy2);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    int fd = openat(dfd, base, O_RDONLY);
    unsigned char b[32];
    ssize_t n = pread(fd, b, 32, 4096);
    CHECK("openat relative to a directory", fd >= 0 && n == 32 && memcmp(b, ref + 4096, 32) == 0,
          "fd %d read %zd", fd, n);
    close(fd);
    close(dfd);
    free(copy);
    free(copy2);
}

static void test_plain_mmap(void)
{
    int fd = open(plain, O_RDONLY);
    void *m = mmap(NULL, ref_len, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK("mmap of a plain file works and shows its bytes", m != MAP_FAILED &&
          memcmp(m, ref, ref_len) == 0, "no");
    if (m != MAP_FAILED)
        munmap(m, ref_len);
    struct stat st;
    fstat(fd, &st);
    CHECK("fstat of a plain file: its own size", st.st_size == (off_t) ref_len, "%lld",
          (long long) st.st_size);
    close(fd);
}

static void test_damage(void)
{
    int fd = open(damaged, O_RDONLY);
    unsigned char *b = malloc(dhi - dlo > 4096 ? dhi - dlo : 4096);
    errno = 0;
    ssize_t n = pread(fd, b, dhi - dlo, (off_t) dlo);
    CHECK("a read of the damaged range fails with EIO", fd >= 0 && n == -1 && errno == EIO,
          "read %zd", n);
    size_t len = dlo < 4096 ? dlo : 4096;
    n = len ? pread(fd, b, len, (off_t) (dlo - len)) : 0;
    CHECK("a read before the damaged range gives the right bytes", n == (ssize_t) len &&
          memcmp(b, ref + dlo - len, len) == 0, "read %zd", n);
    len = ref_len - dhi < 4096 ? ref_len - dhi : 4096;
    n = pread(fd, b, len, (off_t) dhi);
    CHECK("a read after the damaged range gives the right bytes", n == (ssize_t) len &&
          memcmp(b, ref + dhi, len) == 0, "read %zd", n);
    close(fd);
    free(b);
}

static void test_empty(void)
{
    int fd = open(empty, O_RDONLY);
    struct stat st;
    unsigned char b[8];
    CHECK("an empty hcomp file: size 0, read gives 0", fd >= 0 && fstat(fd, &st) == 0 &&
          st.st_size == 0 && read(fd, b, 8) == 0, "fd %d", fd);
    close(fd);
}

struct worker {
    int fd;
    int bad;
    uint64_t seed;
};

static void *reader(void *arg)
{
    struct worker *w = arg;
    unsigned char *b = malloc(300000);
    uint64_t s = w->seed;
    for (int i = 0; i < 100; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t off = (size_t) ((s >> 11) % ref_len), len = (size_t) ((s >> 40) % 300000);
        size_t want = len < ref_len - off ? len : ref_len - off;
        ssize_t n = pread(w->fd, b, len, (off_t) off);
        if (n != (ssize_t) want || memcmp(b, ref + off, want) != 0)
            w->bad++;
    }
    free(b);
    return NULL;
}

static void test_threads(void)
{
    int fd = open(hc, O_RDONLY);
    pthread_t t[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){fd, 0, (uint64_t) i * 7919 + 1};
        pthread_create(&t[i], NULL, reader, &w[i]);
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        bad += w[i].bad;
    }
    CHECK("4 threads pread one descriptor at once", bad == 0, "%d wrong", bad);
    close(fd);
}

static void test_fork(void)
{
    int fd = open(hc, O_RDONLY);
    unsigned char b[256];
    pread(fd, b, 256, 0);       /* the parent has used it */
    pid_t pid = fork();
    if (pid == 0) {
        ssize_t n = pread(fd, b, 256, 777);
        _exit(n == 256 && memcmp(b, ref + 777, 256) == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ssize_t n = pread(fd, b, 256, 999);
    CHECK("a forked child reads an inherited descriptor; the parent still does",
          WIFEXITED(status) && WEXITSTATUS(status) == 0 && n == 256 && memcmp(b, ref + 999, 256) == 0,
          "child status %d", status);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: posix_api HCOMP PLAIN DAMAGED LO HI EMPTY\n");
        return 2;
    }
    hc = argv[1];
    plain = argv[2];
    damaged = argv[3];
    dlo = strtoull(argv[4], NULL, 0);
    dhi = strtoull(argv[5], NULL, 0);
    empty = argv[6];
    ref = slurp(plain, &ref_len);
    if (ref == NULL || ref_len < 200000) {
        fprintf(stderr, "posix_api: %s: cannot read it, or shorter than 200000 bytes\n", plain);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_sequential();
    test_pread();
    test_seek();
    test_stat();
    test_dup();
    test_vectors();
    test_fcntl_locks();
    test_refusals();
    test_stdio();
    test_openat();
    test_plain_mmap();
    test_damage();
    test_empty();
    test_threads();
    test_fork();
    free(ref);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
