/* wl_h5vpic: the parallel-HDF5 peer of wl_vpic. The same particles (vpic_gen.h), written
 * the way VPIC-IO writes them with HDF5: one group per step ("Step#t"), one 1-D dataset per
 * property (N*P elements, float or int32), every rank a hyperslab of N elements, collective
 * transfers (H5FD_MPIO_COLLECTIVE) through the MPI-IO driver (H5Pset_fapl_mpio with the
 * hints). Then the file is reopened and every rank reads its hyperslab of every dataset
 * back collectively and checks it.
 *
 *   --filter none      contiguous datasets (the form to use on an hcomp: file, which
 *                      compresses below HDF5)
 *   --filter deflate   chunked datasets (--chunk elements, default min(N, 262144)) with
 *                      the shuffle filter and deflate at --level (default 1): HDF5's own
 *                      compression, with parallel collective filtered writes
 *
 * Built against Debian's HDF5 and MPICH (h5pcc.mpich), run on this build's libmpi through
 * LD_LIBRARY_PATH (tests/abi/run.sh shows the mechanism).
 *
 *   --sync             H5Fflush before the close of the write (HDF5's MPI-IO driver makes it
 *                      an MPI_File_sync): the write is durable, and timed so
 *   --phase all        write, then read back in the same process (the default; the read
 *                      is then warm); write: the write alone; read: the read alone, of the
 *                      file an earlier `--phase write` with the same N, T and ranks left
 *                      (in a new job, after the page cache was emptied: a cold read)
 *
 * usage: wl_h5vpic FILE [--n PARTICLES_PER_RANK] [--steps T] [--filter none|deflate]
 *                  [--level L] [--chunk C] [--phase all|write|read] [common options]
 * RESULT: bytes (logical), write_s, read_s (create..close and open..close; 0 for a phase
 * not run), gen_s */
#include "vpic_gen.h"
#include "wl_common.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#define H5OK(expr)                                                                     \
    do {                                                                               \
        if ((expr) < 0)                                                                \
            wl_die("%s failed", #expr);                                                \
    } while (0)

static const char *h5name(const char *file)
{
    /* HDF5 hands the name to MPI_File_open unchanged, so the ROMIO prefix stays */
    return file;
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c,
            "[--n N] [--steps T] [--filter none|deflate] [--level L] [--chunk C] [--phase all|write|read]");
    long long n = 1 << 20, chunk = 0;
    int steps = 2, level = 1, deflate = 0;
    const char *phase = "all";
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--n") == 0) n = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--steps") == 0) steps = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--level") == 0) level = atoi(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--chunk") == 0) chunk = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--phase") == 0) phase = wl_optval(argc, argv, &i);
        else if (strcmp(argv[i], "--filter") == 0) {
            const char *f = wl_optval(argc, argv, &i);
            if (strcmp(f, "deflate") == 0) deflate = 1;
            else if (strcmp(f, "none") != 0) wl_die("--filter none|deflate");
        } else wl_die("unknown option %s", argv[i]);
    }
    if (n <= 0 || steps <= 0 || n > (1LL << 28) || level < 0 || level > 9)
        wl_die("need 0 < --n <= 2^28, --steps > 0, 0 <= --level <= 9");
    if (strcmp(phase, "all") != 0 && strcmp(phase, "write") != 0 && strcmp(phase, "read") != 0)
        wl_die("--phase %s: expected all, write or read", phase);
    int do_write = strcmp(phase, "read") != 0, do_read = strcmp(phase, "write") != 0;
    if (chunk <= 0)
        chunk = n < 262144 ? n : 262144;
    hsize_t total = (hsize_t) n * (hsize_t) wl_size, g0 = (hsize_t) n * (hsize_t) wl_rank;
    uint32_t *buf = malloc((size_t) n * 4 * VPIC_NVARS);
    if (buf == NULL)
        wl_die("out of memory");

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, c.info));
    H5OK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (deflate) {
        hsize_t ch = (hsize_t) chunk;
        H5OK(H5Pset_chunk(dcpl, 1, &ch));
        H5OK(H5Pset_shuffle(dcpl));
        H5OK(H5Pset_deflate(dcpl, (unsigned) level));
    }
    hid_t fspace = H5Screate_simple(1, &total, NULL);
    hsize_t cnt = (hsize_t) n;
    hid_t mspace = H5Screate_simple(1, &cnt, NULL);
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &g0, NULL, &cnt, NULL));

    double t_write = 0, t_gen = 0, t0;
    hid_t file;
    if (do_write) {
        t0 = wl_sync_time();
        file = H5Fcreate(h5name(c.file), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        if (file < 0)
            wl_die("H5Fcreate %s failed", c.file);
        t_write += wl_sync_time() - t0;
        for (int t = 0; t < steps; t++) {
            double g = MPI_Wtime();
            for (int v = 0; v < VPIC_NVARS; v++)
                vpic_fill(v, t, g0, (uint64_t) n, buf + (size_t) v * (size_t) n);
            t_gen += MPI_Wtime() - g;
            t0 = wl_sync_time();
            char name[64];
            snprintf(name, sizeof(name), "Step#%d", t);
            hid_t grp = H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (grp < 0)
                wl_die("H5Gcreate2 %s failed", name);
            for (int v = 0; v < VPIC_NVARS; v++) {
                hid_t type = v < 6 ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT32;
                hid_t d = H5Dcreate2(grp, vpic_var_names[v], type, fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
                if (d < 0)
                    wl_die("H5Dcreate2 %s/%s failed", name, vpic_var_names[v]);
                H5OK(H5Dwrite(d, type, mspace, fspace, dxpl, buf + (size_t) v * (size_t) n));
                H5OK(H5Dclose(d));
            }
            H5OK(H5Gclose(grp));
            t_write += wl_sync_time() - t0;
        }
        t0 = wl_sync_time();
        if (c.sync)
            H5OK(H5Fflush(file, H5F_SCOPE_GLOBAL)); /* MPI_File_sync in HDF5's MPI-IO driver */
        H5OK(H5Fclose(file));
        t_write += wl_sync_time() - t0;
    }

    double t_read = 0;
    long long rc0 = wl_rchar();
    if (do_read) {
        t0 = wl_sync_time();
        file = H5Fopen(h5name(c.file), H5F_ACC_RDONLY, fapl);
        if (file < 0)
            wl_die("H5Fopen %s failed", c.file);
        t_read += wl_sync_time() - t0;
        for (int t = 0; t < steps; t++)
            for (int v = 0; v < VPIC_NVARS; v++) {
                char name[96];
                snprintf(name, sizeof(name), "Step#%d/%s", t, vpic_var_names[v]);
                memset(buf, 0xA5, (size_t) n * 4);
                t0 = wl_sync_time();
                hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
                if (d < 0)
                    wl_die("H5Dopen2 %s failed", name);
                H5OK(H5Dread(d, v < 6 ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT32, mspace, fspace, dxpl, buf));
                H5OK(H5Dclose(d));
                t_read += wl_sync_time() - t0;
                long long bad = vpic_check(v, t, g0, (uint64_t) n, buf);
                if (bad >= 0)
                    wl_verify_failed("%s: particle %llu differs from what was written", name,
                                     (unsigned long long) (g0 + (uint64_t) bad));
            }
        t0 = wl_sync_time();
        H5OK(H5Fclose(file));
        t_read += wl_sync_time() - t0;
    }
    long long touched = wl_sum_ll(wl_rchar() - rc0);

    wl_result_begin("h5vpic", &c);
    wl_result_kv("filter=%s level=%d chunk=%lld phase=%s touched=%lld", deflate ? "shuffle+deflate" : "none",
                 deflate ? level : 0, deflate ? chunk : 0, phase, touched);
    wl_result_kv("bytes=%llu write_s=%.6f read_s=%.6f gen_s=%.3f",
                 (unsigned long long) (total * 4 * VPIC_NVARS * (uint64_t) steps), t_write, t_read, t_gen);
    wl_result_end();
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Pclose(dcpl);
    H5Pclose(dxpl);
    H5Pclose(fapl);
    free(buf);
    MPI_Finalize();
    return 0;
}
