/* Write-back after close across two real nodes (issue 43): the writers' pieces land on
 * each node's own RAM tier, the close returns, and the process moves them to the
 * volume behind the program.
 *
 *   --write            every rank writes its BLOCK (independent writes) with
 *                      hcomp_drain=writeback and closes; rank 0 prints "closed"; then every
 *                      rank reads the block of a rank on the other node (it waits for that
 *                      node's write-back) and its own, byte for byte, and MPI_Finalize
 *                      waits for the rest.
 *   --write --kill     the same write and close; then the ranks of the node that is not
 *                      rank 0's print "closed-<rank>" and kill themselves (SIGKILL: their
 *                      write-back dies half done); the others wait to be killed.
 *   --missing=W        (a job on rank 0's node) the blocks of the W writers' ranks on the
 *                      other node do not read: the error names that node and the
 *                      `hcomp drain` command; no wrong byte is returned.
 *   --verify=W         every block of the W writers reads back, byte for byte.
 *
 * usage: mn_writeback TARGET CONFIG MODE... */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (4 * 1024 * 1024)

static void fill(unsigned char *b, int rank)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t) (rank + 1);
    for (int k = 0; k < BLOCK; k += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t v = (uint64_t) (k / 512) + ((x & 0xff) << 40) + ((uint64_t) rank << 56);
        memcpy(b + k, &v, 8);       /* a ramp with noise: compresses about 2x */
    }
}

static void die(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "mn_writeback: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* read writer r's block through fh: 0 right, 1 failed (msg), wrong bytes abort */
static int read_block(MPI_File fh, int r, unsigned char *got, unsigned char *exp, char *msg)
{
    MPI_Status st;
    int rc = MPI_File_read_at(fh, (MPI_Offset) r * BLOCK, got, BLOCK, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS) {
        int len;
        MPI_Error_string(rc, msg, &len);
        return 1;
    }
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    fill(exp, r);
    if (n != BLOCK || memcmp(got, exp, BLOCK) != 0) {
        fprintf(stderr, "mn_writeback: writer %d's block read back wrong (%d bytes)\n", r, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mn_writeback TARGET CONFIG --write [--kill] | --missing=W | --verify=W\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *target = argv[1], *config = argv[2];
    int write = 0, kill_other = 0, missing = 0, verify = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--write") == 0)
            write = 1;
        else if (strcmp(argv[i], "--kill") == 0)
            kill_other = 1;
        else if (strncmp(argv[i], "--missing=", 10) == 0)
            missing = atoi(argv[i] + 10);
        else if (strncmp(argv[i], "--verify=", 9) == 0)
            verify = atoi(argv[i] + 9);
    }
    char host[MPI_MAX_PROCESSOR_NAME], host0[MPI_MAX_PROCESSOR_NAME];
    int hl;
    MPI_Get_processor_name(host, &hl);
    memcpy(host0, host, sizeof(host));
    MPI_Bcast(host0, sizeof(host0), MPI_CHAR, 0, MPI_COMM_WORLD);
    int on_node0 = strcmp(host, host0) == 0;
    /* every rank's node, for finding a rank on the other node */
    char *hosts = malloc((size_t) nprocs * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "hcomp_config", config);
    MPI_Info_set(info, "hcomp_drain", "writeback");
    MPI_Info_set(info, "hcomp_drain_wait", "120");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    unsigned char *got = malloc(BLOCK), *exp = malloc(BLOCK);
    char msg[MPI_MAX_ERROR_STRING];
    MPI_File fh;
    int rc;

    if (write) {
        rc = MPI_File_open(MPI_COMM_WORLD, target, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
        if (rc != MPI_SUCCESS)
            die("open to write", rc);
        fill(exp, rank);
        rc = MPI_File_write_at(fh, (MPI_Offset) rank * BLOCK, exp, BLOCK, MPI_BYTE,
                               MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            die("write", rc);
        double t0 = MPI_Wtime();
        if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS)
            die("close", rc);
        double t_close = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("closed (rank 0's close: %.3f s)\n", t_close);
            fflush(stdout);
        }
        if (kill_other) {
            if (!on_node0) {
                printf("closed-%d: killing myself before my write-back ends\n", rank);
                fflush(stdout);
                raise(SIGKILL);
            }
            for (;;)
                pause();        /* killed with the job */
        }
        /* a rank on the other node, whose block this rank reads while it drains */
        int other = -1;
        for (int k = 1; k < nprocs && other < 0; k++) {
            int r = (rank + k) % nprocs;
            if (strcmp(hosts + (size_t) r * MPI_MAX_PROCESSOR_NAME, host) != 0)
                other = r;
        }
        rc = MPI_File_open(MPI_COMM_SELF, target, MPI_MODE_RDONLY, info, &fh);
        if (rc != MPI_SUCCESS)
            die("open to read", rc);
        t0 = MPI_Wtime();
        if (other >= 0 && read_block(fh, other, got, exp, msg) != 0) {
            fprintf(stderr, "mn_writeback: rank %d (%s) reading writer %d's block: %s\n", rank,
                    host, other, msg);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double t_other = MPI_Wtime() - t0;
        if (read_block(fh, rank, got, exp, msg) != 0) {
            fprintf(stderr, "mn_writeback: rank %d reading its own block: %s\n", rank, msg);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_File_close(&fh);
        printf("rank %d (%s): writer %d's block (other node) read in %.3f s after the close\n",
               rank, host, other, t_other);
    }
    if (missing > 0 || verify > 0) {
        int writers = missing > 0 ? missing : verify;
        rc = MPI_File_open(MPI_COMM_WORLD, target, MPI_MODE_RDONLY, info, &fh);
        if (rc != MPI_SUCCESS)
            die("open to verify", rc);
        int bad = 0;
        for (int r = rank; r < writers; r += nprocs) {
            int failed = read_block(fh, r, got, exp, msg);
            if (verify && failed) {
                fprintf(stderr, "mn_writeback: writer %d's block: %s\n", r, msg);
                bad++;
            } else if (missing && failed) {
                /* the writers alternate nodes (the bed places ranks round robin): an odd
                 * writer was on node1, which must be named with the command */
                if (!strstr(msg, "node1") || !strstr(msg, "hcomp drain")) {
                    fprintf(stderr, "mn_writeback: writer %d's block failed without naming "
                            "node1 and hcomp drain: %s\n", r, msg);
                    bad++;
                } else
                    printf("writer %d's block: %s\n", r, msg);
            } else if (missing && !failed)
                printf("writer %d's block reads (its write-back was done)\n", r);
        }
        MPI_File_close(&fh);
        int all = 0;
        MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (all > 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (rank == 0)
            printf("%s: %d writers' blocks checked\n", verify ? "verified" : "missing", writers);
    }
    MPI_Info_free(&info);
    free(got);
    free(exp);
    free(hosts);
    MPI_Finalize();
    return 0;
}
