/* Collective and independent contiguous writes and reads, read-after-write in the
 * same open (after sync-barrier-sync) and after reopening, short reads at EOF.
 *
 *   t_basic_rw TARGET [CONFIG]
 *
 * Also: a new file's permissions are 0666 minus the umask; MPI_MODE_CREATE on an
 * existing file keeps it; MPI_SEEK_END; a zero-length write past EOF leaves the
 * size alone.
 *
 * Layout: region A = one block per rank of uneven size (written collectively),
 * region B = per-rank chunks written independently in 4 pieces through the
 * individual file pointer. Every byte's expected value is t_byte(offset, seed). */
#include "tcommon.h"

#define SEED_A 1
#define SEED_B 2
#define CHUNK_B 200000 /* per rank in region B, written as 4 x 50000 */

static uint64_t block_len(int r) { return 300000 + 1000 * (uint64_t)r + 7; }
static uint64_t block_off(int r)
{
    uint64_t off = 0;
    for (int i = 0; i < r; i++)
        off += block_len(i);
    return off;
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    const int r = t.rank, P = t.nprocs;
    const uint64_t endA = block_off(P);
    const uint64_t endB = endA + (uint64_t)P * CHUNK_B;
    MPI_Info info = t_info(&t, NULL);
    MPI_Status st;

    t_delete_quiet(&t, t.target, info);
    MPI_File fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    TASSERT(t_get_size(fh) == 0, "new file has size %lld", (long long)t_get_size(fh));
    { /* a new file gets 0666 minus the umask, as with ufs */
        mode_t mask = umask(022);
        umask(mask);
        struct stat sb;
        if (stat(t.path, &sb) != 0)
            TFAIL("new file %s does not exist after MPI_File_open: %s", t.path, strerror(errno));
        TASSERT((sb.st_mode & 07777) == (0666 & ~mask), "new file %s has mode %04o, want %04o",
                t.path, (unsigned)(sb.st_mode & 07777), (unsigned)(0666 & ~mask));
    }

    /* --- region A: collective write_at_all, one block per rank --------------- */
    uint64_t len = block_len(r), off = block_off(r);
    uint8_t *wbuf = t_malloc(len), *rbuf = t_malloc(block_len(P));
    t_fill(wbuf, len, off, SEED_A);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)off, wbuf, (int)len, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)len, "write_at_all count %d, want %d", t_count(&st), (int)len);

    /* sync-barrier-sync makes other ranks' writes visible (MPI-4.0 14.6.1) */
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    TASSERT(t_get_size(fh) == (MPI_Offset)endA, "size after region A: %lld, want %llu",
            (long long)t_get_size(fh), (unsigned long long)endA);

    /* own block, independent read */
    memset(rbuf, 0xEE, len);
    TCHK(MPI_File_read_at(fh, (MPI_Offset)off, rbuf, (int)len, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)len, "read_at count %d", t_count(&st));
    TEXPECT_BYTES(rbuf, wbuf, len, off, "own block read back (same open)");

    /* neighbour's block, collective read */
    int nb = (r + 1) % P;
    uint64_t nlen = block_len(nb), noff = block_off(nb);
    uint8_t *ebuf = t_malloc(block_len(P) + CHUNK_B);
    t_fill(ebuf, nlen, noff, SEED_A);
    memset(rbuf, 0xEE, nlen);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)noff, rbuf, (int)nlen, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)nlen, "read_at_all count %d", t_count(&st));
    TEXPECT_BYTES(rbuf, ebuf, nlen, noff, "neighbour block read_at_all (same open)");

    /* --- region B: independent writes through the individual file pointer ---- */
    uint64_t boff = endA + (uint64_t)r * CHUNK_B;
    uint8_t *bbuf = t_malloc(CHUNK_B);
    t_fill(bbuf, CHUNK_B, boff, SEED_B);
    TCHK(MPI_File_seek(fh, (MPI_Offset)boff, MPI_SEEK_SET));
    for (int i = 0; i < 4; i++) {
        TCHK(MPI_File_write(fh, bbuf + i * (CHUNK_B / 4), CHUNK_B / 4, MPI_BYTE, &st));
        TASSERT(t_count(&st) == CHUNK_B / 4, "write count %d", t_count(&st));
    }
    MPI_Offset pos = -1;
    TCHK(MPI_File_get_position(fh, &pos));
    TASSERT(pos == (MPI_Offset)(boff + CHUNK_B), "position %lld after writes, want %llu",
            (long long)pos, (unsigned long long)(boff + CHUNK_B));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    TASSERT(t_get_size(fh) == (MPI_Offset)endB, "size after region B: %lld, want %llu",
            (long long)t_get_size(fh), (unsigned long long)endB);

    /* the previous rank's chunk, read independently via the file pointer */
    int pv = (r + P - 1) % P;
    uint64_t poff = endA + (uint64_t)pv * CHUNK_B;
    t_fill(ebuf, CHUNK_B, poff, SEED_B);
    memset(rbuf, 0xEE, CHUNK_B);
    TCHK(MPI_File_seek(fh, (MPI_Offset)poff, MPI_SEEK_SET));
    TCHK(MPI_File_read(fh, rbuf, CHUNK_B, MPI_BYTE, &st));
    TASSERT(t_count(&st) == CHUNK_B, "read count %d", t_count(&st));
    TEXPECT_BYTES(rbuf, ebuf, CHUNK_B, poff, "previous rank's region-B chunk (same open)");

    /* collective write_all / read_all through the individual pointer: rewrite the
     * first 1000 bytes of our own region-A block with the same data (no change) */
    TCHK(MPI_File_seek(fh, (MPI_Offset)off, MPI_SEEK_SET));
    TCHK(MPI_File_write_all(fh, wbuf, 1000, MPI_BYTE, &st));
    TCHK(MPI_File_seek(fh, (MPI_Offset)off, MPI_SEEK_SET));
    memset(rbuf, 0, 1000);
    TCHK(MPI_File_read_all(fh, rbuf, 1000, MPI_BYTE, &st));
    TEXPECT_BYTES(rbuf, wbuf, 1000, off, "write_all/read_all via file pointer");
    TCHK(MPI_File_close(&fh));

    /* --- MPI_MODE_CREATE on an existing file keeps its content; SEEK_END ------- */
    fh = t_open(&t, t.target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    TASSERT(t_get_size(fh) == (MPI_Offset)endB, "reopen with MPI_MODE_CREATE: size %lld, want %llu",
            (long long)t_get_size(fh), (unsigned long long)endB);
    TCHK(MPI_File_seek(fh, -(MPI_Offset)CHUNK_B, MPI_SEEK_END));
    TCHK(MPI_File_get_position(fh, &pos));
    TASSERT(pos == (MPI_Offset)(endB - CHUNK_B), "seek(-%d, SEEK_END) gave position %lld, want %llu",
            CHUNK_B, (long long)pos, (unsigned long long)(endB - CHUNK_B));
    memset(rbuf, 0xEE, CHUNK_B);
    TCHK(MPI_File_read(fh, rbuf, CHUNK_B, MPI_BYTE, &st));
    t_fill(ebuf, CHUNK_B, endB - CHUNK_B, SEED_B);
    TEXPECT_BYTES(rbuf, ebuf, CHUNK_B, endB - CHUNK_B, "last chunk after seek to SEEK_END");
    TCHK(MPI_File_close(&fh));

    /* --- reopen read-only: the whole file on every rank ------------------------ */
    fh = t_open(&t, t.target, MPI_MODE_RDONLY, info);
    TASSERT(t_get_size(fh) == (MPI_Offset)endB, "size after reopen: %lld, want %llu",
            (long long)t_get_size(fh), (unsigned long long)endB);
    uint8_t *all = t_malloc(endB), *exp = t_malloc(endB);
    t_fill(exp, endA, 0, SEED_A);
    t_fill(exp + endA, endB - endA, endA, SEED_B);
    memset(all, 0xEE, endB);
    TCHK(MPI_File_read_at_all(fh, 0, all, (int)endB, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)endB, "whole-file read count %d, want %d", t_count(&st),
            (int)endB);
    TEXPECT_BYTES(all, exp, endB, 0, "whole file after reopen");

    /* a zero-length write past EOF does not change the size */
    TCHK(MPI_File_close(&fh));
    fh = t_open(&t, t.target, MPI_MODE_RDWR, info);
    TCHK(MPI_File_write_at(fh, (MPI_Offset)endB + 12345, rbuf, 0, MPI_BYTE, &st));
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
    TASSERT(t_get_size(fh) == (MPI_Offset)endB, "size after a 0-byte write past EOF: %lld, "
            "want %llu", (long long)t_get_size(fh), (unsigned long long)endB);

    /* short read at EOF: ask 1000 bytes at size-100 */
    memset(rbuf, 0xEE, 1000);
    TCHK(MPI_File_read_at(fh, (MPI_Offset)endB - 100, rbuf, 1000, MPI_BYTE, &st));
    TASSERT(t_count(&st) == 100, "read across EOF returned %d bytes, want 100", t_count(&st));
    TEXPECT_BYTES(rbuf, exp + endB - 100, 100, endB - 100, "read across EOF");
    /* read entirely past EOF: 0 bytes */
    TCHK(MPI_File_read_at(fh, (MPI_Offset)endB + 5000, rbuf, 10, MPI_BYTE, &st));
    TASSERT(t_count(&st) == 0, "read past EOF returned %d bytes, want 0", t_count(&st));
    TCHK(MPI_File_close(&fh));

    t_delete(&t, t.target, info);
    MPI_Info_free(&info);
    free(wbuf), free(rbuf), free(ebuf), free(bbuf), free(all), free(exp);
    return t_finish(&t);
}
