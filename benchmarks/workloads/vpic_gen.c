/* The VPIC-IO-like particle generator (see vpic_gen.h for the physics it imitates). */
#include "vpic_gen.h"
#include "wl_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const vpic_var_names[VPIC_NVARS] = {"x", "y", "z", "px", "py", "pz", "id1", "id2"};

/* a standard normal number from two counter-based uniforms (Box-Muller) */
static double normal(uint64_t key)
{
    double u1 = wl_u01(key * 2 + 1), u2 = wl_u01(key * 2 + 2);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static double momentum(int axis, int t, uint64_t g)
{
    uint64_t key = ((g * 3 + (uint64_t) axis) << 12) ^ (uint64_t) t;
    return VPIC_VTH * normal(key) + (axis == 0 ? 0.1 : 0.0);
}

static double position(int axis, int t, uint64_t g)
{
    uint64_t c = g / VPIC_PPC;
    double corner = axis == 0 ? (double) (c % VPIC_CX)
                  : axis == 1 ? (double) ((c / VPIC_CX) % VPIC_CY)
                              : (double) (c / ((uint64_t) VPIC_CX * VPIC_CY));
    /* free streaming from a uniform start with the step-0 momentum, wrapped into the cell
     * (one momentum per element keeps the generator cheap enough for 4 GiB datasets) */
    double off = wl_u01((g * 3 + (uint64_t) axis) ^ 0x5bd1e995ULL) + 0.05 * t * momentum(axis, 0, g);
    off -= floor(off);
    return corner + off;
}

void vpic_fill(int v, int t, uint64_t g0, uint64_t n, void *out)
{
    if (v < 3) {
        float *f = out;
        for (uint64_t i = 0; i < n; i++)
            f[i] = (float) position(v, t, g0 + i);
    } else if (v < 6) {
        float *f = out;
        for (uint64_t i = 0; i < n; i++)
            f[i] = (float) momentum(v - 3, t, g0 + i);
    } else {
        int32_t *d = out;
        for (uint64_t i = 0; i < n; i++)
            d[i] = v == 6 ? (int32_t) (g0 + i) : (int32_t) ((g0 + i) / VPIC_PPC);
    }
}

long long vpic_check(int v, int t, uint64_t g0, uint64_t n, const void *got)
{
    enum { CHUNK = 4096 };
    uint32_t want[CHUNK];
    const uint32_t *g = got;
    for (uint64_t i = 0; i < n; i += CHUNK) {
        uint64_t k = n - i < CHUNK ? n - i : CHUNK;
        vpic_fill(v, t, g0 + i, k, want);
        if (memcmp(want, g + i, k * 4) != 0)
            for (uint64_t j = 0; j < k; j++)
                if (want[j] != g[i + j])
                    return (long long) (i + j);
    }
    return -1;
}
