/* Write-back after close (hcomp_drain=writeback; docs/TIERS.md, "Write-back"): the close
 * returns with the pieces still on the node-local tier, the process moves them to the
 * shared tier behind the program, readers on other nodes wait for the move and read the
 * right bytes, readers on the writer's node read in place, MPI_Finalize waits. hcomp
 * targets only.
 *
 * Ranks are put on two simulated nodes (HCOMP_NODE: even ranks wbn0, odd ranks wbn1),
 * each with a node-local tier of its own (DIR/ram-<node>); the shared tier is the
 * file's directory, emulated at 12 MB/s so that a drain takes about a second and the
 * reads below come while it runs. Parts:
 *   close     each rank writes 3 MiB (independent writes), the collective close returns
 *             with the rank's node-local tier still holding them; then every rank reads
 *             the block of a rank on the other node (it waits for that drain) and its
 *             own (in place, or where the drain put it): every byte checked; the
 *             node-local tiers end empty.
 *   rewrite   the file reopened and half of each block rewritten while the first
 *             close's drains run: the newest bytes win, read from the other node.
 *   delete    the file deleted right after the close, drains pending: nothing is left.
 *   full      a node-local tier too small for two checkpoints: the second, written while
 *             the first drains, goes where there is room; both read back.
 *   clobber   the file emptied by rank 0 (truncate(2), as PnetCDF's ncmpi_create does) right
 *             after its close, moves pending, then created again: an hcomp file again
 *             (not passed through as a plain one), whose new bytes read back.
 *   finalize  a file of each rank's own, closed, then MPI_Finalize at once: after it the
 *             rank's node-local tier is empty (MPI_Finalize waited for the drain).
 */
#include "tfault.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>

#define BLOCK (3 * MiB)

static char ram_dir[2][4300], top[4200], cfg[4300];

static int node_of(int rank) { return rank % 2; }

static void fill(uint8_t *b, uint64_t len, uint64_t off, uint64_t seed)
{
    /* half compressible: a drain re-encodes, and reads decode */
    t_fill(b, len, off, seed);
    for (uint64_t i = 0; i < len; i += 2)
        b[i] = (uint8_t)((off + i) >> 12);
}

/* Poll until this rank's node-local tier holds no segment data (its drains done). */
static void expect_drained(const tctx *t, double within, const char *what)
{
    double t0 = t_now();
    while (t_segment_bytes(ram_dir[node_of(t->rank)]) > 0) {
        if (t_now() - t0 > within)
            TFAIL("%s: node-local tier %s still holds %llu bytes after %.0f s", what,
                  ram_dir[node_of(t->rank)],
                  (unsigned long long)t_segment_bytes(ram_dir[node_of(t->rank)]), within);
        usleep(20000);
    }
}

static void write_blocks(const tctx *t, const char *name, MPI_Info info, uint64_t seed,
                         uint64_t from, uint64_t len)
{
    MPI_File fh = t_open(t, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    uint8_t *b = t_malloc(len);
    uint64_t off = (uint64_t)t->rank * BLOCK + from;
    fill(b, len, off, seed);
    TCHK(MPI_File_write_at(fh, (MPI_Offset)off, b, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
    free(b);
    double t0 = t_now();
    TCHK(MPI_File_close(&fh));
    t_log(t, "%s: close took %.3f s", name, t_now() - t0);
}

/* Read rank r's block and compare with what seeds[] wrote where (seed_lo below split,
 * seed_hi from it). */
static void check_block(const tctx *t, const char *name, MPI_Info info, int r, uint64_t seed_lo,
                        uint64_t seed_hi, uint64_t split)
{
    MPI_File fh = MPI_FILE_NULL;
    TCHK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, info, &fh));
    uint8_t *got = t_malloc(BLOCK), *exp = t_malloc(BLOCK);
    uint64_t off = (uint64_t)r * BLOCK;
    fill(exp, split, off, seed_lo);
    if (split < BLOCK)
        fill(exp + split, BLOCK - split, off + split, seed_hi);
    double t0 = t_now();
    MPI_Status st;
    TCHK(MPI_File_read_at(fh, (MPI_Offset)off, got, (int)BLOCK, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)BLOCK, "read %d bytes of rank %d's block, want %d",
            t_count(&st), r, (int)BLOCK);
    TEXPECT_BYTES(got, exp, BLOCK, off, "block read back");
    t_log(t, "%s: rank %d's block (node wbn%d) read from node wbn%d in %.3f s", name, r,
          node_of(r), node_of(t->rank), t_now() - t0);
    TCHK(MPI_File_close(&fh));
    free(got);
    free(exp);
}

static void part_close(const tctx *t, MPI_Info info)
{
    const char *name = t_name(t, ".close");
    write_blocks(t, name, info, 11, 0, BLOCK);
    /* the close returned before the move: the pieces are still on this node */
    TASSERT(t_segment_bytes(ram_dir[node_of(t->rank)]) > 0,
            "the close returned with nothing on node-local tier %s: the engine wrote past "
            "it, or the close drained it (no write-back)", ram_dir[node_of(t->rank)]);
    MPI_Barrier(MPI_COMM_WORLD);
    int other = (t->rank + 1) % t->nprocs;
    check_block(t, name, info, other, 11, 11, BLOCK);
    check_block(t, name, info, t->rank, 11, 11, BLOCK);
    expect_drained(t, 60, "close");
    MPI_Barrier(MPI_COMM_WORLD);
    check_block(t, name, info, other, 11, 11, BLOCK);
    MPI_File fh = t_open(t, name, MPI_MODE_RDONLY, info);
    TASSERT(t_get_size(fh) == (MPI_Offset)(BLOCK * (uint64_t)t->nprocs), "size %lld",
            (long long)t_get_size(fh));
    TCHK(MPI_File_close(&fh));
    t_delete(t, name, info);
}

/* A reader that does not wait (hcomp_drain_wait=0), right after the close: either the
 * move was done already and the bytes are right, or the read fails naming the node that
 * holds them and the command that moves them; never other bytes. */
static void part_nowait(const tctx *t, MPI_Info info)
{
    const char *name = t_name(t, ".nowait");
    write_blocks(t, name, info, 61, 0, BLOCK);
    MPI_Barrier(MPI_COMM_WORLD);
    int other = (t->rank + 1) % t->nprocs;
    MPI_Info ni;
    MPI_Info_dup(info, &ni);
    MPI_Info_set(ni, "hcomp_drain_wait", "0");
    MPI_File fh = MPI_FILE_NULL;
    TCHK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, ni, &fh));
    uint8_t *got = t_malloc(BLOCK), *exp = t_malloc(BLOCK);
    uint64_t off = (uint64_t)other * BLOCK;
    fill(exp, BLOCK, off, 61);
    MPI_Status st;
    int rc = MPI_File_read_at(fh, (MPI_Offset)off, got, (int)BLOCK, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS) {
        TASSERT(t_count(&st) == (int)BLOCK, "read %d bytes", t_count(&st));
        TEXPECT_BYTES(got, exp, BLOCK, off, "block read without waiting");
        t_log(t, "nowait: the move was done before the read");
    } else {
        char msg[MPI_MAX_ERROR_STRING];
        int n = 0;
        MPI_Error_string(rc, msg, &n);
        char want[32];
        snprintf(want, sizeof want, "node wbn%d", node_of(other));
        TASSERT(strstr(msg, want) && strstr(msg, "hcomp drain"), "the read failed, but its "
                "error does not name %s and the command that moves the bytes: %s", want, msg);
        t_log(t, "nowait: the read failed as it should: %s", msg);
    }
    TCHK(MPI_File_close(&fh));
    MPI_Info_free(&ni);
    free(got);
    free(exp);
    expect_drained(t, 60, "nowait");
    MPI_Barrier(MPI_COMM_WORLD);
    check_block(t, name, info, other, 61, 61, BLOCK);   /* and after the move, it reads */
    t_delete(t, name, info);
}

static void part_rewrite(const tctx *t, MPI_Info info)
{
    const char *name = t_name(t, ".rewrite");
    write_blocks(t, name, info, 21, 0, BLOCK);
    write_blocks(t, name, info, 22, BLOCK / 2, BLOCK / 2);     /* first drains still running */
    MPI_Barrier(MPI_COMM_WORLD);
    int other = (t->rank + 1) % t->nprocs;
    check_block(t, name, info, other, 21, 22, BLOCK / 2);
    expect_drained(t, 60, "rewrite");
    MPI_Barrier(MPI_COMM_WORLD);
    check_block(t, name, info, t->rank, 21, 22, BLOCK / 2);
    t_delete(t, name, info);
}

static void part_delete(const tctx *t, MPI_Info info)
{
    const char *name = t_name(t, ".delete");
    write_blocks(t, name, info, 31, 0, BLOCK);
    t_delete(t, name, info);      /* drains pending on every node */
    expect_drained(t, 60, "delete");
    MPI_Barrier(MPI_COMM_WORLD);
    TASSERT(!t_exists(t_path(t, ".delete")), "the deleted file is still there");
}

static void part_full(const tctx *t, MPI_Info info)
{
    /* the node-local tier holds 4 MiB per node: one checkpoint of 2 ranks fills it */
    const char *a = t_name(t, ".full-a"), *b = t_name(t, ".full-b");
    char an[4200], bn[4200];
    snprintf(an, sizeof an, "%s", a);
    snprintf(bn, sizeof bn, "%s", b);
    write_blocks(t, an, info, 41, 0, BLOCK);
    write_blocks(t, bn, info, 42, 0, BLOCK);
    MPI_Barrier(MPI_COMM_WORLD);
    int other = (t->rank + 1) % t->nprocs;
    check_block(t, an, info, other, 41, 41, BLOCK);
    check_block(t, bn, info, other, 42, 42, BLOCK);
    expect_drained(t, 90, "full");
    MPI_Barrier(MPI_COMM_WORLD);
    t_delete(t, an, info);
    t_delete(t, bn, info);
}

static int rm_cb(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return type == FTW_DP ? rmdir(p) : unlink(p);
}

static void part_clobber(const tctx *t, MPI_Info info)
{
    const char *name = t_name(t, ".clobber");
    write_blocks(t, name, info, 71, 0, BLOCK);
    if (t->rank == 0)
        TASSERT(truncate(t_path(t, ".clobber"), 0) == 0, "truncate: %s", strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh = t_open(t, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    MPI_Info got;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    TCHK(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, "hcomp_file_kind", MPI_MAX_INFO_VAL, v, &flag);
    TASSERT(flag && strcmp(v, "hcomp") == 0, "an emptied file opened to be written anew while "
            "its moves ran: hcomp_file_kind is %s, want hcomp", flag ? v : "(absent)");
    MPI_Info_free(&got);
    uint8_t *b = t_malloc(BLOCK);
    uint64_t off = (uint64_t)t->rank * BLOCK;
    fill(b, BLOCK, off, 72);
    TCHK(MPI_File_write_at(fh, (MPI_Offset)off, b, (int)BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    free(b);
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_block(t, name, info, (t->rank + 1) % t->nprocs, 72, 72, BLOCK);
    expect_drained(t, 60, "clobber");
    MPI_Barrier(MPI_COMM_WORLD);
    t_delete(t, name, info);
    /* the emptied file's segment directory and writer logs beside it stay, as after any
     * truncate (docs/TIERS.md, "What you get on disk": `hcomp orphans` finds them) */
    if (t->rank == 0) {
        const char *dir = t_dirname(t->path);
        const char *base = strrchr(t->path, '/') ? strrchr(t->path, '/') + 1 : t->path;
        char pre[600];
        snprintf(pre, sizeof pre, ".%.500s.clobber.", base);
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (strncmp(e->d_name, pre, strlen(pre)) == 0) {
                char p[8400];
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                nftw(p, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
            }
        if (d)
            closedir(d);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}


int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp) {
        if (t.rank == 0)
            printf("SKIP %s: hcomp targets only\n", t.test);
        MPI_Finalize();
        return 0;
    }
    char node[16];
    snprintf(node, sizeof node, "wbn%d", node_of(t.rank));
    setenv("HCOMP_NODE", node, 1);
    snprintf(top, sizeof top, "%s.wb", t.path);
    snprintf(cfg, sizeof cfg, "%s/tiers.json", top);
    for (int n = 0; n < 2; n++)
        snprintf(ram_dir[n], sizeof ram_dir[n], "%s/ram-wbn%d", top, n);
    if (t.rank == 0) {
        t_mkdir(&t, top);
        t_mkdir(&t, ram_dir[0]);
        t_mkdir(&t, ram_dir[1]);
        char json[10000];
        snprintf(json, sizeof json,
                 "{\"version\":1,\"tiers\":["
                 "{\"name\":\"nvme\",\"path\":\"%s/ram-${HCOMP_NODE}\",\"capacity\":\"%s\","
                 "\"scope\":\"node-local\",\"bandwidth\":\"2GB/s\",\"measure\":false},"
                 "{\"name\":\"pfs\",\"path\":\"@filedir\",\"scope\":\"shared\","
                 "\"bandwidth\":\"12MB/s\",\"latency\":\"1ms\",\"emulate\":true}]}\n",
                 top, "4MiB");
        t_write_text(&t, cfg, json);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info info = t_info(&t, "hcomp_config", cfg, "hcomp_drain", "writeback",
                           "hcomp_piece_size", "1MiB", "hcomp_drain_wait", "120", NULL);
    if (t.nprocs >= 2) {
        part_close(&t, info);
        part_nowait(&t, info);
        part_rewrite(&t, info);
        part_delete(&t, info);
        part_full(&t, info);
        part_clobber(&t, info);
    }

    /* finalize: a file of this rank's own, closed, then MPI_Finalize at once */
    char own[4300];
    snprintf(own, sizeof own, "%s/own-%d", top, t.rank);
    char own_target[4400];
    snprintf(own_target, sizeof own_target, "hcomp:%s", own);
    MPI_File fh = MPI_FILE_NULL;
    TCHK(MPI_File_open(MPI_COMM_SELF, own_target, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    uint8_t *b = t_malloc(BLOCK);
    fill(b, BLOCK, 0, 51);
    TCHK(MPI_File_write_at(fh, 0, b, (int)BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    free(b);
    TCHK(MPI_File_close(&fh));
    int pending = t_segment_bytes(ram_dir[node_of(t.rank)]) > 0;
    MPI_Info_free(&info);
    int rank = t.rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    /* after MPI_Finalize: no MPI; the drain must be over (this rank's own file is the only
     * one left on this node that this rank wrote) */
    char found[64][4096];
    int n = t_find_files(ram_dir[node_of(rank)], ".seg", found, 64);
    for (int i = 0; i < n && i < 64; i++)
        if (strstr(found[i], "own-") && strstr(found[i], t_fmt("own-%d.", rank))) {
            fprintf(stderr, "FAIL t_writeback rank %d: after MPI_Finalize %s is still on the "
                    "node-local tier (MPI_Finalize did not wait for the write-back)\n", rank,
                    found[i]);
            return 1;
        }
    printf("rank %d: finalize: %s at close, none after MPI_Finalize\n", rank,
           pending ? "pieces still on the node-local tier" : "nothing left");
    /* the file's remains, removed by hand (no MPI_File_delete after MPI_Finalize): its
     * mapping file, its segment directory beside it and its writer logs */
    DIR *d = opendir(top);
    struct dirent *e;
    char base[64];
    snprintf(base, sizeof base, "own-%d", rank);
    while (d && (e = readdir(d)) != NULL) {
        const char *nm = e->d_name + (e->d_name[0] == '.');
        if (strncmp(nm, base, strlen(base)) == 0 && (nm[strlen(base)] == '.' || !nm[strlen(base)])) {
            char p[8400];
            snprintf(p, sizeof p, "%s/%s", top, e->d_name);
            nftw(p, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
        }
    }
    if (d)
        closedir(d);
    if (rank == 0) {
        /* the others' remains too, once they are gone: wait a little for them */
        for (int i = 0; i < 200; i++) {
            int left = 0;
            DIR *dd = opendir(top);
            while (dd && (e = readdir(dd)) != NULL)
                left += strstr(e->d_name, "own-") != NULL;
            if (dd)
                closedir(dd);
            if (!left)
                break;
            usleep(50000);
        }
        nftw(top, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
    }
    return 0;
}
