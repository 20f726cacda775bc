/* Where do the ranks run? For tests/multinode/bed-selfcheck.sh.
 * Every rank prints "RANK r HOST name LOCAL local_rank/local_size" (the processor name and
 * its MPI_COMM_TYPE_SHARED communicator); rank 0 then prints "NCOMMS n", the number of
 * shared-memory communicators, and "SUMCHECK ok" if a value sent round the world with
 * MPI_Sendrecv between neighbours (so across nodes) arrived intact.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, lrank, lsize, len, leaders, is_leader, left, right, got = -1;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm local;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    printf("RANK %d HOST %s LOCAL %d/%d\n", rank, name, lrank, lsize);
    fflush(stdout);

    is_leader = lrank == 0;
    MPI_Reduce(&is_leader, &leaders, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int ok = got == left, all_ok;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("NCOMMS %d\n", leaders);
        printf("SUMCHECK %s\n", all_ok ? "ok" : "bad");
    }
    MPI_Comm_free(&local);
    MPI_Finalize();
    return 0;
}
