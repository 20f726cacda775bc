/* scidata_demo: a small "main job" that writes a realistic scientific dataset
 * through hcomp (transparent compression on storage tiers) and, for comparison,
 * through ROMIO's plain ufs driver; reads both back, checks every byte, and
 * reports the timings and where hcomp put the data.
 *
 * Build and run (PREFIX = the MPICH installation with the hcomp driver):
 *
 *   $PREFIX/bin/mpicc -O2 -o scidata_demo examples/scidata_demo.c -lhcomp -lm
 *   $PREFIX/bin/mpiexec -n 4 ./scidata_demo --dir /tmp/demo --mib 32 --codec zstd
 *
 * Options:
 *   --dir DIR       where the two files go (default ./hcomp-demo-data)
 *   --mib N         dataset size per rank in MiB (default 32)
 *   --codec NAME    hcomp_codec hint: none lz4 zstd zlib bzip2 brotli snappy lzma,
 *                   optionally NAME:LEVEL (default: the driver's default, lz4)
 *   --config FILE   hcomp_config hint: a tier configuration JSON (default: the
 *                   HCOMP_CONFIG environment variable, else hcomp's built-in
 *                   RAM tier + the file's own directory)
 *   --reps N        timed repetitions per driver (default 3; the median is shown)
 *   --keep          keep the files at the end (default: delete them)
 *
 * The only hcomp-specific things an application does are: prefix the file name
 * with "hcomp:" and, optionally, pass hcomp_* hints. Everything else is
 * standard MPI-IO. The report at the end uses hcomp_stat_path() from hcomp.h.
 *
 * What to expect: smooth float64 fields still have noisy low mantissa bits, so
 * lossless general-purpose codecs gain little on them (zstd: about 1.1x); the
 * sorted positions and the sequential ids compress better. hcomp stores a piece
 * uncompressed (codec "none") when compressing it would not make it smaller.
 *
 * File layout (identical in both files):
 *   [0, 4096)                 a text header describing the layout
 *   then 4 fields             temperature, pressure, density, velocity_x: each a
 *                             global GZ x GY x GX array of doubles (C order),
 *                             block-decomposed over the ranks (subarray view)
 *   then particles            one block per rank: x[], y[], z[], px[], py[],
 *                             pz[] (double) and id[] (int64), NPART each
 */
#include <mpi.h>
#include <hcomp.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MiB (1024.0 * 1024.0)
#define HEADER_BYTES 4096
#define NFIELDS 4
#define PARTICLE_BYTES (6 * 8 + 8) /* x y z px py pz + id */
#define PI 3.14159265358979323846

static const char *const field_names[NFIELDS] = {"temperature", "pressure", "density",
                                                 "velocity_x"};

static int rank, nprocs;

/* ---- errors ------------------------------------------------------------------ */

/* Stop everything on an MPI error, saying which call failed and why. */
#define CHECK(call)                                                                \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != MPI_SUCCESS) {                                                  \
            char msg_[MPI_MAX_ERROR_STRING];                                       \
            int len_;                                                              \
            MPI_Error_string(rc_, msg_, &len_);                                    \
            fprintf(stderr, "scidata_demo: rank %d: %s failed: %s\n", rank, #call, msg_); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "scidata_demo: rank %d: out of memory (%zu bytes)\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static void *xcalloc(size_t n)
{
    void *p = xmalloc(n);
    memset(p, 0, n);
    return p;
}

/* ---- options ------------------------------------------------------------------- */

typedef struct {
    const char *dir, *codec, *config;
    int mib, reps, keep;
} options;

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: scidata_demo [--dir DIR] [--mib N] [--codec NAME[:LEVEL]] "
                        "[--config FILE] [--reps N] [--keep]\n");
}

static options parse_options(int argc, char **argv)
{
    options o = {"./hcomp-demo-data", NULL, NULL, 32, 3, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--keep") == 0) {
            o.keep = 1;
            continue;
        }
        if (!v) {
            usage();
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (strcmp(a, "--dir") == 0)
            o.dir = v;
        else if (strcmp(a, "--mib") == 0)
            o.mib = atoi(v);
        else if (strcmp(a, "--codec") == 0)
            o.codec = v;
        else if (strcmp(a, "--config") == 0)
            o.config = v;
        else if (strcmp(a, "--reps") == 0)
            o.reps = atoi(v);
        else {
            usage();
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i++;
    }
    if (o.mib < 1 || o.mib > 4096 || o.reps < 1) {
        usage();
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return o;
}

/* ---- the dataset ------------------------------------------------------------------ */

typedef struct {
    int gdims[3];          /* global grid (z, y, x) */
    int ldims[3], start[3]; /* this rank's block */
    size_t ncells;         /* cells in this rank's block */
    double *field[NFIELDS];
    long long npart;       /* particles per rank (same on every rank) */
    double *pos[3], *mom[3];
    int64_t *id;
    /* file layout */
    MPI_Offset field_off[NFIELDS], part_off, file_size;
} dataset;

/* Deterministic hash -> uniform number in [0, 1), for the small noise. */
static double hash_uniform(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (double)(x >> 11) / 9007199254740992.0;
}

/* A tiny random generator for the particles (xorshift64*). */
static uint64_t rng_state;
static double rng_uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
/* Standard normal deviate by the Box-Muller transform. */
static double rng_normal(void)
{
    double u1 = rng_uniform(), u2 = rng_uniform();
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
}

/* Gaussian "hot spots" shared by every rank (fixed centers, widths, amplitudes). */
#define NBUMPS 6
static const double bump[NBUMPS][5] = {
    /* x, y, z (in [0,1)), width, amplitude in K */
    {0.25, 0.30, 0.40, 0.08, 45.0}, {0.70, 0.65, 0.55, 0.12, 30.0},
    {0.50, 0.85, 0.20, 0.05, 60.0}, {0.15, 0.75, 0.80, 0.10, -20.0},
    {0.85, 0.20, 0.70, 0.07, 25.0}, {0.45, 0.45, 0.90, 0.15, 15.0},
};

/* Temperature (K) at a point of the unit cube: background, bumps, waves. */
static double temperature_at(double x, double y, double z)
{
    double t = 290.0 + 8.0 * sin(2 * PI * x) * cos(2 * PI * y) + 3.0 * sin(4 * PI * z);
    for (int b = 0; b < NBUMPS; b++) {
        double dx = x - bump[b][0], dy = y - bump[b][1], dz = z - bump[b][2];
        t += bump[b][4] * exp(-(dx * dx + dy * dy + dz * dz) / (2 * bump[b][3] * bump[b][3]));
    }
    return t;
}

static void split(int n, int parts, int index, int *start, int *len)
{
    int base = n / parts, rem = n % parts;
    *len = base + (index < rem);
    *start = index * base + (index < rem ? index : rem);
}

/* Decide the sizes for `mib` MiB per rank (3/4 fields, 1/4 particles) and fill
 * this rank's part. */
static void make_dataset(dataset *d, int mib)
{
    memset(d, 0, sizeof *d);
    double budget = mib * MiB;

    /* grid: a cube of L^3 cells per rank, ranks arranged by MPI_Dims_create */
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(nprocs, 3, dims);
    int L = (int)cbrt(0.75 * budget / (NFIELDS * 8.0));
    if (L < 2)
        L = 2;
    int coords[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
    for (int k = 0; k < 3; k++) {
        d->gdims[k] = dims[k] * L;
        split(d->gdims[k], dims[k], coords[k], &d->start[k], &d->ldims[k]);
    }
    d->ncells = (size_t)d->ldims[0] * d->ldims[1] * d->ldims[2];
    double rest = budget - (double)d->ncells * NFIELDS * 8;
    d->npart = rest > PARTICLE_BYTES ? (long long)(rest / PARTICLE_BYTES) : 1;

    /* fields */
    for (int f = 0; f < NFIELDS; f++)
        d->field[f] = xmalloc(d->ncells * sizeof(double));
    const double R = 287.05; /* specific gas constant of air, J/(kg K) */
    size_t n = 0;
    for (int i = 0; i < d->ldims[0]; i++) {
        for (int j = 0; j < d->ldims[1]; j++) {
            for (int k = 0; k < d->ldims[2]; k++, n++) {
                long gi = d->start[0] + i, gj = d->start[1] + j, gk = d->start[2] + k;
                double z = (gi + 0.5) / d->gdims[0], y = (gj + 0.5) / d->gdims[1],
                       x = (gk + 0.5) / d->gdims[2];
                uint64_t cell = ((uint64_t)gi * d->gdims[1] + gj) * d->gdims[2] + gk;
                double noise = hash_uniform(cell) - 0.5; /* sensor-like small noise */
                double T = temperature_at(x, y, z) + 0.05 * noise;
                double rho = 1.2 * exp(-z / 0.8) * (1.0 + 0.1 * cos(2 * PI * (x + y))) *
                             (1.0 + 1e-4 * (hash_uniform(cell ^ 0xABCDEFull) - 0.5));
                d->field[0][n] = T;
                d->field[1][n] = rho * R * T; /* ideal gas */
                d->field[2][n] = rho;
                d->field[3][n] = 10.0 * sin(2 * PI * y) * cos(2 * PI * z) + 0.01 * noise;
            }
        }
    }

    /* particles: sorted by cell of a coarse 4x4x4-cell grid over this rank's
     * block, small jitter inside the cell, Maxwellian momenta at the local
     * temperature, sequential global ids */
    long long np = d->npart;
    for (int c = 0; c < 3; c++) {
        d->pos[c] = xmalloc((size_t)np * sizeof(double));
        d->mom[c] = xmalloc((size_t)np * sizeof(double));
    }
    d->id = xmalloc((size_t)np * sizeof(int64_t));
    int cdims[3];
    for (int c = 0; c < 3; c++)
        cdims[c] = d->ldims[c] / 4 > 0 ? d->ldims[c] / 4 : 1;
    long long ncoarse = (long long)cdims[0] * cdims[1] * cdims[2];
    rng_state = 0x853C49E6748FEA9Bull ^ ((uint64_t)rank * 0x9E3779B97F4A7C15ull);
    const double kB = 1.380649e-23, mass = 1.67262192e-27; /* protons */
    for (long long p = 0; p < np; p++) {
        long long cell = p * ncoarse / np; /* ordered by cell */
        int ci = (int)(cell / ((long long)cdims[1] * cdims[2]));
        int cj = (int)((cell / cdims[2]) % cdims[1]);
        int ck = (int)(cell % cdims[2]);
        double zz = (d->start[0] + (ci + 0.5 + 0.8 * (rng_uniform() - 0.5)) * d->ldims[0] / cdims[0]) / d->gdims[0];
        double yy = (d->start[1] + (cj + 0.5 + 0.8 * (rng_uniform() - 0.5)) * d->ldims[1] / cdims[1]) / d->gdims[1];
        double xx = (d->start[2] + (ck + 0.5 + 0.8 * (rng_uniform() - 0.5)) * d->ldims[2] / cdims[2]) / d->gdims[2];
        d->pos[0][p] = xx;
        d->pos[1][p] = yy;
        d->pos[2][p] = zz;
        double sigma = mass * sqrt(kB * temperature_at(xx, yy, zz) / mass);
        for (int c = 0; c < 3; c++)
            d->mom[c][p] = sigma * rng_normal();
        d->id[p] = (int64_t)rank * np + p;
    }

    /* file layout */
    MPI_Offset field_bytes = (MPI_Offset)d->gdims[0] * d->gdims[1] * d->gdims[2] * 8;
    for (int f = 0; f < NFIELDS; f++)
        d->field_off[f] = HEADER_BYTES + f * field_bytes;
    d->part_off = HEADER_BYTES + NFIELDS * field_bytes;
    d->file_size = d->part_off + (MPI_Offset)nprocs * np * PARTICLE_BYTES;
}

static void free_dataset(dataset *d)
{
    for (int f = 0; f < NFIELDS; f++)
        free(d->field[f]);
    for (int c = 0; c < 3; c++)
        free(d->pos[c]), free(d->mom[c]);
    free(d->id);
}

/* The text header (rank 0 writes it). */
static void make_header(const dataset *d, char *h)
{
    memset(h, ' ', HEADER_BYTES);
    int n = snprintf(h, HEADER_BYTES,
                     "SCIDATA v1\n"
                     "grid %d %d %d (z y x), C order, float64\n"
                     "fields %s %s %s %s at offsets %lld %lld %lld %lld\n"
                     "particles %lld per rank x %d ranks at offset %lld: "
                     "x y z px py pz (float64) id (int64), one block per rank\n",
                     d->gdims[0], d->gdims[1], d->gdims[2], field_names[0], field_names[1],
                     field_names[2], field_names[3], (long long)d->field_off[0],
                     (long long)d->field_off[1], (long long)d->field_off[2],
                     (long long)d->field_off[3], d->npart, nprocs, (long long)d->part_off);
    h[n] = '\n';
    h[HEADER_BYTES - 1] = '\n';
}

/* ---- writing and reading -------------------------------------------------------- */

/* Collective write (or read) of the whole dataset to an open file. For reading,
 * `d` receives the data (its buffers must be allocated like the original's). */
static void transfer(MPI_File fh, dataset *d, int writing)
{
    MPI_Status st;
    char header[HEADER_BYTES];

    /* header: rank 0 only, independent I/O */
    if (rank == 0) {
        if (writing) {
            make_header(d, header);
            CHECK(MPI_File_write_at(fh, 0, header, HEADER_BYTES, MPI_BYTE, &st));
        } else {
            CHECK(MPI_File_read_at(fh, 0, header, HEADER_BYTES, MPI_BYTE, &st));
            if (strncmp(header, "SCIDATA v1\n", 11) != 0) {
                fprintf(stderr, "scidata_demo: bad header read back\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }

    /* fields: each rank's block is a subarray of the global grid */
    MPI_Datatype block;
    CHECK(MPI_Type_create_subarray(3, d->gdims, d->ldims, d->start, MPI_ORDER_C, MPI_DOUBLE,
                                   &block));
    CHECK(MPI_Type_commit(&block));
    for (int f = 0; f < NFIELDS; f++) {
        CHECK(MPI_File_set_view(fh, d->field_off[f], MPI_DOUBLE, block, "native", MPI_INFO_NULL));
        if (writing)
            CHECK(MPI_File_write_all(fh, d->field[f], (int)d->ncells, MPI_DOUBLE, &st));
        else
            CHECK(MPI_File_read_all(fh, d->field[f], (int)d->ncells, MPI_DOUBLE, &st));
    }
    MPI_Type_free(&block);

    /* particles: this rank's block, one array after the other */
    CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Offset off = d->part_off + (MPI_Offset)rank * d->npart * PARTICLE_BYTES;
    void *arrays[7] = {d->pos[0], d->pos[1], d->pos[2], d->mom[0], d->mom[1], d->mom[2], d->id};
    for (int a = 0; a < 7; a++, off += d->npart * 8) {
        if (writing)
            CHECK(MPI_File_write_at_all(fh, off, arrays[a], (int)d->npart * 8, MPI_BYTE, &st));
        else
            CHECK(MPI_File_read_at_all(fh, off, arrays[a], (int)d->npart * 8, MPI_BYTE, &st));
    }
}

/* Delete a file if it exists (rank 0), so each repetition starts fresh. */
static void delete_if_exists(const char *name)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        (void)MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
}

static double timed_write(const char *name, MPI_Info info, dataset *d)
{
    MPI_File fh;
    delete_if_exists(name);
    double t0 = MPI_Wtime();
    CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    transfer(fh, d, 1);
    CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double timed_read(const char *name, MPI_Info info, dataset *into)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, info, &fh));
    MPI_Offset size;
    CHECK(MPI_File_get_size(fh, &size));
    if (size != into->file_size) {
        fprintf(stderr, "scidata_demo: %s has size %lld, expected %lld\n", name,
                (long long)size, (long long)into->file_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    transfer(fh, into, 0);
    CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

/* Number of bytes of `got` that differ from `want` (all arrays). */
static long long count_differences(const dataset *want, const dataset *got)
{
    long long bad = 0;
    for (int f = 0; f < NFIELDS; f++)
        if (memcmp(want->field[f], got->field[f], want->ncells * 8) != 0)
            for (size_t i = 0; i < want->ncells * 8; i++)
                bad += ((const char *)want->field[f])[i] != ((const char *)got->field[f])[i];
    const void *w[7] = {want->pos[0], want->pos[1], want->pos[2], want->mom[0], want->mom[1],
                        want->mom[2], want->id};
    const void *g[7] = {got->pos[0], got->pos[1], got->pos[2], got->mom[0], got->mom[1],
                        got->mom[2], got->id};
    for (int a = 0; a < 7; a++)
        if (memcmp(w[a], g[a], (size_t)want->npart * 8) != 0)
            for (size_t i = 0; i < (size_t)want->npart * 8; i++)
                bad += ((const char *)w[a])[i] != ((const char *)g[a])[i];
    return bad;
}

/* A dataset with the same shape as d and zeroed buffers, to read into. */
static void make_empty_like(const dataset *d, dataset *e)
{
    *e = *d;
    for (int f = 0; f < NFIELDS; f++)
        e->field[f] = xcalloc(d->ncells * 8);
    for (int c = 0; c < 3; c++) {
        e->pos[c] = xcalloc((size_t)d->npart * 8);
        e->mom[c] = xcalloc((size_t)d->npart * 8);
    }
    e->id = xcalloc((size_t)d->npart * 8);
}

static void clear_dataset(dataset *e)
{
    for (int f = 0; f < NFIELDS; f++)
        memset(e->field[f], 0, e->ncells * 8);
    for (int c = 0; c < 3; c++) {
        memset(e->pos[c], 0, (size_t)e->npart * 8);
        memset(e->mom[c], 0, (size_t)e->npart * 8);
    }
    memset(e->id, 0, (size_t)e->npart * 8);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- the report ------------------------------------------------------------------ */

static const char *human(double bytes, char *buf, size_t len)
{
    if (bytes >= 1024.0 * MiB)
        snprintf(buf, len, "%.2f GiB", bytes / (1024.0 * MiB));
    else if (bytes >= MiB)
        snprintf(buf, len, "%.2f MiB", bytes / MiB);
    else if (bytes >= 1024.0)
        snprintf(buf, len, "%.1f KiB", bytes / 1024.0);
    else
        snprintf(buf, len, "%.0f B", bytes);
    return buf;
}

static int report_storage(const char *path)
{
    hcomp_stats st;
    hcomp_error err;
    char h1[32], h2[32], h3[32];
    if (hcomp_stat_path(path, &st, &err) != HCOMP_OK) {
        fprintf(stderr, "scidata_demo: hcomp_stat_path(%s): %s: %s\n", path,
                hcomp_code_name(err.code), err.msg);
        return 1;
    }
    struct stat sb;
    long long mapping = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
    printf("\nWhere hcomp put %s (hcomp_stat_path):\n", path);
    printf("  logical size %s, data %s, stored %s in %" PRIu64 " pieces; mapping file %lld bytes\n",
           human((double)st.logical_size, h1, sizeof h1), human((double)st.live_bytes, h2, sizeof h2),
           human((double)st.stored_bytes, h3, sizeof h3), st.pieces, mapping);
    printf("  %-10s %-44s %14s %14s %8s\n", "tier", "directory", "raw bytes", "stored bytes",
           "pieces");
    for (size_t i = 0; i < st.ntiers && i < HCOMP_STATS_MAX_TIERS; i++)
        printf("  %-10s %-44s %14" PRIu64 " %14" PRIu64 " %8" PRIu64 "\n", st.tier[i].name,
               st.tier[i].dir, st.tier[i].raw_bytes, st.tier[i].stored_bytes, st.tier[i].pieces);
    printf("  %-10s %14s %14s %8s %8s\n", "codec", "raw bytes", "stored bytes", "pieces", "ratio");
    for (unsigned c = 0; c < HCOMP_CODEC_COUNT; c++) {
        if (st.codec[c].pieces == 0)
            continue;
        const hcomp_codec *cd = hcomp_codec_by_id(c);
        printf("  %-10s %14" PRIu64 " %14" PRIu64 " %8" PRIu64 " %8.2f\n", cd ? cd->name : "?",
               st.codec[c].raw_bytes, st.codec[c].stored_bytes, st.codec[c].pieces,
               st.codec[c].stored_bytes ? (double)st.codec[c].raw_bytes / st.codec[c].stored_bytes : 0.0);
    }
    printf("  overall compression ratio: %.2f (data bytes / stored bytes)\n",
           st.stored_bytes ? (double)st.live_bytes / (double)st.stored_bytes : 0.0);
    return 0;
}

/* ---- main ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    options opt = parse_options(argc, argv);

    /* the directory and the two file names */
    if (rank == 0 && mkdir(opt.dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "scidata_demo: cannot create %s: %s\n", opt.dir, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char hcomp_path[4096], hcomp_name[4200], ufs_name[4200];
    snprintf(hcomp_path, sizeof hcomp_path, "%s/scidata.h5c", opt.dir);
    snprintf(hcomp_name, sizeof hcomp_name, "hcomp:%s", hcomp_path);
    snprintf(ufs_name, sizeof ufs_name, "ufs:%s/scidata.raw", opt.dir);

    /* hints: only hcomp reads the hcomp_* keys; ufs ignores them */
    MPI_Info hints;
    MPI_Info_create(&hints);
    if (opt.codec)
        MPI_Info_set(hints, "hcomp_codec", opt.codec);
    if (opt.config)
        MPI_Info_set(hints, "hcomp_config", opt.config);

    /* (a) generate */
    double tg = MPI_Wtime();
    dataset data, back;
    make_dataset(&data, opt.mib);
    make_empty_like(&data, &back);
    MPI_Barrier(MPI_COMM_WORLD);
    tg = MPI_Wtime() - tg;

    /* (b), (c) write, read and verify, opt.reps times per driver */
    const char *names[2] = {hcomp_name, ufs_name};
    const char *labels[2] = {"hcomp", "ufs"};
    double *tw[2], *tr[2];
    long long bad[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        tw[k] = xmalloc(sizeof(double) * (size_t)opt.reps);
        tr[k] = xmalloc(sizeof(double) * (size_t)opt.reps);
    }
    for (int rep = 0; rep < opt.reps; rep++) {
        for (int k = 0; k < 2; k++) {
            tw[k][rep] = timed_write(names[k], hints, &data);
            clear_dataset(&back);
            tr[k][rep] = timed_read(names[k], hints, &back);
            long long b = count_differences(&data, &back), total = 0;
            MPI_Allreduce(&b, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            bad[k] += total;
        }
    }

    /* (d) the report */
    int failed = bad[0] != 0 || bad[1] != 0;
    if (rank == 0) {
        char a[32], b[32];
        double total = (double)data.file_size;
        printf("scidata_demo: %d ranks, %d MiB per rank, hcomp_codec=%s, hcomp_config=%s\n",
               nprocs, opt.mib, opt.codec ? opt.codec : "(default)",
               opt.config ? opt.config : getenv("HCOMP_CONFIG") ? getenv("HCOMP_CONFIG")
                                                                 : "(built-in default)");
        printf("dataset: %s in total (generated in %.2f s)\n", human(total, a, sizeof a), tg);
        printf("  %d fields (%s, %s, %s, %s) of %d x %d x %d doubles, %s each\n", NFIELDS,
               field_names[0], field_names[1], field_names[2], field_names[3], data.gdims[0],
               data.gdims[1], data.gdims[2],
               human((double)data.gdims[0] * data.gdims[1] * data.gdims[2] * 8, b, sizeof b));
        printf("  %lld particles (x y z px py pz id), %s\n", data.npart * nprocs,
               human((double)data.npart * nprocs * PARTICLE_BYTES, a, sizeof a));
        printf("\nTimes (open + collective I/O + close, median of %d, each write on a "
               "freshly deleted file):\n", opt.reps);
        printf("  %-6s %10s %12s %10s %12s   %s\n", "driver", "write s", "write MiB/s", "read s",
               "read MiB/s", "verified");
        for (int k = 0; k < 2; k++) {
            double w = median(tw[k], opt.reps), r = median(tr[k], opt.reps);
            printf("  %-6s %10.3f %12.1f %10.3f %12.1f   %s\n", labels[k], w, total / MiB / w, r,
                   total / MiB / r, bad[k] ? "NO" : "every byte");
            if (bad[k])
                printf("  ERROR: %s: %lld bytes read back differ from what was written\n",
                       labels[k], bad[k]);
        }
        if (report_storage(hcomp_path) != 0)
            failed = 1;
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);

    if (!opt.keep) {
        delete_if_exists(hcomp_name);
        delete_if_exists(ufs_name);
    } else if (rank == 0) {
        printf("\nkept %s and %s\n", hcomp_name, ufs_name);
    }
    if (rank == 0)
        printf("%s\n", failed ? "scidata_demo: FAILED" : "scidata_demo: OK");

    for (int k = 0; k < 2; k++)
        free(tw[k]), free(tr[k]);
    free_dataset(&data);
    free_dataset(&back);
    MPI_Info_free(&hints);
    MPI_Finalize();
    return failed ? 1 : 0;
}
