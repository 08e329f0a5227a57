"""Draw N first tokens of one prompt with vLLM's own sampler, for
`samplescope-cli verify`.

Two runs of the same prompt and parameters: `dump_logits_vllm.py MODEL PROMPT
0 step.safetensors` saves the row vLLM's sampler receives at the first decode
step; this script asks for N one-token completions (SamplingParams(n=N,
max_tokens=1)) and writes their tokens, one id a line.

    python dump_logits_vllm.py MODEL "The cat sat on the" 0 step.safetensors
    python dump_draws_vllm.py MODEL "The cat sat on the" 100000 draws.txt --top-p 0.9 --temperature 0.7
    samplescope-cli verify --pipeline vllm --logits step.safetensors --samples draws.txt \
        --top-p 0.9 --temperature 0.7

The N completions share the prompt, so they sample from the same row; a batch
can round the logits differently in the last bits from a single request,
which matters only at near-ties (`samplescope-cli trace` flags those). Needs:
vllm.
"""
import argparse

from vllm import LLM, SamplingParams

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("prompt")
parser.add_argument("draws", type=int)
parser.add_argument("out")
parser.add_argument("--temperature", type=float, default=1.0)
parser.add_argument("--top-p", type=float, default=1.0)
parser.add_argument("--top-k", type=int, default=0, help="0: off")
parser.add_argument("--min-p", type=float, default=0.0)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--per-request", type=int, default=1000, help="completions per request (n)")
args = parser.parse_args()

llm = LLM(model=args.model, seed=args.seed)
tokens = []
requests = []
remaining = args.draws
while remaining > 0:
    n = min(args.per_request, remaining)
    requests.append(SamplingParams(n=n, max_tokens=1, temperature=args.temperature, top_p=args.top_p,
                                   top_k=args.top_k if args.top_k > 0 else -1, min_p=args.min_p,
                                   seed=args.seed + len(requests)))
    remaining -= n
for output in llm.generate([args.prompt] * len(requests), requests):
    tokens.extend(completion.token_ids[0] for completion in output.outputs)
with open(args.out, "w") as out:
    out.writelines(f"{t}\n" for t in tokens)
print(f"wrote {len(tokens)} draws to {args.out}")
