/* hcomp: look into, check, repair, move and convert hcomp files without mpiexec.
 * Every subcommand works on the mapping file's path (the name after "hcomp:"). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/util.h"
#include "file/mapfile.h"
#include "common/clock.h"

void cli_usage(FILE *to)
{
    fprintf(to,
        "usage: hcomp COMMAND [OPTIONS] FILE...\n"
        "FILE is the path of an hcomp file (what follows \"hcomp:\" in MPI_File_open).\n"
        "\n"
        "  info FILE...                   size, pieces, tiers, codecs and blocks, ratio, format\n"
        "  export FILE OUT                decompress into a plain file (OUT \"-\": stdout)\n"
        "  import IN FILE                 store a plain file (IN \"-\": stdin) as an hcomp file\n"
        "  cat FILE [--offset N] [--length N]   logical bytes to stdout\n"
        "  drain FILE                     move every piece to the last tier (a shared one)\n"
        "  rm FILE...                     remove the files: every piece on every tier\n"
        "  fsck FILE [--repair]           verify the mapping file and every piece; repair\n"
        "                                 a damaged log, rebuild a lost mapping file\n"
        "  compact FILE                   give back the space of overwritten data now and\n"
        "                                 rewrite the mapping log to what is live (with\n"
        "                                 --hint hcomp_format=3: an older file made version 3,\n"
        "                                 for writers on several nodes)\n"
        "  orphans DIR [--remove]         list (remove) the segment directories in DIR that\n"
        "                                 no hcomp file there uses (left by rm, truncate)\n"
        "  run PROGRAM [ARGS...]          run a serial program that reads hcomp files in\n"
        "                                 place, as the plain files they stand for (the\n"
        "                                 POSIX read adapter, LD_PRELOAD; docs/TOOLS.md)\n"
        "\n"
        "options:\n"
        "  --config FILE     tier configuration (import, drain, fsck, compact; default $HCOMP_CONFIG,\n"
        "                    else the embedded default: /dev/shm RAM tier, file's directory)\n"
        "  --hint KEY=VALUE  an hcomp_* hint, as for MPI_Info (import, drain, compact;\n"
        "                    repeatable)\n"
        "  --force           export/import: replace OUT or FILE if it exists\n"
        "  --progress, --no-progress   progress on stderr (default: when it is a terminal)\n"
        "\n"
        "exit status: 0 done (fsck: no problem left), 1 failed (fsck: problems remain),\n"
        "2 bad usage. Run fsck --repair and drain only on files no job has open (compact\n"
        "refuses to run on a file another process has open).\n");
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hcomp %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *cli_bytes(uint64_t n, char buf[32])
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double) n;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, 32, "%llu B", (unsigned long long) n);
    else
        snprintf(buf, 32, "%.1f %s", v, unit[u]);
    return buf;
}

static double last_progress;
static int progress_shown;

void cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total)
{
    const cli_common *c = ctx;
    if (!c->progress)
        return;
    double now = hcomp_now();
    if (now - last_progress < 0.25 && done < total)
        return;
    last_progress = now;
    char a[32], b[32];
    if (total)
        fprintf(stderr, "\r%s: %s of %s (%3.0f%%) ", what, cli_bytes(done, a), cli_bytes(total, b),
                100.0 * (double) done / (double) total);
    else
        fprintf(stderr, "\r%s: %s ", what, cli_bytes(done, a));
    progress_shown = 1;
}

void cli_progress_end(const cli_common *c)
{
    if (c->progress && progress_shown)
        fputc('\n', stderr);
    progress_shown = 0;
}

static void say_stdout(void *ctx, const char *line)
{
    cli_progress_end(ctx);
    printf("%s\n", line);
    fflush(stdout);
}

hcomp_tool_io cli_io(cli_common *c)
{
    hcomp_tool_io io = {say_stdout, cli_progress, c};
    return io;
}

static int parse_u64(const char *cmd, const char *what, const char *s, uint64_t *out)
{
    if (hcomp_parse_size(s, out) != 0) {
        cli_error(cmd, "%s: \"%s\" is not a byte count (e.g. 4096, 64KiB, 1GiB)", what, s);
        return -1;
    }
    return 0;
}

int cli_parse(const char *name, const char *allowed, int argc, char **argv, cli_common *c)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"hint", required_argument, NULL, 'h'},
        {"force", no_argument, NULL, 'f'}, {"progress", no_argument, NULL, 'p'},
        {"no-progress", no_argument, NULL, 'q'}, {"offset", required_argument, NULL, 'o'},
        {"length", required_argument, NULL, 'l'}, {"repair", no_argument, NULL, 'r'},
        {"remove", no_argument, NULL, 'x'}, {"help", no_argument, NULL, 'H'}, {NULL, 0, NULL, 0}};
    memset(c, 0, sizeof(*c));
    c->progress = isatty(2);
    c->opts = hcomp_options_new();
    if (c->opts == NULL) {
        cli_error(name, "out of memory");
        return CLI_FAILED;
    }
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (ch == 'H') {
            cli_usage(stdout);
            exit(CLI_OK);
        }
        if (ch == '?' || (ch != 'p' && ch != 'q' && strchr(allowed, ch) == NULL)) {
            cli_error(name, "unknown or misplaced option %s (hcomp --help lists them)",
                      argv[optind - 1]);
            return CLI_USAGE;
        }
        hcomp_error e;
        switch (ch) {
        case 'c':
            c->config = optarg;
            if (hcomp_options_set(c->opts, "hcomp_config", optarg, &e) != HCOMP_OK) {
                cli_error(name, "%s", e.msg);
                return CLI_USAGE;
            }
            break;
        case 'h': {
            char *eq = strchr(optarg, '=');
            if (eq == NULL) {
                cli_error(name, "--hint wants KEY=VALUE, not \"%s\"", optarg);
                return CLI_USAGE;
            }
            *eq = '\0';
            int rc = hcomp_options_set(c->opts, optarg, eq + 1, &e);
            *eq = '=';
            if (rc != HCOMP_OK) {
                cli_error(name, "%s", e.msg);
                return CLI_USAGE;
            }
            if (strncmp(optarg, "hcomp_config=", 13) == 0)
                c->config = eq + 1;
            break;
        }
        case 'f': c->force = 1; break;
        case 'p': c->progress = 1; break;
        case 'q': c->progress = 0; break;
        case 'r': c->repair = 1; break;
        case 'x': c->remove = 1; break;
        case 'o':
            if (parse_u64(name, "--offset", optarg, &c->offset) != 0)
                return CLI_USAGE;
            break;
        case 'l':
            if (parse_u64(name, "--length", optarg, &c->length) != 0)
                return CLI_USAGE;
            c->have_length = 1;
            break;
        }
    }
    c->argc = argc - optind;
    c->argv = argv + optind;
    return CLI_OK;
}

void cli_common_free(cli_common *c)
{
    hcomp_options_free(c->opts);
    c->opts = NULL;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        {"info", cmd_info}, {"export", cmd_export}, {"import", cmd_import}, {"cat", cmd_cat},
        {"drain", cmd_drain}, {"rm", cmd_rm}, {"fsck", cmd_fsck},
        {"compact", cmd_compact}, {"orphans", cmd_orphans}, {"run", cmd_run}};
    cli_drop_adapter(argv);
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        cli_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("hcomp %s (mapping file formats %d to %d; new files get %d)\n", HCOMP_VERSION_STRING,
               HCOMP_MAP_VERSION_MIN, HCOMP_MAP_VERSION, HCOMP_MAP_VERSION);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (strcmp(argv[1], cmds[i].name) == 0)
            return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "hcomp: unknown command \"%s\"\n", argv[1]);
    cli_usage(stderr);
    return CLI_USAGE;
}
