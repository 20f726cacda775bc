/* hcomp-profile: benchmarks the codecs on generated (and given) data, fits the cost
 * predictor, measures the storage tiers, and writes a JSON seed (docs/SEED.md); or,
 * with --report, measures how well a seed predicts fresh data.
 *
 * Built two ways from this one file: plainly (bin/hcomp-profile, no MPI), and with
 * mpicc and -DHCOMP_PROFILE_MPI (`make hcomp-profile-mpi`), where under mpiexec the
 * first rank of every node measures that node's node-local tiers, rank 0 measures the
 * shared tiers and the codecs, and rank 0 gathers and merges the tier signatures
 * (one entry per tier and node) into the seed. */
#include "profile_core.h"
#include "common/util.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef HCOMP_PROFILE_MPI
#include <mpi.h>
#endif

#define KIB ((size_t) 1024)
#define MIB (KIB * KIB)

static int g_rank = 0;
#ifdef HCOMP_PROFILE_MPI
static int g_size = 1;
#endif

static void usage(FILE *out)
{
    fprintf(out,
        "usage: hcomp-profile [--quick] [--seed N] [--tiers CONFIG] [--sample FILE[:dtype]]...\n"
        "                     [--codecs LIST] [--sizes LIST] [--force] [-q] -o SEED.json\n"
        "       hcomp-profile --report SEED.json [--quick] [--seed N] [--codecs LIST] [--sizes LIST]\n"
        "\n"
        "Benchmarks every codec at a set of levels on generated data of each type (bytes,\n"
        "int32, int64, float, double), distribution (uniform, normal, exponential, gamma)\n"
        "and shape, fits the cost predictor, and writes the seed (docs/SEED.md).\n"
        "\n"
        "  -o FILE            write the seed there (an existing file only with --force)\n"
        "  --force            overwrite the output file\n"
        "  --quick            the quick plan (about two minutes on 2 cores); default: thorough\n"
        "  --seed N           seed of the data generator (default 1; --report: from the clock)\n"
        "  --tiers CONFIG     also measure the tiers of this tier configuration (\"embedded\":\n"
        "                     the built-in one) into the seed's system signature\n"
        "  --filedir DIR      the directory standing for @filedir tiers (default: that of -o)\n"
        "  --tier-bytes SIZE  size of the tier test file (default 4MiB quick, 16MiB thorough)\n"
        "  --sample FILE[:T]  also profile slices of FILE; T = bytes|int32|int64|float|double\n"
        "                     (default: inferred)\n"
        "  --codecs LIST      codec:level list (default lz4:1,lz4:9,zstd:1,zstd:3,zstd:9,\n"
        "                     zlib:1,zlib:6,bzip2:9,brotli:1,brotli:5,snappy,lzma:1,none)\n"
        "  --sizes LIST       buffer sizes (default 64KiB,1MiB; thorough adds 4MiB;\n"
        "                     --report: 256KiB,2MiB)\n"
        "  --report SEED      measure SEED's accuracy on fresh data (new random seed, sizes\n"
        "                     and shapes the training plan does not use); \"embedded\":\n"
        "                     the seed built into libhcomp\n"
        "  -q                 no progress lines on stderr\n");
}

static int fail_msg(const char *fmt, const char *a, const char *b)
{
    if (g_rank == 0) {
        fprintf(stderr, "hcomp-profile: ");
        fprintf(stderr, fmt, a, b);
        fputc('\n', stderr);
    }
    return 2;
}

static int parse_list_sizes(const char *s, hcomp_profile_opts *o)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    o->nsizes = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (o->nsizes >= HCOMP_PROFILE_MAX_SIZES || hcomp_parse_size(tok, &v) != 0 || v == 0 ||
            v > (uint64_t) 1 << 30)
            return -1;
        o->sizes[o->nsizes++] = (size_t) v;
    }
    return o->nsizes > 0 ? 0 : -1;
}

static int parse_list_codecs(const char *s, hcomp_profile_opts *o, hcomp_error *err)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", s);
    o->nmodels = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        const hcomp_codec *c;
        int level;
        if (hcomp_codec_parse(tok, &c, &level, err) != HCOMP_OK)
            return -1;
        if (o->nmodels >= HCOMP_PROFILE_MAX_MODELS)
            return -1;
        o->models[o->nmodels].codec = c->id;
        o->models[o->nmodels].level = level == HCOMP_LEVEL_DEFAULT ? c->level_default : level;
        o->nmodels++;
    }
    return o->nmodels > 0 ? 0 : -1;
}

/* Every rank's worst status (ranks must take the same branches around collectives). */
static int agree(int rc)
{
#ifdef HCOMP_PROFILE_MPI
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
#else
    return rc;
#endif
}

/* ---- tiers ------------------------------------------------------------------------ */

typedef struct tier_result {
    hcomp_tier_signature sig;
    int ok;
    char msg[HCOMP_ERROR_MSG_MAX];
} tier_result;

/* Measure this process's share of the tiers: node-local ones if it is the first rank of
 * its node, shared ones if it is rank 0. */
static size_t bench_tiers(const hcomp_tier_config *cfg, const char *filedir, size_t bytes,
                          int node_leader, int quiet, tier_result *out)
{
    size_t n = 0;
    for (int i = 0; i < cfg->ntiers; i++) {
        const hcomp_tier *t = &cfg->tier[i];
        if (t->node_local ? !node_leader : g_rank != 0)
            continue;
        hcomp_error err;
        hcomp_ok(&err);
        tier_result *r = &out[n++];
        memset(r, 0, sizeof(*r));
        r->ok = hcomp_tier_bench(t, filedir, bytes, &r->sig, &err) == HCOMP_OK;
        if (!r->ok) {
            snprintf(r->sig.name, sizeof(r->sig.name), "%s", t->name);
            snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
        } else if (!quiet)
            fprintf(stderr, "[profile] tier %s on %s (%s): write %.0f MB/s, read %.0f MB/s, "
                    "latency %.1f us, free %.1f GiB\n", r->sig.name, r->sig.node, r->sig.path,
                    r->sig.write_Bps / 1e6, r->sig.read_Bps / 1e6, r->sig.latency_s * 1e6,
                    (double) r->sig.free_bytes / (double) (1ull << 30));
    }
    return n;
}

/* All processes' results at rank 0 (MPI), or just ours. *all is malloc'ed at rank 0. */
static size_t gather_tiers(tier_result *mine, size_t n, tier_result **all)
{
#ifdef HCOMP_PROFILE_MPI
    int bytes = (int) (n * sizeof(tier_result));
    int *counts = NULL, *displs = NULL;
    if (g_rank == 0) {
        counts = calloc((size_t) g_size, sizeof(int));
        displs = calloc((size_t) g_size, sizeof(int));
    }
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t total = 0;
    if (g_rank == 0)
        for (int r = 0; r < g_size; r++) {
            displs[r] = (int) total;
            total += (size_t) counts[r];
        }
    char *recv = g_rank == 0 ? malloc(total ? total : 1) : NULL;
    MPI_Gatherv(mine, bytes, MPI_BYTE, recv, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    *all = (tier_result *) recv;
    return total / sizeof(tier_result);
#else
    *all = malloc((n ? n : 1) * sizeof(tier_result));
    if (*all != NULL && n > 0)
        memcpy(*all, mine, n * sizeof(tier_result));
    return *all != NULL ? n : 0;
#endif
}

/* ---- main ---------------------------------------------------------------------------- */

static void join_command(int argc, char **argv, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < argc; i++) {
        const char *a = i == 0 ? "hcomp-profile" : argv[i];
        int quote = strpbrk(a, " \t\"'") != NULL;
        int n = snprintf(out + o, cap - o, "%s%s%s%s", i ? " " : "", quote ? "'" : "", a,
                         quote ? "'" : "");
        if (n < 0 || (size_t) n >= cap - o)
            break;
        o += (size_t) n;
    }
}

static int run(int argc, char **argv)
{
    hcomp_profile_opts o;
    hcomp_profile_opts_init(&o, 1);
    const char *out_path = NULL, *tiers_cfg = NULL, *filedir = NULL, *report = NULL;
    const char *codecs = NULL, *sizes = NULL;
    char sample_paths[HCOMP_PROFILE_MAX_SAMPLES][PATH_MAX];
    int force = 0, quiet = 0, seed_given = 0;
    size_t tier_bytes = 0;
    hcomp_error err;
    hcomp_ok(&err);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE() do { if (v == NULL) return fail_msg("%s needs a value%s", a, ""); i++; } while (0)
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (g_rank == 0)
                usage(stdout);
            return 0;
        } else if (strcmp(a, "--quick") == 0) {
            o.thorough = 0;
        } else if (strcmp(a, "--force") == 0) {
            force = 1;
        } else if (strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (strcmp(a, "-o") == 0) {
            NEED_VALUE();
            out_path = v;
        } else if (strcmp(a, "--seed") == 0) {
            NEED_VALUE();
            char *end;
            errno = 0;
            o.seed = strtoul(v, &end, 10);
            if (errno || *end || end == v)
                return fail_msg("--seed %s: not a non-negative integer%s", v, "");
            seed_given = 1;
        } else if (strcmp(a, "--tiers") == 0) {
            NEED_VALUE();
            tiers_cfg = v;
        } else if (strcmp(a, "--filedir") == 0) {
            NEED_VALUE();
            filedir = v;
        } else if (strcmp(a, "--tier-bytes") == 0) {
            NEED_VALUE();
            uint64_t b;
            if (hcomp_parse_size(v, &b) != 0 || b < MIB || b > (uint64_t) 1 << 34)
                return fail_msg("--tier-bytes %s: a size from 1MiB to 16GiB%s", v, "");
            tier_bytes = (size_t) b;
        } else if (strcmp(a, "--sample") == 0) {
            NEED_VALUE();
            if (o.nsamples >= HCOMP_PROFILE_MAX_SAMPLES)
                return fail_msg("too many --sample files (at most %s)%s", "16", "");
            char *path = sample_paths[o.nsamples];
            snprintf(path, PATH_MAX, "%s", v);
            int dtype = -1;
            char *colon = strrchr(path, ':');
            if (colon != NULL && hcomp_dtype_from_name(colon + 1) >= 0) {
                dtype = hcomp_dtype_from_name(colon + 1);
                *colon = '\0';
            }
            o.samples[o.nsamples].path = path;
            o.samples[o.nsamples].dtype = dtype;
            o.nsamples++;
        } else if (strcmp(a, "--codecs") == 0) {
            NEED_VALUE();
            codecs = v;
        } else if (strcmp(a, "--sizes") == 0) {
            NEED_VALUE();
            sizes = v;
        } else if (strcmp(a, "--report") == 0) {
            NEED_VALUE();
            report = v;
        } else {
            if (g_rank == 0)
                usage(stderr);
            return fail_msg("unknown argument \"%s\"%s", a, "");
        }
#undef NEED_VALUE
    }
    if (codecs != NULL && parse_list_codecs(codecs, &o, &err) != 0)
        return fail_msg("--codecs %s: %s", codecs, err.msg[0] ? err.msg : "bad list");
    if (sizes != NULL && parse_list_sizes(sizes, &o) != 0)
        return fail_msg("--sizes %s: sizes from 1 byte to 1GiB, comma-separated%s", sizes, "");
    o.progress = quiet ? NULL : stderr;

    /* ---- --report ---- */
    if (report != NULL) {
        if (g_rank != 0)
            return 0;
        hcomp_predictor *p = NULL;
        if (hcomp_predictor_load(strcmp(report, "embedded") == 0 ? NULL : report, &p, &err) !=
            HCOMP_OK)
            return fail_msg("%s%s", err.msg, "");
        if (!seed_given)
            o.seed = (unsigned long) time(NULL);
        fprintf(stdout, "hcomp-profile report: seed %s (made %s by \"%s\" on %s), %zu models\n",
                report, p->created, p->command, p->hostname, hcomp_predictor_model_count(p));
        size_t nc;
        free(hcomp_profile_plan(&o, 1, &nc));
        fprintf(stdout, "fresh data: generator seed %lu, %zu cases (held-out sizes and shapes)\n",
                o.seed, nc);
        hcomp_report rep;
        double t0 = hcomp_profile_now();
        int rc = hcomp_profile_report(&o, p, &rep, &err);
        if (rc != HCOMP_OK) {
            hcomp_predictor_free(p);
            return fail_msg("%s%s", err.msg, "");
        }
        hcomp_profile_print_report(stdout, &rep);
        fprintf(stdout, "measured in %.0f s\n", hcomp_profile_now() - t0);
        hcomp_predictor_free(p);
        return 0;
    }

    /* ---- profiling ---- */
    if (out_path == NULL) {
        if (g_rank == 0)
            usage(stderr);
        return fail_msg("nothing to do: give -o FILE to write a seed, or --report SEED%s%s",
                        "", "");
    }
    /* Checks of the files rank 0 will use, before anything is measured. */
    char outdir[PATH_MAX];
    snprintf(outdir, sizeof(outdir), "%s", out_path);
    const char *dir = dirname(outdir);
    int pre = 0;
    if (g_rank == 0) {
        struct stat st;
        if (!force && stat(out_path, &st) == 0)
            pre = fail_msg("%s exists; not overwriting it (use --force to replace it)%s",
                           out_path, "");
        else if (access(dir, W_OK) != 0)
            pre = fail_msg("cannot write in %s: %s", dir, strerror(errno));
        for (size_t i = 0; i < o.nsamples && pre == 0; i++)
            if (access(o.samples[i].path, R_OK) != 0)
                pre = fail_msg("--sample %s: %s", o.samples[i].path, strerror(errno));
    }
    if ((pre = agree(pre)) != 0)
        return pre;
    double t_start = hcomp_profile_now();

    tier_result *all = NULL;
    size_t nall = 0;
    if (tiers_cfg != NULL) {
        hcomp_tier_config cfg;
        int rc = strcmp(tiers_cfg, "embedded") == 0 ? hcomp_tier_config_default(&cfg, &err)
                                                    : hcomp_tier_config_load(tiers_cfg, &cfg, &err);
        if (rc != HCOMP_OK && g_rank != 0)
            fprintf(stderr, "hcomp-profile: rank %d: --tiers: %s\n", g_rank, err.msg);
        if (agree(rc != HCOMP_OK ? 2 : 0) != 0)
            return rc != HCOMP_OK ? fail_msg("--tiers: %s%s", err.msg, "") : 2;
        int node_leader = 1;
#ifdef HCOMP_PROFILE_MPI
        MPI_Comm node;
        int node_rank = 0;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &node_rank);
        MPI_Comm_free(&node);
        node_leader = node_rank == 0;
#endif
        tier_result mine[HCOMP_MAX_TIERS];
        size_t n = bench_tiers(&cfg, filedir ? filedir : dir,
                               tier_bytes ? tier_bytes : (o.thorough ? 16 : 4) * MIB,
                               node_leader, quiet, mine);
        nall = gather_tiers(mine, n, &all);
    }
    if (g_rank != 0)
        return 0;

    hcomp_tier_signature sigs[HCOMP_MAX_TIERS * 64];
    size_t nsig = 0;
    for (size_t i = 0; i < nall && nsig < sizeof(sigs) / sizeof(sigs[0]); i++) {
        if (all[i].ok)
            sigs[nsig++] = all[i].sig;
        else
            fprintf(stderr, "hcomp-profile: warning: tier %s on %s not measured: %s\n",
                    all[i].sig.name, all[i].sig.node[0] ? all[i].sig.node : "?", all[i].msg);
    }
    free(all);

    hcomp_predictor *p = hcomp_predictor_new();
    if (p == NULL)
        return fail_msg("out of memory%s%s", "", "");
    char command[2048];
    join_command(argc, argv, command, sizeof(command));
    hcomp_predictor_set_provenance(p, command);
    if (tiers_cfg != NULL) {
        snprintf(p->system_created, sizeof(p->system_created), "%s", p->created);
        hcomp_predictor_set_tiers(p, sigs, nsig);
    }
    int rc = hcomp_profile_run(&o, p, &err);
    char *text = rc == HCOMP_OK ? hcomp_seed_dump(p) : NULL;
    if (rc == HCOMP_OK && text == NULL)
        rc = hcomp_fail(&err, HCOMP_E_NOMEM, "out of memory writing the seed");
    if (rc == HCOMP_OK)
        rc = hcomp_seed_write_file(out_path, text, force, &err);
    free(text);
    if (rc != HCOMP_OK) {
        hcomp_predictor_free(p);
        return fail_msg("%s%s", err.msg, "");
    }
    fprintf(stderr, "[profile] fit (R^2 on the training rows: log ratio, log compression "
            "speed, log decompression speed):\n");
    for (size_t m = 0; m < hcomp_predictor_model_count(p); m++) {
        hcomp_model_info info;
        hcomp_predictor_model_at(p, m, &info);
        fprintf(stderr, "[profile]   %s:%-2d %4zu rows  R^2 %.3f %.3f %.3f\n",
                hcomp_codec_by_id(info.codec)->name, info.level, info.rows, info.r2[0],
                info.r2[1], info.r2[2]);
    }
    fprintf(stderr, "[profile] wrote %s (%zu models, %zu tier entries) in %.0f s\n", out_path,
            hcomp_predictor_model_count(p), nsig, hcomp_profile_now() - t_start);
    hcomp_predictor_free(p);
    return 0;
}

int main(int argc, char **argv)
{
#ifdef HCOMP_PROFILE_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
#endif
    int rc = run(argc, argv);
#ifdef HCOMP_PROFILE_MPI
    /* Rank 0 may still be measuring codecs: the others wait here for its status. */
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
#endif
    return rc;
}
