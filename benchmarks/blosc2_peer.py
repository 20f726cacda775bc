#!/usr/bin/env python3
"""c-blosc2 (the `blosc2` package from PyPI) on the bytes of a dataset, one thread.

    blosc2_peer.py FILE [RUNS]

FILE.types gives the regions ("offset length dtype", written by wl_frontier); each
region is compressed in chunks of 1 MiB (hcomp's default piece size) with the element
size of its dtype (bytes: 1), for every codec, filter and level below. Prints one line
per configuration: "codec+filter-level ratio comp_MBps decomp_MBps" (tab-separated),
the times the medians of RUNS runs (default 3), ratio = bytes / compressed bytes (chunk
headers included). Every decompression is compared with the input.
"""
import statistics
import sys
import time

import blosc2

SIZES = {"bytes": 1, "int32": 4, "float": 4, "int64": 8, "double": 8}
CODECS = [("blosclz", blosc2.Codec.BLOSCLZ), ("lz4", blosc2.Codec.LZ4),
          ("lz4hc", blosc2.Codec.LZ4HC), ("zlib", blosc2.Codec.ZLIB),
          ("zstd", blosc2.Codec.ZSTD)]
FILTERS = [("noshuffle", [blosc2.Filter.NOFILTER]), ("shuffle", [blosc2.Filter.SHUFFLE]),
           ("bitshuffle", [blosc2.Filter.BITSHUFFLE]),
           ("bytedelta", [blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA])]
LEVELS = [1, 5, 9]
CHUNK = 1 << 20


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    data = open(path, "rb").read()
    regions = []
    for line in open(path + ".types"):
        off, length, dtype = line.split()
        regions.append((int(off), int(length), SIZES[dtype]))
    chunks = [(data[o:min(o + CHUNK, off + length)], ts)
              for off, length, ts in regions for o in range(off, off + length, CHUNK)]
    for cname, codec in CODECS:
        for fname, filters in FILTERS:
            for level in LEVELS:
                ct, dt, stored = [], [], 0
                for _ in range(runs):
                    t0 = time.perf_counter()
                    out = [blosc2.compress2(c, typesize=ts, clevel=level, codec=codec,
                                            filters=filters, filters_meta=[0] * len(filters),
                                            nthreads=1) for c, ts in chunks]
                    t1 = time.perf_counter()
                    back = [blosc2.decompress2(o, nthreads=1) for o in out]
                    t2 = time.perf_counter()
                    ct.append(t1 - t0)
                    dt.append(t2 - t1)
                    stored = sum(len(o) for o in out)
                    if any(b != c for b, (c, _) in zip(back, chunks)):
                        sys.exit(f"blosc2 {cname} {fname} {level}: round trip failed")
                n = len(data)
                print(f"{cname}+{fname}-{level}\t{n / stored:.4f}\t"
                      f"{n / statistics.median(ct) / 1e6:.1f}\t"
                      f"{n / statistics.median(dt) / 1e6:.1f}", flush=True)


if __name__ == "__main__":
    main()
