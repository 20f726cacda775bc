/* Tier configuration: JSON (jansson) or the embedded default. */
#include "tier_config.h"
#include "common/util.h"

#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_RAM_CAPACITY (64ull << 20)

/* Expand $USER, $UID, $HOME and ${NAME} (environment); others are errors. */
static int expand_path(const char *in, char *out, size_t outlen, const char *source,
                       hcomp_error *err)
{
    size_t o = 0;
    for (const char *p = in; *p;) {
        char val[PATH_MAX];
        const char *rep = NULL;
        if (*p == '$') {
            char name[128];
            size_t n = 0;
            const char *q = p + 1;
            int braced = (*q == '{');
            if (braced)
                q++;
            while ((q[n] >= 'A' && q[n] <= 'Z') || (q[n] >= 'a' && q[n] <= 'z') ||
                   (q[n] >= '0' && q[n] <= '9') || q[n] == '_') {
                if (n + 1 >= sizeof(name))
                    break;
                name[n] = q[n];
                n++;
            }
            name[n] = '\0';
            if (n == 0 || (braced && q[n] != '}'))
                return hcomp_fail(err, HCOMP_E_INVAL, "%s: bad variable in tier path \"%s\"",
                                  source, in);
            if (strcmp(name, "UID") == 0) {
                snprintf(val, sizeof(val), "%u", (unsigned) geteuid());
                rep = val;
            } else if (strcmp(name, "USER") == 0 && getenv("USER") == NULL) {
                struct passwd *pw = getpwuid(geteuid());
                snprintf(val, sizeof(val), "%s", pw ? pw->pw_name : "unknown");
                rep = val;
            } else {
                rep = getenv(name);
                if (rep == NULL)
                    return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier path \"%s\" uses $%s, "
                                      "which is not set", source, in, name);
            }
            p = q + n + (braced ? 1 : 0);
        } else {
            val[0] = *p++;
            val[1] = '\0';
            rep = val;
        }
        size_t l = strlen(rep);
        if (o + l + 1 > outlen)
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier path \"%s\" is too long", source, in);
        memcpy(out + o, rep, l);
        o += l;
    }
    out[o] = '\0';
    return HCOMP_OK;
}

/* Reads a number or a string with a unit. */
static int field_text(json_t *v, char *buf, size_t n)
{
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long) json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%.17g", json_real_value(v));
    else
        return -1;
    return 0;
}

static int parse_tier(json_t *t, int index, const char *source, hcomp_tier *tier, hcomp_error *err)
{
    static const char *const known[] = {"name", "path", "capacity", "bandwidth", "latency",
                                        "scope", "private", "emulate", "volatile", "measure",
                                        NULL};
    char text[128];
    const char *key;
    json_t *v;

    if (!json_is_object(t))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tiers[%d] is not an object", source, index);
    json_object_foreach(t, key, v) {
        int ok = 0;
        for (int k = 0; known[k]; k++)
            ok |= strcmp(key, known[k]) == 0;
        if (!ok)
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tiers[%d] has unknown field \"%s\" "
                              "(known: name, path, capacity, bandwidth, latency, scope, private, emulate, "
                              "volatile, measure)",
                              source, index, key);
    }
    memset(tier, 0, sizeof(*tier));
    v = json_object_get(t, "name");
    if (!json_is_string(v) || json_string_length(v) == 0 ||
        json_string_length(v) > HCOMP_TIER_NAME_MAX)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tiers[%d].name must be a string of 1 to %d "
                          "characters", source, index, HCOMP_TIER_NAME_MAX);
    snprintf(tier->name, sizeof(tier->name), "%s", json_string_value(v));
    v = json_object_get(t, "path");
    if (!json_is_string(v) || json_string_length(v) == 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" needs a \"path\" (a directory, "
                          "or \"%s\")", source, tier->name, HCOMP_FILEDIR);
    if (strcmp(json_string_value(v), HCOMP_FILEDIR) == 0)
        snprintf(tier->path, sizeof(tier->path), "%s", HCOMP_FILEDIR);
    else {
        int rc = expand_path(json_string_value(v), tier->path, sizeof(tier->path), source, err);
        if (rc != HCOMP_OK)
            return rc;
        if (tier->path[0] != '/')
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" path \"%s\" must be absolute",
                              source, tier->name, tier->path);
    }
    tier->capacity = UINT64_MAX;
    if ((v = json_object_get(t, "capacity")) != NULL &&
        (field_text(v, text, sizeof(text)) != 0 || hcomp_parse_size(text, &tier->capacity) != 0))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" capacity must be a size like "
                          "\"64MiB\" or \"unlimited\"", source, tier->name);
    if ((v = json_object_get(t, "bandwidth")) != NULL &&
        (field_text(v, text, sizeof(text)) != 0 || hcomp_parse_bandwidth(text, &tier->bandwidth) != 0))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" bandwidth must be like \"10GB/s\"",
                          source, tier->name);
    if ((v = json_object_get(t, "latency")) != NULL &&
        (field_text(v, text, sizeof(text)) != 0 || hcomp_parse_duration(text, &tier->latency) != 0))
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" latency must be like \"20us\"",
                          source, tier->name);
    tier->node_local = 0;
    if ((v = json_object_get(t, "scope")) != NULL) {
        const char *s = json_string_value(v);
        if (s && strcmp(s, "node-local") == 0)
            tier->node_local = 1;
        else if (!s || strcmp(s, "shared") != 0)
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" scope must be \"node-local\" "
                              "or \"shared\"", source, tier->name);
    }
    if ((v = json_object_get(t, "private")) != NULL) {
        if (!json_is_boolean(v))
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" private must be true or false",
                              source, tier->name);
        tier->private_dir = json_is_true(v);
    }
    tier->measure = 1;
    if ((v = json_object_get(t, "measure")) != NULL) {
        if (!json_is_boolean(v))
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" measure must be true or false",
                              source, tier->name);
        tier->measure = json_is_true(v);
    }
    if ((v = json_object_get(t, "emulate")) != NULL) {
        if (!json_is_boolean(v))
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" emulate must be true or false",
                              source, tier->name);
        tier->emulate = json_is_true(v);
        if (tier->emulate && !(tier->bandwidth > 0))
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" is emulated but has no "
                              "bandwidth", source, tier->name);
    }
    tier->volatile_mode = -1;
    if ((v = json_object_get(t, "volatile")) != NULL) {
        if (!json_is_boolean(v))
            return hcomp_fail(err, HCOMP_E_INVAL, "%s: tier \"%s\" volatile must be true or false",
                              source, tier->name);
        tier->volatile_mode = json_is_true(v);
    }
    return HCOMP_OK;
}

int hcomp_tier_config_parse(const char *text, const char *source, hcomp_tier_config *cfg,
                            hcomp_error *err)
{
    json_error_t jerr;
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->source, sizeof(cfg->source), "%s", source);
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: not valid JSON (line %d, column %d: %s)",
                          source, jerr.line, jerr.column, jerr.text);
    int rc = HCOMP_OK;
    json_t *ver = json_object_get(root, "version");
    json_t *tiers = json_object_get(root, "tiers");
    if (!json_is_object(root) || !json_is_array(tiers) || json_array_size(tiers) == 0) {
        rc = hcomp_fail(err, HCOMP_E_INVAL, "%s: expected {\"version\": 1, \"tiers\": [ ... ]} "
                        "with at least one tier", source);
    } else if (ver != NULL && (!json_is_integer(ver) || json_integer_value(ver) != 1)) {
        rc = hcomp_fail(err, HCOMP_E_INVAL, "%s: configuration version must be 1", source);
    } else if (json_array_size(tiers) > HCOMP_MAX_TIERS) {
        rc = hcomp_fail(err, HCOMP_E_INVAL, "%s: %zu tiers; at most %d are supported", source,
                        json_array_size(tiers), HCOMP_MAX_TIERS);
    } else {
        size_t i;
        json_t *t;
        json_array_foreach(tiers, i, t) {
            rc = parse_tier(t, (int) i, source, &cfg->tier[i], err);
            if (rc != HCOMP_OK)
                break;
            for (size_t j = 0; j < i; j++)
                if (strcmp(cfg->tier[j].name, cfg->tier[i].name) == 0) {
                    rc = hcomp_fail(err, HCOMP_E_INVAL, "%s: two tiers are named \"%s\"", source,
                                    cfg->tier[i].name);
                    break;
                }
            if (rc != HCOMP_OK)
                break;
            cfg->ntiers = (int) i + 1;
        }
    }
    json_decref(root);
    return rc;
}

int hcomp_tier_config_default(hcomp_tier_config *cfg, hcomp_error *err)
{
    (void) err;
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->source, sizeof(cfg->source), "embedded default");
    struct stat st;
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) {
        hcomp_tier *t = &cfg->tier[cfg->ntiers++];
        snprintf(t->name, sizeof(t->name), "ram");
        snprintf(t->path, sizeof(t->path), "/dev/shm/hcomp-%u", (unsigned) geteuid());
        t->capacity = DEFAULT_RAM_CAPACITY;
        t->latency = 1e-6;       /* speeds: probed at first use, then measured */
        t->measure = 1;
        t->node_local = 1;
        t->private_dir = 1;
        t->volatile_mode = -1;      /* tmpfs, as a rule: detected */
    }
    hcomp_tier *t = &cfg->tier[cfg->ntiers++];
    snprintf(t->name, sizeof(t->name), "filedir");
    snprintf(t->path, sizeof(t->path), "%s", HCOMP_FILEDIR);
    t->capacity = UINT64_MAX;
    t->latency = 1e-4;
    t->measure = 1;
    t->volatile_mode = -1;
    return HCOMP_OK;
}

int hcomp_tier_config_load(const char *path, hcomp_tier_config *cfg, hcomp_error *err)
{
    if (path == NULL || path[0] == '\0')
        path = getenv("HCOMP_CONFIG");
    if (path == NULL || path[0] == '\0' || strcmp(path, "embedded") == 0)
        return hcomp_tier_config_default(cfg, err);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return hcomp_fail_errno(err, errno, "hcomp tier configuration %s", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = HCOMP_OK;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (4u << 20)) {
                rc = hcomp_fail(err, HCOMP_E_INVAL, "%s: tier configuration larger than 4 MiB",
                                path);
                break;
            }
            char *n = realloc(text, cap);
            if (n == NULL) {
                rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
                break;
            }
            text = n;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096) {
            if (ferror(f) && errno == EISDIR)   /* a bad value of the hint, not a bad file */
                rc = hcomp_fail(err, HCOMP_E_INVAL, "tier configuration %s is a directory, not "
                                "a JSON file", path);
            else if (ferror(f))
                rc = hcomp_fail_errno(err, errno ? errno : EIO, "reading %s", path);
            break;
        }
    }
    fclose(f);
    if (rc == HCOMP_OK) {
        text[len] = '\0';
        const char *nul = memchr(text, '\0', len);   /* the parser would stop there */
        rc = nul ? hcomp_fail(err, HCOMP_E_INVAL, "%s: the tier configuration has a NUL byte at "
                              "offset %zu; it must be JSON text", path, (size_t) (nul - text))
            : hcomp_tier_config_parse(text, path, cfg, err);
    }
    free(text);
    return rc;
}

int hcomp_tier_ensure_private_dir(const char *path, hcomp_error *err)
{
    struct stat st;
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return hcomp_fail_errno(err, errno, "creating private tier directory %s", path);
    if (lstat(path, &st) != 0)
        return hcomp_fail_errno(err, errno, "private tier directory %s", path);
    if (S_ISLNK(st.st_mode))
        return hcomp_fail(err, HCOMP_E_ACCESS, "private tier directory %s is a symbolic link; "
                          "refusing to use it (remove it if you did not make it)", path);
    if (!S_ISDIR(st.st_mode))
        return hcomp_fail(err, HCOMP_E_ACCESS, "private tier directory %s is not a directory",
                          path);
    if (st.st_uid != geteuid())
        return hcomp_fail(err, HCOMP_E_ACCESS, "private tier directory %s belongs to uid %u, "
                          "not to you (uid %u); refusing to use it", path, (unsigned) st.st_uid,
                          (unsigned) geteuid());
    if ((st.st_mode & 077) != 0)
        return hcomp_fail(err, HCOMP_E_ACCESS, "private tier directory %s is accessible to "
                          "others (mode %03o); it must be 0700", path, (unsigned) (st.st_mode & 0777));
    return HCOMP_OK;
}
