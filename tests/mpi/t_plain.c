/* Plain files pass through hcomp:. An existing regular file that is not an hcomp file,
 * opened through hcomp: (or under ROMIO_FSTYPE_FORCE=hcomp: with its bare name), works
 * as the plain file it is, as ufs: would, and is never converted; a new file created
 * through hcomp: is an hcomp file. MPI_File_get_info says which (hcomp_file_kind).
 *
 *   t_plain TARGET [CONFIG]
 *
 * TARGET is hcomp:/dir/f.dat, or /dir/f.dat when the environment has
 * ROMIO_FSTYPE_FORCE=hcomp: (then CONFIG is used as the hcomp_config hint too).
 * Every plain file here is made by rank 0 with POSIX write(2) before the MPI open.
 *
 *  1. read-only: kind "plain" (romio_filesystem_type UFS, no hcomp_* hints), the size,
 *     independent, collective, strided-view (vector filetype) and ordered
 *     (shared-file-pointer) reads, all byte for byte; a write fails MPI_ERR_READ_ONLY
 *  2. read-write: independent, collective, strided-view collective and ordered writes,
 *     atomic mode, set_size (shrink: the data is gone; grow: zeros), preallocate,
 *     sync, reads back byte for byte; then, outside MPI, the file holds exactly the
 *     expected bytes
 *  3. MPI_MODE_CREATE on the existing plain file: still plain, contents kept;
 *     CREATE|EXCL: MPI_ERR_FILE_EXISTS; MPI_MODE_APPEND: the file pointer starts at
 *     the end
 *  4. an empty file (size 0) made by a plain tool: plain read-only and under CREATE|EXCL
 *     (left as it is); opened to be written (CREATE|RDWR, WRONLY) an hcomp file, read
 *     back whole; emptied with truncate(2) and created again twice (PnetCDF's create),
 *     an hcomp file each time holding the new bytes only
 *  5. MPI_MODE_DELETE_ON_CLOSE and MPI_File_delete remove a plain file
 *  6. hcomp_stats=1 says "plain file" for a plain one and "hcomp file" for an hcomp one
 *  7. a new file through hcomp: is an hcomp file (its mapping-file magic, kind "hcomp"
 *     at create and at reopen); the info of a handle given to another open works
 * After each: the plain file's first bytes are not the hcomp magic, nothing named
 * after it appeared in its directory (segment directories, shared-file-pointer file)
 * or on the configuration's first tier. */
#include "tcommon.h"

#include <fcntl.h>

#define SEED 21
#define B 1000              /* block of the strided views */

static tctx T;
static int forced;          /* ROMIO_FSTYPE_FORCE=hcomp: */
static char ram[4096];      /* the configuration's first tier directory ("" if none) */
static uint8_t *model;      /* what the plain file must hold */
static uint64_t model_len;

/* ---- names and files ---------------------------------------------------------------- */

/* path of a plain file of this test, and its name for MPI_File_open */
static const char *ppath(const char *suffix) { return t_path(&T, suffix); }
static const char *pname(const char *suffix) { return t_name(&T, suffix); }

static void posix_put(const char *path, const uint8_t *data, uint64_t len)
{
    int err = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (T.rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            err = errno;
        for (uint64_t done = 0; !err && done < len;) {
            ssize_t n = write(fd, data + done, len - done);
            if (n <= 0)
                err = n < 0 ? errno : EIO;
            else
                done += (uint64_t)n;
        }
        if (fd >= 0 && close(fd) != 0 && !err)
            err = errno;
    }
    MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err)
        TFAIL("writing %s with write(2): %s", path, strerror(err));
}

/* rank 0: the file's bytes (malloc'd), *len; NULL if it cannot be read */
static uint8_t *posix_get(const char *path, uint64_t *len)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return NULL;
    uint8_t *b = t_malloc((size_t)sb.st_size + 1);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        free(b);
        return NULL;
    }
    uint64_t done = 0;
    for (;;) {
        ssize_t n = read(fd, b + done, (size_t)sb.st_size + 1 - done);
        if (n <= 0)
            break;
        done += (uint64_t)n;
    }
    close(fd);
    *len = done;
    return b;
}

/* The configuration's first tier (from CONFIG's first "path"), to look for data there. */
static void find_ram(void)
{
    ram[0] = 0;
    if (!T.config)
        return;
    FILE *f = fopen(T.config, "r");
    if (!f)
        return;
    char json[8192];
    size_t n = fread(json, 1, sizeof json - 1, f);
    fclose(f);
    json[n] = 0;
    char *p = strstr(json, "\"path\"");
    if (!p || !(p = strchr(p + 6, '"')))
        return;
    char *e = strchr(p + 1, '"');
    if (e && e - p - 1 < (long)sizeof ram && p[1] == '/')
        snprintf(ram, sizeof ram, "%.*s", (int)(e - p - 1), p + 1);
}

/* count entries of dir whose name contains needle, except the name exact */
static int traces(const char *dir, const char *needle, const char *exact, char *first, size_t n)
{
    DIR *d = opendir(dir);
    int count = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strstr(e->d_name, needle) && (!exact || strcmp(e->d_name, exact) != 0)) {
            if (count++ == 0)
                snprintf(first, n, "%s", e->d_name);
        }
    }
    closedir(d);
    return count;
}

/* The plain file at path is still plain and holds exactly want[0..len) (if want). */
static void expect_still_plain(const char *path, const uint8_t *want, uint64_t len,
                               const char *when)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (T.rank == 0) {
        uint64_t got_len = 0;
        uint8_t *got = posix_get(path, &got_len);
        TASSERT(got != NULL, "%s: %s cannot be read: %s", when, path, strerror(errno));
        TASSERT(!(got_len >= 8 && memcmp(got, "HCOMPMAP", 8) == 0),
                "%s: %s became an hcomp mapping file", when, path);
        if (want) {
            TASSERT(got_len == len, "%s: %s holds %llu bytes, want %llu", when, path,
                    (unsigned long long)got_len, (unsigned long long)len);
            TEXPECT_BYTES(got, want, len, 0, t_fmt("%s: %s read with read(2)", when, path));
        }
        free(got);
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        char first[512] = "";
        int n = traces(t_dirname(path), base, base, first, sizeof first);
        TASSERT(n == 0, "%s: %d entries named after %s next to it, e.g. %s", when, n, base, first);
        if (ram[0]) {
            n = traces(ram, base, NULL, first, sizeof first);
            TASSERT(n == 0, "%s: %d entries named after %s on the first tier %s, e.g. %s", when,
                    n, base, ram, first);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- the handle's kind -------------------------------------------------------------- */

static void expect_kind(MPI_File fh, const char *want, const char *when)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    TCHK(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "hcomp_file_kind", MPI_MAX_INFO_VAL, v, &flag);
    TASSERT(flag && strcmp(v, want) == 0, "%s: hcomp_file_kind is %s, want %s", when,
            flag ? v : "(absent)", want);
    int has_codec = 0;
    MPI_Info_get(info, "hcomp_codec", MPI_MAX_INFO_VAL, v, &has_codec);
    MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, v, &flag);
    if (strcmp(want, "plain") == 0) {
        TASSERT(!has_codec, "%s: a plain file's info still has hcomp hints", when);
        TASSERT(flag && strncmp(v, "UFS", 3) == 0, "%s: romio_filesystem_type is %s, want UFS...",
                when, flag ? v : "(absent)");
    } else {
        TASSERT(has_codec, "%s: an hcomp file's info lacks hcomp_codec", when);
        TASSERT(flag && strncmp(v, "HCOMP", 5) == 0, "%s: romio_filesystem_type is %s", when,
                flag ? v : "(absent)");
    }
    MPI_Info_free(&info);
}

/* ---- reads and writes against the model ---------------------------------------------- */

static void model_write(uint64_t off, const uint8_t *src, uint64_t len)
{
    if (off + len > model_len) {
        memset(model + model_len, 0, off > model_len ? off - model_len : 0);
        model_len = off + len;
    }
    memcpy(model + off, src, len);
}

/* MPI's consistency for other ranks' writes: sync, barrier, sync */
static void settle(MPI_File fh)
{
    TCHK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TCHK(MPI_File_sync(fh));
}

/* every rank reads the whole file collectively in P parts and by itself in one piece */
static void expect_contents(MPI_File fh, const char *when)
{
    MPI_Status st;
    TASSERT(t_get_size(fh) == (MPI_Offset)model_len, "%s: size %lld, want %llu", when,
            (long long)t_get_size(fh), (unsigned long long)model_len);
    uint64_t a = (uint64_t)T.rank * model_len / T.nprocs;
    uint64_t b = (uint64_t)(T.rank + 1) * model_len / T.nprocs;
    uint8_t *buf = t_malloc(model_len + 16);
    memset(buf, 0xEE, model_len + 16);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)a, buf, (int)(b - a), MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)(b - a), "%s: collective read got %d of %llu", when,
            t_count(&st), (unsigned long long)(b - a));
    TEXPECT_BYTES(buf, model + a, b - a, a, t_fmt("%s: collective read", when));
    /* one past the end: a short read */
    TCHK(MPI_File_read_at(fh, 0, buf, (int)model_len + 16, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)model_len, "%s: independent read of it all got %d of %llu",
            when, t_count(&st), (unsigned long long)model_len);
    TEXPECT_BYTES(buf, model, model_len, 0, t_fmt("%s: independent read", when));
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* the view: blocks of B bytes, rank r owning blocks r, r+P, r+2P, ... from disp */
static void set_block_view(MPI_File fh, MPI_Offset disp, MPI_Datatype *ft)
{
    MPI_Type_vector(1, B, B * T.nprocs, MPI_BYTE, ft);
    MPI_Datatype resized;
    MPI_Type_create_resized(*ft, 0, (MPI_Aint)B * T.nprocs, &resized);
    MPI_Type_free(ft);
    *ft = resized;
    MPI_Type_commit(ft);
    TCHK(MPI_File_set_view(fh, disp + (MPI_Offset)T.rank * B, MPI_BYTE, *ft, "native",
                           MPI_INFO_NULL));
}

/* file offset of byte i of this rank's view from disp */
static uint64_t view_off(uint64_t disp, uint64_t i)
{
    return disp + (i / B) * (uint64_t)B * T.nprocs + (uint64_t)T.rank * B + i % B;
}

static void strided_read(MPI_File fh, uint64_t disp, uint64_t nblocks, const char *when)
{
    MPI_Datatype ft;
    MPI_Status st;
    set_block_view(fh, (MPI_Offset)disp, &ft);
    uint64_t n = nblocks * B;
    uint8_t *buf = t_malloc(n), *exp = t_malloc(n);
    for (uint64_t i = 0; i < n; i++)
        exp[i] = model[view_off(disp, i)];
    TCHK(MPI_File_read_at_all(fh, 0, buf, (int)n, MPI_BYTE, &st));
    TASSERT(t_count(&st) == (int)n, "%s: strided read got %d of %llu", when, t_count(&st),
            (unsigned long long)n);
    TEXPECT_BYTES(buf, exp, n, disp, t_fmt("%s: strided collective read", when));
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    free(buf), free(exp);
}

/* every rank writes its blocks of the view; the model gets every rank's */
static void strided_write(MPI_File fh, uint64_t disp, uint64_t nblocks, uint64_t seed)
{
    MPI_Datatype ft;
    MPI_Status st;
    set_block_view(fh, (MPI_Offset)disp, &ft);
    uint64_t n = nblocks * B;
    uint8_t *buf = t_malloc(n);
    for (uint64_t i = 0; i < n; i++)
        buf[i] = t_byte(view_off(disp, i), seed);
    TCHK(MPI_File_write_at_all(fh, 0, buf, (int)n, MPI_BYTE, &st));
    TCHK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    free(buf);
    /* the model: every rank's blocks */
    uint64_t end = disp + nblocks * (uint64_t)B * T.nprocs;
    uint8_t *all = t_malloc(end - disp);
    for (uint64_t o = disp; o < end; o++)
        all[o - disp] = t_byte(o, seed);
    model_write(disp, all, end - disp);
    free(all);
}

/* ---- the parts ------------------------------------------------------------------------ */

static void read_only(MPI_Info info)
{
    MPI_Status st;
    MPI_File fh = t_open(&T, pname(".plain"), MPI_MODE_RDONLY, info);
    expect_kind(fh, "plain", "read-only open of a plain file");
    expect_contents(fh, "read-only");
    strided_read(fh, 0, model_len / B / T.nprocs, "read-only");
    strided_read(fh, 777, 3, "read-only, odd displacement");
    /* ordered reads through the shared file pointer: rank r gets the r-th 1000 bytes */
    uint8_t buf[B];
    TCHK(MPI_File_read_ordered(fh, buf, B, MPI_BYTE, &st));
    TEXPECT_BYTES(buf, model + (uint64_t)T.rank * B, B, (uint64_t)T.rank * B, "ordered read");
    TCHK_FAILS(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 0, buf, 10, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    expect_still_plain(ppath(".plain"), model, model_len, "after the read-only open");
    t_log(&T, "read-only: kind plain, size, independent, collective, strided and ordered reads");
}

static void read_write(MPI_Info info)
{
    MPI_Status st;
    MPI_File fh = t_open(&T, pname(".plain"), MPI_MODE_RDWR, info);
    expect_kind(fh, "plain", "read-write open of a plain file");
    expect_contents(fh, "read-write, before writing");

    /* independent writes: each rank 3000 bytes at its own place */
    uint8_t w[3000];
    for (int r = 0; r < T.nprocs; r++) {
        uint64_t off = 5000 + (uint64_t)r * 7919;
        t_fill(w, sizeof w, off, SEED + 1);
        if (r == T.rank)
            TCHK(MPI_File_write_at(fh, (MPI_Offset)off, w, (int)sizeof w, MPI_BYTE, &st));
        model_write(off, w, sizeof w);
    }
    settle(fh);
    expect_contents(fh, "after independent writes");

    /* a collective write past the end: rank r writes [E + r*L, E + (r+1)*L) */
    const uint64_t L = 20000, E = model_len + 333;
    uint8_t *cw = t_malloc(L);
    for (int r = 0; r < T.nprocs; r++) {
        t_fill(cw, L, E + (uint64_t)r * L, SEED + 2);
        model_write(E + (uint64_t)r * L, cw, L);
    }
    t_fill(cw, L, E + (uint64_t)T.rank * L, SEED + 2);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)(E + (uint64_t)T.rank * L), cw, (int)L, MPI_BYTE,
                               &st));
    free(cw);
    settle(fh);
    expect_contents(fh, "after a collective write past the end");

    /* strided collective writes (interleaved blocks of all ranks) */
    strided_write(fh, 1234, 7, SEED + 3);
    settle(fh);
    expect_contents(fh, "after a strided collective write");
    strided_read(fh, 1234, 7, "after a strided collective write");

    /* atomic mode */
    TCHK(MPI_File_set_atomicity(fh, 1));
    int atom = 0;
    TCHK(MPI_File_get_atomicity(fh, &atom));
    TASSERT(atom == 1, "atomicity %d after setting it", atom);
    uint64_t aoff = 100000 + (uint64_t)T.rank * 4096;
    for (int r = 0; r < T.nprocs; r++) {
        t_fill(w, sizeof w, 100000 + (uint64_t)r * 4096, SEED + 4);
        model_write(100000 + (uint64_t)r * 4096, w, sizeof w);
    }
    t_fill(w, sizeof w, aoff, SEED + 4);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)aoff, w, (int)sizeof w, MPI_BYTE, &st));
    TCHK(MPI_File_set_atomicity(fh, 0));
    settle(fh);
    expect_contents(fh, "after writes in atomic mode");

    /* ordered writes through the shared file pointer (starts at 0) */
    uint8_t ow[100];
    for (int r = 0; r < T.nprocs; r++) {
        t_fill(ow, sizeof ow, (uint64_t)r * 100, SEED + 5);
        model_write((uint64_t)r * 100, ow, sizeof ow);
    }
    t_fill(ow, sizeof ow, (uint64_t)T.rank * 100, SEED + 5);
    TCHK(MPI_File_write_ordered(fh, ow, (int)sizeof ow, MPI_BYTE, &st));
    settle(fh);
    expect_contents(fh, "after ordered writes");

    /* set_size: shrink (the data is gone for good), grow (zeros), preallocate */
    uint64_t small = model_len / 3 + 17;
    TCHK(MPI_File_set_size(fh, (MPI_Offset)small));
    model_len = small;
    settle(fh);
    expect_contents(fh, "after shrinking with set_size");
    TCHK(MPI_File_set_size(fh, (MPI_Offset)(small + 50000)));
    memset(model + small, 0, 50000);
    model_len = small + 50000;
    settle(fh);
    expect_contents(fh, "after growing with set_size");
    TCHK(MPI_File_preallocate(fh, (MPI_Offset)(model_len + 4096)));
    memset(model + model_len, 0, 4096);
    model_len += 4096;
    settle(fh);
    expect_contents(fh, "after preallocate");
    TCHK(MPI_File_preallocate(fh, 10));     /* never shrinks */
    settle(fh);
    expect_contents(fh, "after a smaller preallocate");
    TCHK(MPI_File_sync(fh));
    TCHK(MPI_File_close(&fh));
    expect_still_plain(ppath(".plain"), model, model_len, "after the read-write open");
    t_log(&T, "read-write: independent, collective, strided, atomic and ordered writes, "
              "set_size, preallocate; %llu bytes as expected with read(2)",
          (unsigned long long)model_len);
}

static void modes(MPI_Info info)
{
    MPI_Status st;
    /* CREATE on an existing plain file: stays plain, keeps its bytes */
    MPI_File fh = t_open(&T, pname(".plain"), MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    expect_kind(fh, "plain", "CREATE on an existing plain file");
    expect_contents(fh, "CREATE on an existing plain file");
    TCHK(MPI_File_close(&fh));
    expect_still_plain(ppath(".plain"), model, model_len, "after CREATE");

    /* CREATE|EXCL: the file exists */
    fh = MPI_FILE_NULL;
    TCHK_FAILS(MPI_ERR_FILE_EXISTS, MPI_File_open(MPI_COMM_WORLD, pname(".plain"),
                                                  MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                                                  info, &fh));
    expect_still_plain(ppath(".plain"), model, model_len, "after CREATE|EXCL");

    /* APPEND: the individual file pointer starts at the end; rank 0 appends */
    fh = t_open(&T, pname(".plain"), MPI_MODE_APPEND | MPI_MODE_WRONLY, info);
    expect_kind(fh, "plain", "APPEND open");
    MPI_Offset pos = -1;
    TCHK(MPI_File_get_position(fh, &pos));
    TASSERT(pos == (MPI_Offset)model_len, "APPEND: position %lld, want %llu", (long long)pos,
            (unsigned long long)model_len);
    uint8_t tail[555];
    t_fill(tail, sizeof tail, model_len, SEED + 6);
    if (T.rank == 0)
        TCHK(MPI_File_write(fh, tail, (int)sizeof tail, MPI_BYTE, &st));
    model_write(model_len, tail, sizeof tail);
    TCHK(MPI_File_close(&fh));
    expect_still_plain(ppath(".plain"), model, model_len, "after APPEND");
    t_log(&T, "CREATE keeps a plain file plain; CREATE|EXCL: MPI_ERR_FILE_EXISTS; APPEND");
}

/* rank 0: the first 8 bytes of path are the mapping-file magic */
static void expect_mapping_file(const char *path, const char *when)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (T.rank == 0) {
        uint64_t n = 0;
        uint8_t *b = posix_get(path, &n);
        TASSERT(b && n >= 8 && memcmp(b, "HCOMPMAP", 8) == 0, "%s: %s is not an hcomp mapping "
                "file", when, path);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* every rank writes L bytes of generation gen at rank*L collectively, then the file is
 * read back whole (size nprocs*L) through a new read-only handle */
static void write_and_check(MPI_File fh, uint64_t L, int gen, MPI_Info info, const char *when)
{
    MPI_Status st;
    uint8_t *w = t_malloc(L), *r = t_malloc(L * (uint64_t)T.nprocs);
    t_fill(w, L, (uint64_t)T.rank * L, SEED + gen);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)((uint64_t)T.rank * L), w, (int)L, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    fh = t_open(&T, pname(".empty"), MPI_MODE_RDONLY, info);
    expect_kind(fh, "hcomp", when);
    TASSERT(t_get_size(fh) == (MPI_Offset)(L * (uint64_t)T.nprocs), "%s: size %lld, want %llu",
            when, (long long)t_get_size(fh), (unsigned long long)(L * (uint64_t)T.nprocs));
    TCHK(MPI_File_read_at_all(fh, 0, r, (int)(L * (uint64_t)T.nprocs), MPI_BYTE, &st));
    for (int k = 0; k < T.nprocs; k++) {
        t_fill(w, L, (uint64_t)k * L, SEED + gen);
        TEXPECT_BYTES(r + (uint64_t)k * L, w, L, (uint64_t)k * L, when);
    }
    TCHK(MPI_File_close(&fh));
    free(w), free(r);
}

/* rank 0: remove the segment directories beside path (".NAME.ID.hcd") of hcomp files
 * emptied with truncate(2), which hcomp leaves (docs/TIERS.md); returns how many there were */
static int remove_emptied_segment_dirs(const char *path)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char dir[PATH_MAX], prefix[512];
    snprintf(dir, sizeof dir, "%s", t_dirname(path));
    snprintf(prefix, sizeof prefix, ".%s.", base);
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || l < 4 ||
            strcmp(e->d_name + l - 4, ".hcd") != 0)
            continue;
        char sub[PATH_MAX + 300];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *s = opendir(sub);
        struct dirent *g;
        while (s && (g = readdir(s)) != NULL) {
            char f[PATH_MAX + 600];
            snprintf(f, sizeof f, "%s/%s", sub, g->d_name);
            if (g->d_name[0] != '.')
                unlink(f);
        }
        if (s)
            closedir(s);
        n += rmdir(sub) == 0;
    }
    if (d)
        closedir(d);
    return n;
}

/* An empty file is plain when read, an hcomp file when written: nothing in it can be lost,
 * and libraries empty a file before they write it anew (PnetCDF's ncmpi_create has rank 0
 * truncate(2) it, then opens it with MPI_MODE_CREATE). */
static void empty_file(MPI_Info info)
{
    posix_put(ppath(".empty"), NULL, 0);
    MPI_File fh = t_open(&T, pname(".empty"), MPI_MODE_RDONLY, info);
    expect_kind(fh, "plain", "read-only open of an empty file");
    TASSERT(t_get_size(fh) == 0, "empty file: size %lld", (long long)t_get_size(fh));
    TCHK(MPI_File_close(&fh));
    expect_still_plain(ppath(".empty"), (const uint8_t *)"", 0, "empty file, read-only");

    /* CREATE|EXCL: the file exists, and it is left as it was (not given a header) */
    fh = MPI_FILE_NULL;
    TCHK_FAILS(MPI_ERR_FILE_EXISTS, MPI_File_open(MPI_COMM_WORLD, pname(".empty"),
                                                  MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                                                  info, &fh));
    expect_still_plain(ppath(".empty"), (const uint8_t *)"", 0, "empty file, CREATE|EXCL");

    fh = t_open(&T, pname(".empty"), MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    expect_kind(fh, "hcomp", "CREATE|RDWR open of an empty file");
    TASSERT(t_get_size(fh) == 0, "empty file as hcomp: size %lld", (long long)t_get_size(fh));
    write_and_check(fh, 70000, 7, info, "an empty file written through hcomp: (CREATE)");
    expect_mapping_file(ppath(".empty"), "an empty file written through hcomp:");

    /* its life as a checkpoint rewritten by PnetCDF: emptied with truncate(2), created
     * again, smaller and then larger; an hcomp file each time, holding the new bytes only */
    for (int gen = 8; gen <= 9; gen++) {
        MPI_Barrier(MPI_COMM_WORLD);
        int err = 0;
        if (T.rank == 0)
            err = truncate(ppath(".empty"), 0) == 0 ? 0 : errno;
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
        TASSERT(err == 0, "truncate(%s): %s", ppath(".empty"), strerror(err));
        fh = t_open(&T, pname(".empty"), MPI_MODE_CREATE | MPI_MODE_RDWR, info);
        expect_kind(fh, "hcomp", "CREATE|RDWR open of a truncated hcomp file");
        write_and_check(fh, gen == 8 ? 4096 : 50000, gen, info,
                        "a truncated hcomp file written again");
        expect_mapping_file(ppath(".empty"), "a truncated hcomp file written again");
    }

    /* WRONLY without CREATE: an hcomp file too */
    t_delete(&T, pname(".empty"), info);
    if (T.rank == 0) {
        int n = remove_emptied_segment_dirs(ppath(".empty"));
        TASSERT(n == 2, "%d segment directories of the emptied generations, want 2", n);
    }
    posix_put(ppath(".empty"), NULL, 0);
    fh = t_open(&T, pname(".empty"), MPI_MODE_WRONLY, info);
    expect_kind(fh, "hcomp", "WRONLY open of an empty file");
    write_and_check(fh, 3000, 10, info, "an empty file written through hcomp: (WRONLY)");
    t_delete(&T, pname(".empty"), info);
    t_log(&T, "an empty file is plain read-only (and untouched by CREATE|EXCL), an hcomp file "
          "when written, also a truncated hcomp file created again");
}

static void deletes(MPI_Info info)
{
    uint8_t w[4096];
    t_fill(w, sizeof w, 0, SEED + 8);
    posix_put(ppath(".doc"), w, sizeof w);
    MPI_File fh = t_open(&T, pname(".doc"), MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info);
    expect_kind(fh, "plain", "DELETE_ON_CLOSE open");
    uint8_t r[4096];
    MPI_Status st;
    TCHK(MPI_File_read_at_all(fh, 0, r, (int)sizeof r, MPI_BYTE, &st));
    TEXPECT_BYTES(r, w, sizeof w, 0, "DELETE_ON_CLOSE file");
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TASSERT(!t_exists(ppath(".doc")), "MPI_MODE_DELETE_ON_CLOSE left the plain file %s",
            ppath(".doc"));

    posix_put(ppath(".del"), w, sizeof w);
    t_delete(&T, pname(".del"), info);
    TASSERT(!t_exists(ppath(".del")), "MPI_File_delete(%s) left the plain file", pname(".del"));
    t_log(&T, "DELETE_ON_CLOSE and MPI_File_delete remove plain files");
}

/* run an open-write-close with hcomp_stats=1 and return what rank 0's stderr got */
static char *stats_output(const char *name, int amode, MPI_Info base)
{
    static char text[8192];
    MPI_Info info;
    MPI_Info_dup(base, &info);
    MPI_Info_set(info, "hcomp_stats", "1");
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.stderr", T.path);
    int saved = -1;
    fflush(stderr);
    if (T.rank == 0) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        TASSERT(fd >= 0, "cannot create %s", tmp);
        saved = dup(2);
        dup2(fd, 2);
        close(fd);
    }
    MPI_File fh = t_open(&T, name, amode, info);
    uint8_t w[8192];
    t_fill(w, sizeof w, 0, SEED + 9);
    MPI_Status st;
    if (T.rank == 0 && (amode & MPI_MODE_RDONLY))
        TCHK(MPI_File_read_at(fh, 0, w, (int)sizeof w, MPI_BYTE, &st));
    else if (T.rank == 0)
        TCHK(MPI_File_write_at(fh, 0, w, (int)sizeof w, MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    text[0] = 0;
    if (T.rank == 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        FILE *f = fopen(tmp, "r");
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        text[n] = 0;
        if (f)
            fclose(f);
        unlink(tmp);
    }
    MPI_Info_free(&info);
    return text;
}

static void stats_report(MPI_Info info)
{
    char want[4300];
    char *out = stats_output(pname(".plain"), MPI_MODE_RDWR, info);
    uint8_t w[8192];
    t_fill(w, sizeof w, 0, SEED + 9);
    model_write(0, w, sizeof w);
    snprintf(want, sizeof want, "hcomp stats for %s (plain file)", ppath(".plain"));
    if (T.rank == 0)
        TASSERT(strstr(out, want) != NULL, "hcomp_stats=1 on a plain file: want '%s' in '%s'",
                want, out);
    expect_still_plain(ppath(".plain"), model, model_len, "after hcomp_stats=1");

    t_delete_quiet(&T, pname(".new"), info);
    out = stats_output(pname(".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    snprintf(want, sizeof want, "hcomp stats for %s (hcomp file)", ppath(".new"));
    if (T.rank == 0)
        TASSERT(strstr(out, want) != NULL, "hcomp_stats=1 on an hcomp file: want '%s' in '%s'",
                want, out);
    /* a handle that only reads reports its reads */
    out = stats_output(pname(".new"), MPI_MODE_RDONLY, info);
    snprintf(want, sizeof want, "hcomp stats for %s (hcomp file, read only by this handle):\n"
             "  reads: 1 calls, 8192 bytes in", ppath(".new"));
    if (T.rank == 0)
        TASSERT(strstr(out, want) != NULL, "hcomp_stats=1, a reader: want '%s' in '%s'", want,
                out);
    t_delete(&T, pname(".new"), info);
    t_log(&T, "hcomp_stats=1 reports \"plain file\", \"hcomp file\" and a reader's reads");
}

static void new_hcomp_file(MPI_Info info)
{
    MPI_Status st;
    const uint64_t L = 70000;
    t_delete_quiet(&T, pname(".new"), info);
    MPI_File fh = t_open(&T, pname(".new"), MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    expect_kind(fh, "hcomp", "a new file created through hcomp:");
    uint8_t *w = t_malloc(L), *r = t_malloc(L * T.nprocs);
    t_fill(w, L, (uint64_t)T.rank * L, SEED + 10);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)((uint64_t)T.rank * L), w, (int)L, MPI_BYTE, &st));
    /* the info of this handle (hcomp_file_kind in it) given to an open of the plain file:
     * the key is reported, not obeyed */
    MPI_Info used;
    TCHK(MPI_File_get_info(fh, &used));
    TCHK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (T.rank == 0) {
        uint64_t n = 0;
        uint8_t *b = posix_get(ppath(".new"), &n);
        TASSERT(b && n >= 8 && memcmp(b, "HCOMPMAP", 8) == 0,
                "the file created through hcomp: is not an hcomp mapping file");
        free(b);
    }
    fh = t_open(&T, pname(".plain"), MPI_MODE_RDONLY, used);
    expect_kind(fh, "plain", "a plain file opened with an hcomp handle's info");
    TCHK(MPI_File_close(&fh));
    fh = t_open(&T, pname(".new"), MPI_MODE_RDONLY, used);
    expect_kind(fh, "hcomp", "the new hcomp file reopened with its own info");
    TCHK(MPI_File_read_at_all(fh, 0, r, (int)(L * T.nprocs), MPI_BYTE, &st));
    for (int k = 0; k < T.nprocs; k++) {
        t_fill(w, L, (uint64_t)k * L, SEED + 10);
        TEXPECT_BYTES(r + (uint64_t)k * L, w, L, (uint64_t)k * L, "the new hcomp file");
    }
    TCHK(MPI_File_close(&fh));
    MPI_Info_free(&used);
    free(w), free(r);
    t_delete(&T, pname(".new"), info);
    expect_still_plain(ppath(".plain"), model, model_len, "after the hcomp file's life");
    t_log(&T, "a new file through hcomp: is an hcomp file (magic, kind hcomp)");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, &T);
    const char *force = getenv("ROMIO_FSTYPE_FORCE");
    forced = force && strcmp(force, "hcomp:") == 0;
    if (forced) {
        TASSERT(T.prefix[0] == 0, "under ROMIO_FSTYPE_FORCE give the bare name, not %s", T.target);
        T.is_hcomp = 1;
        T.config = argc > 2 && argv[argc - 1][0] && argv[argc - 1] != T.target ? argv[argc - 1]
                                                                              : NULL;
    }
    TASSERT(T.is_hcomp, "t_plain is about hcomp: (TARGET hcomp:..., or ROMIO_FSTYPE_FORCE)");
    find_ram();
    MPI_Info info = t_info(&T, NULL);

    model = t_malloc(4 * MiB);
    model_len = 300007;
    t_fill(model, model_len, 0, SEED);
    posix_put(ppath(".plain"), model, model_len);

    read_only(info);
    read_write(info);
    modes(info);
    empty_file(info);
    deletes(info);
    stats_report(info);
    new_hcomp_file(info);

    t_unlink(&T, ppath(".plain"));
    t_log(&T, "all through %s", forced ? "ROMIO_FSTYPE_FORCE=hcomp: and bare names" : "hcomp: names");
    MPI_Info_free(&info);
    free(model);
    return t_finish(&T);
}
