/* The engine's weights change its decisions as documented: the same compressible data
 * written with hcomp_priority=async (compression speed only) and with archival (ratio
 * only), and with the equivalent explicit hcomp_weights, is stored smaller under
 * archival weights; MPI_File_get_info reports the weights in force; everything reads
 * back exactly. hcomp targets only.
 *
 *   t_engine TARGET [CONFIG]     (CONFIG is ignored: the test makes its own)
 *
 * The tiers are two directories with the speeds of RAM and of a disk, so that
 * compression pays off on the slow one. */
#include "tcommon.h"

#define TOTAL (8 * MiB)

/* write the data with the hint key=value, return the stored size (on every rank) */
static uint64_t run(const tctx *t, const ttiers *tt, const char *key, const char *value,
                    const char *weights)
{
    MPI_Info info = t_info(t, key, value, NULL);
    MPI_Status st;
    uint64_t a = (uint64_t)t->rank * TOTAL / t->nprocs, b = (uint64_t)(t->rank + 1) * TOTAL / t->nprocs;
    uint8_t *w = t_malloc(b - a), *r = t_malloc(b - a);
    t_gen_log_field(w, a, b - a, TOTAL);

    MPI_File fh = t_open(t, t->target, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, info);
    MPI_Info got;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    TCHK(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, "hcomp_weights", MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&got);
    TASSERT(flag && strcmp(v, weights) == 0, "%s=%s: hcomp_weights reported as '%s', want '%s'",
            key, value, flag ? v : "(missing)", weights);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, w, (int)(b - a), MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t s = 0;
    if (t->rank == 0)
        s = t_stored(tt, t->path);
    MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

    MPI_Info_free(&info);
    info = t_info(t, NULL);
    fh = t_open(t, t->target, MPI_MODE_RDONLY, info);
    memset(r, 0, b - a);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)a, r, (int)(b - a), MPI_BYTE, &st));
    TEXPECT_BYTES(r, w, b - a, a, t_fmt("%s=%s: read back", key, value));
    TCHK(MPI_File_close(&fh));
    t_delete(t, t->target, info);
    MPI_Info_free(&info);
    free(w), free(r);
    t_log(t, "%s=%-9s: 8 MiB stored in %llu bytes (ratio %.2f)", key, value,
          (unsigned long long)s, (double)TOTAL / (double)s);
    return s;
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_engine needs an hcomp: target");
    static const char *const caps[2] = {"unlimited", "unlimited"};
    ttiers tt;
    t_make_tiers(&t, &tt, 2, caps);
    if (t.rank == 0) {  /* speeds: a RAM-like tier, then a disk-like one */
        FILE *f = fopen(tt.cfg, "w");
        if (!f)
            TFAIL("%s: %s", tt.cfg, strerror(errno));
        fprintf(f, "{\"version\":1,\"tiers\":[{\"name\":\"ram\",\"path\":\"%s\",\"capacity\":\"2MiB\","
                "\"bandwidth\":\"10GB/s\",\"latency\":\"1us\",\"measure\":false},{\"name\":\"disk\","
                "\"path\":\"%s\",\"bandwidth\":\"100MB/s\",\"latency\":\"4ms\",\"measure\":false}]}\n", tt.dir[0], tt.dir[1]);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t.config = tt.cfg;
    t_delete_quiet(&t, t.target, MPI_INFO_NULL);

    uint64_t s_async = run(&t, &tt, "hcomp_priority", "async", "1,0,0");
    uint64_t s_arch = run(&t, &tt, "hcomp_priority", "archival", "0.01,0,0.99");
    uint64_t s_w = run(&t, &tt, "hcomp_weights", "0,0,5", "0,0,1");
    TASSERT(s_arch < s_async, "archival stored %llu bytes, async %llu: the weights changed "
            "nothing", (unsigned long long)s_arch, (unsigned long long)s_async);
    TASSERT(s_w < s_async, "weights 0,0,5 stored %llu bytes, async %llu",
            (unsigned long long)s_w, (unsigned long long)s_async);

    t_remove_tiers(&t, &tt);
    return t_finish(&t);
}
