/* The case that lost data across nodes (issue 42): every rank makes COUNT independent
 * 4 KiB writes at interleaved offsets (block i of rank r at (i * nprocs + r) * 4096),
 * closes, the file is opened again collectively and every rank reads its neighbour's
 * blocks and checks every byte. With --sync, the ranks also MPI_File_sync, barrier and
 * read the neighbour's blocks before the close (sync-barrier-sync, MPI-4.0 14.6.1). With
 * --self, every rank writes through an open of its own (MPI_COMM_SELF): the driver cannot
 * tell that the writers are on several nodes (a format-2 file is not refused then).
 *
 * usage: mn_interleave TARGET CONFIG [--count=N] [--sync] [--self] [--format=2]
 * Prints "mn_interleave: N blocks checked, N bad" on rank 0; exit 1 if any is bad or any
 * MPI call failed. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096

static int failed;

static void check(int rc, const char *what, int rank)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, msg);
    failed = 1;
}

static void fill(unsigned char *b, int rank, long i)
{
    uint64_t x = (uint64_t) rank * 0x9E3779B97F4A7C15ull + (uint64_t) i * 0xBF58476D1CE4E5B9ull + 1;
    for (int k = 0; k < BLOCK; k += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* half compressible: a repeated word, then noise */
        uint64_t v = (k / 8) % 4 < 2 ? (uint64_t) (rank + 1) * 0x0101010101010101ull : x;
        memcpy(b + k, &v, 8);
    }
}

static long verify(MPI_File fh, int who, int nprocs, long count, int rank)
{
    unsigned char *want = malloc(BLOCK), *got = malloc(BLOCK);
    long bad = 0;
    for (long i = 0; i < count; i++) {
        MPI_Offset off = ((MPI_Offset) i * nprocs + who) * BLOCK;
        memset(got, 0xEE, BLOCK);
        check(MPI_File_read_at(fh, off, got, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), "read", rank);
        fill(want, who, i);
        if (memcmp(want, got, BLOCK) != 0) {
            if (bad < 3)
                fprintf(stderr, "rank %d: block %ld of rank %d (offset %lld) differs\n", rank, i,
                        who, (long long) off);
            bad++;
        }
    }
    free(want);
    free(got);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s TARGET CONFIG [--count=N] [--sync] [--format=2]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *target = argv[1], *config = argv[2];
    long count = 2000;
    int sync = 0, self = 0;
    const char *format = NULL;
    for (int a = 3; a < argc; a++) {
        if (strncmp(argv[a], "--count=", 8) == 0)
            count = atol(argv[a] + 8);
        else if (strcmp(argv[a], "--sync") == 0)
            sync = 1;
        else if (strcmp(argv[a], "--self") == 0)
            self = 1;
        else if (strncmp(argv[a], "--format=", 9) == 0)
            format = argv[a] + 9;
    }
    MPI_Info info;
    MPI_Info_create(&info);
    if (strncmp(target, "hcomp:", 6) == 0) {
        if (config[0])
            MPI_Info_set(info, "hcomp_config", config);
        MPI_Info_set(info, "hcomp_write_buffer", "0");
        if (format)
            MPI_Info_set(info, "hcomp_format", format);
    }
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    check(MPI_File_open(self ? MPI_COMM_SELF : MPI_COMM_WORLD, target,
                        MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), "open", rank);
    /* the storage's bandwidth is priced as shared by the job's ranks on this node, not
     * by the job's ranks on every node (hcomp_node_writers, docs/ENGINE.md) */
    if (!failed && strncmp(target, "hcomp:", 6) == 0) {
        MPI_Comm node;
        int here, flag = 0;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &here);
        MPI_Comm_free(&node);
        MPI_Info got;
        char val[MPI_MAX_INFO_VAL + 1] = "";
        check(MPI_File_get_info(fh, &got), "get_info", rank);
        MPI_Info_get(got, "hcomp_node_writers", MPI_MAX_INFO_VAL, val, &flag);
        MPI_Info_free(&got);
        if (!flag || atoi(val) != here) {
            fprintf(stderr, "rank %d: hcomp_node_writers is '%s', want %d (ranks on this node)\n",
                    rank, flag ? val : "(missing)", here);
            failed = 1;
        }
    }
    unsigned char *buf = malloc(BLOCK);
    long bad = 0;
    if (!failed) {
        for (long i = 0; i < count && !failed; i++) {
            fill(buf, rank, i);
            check(MPI_File_write_at(fh, ((MPI_Offset) i * nprocs + rank) * BLOCK, buf, BLOCK,
                                    MPI_BYTE, MPI_STATUS_IGNORE), "write", rank);
        }
        if (sync && !self) {
            check(MPI_File_sync(fh), "sync", rank);
            MPI_Barrier(MPI_COMM_WORLD);
            check(MPI_File_sync(fh), "sync", rank);
            bad += verify(fh, (rank + 1) % nprocs, nprocs, count, rank);
        }
        check(MPI_File_close(&fh), "close", rank);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(MPI_File_open(MPI_COMM_WORLD, target, MPI_MODE_RDONLY, info, &fh), "reopen", rank);
    if (!failed) {
        MPI_Offset size = 0;
        check(MPI_File_get_size(fh, &size), "get_size", rank);
        if (size != (MPI_Offset) count * nprocs * BLOCK) {
            fprintf(stderr, "rank %d: size %lld, want %lld\n", rank, (long long) size,
                    (long long) count * nprocs * BLOCK);
            failed = 1;
        }
        bad += verify(fh, (rank + 1) % nprocs, nprocs, count, rank);
        check(MPI_File_close(&fh), "close", rank);
    }
    long tot = 0;
    int anyfail = 0;
    MPI_Allreduce(&bad, &tot, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&failed, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    char host[MPI_MAX_PROCESSOR_NAME];
    int hl;
    MPI_Get_processor_name(host, &hl);
    if (rank == 0)
        printf("mn_interleave: %d ranks, %ld blocks checked, %ld bad%s\n", nprocs,
               count * nprocs * (sync ? 2 : 1), tot, anyfail ? ", and MPI calls failed" : "");
    free(buf);
    MPI_Info_free(&info);
    MPI_Finalize();
    return tot || anyfail ? 1 : 0;
}
