#!/usr/bin/env python3
"""numpy's time to load a logits file into float64, the loaders' yardstick.

Usage: numpy_load.py FILE... ; prints one line per file, "FILE best_ms", the
best of several loads. .npy is np.load(path).astype(np.float64).
.safetensors is parsed by hand (numpy has no reader): an 8-byte little-endian
header length, the JSON header, then the raw data, read with np.fromfile at
the tensor's offset; BF16 is widened uint16 -> uint32 << 16 -> float32 first.
The tensor taken is the only one, else "logits", as the loader picks it.
"""
import json
import sys
import time

import numpy as np

REPEATS = 15
SAFETENSORS_DTYPES = {"F16": "<f2", "BF16": "<u2", "F32": "<f4", "F64": "<f8"}


def load_npy(path):
    return np.load(path).astype(np.float64)


def load_safetensors(path):
    with open(path, "rb") as f:
        length = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(length))
    names = [k for k in header if k != "__metadata__"]
    entry = header[names[0] if len(names) == 1 else "logits"]
    begin, end = entry["data_offsets"]
    dtype = np.dtype(SAFETENSORS_DTYPES[entry["dtype"]])
    raw = np.fromfile(path, dtype=dtype, count=(end - begin) // dtype.itemsize, offset=8 + length + begin)
    if entry["dtype"] == "BF16":
        raw = (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.reshape(entry["shape"]).astype(np.float64)


def best_ms(load, path):
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        values = load(path)
        best = min(best, time.perf_counter() - start)
        del values
    return best * 1e3


for path in sys.argv[1:]:
    load = load_safetensors if path.endswith(".safetensors") else load_npy
    print(f"{path} {best_ms(load, path):.3f}", flush=True)
