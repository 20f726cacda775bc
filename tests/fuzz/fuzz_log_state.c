/* Fuzz target: the import of a replayed state (file/log_state.c, hcomp_file_open_with_state),
 * which a collective open passes from one process to the others.
 * At start, a real hcomp file is made in a fresh temporary directory (under $TMPDIR, else
 * /dev/shm: a few writes, pieces of 8 KiB, one overwritten) and its state exported: the
 * template. An input is either patches to the template (first byte odd: then pairs of a
 * 2-byte offset into the state and a byte to put there, and an optional cut) or a state
 * of its own (first byte even: the rest of the input after the template's first 48
 * bytes, which name this mapping file); either way its checksum is made right, so
 * mutations reach the parser.
 * Properties: the open succeeds (a refused state means a replay of the log); the size and
 * reads of the whole file succeed or fail with a documented code and a message; a refused
 * state (the handle's generation 1 where the state says neither 0 nor 1; the template says
 * 1000: it replayed the log itself) reads the template file's bytes. Never a crash, a hang or undefined behaviour
 * (ASan, UBSan). */
#define _GNU_SOURCE
#include "fuzz_common.h"
#include "hcomp.h"
#include "common/util.h"
#include "file/file_internal.h"

#include <string.h>
#include <unistd.h>

static char dir[4096], path[4096 + 16];
static unsigned char *tmpl, *want;
static size_t tmpl_len;
static uint64_t want_len;
static hcomp_options *opts;

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || access(base, W_OK) != 0)
        base = "/dev/shm";
    snprintf(dir, sizeof(dir), "%s/hcomp-fuzz-state-XXXXXX", base);
    CHECK(mkdtemp(dir) != NULL, "mkdtemp in %s", base);
    char cfg[4200], json[8400];
    snprintf(cfg, sizeof(cfg), "%s/tiers.json", dir);
    snprintf(json, sizeof(json), "{\"version\": 1, \"tiers\": [{\"name\": \"t\", \"path\": \"%s\", "
             "\"measure\": false}]}", dir);
    FILE *c = fopen(cfg, "w");
    CHECK(c != NULL && fputs(json, c) >= 0 && fclose(c) == 0, "writing %s", cfg);
    snprintf(path, sizeof(path), "%s/f.hc", dir);
    hcomp_error err;
    opts = hcomp_options_new();
    CHECK(opts && hcomp_options_set(opts, "hcomp_config", cfg, &err) == HCOMP_OK &&
          hcomp_options_set(opts, "hcomp_piece_size", "8192", &err) == HCOMP_OK &&
          hcomp_options_set(opts, "hcomp_reclaim", "never", &err) == HCOMP_OK, "options");
    hcomp_file *f;
    CHECK(hcomp_file_open(path, HCOMP_O_RDWR | HCOMP_O_CREAT, 0600, 1, opts, &f, &err) == HCOMP_OK,
          "create: %s", err.msg);
    unsigned char buf[40000];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char) (i * 7 + i / 977);
    CHECK(hcomp_file_pwrite(f, buf, sizeof(buf), 0, &err) == HCOMP_OK &&
          hcomp_file_pwrite(f, buf, 5000, 20000, &err) == HCOMP_OK &&
          hcomp_file_pwrite(f, buf, 3000, 61000, &err) == HCOMP_OK, "write: %s", err.msg);
    CHECK(hcomp_file_close(f, &err) == HCOMP_OK, "close: %s", err.msg);
    CHECK(hcomp_file_open(path, HCOMP_O_RDONLY, 0, 1, opts, &f, &err) == HCOMP_OK, "open: %s", err.msg);
    void *s;
    CHECK(hcomp_file_export_state(f, &s, &tmpl_len, &err) == HCOMP_OK, "export: %s", err.msg);
    tmpl = s;
    /* a generation no replay of this file reaches (it counts refreshes): a handle at 1 then
     * replayed the log itself, one elsewhere took the state */
    hcomp_put_u64(tmpl + 56, 1000);
    hcomp_put_u32(tmpl + tmpl_len - 4, hcomp_crc32(tmpl, tmpl_len - 4));
    CHECK(hcomp_file_size(f, &want_len, &err) == HCOMP_OK, "size");
    want = malloc(want_len);
    uint64_t got;
    CHECK(want && hcomp_file_pread(f, want, want_len, 0, &got, &err) == HCOMP_OK && got == want_len,
          "read");
    hcomp_file_close(f, NULL);
}

static void check_code(int rc, const hcomp_error *err, const char *what)
{
    CHECK(rc >= HCOMP_OK && rc <= HCOMP_E_NAME, "%s returned %d", what, rc);
    CHECK(rc == HCOMP_OK || err->msg[0] != '\0', "%s failed (%d) without a message", what, rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    if (size == 0)
        return 0;
    unsigned char *s;
    size_t len;
    if (data[0] & 1) {          /* patches to the template, and a cut */
        len = tmpl_len;
        s = malloc(len);
        CHECK(s != NULL, "out of memory");
        memcpy(s, tmpl, len);
        size_t i = 1;
        for (; i + 3 <= size; i += 3)
            s[(size_t) (data[i] | (data[i + 1] << 8)) % len] = data[i + 2];
        if (i < size)           /* a cut: 4 bytes (the checksum) to all of it */
            len = (size_t) data[i] * (len - 4) / 255 + 4;
    } else {                    /* a state of its own, for this mapping file */
        len = 48 + (size - 1) + 4;
        s = malloc(len);
        CHECK(s != NULL, "out of memory");
        memcpy(s, tmpl, 48);
        memcpy(s + 48, data + 1, size - 1);
    }
    if (len >= 4)
        hcomp_put_u32(s + len - 4, hcomp_crc32(s, len - 4));

    hcomp_file *f;
    hcomp_error err;
    int rc = hcomp_file_open_with_state(path, HCOMP_O_RDONLY, 0, 1, opts, s, len, &f, &err);
    CHECK(rc == HCOMP_OK, "open with a state must open the file (replaying it if refused): %s",
          err.msg);
    /* An accepted state keeps its generation, plus one if the open then replayed a tail
     * of the log after it: so a handle at 1 was refused unless the state said 0 or 1. */
    uint64_t state_gen = len >= 64 ? hcomp_get_u64(s + 56) : UINT64_MAX;
    int refused = f->generation == 1 && state_gen > 1;
    uint64_t fsize = 0, got = 0;
    rc = hcomp_file_size(f, &fsize, &err);
    check_code(rc, &err, "size");
    if (rc == HCOMP_OK && fsize <= (64u << 20)) {
        unsigned char *buf = malloc(fsize ? fsize : 1);
        CHECK(buf != NULL, "out of memory");
        rc = hcomp_file_pread(f, buf, fsize, 0, &got, &err);
        check_code(rc, &err, "pread");
        if (refused) {
            CHECK(rc == HCOMP_OK && fsize == want_len && got == want_len &&
                  memcmp(buf, want, want_len) == 0, "a refused state must read as the file does");
        }
        free(buf);
    }
    hcomp_file_close(f, NULL);
    free(s);
    return 0;
}
