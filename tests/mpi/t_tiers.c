/* Tier configuration behaviour (hcomp targets only):
 *  1. a "private" tier directory that does not exist is created with mode 0700;
 *     pieces go to <tier>/<name>.<id>.hcd/ and, for "@filedir", to the hidden
 *     .<name>.<id>.hcd/ beside the file; MPI_File_delete removes both.
 *  2. capacity is shared by all files on a tier: a second file only gets what
 *     the first left, and deleting a file gives its room back.
 *  3. the HCOMP_CONFIG environment variable is used without an hcomp_config hint,
 *     and the hint wins over it.
 *
 *   t_tiers TARGET [CONFIG]     (CONFIG is ignored: the test makes its own) */
#include "tcommon.h"

#define PIECE "16384"
#define SLACK (8 * KiB) /* piece headers */

/* write len bytes of random data collectively (a slice per rank), read back */
static void write_file(const tctx *t, const char *name, MPI_Info info, uint64_t len, uint64_t seed)
{
    uint64_t a = (uint64_t)t->rank * len / t->nprocs, b = (uint64_t)(t->rank + 1) * len / t->nprocs;
    uint8_t *w = t_malloc(b - a), *r = t_malloc(b - a);
    MPI_Status st;
    t_fill_random(w, b - a, seed * 1000 + (uint64_t)t->rank);
    MPI_File fh = t_open(t, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, info);
    TCHK(MPI_File_write_at_all(fh, (MPI_Offset)a, w, (int)(b - a), MPI_BYTE, &st));
    TCHK(MPI_File_close(&fh));
    fh = t_open(t, name, MPI_MODE_RDONLY, info);
    TCHK(MPI_File_read_at_all(fh, (MPI_Offset)a, r, (int)(b - a), MPI_BYTE, &st));
    TEXPECT_BYTES(r, w, b - a, a, t_fmt("%s read back", name));
    TCHK(MPI_File_close(&fh));
    free(w), free(r);
}

/* number of entries of dir whose name starts with prefix and ends with suffix */
static int count_entries(const char *dir, const char *prefix, const char *suffix, char *found,
                         size_t flen)
{
    DIR *d = opendir(dir);
    if (!d)
        TFAIL("cannot list %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    size_t pl = strlen(prefix), sl = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l >= pl + sl && strncmp(e->d_name, prefix, pl) == 0 &&
            strcmp(e->d_name + l - sl, suffix) == 0) {
            if (found && n == 0)
                snprintf(found, flen, "%s/%s", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

static uint64_t du0(const char *dir)
{
    uint64_t v = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_self->rank == 0)
        v = t_du(dir, NULL);
    MPI_Bcast(&v, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return v;
}

static void part_private(const tctx *t)
{
    char top[4200], priv[4300], cfg[4300], json[9500], prefix[600], hidden_prefix[600];
    char found[4800];
    const char *base = strrchr(t->path, '/') ? strrchr(t->path, '/') + 1 : t->path;
    const char *fdir = t_dirname(t->path);
    snprintf(top, sizeof top, "%s.tp", t->path);
    snprintf(priv, sizeof priv, "%s/priv", top);
    snprintf(cfg, sizeof cfg, "%s/tiers.json", top);
    snprintf(prefix, sizeof prefix, "%.500s.", base);
    snprintf(hidden_prefix, sizeof hidden_prefix, ".%.500s.", base);
    t_mkdir(t, top);
    snprintf(json, sizeof json,
             "{\"version\":1,\"tiers\":["
             "{\"name\":\"ram\",\"path\":\"%s\",\"capacity\":\"64KiB\",\"private\":true,"
             "\"scope\":\"node-local\",\"measure\":false},"
             "{\"name\":\"pfs\",\"path\":\"@filedir\",\"capacity\":\"unlimited\",\"scope\":\"shared\","
             "\"measure\":false}]}\n",
             priv);
    t_write_text(t, cfg, json);
    /* placement is what is checked: node-local data stays where it was put */
    MPI_Info info = t_info(t, "hcomp_config", cfg, "hcomp_piece_size", PIECE, "hcomp_drain",
                           "never", NULL);

    write_file(t, t->target, info, 256 * KiB, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        struct stat sb;
        if (lstat(priv, &sb) != 0 || !S_ISDIR(sb.st_mode))
            TFAIL("private tier directory %s was not created", priv);
        TASSERT((sb.st_mode & 07777) == 0700, "private tier directory %s has mode %04o, want 0700",
                priv, (unsigned)(sb.st_mode & 07777));
        int n = count_entries(priv, prefix, ".hcd", found, sizeof found);
        TASSERT(n == 1, "expected one %s*.hcd directory in %s, found %d", prefix, priv, n);
        TASSERT(t_du(found, NULL) > 0, "no data in %s", found);
        n = count_entries(fdir, hidden_prefix, ".hcd", found, sizeof found);
        TASSERT(n == 1, "expected one hidden %s*.hcd directory in %s (the @filedir tier), found %d",
                hidden_prefix, fdir, n);
        TASSERT(t_du(found, NULL) > 0, "no data in %s", found);
    }
    t_delete(t, t->target, info);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->rank == 0) {
        t_expect_empty_dir(priv, "private tier after delete");
        int n = count_entries(fdir, hidden_prefix, ".hcd", found, sizeof found);
        TASSERT(n == 0, "after delete, %s is still there", found);
    }
    MPI_Info_free(&info);
    t_unlink(t, cfg);
    t_rmdir(t, priv);
    t_rmdir(t, top);
}

static void part_capacity(const tctx *t)
{
    static const char *const caps[2] = {"256KiB", "unlimited"};
    ttiers tt;
    t_make_tiers_tag(t, &tt, "cap", 2, caps);
    MPI_Info info = t_info(t, "hcomp_config", tt.cfg, "hcomp_piece_size", PIECE, NULL);
    const char *a = t_name(t, ".a"), *b = t_name(t, ".b"), *c = t_name(t, ".c");
    char an[4200], bn[4200], cn[4200];
    snprintf(an, sizeof an, "%s", a);
    snprintf(bn, sizeof bn, "%s", b);
    snprintf(cn, sizeof cn, "%s", c);

    write_file(t, an, info, 200 * KiB, 2);
    uint64_t after_a = du0(tt.dir[0]);
    write_file(t, bn, info, 200 * KiB, 3);
    uint64_t after_b = du0(tt.dir[0]);
    t_log(t, "first tier (256KiB): %llu bytes after file a, %llu after file b",
          (unsigned long long)after_a, (unsigned long long)after_b);
    TASSERT(after_a > 0, "file a put nothing on the first tier");
    TASSERT(after_b <= 256 * KiB + SLACK, "two files put %llu bytes on a 256 KiB tier",
            (unsigned long long)after_b);
    t_delete(t, an, info);
    uint64_t only_b = du0(tt.dir[0]);
    write_file(t, cn, info, 200 * KiB, 4);
    uint64_t after_c = du0(tt.dir[0]);
    t_log(t, "first tier: %llu bytes after deleting a, %llu after file c",
          (unsigned long long)only_b, (unsigned long long)after_c);
    TASSERT(after_c > only_b, "file c did not get the room file a gave back (%llu -> %llu bytes)",
            (unsigned long long)only_b, (unsigned long long)after_c);
    TASSERT(after_c <= 256 * KiB + SLACK, "files b and c put %llu bytes on a 256 KiB tier",
            (unsigned long long)after_c);
    t_delete(t, bn, info);
    t_delete(t, cn, info);
    MPI_Info_free(&info);
    t_remove_tiers(t, &tt);
}

static void part_env(const tctx *t)
{
    static const char *const caps[1] = {"unlimited"};
    ttiers env, hint;
    t_make_tiers_tag(t, &env, "env", 1, caps);
    t_make_tiers_tag(t, &hint, "hint", 1, caps);
    char name[4200];
    snprintf(name, sizeof name, "%s", t_name(t, ".e"));
    MPI_Info plain;
    MPI_Info_create(&plain);
    MPI_Info_set(plain, "hcomp_piece_size", PIECE);

    setenv("HCOMP_CONFIG", env.cfg, 1);
    write_file(t, name, plain, 100 * KiB, 5);
    TASSERT(du0(env.dir[0]) > 0, "HCOMP_CONFIG=%s: nothing stored in its tier %s", env.cfg,
            env.dir[0]);
    t_delete(t, name, MPI_INFO_NULL);

    MPI_Info h = t_info(t, "hcomp_config", hint.cfg, "hcomp_piece_size", PIECE, NULL);
    write_file(t, name, h, 100 * KiB, 6);
    TASSERT(du0(hint.dir[0]) > 0, "hint hcomp_config=%s: nothing stored in its tier", hint.cfg);
    TASSERT(du0(env.dir[0]) == 0, "with the hint set, data still went to HCOMP_CONFIG's tier");
    t_delete(t, name, MPI_INFO_NULL);
    unsetenv("HCOMP_CONFIG");

    MPI_Info_free(&plain);
    MPI_Info_free(&h);
    t_remove_tiers(t, &env);
    t_remove_tiers(t, &hint);
}

int main(int argc, char **argv)
{
    tctx t;
    t_init(&argc, &argv, &t);
    if (!t.is_hcomp)
        TFAIL("t_tiers needs an hcomp: target");
    t.config = NULL;
    part_private(&t);
    part_capacity(&t);
    part_env(&t);
    return t_finish(&t);
}
