#!/usr/bin/env python3
"""PyTorch version of vLLM's native sampling path, timed on the batch engine's
benchmark workload: penalties through a [B, V] count tensor, temperature,
sort-based top-k and top-p, min-p, and the exponential-race draw
(probs / Exponential(1), argmax). Prints `rows_per_second N` for bench_batch.

The steps follow the description of vLLM's V1 sampler (apply_penalties,
apply_temperature, apply_top_k_top_p, random_sample); the code is our own."""
import argparse
import time

import torch


def make_batch(rows, vocab, device, generator):
    logits = 2.0 * torch.randn(rows, vocab, generator=generator).to(device)
    history = torch.randint(0, vocab, (rows, 1000), generator=generator).to(device)
    return logits, history[:, :800], history[:, 800:]


def sample(logits, prompt, output, temperature=0.7, top_k=50, top_p=0.9, min_p=0.05,
           repetition=1.1, presence=0.5, frequency=0.3):
    rows, vocab = logits.shape
    logits = logits.clone()
    # Penalties through dense [B, V] counts, as the native path builds them.
    output_counts = torch.zeros(rows, vocab, dtype=torch.int32, device=logits.device)
    output_counts.scatter_add_(1, output, torch.ones_like(output, dtype=torch.int32))
    prompt_mask = torch.zeros(rows, vocab, dtype=torch.bool, device=logits.device)
    prompt_mask.scatter_(1, prompt, True)
    seen = prompt_mask | (output_counts > 0)
    penalised = torch.where(logits > 0, logits / repetition, logits * repetition)
    logits = torch.where(seen, penalised, logits)
    logits -= frequency * output_counts + presence * (output_counts > 0)
    logits /= temperature
    # Sort-based top-k and top-p (ascending sort, mask below the thresholds).
    sorted_logits, order = logits.sort(dim=-1, descending=False)
    kth = sorted_logits.gather(1, torch.full((rows, 1), vocab - top_k, device=logits.device))
    sorted_logits.masked_fill_(sorted_logits < kth, float("-inf"))
    probs_sorted = sorted_logits.softmax(dim=-1)
    cumulative = probs_sorted.cumsum(dim=-1)
    drop = cumulative <= 1 - top_p
    drop[:, -1] = False
    sorted_logits.masked_fill_(drop, float("-inf"))
    logits = sorted_logits.scatter(1, order, sorted_logits)
    probs = logits.softmax(dim=-1)
    # Min-p against the row's largest probability.
    floor = min_p * probs.max(dim=-1, keepdim=True).values
    probs = probs.masked_fill(probs < floor, 0.0)
    # The exponential race.
    q = torch.empty_like(probs).exponential_()
    return probs.div_(q).argmax(dim=-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(1)
    logits, prompt, output = make_batch(args.rows, args.vocab, args.device, generator)
    sample(logits, prompt, output)  # warm up
    best = float("inf")
    for _ in range(args.repeats):
        if args.device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        sample(logits, prompt, output)
        if args.device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    print(f"PyTorch {torch.__version__} vLLM-native path on {args.device}: "
          f"B = {args.rows}, V = {args.vocab}: {best * 1e3:.2f} ms per batch")
    print(f"rows_per_second {args.rows / best:.1f}")


if __name__ == "__main__":
    main()
