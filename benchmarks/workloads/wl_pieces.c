/* wl_pieces: a file of many small pieces, to measure what opening it costs. Every hcomp
 * write is a new piece with an entry in the mapping file, which an opener replays; this
 * program makes a file of --pieces writes of --size bytes (independent MPI_File_write_at,
 * each rank its share in increasing offsets over a region of its own), then times a
 * read-only MPI_File_open (the replay) and reads one write of each rank back (checked),
 * then the close.
 *
 * Data: 4-byte little-endian counters (the global offset / 4), written as MPI_BYTE.
 *
 * usage: wl_pieces FILE [--pieces N] [--size B] [--reuse] [common options]
 *   --reuse: the file was written before with the same --pieces and --size (by any
 *   number of ranks): only open and read it (write_s=0)
 * RESULT: pieces, bytes, write_s, open_s (MPI_File_open alone), read_s (open..close),
 *         open_read_bytes (what all ranks read with read(2) and pread(2) during the
 *         MPI_File_open, from /proc/self/io: the mapping log, and the file's first bytes),
 *         read_bytes (the same from the open to the close: a reader that replays the log at
 *         its first read reads it there) */
#include "wl_common.h"

#include <stdlib.h>
#include <string.h>

/* bytes this process has read with read(2) and the like (rchar of /proc/self/io) */
static long long rchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "rchar: %lld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

static void fill(unsigned char *p, long long off, long long n)
{
    for (long long i = 0; i < n; i += 4) {
        uint32_t v = (uint32_t) ((off + i) / 4);
        memcpy(p + i, &v, 4);
    }
}

int main(int argc, char **argv)
{
    wl_common c;
    wl_init(&argc, &argv, &c, "[--pieces N] [--size B]");
    long long pieces = 100000, size = 256;
    int reuse = 0;
    for (int i = 2; i < argc; i++) {
        if (wl_common_opt(argc, argv, &i, &c))
            continue;
        if (strcmp(argv[i], "--pieces") == 0) pieces = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--size") == 0) size = wl_parse_size(wl_optval(argc, argv, &i));
        else if (strcmp(argv[i], "--reuse") == 0) reuse = 1;
        else wl_die("unknown option %s", argv[i]);
    }
    if (pieces < wl_size || size < 4 || size % 4 || size > (1 << 20))
        wl_die("need --pieces >= ranks and --size a multiple of 4 up to 1 MiB");
    long long mine = pieces / wl_size + (wl_rank < pieces % wl_size ? 1 : 0);
    long long first = (long long) wl_rank * (pieces / wl_size) + (wl_rank < pieces % wl_size ? wl_rank : pieces % wl_size);
    unsigned char *buf = malloc((size_t) size), *back = malloc((size_t) size);
    if (!buf || !back)
        wl_die("out of memory");

    double t0 = wl_sync_time(), t_write = 0;
    MPI_File fh;
    if (!reuse) {
        fh = wl_open(&c, MPI_MODE_CREATE | MPI_MODE_WRONLY);
        for (long long k = 0; k < mine; k++) {
            long long off = (first + k) * size;
            fill(buf, off, size);
            wl_mpi(MPI_File_write_at(fh, off, buf, (int) size, MPI_BYTE, MPI_STATUS_IGNORE),
                   "MPI_File_write_at");
        }
        wl_close(&c, &fh);
        t_write = wl_sync_time() - t0;
    }

    long long r0 = rchar();
    t0 = wl_sync_time();
    fh = wl_open(&c, MPI_MODE_RDONLY);
    double t_open = wl_sync_time() - t0;
    long long my_read = rchar() - r0, open_read = 0;
    MPI_Reduce(&my_read, &open_read, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    long long probe[2] = {first, first + mine - 1};
    for (int q = 0; q < 2; q++) {
        wl_mpi(MPI_File_read_at(fh, probe[q] * size, back, (int) size, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_read_at");
        fill(buf, probe[q] * size, size);
        if (memcmp(buf, back, (size_t) size) != 0)
            wl_verify_failed("write %lld reads back wrong", probe[q]);
    }
    wl_close(&c, &fh);
    double t_read = wl_sync_time() - t0;
    long long my_all = rchar() - r0, all_read = 0;
    MPI_Reduce(&my_all, &all_read, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

    wl_result_begin("pieces", &c);
    wl_result_kv("pieces=%lld size=%lld bytes=%lld", pieces, size, pieces * size);
    wl_result_kv("write_s=%.6f open_s=%.6f read_s=%.6f open_read_bytes=%lld read_bytes=%lld",
                 t_write, t_open, t_read, open_read, all_read);
    wl_result_end();
    free(buf);
    free(back);
    MPI_Finalize();
    return 0;
}
