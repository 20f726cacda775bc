/* wl_grayscott: a 3-D Gray-Scott reaction-diffusion simulation that writes checkpoints
 * through subarray file views, then reads them back as a restart would and reads a 2-D
 * slice as an analysis would: smooth, real fields and real non-contiguous collective I/O.
 *
 * Model: u' = Du lap(u) - u v^2 + F (1 - u),  v' = Dv lap(v) + u v^2 - (F + k) v on a
 * periodic G^3 grid, explicit Euler with dt 1, the 7-point Laplacian divided by 6, Du 0.2,
 * Dv 0.1, F 0.01, k 0.05: the parameters of ADIOS2's Gray-Scott example (with the /6 the
 * explicit scheme is stable at dt 1). Start: u = 1, v = 0, except a cube of side G/4 in the middle where u = 0.5,
 * v = 0.25, plus a deterministic 1% perturbation of v everywhere (a function of the global
 * index, so the result does not depend on the decomposition).
 *
 * Decomposition: MPI_Dims_create over 3 dimensions, a periodic Cartesian communicator,
 * one ghost layer exchanged with MPI_Sendrecv of face subarrays.
 *
 * File: checkpoint c holds u then v, each the G^3 doubles in C order (z fastest); offset
 * (2c + f) G^3 8. Each rank's file view is MPI_Type_create_subarray of its block and its
 * memory type the interior of its ghosted array: both sides non-contiguous, written with
 * MPI_File_write_all (two-phase collective I/O in ROMIO).
 *
 * Checks: at every checkpoint each rank adds, for every point it owns, a hash of (global
 * index, field, checkpoint, the value's bits) into one sum per field and checkpoint
 * (Allreduce); the sums do not depend on who computed them. The restart read (every
 * checkpoint through the same views) and the slice read (plane y = G/2 of both fields of
 * the last checkpoint, each rank a band of x, with a subarray view) recompute them from
 * the bytes read: any byte wrong fails the run.
 *
 * Phases (--phase): all (the default) writes, then reads back in the same process; write
 * only writes (and prints the written sums' checks as a run of all would); restart is a
 * new job restarting from the file an earlier `--phase write` of the same G, C and K left:
 * it computes the same steps without writing (to know what the checkpoints must hold; not
 * timed), then reads every checkpoint through its views (timed, checked), so that a
 * benchmark can empty the page cache between the two jobs (scripts/bench-reads).
 *
 * usage: wl_grayscott FILE [--grid G] [--ckpts C] [--every K] [--phase all|write|restart]
 *                     [common options]
 *   G: global grid side (default 64), C: checkpoints (default 3), K: steps between them
 *   (default 20); the first checkpoint is after K steps
 * RESULT: bytes (logical bytes of the checkpoints), write_s (open + checkpoint writes +
 * close; 0 in a restart), read_s (restart read of all checkpoints; 0 in a write phase),
 * slice_s, slice_bytes (phase all only), compute_s */
#include "wl_common.h"

#include <stdlib.h>
#include <string.h>

#define DU 0.2
#define DV 0.1
#define FEED 0.01
#define KILL 0.05

static int G, dims[3], coords[3], lo[3], ln[3];   /* global side; local block start, size */
static MPI_Comm cart;

#define IDX(i, j, k) ((((size_t) (i)) * (size_t) (ln[1] + 2) + (size_t) (j)) * (size_t) (ln[2] + 2) + (size_t) (k))

static uint64_t point_hash(uint64_t gidx, int f, int ck, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return wl_hash64(gidx * 0x9E3779B97F4A7C15ULL ^ ((uint64_t) (ck * 2 + f) << 56) ^ wl_hash64(bits));
}

static void split(int n, int parts, int idx, int *start, int *len)
{
    int base = n / parts, extra = n % parts;
    *start = idx * base + (idx < extra ? idx : extra);
    *len = base + (idx < extra ? 1 : 0);
}

/* ghost exchange along each axis with face subarrays of the ghosted array */
static void exchange(double *a)
{
    int full[3] = {ln[0] + 2, ln[1] + 2, ln[2] + 2};
    for (int d = 0; d < 3; d++) {
        int sub[3] = {full[0], full[1], full[2]}, up, down;
        sub[d] = 1;
        MPI_Cart_shift(cart, d, 1, &down, &up);
        int st_send_up[3] = {0, 0, 0}, st_recv_down[3] = {0, 0, 0};
        int st_send_down[3] = {0, 0, 0}, st_recv_up[3] = {0, 0, 0};
        st_send_up[d] = ln[d];
        st_recv_down[d] = 0;
        st_send_down[d] = 1;
        st_recv_up[d] = ln[d] + 1;
        MPI_Datatype t[4];
        int *st[4] = {st_send_up, st_recv_down, st_send_down, st_recv_up};
        for (int q = 0; q < 4; q++) {
            MPI_Type_create_subarray(3, full, sub, st[q], MPI_ORDER_C, MPI_DOUBLE, &t[q]);
            MPI_Type_commit(&t[q]);
        }
        MPI_Sendrecv(a, 1, t[0], up, 0, a, 1, t[1], down, 0, cart, MPI_STATUS_IGNORE);
        MPI_Sendrecv(a, 1, t[2], down, 1, a, 1, t[3], up, 1, cart, MPI_STATUS_IGNORE);
        for (int q = 0; q < 4; q++)
            MPI_Type_free(&t[q]);
    }
}

static void step(const double *u, const double *v, double *u2, double *v2)
{
    size_t sj = (size_t) (ln[2] + 2), si = sj * (size_t) (ln[1] + 2);
    for (int i = 1; i <= ln[0]; i++)
        for (int j = 1; j <= ln[1]; j++)
            for (int k = 1; k <= ln[2]; k++) {
                size_t p = IDX(i, j, k);
                double lu = u[p - si] + u[p + si] + u[p - sj] + u[p + sj] + u[p - 1] + u[p + 1] - 6 * u[p];
                lu /= 6;
                double lv = v[p - si] + v[p + si] + v[p - sj] + v[p + sj] + v[p - 1] + v[p + 1] - 6 * v[p];
                lv /= 6;
                double uvv = u[p] * v[p] * v[p];
                u2[p] = u[p] + DU * lu - uvv + FEED * (1.0 - u[p]);
                v2[p] = v[p] + DV * lv + uvv - (FEED + KILL) * v[p];
            }
}

/* hash sums of field f (0 u, 1 v) of checkpoint ck over a box given by its global start
 * and size, with values at buf (C order over the box, or the ghosted array when ghosted) */
static uint64_t box_sum(const double *buf, int ghosted, const int st[3], const int n[3], int f, int ck)
{
    uint64_t s = 0;
    size_t q = 0;
    for (int i = 0; i < n[0]; i++)
        for (int j = 0; j < n[1]; j++)
            for (int k = 0; k < n[2]; k++, q++) {
                uint64_t g = ((uint64_t) (st[0] + i) * (uint64_t) G + (uint64_t) (st[1] + j)) * (uint64_t) G +
                             (uint64_t) (st[2] + k);
                double val = ghosted ? buf[IDX(i + 1, j + 1, k + 1)] : buf[q];
                s += point_hash(g, f, ck, val);
            }
    return s;
}

static uint64_t allsum(uint64_t v)
{
    uint64_t s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

/* restart read: every checkpoint through the views it was written with, into buf (a
 * ghosted array of cells doubles), each field checked against want; the time of open,
 * reads and close */
static double restart_read(wl_common *c, MPI_Datatype ftype, MPI_Datatype mtype, double *buf,
                           size_t cells, MPI_Offset field_bytes, int ckpts, const uint64_t *want)
{
    double t_read = 0, t0 = wl_sync_time();
    MPI_File fh = wl_open(c, MPI_MODE_RDONLY);
    t_read += wl_sync_time() - t0;
    for (int ck = 0; ck < ckpts; ck++)
        for (int f = 0; f < 2; f++) {
            memset(buf, 0, cells * 8);
            t0 = wl_sync_time();
            wl_mpi(MPI_File_set_view(fh, (2 * ck + f) * field_bytes, MPI_DOUBLE, ftype, "native", c->info),
                   "MPI_File_set_view");
            wl_mpi(MPI_File_read_all(fh, buf, 1, mtype, MPI_STATUS_IGNORE), "MPI_File_read_all");
            t_read += wl_sync_time() - t0;
            if (allsum(box_sum(buf, 1, lo, ln, f, ck)) != want[2 * ck + f])
                wl_verify_failed("restart read: checkpoint %d field %s differs from what was written",
                                 ck, f ? "v" : "u");
        }
    t0 = wl_sync_time();
    wl_close(c, &fh);
    return t_read + wl_sync_time() - t0;
}

/* analysis: the plane y = G/2 of checkpoint last (whose fields are u and v), each rank a
 * band of x; its expected sums are the written points of that plane. The time of open,
 * reads, checks and close; *touched: the bytes all ranks read from storage */
static double slice_read(wl_common *c, const double *u, const double *v, MPI_Offset field_bytes,
                         int last, long long *touched)
{
    int gsz[3] = {G, G, G};
    int sl_st[3], sl_n[3] = {0, 1, G}, ow_st[3] = {lo[0], G / 2, lo[2]}, ow_n[3] = {ln[0], 1, ln[2]};
    split(G, wl_size, wl_rank, &sl_st[0], &sl_n[0]);
    sl_st[1] = G / 2;
    sl_st[2] = 0;
    uint64_t want_slice[2] = {0, 0};
    if (G / 2 >= lo[1] && G / 2 < lo[1] + ln[1]) {
        /* this rank owns part of the plane: hash its points (from the live arrays) */
        double *plane = malloc((size_t) ln[0] * (size_t) ln[2] * 8);
        if (plane == NULL)
            wl_die("out of memory");
        for (int f = 0; f < 2; f++) {
            size_t q = 0;
            for (int i = 0; i < ln[0]; i++)
                for (int k = 0; k < ln[2]; k++)
                    plane[q++] = (f ? v : u)[IDX(i + 1, G / 2 - lo[1] + 1, k + 1)];
            want_slice[f] = box_sum(plane, 0, ow_st, ow_n, f, last);
        }
        free(plane);
    }
    want_slice[0] = allsum(want_slice[0]);
    want_slice[1] = allsum(want_slice[1]);
    MPI_Datatype stype;
    MPI_Type_create_subarray(3, gsz, sl_n, sl_st, MPI_ORDER_C, MPI_DOUBLE, &stype);
    MPI_Type_commit(&stype);
    double *slice = malloc(((size_t) sl_n[0] * (size_t) G + 1) * 8);
    if (slice == NULL)
        wl_die("out of memory");
    long long rc0 = wl_rchar();
    double t0 = wl_sync_time();
    MPI_File fh = wl_open(c, MPI_MODE_RDONLY);
    for (int f = 0; f < 2; f++) {
        wl_mpi(MPI_File_set_view(fh, (2 * last + f) * field_bytes, MPI_DOUBLE, stype, "native", c->info),
               "MPI_File_set_view");
        wl_mpi(MPI_File_read_all(fh, slice, sl_n[0] * G, MPI_DOUBLE, MPI_STATUS_IGNORE), "MPI_File_read_all");
        if (allsum(box_sum(slice, 0, sl_st, sl_n, f, last)) != want_slice[f])
            wl_verify_failed("slice read: plane y=%d of field %s differs from what was written", G / 2,
                             f ? "v" : "u");
    }
    wl_close(c, &fh);
    double t = wl_sync_time() - t0;   /* includes the (cheap, 2 x G^2 points) hash check */
    *touched = wl_sum_ll(wl_rchar() - rc0);
    MPI_Type_free(&stype);
    free(slice);
    return t;
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--grid G] [--ckpts C] [--every K] [--phase all|write|restart]");
    G = 64;
    int ckpts = 3, every = 20;
    const char *phase = "all";
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--grid") == 0) G = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--ckpts") == 0) ckpts = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--every") == 0) every = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--phase") == 0) phase = wl_optval(argc, argv, &i);
        else wl_die("unknown option %s", argv[i]);
    }
    if (G < 8 || ckpts < 1 || every < 1 || (double) G * G * G * 8 > 2e9 * wl_size)
        wl_die("need --grid >= 8 (and a block under 2 GB per rank), --ckpts >= 1, --every >= 1");
    if (strcmp(phase, "all") != 0 && strcmp(phase, "write") != 0 && strcmp(phase, "restart") != 0)
        wl_die("--phase %s: expected all, write or restart", phase);
    int do_write = strcmp(phase, "restart") != 0, do_read = strcmp(phase, "write") != 0;
    int periods[3] = {1, 1, 1};
    MPI_Dims_create(wl_size, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    int crank;
    MPI_Comm_rank(cart, &crank);
    MPI_Cart_coords(cart, crank, 3, coords);
    for (int d = 0; d < 3; d++)
        split(G, dims[d], coords[d], &lo[d], &ln[d]);
    if (ln[0] < 1 || ln[1] < 1 || ln[2] < 1)
        wl_die("grid %d too small for %d ranks", G, wl_size);
    size_t cells = (size_t) (ln[0] + 2) * (size_t) (ln[1] + 2) * (size_t) (ln[2] + 2);
    double *u = malloc(cells * 8), *v = malloc(cells * 8), *u2 = malloc(cells * 8), *v2 = malloc(cells * 8);
    if (!u || !v || !u2 || !v2)
        wl_die("out of memory");
    for (int i = 0; i < ln[0]; i++)
        for (int j = 0; j < ln[1]; j++)
            for (int k = 0; k < ln[2]; k++) {
                int gi = lo[0] + i, gj = lo[1] + j, gk = lo[2] + k;
                int in = gi >= 3 * G / 8 && gi < 5 * G / 8 && gj >= 3 * G / 8 && gj < 5 * G / 8 &&
                         gk >= 3 * G / 8 && gk < 5 * G / 8;
                uint64_t g = ((uint64_t) gi * (uint64_t) G + (uint64_t) gj) * (uint64_t) G + (uint64_t) gk;
                u[IDX(i + 1, j + 1, k + 1)] = in ? 0.5 : 1.0;
                v[IDX(i + 1, j + 1, k + 1)] = (in ? 0.25 : 0.0) + 0.01 * wl_u01(g);
            }

    /* the file view (this rank's block of the global grid) and the memory type (the
     * interior of the ghosted array) */
    int gsz[3] = {G, G, G}, full[3] = {ln[0] + 2, ln[1] + 2, ln[2] + 2}, one[3] = {1, 1, 1};
    MPI_Datatype ftype, mtype;
    MPI_Type_create_subarray(3, gsz, ln, lo, MPI_ORDER_C, MPI_DOUBLE, &ftype);
    MPI_Type_create_subarray(3, full, ln, one, MPI_ORDER_C, MPI_DOUBLE, &mtype);
    MPI_Type_commit(&ftype);
    MPI_Type_commit(&mtype);
    MPI_Offset field_bytes = (MPI_Offset) G * G * G * 8;
    uint64_t *want = calloc((size_t) ckpts * 2, sizeof(uint64_t));

    double t_io = 0, t_comp = 0, t0 = wl_sync_time();
    MPI_File fh = MPI_FILE_NULL;
    if (do_write)
        fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
    t_io += wl_sync_time() - t0;
    for (int ck = 0; ck < ckpts; ck++) {
        double tc = MPI_Wtime();
        for (int s = 0; s < every; s++) {
            exchange(u);
            exchange(v);
            step(u, v, u2, v2);
            double *tmp = u; u = u2; u2 = tmp;
            tmp = v; v = v2; v2 = tmp;
        }
        t_comp += MPI_Wtime() - tc;
        t0 = wl_sync_time();
        for (int f = 0; f < 2 && do_write; f++) {
            wl_mpi(MPI_File_set_view(fh, (2 * ck + f) * field_bytes, MPI_DOUBLE, ftype, "native", c.info),
                   "MPI_File_set_view");
            wl_mpi(MPI_File_write_all(fh, f ? v : u, 1, mtype, MPI_STATUS_IGNORE), "MPI_File_write_all");
        }
        t_io += wl_sync_time() - t0;
        want[2 * ck] = allsum(box_sum(u, 1, lo, ln, 0, ck));
        want[2 * ck + 1] = allsum(box_sum(v, 1, lo, ln, 1, ck));
    }
    if (do_write) {
        t0 = wl_sync_time();
        wl_close(&c, &fh);
        t_io += wl_sync_time() - t0;
    } else {
        t_io = 0;       /* a restart wrote nothing */
    }

    double t_read = 0, t_slice = 0;
    long long touched = 0;
    if (do_read)
        t_read = restart_read(&c, ftype, mtype, u2, cells, field_bytes, ckpts, want);
    int sliced = do_read && do_write;   /* after a restart it would find the cache warm */
    if (sliced)
        t_slice = slice_read(&c, u, v, field_bytes, ckpts - 1, &touched);

    /* a sanity figure on the physics: the mean of v (patterns grow from the seed cube) */
    double vs = 0, vsum = 0;
    for (int i = 1; i <= ln[0]; i++)
        for (int j = 1; j <= ln[1]; j++)
            for (int k = 1; k <= ln[2]; k++)
                vs += v[IDX(i, j, k)];
    MPI_Allreduce(&vs, &vsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    wl_result_begin("grayscott", &c);
    wl_result_kv("bytes=%lld write_s=%.6f read_s=%.6f", (long long) (2 * ckpts * field_bytes), t_io, t_read);
    wl_result_kv("phase=%s slice_s=%.6f slice_bytes=%lld touched=%lld", phase, t_slice,
                 (long long) (sliced ? G : 0) * G * 16, touched);
    wl_result_kv("compute_s=%.3f grid=%d ckpts=%d every=%d mean_v=%.6f", t_comp, G, ckpts, every,
                 vsum / ((double) G * G * G));
    wl_result_end();
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    free(want);
    free(u); free(v); free(u2); free(v2);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
