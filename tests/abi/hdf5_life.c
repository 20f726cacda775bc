/*
 * The life of a parallel HDF5 file after its first write, built against Debian's
 * MPICH/HDF5 and run on hcomp: and ufs: names alike.
 *
 * usage: mpiexec -n N hdf5_life FILE
 *
 * 1. create (collective): a group, attributes, a contiguous dataset of doubles
 *    (collective write), an extendible chunked dataset of int32 (independent
 *    writes), a chunked float32 dataset through shuffle + deflate (collective:
 *    parallel HDF5 writes filtered data only so), a compact dataset;
 * 2. reopen read-write STEPS times, as a checkpointing code does: grow the chunked
 *    dataset by one band and write it, rewrite the contiguous one whole, update an
 *    attribute, flush (H5Fflush, which syncs), and at one step create a dataset and
 *    unlink it again;
 * 3. reopen read-only: every value of every dataset and attribute checked, whole and
 *    through strided hyperslabs at odd offsets (each rank its own), and the unlinked
 *    dataset gone;
 * 4. every rank opens the file alone (MPI_COMM_SELF) read-only at once and reads a
 *    band another rank wrote.
 * With HDF5_LIFE_COLLECTIVE_METADATA set, metadata is read and written collectively and
 * objects of 4 KiB or more are aligned to 64 KiB.
 * Prints "hdf5_life: OK" on success; exits non-zero, naming what went wrong, else.
 */
#include <hdf5.h>
#include <mpi.h>

#define H5CHECK_NAME "hdf5_life"
#include "h5check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 3
#define NC 4099           /* contiguous doubles per rank: not a multiple of anything */
#define MB 1000           /* chunked int32 per rank per band */
#define CHUNK 700         /* its chunks straddle the bands */
#define NF 5000           /* filtered float32 per rank */
#define NCOMPACT 64

static int rank, nprocs;

/* the values of each dataset; step 0 is the first write */
static double contig_value(int step, hsize_t i)
{
    return (double) i * 0.5 + step * 1.0e6 + (double) (i % 7) / 8.0;
}
static int chunked_value(hsize_t band, hsize_t i) { return (int) (band * 1000003u + i * 7u); }
static float filtered_value(hsize_t i) { return (float) (i / 16) * 0.25f + (float) (i % 3); }
static int compact_value(int i) { return 1000 - i * i; }

static hid_t fapl(MPI_Comm comm)
{
    hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    H5OK(p);
    H5OK(H5Pset_fapl_mpio(p, comm, MPI_INFO_NULL));
    if (getenv("HDF5_LIFE_COLLECTIVE_METADATA")) {
        /* what large-scale users set: metadata read by one rank and broadcast, written
         * collectively, objects aligned to 64 KiB (so data and metadata interleave) */
        H5OK(H5Pset_all_coll_metadata_ops(p, 1));
        H5OK(H5Pset_coll_metadata_write(p, 1));
        H5OK(H5Pset_alignment(p, 4096, 65536));
    }
    return p;
}

static hid_t dxpl(H5FD_mpio_xfer_t mode)
{
    hid_t p = H5Pcreate(H5P_DATASET_XFER);
    H5OK(p);
    H5OK(H5Pset_dxpl_mpio(p, mode));
    return p;
}

/* write (or read, if rd) count elements from start of a 1-D dataset */
static void slab(hid_t d, hid_t type, hsize_t start, hsize_t count, hid_t xfer, void *buf, int rd)
{
    hid_t fs = H5Dget_space(d);
    H5OK(fs);
    H5OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
    hid_t ms = H5Screate_simple(1, &count, NULL);
    H5OK(ms);
    if (rd)
        H5OK(H5Dread(d, type, ms, fs, xfer, buf));
    else
        H5OK(H5Dwrite(d, type, ms, fs, xfer, buf));
    H5OK(H5Sclose(ms));
    H5OK(H5Sclose(fs));
}

static void write_attr_int(hid_t obj, const char *name, int v)
{
    hid_t a;
    if (H5Aexists(obj, name) > 0) {
        a = H5Aopen(obj, name, H5P_DEFAULT);
    } else {
        hid_t s = H5Screate(H5S_SCALAR);
        a = H5Acreate2(obj, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
        H5OK(H5Sclose(s));
    }
    H5OK(a);
    H5OK(H5Awrite(a, H5T_NATIVE_INT, &v));
    H5OK(H5Aclose(a));
}

static int read_attr_int(hid_t obj, const char *name)
{
    int v = -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    H5OK(a);
    H5OK(H5Aread(a, H5T_NATIVE_INT, &v));
    H5OK(H5Aclose(a));
    return v;
}

static void write_contig(hid_t g, int step, hid_t xfer)
{
    double *v = malloc(NC * sizeof *v);
    if (!v)
        FAIL("out of memory");
    hsize_t start = (hsize_t) rank * NC;
    for (hsize_t i = 0; i < NC; i++)
        v[i] = contig_value(step, start + i);
    hid_t d = H5Dopen2(g, "contig", H5P_DEFAULT);
    H5OK(d);
    slab(d, H5T_NATIVE_DOUBLE, start, NC, xfer, v, 0);
    H5OK(H5Dclose(d));
    free(v);
}

/* band b of the chunked dataset: rank r's MB values at (b * nprocs + r) * MB */
static void write_band(hid_t d, hsize_t b, hid_t xfer)
{
    int v[MB];
    hsize_t start = (b * (hsize_t) nprocs + (hsize_t) rank) * MB;
    for (hsize_t i = 0; i < MB; i++)
        v[i] = chunked_value(b, start + i);
    slab(d, H5T_NATIVE_INT, start, MB, xfer, v, 0);
}

static void create(const char *name)
{
    hid_t fa = fapl(MPI_COMM_WORLD);
    hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fa);
    if (f < 0)
        FAIL("H5Fcreate(%s) failed", name);
    hid_t coll = dxpl(H5FD_MPIO_COLLECTIVE), ind = dxpl(H5FD_MPIO_INDEPENDENT);
    hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(g);
    write_attr_int(f, "step", 0);
    {   /* a string attribute on the group */
        hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR);
        H5OK(H5Tset_size(t, 16));
        hid_t a = H5Acreate2(g, "units", t, s, H5P_DEFAULT, H5P_DEFAULT);
        H5OK(a);
        char units[16] = "metres per sec";
        H5OK(H5Awrite(a, t, units));
        H5OK(H5Aclose(a));
        H5OK(H5Sclose(s));
        H5OK(H5Tclose(t));
    }
    hsize_t n = (hsize_t) nprocs * NC;
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, "contig", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(d);
    H5OK(H5Dclose(d));
    H5OK(H5Sclose(s));
    write_contig(g, 0, coll);

    hsize_t cur = (hsize_t) nprocs * MB, max = H5S_UNLIMITED, chunk = CHUNK;
    s = H5Screate_simple(1, &cur, &max);
    hid_t dc = H5Pcreate(H5P_DATASET_CREATE);
    H5OK(H5Pset_chunk(dc, 1, &chunk));
    d = H5Dcreate2(g, "chunked", H5T_NATIVE_INT, s, H5P_DEFAULT, dc, H5P_DEFAULT);
    H5OK(d);
    write_band(d, 0, ind);
    H5OK(H5Dclose(d));
    H5OK(H5Pclose(dc));
    H5OK(H5Sclose(s));

    n = (hsize_t) nprocs * NF;
    chunk = 1024;
    s = H5Screate_simple(1, &n, NULL);
    dc = H5Pcreate(H5P_DATASET_CREATE);
    H5OK(H5Pset_chunk(dc, 1, &chunk));
    H5OK(H5Pset_shuffle(dc));
    H5OK(H5Pset_deflate(dc, 4));
    d = H5Dcreate2(f, "filtered", H5T_NATIVE_FLOAT, s, H5P_DEFAULT, dc, H5P_DEFAULT);
    H5OK(d);
    {
        float *v = malloc(NF * sizeof *v);
        if (!v)
            FAIL("out of memory");
        for (hsize_t i = 0; i < NF; i++)
            v[i] = filtered_value((hsize_t) rank * NF + i);
        slab(d, H5T_NATIVE_FLOAT, (hsize_t) rank * NF, NF, coll, v, 0);
        free(v);
    }
    H5OK(H5Dclose(d));
    H5OK(H5Pclose(dc));
    H5OK(H5Sclose(s));

    n = NCOMPACT;
    s = H5Screate_simple(1, &n, NULL);
    dc = H5Pcreate(H5P_DATASET_CREATE);
    H5OK(H5Pset_layout(dc, H5D_COMPACT));
    d = H5Dcreate2(f, "compact", H5T_NATIVE_INT, s, H5P_DEFAULT, dc, H5P_DEFAULT);
    H5OK(d);
    int cv[NCOMPACT];
    for (int i = 0; i < NCOMPACT; i++)
        cv[i] = compact_value(i);
    H5OK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, cv));
    H5OK(H5Dclose(d));
    H5OK(H5Pclose(dc));
    H5OK(H5Sclose(s));

    H5OK(H5Gclose(g));
    H5OK(H5Pclose(coll));
    H5OK(H5Pclose(ind));
    H5OK(H5Fclose(f));
    H5OK(H5Pclose(fa));
}

static void checkpoint(const char *name, int step)
{
    hid_t fa = fapl(MPI_COMM_WORLD);
    hid_t f = H5Fopen(name, H5F_ACC_RDWR, fa);
    if (f < 0)
        FAIL("step %d: H5Fopen(%s, RDWR) failed", step, name);
    hid_t coll = dxpl(H5FD_MPIO_COLLECTIVE), ind = dxpl(H5FD_MPIO_INDEPENDENT);
    hid_t g = H5Gopen2(f, "g", H5P_DEFAULT);
    H5OK(g);
    if (read_attr_int(f, "step") != step - 1)
        FAIL("step %d: the attribute \"step\" reads %d after reopening", step,
             read_attr_int(f, "step"));
    hid_t d = H5Dopen2(g, "chunked", H5P_DEFAULT);
    H5OK(d);
    hsize_t grown = (hsize_t) (step + 1) * (hsize_t) nprocs * MB;
    H5OK(H5Dset_extent(d, &grown));
    write_band(d, (hsize_t) step, step % 2 ? ind : coll);
    H5OK(H5Dclose(d));
    write_contig(g, step, coll);
    write_attr_int(f, "step", step);
    if (step == 2) {    /* a scratch dataset that does not survive */
        hsize_t n = 12345;
        hid_t s = H5Screate_simple(1, &n, NULL);
        d = H5Dcreate2(g, "scratch", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5OK(d);
        H5OK(H5Dclose(d));
        H5OK(H5Sclose(s));
        H5OK(H5Ldelete(g, "scratch", H5P_DEFAULT));
    }
    H5OK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    H5OK(H5Gclose(g));
    H5OK(H5Pclose(coll));
    H5OK(H5Pclose(ind));
    H5OK(H5Fclose(f));
    H5OK(H5Pclose(fa));
}

static void verify(const char *name)
{
    hid_t fa = fapl(MPI_COMM_WORLD);
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, fa);
    if (f < 0)
        FAIL("H5Fopen(%s, RDONLY) failed", name);
    hid_t coll = dxpl(H5FD_MPIO_COLLECTIVE), ind = dxpl(H5FD_MPIO_INDEPENDENT);
    if (read_attr_int(f, "step") != STEPS)
        FAIL("the attribute \"step\" reads %d, not %d", read_attr_int(f, "step"), STEPS);
    hid_t g = H5Gopen2(f, "g", H5P_DEFAULT);
    H5OK(g);
    if (H5Lexists(g, "scratch", H5P_DEFAULT) != 0)
        FAIL("the unlinked dataset g/scratch still exists");
    {
        hid_t a = H5Aopen(g, "units", H5P_DEFAULT), t = H5Tcopy(H5T_C_S1);
        H5OK(a);
        H5OK(H5Tset_size(t, 16));
        char units[16];
        H5OK(H5Aread(a, t, units));
        if (memcmp(units, "metres per sec", 15) != 0)
            FAIL("the attribute g/units reads \"%.16s\"", units);
        H5OK(H5Tclose(t));
        H5OK(H5Aclose(a));
    }
    /* contiguous: whole, collectively, then a strided selection at an odd offset */
    hsize_t n = (hsize_t) nprocs * NC;
    double *v = malloc(n * sizeof *v);
    if (!v)
        FAIL("out of memory");
    hid_t d = H5Dopen2(g, "contig", H5P_DEFAULT);
    H5OK(d);
    H5OK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, coll, v));
    for (hsize_t i = 0; i < n; i++)
        if (v[i] != contig_value(STEPS, i))
            FAIL("g/contig[%llu] = %g, expected %g", (unsigned long long) i, v[i],
                 contig_value(STEPS, i));
    {
        hid_t fs = H5Dget_space(d);
        hsize_t start = 3 + (hsize_t) rank * 11, stride = 5 + (hsize_t) rank,
                count = (n - start) / stride - 1,
                block = 2;
        H5OK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, &stride, &count, &block));
        hsize_t m = count * block;
        hid_t ms = H5Screate_simple(1, &m, NULL);
        memset(v, 0, n * sizeof *v);
        H5OK(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, ind, v));
        for (hsize_t k = 0; k < count; k++)
            for (hsize_t b = 0; b < block; b++) {
                hsize_t at = start + k * stride + b;
                if (v[k * block + b] != contig_value(STEPS, at))
                    FAIL("strided read of g/contig: element %llu = %g, expected %g",
                         (unsigned long long) at, v[k * block + b], contig_value(STEPS, at));
            }
        H5OK(H5Sclose(ms));
        H5OK(H5Sclose(fs));
    }
    H5OK(H5Dclose(d));
    free(v);

    /* chunked: its extent, every band, and a read across chunk and band edges */
    d = H5Dopen2(g, "chunked", H5P_DEFAULT);
    H5OK(d);
    hid_t fs = H5Dget_space(d);
    hsize_t dims;
    H5OK(H5Sget_simple_extent_dims(fs, &dims, NULL));
    H5OK(H5Sclose(fs));
    if (dims != (hsize_t) (STEPS + 1) * (hsize_t) nprocs * MB)
        FAIL("g/chunked has %llu elements, expected %llu", (unsigned long long) dims,
             (unsigned long long) (STEPS + 1) * (hsize_t) nprocs * MB);
    int *iv = malloc(dims * sizeof *iv);
    if (!iv)
        FAIL("out of memory");
    H5OK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, iv));
    for (hsize_t i = 0; i < dims; i++) {
        hsize_t b = i / ((hsize_t) nprocs * MB);
        if (iv[i] != chunked_value(b, i))
            FAIL("g/chunked[%llu] = %d, expected %d", (unsigned long long) i, iv[i],
                 chunked_value(b, i));
    }
    {
        hsize_t start = (hsize_t) nprocs * MB - 333 + (hsize_t) rank * 101, count = 1777;
        memset(iv, 0, count * sizeof *iv);
        slab(d, H5T_NATIVE_INT, start, count, ind, iv, 1);
        for (hsize_t i = 0; i < count; i++) {
            hsize_t at = start + i, b = at / ((hsize_t) nprocs * MB);
            if (iv[i] != chunked_value(b, at))
                FAIL("partial read of g/chunked: element %llu = %d, expected %d",
                     (unsigned long long) at, iv[i], chunked_value(b, at));
        }
    }
    free(iv);
    H5OK(H5Dclose(d));
    H5OK(H5Gclose(g));

    /* filtered: whole (each rank), values exact */
    n = (hsize_t) nprocs * NF;
    float *fv = malloc(n * sizeof *fv);
    if (!fv)
        FAIL("out of memory");
    d = H5Dopen2(f, "filtered", H5P_DEFAULT);
    H5OK(d);
    H5OK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, coll, fv));
    for (hsize_t i = 0; i < n; i++)
        if (fv[i] != filtered_value(i))
            FAIL("filtered[%llu] = %g, expected %g", (unsigned long long) i, fv[i],
                 filtered_value(i));
    H5OK(H5Dclose(d));
    free(fv);

    d = H5Dopen2(f, "compact", H5P_DEFAULT);
    H5OK(d);
    int cv[NCOMPACT];
    H5OK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, ind, cv));
    for (int i = 0; i < NCOMPACT; i++)
        if (cv[i] != compact_value(i))
            FAIL("compact[%d] = %d, expected %d", i, cv[i], compact_value(i));
    H5OK(H5Dclose(d));

    H5OK(H5Pclose(coll));
    H5OK(H5Pclose(ind));
    H5OK(H5Fclose(f));
    H5OK(H5Pclose(fa));
}

/* each rank alone, all at once: the band of the next rank in g/contig */
static void verify_alone(const char *name)
{
    hid_t fa = fapl(MPI_COMM_SELF);
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, fa);
    if (f < 0)
        FAIL("H5Fopen(%s, RDONLY) on MPI_COMM_SELF failed", name);
    hid_t d = H5Dopen2(f, "g/contig", H5P_DEFAULT);
    H5OK(d);
    double *v = malloc(NC * sizeof *v);
    if (!v)
        FAIL("out of memory");
    hsize_t start = (hsize_t) ((rank + 1) % nprocs) * NC;
    slab(d, H5T_NATIVE_DOUBLE, start, NC, H5P_DEFAULT, v, 1);
    for (hsize_t i = 0; i < NC; i++)
        if (v[i] != contig_value(STEPS, start + i))
            FAIL("alone: g/contig[%llu] = %g, expected %g", (unsigned long long) (start + i),
                 v[i], contig_value(STEPS, start + i));
    free(v);
    H5OK(H5Dclose(d));
    H5OK(H5Fclose(f));
    H5OK(H5Pclose(fa));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2)
        FAIL("usage: hdf5_life FILE");
    create(argv[1]);
    for (int step = 1; step <= STEPS; step++)
        checkpoint(argv[1], step);
    verify(argv[1]);
    verify_alone(argv[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("hdf5_life: OK\n");
    MPI_Finalize();
    return 0;
}
