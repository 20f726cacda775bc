/* Failing the HDF5 test programs of tests/abi: FAIL prints the program's name (H5CHECK_NAME,
 * defined before this is included), the rank (the program's `rank`), the message and where,
 * then aborts every rank; H5OK fails when an HDF5 call returns a negative value. */
#ifndef HCOMP_TESTS_ABI_H5CHECK_H
#define HCOMP_TESTS_ABI_H5CHECK_H

#include <mpi.h>
#include <stdio.h>

#define FAIL(...)                                                                  \
    do {                                                                           \
        fprintf(stderr, "%s: rank %d: ", H5CHECK_NAME, rank);                      \
        fprintf(stderr, __VA_ARGS__);                                              \
        fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                         \
        MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    } while (0)

#define H5OK(expr)                                                                 \
    do {                                                                           \
        if ((expr) < 0)                                                            \
            FAIL("%s failed", #expr);                                              \
    } while (0)

#endif
