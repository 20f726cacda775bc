/* MPI_File_sync makes what was written survive the loss of the node's volatile tiers
 * (MPI-4.0 14.6.1: sync transfers all previous writes to the storage device): a job
 * that synced and then died, on a node whose RAM tier is then wiped, loses nothing it
 * synced, whatever hcomp_drain says. hcomp targets only. tests/mpi/run.sh drives it:
 *
 *   t_durable --write --drain=MODE [--sync=tiers] --ram=DIR TARGET [CONFIG]
 *       phase 1: A = 1 MiB per rank, written collectively, then MPI_File_sync; B = 1 MiB
 *       per rank in 64 KiB independent writes (each rank its own interleaved blocks),
 *       then MPI_File_sync again. Before the first sync the RAM tier DIR must hold
 *       data (else the test would prove nothing). After the second sync rank 0 prints
 *       "SYNCED", and every rank kills itself with SIGKILL: no close, no drain.
 *   (run.sh checks the job died after "SYNCED", then wipes everything in DIR)
 *   t_durable --verify [--lost] [--delete] TARGET [CONFIG]
 *       phase 2 (a new mpiexec, any rank count): every byte of A and B reads back
 *       exactly; --lost (the hcomp_sync=tiers opt-out, which leaves the data on the
 *       wiped tier): the reads fail with an MPI error naming where the data was, and no
 *       read returns wrong bytes; --delete removes the file.
 *
 * The data is smooth doubles plus a counter (compressible, so pieces are encoded) and
 * the writers' rank count is stored in the first 8 bytes of A. */
#include "tfault.h"

#include <signal.h>

#define PER_RANK (1 * MiB)
#define BLOCK (64 * KiB)

static void fill_part(uint8_t *buf, uint64_t len, uint64_t file_off, int part)
{
    double *d = (double *)buf;
    for (uint64_t i = 0; i < len / 8; i++) {
        uint64_t k = file_off / 8 + i;
        d[i] = sin((double)k * 1e-3) * 100.0 + (double)(k % 7) + part * 1000.0;
    }
}

static const char *opt_value(const tctx *t, const char *name)
{
    size_t l = strlen(name);
    for (int i = 0; i < t->nopts; i++)
        if (strncmp(t->opts[i], name, l) == 0 && t->opts[i][l] == '=')
            return t->opts[i] + l + 1;
    return NULL;
}

static int write_phase(tctx *t)
{
    const char *drain = opt_value(t, "--drain"), *sync = opt_value(t, "--sync");
    const char *ram = opt_value(t, "--ram");
    TASSERT(drain && ram, "--write needs --drain=MODE and --ram=DIR");
    MPI_Info info = t_info(t, "hcomp_drain", drain, "hcomp_sync", sync ? sync : "durable",
                           (char *)NULL);
    const int r = t->rank, P = t->nprocs;
    MPI_Status st;
    t_delete_quiet(t, t->target, info);
    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    uint8_t *a = t_malloc(PER_RANK);
    uint64_t off = (uint64_t)r * PER_RANK;
    fill_part(a, PER_RANK, off, 0);
    if (r == 0) {
        uint64_t np = (uint64_t)P;
        memcpy(a, &np, 8);
    }
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)off, a, (int)PER_RANK, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t mine = t_segment_bytes(ram), before = 0;
    MPI_Allreduce(&mine, &before, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    TASSERT(before > 0, "premise: nothing reached the RAM tier %s before the sync (drain=%s)",
            ram, drain);
    TCHK(MPI_File_sync(fh));

    uint64_t b0 = (uint64_t)P * PER_RANK;
    uint8_t *b = t_malloc(BLOCK);
    for (uint64_t k = (uint64_t)r; k < (uint64_t)P * PER_RANK / BLOCK; k += (uint64_t)P) {
        fill_part(b, BLOCK, b0 + k * BLOCK, 1);
        TCHK(MPI_File_write_at(fh, (MPI_Offset)(b0 + k * BLOCK), b, (int)BLOCK, MPI_BYTE, &st));
    }
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        printf("SYNCED %s: A and B written and synced by %d ranks (drain=%s, sync=%s); "
               "%llu bytes were on the RAM tier before the first sync; dying now\n",
               t->target, P, drain, sync ? sync : "durable", (unsigned long long)before);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    raise(SIGKILL);
    return 1;   /* not reached */
}

static int verify_phase(tctx *t)
{
    int lost = t_has_opt(t, "--lost");
    MPI_Info info = t_info(t, (char *)NULL);
    MPI_File fh = t_open(t, t->target, MPI_MODE_RDONLY, info);
    MPI_Offset size = 0;
    TCHK(MPI_File_get_size(fh, &size));
    uint64_t np = 0;
    MPI_Status st;
    int rc0 = MPI_File_read_at(fh, 0, &np, 8, MPI_BYTE, &st);
    if (!lost) {
        TCHK(rc0);
        TASSERT(np >= 1 && np <= 64, "the writer count at offset 0 is %llu", (unsigned long long)np);
        TASSERT((uint64_t)size == 2 * np * PER_RANK, "size %lld, want %llu", (long long)size,
                (unsigned long long)(2 * np * PER_RANK));
    } else
        np = (uint64_t)size / (2 * PER_RANK);
    uint8_t *got = t_malloc(PER_RANK), *want = t_malloc(PER_RANK);
    int failed_reads = 0;
    /* every writer's A and B range, shared among the verifying ranks */
    for (uint64_t part = 0; part < 2 * np; part++) {
        if (part % (uint64_t)t->nprocs != (uint64_t)t->rank)
            continue;
        uint64_t off = part * PER_RANK;
        fill_part(want, PER_RANK, off, part < np ? 0 : 1);
        if (off == 0)
            memcpy(want, &np, 8);
        memset(got, 0xa5, PER_RANK);
        int rc = MPI_File_read_at(fh, (MPI_Offset)off, got, (int)PER_RANK, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS) {
            TASSERT(lost, "reading the synced bytes [%llu, %llu) failed: %s",
                    (unsigned long long)off, (unsigned long long)(off + PER_RANK), t_errstr(rc));
            char s[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, s, &len);
            TASSERT(strstr(s, "tier") != NULL, "the error does not say where the data was: %s", s);
            failed_reads++;
            continue;
        }
        TEXPECT_BYTES(got, want, PER_RANK, off, t_fmt("%s of writer %llu", part < np ? "A" : "B",
                                                      (unsigned long long)(part % np)));
    }
    int all_failed = 0;
    MPI_Allreduce(&failed_reads, &all_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (lost)
        TASSERT(all_failed > 0, "hcomp_sync=tiers, RAM tier wiped, yet every byte read back: "
                "the opt-out did not leave the data on the volatile tier");
    TCHK(MPI_File_close(&fh));
    t_log(t, "%s: %s", t->target, lost ? t_fmt("%d reads failed with a clear error, none returned "
                                                "wrong bytes", all_failed)
                                       : "every synced byte read back after the RAM tier was wiped");
    if (t_has_opt(t, "--delete"))
        t_delete(t, t->target, info);
    MPI_Info_free(&info);
    free(got);
    free(want);
    return t_finish(t);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp) {
        if (t.rank == 0)
            printf("SKIP t_durable: hcomp targets only\n");
        MPI_Finalize();
        return 0;
    }
    if (t_has_opt(&t, "--write"))
        return write_phase(&t);
    if (t_has_opt(&t, "--verify"))
        return verify_phase(&t);
    TFAIL("give --write or --verify");
}
