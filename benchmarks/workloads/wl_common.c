/* Shared helpers of the benchmark workloads: options, hints, timing, the RESULT line. */
#define _GNU_SOURCE 1
#include "wl_common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int wl_rank, wl_size;
static const char *prog = "workload";
static char line[4096];
static size_t line_len;

/* Abort the job, after giving the message on stderr time to get through mpiexec's output
 * forwarding (an abort at once can lose it: tests/bench-smoke looks for it). */
static __attribute__((noreturn)) void abort_job(int code)
{
    fflush(stdout);
    fflush(stderr);
    usleep(300000);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

void wl_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: rank %d: ", prog, wl_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort_job(2);
}

void wl_verify_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "VERIFY FAILED %s: rank %d: ", prog, wl_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort_job(1);
}

void wl_mpi(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    wl_die("%s failed: %s", what, msg);
}

void wl_init(int *argc, char ***argv, wl_common *c, const char *usage)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wl_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wl_size);
    const char *slash = strrchr((*argv)[0], '/');
    prog = slash ? slash + 1 : (*argv)[0];
    memset(c, 0, sizeof(*c));
    c->cfg = "-";
    MPI_Info_create(&c->info);
    if (*argc < 2 || (*argv)[1][0] == '-') {
        if (wl_rank == 0)
            fprintf(stderr, "usage: %s FILE %s [--hint KEY=VALUE]... [--cfg LABEL] [--sync]\n",
                    prog, usage);
        MPI_Finalize();
        exit(2);
    }
    c->file = (*argv)[1];
    /* errors on files come back as return codes (checked by wl_mpi), not as aborts */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
}

const char *wl_optval(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        wl_die("option %s needs a value", argv[*i]);
    return argv[++*i];
}

int wl_common_opt(int argc, char **argv, int *i, wl_common *c)
{
    const char *a = argv[*i];
    if (strcmp(a, "--hint") == 0) {
        const char *kv = wl_optval(argc, argv, i);
        const char *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv)
            wl_die("--hint %s: expected KEY=VALUE", kv);
        char key[MPI_MAX_INFO_KEY + 1];
        size_t n = (size_t) (eq - kv);
        if (n > MPI_MAX_INFO_KEY)
            wl_die("--hint %s: key too long", kv);
        memcpy(key, kv, n);
        key[n] = 0;
        MPI_Info_set(c->info, key, eq + 1);
        return 1;
    }
    if (strcmp(a, "--cfg") == 0) {
        c->cfg = wl_optval(argc, argv, i);
        return 1;
    }
    if (strcmp(a, "--sync") == 0) {
        c->sync = 1;
        return 1;
    }
    return 0;
}

long long wl_parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    long long mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1LL << 10; end++; break;
    case 'm': case 'M': mul = 1LL << 20; end++; break;
    case 'g': case 'G': mul = 1LL << 30; end++; break;
    default: break;
    }
    if (*end == 'i')
        end++;
    if (*end == 'B')
        end++;
    if (end == s || *end != 0 || v < 0)
        wl_die("bad size: %s", s);
    return (long long) (v * (double) mul);
}

double wl_sync_time(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime();
}

MPI_File wl_open(const wl_common *c, int amode)
{
    MPI_File fh;
    wl_mpi(MPI_File_open(MPI_COMM_WORLD, c->file, amode, c->info, &fh), "MPI_File_open");
    return fh;
}

void wl_close(const wl_common *c, MPI_File *fh)
{
    if (c->sync) {
        int amode;
        MPI_File_get_amode(*fh, &amode);
        if (!(amode & MPI_MODE_RDONLY))
            wl_mpi(MPI_File_sync(*fh), "MPI_File_sync");
    }
    wl_mpi(MPI_File_close(fh), "MPI_File_close");
}

long long wl_rchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long long v = -1;
    char buf[256];
    if (f == NULL)
        return -1;
    while (fgets(buf, sizeof(buf), f))
        if (sscanf(buf, "rchar: %lld", &v) == 1)
            break;
    fclose(f);
    return v;
}

long long wl_sum_ll(long long v)
{
    long long s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

void wl_result_begin(const char *workload, const wl_common *c)
{
    line_len = (size_t) snprintf(line, sizeof(line), "RESULT workload=%s cfg=%s np=%d", workload,
                                 c->cfg, wl_size);
}

void wl_result_kv(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (line_len + 2 < sizeof(line)) {
        line[line_len++] = ' ';
        int n = vsnprintf(line + line_len, sizeof(line) - line_len, fmt, ap);
        if (n > 0)
            line_len += (size_t) n < sizeof(line) - line_len ? (size_t) n : sizeof(line) - line_len - 1;
    }
    va_end(ap);
}

void wl_result_end(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long mine = ru.ru_maxrss, peak = 0;   /* KiB on Linux */
    MPI_Reduce(&mine, &peak, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (wl_rank == 0) {
        printf("%s peak_rss_kib=%ld\n", line, peak);
        fflush(stdout);
    }
}

uint64_t wl_hash64(uint64_t x)   /* splitmix64's finaliser */
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
