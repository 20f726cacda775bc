/* hello_hcomp: the smallest MPI-IO program on hcomp. Each rank writes its own block of
 * a shared file collectively, syncs, reads it back and checks it. Nothing in it is
 * hcomp's but the "hcomp:" prefix of the file name.
 *   mpicc -o hello_hcomp examples/hello_hcomp.c
 *   mpiexec -n 2 ./hello_hcomp hcomp:/tmp/hello.dat */
#include <mpi.h>
#include <stdio.h>

#define N (1 << 20) /* doubles per rank: 8 MiB */

static double out[N], in[N];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *name = argc > 1 ? argv[1] : "hcomp:hello.dat";
    for (int i = 0; i < N; i++)
        out[i] = rank + i * 1e-3; /* smooth data: it compresses */
    MPI_File fh;
    MPI_Offset at = (MPI_Offset) rank * N * sizeof(double);
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, at, out, N, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh); /* durable: the bytes survive the loss of the node */
    MPI_File_read_at_all(fh, at, in, N, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    for (int i = 0; i < N; i++)
        bad += in[i] != out[i];
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hello_hcomp: %s %s\n", name, bad ? "FAILED" : "OK");
    MPI_Finalize();
    return bad != 0;
}
