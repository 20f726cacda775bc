/* Parsing, defaults and listing of the hcomp_* hints. */
#include "options.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int opt_parse_config(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    if (strlen(v) >= sizeof(o->config))
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s: path longer than %zu characters", key,
                          sizeof(o->config) - 1);
    snprintf(o->config, sizeof(o->config), "%s", v);
    return HCOMP_OK;
}

static int opt_parse_codec(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    hcomp_error perr;
    if (hcomp_codec_parse(v, &o->codec, &o->level, &perr) != HCOMP_OK)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%s\": %s", key, v, perr.msg);
    return HCOMP_OK;
}

static int opt_parse_piece_size(hcomp_options *o, const char *key, const char *v, hcomp_error *err)
{
    uint64_t n;
    if (hcomp_parse_size(v, &n) != 0 || n == 0 || n % HCOMP_PIECE_ALIGN != 0 ||
        n > HCOMP_PIECE_SIZE_MAX)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint %s=\"%s\": must be a multiple of %u bytes "
                          "between 4KiB and 64MiB (e.g. 1048576 or 4MiB)", key, v,
                          HCOMP_PIECE_ALIGN);
    o->piece_size = (uint32_t) n;
    return HCOMP_OK;
}

typedef int (*opt_parser)(hcomp_options *, const char *, const char *, hcomp_error *);

static const struct {
    const char *key, *def;
    opt_parser parse;
} table[] = {
#define HCOMP_OPTION_ROW(field, key, def, parser) {key, def, parser},
    HCOMP_OPTION_LIST(HCOMP_OPTION_ROW)
#undef HCOMP_OPTION_ROW
};
#define NOPTIONS (sizeof(table) / sizeof(table[0]))

size_t hcomp_options_count(void)
{
    return NOPTIONS;
}

const char *hcomp_options_key(size_t i)
{
    return i < NOPTIONS ? table[i].key : NULL;
}

const char *hcomp_options_default(size_t i)
{
    return i < NOPTIONS ? table[i].def : NULL;
}

int hcomp_options_is_hint(const char *key)
{
    return key != NULL && strncmp(key, "hcomp_", 6) == 0;
}

hcomp_options *hcomp_options_new(void)
{
    hcomp_options *o = calloc(1, sizeof(*o));
    if (o == NULL)
        return NULL;
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (table[i].parse(o, table[i].key, table[i].def, NULL) != HCOMP_OK) {
            free(o);    /* a bad default is a bug; fail loudly rather than run with it */
            return NULL;
        }
    }
    return o;
}

hcomp_options *hcomp_options_dup(const hcomp_options *opts)
{
    hcomp_options *o = malloc(sizeof(*o));
    if (o)
        *o = *opts;
    return o;
}

void hcomp_options_free(hcomp_options *opts)
{
    free(opts);
}

int hcomp_options_set(hcomp_options *opts, const char *key, const char *value, hcomp_error *err)
{
    if (key == NULL || value == NULL)
        return hcomp_fail(err, HCOMP_E_INVAL, "hint with no key or no value");
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strcmp(key, table[i].key) == 0)
            return table[i].parse(opts, key, value, err);
    char known[256] = "";
    for (size_t i = 0; i < NOPTIONS; i++) {
        strncat(known, table[i].key, sizeof(known) - strlen(known) - 1);
        if (i + 1 < NOPTIONS)
            strncat(known, ", ", sizeof(known) - strlen(known) - 1);
    }
    return hcomp_fail(err, HCOMP_E_INVAL, "unknown hcomp hint \"%s\" (known: %s)", key, known);
}

int hcomp_options_get(const hcomp_options *o, const char *key, char *buf, size_t n)
{
    if (strcmp(key, "hcomp_config") == 0) {
        const char *env = getenv("HCOMP_CONFIG");
        if (o->config[0])
            snprintf(buf, n, "%s", o->config);
        else
            snprintf(buf, n, "%s", env && env[0] ? env : "embedded");
    } else if (strcmp(key, "hcomp_codec") == 0) {
        if (o->level == HCOMP_LEVEL_DEFAULT || o->codec->level_max == o->codec->level_min)
            snprintf(buf, n, "%s", o->codec->name);
        else
            snprintf(buf, n, "%s:%d", o->codec->name, o->level);
    } else if (strcmp(key, "hcomp_piece_size") == 0) {
        snprintf(buf, n, "%u", (unsigned) o->piece_size);
    } else
        return HCOMP_E_INVAL;
    return HCOMP_OK;
}
