"""Save a Hugging Face generate() run for `samplescope-cli explain`.

Generates with output_scores and output_logits (return_dict_in_generate) and
saves, for the one sequence: the processed scores ([T, V], after every logits
processor: temperature, top-k, top-p, min-p; -inf where cut) and the raw
logits ([T, V]) as two .safetensors files, each with the generated ids
(output_ids) and the prompt (prompt_ids), and the generation settings used as
a request body beside them.

    python dump_response_hf.py MODEL "The cat sat on the" out --temperature 0.7 --top-p 0.9
    samplescope-cli explain --response out_logits.safetensors --request out_request.json
    samplescope-cli explain --response out_scores.safetensors --request out_request.json

Needs: torch, transformers, safetensors.
"""
import argparse
import json

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("prompt")
parser.add_argument("out", help="prefix: OUT_scores.safetensors, OUT_logits.safetensors, OUT_request.json")
parser.add_argument("--max-new-tokens", type=int, default=32)
parser.add_argument("--temperature", type=float, default=1.0)
parser.add_argument("--top-k", type=int, default=50)
parser.add_argument("--top-p", type=float, default=1.0)
parser.add_argument("--min-p", type=float, default=None)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.model)
model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype="auto")
model.eval()
torch.manual_seed(args.seed)

prompt_ids = tokenizer(args.prompt, return_tensors="pt").input_ids
settings = dict(do_sample=True, temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                max_new_tokens=args.max_new_tokens)
if args.min_p is not None:
    settings["min_p"] = args.min_p
with torch.no_grad():
    out = model.generate(prompt_ids, output_scores=True, output_logits=True, return_dict_in_generate=True, **settings)

generated = out.sequences[0, prompt_ids.shape[1]:].to(torch.int64).contiguous()
ids = {"output_ids": generated, "prompt_ids": prompt_ids[0].to(torch.int64).contiguous()}
# scores and logits are tuples of [batch, V] per step: stack and take the one sequence.
save_file({"scores": torch.stack(out.scores)[:, 0].float().contiguous(), **ids}, args.out + "_scores.safetensors")
save_file({"logits": torch.stack(out.logits)[:, 0].float().contiguous(), **ids}, args.out + "_logits.safetensors")
with open(args.out + "_request.json", "w") as f:
    json.dump(settings, f, indent=2)
print(f"{generated.shape[0]} tokens: {args.out}_scores.safetensors, {args.out}_logits.safetensors, {args.out}_request.json")
