/*
 * Parallel HDF5 on an hcomp: file, built against Debian's MPICH/HDF5.
 *
 * usage: mpiexec -n N hdf5_hcomp hcomp:/dir/t.h5
 *
 * Every rank writes its band of rows of a 2-D dataset of doubles (a smooth
 * field) with a collective hyperslab write (H5FD_MPIO_COLLECTIVE) through the
 * MPI-IO file driver (H5Pset_fapl_mpio on MPI_COMM_WORLD). The file is closed
 * and reopened read-only; every rank reads the whole dataset back collectively
 * and checks every value (so each rank also sees the other ranks' data), then
 * its own band again with a hyperslab read. Rank 0 then checks that the file
 * on disk is an hcomp mapping file (its first 8 bytes are "HCOMPMAP"), not a
 * plain HDF5 file. Rank 0 also prints which shared object MPI_File_open
 * came from ("hdf5_hcomp: MPI library: PATH"), so that a script can check
 * which libmpich.so.12 was loaded. Prints "hdf5_hcomp: OK" on success; exits non-zero, with a
 * message naming what went wrong, otherwise.
 */
#define _GNU_SOURCE /* dladdr */
#include <hdf5.h>
#include <mpi.h>

#define H5CHECK_NAME "hdf5_hcomp"
#include "h5check.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NY 300 /* rows: split in bands between the ranks */
#define NX 257 /* columns */
#define DSET "field"

static int rank;

/* the smooth field: a few long waves and a gentle slope */
static double field(int i, int j)
{
    const double pi = 3.14159265358979323846;
    double y = (double) i / (NY - 1), x = (double) j / (NX - 1);
    return sin(2.0 * pi * x) * cos(pi * y) + 0.25 * sin(6.0 * pi * (x + y)) + 0.5 * x * y +
           1.0e-3 * i;
}

/* the rows [*start, *start + *count) of rank r among n */
static void band(int r, int n, hsize_t *start, hsize_t *count)
{
    hsize_t base = NY / n, extra = NY % n;
    *start = r * base + ((hsize_t) r < extra ? (hsize_t) r : extra);
    *count = base + ((hsize_t) r < extra ? 1 : 0);
}

static long check_values(const double *buf, hsize_t row0, hsize_t nrows, const char *what)
{
    long bad = 0;
    for (hsize_t i = 0; i < nrows; i++)
        for (int j = 0; j < NX; j++) {
            double want = field((int) (row0 + i), j), got = buf[i * NX + j];
            if (got != want) {
                if (bad < 5)
                    fprintf(stderr, "hdf5_hcomp: rank %d: %s: [%llu][%d] = %.17g, expected %.17g\n",
                            rank, what, (unsigned long long) (row0 + i), j, got, want);
                bad++;
            }
        }
    return bad;
}

int main(int argc, char **argv)
{
    int nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s hcomp:/path/file.h5\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *name = argv[1];
    if (nprocs > NY)
        FAIL("at most %d ranks", NY);

    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        unsigned maj, min, rel;
        MPI_Get_library_version(version, &len);
        H5get_libversion(&maj, &min, &rel);
        printf("hdf5_hcomp: %d ranks, HDF5 %u.%u.%u, MPI: %.*s\n", nprocs, maj, min, rel,
               (int) strcspn(version, "\n"), version);
        Dl_info where;
        if (dladdr((void *) MPI_File_open, &where) != 0 && where.dli_fname != NULL)
            printf("hdf5_hcomp: MPI library: %s\n", where.dli_fname);
        else
            printf("hdf5_hcomp: MPI library: unknown\n");
        fflush(stdout);
    }

    hsize_t dims[2] = {NY, NX};
    hsize_t start[2], count[2];
    band(rank, nprocs, &start[0], &count[0]);
    start[1] = 0;
    count[1] = NX;

    /* ---- create and write collectively ---- */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5OK(fapl);
    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5OK(dxpl);
    H5OK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));

    hid_t file = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0)
        FAIL("H5Fcreate(\"%s\") failed", name);
    hid_t space = H5Screate_simple(2, dims, NULL);
    H5OK(space);
    hid_t dset = H5Dcreate2(file, DSET, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    H5OK(dset);

    double *mine = malloc(count[0] * NX * sizeof(double));
    if (mine == NULL)
        FAIL("out of memory");
    for (hsize_t i = 0; i < count[0]; i++)
        for (int j = 0; j < NX; j++)
            mine[i * NX + j] = field((int) (start[0] + i), j);

    hid_t fspace = H5Dget_space(dset);
    H5OK(fspace);
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    hid_t mspace = H5Screate_simple(2, count, NULL);
    H5OK(mspace);
    H5OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, mine));
    H5OK(H5Sclose(mspace));
    H5OK(H5Sclose(fspace));
    H5OK(H5Dclose(dset));
    H5OK(H5Sclose(space));
    H5OK(H5Fclose(file));

    /* ---- reopen and read everything back ---- */
    file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    if (file < 0)
        FAIL("H5Fopen(\"%s\") failed after the write", name);
    dset = H5Dopen2(file, DSET, H5P_DEFAULT);
    H5OK(dset);
    space = H5Dget_space(dset);
    H5OK(space);
    hsize_t got_dims[2];
    if (H5Sget_simple_extent_ndims(space) != 2)
        FAIL("dataset has %d dimensions, expected 2", H5Sget_simple_extent_ndims(space));
    H5OK(H5Sget_simple_extent_dims(space, got_dims, NULL));
    if (got_dims[0] != NY || got_dims[1] != NX)
        FAIL("dataset is %llu x %llu, expected %d x %d", (unsigned long long) got_dims[0],
             (unsigned long long) got_dims[1], NY, NX);

    double *all = malloc((size_t) NY * NX * sizeof(double));
    if (all == NULL)
        FAIL("out of memory");
    for (size_t k = 0; k < (size_t) NY * NX; k++)
        all[k] = -1.0e300;
    H5OK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, all));
    long bad = check_values(all, 0, NY, "whole dataset");

    /* this rank's band again, through a hyperslab */
    memset(mine, 0, count[0] * NX * sizeof(double));
    fspace = H5Dget_space(dset);
    H5OK(fspace);
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    mspace = H5Screate_simple(2, count, NULL);
    H5OK(mspace);
    H5OK(H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, mine));
    bad += check_values(mine, start[0], count[0], "own hyperslab");
    H5OK(H5Sclose(mspace));
    H5OK(H5Sclose(fspace));
    H5OK(H5Sclose(space));
    H5OK(H5Dclose(dset));
    H5OK(H5Fclose(file));
    H5OK(H5Pclose(dxpl));
    H5OK(H5Pclose(fapl));
    free(all);
    free(mine);

    long total_bad = 0;
    MPI_Allreduce(&bad, &total_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total_bad != 0)
        FAIL("%ld wrong values read back (all ranks)", total_bad);

    /* ---- the file on disk is an hcomp mapping file ---- */
    int map_ok = 1;
    if (rank == 0) {
        const char *path = strncmp(name, "hcomp:", 6) == 0 ? name + 6 : name;
        char magic[8] = {0};
        FILE *f = fopen(path, "rb");
        if (f == NULL) {
            fprintf(stderr, "hdf5_hcomp: cannot open %s on disk\n", path);
            map_ok = 0;
        } else {
            if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "HCOMPMAP", 8) != 0) {
                fprintf(stderr, "hdf5_hcomp: %s does not start with \"HCOMPMAP\" "
                        "(first bytes: %02x %02x %02x %02x %02x %02x %02x %02x): "
                        "not an hcomp mapping file\n", path,
                        (unsigned char) magic[0], (unsigned char) magic[1],
                        (unsigned char) magic[2], (unsigned char) magic[3],
                        (unsigned char) magic[4], (unsigned char) magic[5],
                        (unsigned char) magic[6], (unsigned char) magic[7]);
                map_ok = 0;
            }
            fclose(f);
        }
    }
    MPI_Bcast(&map_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!map_ok)
        FAIL("the file is not an hcomp mapping file");

    if (rank == 0) {
        printf("hdf5_hcomp: %d x %d doubles written by %d ranks and verified\n", NY, NX, nprocs);
        printf("hdf5_hcomp: OK\n");
    }
    MPI_Finalize();
    return 0;
}
