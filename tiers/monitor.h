/* The system monitor: a background thread (one per process) that keeps, for every
 * tier directory in use, whether it is available (exists, is a directory, is
 * writable), its free space (statvfs) and its load (bytes queued for it by this
 * process's writers). Placement reads these without touching the file system. */
#ifndef HCOMP_MONITOR_H
#define HCOMP_MONITOR_H

#include <stdint.h>

#define HCOMP_MONITOR_PERIOD_MS 100

typedef struct hcomp_tier_status {
    int available;          /* 0: vanished or unusable: out of placement */
    uint64_t free_bytes;    /* statvfs f_bavail * f_frsize */
    uint64_t queued;        /* bytes planned for it and not yet written */
    double updated;         /* when (hcomp_now) */
} hcomp_tier_status;

/* Watch dir (refcounted); returns a handle >= 0, or -1 when out of slots (the caller
 * then checks on demand). The first call starts the thread. */
int hcomp_monitor_watch(const char *dir);
void hcomp_monitor_unwatch(int handle);
/* The last status (refreshed synchronously before the thread's first pass, or when
 * it is more than a second old). */
void hcomp_monitor_status(int handle, hcomp_tier_status *out);
void hcomp_monitor_queue(int handle, int64_t delta);

#endif
