/* scidata_demo: a small "main job" that writes a realistic scientific dataset
 * through hcomp (transparent compression on storage tiers) and compares it with
 * what an application would otherwise do, honestly: durable writes and cold reads,
 * every byte verified on every read, and what made the difference printed beside
 * the times.
 *
 * Build and run (PREFIX = the MPICH installation with the hcomp driver):
 *
 *   $PREFIX/bin/mpicc -std=c11 -O2 -o scidata_demo examples/scidata_demo.c -lhcomp -lm
 *   $PREFIX/bin/mpiexec -n 4 ./scidata_demo --dir /tmp/demo --mib 32 --codec zstd
 *
 * Options:
 *   --dir DIR       where the files go (default ./hcomp-demo-data)
 *   --mib N         dataset size per rank in MiB (default 32)
 *   --codec NAME    hcomp_codec hint of the hcomp side: auto none lz4 zstd zlib bzip2
 *                   brotli snappy lzma, optionally NAME:LEVEL (default: the driver's
 *                   default, auto: the engine chooses per piece)
 *   --config FILE   hcomp_config hint of comparison 1: a tier configuration JSON
 *                   (default: the HCOMP_CONFIG environment variable, else hcomp's
 *                   built-in RAM tier + the file's own directory)
 *   --reps N        timed repetitions of each side (default 5; medians are shown)
 *   --pfs-bandwidth RATE, --pfs-latency TIME
 *                   the emulated parallel-file-system tier of comparison 2 (default
 *                   300MB/s and 2ms, per process, as hcomp's "emulate" applies them)
 *   --no-pfs        skip comparison 2
 *   --keep          keep the files at the end (default: delete them)
 *
 * What is compared, and why:
 *
 *   1. hcomp: (the given or default tiers) against ROMIO's plain ufs: in the same
 *      directory. A write is timed from open to durable: open, the collective writes,
 *      MPI_File_sync, close, then an fsync of every file the write left (for hcomp the
 *      mapping file and every segment file: with the default hcomp_drain=close the
 *      close moves what sat on the node-local RAM tier to the file's directory, and
 *      does not sync what it moved). A read is timed cold: before it, every file of
 *      the dataset (for hcomp the mapping file and every segment file of its pieces)
 *      is dropped from the page cache with posix_fadvise(POSIX_FADV_DONTNEED), and
 *      the report says how much was still resident after the drop. Comparing writes
 *      that stay in the page cache and reads served from it would compare memory
 *      copies with compression, which is not what anyone runs hcomp for; those
 *      figures appear only as "warm read", beside the cold ones.
 *   2. The same dataset on ONE EMULATED tier standing for a parallel file system:
 *      hcomp sleeps so that each process's I/O on it takes latency + bytes/bandwidth
 *      ("emulate": true in the tier configuration). Both sides are hcomp on that same
 *      emulated tier: hcomp_codec=none (no compression) against the hcomp side's codec
 *      (hcomp's choice by default), so the only difference is compression. ufs: has no
 *      emulation, so it is not on this line.
 *
 * The only hcomp-specific things an application does are: prefix the file name
 * with "hcomp:" and, optionally, pass hcomp_* hints. Everything else is
 * standard MPI-IO. The report uses hcomp_stat_path() from hcomp.h (bytes per tier
 * and codec) and the engine statistics each writer appends to the mapping file at
 * close (a STATS record, docs/FORMAT.md), which the library exposes no other way
 * than printing them (hint hcomp_stats).
 *
 * What to expect: smooth float64 fields still have noisy low mantissa bits, so
 * lossless general-purpose codecs gain little on them (zstd: about 1.1x); the
 * sorted positions and the sequential ids compress better. hcomp stores a piece
 * uncompressed (codec "none") when compressing it would not make it smaller.
 *
 * File layout (identical in every file):
 *   [0, 4096)                 a text header describing the layout
 *   then 4 fields             temperature, pressure, density, velocity_x: each a
 *                             global GZ x GY x GX array of doubles (C order),
 *                             block-decomposed over the ranks (subarray view)
 *   then particles            one block per rank: x[], y[], z[], px[], py[],
 *                             pz[] (double) and id[] (int64), NPART each
 */
/* posix_fadvise, mincore, fsync and O_NOFOLLOW are POSIX/Linux, not C11 */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <hcomp.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB (1024.0 * 1024.0)
#define HEADER_BYTES 4096
#define NFIELDS 4
#define PARTICLE_BYTES (6 * 8 + 8) /* x y z px py pz + id */
#define PI 3.14159265358979323846

static const char *const field_names[NFIELDS] = {"temperature", "pressure", "density",
                                                 "velocity_x"};

static int rank, nprocs;
/* the processes of this node, and whether this one is its first: the page cache is
 * per node, so one process per node syncs and drops the files */
static MPI_Comm node_comm;
static int node_leader;

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
    const char *dir, *codec, *config, *pfs_bw, *pfs_lat;
    int mib, reps, keep, pfs;
} options;

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: scidata_demo [--dir DIR] [--mib N] [--codec NAME[:LEVEL]] "
                        "[--config FILE] [--reps N] [--pfs-bandwidth RATE] [--pfs-latency TIME] "
                        "[--no-pfs] [--keep]\n");
}

/* A value that goes into the emulated tier's JSON as a string: no quotes or
 * backslashes (hcomp itself checks the units when it reads the configuration). */
static int json_safe(const char *s)
{
    return *s && strpbrk(s, "\"\\") == NULL && strlen(s) < 64;
}

static options parse_options(int argc, char **argv)
{
    options o = {"./hcomp-demo-data", NULL, NULL, "300MB/s", "2ms", 32, 5, 0, 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--keep") == 0) {
            o.keep = 1;
            continue;
        }
        if (strcmp(a, "--no-pfs") == 0) {
            o.pfs = 0;
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
        else if (strcmp(a, "--pfs-bandwidth") == 0)
            o.pfs_bw = v;
        else if (strcmp(a, "--pfs-latency") == 0)
            o.pfs_lat = v;
        else {
            usage();
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i++;
    }
    if (o.mib < 1 || o.mib > 4096 || o.reps < 1 || o.reps > 100 || !json_safe(o.pfs_bw) ||
        !json_safe(o.pfs_lat)) {
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

/* ---- the files of a side: what the mapping file says ---------------------------- */

/* What an hcomp file's mapping file tells the demo: where its segment directories
 * are (SEGMENT records: absolute directories), and what its writers' engines spent
 * their time on (STATS records, one per writer at close: JSON). The format is
 * docs/FORMAT.md; only what the report needs is decoded, and nothing is trusted
 * beyond the bounds of the file. */
typedef struct {
    int ok;
    char id_hex[17];          /* first 16 hex digits of the file id: names the .hcd dirs */
    char **dirs;              /* segment directories named by SEGMENT records */
    int ndirs;
    int writers;              /* STATS records */
    double tasks, bytes_in;   /* summed over the writers */
    double write_s, compression_s, io_s, engine_s, feedback_s;
    double write_s_max;       /* the longest one writer spent inside hcomp_file_pwrite */
} mapinfo;

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* The number after "key": in a compact JSON object (jansson's output, keys unique
 * at the top level for the keys asked here); 0 if absent. */
static double json_number(const char *json, const char *key)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    return p ? strtod(p + strlen(pat), NULL) : 0.0;
}

static void mapinfo_free(mapinfo *mi)
{
    for (int i = 0; i < mi->ndirs; i++)
        free(mi->dirs[i]);
    free(mi->dirs);
    memset(mi, 0, sizeof *mi);
}

static void add_dir(mapinfo *mi, const char *name)
{
    /* one name per directory: the records' names are absolute, the demo's own may be
     * relative, and a directory counted twice would be tallied twice */
    char canon[PATH_MAX];
    const char *dir = realpath(name, canon) ? canon : name;
    for (int i = 0; i < mi->ndirs; i++)
        if (strcmp(mi->dirs[i], dir) == 0)
            return;
    char **d = realloc(mi->dirs, sizeof(char *) * (size_t)(mi->ndirs + 1));
    char *copy = strdup(dir);
    if (!d || !copy) {
        free(copy);
        if (d)
            mi->dirs = d;
        return; /* out of memory: one directory fewer in the report, nothing worse */
    }
    mi->dirs = d;
    mi->dirs[mi->ndirs++] = copy;
}

static int read_mapping(const char *path, mapinfo *mi)
{
    memset(mi, 0, sizeof *mi);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0 || sb.st_size < 64 || sb.st_size > (off_t)256 * 1024 * 1024) {
        close(fd);
        return -1;
    }
    size_t size = (size_t)sb.st_size, got = 0;
    unsigned char *buf = xmalloc(size);
    while (got < size) {
        ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (got < 64 || memcmp(buf, "HCOMPMAP", 8) != 0) {
        free(buf);
        return -1;
    }
    size = got;
    for (int i = 0; i < 8; i++)
        snprintf(mi->id_hex + 2 * i, 3, "%02x", buf[16 + i]);
    /* the records: framed "HCR1", length, type, check, payload, CRC-32 */
    size_t pos = 64;
    while (pos + 16 <= size) {
        uint32_t n = le32(buf + pos + 4);
        if (memcmp(buf + pos, "HCR1", 4) != 0 || n > (16u << 20) || n > size - pos - 16) {
            pos++; /* not a record here (a torn append): look for the next one */
            continue;
        }
        unsigned type = le16(buf + pos + 8);
        const unsigned char *p = buf + pos + 12;
        if (type == 1 && n >= 20) { /* SEGMENT: tier name, directory, file, node */
            size_t t = le16(p + 8), d = le16(p + 10);
            if (20 + t + d <= n && d > 0 && d < 4096) {
                char dir[4096];
                memcpy(dir, p + 20 + t, d);
                dir[d] = '\0';
                add_dir(mi, dir);
            }
        } else if (type == 4) { /* STATS: one writer's engine statistics */
            char *json = xmalloc((size_t)n + 1);
            memcpy(json, p, n);
            json[n] = '\0';
            double w = json_number(json, "write_seconds");
            mi->writers++;
            mi->tasks += json_number(json, "tasks");
            mi->bytes_in += json_number(json, "bytes_in");
            mi->write_s += w;
            mi->write_s_max = w > mi->write_s_max ? w : mi->write_s_max;
            mi->compression_s += json_number(json, "compression_seconds");
            mi->io_s += json_number(json, "io_seconds");
            mi->engine_s += json_number(json, "analysis_seconds") +
                            json_number(json, "prediction_seconds") +
                            json_number(json, "placement_seconds");
            mi->feedback_s += json_number(json, "feedback_seconds");
            free(json);
        }
        pos += 16 + (size_t)n;
    }
    free(buf);
    mi->ok = 1;
    return 0;
}

/* ---- the files of a side: syncing them, dropping them from the page cache -------- */

enum file_action { ACT_FSYNC, ACT_DROP };

typedef struct {
    int files, errors;
    double bytes;    /* size of the regular files acted on */
    double resident; /* ACT_DROP: bytes still in the page cache after the drop */
} file_tally;

/* Bytes of an open file that are in the page cache (mincore on a mapping of it:
 * mapping and asking fault nothing in). */
static double resident_bytes(int fd, off_t size)
{
    if (size <= 0)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    size_t npages = ((size_t)size + (size_t)page - 1) / (size_t)page;
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return 0;
    unsigned char *vec = malloc(npages);
    double res = 0;
    if (vec && mincore(m, (size_t)size, vec) == 0)
        for (size_t i = 0; i < npages; i++)
            res += (vec[i] & 1) ? (double)page : 0;
    free(vec);
    munmap(m, (size_t)size);
    return res > (double)size ? (double)size : res;
}

/* fsync or drop one file or directory. A path that is gone is skipped: a node-local
 * segment the drain at close removed, or one on another node. */
static void act_on_path(const char *path, enum file_action act, file_tally *t)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "scidata_demo: opening %s: %s\n", path, strerror(errno));
            t->errors++;
        }
        return;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && (S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode))) {
        int reg = S_ISREG(sb.st_mode);
        if (reg) {
            t->files++;
            t->bytes += (double)sb.st_size;
        }
        if (act == ACT_FSYNC) {
            /* the directory too: a new file is durable once its name is */
            if (fsync(fd) != 0 && errno != EINVAL) {
                fprintf(stderr, "scidata_demo: fsync of %s: %s\n", path, strerror(errno));
                t->errors++;
            }
        } else if (reg) {
            /* DONTNEED drops clean pages only: the write made them clean (fsync) */
            int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            if (rc != 0) {
                fprintf(stderr, "scidata_demo: posix_fadvise of %s: %s\n", path, strerror(rc));
                t->errors++;
            }
            t->resident += resident_bytes(fd, sb.st_size);
        }
    }
    close(fd);
}

/* Every entry of a directory, then the directory itself. */
static void act_on_dir(const char *dir, enum file_action act, file_tally *t)
{
    DIR *d = opendir(dir);
    if (!d)
        return; /* gone (removed by the drain) or never made on this node */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        act_on_path(path, act, t);
    }
    closedir(d);
    act_on_path(dir, act, t);
}

/* The directory part of a path ("." if none). */
static void parent_of(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, len, ".");
    else if (slash == out)
        slash[1] = '\0';
    else
        *slash = '\0';
}

/* Act on every file of a side: for ufs: the file; for hcomp: the mapping file, every
 * segment file of every segment directory its SEGMENT records name, and the hidden
 * segment directory beside it (".<name>.<id>.hcd", where the drain at close puts the
 * node-local tiers' data; named here too in case no record named it yet), then the
 * directories. */
static void act_on_side(const char *path, int is_hcomp, enum file_action act, file_tally *t)
{
    char dir[4096];
    parent_of(path, dir, sizeof dir);
    act_on_path(path, act, t);
    if (is_hcomp) {
        mapinfo mi;
        if (read_mapping(path, &mi) != 0) {
            fprintf(stderr, "scidata_demo: %s: cannot read its mapping file\n", path);
            t->errors++;
            return;
        }
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        char hidden[8192];
        snprintf(hidden, sizeof hidden, "%s/.%.64s.%s.hcd", dir, base, mi.id_hex);
        add_dir(&mi, hidden);
        for (int i = 0; i < mi.ndirs; i++)
            act_on_dir(mi.dirs[i], act, t);
        mapinfo_free(&mi);
    }
    if (act == ACT_FSYNC)
        act_on_path(dir, act, t);
}

/* One process per node acts on the files; everyone waits for it. The tally is
 * rank 0's (its node's). */
static void act_on_side_per_node(const char *path, int is_hcomp, enum file_action act,
                                 file_tally *t)
{
    memset(t, 0, sizeof *t);
    MPI_Barrier(MPI_COMM_WORLD);
    if (node_leader)
        act_on_side(path, is_hcomp, act, t);
    int err = t->errors, any = 0;
    MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    t->errors = any;
}

/* ---- writing and reading, timed ----------------------------------------------------- */

/* One side of a comparison: a file name and the hints it is opened with. */
typedef struct {
    const char *label; /* as printed */
    char name[4200];   /* for MPI_File_open, with its prefix */
    char path[4200];   /* without it */
    int is_hcomp;
    MPI_Info info;
} side;

/* A durable write's wall time and its phases (seconds, rank 0's clock after a
 * barrier at each phase's end, so a phase ends when the slowest process ends it). */
typedef struct {
    double total, io, sync, close, fsync;
} wtimes;

/* Delete a file if it exists (rank 0), so each repetition starts fresh. */
static void delete_if_exists(const char *name)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        (void)MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Open, collective writes, MPI_File_sync, close, and an fsync of every file the write
 * left: what it takes until the dataset would survive a crash. The fsync after close
 * finds nothing to do for ufs: (MPI_File_sync did it all); for hcomp: it writes what the
 * drain at close moved off the node-local tiers without syncing it. */
static wtimes timed_write(const side *s, dataset *d, int *errors)
{
    MPI_File fh;
    wtimes w;
    file_tally t;
    delete_if_exists(s->name);
    double t0 = MPI_Wtime();
    CHECK(MPI_File_open(MPI_COMM_WORLD, s->name, MPI_MODE_CREATE | MPI_MODE_WRONLY, s->info, &fh));
    transfer(fh, d, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    CHECK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    act_on_side_per_node(s->path, s->is_hcomp, ACT_FSYNC, &t);
    MPI_Barrier(MPI_COMM_WORLD);
    double t4 = MPI_Wtime();
    *errors += t.errors;
    w.io = t1 - t0;
    w.sync = t2 - t1;
    w.close = t3 - t2;
    w.fsync = t4 - t3;
    w.total = t4 - t0;
    return w;
}

static double timed_read(const side *s, dataset *into)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECK(MPI_File_open(MPI_COMM_WORLD, s->name, MPI_MODE_RDONLY, s->info, &fh));
    MPI_Offset size;
    CHECK(MPI_File_get_size(fh, &size));
    if (size != into->file_size) {
        fprintf(stderr, "scidata_demo: %s has size %lld, expected %lld\n", s->name,
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
    printf("  where hcomp put %s (hcomp_stat_path):\n", path);
    printf("    logical size %s, data %s, stored %s in %" PRIu64 " pieces; mapping file %lld bytes\n",
           human((double)st.logical_size, h1, sizeof h1), human((double)st.live_bytes, h2, sizeof h2),
           human((double)st.stored_bytes, h3, sizeof h3), st.pieces, mapping);
    printf("    %-10s %-44s %14s %14s %8s\n", "tier", "directory", "raw bytes", "stored bytes",
           "pieces");
    for (size_t i = 0; i < st.ntiers && i < HCOMP_STATS_MAX_TIERS; i++)
        printf("    %-10s %-44s %14" PRIu64 " %14" PRIu64 " %8" PRIu64 "\n", st.tier[i].name,
               st.tier[i].dir, st.tier[i].raw_bytes, st.tier[i].stored_bytes, st.tier[i].pieces);
    printf("    %-10s %14s %14s %8s %8s\n", "codec", "raw bytes", "stored bytes", "pieces", "ratio");
    for (unsigned c = 0; c < st.ncodecs; c++) {
        if (st.codec[c].pieces == 0)
            continue;
        const hcomp_codec *cd = hcomp_codec_by_id(c);
        printf("    %-10s %14" PRIu64 " %14" PRIu64 " %8" PRIu64 " %8.2f\n", cd ? cd->name : "?",
               st.codec[c].raw_bytes, st.codec[c].stored_bytes, st.codec[c].pieces,
               st.codec[c].stored_bytes ? (double)st.codec[c].raw_bytes / st.codec[c].stored_bytes : 0.0);
    }
    printf("    overall compression ratio: %.2f (data bytes / stored bytes)\n",
           st.stored_bytes ? (double)st.live_bytes / (double)st.stored_bytes : 0.0);
    return 0;
}

/* ---- running a comparison --------------------------------------------------------- */

/* Everything measured on one side over the repetitions. */
typedef struct {
    side s;
    wtimes *w;            /* per repetition */
    double *cold, *warm;  /* read times per repetition */
    long long bad;        /* bytes read back that differed, over every read */
    int errors;           /* failed fsyncs or drops (the figures would not mean what they say) */
    file_tally drop;      /* the last drop before a cold read (rank 0's node) */
    double resident_max;  /* the most bytes any drop left in the page cache */
    mapinfo mi;           /* hcomp sides: the mapping file of the last write */
} result;

static void result_init(result *r, const char *label, const char *prefix, const char *dir,
                        const char *file, MPI_Info info, int reps)
{
    memset(r, 0, sizeof *r);
    r->s.label = label;
    snprintf(r->s.path, sizeof r->s.path, "%s/%s", dir, file);
    snprintf(r->s.name, sizeof r->s.name, "%s%s", prefix, r->s.path);
    r->s.is_hcomp = strcmp(prefix, "hcomp:") == 0;
    r->s.info = info;
    r->w = xcalloc(sizeof(wtimes) * (size_t)reps);
    r->cold = xcalloc(sizeof(double) * (size_t)reps);
    r->warm = xcalloc(sizeof(double) * (size_t)reps);
}

static void result_free(result *r)
{
    free(r->w);
    free(r->cold);
    free(r->warm);
    mapinfo_free(&r->mi);
}

/* Bytes that differ, over every rank. */
static long long verify(const dataset *want, const dataset *got)
{
    long long b = count_differences(want, got), total = 0;
    MPI_Allreduce(&b, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* One repetition of one side: a durable write, the files dropped from the page cache,
 * a cold read, then the same read again from the page cache (warm). Both reads are
 * verified. */
static void run_once(result *r, int rep, dataset *data, dataset *back)
{
    file_tally t;
    r->w[rep] = timed_write(&r->s, data, &r->errors);
    act_on_side_per_node(r->s.path, r->s.is_hcomp, ACT_DROP, &t);
    /* a page cache the files' own drop does not reach (a distributed file system's
     * servers, e.g. the bricks of tests/multinode's GlusterFS on this machine): the
     * command in $HCOMP_DEMO_DROP_CMD empties it, run once before every cold read */
    const char *drop_cmd = getenv("HCOMP_DEMO_DROP_CMD");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && drop_cmd && drop_cmd[0] && system(drop_cmd) != 0) {
        fprintf(stderr, "scidata_demo: HCOMP_DEMO_DROP_CMD failed: %s\n", drop_cmd);
        t.errors++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    r->errors += t.errors;
    r->drop = t;
    if (t.resident > r->resident_max)
        r->resident_max = t.resident;
    clear_dataset(back);
    r->cold[rep] = timed_read(&r->s, back);
    r->bad += verify(data, back);
    clear_dataset(back);
    r->warm[rep] = timed_read(&r->s, back);
    r->bad += verify(data, back);
}

/* Both sides, alternating, so that a slow moment of the machine (another job, the
 * disk's write-back) falls on both rather than on one. */
static void run_comparison(result *r, int reps, dataset *data, dataset *back)
{
    for (int rep = 0; rep < reps; rep++)
        for (int k = 0; k < 2; k++)
            run_once(&r[k], rep, data, back);
    if (rank == 0)
        for (int k = 0; k < 2; k++)
            if (r[k].s.is_hcomp && read_mapping(r[k].s.path, &r[k].mi) != 0)
                fprintf(stderr, "scidata_demo: %s: cannot read its engine statistics\n", r[k].s.path);
}

/* ---- the report ------------------------------------------------------------------ */

static double median_of(const double *v, int n)
{
    double *c = xmalloc(sizeof(double) * (size_t)n);
    memcpy(c, v, sizeof(double) * (size_t)n);
    double m = median(c, n);
    free(c);
    return m;
}

static double median_write(const result *r, int reps)
{
    double *v = xmalloc(sizeof(double) * (size_t)reps);
    for (int i = 0; i < reps; i++)
        v[i] = r->w[i].total;
    double m = median(v, reps);
    free(v);
    return m;
}

/* The repetition whose write time is the median (the upper one of two), so that the
 * phases shown add up to a time that was measured. */
static int median_rep(const result *r, int reps)
{
    int *idx = xmalloc(sizeof(int) * (size_t)reps);
    for (int i = 0; i < reps; i++)
        idx[i] = i;
    for (int i = 1; i < reps; i++) /* insertion sort: a handful of repetitions */
        for (int j = i; j > 0 && r->w[idx[j]].total < r->w[idx[j - 1]].total; j--) {
            int x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    int m = idx[reps / 2];
    free(idx);
    return m;
}

/* Prints one comparison: r[0] is the side hcomp compresses, r[1] the baseline; ratio
 * says which time is divided by which.
 * Returns non-zero if anything failed (a byte read back wrong, a sync or drop that
 * failed, statistics that could not be read). */
static int report_comparison(result *r, int reps, double total_bytes, const char *ratio)
{
    int failed = 0;
    char a[32], b[32];
    double w[2], cr[2], wr[2];
    for (int k = 0; k < 2; k++) {
        w[k] = median_write(&r[k], reps);
        cr[k] = median_of(r[k].cold, reps);
        wr[k] = median_of(r[k].warm, reps);
    }
    double mib = total_bytes / MiB;
    printf("  %-26s %9s %8s %11s %8s %11s %8s   %s\n", "", "write", "MiB/s", "cold read",
           "MiB/s", "warm read", "MiB/s", "verified");
    for (int k = 0; k < 2; k++) {
        printf("  %-26s %7.3f s %8.1f %9.3f s %8.1f %9.3f s %8.1f   %s\n", r[k].s.label, w[k],
               mib / w[k], cr[k], mib / cr[k], wr[k], mib / wr[k],
               r[k].bad ? "NO" : "every byte, every read");
        if (r[k].bad) {
            printf("  ERROR (%s): %lld bytes read back differ from what was written\n",
                   r[k].s.label, r[k].bad);
            failed = 1;
        }
        if (r[k].errors) {
            printf("  ERROR (%s): %d fsyncs or page-cache drops failed (see above): its times do "
                   "not mean what they say\n", r[k].s.label, r[k].errors);
            failed = 1;
        }
    }
    printf("  %-26s %8.2fx %8s %10.2fx %8s %10.2fx   (%s; > 1: %s faster)\n", "speed-up", w[1] / w[0],
           "", cr[1] / cr[0], "", wr[1] / wr[0], ratio, r[0].s.label);

    printf("  write phases, s (the repetition with the median write; phases end at a barrier):\n");
    printf("    %-24s %9s %14s %9s %18s\n", "", "writes", "MPI_File_sync", "close", "fsync after close");
    for (int k = 0; k < 2; k++) {
        const wtimes *p = &r[k].w[median_rep(&r[k], reps)];
        printf("    %-24s %9.3f %14.3f %9.3f %18.3f\n", r[k].s.label, p->io, p->sync, p->close,
               p->fsync);
    }

    for (int k = 0; k < 2; k++) {
        const mapinfo *mi = &r[k].mi;
        if (!r[k].s.is_hcomp)
            continue;
        if (!mi->ok || mi->writers == 0) {
            printf("  %s: no engine statistics in its mapping file\n", r[k].s.label);
            failed = 1;
            continue;
        }
        printf("  inside %s, in its last write (engine statistics of its %d writer%s, summed):\n",
               r[k].s.label, mi->writers, mi->writers == 1 ? "" : "s");
        printf("    %s in %.0f tasks: compression %.3f s (summed over threads), tier I/O and map "
               "appends %.3f s,\n"
               "    analysis + prediction + placement %.3f s, feedback %.3f s; inside "
               "hcomp_file_pwrite %.3f s\n"
               "    (the longest writer %.3f s; the rest of the write is MPI's exchange, sync, close "
               "with any drain, fsync)\n",
               human(mi->bytes_in, a, sizeof a), mi->tasks, mi->compression_s, mi->io_s,
               mi->engine_s, mi->feedback_s, mi->write_s, mi->write_s_max);
    }

    if (getenv("HCOMP_DEMO_DROP_CMD") && getenv("HCOMP_DEMO_DROP_CMD")[0])
        printf("  before each cold read, also run: %s\n", getenv("HCOMP_DEMO_DROP_CMD"));
    printf("  before each cold read, dropped from the page cache (posix_fadvise DONTNEED):\n");
    for (int k = 0; k < 2; k++) {
        const file_tally *t = &r[k].drop;
        printf("    %-24s %d file%s, %s; still resident after the drop: at most %s\n",
               r[k].s.label, t->files, t->files == 1 ? "" : "s", human(t->bytes, a, sizeof a),
               human(r[k].resident_max, b, sizeof b));
        if (r[k].resident_max > 0.01 * t->bytes)
            printf("    (%s: the file system kept those pages, e.g. a tmpfs tier: reads of them "
                   "are warm)\n", r[k].s.label);
    }
    printf("  reads: read times are wall times of open, collective reads and close; what each "
           "reader fetched from the tiers and decoded, HCOMP_STATS=1 prints at its close\n");
    /* the compressing side's file (a baseline's is all "none", or not hcomp's) */
    if (report_storage(r[0].s.path) != 0)
        failed = 1;
    return failed;
}

/* The emulated PFS tier: one tier, the file's own directory, slowed by hcomp. */
static int write_pfs_config(const char *path, const options *o)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"version\": 1, \"tiers\": [\n"
               "  {\"name\": \"pfs\", \"path\": \"@filedir\", \"capacity\": \"unlimited\",\n"
               "   \"bandwidth\": \"%s\", \"latency\": \"%s\", \"scope\": \"shared\", "
               "\"emulate\": true}\n]}\n",
            o->pfs_bw, o->pfs_lat);
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- main ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    int node_rank;
    MPI_Comm_rank(node_comm, &node_rank);
    node_leader = node_rank == 0;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    options opt = parse_options(argc, argv);
    const char *codec = opt.codec ? opt.codec : "auto";

    /* the directory and the emulated tier's configuration */
    if (rank == 0 && mkdir(opt.dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "scidata_demo: cannot create %s: %s\n", opt.dir, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char pfs_config[4200];
    snprintf(pfs_config, sizeof pfs_config, "%s/pfs-emulated.json", opt.dir);
    if (opt.pfs && rank == 0 && write_pfs_config(pfs_config, &opt) != 0) {
        fprintf(stderr, "scidata_demo: cannot write %s: %s\n", pfs_config, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* hints: only hcomp reads the hcomp_* keys; ufs ignores them */
    MPI_Info hints, pfs_hints, pfs_none_hints;
    MPI_Info_create(&hints);
    if (opt.codec)
        MPI_Info_set(hints, "hcomp_codec", opt.codec);
    if (opt.config)
        MPI_Info_set(hints, "hcomp_config", opt.config);
    MPI_Info_create(&pfs_hints);
    if (opt.codec)
        MPI_Info_set(pfs_hints, "hcomp_codec", opt.codec);
    MPI_Info_set(pfs_hints, "hcomp_config", pfs_config);
    MPI_Info_dup(pfs_hints, &pfs_none_hints);
    MPI_Info_set(pfs_none_hints, "hcomp_codec", "none");

    /* generate */
    double tg = MPI_Wtime();
    dataset data, back;
    make_dataset(&data, opt.mib);
    make_empty_like(&data, &back);
    MPI_Barrier(MPI_COMM_WORLD);
    tg = MPI_Wtime() - tg;

    char label_hcomp[96], label_pfs[96];
    snprintf(label_hcomp, sizeof label_hcomp, "hcomp: (codec %.20s)", codec);
    snprintf(label_pfs, sizeof label_pfs, "hcomp: pfs, codec %.20s", codec);
    result cmp1[2], cmp2[2];
    result_init(&cmp1[0], label_hcomp, "hcomp:", opt.dir, "scidata.h5c", hints, opt.reps);
    result_init(&cmp1[1], "ufs:", "ufs:", opt.dir, "scidata.raw", MPI_INFO_NULL, opt.reps);
    result_init(&cmp2[0], label_pfs, "hcomp:", opt.dir, "scidata-pfs.h5c", pfs_hints, opt.reps);
    result_init(&cmp2[1], "hcomp: pfs, codec none", "hcomp:", opt.dir, "scidata-pfs-none.h5c",
                pfs_none_hints, opt.reps);

    double tr = MPI_Wtime();
    run_comparison(cmp1, opt.reps, &data, &back);
    if (opt.pfs)
        run_comparison(cmp2, opt.reps, &data, &back);
    tr = MPI_Wtime() - tr;

    /* the report */
    int failed = 0;
    if (rank == 0) {
        char a[32], b[32];
        double total = (double)data.file_size;
        const char *cfg = opt.config ? opt.config
                          : getenv("HCOMP_CONFIG") ? getenv("HCOMP_CONFIG")
                                                   : "(built-in default: RAM tier, then the file's directory)";
        printf("scidata_demo: %d ranks, %d MiB per rank, hcomp_codec=%s, %d repetitions of each "
               "side (medians shown), %.1f s of I/O in all\n", nprocs, opt.mib, codec, opt.reps, tr);
        printf("dataset: %s in total (generated in %.2f s)\n", human(total, a, sizeof a), tg);
        printf("  %d fields (%s, %s, %s, %s) of %d x %d x %d doubles, %s each\n", NFIELDS,
               field_names[0], field_names[1], field_names[2], field_names[3], data.gdims[0],
               data.gdims[1], data.gdims[2],
               human((double)data.gdims[0] * data.gdims[1] * data.gdims[2] * 8, b, sizeof b));
        printf("  %lld particles (x y z px py pz id), %s\n", data.npart * nprocs,
               human((double)data.npart * nprocs * PARTICLE_BYTES, a, sizeof a));
        printf("timed: write = open + collective writes + MPI_File_sync + close + fsync of every "
               "file left (for hcomp:\n"
               "  the mapping file and every segment file), on a freshly deleted file; cold read = "
               "open + collective\n"
               "  reads + close after every such file was dropped from the page cache; warm read = "
               "the same read again\n"
               "  at once, from the page cache (shown for reference: not what hcomp is for)\n");

        printf("\n1. hcomp: against plain ufs:, same directory %s; hcomp tiers: %s\n", opt.dir, cfg);
        failed |= report_comparison(cmp1, opt.reps, total, "ufs: time / hcomp: time");

        if (opt.pfs) {
            printf("\n2. EMULATED parallel file system: one tier (the file's directory) that hcomp "
                   "slows to %s and %s\n"
                   "   per request for each process (\"emulate\": true, %s). Both sides are hcomp "
                   "on this same\n"
                   "   emulated tier: codec none (no compression) against codec %s; the only "
                   "difference is compression.\n"
                   "   These times are emulated, not measured on a real parallel file system.\n",
                   opt.pfs_bw, opt.pfs_lat, pfs_config, codec);
            failed |= report_comparison(cmp2, opt.reps, total, "codec none time / this time");
        }

        /* the short version, for the newcomer who reads only the end */
        printf("\nIn short (ratios of median times, > 1: hcomp faster):\n");
        printf("  hcomp: (codec %s) vs ufs:, durable write %.2fx, cold read %.2fx "
               "(warm read, page cache: %.2fx)\n", codec,
               median_write(&cmp1[1], opt.reps) / median_write(&cmp1[0], opt.reps),
               median_of(cmp1[1].cold, opt.reps) / median_of(cmp1[0].cold, opt.reps),
               median_of(cmp1[1].warm, opt.reps) / median_of(cmp1[0].warm, opt.reps));
        if (opt.pfs)
            printf("  EMULATED %s PFS tier, codec %s vs none: durable write %.2fx, cold read %.2fx\n",
                   opt.pfs_bw, codec,
                   median_write(&cmp2[1], opt.reps) / median_write(&cmp2[0], opt.reps),
                   median_of(cmp2[1].cold, opt.reps) / median_of(cmp2[0].cold, opt.reps));
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);

    result *all[4] = {&cmp1[0], &cmp1[1], &cmp2[0], &cmp2[1]};
    int nfiles = opt.pfs ? 4 : 2;
    if (!opt.keep) {
        for (int i = 0; i < nfiles; i++)
            delete_if_exists(all[i]->s.name);
        if (opt.pfs && rank == 0)
            unlink(pfs_config);
    } else if (rank == 0) {
        printf("\nkept");
        for (int i = 0; i < nfiles; i++)
            printf(" %s", all[i]->s.name);
        if (opt.pfs)
            printf(" %s", pfs_config);
        printf("\n");
    }
    if (rank == 0)
        printf("%s\n", failed ? "scidata_demo: FAILED" : "scidata_demo: OK");

    for (int i = 0; i < 4; i++)
        result_free(all[i]);
    free_dataset(&data);
    free_dataset(&back);
    MPI_Info_free(&hints);
    MPI_Info_free(&pfs_hints);
    MPI_Info_free(&pfs_none_hints);
    MPI_Comm_free(&node_comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
