/* Fuzz target: the JSON tier configuration parser (tiers/tier_config.h, docs/TIERS.md "Tier
 * configuration").
 * Properties: it accepts or refuses with HCOMP_E_INVAL and a message naming the source;
 * what it accepts is within the documented limits (1..16 tiers, unique names of 1..63
 * characters, absolute paths or @filedir, non-negative speeds, emulated tiers with a
 * bandwidth); parsing is deterministic; and the accepted configuration written back as
 * JSON parses to the same configuration. */
#include "fuzz_common.h"
#include "tiers/tier_config.h"

#include <math.h>
#include <string.h>

static hcomp_tier_config a, b;

static void check_config(const hcomp_tier_config *c)
{
    CHECK(c->ntiers >= 1 && c->ntiers <= HCOMP_MAX_TIERS, "%d tiers", c->ntiers);
    for (int i = 0; i < c->ntiers; i++) {
        const hcomp_tier *t = &c->tier[i];
        size_t nl = strnlen(t->name, sizeof(t->name)), pl = strnlen(t->path, sizeof(t->path));
        CHECK(nl >= 1 && nl <= HCOMP_TIER_NAME_MAX, "tier %d name of %zu characters", i, nl);
        CHECK(pl >= 1 && pl < sizeof(t->path), "tier %d path of %zu characters", i, pl);
        CHECK(t->path[0] == '/' || strcmp(t->path, HCOMP_FILEDIR) == 0, "tier %d path \"%s\"", i,
              t->path);
        CHECK(t->bandwidth >= 0 && !isnan(t->bandwidth) && t->latency >= 0 && !isnan(t->latency),
              "tier %d bandwidth %g latency %g", i, t->bandwidth, t->latency);
        CHECK((t->node_local == 0 || t->node_local == 1) &&
              (t->private_dir == 0 || t->private_dir == 1) && (t->emulate == 0 || t->emulate == 1),
              "tier %d flags %d %d %d", i, t->node_local, t->private_dir, t->emulate);
        CHECK(!t->emulate || t->bandwidth > 0, "tier %d emulated without a bandwidth", i);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(c->tier[j].name, t->name) != 0, "two tiers named \"%s\"", t->name);
    }
}

/* JSON string literal of s into out (a tier name or path: no control characters
 * other than what \u escapes cover). */
static size_t json_str(char *out, const char *s)
{
    size_t o = 0;
    out[o++] = '"';
    for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            out[o++] = '\\';
            out[o++] = (char) *p;
        } else if (*p < 0x20) {
            o += (size_t) sprintf(out + o, "\\u%04x", *p);
        } else
            out[o++] = (char) *p;
    }
    out[o++] = '"';
    out[o] = '\0';
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    CHECK(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    hcomp_error err = {0};
    int rc = hcomp_tier_config_parse(text, "fuzz-source", &a, &err);
    free(text);
    CHECK(rc == HCOMP_OK || rc == HCOMP_E_INVAL, "parse returned %d", rc);
    if (rc != HCOMP_OK) {
        CHECK(err.code == rc && strstr(err.msg, "fuzz-source") != NULL,
              "refusal without a message naming the source: \"%s\"", err.msg);
        return 0;
    }
    check_config(&a);

    /* written back as JSON, it parses to the same configuration */
    for (int i = 0; i < a.ntiers; i++)
        if (strchr(a.tier[i].path, '$') != NULL || isinf(a.tier[i].bandwidth) ||
            isinf(a.tier[i].latency) || fpclassify(a.tier[i].bandwidth) == FP_SUBNORMAL ||
            fpclassify(a.tier[i].latency) == FP_SUBNORMAL)
            return 0;   /* an expanded variable's value, or a speed no text reads back as */
    size_t cap = (size_t) a.ntiers * (6 * sizeof(a.tier[0].path) + 512) + 64;
    char *json = malloc(cap), *o = json;
    CHECK(json != NULL, "out of memory");
    o += sprintf(o, "{\"version\": 1, \"tiers\": [");
    for (int i = 0; i < a.ntiers; i++) {
        const hcomp_tier *t = &a.tier[i];
        o += sprintf(o, "%s{\"name\": ", i ? ", " : "");
        o += json_str(o, t->name);
        o += sprintf(o, ", \"path\": ");
        o += json_str(o, t->path);
        if (t->capacity == UINT64_MAX)
            o += sprintf(o, ", \"capacity\": \"unlimited\"");
        else
            o += sprintf(o, ", \"capacity\": \"%llu\"", (unsigned long long) t->capacity);
        o += sprintf(o, ", \"bandwidth\": \"%.17g\", \"latency\": \"%.17g\", \"scope\": \"%s\", "
                     "\"private\": %s, \"emulate\": %s}", t->bandwidth, t->latency,
                     t->node_local ? "node-local" : "shared", t->private_dir ? "true" : "false",
                     t->emulate ? "true" : "false");
    }
    sprintf(o, "]}");
    rc = hcomp_tier_config_parse(json, "fuzz-source", &b, &err);
    CHECK(rc == HCOMP_OK, "the configuration written back is refused: %s\n%s", err.msg, json);
    free(json);
    CHECK(a.ntiers == b.ntiers, "%d tiers, %d after a round trip", a.ntiers, b.ntiers);
    for (int i = 0; i < a.ntiers; i++) {
        const hcomp_tier *x = &a.tier[i], *y = &b.tier[i];
        CHECK(strcmp(x->name, y->name) == 0 && strcmp(x->path, y->path) == 0 &&
              x->capacity == y->capacity && x->bandwidth == y->bandwidth &&
              x->latency == y->latency && x->node_local == y->node_local &&
              x->private_dir == y->private_dir && x->emulate == y->emulate,
              "tier %d changed in a round trip", i);
    }
    return 0;
}
