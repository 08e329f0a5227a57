"""Dump one step's logits from Hugging Face transformers for SampleScope.

Runs the prompt through the model once and saves the logits of the next token
(the last position of model(...).logits), with the prompt ids, to a
.safetensors file. The tokenizer.json next to the model gives the labels.

    python dump_logits_hf.py MODEL "The cat sat on the" step.safetensors
    samplescope-cli trace --logits step.safetensors \
        --vocab ~/.cache/huggingface/.../tokenizer.json --top-p 0.9

Needs: torch, transformers, safetensors.
"""
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer

model_name, prompt, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
tokenizer = AutoTokenizer.from_pretrained(model_name)
model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype="auto")
model.eval()

prompt_ids = tokenizer(prompt, return_tensors="pt").input_ids
with torch.no_grad():
    logits = model(prompt_ids).logits  # [1, T, V] in the model's dtype (often bf16)

save_file(
    {
        # SampleScope reads [1, T, V] too (taking the last position); saving
        # only that row keeps the file at V values.
        "logits": logits[0, -1].contiguous(),
        "prompt_ids": prompt_ids[0].to(torch.int64).contiguous(),
        "output_ids": torch.zeros(0, dtype=torch.int64),
    },
    out_path,
)
print(f"saved {tuple(logits.shape)} -> row of {logits.shape[-1]} logits in {out_path}")
