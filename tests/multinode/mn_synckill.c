/* MPI_File_sync, then a node dies (issue 42): --write: every rank writes COUNT blocks of
 * 64 KiB (block i of rank r at (i * nprocs + r) * 64 KiB) with hcomp_drain=never (the
 * pieces sit on the node's RAM tier until the sync moves them), MPI_File_sync, barrier,
 * rank 0 prints "synced" and every rank waits to be killed. --verify=W (a new job, on the
 * surviving node): every block the W writers synced reads back, byte for byte.
 *
 * usage: mn_synckill TARGET CONFIG --write|--verify=W [--count=N] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (64 * 1024)

static void fill(unsigned char *b, int rank, long i)
{
    for (int k = 0; k < BLOCK; k += 4) {
        uint32_t v = (uint32_t) (rank * 1000003 + i * 7919 + (k / 64));  /* a ramp: compressible */
        memcpy(b + k, &v, 4);
    }
}

static void die_on(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "mn_synckill: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const char *target = argv[1], *config = argv[2];
    int writers = 0;
    long count = 64;
    for (int a = 3; a < argc; a++) {
        if (strncmp(argv[a], "--verify=", 9) == 0)
            writers = atoi(argv[a] + 9);
        else if (strncmp(argv[a], "--count=", 8) == 0)
            count = atol(argv[a] + 8);
    }
    MPI_Info info;
    MPI_Info_create(&info);
    if (strncmp(target, "hcomp:", 6) == 0) {
        if (config[0])
            MPI_Info_set(info, "hcomp_config", config);
        MPI_Info_set(info, "hcomp_drain", "never");
    }
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    unsigned char *buf = malloc(BLOCK), *want = malloc(BLOCK);
    if (writers == 0) {
        die_on(MPI_File_open(MPI_COMM_WORLD, target, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
               "open");
        for (long i = 0; i < count; i++) {
            fill(buf, rank, i);
            die_on(MPI_File_write_at(fh, ((MPI_Offset) i * nprocs + rank) * BLOCK, buf, BLOCK,
                                     MPI_BYTE, MPI_STATUS_IGNORE), "write");
        }
        die_on(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("synced\n");
            fflush(stdout);
        }
        for (;;)
            pause();    /* killed with its node; the file is never closed */
    }
    die_on(MPI_File_open(MPI_COMM_WORLD, target, MPI_MODE_RDONLY, info, &fh), "open to verify");
    long bad = 0, blocks = 0;
    for (int w = rank; w < writers; w += nprocs)
        for (long i = 0; i < count; i++, blocks++) {
            MPI_Offset off = ((MPI_Offset) i * writers + w) * BLOCK;
            die_on(MPI_File_read_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), "read");
            fill(want, w, i);
            if (memcmp(buf, want, BLOCK) != 0 && bad++ < 3)
                fprintf(stderr, "block %ld of writer %d (offset %lld) differs\n", i, w,
                        (long long) off);
        }
    die_on(MPI_File_close(&fh), "close");
    long tb = 0, tbl = 0;
    MPI_Allreduce(&bad, &tb, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&blocks, &tbl, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mn_synckill: %ld synced blocks checked after the node died, %ld bad\n", tbl, tb);
    MPI_Info_free(&info);
    free(buf);
    free(want);
    MPI_Finalize();
    return tb ? 1 : 0;
}
