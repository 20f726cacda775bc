/* The system monitor: a background thread (one per process) that keeps, for every
 * tier directory in use, whether it is available (exists, is a directory, is
 * writable), its free space (statvfs) and its load (bytes queued for it by this
 * process's writers); and the read and write throughput this process's own I/O got
 * there (measured, or probed once). Placement reads these without touching the file
 * system. */
#ifndef HCOMP_MONITOR_H
#define HCOMP_MONITOR_H

#include <stdint.h>

#define HCOMP_MONITOR_PERIOD_MS 100

typedef struct hcomp_tier_status {
    int available;          /* 0: vanished or unusable: out of placement */
    uint64_t free_bytes;    /* statvfs f_bavail * f_frsize */
    uint64_t queued;        /* bytes planned for it and not yet written */
    double updated;         /* when (hcomp_now) */
    double read_Bps, write_Bps;     /* measured (0: not yet; see hcomp_monitor_observe) */
} hcomp_tier_status;

/* Measured throughput counts once this many operations were observed. */
#define HCOMP_MONITOR_MIN_OBS 4
/* Reads and writes smaller than this are latency more than throughput: not counted. */
#define HCOMP_MONITOR_MIN_BYTES (64u << 10)

/* Watch dir (refcounted); returns a handle >= 0, or -1 when out of slots (the caller
 * then checks on demand). The first call starts the thread. */
int hcomp_monitor_watch(const char *dir);
void hcomp_monitor_unwatch(int handle);
/* The last status (refreshed synchronously before the thread's first pass, or when
 * it is more than a second old). */
void hcomp_monitor_status(int handle, hcomp_tier_status *out);
void hcomp_monitor_queue(int handle, int64_t delta);
/* This process read (is_write 0) or wrote bytes there in seconds. Writes are counted with
 * the time their data took to become durable: a sync reports its time with 0 bytes. The
 * figures decay (each operation weighs 10% less than the next), so they follow a tier
 * whose speed changes (contention, a cache that filled). */
void hcomp_monitor_observe(int handle, int is_write, uint64_t bytes, double seconds);
/* Read and write throughput of the directory, measured once per process by writing,
 * syncing and reading back a 4 MiB file in it (removed after); 0 until the monitor
 * thread has run the probe (the first call asks for it: no caller waits for its I/O),
 * and when it cannot be. */
void hcomp_monitor_probe(int handle, double *read_Bps, double *write_Bps);

#endif
