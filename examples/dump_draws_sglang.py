"""Draw N first tokens of one prompt with SGLang's sampler, for
`samplescope-cli verify`.

Sends the prompt N times with max_new_tokens=1 through the offline engine and
writes each first token, one id a line. The row of logits to verify against
comes from a dump of the same prompt (e.g. `dump_logits_hf.py`, or any
engine's row for the same model and prompt: the verdict is then about the
sampler given that row).

    python dump_draws_sglang.py MODEL "The cat sat on the" 100000 draws.txt --top-p 0.9 --temperature 0.7
    samplescope-cli verify --pipeline sglang --logits step.safetensors --samples draws.txt \
        --top-p 0.9 --temperature 0.7

SGLang reports the sampled token in meta_info["output_token_logprobs"] when
return_logprob is set (entries (logprob, token_id, text)); check the field
against your version. Needs: sglang.
"""
import argparse

import sglang as sgl

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("prompt")
parser.add_argument("draws", type=int)
parser.add_argument("out")
parser.add_argument("--temperature", type=float, default=1.0)
parser.add_argument("--top-p", type=float, default=1.0)
parser.add_argument("--top-k", type=int, default=-1, help="-1: off")
parser.add_argument("--min-p", type=float, default=0.0)
parser.add_argument("--chunk", type=int, default=1000, help="prompts per generate call")
args = parser.parse_args()

engine = sgl.Engine(model_path=args.model)
params = {"max_new_tokens": 1, "temperature": args.temperature, "top_p": args.top_p, "top_k": args.top_k,
          "min_p": args.min_p}
tokens = []
while len(tokens) < args.draws:
    n = min(args.chunk, args.draws - len(tokens))
    outputs = engine.generate([args.prompt] * n, params, return_logprob=True)
    tokens.extend(out["meta_info"]["output_token_logprobs"][0][1] for out in outputs)
engine.shutdown()
with open(args.out, "w") as out:
    out.writelines(f"{t}\n" for t in tokens)
print(f"wrote {len(tokens)} draws to {args.out}")
