/* The `hcomp` command-line tool: shared pieces of its subcommands (cli/cmd_*.c). */
#ifndef HCOMP_CLI_H
#define HCOMP_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "hcomp.h"
#include "file/tools.h"

/* exit statuses */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Options most subcommands take. */
typedef struct cli_common {
    const char *config;        /* --config: tier configuration (NULL: $HCOMP_CONFIG/default) */
    hcomp_options *opts;       /* --config and every --hint key=value */
    int force;                 /* --force */
    int progress;              /* --progress / --no-progress (default: stderr is a terminal) */
    uint64_t offset, length;   /* --offset, --length (cat) */
    int have_length;
    int repair;                /* --repair (fsck) */
    int remove;                /* --remove (orphans) */
    int argc;                  /* the operands left */
    char **argv;
} cli_common;

/* Parse the options of subcommand name (allowed: the option letters it takes, e.g.
 * "chfp"); prints usage and returns CLI_USAGE on a bad one. */
int cli_parse(const char *name, const char *allowed, int argc, char **argv, cli_common *c);
void cli_common_free(cli_common *c);
void cli_usage(FILE *to);

/* Messages: "hcomp NAME: ..." on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "12.3 MiB" */
const char *cli_bytes(uint64_t n, char buf[32]);

/* Progress on stderr (at most a few times a second), for hcomp_tool_io. */
void cli_progress(void *ctx, const char *what, uint64_t done, uint64_t total);
void cli_progress_end(const cli_common *c);
/* An hcomp_tool_io that prints findings on stdout and progress as c asks. */
hcomp_tool_io cli_io(cli_common *c);

int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_drain(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_fsck(int argc, char **argv);
int cmd_compact(int argc, char **argv);
int cmd_orphans(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* If the POSIX read adapter is preloaded into the tool, start it again without it. */
void cli_drop_adapter(char **argv);

#endif
