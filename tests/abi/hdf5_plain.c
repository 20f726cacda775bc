/*
 * A plain HDF5 file made serially, then opened in parallel through hcomp: (or under
 * ROMIO_FSTYPE_FORCE=hcomp:) for reading and writing: the way a serial pre-processing
 * step hands a file to a parallel job. Built against Debian's MPICH/HDF5.
 *
 * usage: mpiexec -n N hdf5_plain PATH NAME
 *   PATH  the file on disk; NAME  the name the parallel opens use: hcomp:PATH, or PATH
 *         itself when the environment forces hcomp (ROMIO_FSTYPE_FORCE=hcomp:)
 *
 * Rank 0 alone creates PATH with HDF5's default (POSIX, sec2) driver, a 2-D dataset of
 * doubles (a smooth field), and closes it. Then every rank opens NAME read-write with
 * the MPI-IO driver (H5Pset_fapl_mpio), reads the whole dataset collectively and checks
 * every value, overwrites its band of rows with the field plus 1000 (collective
 * hyperslab write) and adds a second dataset written collectively (one int per rank).
 * The file is reopened read-only through NAME and both datasets are checked by every
 * rank; then rank 0 checks that PATH is still a plain HDF5 file (its first 8 bytes are
 * HDF5's signature, not "HCOMPMAP") and reads it back with the POSIX driver. Prints
 * "hdf5_plain: MPI library: PATH" (where MPI_File_open came from) and, on success,
 * "hdf5_plain: OK"; exits non-zero with a message naming what went wrong otherwise.
 */
#define _GNU_SOURCE /* dladdr */
#include <hdf5.h>
#include <mpi.h>

#define H5CHECK_NAME "hdf5_plain"
#include "h5check.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NY 300 /* rows: split in bands between the ranks */
#define NX 257 /* columns */
#define DSET "field"
#define DSET2 "ranks"

static int rank, nprocs;

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

/* the value at row i after the parallel write: the field, plus 1000 in every band */
static double want_at(int i, int j, int written)
{
    return field(i, j) + (written ? 1000.0 : 0.0);
}

static long check_all(const double *buf, int written, const char *what)
{
    long bad = 0;
    for (int i = 0; i < NY; i++)
        for (int j = 0; j < NX; j++)
            if (buf[(size_t) i * NX + j] != want_at(i, j, written)) {
                if (bad < 5)
                    fprintf(stderr, "hdf5_plain: rank %d: %s: [%d][%d] = %.17g, expected %.17g\n",
                            rank, what, i, j, buf[(size_t) i * NX + j], want_at(i, j, written));
                bad++;
            }
    return bad;
}

static void read_field(hid_t file, hid_t dxpl, double *all)
{
    hid_t dset = H5Dopen2(file, DSET, H5P_DEFAULT);
    H5OK(dset);
    for (size_t k = 0; k < (size_t) NY * NX; k++)
        all[k] = -1.0e300;
    H5OK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, all));
    H5OK(H5Dclose(dset));
}

static void all_ok(long bad, const char *what)
{
    long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total != 0)
        FAIL("%s: %ld wrong values (all ranks)", what, total);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s PATH NAME (NAME: hcomp:PATH, or PATH under "
                    "ROMIO_FSTYPE_FORCE=hcomp:)\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *path = argv[1], *name = argv[2];
    if (nprocs > NY)
        FAIL("at most %d ranks", NY);
    double *all = malloc((size_t) NY * NX * sizeof(double));
    if (all == NULL)
        FAIL("out of memory");
    hsize_t dims[2] = {NY, NX};

    if (rank == 0) {
        Dl_info where;
        if (dladdr((void *) MPI_File_open, &where) != 0 && where.dli_fname != NULL)
            printf("hdf5_plain: MPI library: %s\n", where.dli_fname);
        else
            printf("hdf5_plain: MPI library: unknown\n");
        fflush(stdout);

        /* ---- the serial step: a plain HDF5 file with the POSIX driver ---- */
        hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (file < 0)
            FAIL("serial H5Fcreate(\"%s\") failed", path);
        hid_t space = H5Screate_simple(2, dims, NULL);
        H5OK(space);
        hid_t dset = H5Dcreate2(file, DSET, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT);
        H5OK(dset);
        for (int i = 0; i < NY; i++)
            for (int j = 0; j < NX; j++)
                all[(size_t) i * NX + j] = field(i, j);
        H5OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
        H5OK(H5Dclose(dset));
        H5OK(H5Sclose(space));
        H5OK(H5Fclose(file));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- the parallel step: read-write through MPI-IO ---- */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5OK(fapl);
    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5OK(dxpl);
    H5OK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));

    hid_t file = H5Fopen(name, H5F_ACC_RDWR, fapl);
    if (file < 0)
        FAIL("parallel H5Fopen(\"%s\", read-write) of the serially written file failed", name);
    read_field(file, dxpl, all);
    all_ok(check_all(all, 0, "the serially written field, read in parallel"), "read-write open");

    hsize_t start[2], count[2];
    band(rank, nprocs, &start[0], &count[0]);
    start[1] = 0;
    count[1] = NX;
    double *mine = malloc(count[0] * NX * sizeof(double) + 1);
    if (mine == NULL)
        FAIL("out of memory");
    for (hsize_t i = 0; i < count[0]; i++)
        for (int j = 0; j < NX; j++)
            mine[i * NX + j] = want_at((int) (start[0] + i), j, 1);
    hid_t dset = H5Dopen2(file, DSET, H5P_DEFAULT);
    H5OK(dset);
    hid_t fspace = H5Dget_space(dset);
    H5OK(fspace);
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    hid_t mspace = H5Screate_simple(2, count, NULL);
    H5OK(mspace);
    H5OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, mine));
    H5OK(H5Sclose(mspace));
    H5OK(H5Sclose(fspace));
    H5OK(H5Dclose(dset));

    /* a new dataset (new metadata in the plain file): one int per rank */
    hsize_t n2 = (hsize_t) nprocs, one = 1, at = (hsize_t) rank;
    hid_t space2 = H5Screate_simple(1, &n2, NULL);
    H5OK(space2);
    hid_t dset2 = H5Dcreate2(file, DSET2, H5T_NATIVE_INT, space2, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
    H5OK(dset2);
    H5OK(H5Sselect_hyperslab(space2, H5S_SELECT_SET, &at, NULL, &one, NULL));
    hid_t m2 = H5Screate_simple(1, &one, NULL);
    H5OK(m2);
    int v = 7000 + rank;
    H5OK(H5Dwrite(dset2, H5T_NATIVE_INT, m2, space2, dxpl, &v));
    H5OK(H5Sclose(m2));
    H5OK(H5Sclose(space2));
    H5OK(H5Dclose(dset2));
    H5OK(H5Fclose(file));

    /* ---- read-only through MPI-IO: both datasets ---- */
    file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    if (file < 0)
        FAIL("parallel H5Fopen(\"%s\", read-only) after the writes failed", name);
    read_field(file, dxpl, all);
    all_ok(check_all(all, 1, "the field after the parallel write"), "read-only open");
    int *ranks = malloc((size_t) nprocs * sizeof(int));
    if (ranks == NULL)
        FAIL("out of memory");
    dset2 = H5Dopen2(file, DSET2, H5P_DEFAULT);
    H5OK(dset2);
    H5OK(H5Dread(dset2, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, dxpl, ranks));
    long bad = 0;
    for (int r = 0; r < nprocs; r++)
        bad += ranks[r] != 7000 + r;
    all_ok(bad, "the dataset added in parallel");
    H5OK(H5Dclose(dset2));
    H5OK(H5Fclose(file));
    H5OK(H5Pclose(dxpl));
    H5OK(H5Pclose(fapl));

    /* ---- still a plain HDF5 file, readable without MPI-IO ---- */
    int ok = 1;
    if (rank == 0) {
        unsigned char sig[8] = {0};
        static const unsigned char hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
        FILE *f = fopen(path, "rb");
        if (f == NULL || fread(sig, 1, 8, f) != 8 || memcmp(sig, hdf5_sig, 8) != 0) {
            fprintf(stderr, "hdf5_plain: %s does not start with HDF5's signature (first bytes "
                    "%02x %02x %02x %02x %02x %02x %02x %02x%s)\n", path, sig[0], sig[1], sig[2],
                    sig[3], sig[4], sig[5], sig[6], sig[7],
                    memcmp(sig, "HCOMPMAP", 8) == 0 ? ": it became an hcomp file" : "");
            ok = 0;
        }
        if (f)
            fclose(f);
        hid_t pf = ok ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
        if (ok && pf < 0) {
            fprintf(stderr, "hdf5_plain: serial H5Fopen(\"%s\") failed\n", path);
            ok = 0;
        }
        if (ok) {
            read_field(pf, H5P_DEFAULT, all);
            if (check_all(all, 1, "serial read after the parallel job") != 0)
                ok = 0;
            H5OK(H5Fclose(pf));
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok)
        FAIL("%s is not the plain HDF5 file it must be after the parallel job", path);
    if (rank == 0) {
        printf("hdf5_plain: serial create, parallel read-write and read-only opens of %s by %d "
               "ranks, verified\n", name, nprocs);
        printf("hdf5_plain: OK\n");
    }
    free(ranks);
    free(mine);
    free(all);
    MPI_Finalize();
    return 0;
}
