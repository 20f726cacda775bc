/* File views: 3-D and 2-D subarray block decompositions and interleaved vector
 * views, written collectively (and independently for the vector case), read back
 * through the same view, through a different decomposition and contiguously.
 *
 *   t_views TARGET [CONFIG]
 *
 * Region 1 (disp 0): a 3-D double field of 23 x 30 x 37 (C order), block-
 *   decomposed; written from a local array with one ghost cell per side (memory
 *   subarray type), as simulation codes do.
 * Region 2 (disp D2, deliberately unaligned): a 2-D int32 array 101 x 67, written
 *   with a 2-D block decomposition, read back with a column-slab decomposition.
 * Region 3 (disp D3): int32 tiles interleaved by rank (vector view), collective.
 * Region 4 (disp D4): int32 triples interleaved by rank, independent writes;
 *   rewritten at the end through a write-only handle (ROMIO's data sieving must
 *   still work) and the whole file checked again. */
#include "tcommon.h"

static const int G3[3] = {23, 30, 37};
static const int G2[2] = {101, 67};
#define VB 1024 /* ints per tile in region 3 */
#define VN 9    /* tiles per rank in region 3 */
#define IB 3    /* ints per tile in region 4 */
#define IN 5000 /* tiles per rank in region 4 */

static int32_t val2(int i, int j) { return (int32_t)(i * 100000 + j * 7 + 3); }
static int32_t val3(int owner, int tile, int k) { return owner * 1000000 + tile * VB + k; }
static int32_t val4(int owner, int tile, int k) { return -(owner * 1000000 + tile * IB + k) - 1; }

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;

    const MPI_Offset bytes3 = (MPI_Offset)G3[0] * G3[1] * G3[2] * 8;
    const MPI_Offset D2 = bytes3 + 4093;
    const MPI_Offset D3 = D2 + (MPI_Offset)G2[0] * G2[1] * 4 + 11 * 4;
    const MPI_Offset D4 = D3 + (MPI_Offset)P * VN * VB * 4;
    const MPI_Offset fsize = D4 + (MPI_Offset)P * IN * IB * 4;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);

    /* ---- region 1: 3-D subarray, local array with ghost cells ------------------ */
    int dims[3] = {0, 0, 0}, per[3] = {0, 0, 0}, coords[3];
    MPI_Dims_create(P, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, per, 0, &cart);
    MPI_Cart_coords(cart, r, 3, coords);
    int st3[3], ls3[3];
    for (int d = 0; d < 3; d++)
        t_split(G3[d], dims[d], coords[d], &st3[d], &ls3[d]);
    int gh[3] = {ls3[0] + 2, ls3[1] + 2, ls3[2] + 2}, one[3] = {1, 1, 1};
    size_t nloc = (size_t)ls3[0] * ls3[1] * ls3[2];
    double *halo = t_malloc((size_t)gh[0] * gh[1] * gh[2] * sizeof(double));
    for (size_t i = 0; i < (size_t)gh[0] * gh[1] * gh[2]; i++)
        halo[i] = -1e300; /* ghost cells must never reach the file */
    for (int i = 0; i < ls3[0]; i++)
        for (int j = 0; j < ls3[1]; j++)
            for (int k = 0; k < ls3[2]; k++)
                halo[((size_t)(i + 1) * gh[1] + (j + 1)) * gh[2] + (k + 1)] =
                    t_field(0, st3[0] + i, st3[1] + j, st3[2] + k);
    MPI_Datatype ftype3, mtype3;
    MPI_Type_create_subarray(3, G3, ls3, st3, MPI_ORDER_C, MPI_DOUBLE, &ftype3);
    MPI_Type_create_subarray(3, gh, ls3, one, MPI_ORDER_C, MPI_DOUBLE, &mtype3);
    MPI_Type_commit(&ftype3);
    MPI_Type_commit(&mtype3);
    TCHK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ftype3, "native", info));
    TCHK(MPI_File_write_all(fh, halo, 1, mtype3, &st));
    int cnt = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    TASSERT(cnt == (int)nloc, "3-D write_all wrote %d doubles, want %zu", cnt, nloc);

    /* read own block back through the same view into a contiguous buffer */
    double *blk = t_malloc(nloc * sizeof(double) + 1), *eblk = t_malloc(nloc * sizeof(double) + 1);
    for (int i = 0, n = 0; i < ls3[0]; i++)
        for (int j = 0; j < ls3[1]; j++)
            for (int k = 0; k < ls3[2]; k++)
                eblk[n++] = t_field(0, st3[0] + i, st3[1] + j, st3[2] + k);
    TCHK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(blk, 0, nloc * sizeof(double));
    TCHK(MPI_File_read_all(fh, blk, (int)nloc, MPI_DOUBLE, &st));
    TEXPECT_BYTES(blk, eblk, nloc * sizeof(double), 0, "3-D block read through its own view");

    /* ---- region 2: 2-D subarray at an unaligned displacement ------------------- */
    int d2[2] = {0, 0}, c2[2];
    MPI_Dims_create(P, 2, d2);
    c2[0] = r / d2[1];
    c2[1] = r % d2[1];
    int st2[2], ls2[2];
    for (int d = 0; d < 2; d++)
        t_split(G2[d], d2[d], c2[d], &st2[d], &ls2[d]);
    int32_t *a2 = t_malloc((size_t)ls2[0] * ls2[1] * 4);
    for (int i = 0; i < ls2[0]; i++)
        for (int j = 0; j < ls2[1]; j++)
            a2[i * ls2[1] + j] = val2(st2[0] + i, st2[1] + j);
    MPI_Datatype ftype2;
    MPI_Type_create_subarray(2, G2, ls2, st2, MPI_ORDER_C, MPI_INT32_T, &ftype2);
    MPI_Type_commit(&ftype2);
    TCHK(MPI_File_set_view(fh, D2, MPI_INT32_T, ftype2, "native", info));
    TCHK(MPI_File_write_all(fh, a2, ls2[0] * ls2[1], MPI_INT32_T, &st));

    /* ---- region 3: vector view, tiles interleaved by rank, collective ----------- */
    MPI_Datatype vec, ftype3v;
    MPI_Type_vector(VN, VB, VB * P, MPI_INT32_T, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)VN * VB * P * 4, &ftype3v);
    MPI_Type_commit(&ftype3v);
    int32_t *a3 = t_malloc((size_t)VN * VB * 4);
    for (int tl = 0; tl < VN; tl++)
        for (int k = 0; k < VB; k++)
            a3[tl * VB + k] = val3(r, tl, k);
    TCHK(MPI_File_set_view(fh, D3 + (MPI_Offset)r * VB * 4, MPI_INT32_T, ftype3v, "native", info));
    TCHK(MPI_File_write_all(fh, a3, VN * VB, MPI_INT32_T, &st));

    /* ---- region 4: vector view, independent (noncontiguous) writes -------------- */
    MPI_Datatype vec4, ftype4;
    MPI_Type_vector(IN, IB, IB * P, MPI_INT32_T, &vec4);
    MPI_Type_create_resized(vec4, 0, (MPI_Aint)IN * IB * P * 4, &ftype4);
    MPI_Type_commit(&ftype4);
    int32_t *a4 = t_malloc((size_t)IN * IB * 4);
    for (int tl = 0; tl < IN; tl++)
        for (int k = 0; k < IB; k++)
            a4[tl * IB + k] = val4(r, tl, k);
    TCHK(MPI_File_set_view(fh, D4 + (MPI_Offset)r * IB * 4, MPI_INT32_T, ftype4, "native", info));
    /* two independent calls: first half of the tiles, then the rest */
    TCHK(MPI_File_write(fh, a4, (IN / 2) * IB, MPI_INT32_T, &st));
    TCHK(MPI_File_write(fh, a4 + (IN / 2) * IB, (IN - IN / 2) * IB, MPI_INT32_T, &st));

    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    TASSERT(t_get_size(fh) == fsize, "size %lld, want %lld", (long long)t_get_size(fh),
            (long long)fsize);

    /* ---- read everything back contiguously and check the global layout ---------- */
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    uint8_t *all = t_malloc((size_t)fsize), *exp = t_malloc((size_t)fsize);
    memset(exp, 0, (size_t)fsize); /* gaps between regions are holes */
    double *e3 = (double *)exp;
    for (int i = 0, n = 0; i < G3[0]; i++)
        for (int j = 0; j < G3[1]; j++)
            for (int k = 0; k < G3[2]; k++)
                e3[n++] = t_field(0, i, j, k);
    for (int i = 0; i < G2[0]; i++)
        for (int j = 0; j < G2[1]; j++) {
            int32_t v = val2(i, j);
            memcpy(exp + D2 + ((MPI_Offset)i * G2[1] + j) * 4, &v, 4);
        }
    for (int o = 0; o < P; o++)
        for (int tl = 0; tl < VN; tl++)
            for (int k = 0; k < VB; k++) {
                int32_t v = val3(o, tl, k);
                memcpy(exp + D3 + (((MPI_Offset)tl * P + o) * VB + k) * 4, &v, 4);
            }
    for (int o = 0; o < P; o++)
        for (int tl = 0; tl < IN; tl++)
            for (int k = 0; k < IB; k++) {
                int32_t v = val4(o, tl, k);
                memcpy(exp + D4 + (((MPI_Offset)tl * P + o) * IB + k) * 4, &v, 4);
            }
    memset(all, 0xEE, (size_t)fsize);
    TCHK(MPI_File_read_at_all(fh, 0, all, (int)fsize, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)fsize, "read %d bytes, want %lld", t_count(&st), (long long)fsize);
    TEXPECT_BYTES(all, exp, bytes3, 0, "region 1 (3-D subarray) read contiguously");
    TEXPECT_BYTES(all + bytes3, exp + bytes3, D2 - bytes3, bytes3, "gap before region 2 (hole)");
    TEXPECT_BYTES(all + D2, exp + D2, fsize - D2, D2, "regions 2-4 read contiguously");

    /* ---- region 2 again through a different decomposition: column slabs --------- */
    int cs, cl;
    t_split(G2[1], P, r, &cs, &cl);
    int sub[2] = {G2[0], cl}, sst[2] = {0, cs};
    MPI_Datatype ftype2c;
    MPI_Type_create_subarray(2, G2, sub, sst, MPI_ORDER_C, MPI_INT32_T, &ftype2c);
    MPI_Type_commit(&ftype2c);
    TCHK(MPI_File_set_view(fh, D2, MPI_INT32_T, ftype2c, "native", info));
    int32_t *slab = t_malloc((size_t)G2[0] * cl * 4 + 4), *eslab = t_malloc((size_t)G2[0] * cl * 4 + 4);
    for (int i = 0; i < G2[0]; i++)
        for (int j = 0; j < cl; j++)
            eslab[i * cl + j] = val2(i, cs + j);
    TCHK(MPI_File_read_all(fh, slab, G2[0] * cl, MPI_INT32_T, &st));
    TEXPECT_BYTES(slab, eslab, (uint64_t)G2[0] * cl * 4, D2, "region 2 read as column slabs");

    /* ---- regions 3 and 4 through their vector views, independently -------------- */
    int32_t *back = t_malloc((size_t)IN * IB * 4);
    TCHK(MPI_File_set_view(fh, D3 + (MPI_Offset)r * VB * 4, MPI_INT32_T, ftype3v, "native", info));
    TCHK(MPI_File_read(fh, back, VN * VB, MPI_INT32_T, &st));
    TEXPECT_BYTES(back, a3, (uint64_t)VN * VB * 4, D3, "region 3 via vector view (read)");
    TCHK(MPI_File_set_view(fh, D4 + (MPI_Offset)r * IB * 4, MPI_INT32_T, ftype4, "native", info));
    TCHK(MPI_File_read_all(fh, back, IN * IB, MPI_INT32_T, &st));
    TEXPECT_BYTES(back, a4, (uint64_t)IN * IB * 4, D4, "region 4 via vector view (read_all)");

    TCHK(MPI_File_close(&fh));

    /* ---- region 4 rewritten independently through a write-only handle ---------- */
    fh = t_open(&t, t.target, MPI_MODE_WRONLY, info);
    for (int tl = 0; tl < IN; tl++)
        for (int k = 0; k < IB; k++)
            a4[tl * IB + k] = ~val4(r, tl, k);
    TCHK(MPI_File_set_view(fh, D4 + (MPI_Offset)r * IB * 4, MPI_INT32_T, ftype4, "native", info));
    TCHK(MPI_File_write(fh, a4, IN * IB, MPI_INT32_T, &st));
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    for (int o = 0; o < P; o++)
        for (int tl = 0; tl < IN; tl++)
            for (int k = 0; k < IB; k++) {
                int32_t v = ~val4(o, tl, k);
                memcpy(exp + D4 + (((MPI_Offset)tl * P + o) * IB + k) * 4, &v, 4);
            }
    memset(all, 0xEE, (size_t)fsize);
    TCHK(MPI_File_read_at_all(fh, 0, all, (int)fsize, MPI_BYTE, &st));
    TEXPECT_BYTES(all, exp, fsize, 0, "whole file after independent strided writes (WRONLY)");
    TCHK(MPI_File_close(&fh));
    t_delete(&t, t.target, info);

    MPI_Type_free(&ftype3), MPI_Type_free(&mtype3), MPI_Type_free(&ftype2);
    MPI_Type_free(&ftype2c), MPI_Type_free(&vec), MPI_Type_free(&ftype3v);
    MPI_Type_free(&vec4), MPI_Type_free(&ftype4);
    MPI_Comm_free(&cart);
    MPI_Info_free(&info);
    free(halo), free(blk), free(eblk), free(a2), free(a3), free(a4);
    free(all), free(exp), free(slab), free(eslab), free(back);
    return t_finish(&t);
}
