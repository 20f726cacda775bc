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

/* What a probe of a tier directory found: one stream's speeds, and HCOMP_PROBE_STREAMS
 * streams' together (writing and syncing, then reading back, at once: what a node's
 * several writers get; 0 when not known). */
typedef struct hcomp_probe_speeds {
    double read_Bps, write_Bps;
    double read_all_Bps, write_all_Bps;
} hcomp_probe_speeds;

#define HCOMP_PROBE_STREAMS 2

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
/* The probe of the directory's file system (hcomp_probe_speeds; all 0 while not known,
 * and when it cannot be). The first call reads the node's cache of probes
 * (tiers/probe_cache.h) at once; when it holds none, the monitor thread is woken to probe
 * (write, sync and read back 4 MiB, three rounds, alone and HCOMP_PROBE_STREAMS streams
 * at once) and cache it: no caller waits for that I/O. */
void hcomp_monitor_probe(int handle, hcomp_probe_speeds *out);

#endif
