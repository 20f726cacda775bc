/* log_append_mpi: records per second that MPI ranks (one per node on the multi-node bed,
 * scripts/bench-multinode) append to a log on a shared file system: every rank to one
 * shared log with O_APPEND (format 2's mapping file), or every rank to a log of its own
 * (format 3's writer logs). Each rank appends R records of B bytes, each with one write(2)
 * as hcomp's log append does, then fsyncs once; the time is from a barrier to the last
 * rank's fsync. The shared log is then read back and its records counted: appends from
 * several clients of GlusterFS or NFS tear, so its figure across nodes is of a log that
 * loses records (printed beside it).
 *
 * usage: log_append_mpi DIR shared|own [R [B]]
 * prints: "log_append_mpi: MODE N ranks R records of B bytes: X records/s, T s, K torn"
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* a record: magic, rank, sequence, filler, then a checksum of the rest */
static void make_record(unsigned char *rec, size_t b, int rank, long i)
{
    memset(rec, 'a' + rank % 26, b);
    memcpy(rec, "LAR1", 4);
    uint32_t r = (uint32_t) rank, s = (uint32_t) i, sum = 0;
    memcpy(rec + 4, &r, 4);
    memcpy(rec + 8, &s, 4);
    for (size_t k = 0; k + 4 < b; k++)
        sum = sum * 31 + rec[k];
    memcpy(rec + b - 4, &sum, 4);
}

static int record_ok(const unsigned char *rec, size_t b)
{
    uint32_t sum = 0, want;
    for (size_t k = 0; k + 4 < b; k++)
        sum = sum * 31 + rec[k];
    memcpy(&want, rec + b - 4, 4);
    return memcmp(rec, "LAR1", 4) == 0 && sum == want;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s DIR shared|own [R [B]]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dir = argv[1];
    int own = strcmp(argv[2], "own") == 0;
    long r = argc > 3 ? atol(argv[3]) : 5000;
    size_t b = argc > 4 ? (size_t) atol(argv[4]) : 68;
    if (b < 16)
        b = 16;
    char path[4096];
    if (own)
        snprintf(path, sizeof path, "%s/log.%d", dir, rank);
    else
        snprintf(path, sizeof path, "%s/log.shared", dir);
    if (rank == 0 && !own)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | (own ? O_TRUNC : 0), 0600);
    if (fd < 0) {
        fprintf(stderr, "log_append_mpi: %s: %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    unsigned char *rec = malloc(b);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < r; i++) {
        make_record(rec, b, rank, i);
        if (write(fd, rec, b) != (ssize_t) b) {
            fprintf(stderr, "log_append_mpi: write: %s\n", strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (fsync(fd) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double t = MPI_Wtime() - t0, tmax = 0;
    close(fd);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    long good = 0, all = 0;
    if (own || rank == 0) {   /* count the whole records that read back */
        int in = open(path, O_RDONLY);
        struct stat st;
        if (in >= 0 && fstat(in, &st) == 0) {
            unsigned char *buf = malloc((size_t) st.st_size + 1);
            ssize_t got = read(in, buf, (size_t) st.st_size);
            for (ssize_t k = 0; got > 0 && k + (ssize_t) b <= got;) {
                int ok = record_ok(buf + k, b);     /* else look for the next whole one */
                good += ok;
                k += ok ? (ssize_t) b : 1;
            }
            free(buf);
        }
        if (in >= 0)
            close(in);
        if (own)
            unlink(path);
    }
    MPI_Reduce(&good, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (!own)
            unlink(path);
        printf("log_append_mpi: %s %d ranks %ld records of %zu bytes: %.0f records/s, %.3f s, "
               "%ld torn\n", own ? "own" : "shared", n, r, b, (double) n * r / tmax, tmax,
               (long) n * r - all);
    }
    free(rec);
    MPI_Finalize();
    return 0;
}
