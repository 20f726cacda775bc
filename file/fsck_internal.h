/* Shared by file/fsck.c and file/fsck_rebuild.c. */
#ifndef HCOMP_FSCK_INTERNAL_H
#define HCOMP_FSCK_INTERNAL_H

#include <sys/stat.h>
#include "file_internal.h"
#include "tools.h"
#include "common/util.h"

void hcomp_fsck_say(const hcomp_tool_io *io, const char *fmt, ...) HCOMP_PRINTF(2, 3);
/* The whole mapping file (not following a symlink). */
int hcomp_fsck_read_all(const char *path, unsigned char **out, size_t *len, struct stat *st,
                        hcomp_error *err);
/* Count the log's records, damage and torn tail from offset from; copy valid records. */
void hcomp_fsck_scan_log(const unsigned char *buf, size_t len, size_t from, hcomp_bytes *valid,
                         hcomp_fsck_result *res, int *oom);
/* Keep buf as path.hcomp-damaged[.N]. */
int hcomp_fsck_backup(const char *path, const unsigned char *buf, size_t len, mode_t mode,
                      hcomp_fsck_result *res, hcomp_error *err);
/* The header is damaged or the mapping file is gone (old: what is left of it). */
int hcomp_fsck_rebuild(const char *path, const char *config, const unsigned char *old,
                       size_t old_len, mode_t mode, int repair, const hcomp_tool_io *io,
                       hcomp_fsck_result *res, hcomp_error *err);

#endif
