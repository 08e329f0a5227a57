#!/usr/bin/env python3
"""Do two builds of samplescope-cli trace the same rows byte for byte?

    scripts/trace_identity.py OLD_CLI NEW_CLI [--cases N] [--seed S]

Generates random rows with V spread log-uniformly from 5 to 10^6 (peaked,
broad, tied and partly -inf rows), random parameters (every stage of the
contract, the llama.cpp samplers), histories, every pipeline, `--steps` and,
at small V, `--full`; writes each row as a little-endian f64 .npy and runs
both binaries on the same arguments. Any difference in exit status, standard
output or standard error is printed with its arguments, and the exit status
is 1. The engine's performance work must leave every trace as it was: the
contract fixes the order of every sum, so a faster trace is only correct when
this finds nothing.
"""
import argparse
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

PIPELINES = ["spec", "spec", "spec", "vllm", "sglang", "hf", "llamacpp", "flashinfer-joint", "flashinfer-topk-first"]


def write_npy(path, values):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%dd" % len(values), *values))


def row(rng, v):
    style = rng.random()
    if style < 0.15:  # ties
        levels = [rng.gauss(0, 2) for _ in range(rng.randint(1, 4))]
        return [rng.choice(levels) for _ in range(v)]
    if style < 0.25:  # part -inf, at least one finite
        values = [-math.inf if rng.random() < 0.4 else rng.gauss(0, 2) for _ in range(v)]
        values[rng.randrange(v)] = 3.0
        return values
    if style < 0.5:  # broad
        return [rng.gauss(0, rng.choice([0.05, 0.5])) for _ in range(v)]
    # peaked: a few large logits over a Gaussian floor
    values = [rng.gauss(0, 2) for _ in range(v)]
    for _ in range(rng.randint(1, 20)):
        values[rng.randrange(v)] += rng.uniform(5, 15)
    return values


def history(rng, v, n):
    return ",".join(str(rng.randrange(v)) for _ in range(n))


def params(rng, v):
    a = []
    if rng.random() < 0.8:
        a += ["--temperature", rng.choice(["0", "0.5", "0.7", "1", "1.3", "2", "0.01"])]
    if rng.random() < 0.6:
        a += ["--top-k", str(rng.choice([0, 1, 5, 50, 1000, v, v + 1]))]
    if rng.random() < 0.6:
        a += ["--top-p", rng.choice(["0", "0.5", "0.9", "0.95", "0.999", "1"])]
    if rng.random() < 0.5:
        a += ["--min-p", rng.choice(["0", "0.01", "0.05", "0.3"])]
    if rng.random() < 0.5:
        a += ["--repetition-penalty", rng.choice(["1.1", "1.5", "0.8"])]
    if rng.random() < 0.4:
        a += ["--presence-penalty", rng.choice(["0.5", "-0.5", "1.5"])]
    if rng.random() < 0.4:
        a += ["--frequency-penalty", rng.choice(["0.3", "-0.2", "1"])]
    if rng.random() < 0.15:
        a += ["--typical-p", rng.choice(["0.5", "0.9"])]
    if rng.random() < 0.15:
        a += ["--top-n-sigma", rng.choice(["1", "2.5"])]
    if rng.random() < 0.1:
        a += ["--xtc-probability", "0.5", "--xtc-threshold", rng.choice(["0.05", "0.1"])]
    if rng.random() < 0.1:
        a += ["--dry-multiplier", "0.8"]
    if rng.random() < 0.1:
        a += ["--dynatemp-range", "0.5"]
    if rng.random() < 0.5:
        a += ["--prompt-ids", history(rng, v, rng.randint(1, 500))]
    if rng.random() < 0.5:
        a += ["--output-ids", history(rng, v, rng.randint(1, 500))]
    a += ["--seed", str(rng.randrange(2**64))]
    return a


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    differences = 0
    largest = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(args.cases):
            v = int(round(math.exp(rng.uniform(math.log(5), math.log(1_000_000)))))
            if case % 25 == 0:
                v = 1_000_000
            largest = max(largest, v)
            path = os.path.join(tmp, "row.npy")
            write_npy(path, row(rng, v))
            argv = ["trace", "--logits", path, "--pipeline", rng.choice(PIPELINES)] + params(rng, v)
            if v <= 2000 and rng.random() < 0.3:
                argv.append("--full")
            if v <= 200_000 and rng.random() < 0.2:
                argv += ["--steps", str(rng.randint(2, 6))]
            runs = [subprocess.run([cli] + argv, capture_output=True) for cli in (args.old, args.new)]
            old, new = runs
            if (old.returncode, old.stdout, old.stderr) != (new.returncode, new.stdout, new.stderr):
                differences += 1
                shown = [a if len(a) < 80 else a[:77] + "..." for a in argv]
                print(f"case {case} (V = {v}) differs: {' '.join(shown)}")
                print(f"  exit {old.returncode} vs {new.returncode}; stdout {len(old.stdout)} vs {len(new.stdout)} bytes")
    print(f"{args.cases} cases, V from 5 to {largest}: {differences} differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
