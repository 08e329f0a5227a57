#!/usr/bin/env python3
"""PyTorch's own kernels on the GPU self-test's batch: the same [B, V] f32
logits (the raw file `gpu_selftest --write-logits` writes), temperature,
softmax over the row, top-k, top-p over the k kept, and one multinomial draw
per row. Timed with CUDA events over repeats; prints the PyTorch version on
the first line and `torch_us N` (the median per batch) on the last, for
scripts/device_check.sh.

Penalties and min-p are left out: this is the common softmax + top-k + top-p
+ multinomial path, so fast mode (which also runs them) is measured against
less work, not more."""
import argparse
import statistics

import torch


def sample(logits, temperature, top_k, top_p):
    probs = torch.softmax(logits / temperature, dim=-1)
    top, ids = torch.topk(probs, top_k, dim=-1)  # descending
    top = top / top.sum(dim=-1, keepdim=True)    # top-p reads the distribution over the k kept
    before = top.cumsum(dim=-1) - top            # the mass ranked above each id
    top = top.masked_fill(before >= top_p, 0.0)  # the smallest prefix that reaches p
    choice = torch.multinomial(top, 1)
    return ids.gather(1, choice)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logits", required=True, help="raw little-endian f32, rows x vocab")
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--top-k", type=int, default=50)
    parser.add_argument("--top-p", type=float, default=0.9)
    args = parser.parse_args()
    with open(args.logits, "rb") as file:
        data = bytearray(file.read())
    expected = args.rows * args.vocab * 4
    if len(data) != expected:
        raise SystemExit(f"logits: {args.logits} holds {len(data)} bytes, expected {expected}")
    logits = torch.frombuffer(data, dtype=torch.float32).view(args.rows, args.vocab).to("cuda")
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}")
    for _ in range(3):  # warm up
        sample(logits, args.temperature, args.top_k, args.top_p)
    times = []
    for _ in range(args.repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        sample(logits, args.temperature, args.top_k, args.top_p)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)  # ms to us
    print(f"torch_us {statistics.median(times):.1f}")


if __name__ == "__main__":
    main()
