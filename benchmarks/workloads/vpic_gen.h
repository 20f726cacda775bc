/* The VPIC-IO-like particle generator shared by the writer (wl_vpic), the readers
 * (wl_bdcats) and the HDF5 peer (wl_h5vpic), so any of them can regenerate and check what
 * another wrote, with any number of ranks.
 *
 * A particle has 8 properties (VPIC-IO's): x, y, z, px, py, pz (float) and id1, id2 (int).
 * Particle g (global index, 0-based) at step t:
 *   - cell c = g / VPIC_PPC: particles are stored ordered by cell, VPIC_PPC per cell, cells
 *     in x-fastest order on a VPIC_CX x VPIC_CY x (unbounded) grid of unit cells;
 *   - position = cell corner + a uniform offset in the cell, streaming freely with the
 *     step-0 momentum (offset + 0.05 t p0) and wrapped into the cell (particles stay
 *     sorted by cell);
 *   - momenta: Maxwellian, i.e. each component normal (Box-Muller) with thermal speed
 *     VPIC_VTH, plus a drift of 0.1 along x, resampled every step;
 *   - id1 = g (sequential), id2 = c (the cell index).
 * Everything is a pure function of (g, t), computed in double and rounded to float once. */
#ifndef VPIC_GEN_H
#define VPIC_GEN_H

#include <stdint.h>

#define VPIC_NVARS 8
#define VPIC_PPC 64
#define VPIC_CX 64
#define VPIC_CY 64
#define VPIC_VTH 0.25

extern const char *const vpic_var_names[VPIC_NVARS];   /* x y z px py pz id1 id2 */

/* Property v of particles [g0, g0 + n) at step t into out (4-byte float or int32 each). */
void vpic_fill(int v, int t, uint64_t g0, uint64_t n, void *out);
/* Index of the first element of out[0..n) that differs from vpic_fill's, or -1. */
long long vpic_check(int v, int t, uint64_t g0, uint64_t n, const void *got);

#endif
