/*
 * The HDF5 file the POSIX read adapter's tests read: written by an MPI program with
 * parallel HDF5 (Debian's, built with h5pcc.mpich, run on our MPICH), once through
 * hcomp: and once to a plain file, so that what serial tools print of the two can be
 * compared.
 *
 * usage: mpiexec -n N h5_write FILE      (FILE: hcomp:/dir/a.h5 or /dir/a.h5)
 *
 * Writes, each rank its band, with collective hyperslab writes:
 *   /grid/temperature   NY x NX doubles (a smooth field), contiguous, attribute
 *                       "units" (a string) and "step" (an int)
 *   /grid/ids           NY*4 64-bit integers, contiguous
 *   /particles/x        float32, chunked (chunks of CHUNK), NP values
 * then closes the file, reopens it read-only and checks every value. Prints
 * "h5_write: OK" on success.
 */
#include <hdf5.h>
#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NY 240
#define NX 333
#define NP 100000
#define CHUNK 4096

static int rank, nprocs;

#define CHECK(cond, ...)                                                            \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "h5_write: rank %d: ", rank);                           \
            fprintf(stderr, __VA_ARGS__);                                           \
            fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                      \
            MPI_Abort(MPI_COMM_WORLD, 1);                                           \
        }                                                                           \
    } while (0)

static double temp(long y, long x) { return 300.0 + 20.0 * sin(y * 0.05) * cos(x * 0.03); }
static long long ident(long i) { return 1000000007LL * i % 999983LL; }
static float part(long i) { return (float) (i * 0.25 + sin(i * 0.001)); }

/* rows [*lo, *hi) of n for this rank */
static void band(long n, long *lo, long *hi)
{
    *lo = n * rank / nprocs;
    *hi = n * (rank + 1) / nprocs;
}

static void write_1d(hid_t file, const char *name, hid_t mem, hid_t ftype, long n, hsize_t chunk,
                     const void *mine, long lo, long hi)
{
    hsize_t dims[1] = {(hsize_t) n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (chunk)
        H5Pset_chunk(dcpl, 1, &chunk);
    hid_t d = H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(d >= 0, "cannot create %s", name);
    hsize_t start[1] = {(hsize_t) lo}, count[1] = {(hsize_t) (hi - lo)};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(1, count, NULL);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    CHECK(H5Dwrite(d, mem, ms, space, xfer, mine) >= 0, "cannot write %s", name);
    H5Pclose(xfer);
    H5Sclose(ms);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 2, "usage: h5_write FILE");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0, "cannot create %s", argv[1]);
    H5Gclose(H5Gcreate2(file, "/grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Gclose(H5Gcreate2(file, "/particles", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));

    long lo, hi;
    band(NY, &lo, &hi);
    double *t = malloc(sizeof(double) * (size_t) ((hi - lo) * NX + 1));
    for (long y = lo; y < hi; y++)
        for (long x = 0; x < NX; x++)
            t[(y - lo) * NX + x] = temp(y, x);
    hsize_t dims[2] = {NY, NX};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(file, "/grid/temperature", H5T_IEEE_F64LE, space, H5P_DEFAULT,
                         H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0, "cannot create /grid/temperature");
    hsize_t start[2] = {(hsize_t) lo, 0}, count[2] = {(hsize_t) (hi - lo), NX};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(2, count, NULL);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, space, xfer, t) >= 0, "cannot write temperature");
    /* attributes are written collectively (every rank, same values) */
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 7);
    hid_t a = H5Acreate2(d, "units", str, as, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, str, "kelvin");
    H5Aclose(a);
    int step = 42;
    a = H5Acreate2(d, "step", H5T_STD_I32LE, as, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &step);
    H5Aclose(a);
    H5Tclose(str);
    H5Sclose(as);
    H5Pclose(xfer);
    H5Sclose(ms);
    H5Sclose(space);
    H5Dclose(d);

    band(NY * 4, &lo, &hi);
    long long *ids = malloc(sizeof(long long) * (size_t) (hi - lo + 1));
    for (long i = lo; i < hi; i++)
        ids[i - lo] = ident(i);
    write_1d(file, "/grid/ids", H5T_NATIVE_LLONG, H5T_STD_I64LE, NY * 4, 0, ids, lo, hi);
    band(NP, &lo, &hi);
    float *px = malloc(sizeof(float) * (size_t) (hi - lo + 1));
    for (long i = lo; i < hi; i++)
        px[i - lo] = part(i);
    write_1d(file, "/particles/x", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, NP, CHUNK, px, lo, hi);
    CHECK(H5Fclose(file) >= 0, "cannot close %s", argv[1]);

    /* read back, all of it, on every rank */
    file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    CHECK(file >= 0, "cannot reopen %s", argv[1]);
    double *all = malloc(sizeof(double) * NY * NX);
    d = H5Dopen2(file, "/grid/temperature", H5P_DEFAULT);
    CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0, "read temperature");
    for (long y = 0; y < NY; y++)
        for (long x = 0; x < NX; x++)
            CHECK(all[y * NX + x] == temp(y, x), "temperature[%ld][%ld] differs", y, x);
    H5Dclose(d);
    float *pall = malloc(sizeof(float) * NP);
    d = H5Dopen2(file, "/particles/x", H5P_DEFAULT);
    CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, pall) >= 0, "read particles");
    for (long i = 0; i < NP; i++)
        CHECK(pall[i] == part(i), "particles/x[%ld] differs", i);
    H5Dclose(d);
    H5Fclose(file);
    H5Pclose(fapl);
    free(t);
    free(ids);
    free(px);
    free(all);
    free(pall);
    if (rank == 0)
        printf("h5_write: OK\n");
    MPI_Finalize();
    return 0;
}
