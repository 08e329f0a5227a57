"""Draw N tokens with FlashInfer's fused sampler from one row of logits, for
`samplescope-cli verify`.

The row is repeated down a batch so one call draws a batch of tokens; a
seeded torch.Generator makes the run repeatable. Writes the row as a [V] f32
.npy and the draws as a [N] int64 .npy.

    python dump_draws_flashinfer.py step.npy 1000000 --top-k 50 --top-p 0.9 --temperature 0.7
    samplescope-cli verify --pipeline flashinfer-joint --logits row.npy --samples draws.npy \
        --top-k 50 --top-p 0.9 --temperature 0.7

`flashinfer.sampling.top_k_top_p_sampling_from_logits` applies top-k and top-p
jointly by default (filter_apply_order="joint": pipeline flashinfer-joint);
with filter_apply_order="top_k_first" use --pipeline flashinfer-topk-first.
Temperature is applied here, by dividing the logits, as a serving stack does
before calling it. Needs: torch with CUDA, flashinfer, numpy.
"""
import argparse

import numpy as np
import torch
import flashinfer

parser = argparse.ArgumentParser()
parser.add_argument("logits", help="a [V] or [1, V] .npy row (any float dtype)")
parser.add_argument("draws", type=int)
parser.add_argument("--top-k", type=int, default=0, help="0: off (the whole vocabulary)")
parser.add_argument("--top-p", type=float, default=1.0)
parser.add_argument("--temperature", type=float, default=1.0)
parser.add_argument("--order", default="joint", choices=["joint", "top_k_first"])
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--batch", type=int, default=4096, help="rows drawn per call")
parser.add_argument("--out-logits", default="row.npy")
parser.add_argument("--out-draws", default="draws.npy")
args = parser.parse_args()

row = np.load(args.logits).astype(np.float32).reshape(-1)
np.save(args.out_logits, row)
vocab = row.shape[0]
device = torch.device("cuda")
logits = torch.from_numpy(row).to(device) / args.temperature
generator = torch.Generator(device=device).manual_seed(args.seed)
top_k = args.top_k if args.top_k > 0 else vocab

draws = []
remaining = args.draws
while remaining > 0:
    n = min(args.batch, remaining)
    batch = logits.expand(n, vocab).contiguous()
    tokens = flashinfer.sampling.top_k_top_p_sampling_from_logits(
        batch, top_k, args.top_p, filter_apply_order=args.order, generator=generator)
    draws.append(tokens.to(torch.int64).cpu().numpy())
    remaining -= n
np.save(args.out_draws, np.concatenate(draws))
print(f"wrote {args.out_logits} ([{vocab}]) and {args.out_draws} ([{args.draws}])")
